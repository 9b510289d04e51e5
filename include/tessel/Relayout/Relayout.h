//===- Relayout.h - Convert buffers between two layouts ---------*- C++ -*-===//
//
// A relayout copies an array from one physical layout to another: the
// element at logical index i moves from offset src.offset(i) of the source
// buffer to offset dst.offset(i) of the destination buffer, and every padding
// slot of the destination is written as zero (bits of an E(n) element
// included), so the output is a pure function of the input.
//
// Worked example, `f32[3,5]` from `{1,0}` to `{1,0:T(2,2)}`:
//
//   source (row-major)          destination (figure 1, '.' = 0.0f)
//    0  1  2  3  4               0  1  5  6 | 2  3  7  8 | 4  .  9  .
//    5  6  7  8  9              10 11  .  . |12 13  .  . |14  .  .  .
//   10 11 12 13 14
//
// Planning looks at the two layouts once (which dims are contiguous, which
// tiles nest, whether a fast kernel applies); executing runs the plan on any
// number of buffer pairs, from any number of threads at once.
//
//   auto plan = RelayoutPlan::create(shape, from, to);
//   if (!plan) report(plan.error().message);
//   if (auto error = plan->execute(src, srcBytes, dst, dstBytes)) ...
//
// @post for every valid plan and every source buffer, execute() agrees with
//       relayoutReference() byte for byte (differential-tested over
//       thousands of random shapes and layout pairs in RelayoutTest).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RELAYOUT_RELAYOUT_H
#define TESSEL_RELAYOUT_RELAYOUT_H

#include "tessel/Layout/Shape.h"
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Support/Expected.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

struct RelayoutOptions {
  /// Worker threads for execute(): 0 means every core of the machine. Work
  /// runs in a TBB arena of this size, so plans executed from several
  /// threads share one pool instead of oversubscribing the cores.
  int threads = 0;
  /// Destinations of at least this many bytes are written with streaming
  /// (non-temporal) stores; smaller ones with ordinary stores so that they
  /// stay in cache. Negative means tessel's default: half the last-level
  /// cache the CPU reports (16 MiB when it reports nothing plausible).
  int64_t streamingThresholdBytes = -1;
  /// Conversions that move (read + write) fewer bytes than this run on the
  /// calling thread only. Negative means tessel's default (1 MiB); tests
  /// set 0 to run small cases on several threads.
  int64_t parallelThresholdBytes = -1;
  /// The highest instruction set level the kernels may use: "sse2", "avx2"
  /// or "avx512"; empty means the best this CPU has. The environment
  /// variable TESSEL_ISA caps it the same way. A level the CPU lacks gives
  /// the best one it has; relayoutIsaLevels() lists them.
  std::string isa;
};

/// The instruction set levels this CPU can run the relayout kernels at,
/// lowest first: "sse2" always (tessel's own SSE2 kernels; portable loops
/// off x86), then "avx2" and "avx512" where the CPU has them (kernels
/// compiled with Google Highway). One binary carries all of them.
std::vector<std::string> relayoutIsaLevels();

/// The streaming threshold a plan uses when RelayoutOptions leaves it
/// negative: half the last-level cache the CPU reports (sysfs, then
/// sysconf), or 16 MiB when what it reports is missing or implausible.
int64_t relayoutDefaultStreamingThreshold();

class RelayoutPlan {
public:
  /// Plans the conversion of an array of `shape` (element type and dims;
  /// its own layout is ignored) from layout `from` to layout `to`. Fails
  /// with a readable message when either layout is invalid for the shape,
  /// or when the instruction set level asked for (RelayoutOptions::isa or
  /// TESSEL_ISA) is not one of sse2, avx2, avx512.
  static Expected<RelayoutPlan> create(const Shape &shape, const Layout &from,
                                       const Layout &to,
                                       const RelayoutOptions &options = {});
  /// The same, from two shapes with layouts that must agree in element type
  /// and dims (`f32[3,5]{1,0}` and `f32[3,5]{1,0:T(2,2)}`).
  static Expected<RelayoutPlan> create(const Shape &from, const Shape &to,
                                       const RelayoutOptions &options = {});

  const TiledLayout &source() const;
  const TiledLayout &destination() const;
  /// Bytes execute() reads and writes: the two layouts' physicalBytes().
  int64_t sourceBytes() const;
  int64_t destinationBytes() const;
  /// One line naming the kernel chosen and why, for `tessel relayout -v`,
  /// e.g. `tile rows into (8,128) tiles, 4-byte elements, streaming stores,
  /// avx512`.
  std::string describe() const;
  /// The instruction set level the plan's kernels run at ("avx2").
  std::string isa() const;

  /// Converts src into dst. Fails, before writing anything, when a size is
  /// not exactly sourceBytes() / destinationBytes(). A plan in two steps (a
  /// tiling into another dim order, describe() says "two steps through")
  /// allocates a buffer the size of the array on its first call and keeps
  /// it for the next; a call on another thread meanwhile allocates its own,
  /// and fails with a message when that memory cannot be had.
  /// @pre src and dst do not overlap.
  Status execute(const void *src, int64_t srcBytes, void *dst,
                 int64_t dstBytes) const;

  RelayoutPlan(RelayoutPlan &&) noexcept;
  RelayoutPlan &operator=(RelayoutPlan &&) noexcept;
  ~RelayoutPlan();

private:
  struct Impl;
  std::string describeKernel() const;
  explicit RelayoutPlan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

namespace relayout {
struct KernelSet;
} // namespace relayout

/// Interleaves k rows element by element with the vector kernels of one
/// instruction set level: element j of row q goes to out + (j * k + q) *
/// elementBytes. The (k,1) tiles of the tile kernels are this, and so are
/// the packed N modes of the NPU simulator (4N: four int8 batch rows into
/// one word per element, 2N: two int16 rows).
///
///   rows {1,2,3} {4,5,6} {7,8,9} {10,11,12}, k = 4, 1-byte elements
///   -> 1 4 7 10 2 5 8 11 3 6 9 12
///
/// Vector kernels cover (1-byte, k = 4) and (2-byte, k = 2); other pairs
/// run a scalar loop.
class RowInterleaver {
public:
  /// The best level this CPU has, capped by `isa` and then by TESSEL_ISA
  /// (as RelayoutOptions::isa). Fails on a name that is not a level.
  static Expected<RowInterleaver> create(const std::string &isa = "");
  /// @pre rows[0..k) hold `count` elements each; out holds count * k
  ///      elements and overlaps none of them.
  void interleave(uint8_t *out, const uint8_t *const *rows, int64_t count,
                  int64_t elementBytes, int64_t k) const;
  /// The inverse: `in` holds count * k elements interleaved, rows[q] gets
  /// elements q, q + k, q + 2k, ... @pre rows[0..k) hold `count` elements
  /// each and overlap neither `in` nor each other.
  void deinterleave(const uint8_t *in, uint8_t *const *rows, int64_t count,
                    int64_t elementBytes, int64_t k) const;
  /// The level it runs at ("avx512").
  std::string isa() const;

private:
  explicit RowInterleaver(const relayout::KernelSet *kernels)
      : kernels(kernels) {}
  const relayout::KernelSet *kernels;
};

/// Row-major, no tiles, natural element size: the layout of a numpy array.
/// Buffers of such a layout are read and written as arrays of the logical
/// shape; any other buffer is a flat run of bytes.
bool isPlainRowMajor(const TiledLayout &layout);

/// Why a layout needs the bytes it needs: "15 elements of 4 bytes", "16
/// elements of 4 bits, padding included".
std::string describePhysicalSize(const TiledLayout &layout);

/// Checks an input array (named `name` in messages: a file, "array")
/// against the source layout of a relayout, as `tessel relayout` checks a
/// .npy input: for a plain row-major source its dims must be the logical
/// dims in C order; in every case its data must hold exactly the source's
/// physical bytes.
Status checkSourceArray(const TiledLayout &from,
                        const std::vector<int64_t> &dims, bool fortranOrder,
                        int64_t dataBytes, const std::string &name,
                        bool isArrayFile);

/// The per-element reference: for every logical index, copies the element's
/// bits from src to dst through TiledLayout::offset(); padding is zeroed.
/// Slow; the oracle of the tests. @pre buffers of the layouts' sizes.
void relayoutReference(const TiledLayout &from, const TiledLayout &to,
                       const void *src, void *dst);

} // namespace tessel

#endif // TESSEL_RELAYOUT_RELAYOUT_H
