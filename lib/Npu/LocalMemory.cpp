//===- LocalMemory.cpp - A simulator of the NPUs' local memories ----------===//
#include "tessel/Npu/LocalMemory.h"

#include "tessel/Relayout/Relayout.h"
#include "tessel/Support/MathExtras.h"

#include <cstring>

namespace tessel {
namespace {

/// A run of logical elements along one dim that the local layout keeps at a
/// constant byte step: along w for tensors, along the columns of one channel
/// for a matrix.
struct Run {
  Dims4 start;       ///< logical index of the first element
  int runDim;        ///< the logical dim the run walks
  int64_t count;     ///< elements in the run
  int64_t npu;       ///< where the first element lives
  int64_t offset;    ///< its byte offset in the NPU
  int64_t stepBytes; ///< local bytes between consecutive elements
};

/// Calls fn(run) for every run of the tensor's logical elements.
template <typename Fn> void forEachRun(const LocalTensor &t, Fn fn) {
  const NpuConfig &config = t.config();
  const Dims4 &shape = t.shape(), &stored = t.storageShape();
  const Dims4 &s = t.strides();
  int64_t pb = t.storedBytes(), eb = t.elementBytes();
  NpuPlace origin = t.start();
  if (t.layout() == NpuLayout::Matrix) {
    int64_t w = stored[3];
    for (int64_t n = 0; n < shape[0]; ++n)
      for (int64_t c = 0; c < stored[1]; ++c) {
        ChannelSlot cs = config.channelSlot(origin.npu, c);
        int64_t off = origin.offset + pb * (n * s[0] + cs.slot * s[1]);
        fn(Run{{n, c * w, 0, 0},
               1,
               std::min(w, shape[1] - c * w),
               cs.npu,
               off,
               pb * s[3]});
      }
    return;
  }
  int64_t lanes = modeLanes(t.mode());
  for (int64_t n = 0; n < shape[0]; ++n)
    for (int64_t c = 0; c < shape[1]; ++c) {
      ChannelSlot cs = config.channelSlot(origin.npu, c);
      int64_t base = origin.offset + pb * (n / lanes * s[0] + cs.slot * s[1]) +
                     n % lanes * eb;
      for (int64_t h = 0; h < shape[2]; ++h)
        fn(Run{{n, c, h, 0},
               3,
               shape[3],
               cs.npu,
               base + pb * h * s[2],
               pb * s[3]});
    }
}

/// Byte offset in system memory of logical index i.
int64_t systemOffset(const Dims4 &i, const Dims4 &strides, int64_t eb) {
  return eb * (i[0] * strides[0] + i[1] * strides[1] + i[2] * strides[2] +
               i[3] * strides[3]);
}

/// Copies `count` elements of `EB` bytes between strided places; a constant
/// size lets the compiler turn each memcpy into one load and store.
template <int64_t EB>
void copyElements(uint8_t *dst, int64_t dstStep, const uint8_t *src,
                  int64_t srcStep, int64_t count) {
  for (int64_t k = 0; k < count; ++k)
    std::memcpy(dst + k * dstStep, src + k * srcStep, EB);
}

void copyStrided(uint8_t *dst, int64_t dstStep, const uint8_t *src,
                 int64_t srcStep, int64_t count, int64_t eb) {
  if (dstStep == eb && srcStep == eb) {
    std::memcpy(dst, src, count * eb);
    return;
  }
  switch (eb) {
  case 1:
    return copyElements<1>(dst, dstStep, src, srcStep, count);
  case 2:
    return copyElements<2>(dst, dstStep, src, srcStep, count);
  case 4:
    return copyElements<4>(dst, dstStep, src, srcStep, count);
  case 8:
    return copyElements<8>(dst, dstStep, src, srcStep, count);
  default:
    for (int64_t k = 0; k < count; ++k)
      std::memcpy(dst + k * dstStep, src + k * srcStep, eb);
  }
}

/// Copies one run from system bytes into an NPU's bytes.
void copyRunToLocal(const Run &run, uint8_t *npuBase, const uint8_t *system,
                    const Dims4 &strides, int64_t eb) {
  copyStrided(npuBase + run.offset, run.stepBytes,
              system + systemOffset(run.start, strides, eb),
              eb * strides[run.runDim], run.count, eb);
}

/// Copies one run from an NPU's bytes into system bytes.
void copyRunToSystem(const Run &run, const uint8_t *npuBase, uint8_t *system,
                     const Dims4 &strides, int64_t eb) {
  copyStrided(system + systemOffset(run.start, strides, eb),
              eb * strides[run.runDim], npuBase + run.offset, run.stepBytes,
              run.count, eb);
}

Status checkConfig(const LocalTensor &tensor, const NpuConfig &config) {
  if (tensor.config() == config)
    return {};
  return Error("tensor is described for " + tensor.config().toString() +
               ", not for this memory (" + config.toString() + ")");
}

/// Zeros the dummy lanes of the last packed N group.
int64_t zeroDummies(const LocalTensor &t, std::vector<uint8_t> &memory) {
  int64_t lanes = modeLanes(t.mode());
  int64_t n = t.shape()[0];
  if (lanes == 1 || n % lanes == 0)
    return 0;
  const Dims4 &stored = t.storageShape(), &s = t.strides();
  int64_t pb = t.storedBytes(), eb = t.elementBytes();
  int64_t first = n % lanes, bytes = (lanes - first) * eb, written = 0;
  NpuPlace origin = t.start();
  int64_t memBytes = t.config().bytesPerNpu();
  for (int64_t c = 0; c < stored[1]; ++c) {
    ChannelSlot cs = t.config().channelSlot(origin.npu, c);
    for (int64_t h = 0; h < stored[2]; ++h)
      for (int64_t w = 0; w < stored[3]; ++w) {
        int64_t off = origin.offset +
                      pb * ((stored[0] - 1) * s[0] + cs.slot * s[1] + h * s[2] +
                            w * s[3]) +
                      first * eb;
        std::memset(memory.data() + cs.npu * memBytes + off, 0, bytes);
        written += bytes;
      }
  }
  return written;
}

/// The packed modes (4N int8, 2N int16) with w contiguous on both sides:
/// `lanes` batch rows interleave into consecutive words, moved through the
/// relayout library's interleave kernels of the best instruction set level
/// the CPU has (RowInterleaver; SSE2 unpacks, Highway's StoreInterleaved4/2
/// and LoadInterleaved4/2 at AVX2 and AVX-512) instead of one element at a
/// time 4 bytes apart. Calls fn(interleaver, local, rows, count) for each
/// (group, channel) h x w plane where it is contiguous on both sides
/// (compact rows in the NPU, continuous system buffer), else for each row:
/// `local` is the byte offset of its words in the memory, rows[q] the byte
/// offset of batch row q in the system buffer, `count` the elements per
/// row. Returns the n of the whole groups covered (0 where the tensor is
/// not such a packed tensor; the rest take the general runs).
template <typename Fn>
Expected<int64_t> forEachPackedRow(const LocalTensor &t,
                                   const Dims4 &systemStrides, Fn fn) {
  int64_t lanes = modeLanes(t.mode()), eb = t.elementBytes();
  const Dims4 &shape = t.shape(), &s = t.strides();
  int64_t pb = t.storedBytes();
  if (t.layout() == NpuLayout::Matrix || lanes * eb != 4 || pb != 4 ||
      s[3] != 1 || systemStrides[3] != 1 || !(lanes == 4 || lanes == 2))
    return 0;
  Expected<RowInterleaver> interleaver = RowInterleaver::create();
  if (!interleaver)
    return interleaver.takeError();
  const NpuConfig &config = t.config();
  NpuPlace origin = t.start();
  int64_t memBytes = config.bytesPerNpu(), w = shape[3];
  int64_t groups = shape[0] / lanes;
  bool planes = s[2] == w && systemStrides[2] == w;
  int64_t rows = planes ? 1 : shape[2], count = planes ? shape[2] * w : w;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < shape[1]; ++c) {
      ChannelSlot cs = config.channelSlot(origin.npu, c);
      for (int64_t h = 0; h < rows; ++h) {
        int64_t local = cs.npu * memBytes + origin.offset +
                        pb * (g * s[0] + cs.slot * s[1] + h * s[2]);
        int64_t row[4];
        for (int64_t q = 0; q < lanes; ++q)
          row[q] = eb * ((g * lanes + q) * systemStrides[0] +
                         c * systemStrides[1] + h * systemStrides[2]);
        fn(*interleaver, local, row, count);
      }
    }
  return groups * lanes;
}

} // namespace

std::optional<int64_t> systemBufferBytes(const Dims4 &shape,
                                         const Dims4 &strides,
                                         int64_t elementBytes) {
  int64_t span = 1;
  for (int d = 0; d < 4; ++d) {
    if (shape[d] <= 1)
      continue;
    std::optional<int64_t> term = checkedMul(shape[d] - 1, strides[d]);
    std::optional<int64_t> sum = term ? checkedAdd(span, *term) : std::nullopt;
    if (!sum)
      return std::nullopt;
    span = *sum;
  }
  return checkedMul(span, elementBytes);
}

LocalMemory::LocalMemory(const NpuConfig &config)
    : cfg(config), memory(config.totalBytes(), 0) {}

Expected<LocalMemory> LocalMemory::create(const NpuConfig &config) {
  if (config.totalBytes() > kMaxBytes)
    return Error("simulating " + formatBytes(config.totalBytes()) +
                 " of local memory is more than the " + formatBytes(kMaxBytes) +
                 " tessel allows");
  return LocalMemory(config);
}

void LocalMemory::fill(uint8_t value) {
  std::memset(memory.data(), value, memory.size());
}

Expected<int64_t> LocalMemory::place(const LocalTensor &tensor,
                                     std::string name) {
  if (Status e = checkConfig(tensor, cfg); !e)
    return e.takeError();
  if (name.empty())
    name = "tensor " + std::to_string(tensors.size() + 1);
  if (Status e = tensor.checkAlignment(); !e)
    return Error(name + ": " + e.error().message);
  if (Status e = tensor.checkFits(); !e)
    return Error(name + ": " + e.error().message);
  if (Status e = tensor.checkNoAliasing(); !e)
    return Error(name + ": " + e.error().message);
  for (const Placed &p : tensors)
    if (Status e = tensor.checkOverlap(p.tensor, name, p.name); !e)
      return e.takeError();
  tensors.push_back({std::move(name), tensor});
  return static_cast<int64_t>(tensors.size() - 1);
}

Status LocalMemory::checkSystem(const LocalTensor &tensor, int64_t bufferBytes,
                                const Dims4 &strides, bool forWriting) const {
  for (int d = 0; d < 4; ++d)
    if (strides[d] < 0)
      return Error("system stride " + std::to_string(strides[d]) +
                   " is negative, expected strides >= 0");
  std::optional<int64_t> need =
      systemBufferBytes(tensor.shape(), strides, tensor.elementBytes());
  if (!need || *need > bufferBytes)
    return Error("system buffer of " + std::to_string(bufferBytes) +
                 " bytes is too small for the strides, expected at least " +
                 (need ? std::to_string(*need) : std::string("2^63")) +
                 " bytes");
  if (forWriting)
    if (Status e = checkStridesInjective(tensor.shape(), strides); !e)
      return Error("system destination: " + e.error().message);
  return {};
}

Expected<int64_t> LocalMemory::store(const LocalTensor &tensor,
                                     const uint8_t *src, int64_t srcBytes,
                                     const Dims4 &srcStrides,
                                     std::string name) {
  if (Status e = checkConfig(tensor, cfg); !e)
    return e.takeError();
  if (Status e =
          checkSystem(tensor, srcBytes, srcStrides, /*forWriting=*/false);
      !e)
    return e.takeError();
  bool already = false;
  for (const Placed &p : tensors)
    already |= p.tensor.desc() == tensor.desc();
  if (!already) {
    Expected<int64_t> placedAt = place(tensor, std::move(name));
    if (!placedAt)
      return placedAt.takeError();
  }
  int64_t eb = tensor.elementBytes(), memBytes = cfg.bytesPerNpu();
  const Dims4 &shape = tensor.shape();
  int64_t lanes = modeLanes(tensor.mode());
  Expected<int64_t> packedGroups = forEachPackedRow(
      tensor, srcStrides,
      [&](const RowInterleaver &interleaver, int64_t local, const int64_t *rows,
          int64_t count) {
        const uint8_t *row[4];
        for (int64_t q = 0; q < lanes; ++q)
          row[q] = src + rows[q];
        interleaver.interleave(memory.data() + local, row, count, eb, lanes);
      });
  if (!packedGroups)
    return packedGroups.takeError();
  int64_t packed = *packedGroups;
  int64_t written = packed * shape[1] * shape[2] * shape[3] * eb;
  if (packed < shape[0])
    forEachRun(tensor, [&](const Run &run) {
      if (run.start[0] < packed && tensor.layout() != NpuLayout::Matrix)
        return;
      copyRunToLocal(run, memory.data() + run.npu * memBytes, src, srcStrides,
                     eb);
      written += run.count * eb;
    });
  return written + zeroDummies(tensor, memory);
}

Expected<int64_t> LocalMemory::load(const LocalTensor &tensor, uint8_t *dst,
                                    int64_t dstBytes,
                                    const Dims4 &dstStrides) const {
  if (Status e = checkConfig(tensor, cfg); !e)
    return e.takeError();
  if (Status e = tensor.checkAlignment(); !e)
    return e.takeError();
  if (Status e = tensor.checkFits(); !e)
    return e.takeError();
  if (Status e = checkSystem(tensor, dstBytes, dstStrides, /*forWriting=*/true);
      !e)
    return e.takeError();
  int64_t eb = tensor.elementBytes(), memBytes = cfg.bytesPerNpu();
  const Dims4 &shape = tensor.shape();
  int64_t lanes = modeLanes(tensor.mode());
  Expected<int64_t> packedGroups = forEachPackedRow(
      tensor, dstStrides,
      [&](const RowInterleaver &interleaver, int64_t local, const int64_t *rows,
          int64_t count) {
        uint8_t *row[4];
        for (int64_t q = 0; q < lanes; ++q)
          row[q] = dst + rows[q];
        interleaver.deinterleave(memory.data() + local, row, count, eb, lanes);
      });
  if (!packedGroups)
    return packedGroups.takeError();
  int64_t packed = *packedGroups;
  int64_t written = packed * shape[1] * shape[2] * shape[3] * eb;
  forEachRun(tensor, [&](const Run &run) {
    if (run.start[0] < packed && tensor.layout() != NpuLayout::Matrix)
      return;
    copyRunToSystem(run, memory.data() + run.npu * memBytes, dst, dstStrides,
                    eb);
    written += run.count * eb;
  });
  return written;
}

} // namespace tessel
