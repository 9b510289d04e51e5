//===- Expected.h - A value or an error; a success or an error --*- C++ -*-===//
//
// tessel's core is built without exceptions. A function that can fail on
// user input returns
//
//   - `Expected<T>`: the value or an `Error` (Support/Error.h);
//   - `Status` (= `Expected<void>`): success or an `Error`, for a function
//     that has nothing to return.
//
// Both are [[nodiscard]]: a failure cannot be dropped by accident.
//
//   Expected<Shape> s = parseShape("f32[3,5]{1,1}");
//   if (!s)
//     return s.takeError();          // pass it on, position and all
//   Status written = writeFile(path, text);
//   if (!written)
//     llvm::errs() << renderError(written.error(), "tessel") << "\n";
//
// Success of a Status is `return {};` (or `return success();`).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_SUPPORT_EXPECTED_H
#define TESSEL_SUPPORT_EXPECTED_H

#include "tessel/Support/Error.h"

#include <cassert>
#include <optional>
#include <utility>
#include <variant>

namespace tessel {

/// Either a `T` or an `Error`. Check with `operator bool` before using the
/// value.
template <typename T> class [[nodiscard]] Expected {
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
  Error &error() {
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

/// Success, or an `Error`: for a function that has nothing to return.
template <> class [[nodiscard]] Expected<void> {
public:
  /// Success.
  Expected() = default;
  Expected(Error error) : failure(std::move(error)) {}

  explicit operator bool() const { return !failure; }
  bool ok() const { return !failure; }

  /// @pre !ok()
  const Error &error() const {
    assert(!ok() && "error() of a successful Status");
    return *failure;
  }
  Error &error() {
    assert(!ok() && "error() of a successful Status");
    return *failure;
  }
  /// Moves the error out, e.g. to return it from a caller of another type.
  Error takeError() {
    assert(!ok() && "takeError() of a successful Status");
    return std::move(*failure);
  }

private:
  std::optional<Error> failure;
};

using Status = Expected<void>;

/// The successful Status.
inline Status success() { return Status(); }

} // namespace tessel

#endif // TESSEL_SUPPORT_EXPECTED_H
