//===- TableLookup.cpp - Elementwise kernels of a narrow input as tables --===//
//
// Which kernels run as a table lookup (findTableLookup) and the lookup
// itself. The table is built in CpuExecutable.cpp by the compiled kernel.
//
//===----------------------------------------------------------------------===//
#include "TableLookup.h"

#include "tessel/Codegen/FusionEmitter.h"
#include "tessel/Codegen/HeroAnalysis.h"
#include "tessel/Layout/TiledLayout.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <unordered_map>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tessel {

namespace {

/// The largest table: 256 KiB stays in the L2 of every x86 core of the
/// last ten years, next to the input and output lines streaming through.
constexpr int64_t kMaxTableBytes = 256 << 10;
/// The arrays must have this many times as many elements as the table has
/// entries: the table costs the kernel's time for its entries.
constexpr int64_t kMinElementsPerEntry = 4;

/// What an instruction's value depends on.
enum class Dependence {
  Invariant, ///< the same at every index (scalar constants, broadcasts)
  Element,   ///< the parameter's element at the same index
};

/// Whether every instruction from `root` down is elementwise, a scalar
/// constant or a broadcast of an invariant scalar, and the only parameter
/// reached is one; sets `parameter` to its number. Iterative: a chain of
/// thousands of ops does not grow the stack.
bool isElementwiseOfOneParameter(
    const HloInstruction &root, int64_t &parameter,
    std::vector<const HloInstruction *> &computed) {
  std::unordered_map<const HloInstruction *, Dependence> known;
  std::vector<std::pair<const HloInstruction *, bool>> stack = {{&root, false}};
  parameter = -1;
  while (!stack.empty()) {
    auto [instruction, operandsDone] = stack.back();
    stack.pop_back();
    if (known.count(instruction))
      continue;
    HloOpcode opcode = instruction->opcode();
    if (opcode == HloOpcode::Parameter) {
      if (parameter >= 0 && parameter != instruction->parameterNumber())
        return false;
      parameter = instruction->parameterNumber();
      known[instruction] = Dependence::Element;
      continue;
    }
    if (opcode == HloOpcode::Constant) {
      if (instruction->shape().rank() != 0 || !instruction->shape().isArray())
        return false;
      known[instruction] = Dependence::Invariant;
      continue;
    }
    bool broadcast = opcode == HloOpcode::Broadcast;
    // map calls a computation: elementwise, but left out rather than
    // walked.
    if (!broadcast && (!isElementwise(opcode) || opcode == HloOpcode::Map))
      return false;
    // A bitcast-convert between widths reads several elements, or a part.
    if (opcode == HloOpcode::BitcastConvert &&
        instruction->operand(0)->shape().dims != instruction->shape().dims)
      return false;
    if (broadcast && (instruction->operandCount() != 1 ||
                      instruction->operand(0)->shape().rank() != 0))
      return false;
    if (!operandsDone) {
      stack.push_back({instruction, true});
      for (const HloInstruction *operand : instruction->operands())
        if (!known.count(operand))
          stack.push_back({operand, false});
      continue;
    }
    Dependence dependence = Dependence::Invariant;
    for (const HloInstruction *operand : instruction->operands()) {
      auto it = known.find(operand);
      if (it == known.end())
        return false; // a cycle: not a valid computation
      if (it->second == Dependence::Element)
        dependence = Dependence::Element;
    }
    // A broadcast of a value that depends on the parameter would read it
    // at another index.
    if (broadcast && dependence == Dependence::Element)
      return false;
    known[instruction] = dependence;
    if (dependence == Dependence::Element)
      computed.push_back(instruction);
  }
  return parameter >= 0 && known[&root] == Dependence::Element;
}

/// Vector instructions per vector of results of one instruction, without
/// the rounding of narrow floats.
double instructionCost(HloOpcode opcode) {
  switch (opcode) {
  case HloOpcode::Exp:
  case HloOpcode::ExponentialMinusOne:
  case HloOpcode::Log:
  case HloOpcode::LogPlusOne:
  case HloOpcode::Logistic:
  case HloOpcode::Tanh:
  case HloOpcode::Sine:
  case HloOpcode::Cosine:
  case HloOpcode::Tan:
  case HloOpcode::Atan2:
  case HloOpcode::Erf:
  case HloOpcode::Cbrt:
  case HloOpcode::Power:
    return 25; // a polynomial and its range reduction
  case HloOpcode::Divide:
  case HloOpcode::Remainder:
  case HloOpcode::Sqrt:
  case HloOpcode::Rsqrt:
    return 5;
  default:
    return 1;
  }
}

/// The estimate of TableLookup::computeCost: the instructions between the
/// parameter and the ROOT, each over as many lanes as the registers hold
/// of the type it computes in (bf16 and f16 compute in f32, then round:
/// bf16 in 6 integer instructions, f16 by converting there and back).
double estimateComputeCost(const std::vector<const HloInstruction *> &computed,
                           const VectorUnit &unit) {
  // Without F16C an f16 conversion is a call per element.
  constexpr double kHalfCallCost = 10;
  double perElement = 0;
  for (const HloInstruction *instruction : computed) {
    HloOpcode opcode = instruction->opcode();
    PrimitiveType type = instruction->shape().elementType;
    bool convert = opcode == HloOpcode::Convert;
    PrimitiveType from =
        convert ? instruction->operand(0)->shape().elementType : type;
    // Conversions between f16 and f32: a convert is one, an op on f16
    // extends its operands and truncates its result (about two).
    int halfConversions =
        convert ? (type == PrimitiveType::F16) + (from == PrimitiveType::F16)
                : (type == PrimitiveType::F16 ? 2 : 0);
    double cost = convert ? (halfConversions ? 0 : 1) : instructionCost(opcode);
    if (type == PrimitiveType::BF16 && !(convert && from == type))
      cost += 6;
    if (unit.halfConversions)
      cost += halfConversions;
    else
      perElement += halfConversions * kHalfCallCost;
    int bits = std::max({32, 8 * byteWidth(type), 8 * byteWidth(from)});
    perElement += cost / std::max(1u, unit.bits / bits);
  }
  return perElement;
}

/// Whether `shape` is stored densely in the order of its minor_to_major,
/// byteWidth bytes per element (no tiles, no padding, no packing: pred
/// and s4 take a byte each). Every byte pattern of an element is an entry
/// of the table, the values the type does not use included, so the lookup
/// gives what the kernel gives for them too.
bool isDense(const Shape &shape, int64_t elements) {
  Layout layout = shape.layoutOrDefault();
  if (!layout.hasOnlyMinorToMajor())
    return false;
  int width = byteWidth(shape.elementType);
  return width > 0 && bufferBytes(shape) == elements * width;
}

#if defined(__SSE2__)
/// Input K of the 1- or 2-byte inputs read into `words` (x86 is
/// little-endian: input 0 is the low bits of words[0]).
template <typename In, int K> inline uint32_t indexAt(const uint64_t *words) {
  constexpr int kBits = 8 * sizeof(In);
  constexpr int kPerWord = 64 / kBits;
  return static_cast<uint32_t>(
      (words[K / kPerWord] >> (kBits * (K % kPerWord))) &
      ((uint64_t(1) << kBits) - 1));
}

/// The entries of 16 / sizeof(Out) consecutive inputs in one vector: the
/// inputs read 8 bytes at a time, the entries loaded straight into their
/// lanes. One element at a time costs three memory operations (input,
/// entry, output), and a core issues about three a cycle: about 1 cycle an
/// element. Here a vector's elements cost a few input loads, one load per
/// entry and one store: the seed's GELU (bf16 -> bf16) took 2.9 instead of
/// 3.7 ms on one Zen 3 core, an f16 -> f32 exp 4.0 instead of 4.7.
/// 2-byte entries go in with `pinsrw`, 4-byte ones with `movd` and two
/// unpacks (SSE2 both). 1-byte entries stay one at a time: inserted in
/// pairs they gained 4% (s8 -> s8) or lost 2% (u16 -> pred).
template <typename In, typename Out> struct VectorLookup {
  static constexpr int kLanes = 16 / sizeof(Out);
  static constexpr int kWords = (kLanes * int(sizeof(In)) + 7) / 8;

  template <size_t... K>
  static __m128i eightFrom(const uint16_t *table, const uint64_t *words,
                           std::index_sequence<K...>) {
    __m128i v = _mm_setzero_si128();
    ((v = _mm_insert_epi16(v, table[indexAt<In, K>(words)], K)), ...);
    return v;
  }

  static __m128i load(const Out *table, const In *in) {
    uint64_t words[kWords] = {};
    std::memcpy(words, in, kLanes * sizeof(In));
    if constexpr (sizeof(Out) == 2) {
      return eightFrom(table, words, std::make_index_sequence<8>());
    } else {
      static_assert(sizeof(Out) == 4);
      auto entry = [&](uint32_t index) {
        return _mm_cvtsi32_si128(static_cast<int>(table[index]));
      };
      __m128i low = _mm_unpacklo_epi32(entry(indexAt<In, 0>(words)),
                                       entry(indexAt<In, 1>(words)));
      __m128i high = _mm_unpacklo_epi32(entry(indexAt<In, 2>(words)),
                                        entry(indexAt<In, 3>(words)));
      return _mm_unpacklo_epi64(low, high);
    }
  }
};

/// Whether entries of `Out` go through VectorLookup.
template <typename Out>
constexpr bool kVectorEntries = sizeof(Out) == 2 || sizeof(Out) == 4;

/// The entries of the 64 / sizeof(Out) inputs from `in` (one 64-byte line
/// of the output) as four vectors: through VectorLookup, or one at a time
/// into a buffer.
template <typename In, typename Out>
inline void lookUpLine(const Out *table, const In *in, __m128i line[4]) {
  if constexpr (kVectorEntries<Out>) {
    constexpr int64_t kLanes = VectorLookup<In, Out>::kLanes;
    for (int v = 0; v < 4; ++v)
      line[v] = VectorLookup<In, Out>::load(table, in + v * kLanes);
  } else {
    constexpr int64_t kPerLine = 64 / sizeof(Out);
    alignas(16) Out entries[kPerLine];
    for (int64_t j = 0; j < kPerLine; ++j)
      entries[j] = table[in[j]];
    for (int v = 0; v < 4; ++v)
      line[v] = _mm_load_si128(reinterpret_cast<const __m128i *>(entries) + v);
  }
}
#endif

template <typename In, typename Out>
void lookUp(const Out *table, const In *in, Out *out, int64_t begin,
            int64_t end) {
  int64_t i = begin;
#if defined(__SSE2__)
  if constexpr (kVectorEntries<Out>) {
    // Four vectors in flight per iteration.
    constexpr int64_t kPerLine = 64 / sizeof(Out);
    for (; i + kPerLine <= end; i += kPerLine) {
      __m128i line[4];
      lookUpLine(table, in + i, line);
      __m128i *to = reinterpret_cast<__m128i *>(out + i);
      for (int v = 0; v < 4; ++v)
        _mm_storeu_si128(to + v, line[v]);
    }
  }
#endif
  // Four independent loads in flight per iteration.
  for (; i + 4 <= end; i += 4) {
    Out a = table[in[i]], b = table[in[i + 1]];
    Out c = table[in[i + 2]], d = table[in[i + 3]];
    out[i] = a;
    out[i + 1] = b;
    out[i + 2] = c;
    out[i + 3] = d;
  }
  for (; i < end; ++i)
    out[i] = table[in[i]];
}

/// The input is prefetched this far ahead of the lookup: the hardware
/// prefetcher alone left the streaming lookup 8-12% slower in thread CPU
/// time on Zen 4 (2 KiB ahead gained nothing, 8 KiB less than 4).
constexpr int64_t kPrefetchBytes = 4096;

/// The same, whole 64-byte lines of `out` written with streaming stores
/// (the line is assembled in a buffer first), so that the output's lines
/// are not read before they are written; the head up to the first line
/// boundary and the tail are ordinary stores.
template <typename In, typename Out>
void lookUpStreaming(const Out *table, const In *in, Out *out, int64_t begin,
                     int64_t end) {
#if defined(__SSE2__)
  constexpr int64_t kPerLine = 64 / sizeof(Out);
  int64_t i = begin;
  while (i < end && (reinterpret_cast<uintptr_t>(out + i) & 63) != 0)
    ++i;
  if (i + kPerLine > end)
    return lookUp(table, in, out, begin, end);
  lookUp(table, in, out, begin, i);
  for (; i + kPerLine <= end; i += kPerLine) {
    _mm_prefetch(reinterpret_cast<const char *>(in + i) + kPrefetchBytes,
                 _MM_HINT_NTA);
    __m128i line[4];
    lookUpLine(table, in + i, line);
    __m128i *to = reinterpret_cast<__m128i *>(out + i);
    for (int v = 0; v < 4; ++v)
      _mm_stream_si128(to + v, line[v]);
  }
  _mm_sfence();
  lookUp(table, in, out, i, end);
#else
  lookUp(table, in, out, begin, end);
#endif
}

template <typename In, typename Out>
void lookUpAs(const void *table, const In *in, void *out, int64_t begin,
              int64_t end, bool streaming) {
  if (streaming)
    return lookUpStreaming(static_cast<const Out *>(table), in,
                           static_cast<Out *>(out), begin, end);
  lookUp(static_cast<const Out *>(table), in, static_cast<Out *>(out), begin,
         end);
}

template <typename In>
void lookUpInto(int outputBytes, const void *table, const In *in, void *out,
                int64_t begin, int64_t end, bool streaming) {
  switch (outputBytes) {
  case 1:
    return lookUpAs<In, uint8_t>(table, in, out, begin, end, streaming);
  case 2:
    return lookUpAs<In, uint16_t>(table, in, out, begin, end, streaming);
  case 4:
    return lookUpAs<In, uint32_t>(table, in, out, begin, end, streaming);
  default:
    return lookUpAs<In, uint64_t>(table, in, out, begin, end, streaming);
  }
}

} // namespace

std::optional<TableLookup> findTableLookup(const ModulePlan &plan, size_t k,
                                           const VectorUnit &unit) {
  const PlannedKernel &kernel = plan.kernels[k];
  if (kernel.outputIndices.size() != 1 || kernel.outputs.size() != 1)
    return std::nullopt;
  std::vector<FusionOutput> outputs = getFusionOutputs(*kernel.computation);
  const FusionOutput &output = outputs[kernel.outputIndices.front()];
  if (output.element >= 0)
    return std::nullopt;
  if (analyzeFusion(*kernel.computation, kernel.outputIndices).kind !=
      EmitterKind::Loop)
    return std::nullopt;
  TableLookup lookup;
  std::vector<const HloInstruction *> computed;
  if (!isElementwiseOfOneParameter(*output.instruction, lookup.parameter,
                                   computed) ||
      lookup.parameter >= static_cast<int64_t>(kernel.inputs.size()))
    return std::nullopt;
  const Shape &in = plan.buffers[kernel.inputs[lookup.parameter]];
  const Shape &out = plan.buffers[kernel.outputs.front()];
  if (!in.isArray() || !out.isArray() || in.dims != out.dims)
    return std::nullopt;
  std::optional<int64_t> elements = out.elementCount();
  if (!elements || !isDense(in, *elements) || !isDense(out, *elements) ||
      in.layoutOrDefault().minorToMajor != out.layoutOrDefault().minorToMajor)
    return std::nullopt;
  lookup.inputType = in.elementType;
  lookup.outputType = out.elementType;
  lookup.inputBytes = byteWidth(in.elementType);
  lookup.outputBytes = byteWidth(out.elementType);
  if (lookup.inputBytes > 2 ||
      (lookup.outputBytes != 1 && lookup.outputBytes != 2 &&
       lookup.outputBytes != 4 && lookup.outputBytes != 8))
    return std::nullopt;
  lookup.entries = int64_t(1) << (8 * lookup.inputBytes);
  lookup.elements = *elements;
  if (lookup.tableBytes() > kMaxTableBytes ||
      lookup.elements < kMinElementsPerEntry * lookup.entries)
    return std::nullopt;
  lookup.computeCost = estimateComputeCost(computed, unit);
  return lookup;
}

void runTableLookup(const TableLookup &lookup, const void *table,
                    const void *in, void *out, int64_t begin, int64_t end,
                    bool streaming) {
  if (lookup.inputBytes == 1)
    return lookUpInto(lookup.outputBytes, table,
                      static_cast<const uint8_t *>(in), out, begin, end,
                      streaming);
  return lookUpInto(lookup.outputBytes, table,
                    static_cast<const uint16_t *>(in), out, begin, end,
                    streaming);
}

} // namespace tessel
