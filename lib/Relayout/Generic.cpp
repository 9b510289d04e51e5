//===- Generic.cpp - The relayout kernel for any pair of layouts ----------===//
//
// Both offsets are sums of per-group tables (Kernels.h). Grouping: follow
// every logical dim through the tiling steps of both layouts; a `*` that
// merges two dims joins their groups. A tile splits a dim into a tile index
// and an in-tile index, but both still depend on the same group only.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace tessel::relayout {

namespace {

struct UnionFind {
  std::vector<int64_t> parent;
  explicit UnionFind(int64_t n) : parent(n) {
    std::iota(parent.begin(), parent.end(), 0);
  }
  int64_t find(int64_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  int64_t merge(int64_t a, int64_t b) {
    if (a < 0)
      return b;
    if (b < 0)
      return a;
    parent[find(a)] = find(b);
    return b;
  }
};

/// Joins the groups of dims a `*` combines; returns, per final dim, a
/// logical dim it depends on (-1 for dims that only hold prepended ones).
std::vector<int64_t> joinCombinedDims(const TiledLayout &layout,
                                      UnionFind &groups) {
  std::vector<int64_t> reps(layout.physicalOrder().begin(),
                            layout.physicalOrder().end());
  for (const TilingStep &step : layout.steps()) {
    reps.insert(reps.begin(), step.leadingOnes, -1);
    std::vector<int64_t> combined;
    int64_t carry = -1;
    for (size_t j = 0; j < reps.size(); ++j) {
      int64_t rep = groups.merge(carry, reps[j]);
      carry = -1;
      if (step.combineIntoNext[j]) {
        carry = rep;
        continue;
      }
      combined.push_back(rep);
    }
    size_t tiled = step.tileSizes.size();
    size_t prefix = combined.size() - tiled;
    reps.assign(combined.begin(), combined.end());
    reps.insert(reps.end(), combined.begin() + prefix, combined.end());
  }
  return reps;
}

/// Fills a group's tables: entry x is the offset of the element whose
/// group dims hold the row-major index x and whose other dims are 0.
void fillTables(const TiledLayout &from, const TiledLayout &to,
                GenericPlan::Group &group) {
  std::vector<int64_t> index(from.rank(), 0);
  group.srcOffsets.resize(group.size);
  group.dstOffsets.resize(group.size);
  for (int64_t x = 0; x < group.size; ++x) {
    group.srcOffsets[x] = from.offset(index);
    group.dstOffsets[x] = to.offset(index);
    for (size_t i = group.dims.size(); i-- > 0;) {
      int64_t dim = group.dims[i];
      if (++index[dim] < from.logicalDims()[dim])
        break;
      index[dim] = 0;
    }
  }
}

} // namespace

int64_t GenericPlan::outerCount() const {
  int64_t count = 1;
  for (size_t g = 0; g + 1 < groups.size(); ++g)
    count *= groups[g].size;
  return count;
}

namespace {

/// The groups of logical dims (connected components of `unions`), in order
/// of their first dim; groupOf maps a root dim to its group.
std::vector<GenericPlan::Group> collectGroups(const TiledLayout &from,
                                              UnionFind &unions,
                                              std::vector<int64_t> &groupOf) {
  std::vector<GenericPlan::Group> groups;
  groupOf.assign(from.rank(), -1);
  for (int64_t dim = 0; dim < from.rank(); ++dim) {
    int64_t root = unions.find(dim);
    if (groupOf[root] < 0) {
      groupOf[root] = static_cast<int64_t>(groups.size());
      groups.emplace_back();
    }
    GenericPlan::Group &group = groups[groupOf[root]];
    group.dims.push_back(dim);
    group.size *= from.logicalDims()[dim];
  }
  return groups;
}

/// Fills the tables of the groups of two or more elements and picks the
/// inner one: the group whose first step moves least in both buffers
/// (|src step| + |dst step|), so that the inner loop touches as few cache
/// lines as the layouts allow; ties go to `minor`, the group holding the
/// destination's most minor dim. -1 when every group has one element.
int64_t pickInner(const TiledLayout &from, const TiledLayout &to,
                  std::vector<GenericPlan::Group> &groups, int64_t minor) {
  int64_t inner = -1, best = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].size < 2)
      continue;
    fillTables(from, to, groups[g]);
    int64_t cost =
        std::abs(groups[g].srcOffsets[1]) + std::abs(groups[g].dstOffsets[1]);
    int64_t index = static_cast<int64_t>(g);
    if (inner < 0 || cost < best || (cost == best && index == minor)) {
      inner = index;
      best = cost;
    }
  }
  return inner;
}

/// Runs of the inner group that are contiguous in both buffers.
std::vector<std::pair<int64_t, int64_t>>
contiguousRuns(const GenericPlan::Group &in) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t x = 0; x < in.size;) {
    int64_t length = 1;
    while (x + length < in.size &&
           in.srcOffsets[x + length] == in.srcOffsets[x] + length &&
           in.dstOffsets[x + length] == in.dstOffsets[x] + length)
      ++length;
    runs.emplace_back(x, length);
    x += length;
  }
  return runs;
}

/// Whether `elements` elements of `bits` bits end on a byte boundary.
bool wholeBytes(int64_t elements, int bits) { return elements * bits % 8 == 0; }

/// Runs of the inner group that are contiguous in the destination.
std::vector<std::pair<int64_t, int64_t>>
destinationRuns(const GenericPlan::Group &in) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t x = 0; x < in.size;) {
    int64_t length = 1;
    while (x + length < in.size &&
           in.dstOffsets[x + length] == in.dstOffsets[x] + length)
      ++length;
    runs.emplace_back(x, length);
    x += length;
  }
  return runs;
}

/// How the bit kernel may split its walk among threads (GenericPlan).
GenericPlan::BitSplit bitSplit(const GenericPlan &plan) {
  using Split = GenericPlan::BitSplit;
  int bits = plan.bits.dstBits;
  if (bits % 8 == 0)
    return Split::Any;
  // Every outer base and every destination run on byte boundaries: each
  // run owns the bytes it writes.
  bool aligned = true;
  for (size_t g = 0; g + 1 < plan.groups.size(); ++g)
    for (int64_t offset : plan.groups[g].dstOffsets)
      aligned = aligned && wholeBytes(offset, bits);
  for (const auto &[start, length] : destinationRuns(plan.groups.back()))
    aligned = aligned &&
              wholeBytes(plan.groups.back().dstOffsets[start], bits) &&
              wholeBytes(length, bits);
  return aligned ? Split::Any : Split::One;
}

/// Whether every run of the inner group, under every outer base, starts
/// and ends on byte boundaries in both buffers (same bit widths).
bool bitRunsAreBytes(const GenericPlan &plan) {
  int bits = plan.bits.srcBits;
  if (bits != plan.bits.dstBits)
    return false;
  for (size_t g = 0; g + 1 < plan.groups.size(); ++g)
    for (int64_t x = 0; x < plan.groups[g].size; ++x)
      if (!wholeBytes(plan.groups[g].srcOffsets[x], bits) ||
          !wholeBytes(plan.groups[g].dstOffsets[x], bits))
        return false;
  const GenericPlan::Group &in = plan.groups.back();
  for (const auto &[start, length] : plan.runs)
    if (!wholeBytes(in.srcOffsets[start], bits) ||
        !wholeBytes(in.dstOffsets[start], bits) || !wholeBytes(length, bits))
      return false;
  return true;
}

} // namespace

std::optional<GenericPlan> planGeneric(const TiledLayout &from,
                                       const TiledLayout &to,
                                       int64_t maxTableEntries) {
  UnionFind unions(from.rank());
  joinCombinedDims(from, unions);
  std::vector<int64_t> dstReps = joinCombinedDims(to, unions);
  std::vector<int64_t> groupOf;
  std::vector<GenericPlan::Group> groups = collectGroups(from, unions, groupOf);
  int64_t entries = 0;
  for (const GenericPlan::Group &group : groups)
    entries += group.size;
  if (entries > maxTableEntries)
    return std::nullopt;

  int64_t minor = -1;
  const std::vector<int64_t> &finalDims = to.finalDims();
  for (size_t f = finalDims.size(); f-- > 0 && minor < 0;)
    if (dstReps[f] >= 0 && finalDims[f] > 1)
      minor = groupOf[unions.find(dstReps[f])];
  int64_t inner = pickInner(from, to, groups, minor);
  GenericPlan plan;
  GenericPlan::Group innerGroup;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (static_cast<int64_t>(g) == inner)
      innerGroup = std::move(groups[g]);
    else if (groups[g].size > 1)
      plan.groups.push_back(std::move(groups[g]));
  }
  if (inner < 0)
    fillTables(from, to, innerGroup);
  // Larger destination strides outside.
  // (std::sort on indices with a tie-break: libstdc++'s stable_sort uses
  // get_temporary_buffer, which clang 19 flags as deprecated.)
  std::vector<size_t> order(plan.groups.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    int64_t strideA = plan.groups[a].dstOffsets[1];
    int64_t strideB = plan.groups[b].dstOffsets[1];
    return strideA != strideB ? strideA > strideB : a < b;
  });
  std::vector<GenericPlan::Group> sorted;
  sorted.reserve(order.size());
  for (size_t i : order)
    sorted.push_back(std::move(plan.groups[i]));
  plan.groups = std::move(sorted);
  plan.groups.push_back(std::move(innerGroup));
  plan.runs = contiguousRuns(plan.groups.back());
  plan.bits = BitConversion::get(from, to);
  bool bytes =
      plan.bits.srcBits == plan.bits.dstBits && plan.bits.srcBits % 8 == 0;
  plan.elementBytes = bytes ? plan.bits.srcBits / 8 : 0;
  plan.dstHasPadding = to.physicalElements() != to.logicalElements();
  plan.dstBytes = to.physicalBytes();
  if (plan.elementBytes == 0) {
    plan.bitSplit = bitSplit(plan);
    plan.bitRunsAreBytes = bitRunsAreBytes(plan);
  }
  return plan;
}

namespace {

/// Walks the outer groups like an odometer from outer index `begin`,
/// calling body(srcBase, dstBase) for each of `count` outer indices.
template <typename Body>
void walkOuter(const GenericPlan &plan, int64_t begin, int64_t count,
               Body &&body) {
  size_t outer = plan.groups.size() - 1;
  std::vector<int64_t> x(outer, 0);
  int64_t srcBase = 0, dstBase = 0;
  for (size_t g = outer; g-- > 0;) {
    x[g] = begin % plan.groups[g].size;
    begin /= plan.groups[g].size;
    srcBase += plan.groups[g].srcOffsets[x[g]];
    dstBase += plan.groups[g].dstOffsets[x[g]];
  }
  for (int64_t i = 0; i < count; ++i) {
    body(srcBase, dstBase);
    for (size_t g = outer; g-- > 0;) {
      const GenericPlan::Group &group = plan.groups[g];
      srcBase -= group.srcOffsets[x[g]];
      dstBase -= group.dstOffsets[x[g]];
      if (++x[g] == group.size)
        x[g] = 0;
      srcBase += group.srcOffsets[x[g]];
      dstBase += group.dstOffsets[x[g]];
      if (x[g] != 0)
        break;
    }
  }
}

template <int Bytes>
void copyInner(const GenericPlan &plan, const uint8_t *src, uint8_t *dst,
               int64_t begin, int64_t count, int64_t elementBytes) {
  const GenericPlan::Group &in = plan.groups.back();
  const int64_t *srcTable = in.srcOffsets.data();
  const int64_t *dstTable = in.dstOffsets.data();
  int64_t size = Bytes ? Bytes : elementBytes;
  bool singles = static_cast<int64_t>(plan.runs.size()) == in.size;
  walkOuter(plan, begin, count, [&](int64_t srcBase, int64_t dstBase) {
    const uint8_t *s = src + srcBase * size;
    uint8_t *d = dst + dstBase * size;
    if (singles) {
      for (int64_t x = 0; x < in.size; ++x)
        std::memcpy(d + dstTable[x] * size, s + srcTable[x] * size, size);
      return;
    }
    for (const auto &[start, length] : plan.runs)
      std::memcpy(d + dstTable[start] * size, s + srcTable[start] * size,
                  length * size);
  });
}

/// Element sizes of 1, 2, 4 or 8 bits never straddle a byte: one shift and
/// one mask per element. 0 means any size (the general bit loop).
template <int SrcBits, int DstBits>
void copyBitsOf(const GenericPlan &plan, const uint8_t *src, uint8_t *dst,
                int64_t begin, int64_t count) {
  const GenericPlan::Group &in = plan.groups.back();
  const BitConversion &bits = plan.bits;
  const int64_t *srcTable = in.srcOffsets.data();
  const int64_t *dstTable = in.dstOffsets.data();
  if (plan.bitRunsAreBytes) {
    int64_t b = bits.srcBits;
    walkOuter(plan, begin, count, [&](int64_t srcBase, int64_t dstBase) {
      for (const auto &[start, length] : plan.runs)
        std::memcpy(dst + (dstBase + dstTable[start]) * b / 8,
                    src + (srcBase + srcTable[start]) * b / 8, length * b / 8);
    });
    return;
  }
  walkOuter(plan, begin, count, [&](int64_t srcBase, int64_t dstBase) {
    for (int64_t x = 0; x < in.size; ++x) {
      int64_t from = (srcBase + srcTable[x]) * bits.srcBits;
      int64_t to = (dstBase + dstTable[x]) * bits.dstBits;
      uint64_t value;
      if constexpr (SrcBits > 0)
        value = (src[from >> 3] >> (from & 7)) & ((1u << SrcBits) - 1);
      else
        value = loadBits(src, from, bits.srcBits);
      value = bits.convert(value);
      if constexpr (DstBits > 0)
        dst[to >> 3] |=
            static_cast<uint8_t>((value & ((1u << DstBits) - 1)) << (to & 7));
      else
        orBits(dst, to, bits.dstBits, value);
    }
  });
}

void copyBits(const GenericPlan &plan, const uint8_t *src, uint8_t *dst,
              int64_t begin, int64_t count) {
  int from = plan.bits.srcBits, to = plan.bits.dstBits;
  if (from == to && from == 1)
    return copyBitsOf<1, 1>(plan, src, dst, begin, count);
  if (from == to && from == 2)
    return copyBitsOf<2, 2>(plan, src, dst, begin, count);
  if (from == to && from == 4)
    return copyBitsOf<4, 4>(plan, src, dst, begin, count);
  if (from == 8 && to == 1)
    return copyBitsOf<8, 1>(plan, src, dst, begin, count);
  if (from == 1 && to == 8)
    return copyBitsOf<1, 8>(plan, src, dst, begin, count);
  if (from == 8 && to == 4)
    return copyBitsOf<8, 4>(plan, src, dst, begin, count);
  if (from == 4 && to == 8)
    return copyBitsOf<4, 8>(plan, src, dst, begin, count);
  copyBitsOf<0, 0>(plan, src, dst, begin, count);
}

/// The bit kernel: the destination zeroed, then the walk, split among
/// threads where no destination byte is shared (GenericPlan::bitSplit).
void runBits(const GenericPlan &plan, const uint8_t *src, uint8_t *dst,
             int threads) {
  using Split = GenericPlan::BitSplit;
  // Runs of whole bytes leave no partly written byte: only padding (whole
  // bytes too) needs zeroing, as in the byte kernel.
  bool zero = !plan.bitRunsAreBytes || plan.dstHasPadding;
  int64_t zeroChunk = zero ? int64_t(1) << 20 : plan.dstBytes + 1;
  parallelFor(threads, ceilDivide(plan.dstBytes, zeroChunk), 1,
              [&](int64_t begin, int64_t end) {
                int64_t from = begin * zeroChunk;
                int64_t to = std::min(plan.dstBytes, end * zeroChunk);
                if (zero)
                  std::memset(dst + from, 0, to - from);
              });
  int64_t outer = plan.outerCount();
  if (plan.bitSplit == Split::One || threads <= 1)
    return copyBits(plan, src, dst, 0, outer);
  int64_t innerBits =
      plan.groups.back().size * std::max(plan.bits.srcBits, plan.bits.dstBits);
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 19) / innerBits);
  parallelFor(threads, outer, grain, [&](int64_t begin, int64_t end) {
    copyBits(plan, src, dst, begin, end - begin);
  });
}

} // namespace

void runGeneric(const GenericPlan &plan, const uint8_t *src, uint8_t *dst,
                int threads, bool streaming) {
  if (plan.elementBytes == 0)
    return runBits(plan, src, dst, threads);
  if (plan.dstHasPadding) {
    zeroBytes(dst, plan.dstBytes, streaming);
    storeFence();
  }
  int64_t innerBytes = plan.groups.back().size * plan.elementBytes;
  int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / innerBytes);
  int64_t eb = plan.elementBytes;
  parallelFor(threads, plan.outerCount(), grain,
              [&](int64_t begin, int64_t end) {
                switch (eb) {
                case 1:
                  return copyInner<1>(plan, src, dst, begin, end - begin, eb);
                case 2:
                  return copyInner<2>(plan, src, dst, begin, end - begin, eb);
                case 4:
                  return copyInner<4>(plan, src, dst, begin, end - begin, eb);
                case 8:
                  return copyInner<8>(plan, src, dst, begin, end - begin, eb);
                case 16:
                  return copyInner<16>(plan, src, dst, begin, end - begin, eb);
                default:
                  return copyInner<0>(plan, src, dst, begin, end - begin, eb);
                }
              });
}

} // namespace tessel::relayout
