//===- Expected.h - A value or a readable error message ---------*- C++ -*-===//
//
// tessel's core is built without exceptions. A function that can fail on user
// input returns `Expected<T>`: either the value or an `Error` whose message
// says, in lower case, where the input went wrong and what was expected:
//
//   Expected<Shape> s = parseShape("f32[3,5]{1,1}");
//   if (!s) std::cerr << s.error().message;
//   // prints: 12: minor_to_major {1,1} is not a permutation of 0..1 (1
//   repeats)
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_EXPECTED_H
#define TESSEL_SUPPORT_EXPECTED_H

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace tessel {

/// A failure with a message meant for people.
struct Error {
  std::string message;
  explicit Error(std::string message) : message(std::move(message)) {}
};

/// Either a `T` or an `Error`. Check with `operator bool` before using the
/// value.
template <typename T> class Expected {
public:
  Expected(T value) : storage(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : storage(std::in_place_index<1>, std::move(error)) {}

  explicit operator bool() const { return storage.index() == 0; }
  bool ok() const { return storage.index() == 0; }

  /// @pre ok()
  T &value() {
    assert(ok() && "value() of a failed Expected");
    return std::get<0>(storage);
  }
  const T &value() const {
    assert(ok() && "value() of a failed Expected");
    return std::get<0>(storage);
  }
  T &operator*() { return value(); }
  const T &operator*() const { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  /// @pre !ok()
  const Error &error() const {
    assert(!ok() && "error() of a successful Expected");
    return std::get<1>(storage);
  }
  /// Moves the error out, e.g. to return it from a caller of another type.
  Error takeError() {
    assert(!ok() && "takeError() of a successful Expected");
    return std::move(std::get<1>(storage));
  }

private:
  std::variant<T, Error> storage;
};

} // namespace tessel

#endif // TESSEL_SUPPORT_EXPECTED_H
