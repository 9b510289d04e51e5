//===- TableLookup.h - Elementwise kernels of a narrow input as tables ----===//
//
// Private to lib/Codegen. A loop kernel whose output element is a function
// of one 8- or 16-bit input element at the same index (bf16 GELU: only
// constants and elementwise ops between the parameter and the ROOT) has at
// most 65536 distinct results. When its arrays are much larger than that,
// the CPU executable tabulates it once at compile time, by running the
// compiled kernel itself over every bit pattern of the input, and then runs
// a table lookup instead of the kernel:
//
//   kernel_0: bf16[6,512,4096] -> bf16[6,512,4096], 25 arithmetic ops per
//   element (tanh's polynomial, a bf16 rounding after every op)
//     table: 65536 bf16 entries (128 KiB, in L2), out[i] = table[bits(in[i])]
//
// The results are the kernel's, bit for bit, for every input (NaN
// payloads, signed zeros, subnormals), since each entry is what the kernel
// computes for that bit pattern; only the time changes. Applies on the CPU
// launch (Target::Cpu), where a loop kernel's block b computes elements
// [b T, (b + 1) T) in the output's physical order, so blocks [0, k) compute
// the first k T elements; input and output must share one dense layout.
//
// A table pays only where computing costs more than looking up: the
// estimate counts the vector instructions a kernel needs per element on the
// host (16 lanes of f32 in AVX-512's registers, 8 in AVX2's, 4 in SSE's;
// f16 conversions one instruction with F16C, calls without):
//
//   GELU in bf16 (8 ops rounded to bf16, a tanh), AVX-512: 5.4 per element
//     -> a table (a lookup costs about 1.5)
//   bf16 -> f32 * 3 -> f16 -> f32 + 1 -> bf16, AVX-512: 0.75 -> computed
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_LIB_CODEGEN_TABLELOOKUP_H
#define TESSEL_LIB_CODEGEN_TABLELOOKUP_H

#include "ModulePlan.h"

#include <cstdint>
#include <optional>

namespace tessel {

/// The host's vector registers, for the cost estimate.
struct VectorUnit {
  /// Bits of the registers the loop vectorizer fills (128, 256, 512).
  unsigned bits = 128;
  /// Whether f32 <-> f16 conversions are vector instructions (F16C).
  bool halfConversions = false;
  /// Whether the CPU runs 512-bit vector operations as two 256-bit halves
  /// (Zen 4), so that a 512-bit shuffle costs two.
  bool halvesWideVectors = false;
};

/// What a lookup costs per element, in the units of
/// TableLookup::computeCost, one thread: on Zen 4 (AVX-512) one lookup
/// takes ~1.5x the time of a copy of the same bytes and a computed element
/// of 0.75 instructions ~0.9x (so a lookup ~1.25 instructions), of 5.4
/// instructions ~5x; on Zen 3 (AVX2) a lookup ~1.4x and one of 1.5
/// instructions ~2.2x (a lookup ~1 instruction).
constexpr double kLookupCostPerElement = 1.25;

/// A kernel of a plan that can run as a table lookup.
struct TableLookup {
  /// The computation parameter the output is a function of (every other
  /// parameter is unused), and the kernel's one output.
  int64_t parameter = 0;
  PrimitiveType inputType = PrimitiveType::Invalid;
  PrimitiveType outputType = PrimitiveType::Invalid;
  /// Bytes per input element (1 or 2) and per output element (1 to 8).
  int inputBytes = 0, outputBytes = 0;
  /// Distinct inputs: 256 or 65536.
  int64_t entries = 0;
  /// Elements of the arrays.
  int64_t elements = 0;

  /// Estimated vector instructions per element to compute the kernel.
  double computeCost = 0;

  int64_t tableBytes() const { return entries * outputBytes; }
  /// Whether the lookup is estimated to cost less than computing.
  bool pays() const { return computeCost > kLookupCostPerElement; }
};

/// Whether kernel `k` of `plan` runs as a table lookup on the CPU launch:
/// it is a loop kernel with one output; every instruction between its
/// ROOT and its parameters is elementwise, a scalar constant or a broadcast
/// of one, and reaches one parameter only, stored in 1 or 2 bytes per element
/// (pred and unpacked s4 included); the parameter's buffer and the output's
/// have the same dims and one dense layout (no tiles, no padding); the table
/// takes at most 256 KiB; and the arrays have at least 4 times as many elements
/// as the table has entries, so that building the table costs less than a
/// quarter of one run. Sets computeCost for `unit`; whether the table pays
/// is the caller's decision.
std::optional<TableLookup> findTableLookup(const ModulePlan &plan, size_t k,
                                           const VectorUnit &unit);

/// out[i] = table[in[i]] for i in [begin, end), elements of the widths
/// `lookup` gives (little-endian bit patterns as indices). With
/// `streaming`, the whole 64-byte lines of the output are written with
/// non-temporal stores (for outputs larger than the caches).
void runTableLookup(const TableLookup &lookup, const void *table,
                    const void *in, void *out, int64_t begin, int64_t end,
                    bool streaming);

} // namespace tessel

#endif // TESSEL_LIB_CODEGEN_TABLELOOKUP_H
