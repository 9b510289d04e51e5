//===- NpuAdvisor.cpp - Choosing matrix W and checking that tensors fit ---===//
#include "tessel/Npu/NpuAdvisor.h"

#include "tessel/Support/MathExtras.h"

#include <algorithm>
#include <set>

namespace tessel {
namespace {

constexpr int64_t kMaxMatrixCols = int64_t(1) << 40;

std::string range(int64_t lo, int64_t hi) {
  return lo == hi ? std::to_string(lo)
                  : std::to_string(lo) + ".." + std::to_string(hi);
}

/// "npu 0", "npus 0, 1", "npus 0..3", "npus 3, 0".
std::string npuList(const NpuConfig &config, int64_t start, int64_t count) {
  if (count == 1)
    return "npu " + std::to_string(start);
  if (start + count <= config.npus() && count > 2)
    return "npus " + std::to_string(start) + ".." +
           std::to_string(start + count - 1);
  std::string out = "npus ";
  for (int64_t i = 0; i < count; ++i)
    out += (i ? ", " : "") + std::to_string((start + i) % config.npus());
  return out;
}

/// Why `other` needs more bytes on the fullest NPU than `best`.
std::string whyWorse(const MatrixChoice &other, const MatrixChoice &best,
                     const NpuConfig &config, int64_t startNpu,
                     PrimitiveType type) {
  std::string out = "W = " + std::to_string(other.w) + " needs " +
                    std::to_string(other.fullestNpuBytes) + " bytes: ";
  if (other.channelsPerNpu > best.channelsPerNpu)
    return out + "its " + std::to_string(other.channels) +
           " channels wrap past the " + std::to_string(config.npus()) +
           " npus (from npu " + std::to_string(startNpu) +
           "), so an npu holds " + std::to_string(other.channelsPerNpu) +
           " slots of each row";
  int64_t units = other.slotElements * byteWidth(type) / 128;
  return out + "a slot of " + std::to_string(other.w) + " " +
         npuTypeName(type) + " rounds up to " +
         std::to_string(other.slotElements) + " elements (" +
         std::to_string(units) + " 128-byte units)";
}

} // namespace

MatrixChoice evaluateMatrixW(const NpuConfig &config, int64_t rows,
                             int64_t cols, PrimitiveType type, int64_t w,
                             int64_t startNpu) {
  int64_t eb = byteWidth(type);
  int64_t eu = std::max<int64_t>(1, 128 / eb);
  MatrixChoice c;
  c.w = w;
  c.channels = ceilDiv(cols, w);
  c.channelsPerNpu = config.channelsPerNpu(startNpu, c.channels);
  c.npusUsed = std::min(c.channels, config.npus());
  c.slotElements = ceilDiv(w, eu) * eu;
  c.rowBytes = c.channelsPerNpu * c.slotElements * eb;
  c.fullestNpuBytes = rows * c.rowBytes;
  c.totalBytes = c.fullestNpuBytes * c.npusUsed;
  c.wastedBytes = c.totalBytes - rows * cols * eb;
  return c;
}

static bool better(const MatrixChoice &a, const MatrixChoice &b) {
  if (a.fullestNpuBytes != b.fullestNpuBytes)
    return a.fullestNpuBytes < b.fullestNpuBytes;
  if (a.channels != b.channels)
    return a.channels < b.channels;
  return a.w < b.w;
}

/// Adds the W values tying with the best inside the group of W that share a
/// channel count: [lo, hi] with lo the cheapest; bytes grow with W there.
static void addTies(MatrixAdvice &advice, const MatrixChoice &lo, int64_t hi) {
  int64_t top = std::min(hi, lo.slotElements);
  if (advice.tieCount == 0) {
    advice.tieLow = lo.w;
    advice.tieHigh = top;
  } else {
    advice.tieLow = std::min(advice.tieLow, lo.w);
    advice.tieHigh = std::max(advice.tieHigh, top);
  }
  advice.tieCount += top - lo.w + 1;
}

/// Fills advice.reasons: the choice, its ties, and why the W just outside
/// the ties cost more.
static void explainMatrixChoice(MatrixAdvice &advice, const NpuConfig &config,
                                int64_t rows, int64_t cols, PrimitiveType type,
                                int64_t startNpu) {
  const MatrixChoice &b = advice.best;
  int64_t eb = byteWidth(type);
  advice.reasons.push_back(
      "W = " + std::to_string(b.w) + ": " + std::to_string(b.channels) +
      (b.channels == 1 ? " channel" : " channels") + " on " +
      npuList(config, startNpu, b.npusUsed) + ", " +
      std::to_string(b.channelsPerNpu) + " per npu; a row takes " +
      std::to_string(b.slotElements) + " " + npuTypeName(type) + " (" +
      std::to_string(b.slotElements * eb) + " bytes) per slot, " +
      std::to_string(b.fullestNpuBytes) + " bytes on the fullest npu");
  bool contiguous = advice.tieCount == advice.tieHigh - advice.tieLow + 1;
  if (advice.tieCount > 1)
    advice.reasons.push_back(
        (contiguous ? "every W in " + range(advice.tieLow, advice.tieHigh)
                    : std::to_string(advice.tieCount) + " values of W") +
        " needs those " + std::to_string(b.fullestNpuBytes) + " bytes; W = " +
        std::to_string(b.w) + " is the smallest with the fewest channels (" +
        std::to_string(b.channels) + ")");
  if (!contiguous)
    return;
  if (advice.tieHigh < cols)
    advice.reasons.push_back(whyWorse(
        evaluateMatrixW(config, rows, cols, type, advice.tieHigh + 1, startNpu),
        b, config, startNpu, type));
  if (advice.tieLow > 1)
    advice.reasons.push_back(whyWorse(
        evaluateMatrixW(config, rows, cols, type, advice.tieLow - 1, startNpu),
        b, config, startNpu, type));
}

Expected<MatrixAdvice> adviseMatrix(const NpuConfig &config, int64_t rows,
                                    int64_t cols, PrimitiveType type,
                                    int64_t startNpu) {
  int64_t eb = byteWidth(type);
  std::optional<int64_t> bytes = checkedMul(rows, cols);
  if (bytes)
    bytes = checkedMul(*bytes, 2 * config.npus() * std::max<int64_t>(eb, 128));
  if (rows < 1 || cols < 1 || cols > kMaxMatrixCols || !bytes)
    return Error("matrix " + std::to_string(rows) + " x " +
                 std::to_string(cols) +
                 " is outside what the advisor "
                 "handles, expected 1 <= rows, 1 <= cols <= 2^40 and fewer "
                 "than 2^63 bytes");
  if (startNpu < 0 || startNpu >= config.npus())
    return Error("start npu " + std::to_string(startNpu) + " is not 0.." +
                 std::to_string(config.npus() - 1));
  MatrixAdvice advice;
  // The distinct channel counts: W = ceil(M / C) is the smallest W with C
  // channels; the next smaller W starts at C' = ceil(M / (W - 1)).
  std::vector<int64_t> groupHigh;
  for (int64_t c = 1, prevW = cols + 1; c <= cols;) {
    int64_t w = ceilDiv(cols, c);
    advice.candidates.push_back(
        evaluateMatrixW(config, rows, cols, type, w, startNpu));
    groupHigh.push_back(prevW - 1);
    prevW = w;
    if (w == 1)
      break;
    c = ceilDiv(cols, w - 1);
  }
  advice.best = advice.candidates.front();
  for (const MatrixChoice &c : advice.candidates)
    if (better(c, advice.best))
      advice.best = c;
  for (size_t i = 0; i < advice.candidates.size(); ++i)
    if (advice.candidates[i].fullestNpuBytes == advice.best.fullestNpuBytes)
      addTies(advice, advice.candidates[i], groupHigh[i]);
  explainMatrixChoice(advice, config, rows, cols, type, startNpu);
  return advice;
}

//===----------------------------------------------------------------------===//
// Cheaper choices and the fit report
//===----------------------------------------------------------------------===//

/// The same tensor with another layout, address or W, if it can be built.
static std::optional<LocalTensor> variant(const LocalTensor &t,
                                          NpuLayout layout, int64_t address,
                                          int64_t w = 0) {
  TensorDesc d = t.desc();
  d.layout = layout;
  d.address = address;
  if (w)
    d.matrixW = w;
  Expected<LocalTensor> v = LocalTensor::get(t.config(), d);
  if (!v)
    return std::nullopt;
  return std::move(*v);
}

static std::string saving(int64_t now, int64_t then) {
  return std::to_string(then) + " bytes per npu instead of " +
         std::to_string(now);
}

std::vector<std::string> suggestCheaper(const LocalTensor &t) {
  std::vector<std::string> out;
  const NpuConfig &config = t.config();
  int64_t channels = t.storageShape()[1], x = config.npus();
  int64_t minCpn = ceilDiv(channels, x);
  NpuPlace at = t.start();
  if (t.channelsPerNpu() > minCpn) {
    int64_t lastGood = minCpn * x - channels; // start NPUs 0..lastGood
    std::optional<LocalTensor> moved =
        variant(t, t.layout(), at.offset, t.desc().matrixW);
    out.push_back("start at npu " + range(0, lastGood) + " (address " +
                  std::to_string(at.offset) +
                  " for npu 0): " + std::to_string(minCpn) +
                  (minCpn == 1 ? " channel slot" : " channel slots") +
                  " per npu instead of " + std::to_string(t.channelsPerNpu()) +
                  (moved ? ", " + saving(t.bytesPerNpu(), moved->bytesPerNpu())
                         : std::string()));
  }
  bool aligned =
      t.layout() == NpuLayout::Aligned || t.layout() == NpuLayout::ChipAligned;
  if (aligned) {
    std::optional<LocalTensor> compact =
        variant(t, NpuLayout::Compact, t.desc().address);
    if (compact && compact->bytesPerNpu() < t.bytesPerNpu())
      out.push_back("compact layout (if the operation accepts it): " +
                    saving(t.bytesPerNpu(), compact->bytesPerNpu()));
  }
  if (t.layout() == NpuLayout::Aligned && config.alignBytes() < 128) {
    std::optional<LocalTensor> eu =
        variant(t, NpuLayout::ChipAligned, t.desc().address);
    if (eu && eu->bytesPerNpu() < t.bytesPerNpu())
      out.push_back(
          "eu layout (the chip's " + std::to_string(config.alignBytes()) +
          "-byte unit): " + saving(t.bytesPerNpu(), eu->bytesPerNpu()));
  }
  if (t.layout() == NpuLayout::Matrix) {
    Expected<MatrixAdvice> advice =
        adviseMatrix(config, t.shape()[0], t.shape()[1], t.desc().type, at.npu);
    if (advice && advice->best.w != t.desc().matrixW &&
        advice->best.fullestNpuBytes < t.bytesPerNpu())
      out.push_back("matrix W = " + std::to_string(advice->best.w) + ": " +
                    saving(t.bytesPerNpu(), advice->best.fullestNpuBytes));
  }
  return out;
}

namespace {

/// First-fit: the lowest offset, then the start NPU with the fewest channel
/// slots per NPU, where the tensor fits and overlaps nothing placed.
std::optional<LocalTensor> placeFirstFit(const TensorDesc &desc,
                                         const NpuConfig &config,
                                         const std::vector<FitEntry> &placed) {
  Expected<LocalTensor> probe = LocalTensor::get(config, desc);
  if (!probe)
    return std::nullopt;
  int64_t unit = probe->requiredAlignment();
  std::vector<int64_t> offsets{0};
  for (const FitEntry &e : placed)
    if (std::optional<int64_t> end = checkedRoundUp(
            e.tensor.start().offset + e.tensor.bytesPerNpu(), unit))
      if (*end < config.bytesPerNpu())
        offsets.push_back(*end);
  std::sort(offsets.begin(), offsets.end());
  std::vector<int64_t> starts(config.npus());
  for (int64_t q = 0; q < config.npus(); ++q)
    starts[q] = q;
  int64_t channels = probe->storageShape()[1];
  // std::sort with the NPU as tie-break: clang warns on libstdc++'s
  // stable_sort (get_temporary_buffer is deprecated).
  std::sort(starts.begin(), starts.end(), [&](int64_t a, int64_t b) {
    int64_t ca = config.channelsPerNpu(a, channels);
    int64_t cb = config.channelsPerNpu(b, channels);
    return ca != cb ? ca < cb : a < b;
  });
  for (int64_t offset : offsets)
    for (int64_t q : starts) {
      TensorDesc d = desc;
      d.address = config.address({q, offset});
      Expected<LocalTensor> t = LocalTensor::get(config, d);
      if (!t || !t->checkFits())
        continue;
      bool clash = false;
      for (const FitEntry &e : placed)
        clash = clash || !t->checkOverlap(e.tensor).ok();
      if (!clash)
        return std::move(*t);
    }
  return std::nullopt;
}

/// Fills the per-NPU totals and the overlap problems.
void tally(const NpuConfig &config, FitReport &report) {
  int64_t x = config.npus();
  report.highWater.assign(x, 0);
  report.reserved.assign(x, 0);
  report.data.assign(x, 0);
  for (size_t i = 0; i < report.entries.size(); ++i) {
    const LocalTensor &t = report.entries[i].tensor;
    for (int64_t npu : t.npus()) {
      NpuUsage u = t.usageOn(npu);
      report.highWater[npu] =
          std::max(report.highWater[npu], t.start().offset + t.bytesPerNpu());
      report.reserved[npu] += u.reserved;
      report.data[npu] += u.data;
    }
    for (size_t j = 0; j < i; ++j)
      if (Status e =
              t.checkOverlap(report.entries[j].tensor, report.entries[i].name,
                             report.entries[j].name);
          !e)
        report.problems.push_back(e.error().message);
  }
}

} // namespace

static std::string entryName(const TensorSpec &spec, size_t index) {
  return spec.name.empty() ? "tensor " + std::to_string(index + 1) : spec.name;
}

/// Builds one entry: W from the advisor when missing, the tensor at its
/// address or first-fit. Returns an error only for a bad description.
static Status addEntry(const NpuConfig &config, const TensorSpec &spec,
                       size_t index, FitReport &report) {
  std::string name = entryName(spec, index);
  TensorSpec s = spec;
  bool autoW = false;
  if (s.desc.layout == NpuLayout::Matrix && s.desc.matrixW == 0) {
    int64_t q = s.hasAddress && s.desc.address >= 0 &&
                        s.desc.address < config.totalBytes()
                    ? s.desc.address / config.bytesPerNpu()
                    : 0;
    Expected<MatrixAdvice> advice =
        adviseMatrix(config, s.desc.shape[0], s.desc.shape[1], s.desc.type, q);
    if (!advice)
      return Error(name + ": " + advice.error().message);
    s.desc.matrixW = advice->best.w;
    autoW = true;
  }
  Expected<LocalTensor> t = LocalTensor::get(config, s.desc);
  if (!t)
    return Error(name + ": " + t.error().message);
  if (!s.hasAddress) {
    std::optional<LocalTensor> placed =
        placeFirstFit(s.desc, config, report.entries);
    if (!placed) {
      report.problems.push_back(name + ": no free place of " +
                                std::to_string(t->bytesPerNpu()) +
                                " bytes on the npus it needs");
      return {};
    }
    s.desc.address = placed->desc().address;
    s.hasAddress = true;
    t = std::move(*placed);
  }
  if (Status e = t->checkAlignment(); !e)
    report.problems.push_back(name + ": " + e.error().message);
  if (Status e = t->checkFits(); !e)
    report.problems.push_back(name + ": " + e.error().message);
  if (Status e = t->checkNoAliasing(); !e)
    report.problems.push_back(name + ": " + e.error().message);
  FitEntry entry{
      name, s, *t, !spec.hasAddress, autoW, t->totalUsage(), suggestCheaper(*t),
      index};
  report.entries.push_back(std::move(entry));
  return {};
}

Expected<FitReport> fitTensors(const NpuConfig &config,
                               const std::vector<TensorSpec> &specs) {
  FitReport report;
  // A report names its tensors: a name given twice would make two rows
  // (and two picture labels) that cannot be told apart.
  std::set<std::string> names;
  for (const TensorSpec &spec : specs)
    if (!spec.name.empty() && !names.insert(spec.name).second)
      return Error("the tensor name '" + spec.name +
                   "' is given twice, expected each name once");
  // Tensors with addresses first, so first-fit works around them.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].hasAddress == (pass == 0))
        if (Status ok = addEntry(config, specs[i], i, report); !ok)
          return ok.takeError();
  std::sort(
      report.entries.begin(), report.entries.end(),
      [](const FitEntry &a, const FitEntry &b) { return a.order < b.order; });
  tally(config, report);
  return report;
}

} // namespace tessel
