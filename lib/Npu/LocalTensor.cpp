//===- LocalTensor.cpp - A 4-D tensor in NPU local memory -----------------===//
#include "tessel/Npu/LocalTensor.h"

#include "tessel/Support/MathExtras.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace tessel {
namespace {

constexpr const char *kDimNames[4] = {"n", "c", "h", "w"};

std::string dimsText(const Dims4 &dims) {
  return "(" + std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "," +
         std::to_string(dims[2]) + "," + std::to_string(dims[3]) + ")";
}

/// The number of elements of a shape, or nullopt on overflow.
std::optional<int64_t> product(const Dims4 &dims) {
  int64_t p = 1;
  for (int64_t v : dims) {
    std::optional<int64_t> next = checkedMul(p, v);
    if (!next)
      return std::nullopt;
    p = *next;
  }
  return p;
}

/// The index of row-major position `id` in `sizes`.
Dims4 unflatten(int64_t id, const Dims4 &sizes) {
  return {id / (sizes[1] * sizes[2] * sizes[3]),
          id / (sizes[2] * sizes[3]) % sizes[1], id / sizes[3] % sizes[2],
          id % sizes[3]};
}

/// Whether each used dim's stride is at least the extent of the dims with
/// smaller strides: then every index has its own offset.
bool stridesNest(const Dims4 &sizes, const Dims4 &strides) {
  std::vector<int> used;
  for (int d = 0; d < 4; ++d)
    if (sizes[d] > 1)
      used.push_back(d);
  std::sort(used.begin(), used.end(),
            [&](int a, int b) { return strides[a] < strides[b]; });
  int64_t extent = 1;
  for (int d : used) {
    if (strides[d] < extent)
      return false;
    std::optional<int64_t> next = checkedMul(strides[d], sizes[d] - 1);
    if (next)
      next = checkedAdd(*next, extent);
    if (!next)
      return false;
    extent = *next;
  }
  return true;
}

// Work limits of the brute-force aliasing checks and of the strided inverse.
constexpr int64_t kMaxBruteElements = int64_t(1) << 22;
constexpr int64_t kMaxBruteSpan = int64_t(1) << 22;
constexpr int64_t kMaxSearchSteps = int64_t(1) << 20;

/// Span in elements of strided offsets: 1 + sum (size - 1) * stride.
std::optional<int64_t> stridedSpan(const Dims4 &sizes, const Dims4 &strides) {
  int64_t span = 1;
  for (int d = 0; d < 4; ++d) {
    if (sizes[d] <= 1)
      continue;
    std::optional<int64_t> term = checkedMul(sizes[d] - 1, strides[d]);
    std::optional<int64_t> sum = term ? checkedAdd(span, *term) : std::nullopt;
    if (!sum)
      return std::nullopt;
    span = *sum;
  }
  return span;
}

/// Finds (i0..i3) with sum i_d * stride_d == target, i_d < sizes[d] and
/// accept(i) true, trying dims from the largest stride down.
class StrideSolver {
public:
  StrideSolver(const Dims4 &sizes, const Dims4 &strides)
      : sizes(sizes), strides(strides) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return strides[a] > strides[b]; });
    for (int k = 2; k >= 0; --k)
      maxRest[k] =
          maxRest[k + 1] + (sizes[order[k + 1]] - 1) * strides[order[k + 1]];
  }
  template <typename Accept>
  bool solve(int64_t target, Dims4 &index, Accept accept) {
    steps = 0;
    return search(0, target, index, accept);
  }

private:
  template <typename Accept>
  bool search(int k, int64_t rem, Dims4 &index, Accept &accept) {
    if (++steps > kMaxSearchSteps)
      return false;
    if (k == 4)
      return rem == 0 && accept(index);
    int d = order[k];
    int64_t s = strides[d];
    int64_t lo = 0, hi = sizes[d] - 1;
    if (s > 0) {
      hi = std::min(hi, rem / s);
      lo = rem > maxRest[k] ? ceilDiv(rem - maxRest[k], s) : 0;
    } else if (rem > maxRest[k]) {
      return false;
    }
    for (int64_t i = lo; i <= hi; ++i) {
      index[d] = i;
      if (search(k + 1, rem - i * s, index, accept))
        return true;
    }
    return false;
  }

  Dims4 sizes, strides;
  std::array<int, 4> order{};
  std::array<int64_t, 4> maxRest{};
  int64_t steps = 0;
};

} // namespace

std::string_view layoutName(NpuLayout layout) {
  switch (layout) {
  case NpuLayout::Continuous:
    return "continuous";
  case NpuLayout::Aligned:
    return "aligned";
  case NpuLayout::ChipAligned:
    return "eu";
  case NpuLayout::Compact:
    return "compact";
  case NpuLayout::Matrix:
    return "matrix";
  case NpuLayout::Strided:
    return "strided";
  }
  return "?";
}

std::optional<NpuLayout> parseLayoutName(std::string_view name) {
  for (NpuLayout l :
       {NpuLayout::Continuous, NpuLayout::Aligned, NpuLayout::ChipAligned,
        NpuLayout::Compact, NpuLayout::Matrix, NpuLayout::Strided})
    if (layoutName(l) == name)
      return l;
  if (name == "chip")
    return NpuLayout::ChipAligned;
  return std::nullopt;
}

std::string_view modeName(StorageMode mode) {
  switch (mode) {
  case StorageMode::Normal:
    return "1n";
  case StorageMode::N4:
    return "4n";
  case StorageMode::N2:
    return "2n";
  case StorageMode::IC2:
    return "2ic";
  }
  return "?";
}

std::optional<StorageMode> parseModeName(std::string_view name) {
  for (StorageMode m : {StorageMode::Normal, StorageMode::N4, StorageMode::N2,
                        StorageMode::IC2})
    if (modeName(m) == name)
      return m;
  return std::nullopt;
}

int64_t modeLanes(StorageMode mode) {
  switch (mode) {
  case StorageMode::N4:
    return 4;
  case StorageMode::N2:
  case StorageMode::IC2:
    return 2;
  default:
    return 1;
  }
}

Dims4 continuousStrides(const Dims4 &shape) {
  return {shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1};
}

bool TensorDesc::operator==(const TensorDesc &o) const {
  return shape == o.shape && type == o.type && layout == o.layout &&
         mode == o.mode && matrixW == o.matrixW && strides == o.strides &&
         address == o.address;
}

std::string_view byteKindName(ByteKind kind) {
  switch (kind) {
  case ByteKind::Element:
    return "element";
  case ByteKind::Dummy:
    return "dummy";
  case ByteKind::MatrixTail:
    return "matrix-tail";
  case ByteKind::FeaturePadding:
    return "padding";
  case ByteKind::EmptySlot:
    return "empty-slot";
  case ByteKind::Gap:
    return "gap";
  case ByteKind::Outside:
    return "outside";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

static Status checkMode(const NpuConfig &config, const TensorDesc &desc) {
  if (desc.mode == StorageMode::Normal)
    return {};
  std::string mode(modeName(desc.mode));
  for (char &ch : mode)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (!config.hasPackedModes())
    return Error(config.name() + " has no " + mode +
                 " mode (only bm1684-style chips pack along N)");
  if (desc.layout == NpuLayout::Matrix)
    return Error(mode + " mode does not apply to the matrix layout");
  PrimitiveType t = desc.type;
  bool ok = desc.mode == StorageMode::N4
                ? (t == PrimitiveType::S8 || t == PrimitiveType::U8)
            : desc.mode == StorageMode::N2
                ? (t == PrimitiveType::S16 || t == PrimitiveType::U16)
                : t == PrimitiveType::F32;
  if (!ok)
    return Error(mode + " mode stores " +
                 (desc.mode == StorageMode::N4   ? "int8 or uint8"
                  : desc.mode == StorageMode::N2 ? "int16 or uint16"
                                                 : "fp32 conv weights") +
                 ", not " + npuTypeName(t));
  return {};
}

static Status checkDesc(const NpuConfig &config, const TensorDesc &desc) {
  if (desc.layout == NpuLayout::Continuous)
    return Error("continuous is the layout of system memory, expected a local "
                 "layout: aligned, eu, compact, matrix or strides");
  for (int d = 0; d < 4; ++d)
    if (desc.shape[d] < 1)
      return Error("dimension " + std::string(kDimNames[d]) + " is " +
                   std::to_string(desc.shape[d]) + ", expected at least 1");
  if (!isArrayType(desc.type) ||
      (bitWidth(desc.type) < 8 && desc.type != PrimitiveType::Pred))
    return Error("element type " + npuTypeName(desc.type) +
                 " is not a whole number of bytes");
  if (Status e = checkMode(config, desc); !e)
    return e;
  if (desc.layout == NpuLayout::Matrix) {
    if (desc.shape[2] != 1 || desc.shape[3] != 1)
      return Error("a matrix has 2 dimensions (rows, columns)");
    if (desc.matrixW < 1 || desc.matrixW > desc.shape[1])
      return Error("matrix W is " + std::to_string(desc.matrixW) +
                   ", expected 1.." + std::to_string(desc.shape[1]) +
                   " (the number of columns)");
  }
  if (desc.layout == NpuLayout::Strided)
    for (int d = 0; d < 4; ++d)
      if (desc.strides[d] < 0)
        return Error(std::string(kDimNames[d]) + " stride is " +
                     std::to_string(desc.strides[d]) +
                     ", expected a stride >= 0");
  return {};
}

Expected<LocalTensor> LocalTensor::get(const NpuConfig &config,
                                       const TensorDesc &desc) {
  if (Status e = checkDesc(config, desc); !e)
    return e.takeError();
  Expected<NpuPlace> start = config.split(desc.address);
  if (!start)
    return start.takeError();
  LocalTensor t;
  t.cfg = config;
  t.d = desc;
  t.origin = *start;
  Status ok = t.computeStrides();
  if (!ok)
    return ok.takeError();
  return t;
}

Status LocalTensor::computeStrides() {
  const Error tooLarge("tensor " + dimsText(d.shape) + " of " +
                       npuTypeName(d.type) + " is too large to place");
  int64_t lanes = modeLanes(d.mode);
  logicalBytes = byteWidth(d.type);
  packedBytes = logicalBytes * lanes;
  if (d.layout == NpuLayout::Matrix)
    stored = {d.shape[0], ceilDiv(d.shape[1], d.matrixW), 1, d.matrixW};
  else
    stored = {ceilDiv(d.shape[0], lanes), d.shape[1], d.shape[2], d.shape[3]};
  std::optional<int64_t> count = product(d.shape);
  if (!count || !checkedMul(*count, logicalBytes) || !product(stored))
    return tooLarge;
  cpn = cfg.channelsPerNpu(origin.npu, stored[1]);
  std::optional<int64_t> span;
  if (d.layout == NpuLayout::Strided) {
    stride = d.strides;
    span = stridedSpan({stored[0], cpn, stored[2], stored[3]}, stride);
  } else {
    std::optional<int64_t> plane = checkedMul(stored[2], stored[3]);
    int64_t unit =
        d.layout == NpuLayout::Aligned || d.layout == NpuLayout::Matrix ? 128
        : d.layout == NpuLayout::ChipAligned ? cfg.alignBytes()
                                             : 0;
    eu = unit ? std::max<int64_t>(1, unit / packedBytes) : 0;
    std::optional<int64_t> cs =
        plane && eu ? checkedRoundUp(*plane, eu) : plane;
    std::optional<int64_t> ns = cs ? checkedMul(*cs, cpn) : std::nullopt;
    if (!ns)
      return tooLarge;
    stride = {*ns, *cs, stored[3], 1};
    span = checkedMul(stored[0], *ns);
  }
  std::optional<int64_t> bytes =
      span ? checkedMul(*span, packedBytes) : std::nullopt;
  // Keep every per-tensor byte total (reserved bytes times NPUs) in int64.
  if (!bytes || *bytes > (int64_t(1) << 62) / cfg.npus())
    return tooLarge;
  reserved = *bytes;
  return {};
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

std::array<bool, 4> LocalTensor::stridesUsed() const {
  return {stored[0] > 1, cpn > 1, stored[2] > 1, stored[3] > 1};
}

std::string LocalTensor::storedTypeName() const {
  std::string name = npuTypeName(d.type);
  int64_t lanes = modeLanes(d.mode);
  return lanes > 1 ? name + "x" + std::to_string(lanes) : name;
}

int64_t LocalTensor::requiredAlignment() const {
  switch (d.layout) {
  case NpuLayout::Aligned:
  case NpuLayout::Matrix:
    return 128;
  case NpuLayout::ChipAligned:
    return cfg.alignBytes();
  default:
    return 4;
  }
}

int64_t LocalTensor::logicalElements() const {
  return d.shape[0] * d.shape[1] * d.shape[2] * d.shape[3];
}

int64_t LocalTensor::npuCount() const {
  return std::min(stored[1], cfg.npus());
}

std::vector<int64_t> LocalTensor::npus() const {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < npuCount(); ++i)
    out.push_back((origin.npu + i) % cfg.npus());
  return out;
}

bool LocalTensor::touchesNpu(int64_t npu) const {
  if (npu < 0 || npu >= cfg.npus())
    return false;
  return floorMod(npu - origin.npu, cfg.npus()) < stored[1];
}

int64_t LocalTensor::slotOf(const Dims4 &index) const {
  int64_t c = d.layout == NpuLayout::Matrix ? index[1] / d.matrixW : index[1];
  return (origin.npu + c) / cfg.npus();
}

NpuPlace LocalTensor::locate(const Dims4 &index) const {
  int64_t n = index[0], c = index[1], h = index[2], w = index[3], lane = 0;
  if (d.layout == NpuLayout::Matrix) {
    c = index[1] / d.matrixW;
    w = index[1] % d.matrixW;
  } else {
    int64_t lanes = modeLanes(d.mode);
    lane = n % lanes;
    n /= lanes;
  }
  ChannelSlot cs = cfg.channelSlot(origin.npu, c);
  int64_t rel = packedBytes * (n * stride[0] + cs.slot * stride[1] +
                               h * stride[2] + w * stride[3]) +
                lane * logicalBytes;
  return {cs.npu, origin.offset + rel};
}

//===----------------------------------------------------------------------===//
// The inverse map: what a byte holds
//===----------------------------------------------------------------------===//

ByteInfo LocalTensor::classify(NpuPlace place) const {
  if (!touchesNpu(place.npu) || place.offset < origin.offset ||
      place.offset - origin.offset >= reserved)
    return {};
  int64_t rel = place.offset - origin.offset;
  return d.layout == NpuLayout::Strided ? classifyStrided(place.npu, rel)
                                        : classifyLayout(place.npu, rel);
}

ByteInfo LocalTensor::classifyLayout(int64_t npu, int64_t rel) const {
  int64_t e = rel / packedBytes, byte = rel % packedBytes;
  int64_t n = e / stride[0], inN = e % stride[0];
  int64_t slot = inN / stride[1], within = inN % stride[1];
  int64_t c = slot * cfg.npus() + npu - origin.npu;
  ByteInfo info;
  info.slot = slot;
  if (c < 0 || c >= stored[1]) {
    info.kind = ByteKind::EmptySlot;
    info.index = {n, -1, 0, 0};
    info.byte = within * packedBytes + byte;
    return info;
  }
  int64_t plane = stored[2] * stored[3];
  if (within >= plane) {
    info.kind = ByteKind::FeaturePadding;
    info.index = {n, c, 0, 0};
    info.byte = (within - plane) * packedBytes + byte;
    return info;
  }
  return fromStored({n, c, within / stored[3], within % stored[3]}, byte, slot);
}

ByteInfo LocalTensor::classifyStrided(int64_t npu, int64_t rel) const {
  ByteInfo info;
  info.kind = ByteKind::Gap;
  int64_t target = rel / packedBytes;
  // Solve over (n', slot, h, w); accept only slots that hold a channel here.
  StrideSolver solver({stored[0], cpn, stored[2], stored[3]}, stride);
  Dims4 index{0, 0, 0, 0};
  auto holdsChannel = [&](const Dims4 &i) {
    int64_t c = i[1] * cfg.npus() + npu - origin.npu;
    return c >= 0 && c < stored[1];
  };
  if (!solver.solve(target, index, holdsChannel))
    return info;
  int64_t slot = index[1];
  index[1] = slot * cfg.npus() + npu - origin.npu;
  return fromStored(index, rel % packedBytes, slot);
}

ByteInfo LocalTensor::fromStored(const Dims4 &s, int64_t byte,
                                 int64_t slot) const {
  ByteInfo info;
  info.slot = slot;
  if (d.layout == NpuLayout::Matrix) {
    int64_t col = s[1] * d.matrixW + s[3];
    if (col >= d.shape[1]) {
      info.kind = ByteKind::MatrixTail;
      info.index = s;
      info.byte = byte;
      return info;
    }
    info.kind = ByteKind::Element;
    info.index = {s[0], col, 0, 0};
    info.byte = byte;
    return info;
  }
  int64_t lane = byte / logicalBytes;
  int64_t n = s[0] * modeLanes(d.mode) + lane;
  if (n >= d.shape[0]) {
    info.kind = ByteKind::Dummy;
    info.index = s;
    info.byte = byte;
    return info;
  }
  info.kind = ByteKind::Element;
  info.index = {n, s[1], s[2], s[3]};
  info.byte = byte % logicalBytes;
  return info;
}

//===----------------------------------------------------------------------===//
// Usage and waste
//===----------------------------------------------------------------------===//

NpuUsage LocalTensor::usageOn(int64_t npu) const {
  NpuUsage u;
  u.npu = npu;
  if (!touchesNpu(npu))
    return u;
  int64_t x = cfg.npus(), j = floorMod(npu - origin.npu, x);
  u.channels = (stored[1] - 1 - j) / x + 1;
  u.reserved = reserved;
  int64_t plane = stored[2] * stored[3];
  int64_t payload = u.channels * stored[0] * plane * packedBytes;
  if (d.layout == NpuLayout::Matrix) {
    int64_t last = stored[1] - 1;
    bool holdsLast = floorMod(last - j, x) == 0;
    int64_t tailCols = stored[1] * d.matrixW - d.shape[1];
    u.matrixTail = holdsLast ? stored[0] * tailCols * logicalBytes : 0;
    u.data = payload - u.matrixTail;
  } else {
    int64_t perChannel = d.shape[0] * plane * logicalBytes;
    u.data = u.channels * perChannel;
    u.dummy = payload - u.data;
  }
  if (d.layout == NpuLayout::Strided) {
    u.gaps = std::max<int64_t>(0, reserved - payload);
  } else {
    u.featurePadding =
        u.channels * stored[0] * (stride[1] - plane) * packedBytes;
    u.emptySlots = (cpn - u.channels) * stored[0] * stride[1] * packedBytes;
  }
  return u;
}

NpuUsage LocalTensor::totalUsage() const {
  NpuUsage total;
  total.npu = -1;
  for (int64_t npu : npus()) {
    NpuUsage u = usageOn(npu);
    total.channels += u.channels;
    total.reserved += u.reserved;
    total.data += u.data;
    total.dummy += u.dummy;
    total.matrixTail += u.matrixTail;
    total.featurePadding += u.featurePadding;
    total.emptySlots += u.emptySlots;
    total.gaps += u.gaps;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

Status LocalTensor::checkAlignment() const {
  int64_t unit = requiredAlignment();
  if (origin.offset % unit == 0)
    return {};
  int64_t below = origin.offset / unit * unit;
  std::string layout(layoutName(d.layout));
  return Error("address " + std::to_string(d.address) + " (npu " +
               std::to_string(origin.npu) + " offset " +
               std::to_string(origin.offset) + ") is not aligned for the " +
               layout + " layout: the offset must be a multiple of " +
               std::to_string(unit) + " bytes, the nearest are " +
               std::to_string(below) + " and " + std::to_string(below + unit));
}

Status LocalTensor::checkFits() const {
  int64_t end = origin.offset + reserved;
  if (end <= cfg.bytesPerNpu())
    return {};
  return Error("tensor needs " + std::to_string(reserved) +
               " bytes per npu from offset " + std::to_string(origin.offset) +
               ", " + std::to_string(end - cfg.bytesPerNpu()) +
               " bytes past the end of the " +
               std::to_string(cfg.bytesPerNpu()) +
               "-byte local memory of npu " + std::to_string(origin.npu));
}

Status LocalTensor::checkOverlap(const LocalTensor &other,
                                 std::string_view thisName,
                                 std::string_view otherName) const {
  int64_t lo = std::max(origin.offset, other.origin.offset);
  int64_t hi =
      std::min(origin.offset + reserved, other.origin.offset + other.reserved);
  if (lo >= hi)
    return {};
  for (int64_t npu : npus())
    if (other.touchesNpu(npu))
      return Error(std::string(thisName) + " overlaps " +
                   std::string(otherName) + " on npu " + std::to_string(npu) +
                   ": both use bytes " + std::to_string(lo) + ".." +
                   std::to_string(hi - 1));
  return {};
}

Status LocalTensor::checkNoAliasing() const {
  if (d.layout != NpuLayout::Strided ||
      stridesNest({stored[0], cpn, stored[2], stored[3]}, stride))
    return {};
  int64_t span = reserved / packedBytes;
  int64_t perNpu = cpn * stored[0] * stored[2] * stored[3];
  if (span > kMaxBruteSpan || perNpu > kMaxBruteElements)
    return Error("cannot show that strides " + dimsText(stride) +
                 " keep elements apart, expected each used stride to be at "
                 "least the extent of the smaller ones");
  std::vector<int32_t> owner;
  for (int64_t npu : npus()) {
    owner.assign(span, -1);
    int64_t j = floorMod(npu - origin.npu, cfg.npus());
    for (int64_t c = j; c < stored[1]; c += cfg.npus()) {
      int64_t slot = (origin.npu + c) / cfg.npus();
      for (int64_t n = 0; n < stored[0]; ++n)
        for (int64_t h = 0; h < stored[2]; ++h)
          for (int64_t w = 0; w < stored[3]; ++w) {
            int64_t off = n * stride[0] + slot * stride[1] + h * stride[2] +
                          w * stride[3];
            int32_t id = static_cast<int32_t>(
                ((n * stored[1] + c) * stored[2] + h) * stored[3] + w);
            if (owner[off] < 0) {
              owner[off] = id;
              continue;
            }
            Dims4 first = unflatten(owner[off], stored);
            return Error("strides " + dimsText(stride) +
                         " put stored "
                         "elements " +
                         dimsText(first) + " and " + dimsText({n, c, h, w}) +
                         " at the same place, npu " + std::to_string(npu) +
                         " byte " +
                         std::to_string(origin.offset + off * packedBytes));
          }
    }
  }
  return {};
}

Status checkStridesInjective(const Dims4 &sizes, const Dims4 &strides) {
  if (stridesNest(sizes, strides))
    return {};
  std::optional<int64_t> span = stridedSpan(sizes, strides);
  int64_t count = 1;
  for (int64_t s : sizes)
    count = std::min(count * std::min(s, kMaxBruteElements + 1),
                     kMaxBruteElements + 1);
  if (!span || *span > kMaxBruteSpan || count > kMaxBruteElements)
    return Error("cannot show that strides " + dimsText(strides) +
                 " keep elements apart, expected each used stride to be at "
                 "least the extent of the smaller ones");
  std::vector<int32_t> owner(*span, -1);
  for (int64_t id = 0; id < count; ++id) {
    Dims4 i = unflatten(id, sizes);
    int64_t off = i[0] * strides[0] + i[1] * strides[1] + i[2] * strides[2] +
                  i[3] * strides[3];
    if (owner[off] >= 0) {
      Dims4 first = unflatten(owner[off], sizes);
      return Error("strides " + dimsText(strides) + " put elements " +
                   dimsText(first) + " and " + dimsText(i) +
                   " at the same offset " + std::to_string(off));
    }
    owner[off] = static_cast<int32_t>(id);
  }
  return {};
}

} // namespace tessel
