//===- NpuReport.cpp - The reports of tessel npu explain and fit ----------===//
#include "tessel/Npu/NpuReport.h"

#include <algorithm>

namespace tessel {

std::string describeDims(const Dims4 &dims, int rank) {
  std::string out = "(";
  for (int i = 0; i < rank; ++i)
    out += (i ? "," : "") + std::to_string(dims[i]);
  return out + ")";
}

std::string describeNpuList(const std::vector<int64_t> &npus) {
  if (npus.size() == 1)
    return "npu " + std::to_string(npus[0]);
  bool run = npus.size() > 2;
  for (size_t i = 1; i < npus.size(); ++i)
    run = run && npus[i] == npus[i - 1] + 1;
  if (run)
    return "npus " + std::to_string(npus.front()) + ".." +
           std::to_string(npus.back());
  std::string out = "npus ";
  for (size_t i = 0; i < npus.size(); ++i)
    out += (i ? ", " : "") + std::to_string(npus[i]);
  return out;
}

std::string describeTensorLine(const LocalTensor &t) {
  const TensorDesc &d = t.desc();
  bool matrix = d.layout == NpuLayout::Matrix;
  std::string out = npuTypeName(d.type) + " " +
                    describeDims(d.shape, matrix ? 2 : 4) + " " +
                    std::string(layoutName(d.layout));
  if (matrix)
    out += " (W " + std::to_string(d.matrixW) + ")";
  if (d.mode != StorageMode::Normal)
    out += " in " + std::string(modeName(d.mode)) + " mode";
  return out + " at address " + std::to_string(d.address);
}

std::string describeField(const std::string &name, const std::string &value) {
  std::string head = name;
  head.resize(std::max<size_t>(12, name.size() + 1), ' ');
  return head + value + "\n";
}

/// Why each stride has its value, or why it is unused.
static std::string strideMeaning(const LocalTensor &t, int d) {
  const Dims4 &s = t.strides(), &st = t.storageShape();
  int64_t x = t.config().npus();
  static const char *kMove[4] = {"n -> n+1", "c -> c+", "h -> h+1", "w -> w+1"};
  std::string move = kMove[d];
  if (d == 1)
    move += std::to_string(x) + " (same npu)";
  if (!t.stridesUsed()[d])
    return d == 1 && st[1] > 1 ? "unused: one channel per npu"
                               : std::string("unused: ") + "NCHW"[d] + " = 1";
  if (t.layout() == NpuLayout::Strided)
    return move + ": given";
  int64_t plane = st[2] * st[3];
  switch (d) {
  case 0:
    return move + ": c stride " + std::to_string(s[1]) + " x " +
           std::to_string(t.channelsPerNpu()) +
           (t.channelsPerNpu() == 1 ? " channel" : " channels") + " per npu";
  case 1:
    if (t.alignElements() == 0)
      return move + ": H * W = " + std::to_string(plane);
    return move + ": ceil(" + std::to_string(plane) + " / " +
           std::to_string(t.alignElements()) + ") * " +
           std::to_string(t.alignElements()) +
           (s[1] > plane
                ? ", " + std::to_string(s[1] - plane) +
                      " padding elements after each " + std::to_string(plane)
                : std::string());
  case 2:
    return move + ": W = " + std::to_string(st[3]);
  default:
    return move;
  }
}

static std::string wasteText(const NpuUsage &u) {
  std::string out;
  auto add = [&](int64_t bytes, const char *what) {
    if (bytes)
      out += (out.empty() ? "" : ", ") + std::to_string(bytes) + " " + what;
  };
  add(u.featurePadding, "alignment padding");
  add(u.emptySlots, "empty slots");
  add(u.dummy, "dummy lanes");
  add(u.matrixTail, "unused matrix columns");
  add(u.gaps, "gaps between strided elements");
  return u.wasted() == 0 ? "none"
                         : std::to_string(u.wasted()) + " bytes: " + out;
}

static std::string storedText(const LocalTensor &t) {
  const TensorDesc &d = t.desc();
  std::string shape = t.storedTypeName() + " " + describeDims(t.storageShape());
  if (d.layout == NpuLayout::Matrix)
    return shape + ": columns [" + std::to_string(d.matrixW) + "k, " +
           std::to_string(d.matrixW) + "k+" + std::to_string(d.matrixW) +
           ") in channel k";
  if (d.mode == StorageMode::N4)
    return shape + ": n 4m..4m+3 packed in one 32-bit element";
  if (d.mode == StorageMode::N2)
    return shape + ": n 2m, 2m+1 packed in one 32-bit element";
  if (d.mode == StorageMode::IC2)
    return shape + ": input channels 2j, 2j+1 packed in one 64-bit element";
  return "";
}

std::string explainLocalTensor(const LocalTensor &t, bool matrixWChosen) {
  const NpuConfig &c = t.config();
  NpuPlace p = t.start();
  NpuUsage u = t.totalUsage();
  const Dims4 &s = t.strides();
  std::string out = describeField("tensor", describeTensorLine(t)) +
                    describeField("chip", c.toString());
  out += describeField("start", "npu " + std::to_string(p.npu) + ", offset " +
                                    std::to_string(p.offset) + "  (" +
                                    std::to_string(t.desc().address) + " = " +
                                    std::to_string(p.npu) + " * " +
                                    std::to_string(c.bytesPerNpu()) + " + " +
                                    std::to_string(p.offset) + ")");
  int64_t channels = t.storageShape()[1];
  out += describeField(
      "channels", std::to_string(channels) + " on " +
                      describeNpuList(t.npus()) + "; " +
                      std::to_string(t.channelsPerNpu()) + " per npu = ceil((" +
                      std::to_string(p.npu) + " + " + std::to_string(channels) +
                      ") / " + std::to_string(c.npus()) + ")");
  if (std::string stored = storedText(t); !stored.empty())
    out += describeField("stored as", stored);
  out += describeField("strides", "n " + std::to_string(s[0]) + "  c " +
                                      std::to_string(s[1]) + "  h " +
                                      std::to_string(s[2]) + "  w " +
                                      std::to_string(s[3]) + "  (in " +
                                      t.storedTypeName() + " elements)");
  for (int d = 0; d < 4; ++d)
    out += describeField(std::string("  ") + "nchw"[d] + " " +
                             std::to_string(s[d]),
                         strideMeaning(t, d));
  out += describeField("per npu",
                       std::to_string(t.bytesPerNpu()) + " bytes, offsets " +
                           std::to_string(p.offset) + ".." +
                           std::to_string(p.offset + t.bytesPerNpu() - 1) +
                           " of " + describeNpuList(t.npus()) + " (" +
                           std::to_string(u.reserved) + " bytes in all)");
  out += describeField("data", std::to_string(u.data) + " bytes (" +
                                   std::to_string(t.logicalElements()) + " " +
                                   npuTypeName(t.desc().type) + ")");
  out += describeField("waste", wasteText(u));
  if (c.banks() > 1)
    out += describeField(
        "banks",
        std::to_string(p.offset / c.bankBytes()) + ".." +
            std::to_string((p.offset + t.bytesPerNpu() - 1) / c.bankBytes()) +
            " (" + formatBytes(c.bankBytes()) + " each)");
  if (matrixWChosen)
    out += describeField("matrix W", std::to_string(t.desc().matrixW) +
                                         ", the matrix advisor's choice "
                                         "(tessel npu fit --matrix explains "
                                         "it)");
  for (const Status &check :
       {t.checkAlignment(), t.checkFits(), t.checkNoAliasing()})
    if (!check)
      out += describeField("problem", check.error().message);
  std::vector<std::string> cheaper = suggestCheaper(t);
  for (size_t i = 0; i < cheaper.size(); ++i)
    out += describeField(i ? "" : "cheaper", cheaper[i]);
  return out;
}

static std::string usageText(const NpuUsage &u) {
  std::string out = "data " + std::to_string(u.data) + ", waste " +
                    std::to_string(u.wasted());
  std::string parts;
  auto add = [&](int64_t bytes, const char *what) {
    if (bytes)
      parts += (parts.empty() ? "" : ", ") + std::to_string(bytes) + " " + what;
  };
  add(u.featurePadding, "padding");
  add(u.emptySlots, "empty slots");
  add(u.dummy, "dummy");
  add(u.matrixTail, "matrix tail");
  add(u.gaps, "gaps");
  return parts.empty() ? out : out + " (" + parts + ")";
}

/// Per-NPU lines, NPUs with equal numbers grouped.
static std::string npuLines(const FitReport &r, const NpuConfig &config) {
  std::string out =
      "per npu (of " + std::to_string(config.bytesPerNpu()) + " bytes):\n";
  int64_t x = config.npus();
  for (int64_t lo = 0; lo < x;) {
    int64_t hi = lo;
    while (hi + 1 < x && r.highWater[hi + 1] == r.highWater[lo] &&
           r.reserved[hi + 1] == r.reserved[lo] && r.data[hi + 1] == r.data[lo])
      ++hi;
    std::string who =
        lo == hi ? "npu " + std::to_string(lo)
                 : "npus " + std::to_string(lo) + ".." + std::to_string(hi);
    out += "  " + who +
           std::string(who.size() < 12 ? 12 - who.size() : 1, ' ') +
           "used up to " + std::to_string(r.highWater[lo]) + ", reserved " +
           std::to_string(r.reserved[lo]) + ", data " +
           std::to_string(r.data[lo]) + "\n";
    lo = hi + 1;
  }
  return out;
}

std::string describeFitReport(const FitReport &r, const NpuConfig &config) {
  std::string out = std::to_string(r.entries.size()) + " tensors on " +
                    config.toString() + "\n";
  for (const FitEntry &e : r.entries) {
    out += "  " + printTensorSpec(e.spec) + "\n      " +
           describeNpuList(e.tensor.npus()) + ", " +
           std::to_string(e.tensor.bytesPerNpu()) + " bytes per npu, " +
           usageText(e.usage) + "\n";
    if (e.autoPlaced || e.autoW)
      out += std::string("      ") +
             (e.autoPlaced && e.autoW ? "placed and W chosen by tessel"
              : e.autoPlaced          ? "placed by tessel"
                                      : "W chosen by tessel") +
             "\n";
    for (const std::string &s : e.suggestions)
      out += "      cheaper: " + s + "\n";
  }
  out += npuLines(r, config);
  if (r.fits())
    return out + "fits\n";
  out += "does not fit:\n";
  for (const std::string &p : r.problems)
    out += "  " + p + "\n";
  return out;
}

std::string describeByte(const LocalTensor &t, const ByteInfo &info,
                         NpuPlace place) {
  bool matrix = t.layout() == NpuLayout::Matrix;
  const Dims4 &i = info.index;
  switch (info.kind) {
  case ByteKind::Element:
    return "element " + describeDims(i, matrix ? 2 : 4) + ", byte " +
           std::to_string(info.byte) + " of " +
           std::to_string(t.elementBytes());
  case ByteKind::Dummy:
    return "dummy lane " + std::to_string(info.byte / t.elementBytes()) +
           " of " + t.storedTypeName() + " element " + describeDims(i) +
           " (written as zero)";
  case ByteKind::MatrixTail:
    return "unused column " + std::to_string(i[1] * t.desc().matrixW + i[3]) +
           " of row " + std::to_string(i[0]) + " (the matrix has " +
           std::to_string(t.shape()[1]) + " columns)";
  case ByteKind::FeaturePadding:
    return "alignment padding after channel (" + std::to_string(i[0]) + "," +
           std::to_string(i[1]) + "), byte " + std::to_string(info.byte) +
           " of the padding";
  case ByteKind::EmptySlot:
    return "empty slot " + std::to_string(info.slot) + " of n " +
           std::to_string(i[0]) + " on npu " + std::to_string(place.npu) +
           " (no channel of this tensor)";
  case ByteKind::Gap:
    return "a gap between strided elements";
  case ByteKind::Outside:
    break;
  }
  if (!t.touchesNpu(place.npu))
    return "not part of the tensor: it has no channel on npu " +
           std::to_string(place.npu);
  return "not part of the tensor: it uses offsets " +
         std::to_string(t.start().offset) + ".." +
         std::to_string(t.start().offset + t.bytesPerNpu() - 1);
}

Expected<Dims4> checkTensorIndex(const LocalTensor &t,
                                 const std::vector<int64_t> &values,
                                 const std::string &text) {
  bool matrix = t.layout() == NpuLayout::Matrix;
  int rank = matrix ? 2 : 4;
  if (static_cast<int>(values.size()) != rank)
    return Error("index " + text + " has " + std::to_string(values.size()) +
                 " entries, expected " + std::to_string(rank));
  Dims4 index{0, 0, 0, 0};
  for (int d = 0; d < rank; ++d) {
    if (values[d] < 0 || values[d] >= t.shape()[d])
      return Error("index " + std::to_string(values[d]) + " of dim " +
                   std::to_string(d) + " is out of range, expected 0.." +
                   std::to_string(t.shape()[d] - 1));
    index[d] = values[d];
  }
  return index;
}

std::string describePictureTitle(const LocalTensor &t) {
  return describeTensorLine(t) + " on " + std::to_string(t.config().npus()) +
         " npus x " + formatBytes(t.config().bytesPerNpu());
}

std::vector<std::string> localTensorProblems(const LocalTensor &t) {
  std::vector<std::string> out;
  for (const Status &check :
       {t.checkAlignment(), t.checkFits(), t.checkNoAliasing()})
    if (!check)
      out.push_back(check.error().message);
  return out;
}

Status chooseMatrixW(const NpuConfig &config, TensorDesc &d) {
  if (d.layout != NpuLayout::Matrix || d.matrixW > 0)
    return {};
  Expected<NpuPlace> at = config.split(d.address);
  Expected<MatrixAdvice> advice =
      adviseMatrix(config, d.shape[0], d.shape[1], d.type, at ? at->npu : 0);
  if (!advice)
    return advice.takeError();
  d.matrixW = advice->best.w;
  return {};
}

Expected<MatrixAdviceTable> adviseMatrixTable(const NpuConfig &config,
                                              int64_t rows, int64_t cols,
                                              PrimitiveType type,
                                              int64_t startNpu,
                                              const std::vector<int64_t> &ws) {
  Expected<MatrixAdvice> advice =
      adviseMatrix(config, rows, cols, type, startNpu);
  if (!advice)
    return advice.takeError();
  MatrixAdviceTable table;
  table.rows = rows;
  table.cols = cols;
  table.type = type;
  table.startNpu = startNpu;
  for (int64_t w : ws) {
    if (w < 1 || w > cols)
      return Error("W " + std::to_string(w) + " is not 1.." +
                   std::to_string(cols));
    table.choices.push_back(
        evaluateMatrixW(config, rows, cols, type, w, startNpu));
  }
  if (ws.empty())
    for (const MatrixChoice &c : advice->candidates)
      if (c.channels <= 2 * config.npus() || c.w == advice->best.w)
        table.choices.push_back(c);
  table.advice = std::move(*advice);
  return table;
}

namespace {

std::string cell(int64_t v, size_t width) {
  std::string s = std::to_string(v);
  return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
}

std::string choiceRow(const MatrixChoice &c, bool best) {
  return std::string(best ? "*" : " ") + cell(c.w, 6) + cell(c.channels, 10) +
         cell(c.channelsPerNpu, 9) + cell(c.npusUsed, 6) +
         cell(c.rowBytes, 11) + cell(c.fullestNpuBytes, 13) +
         cell(c.totalBytes, 10) + cell(c.wastedBytes, 7) + "\n";
}

} // namespace

std::string describeMatrixAdvice(const MatrixAdviceTable &table,
                                 const NpuConfig &config) {
  const MatrixAdvice &advice = table.advice;
  std::string out = std::to_string(table.rows) + " x " +
                    std::to_string(table.cols) + " " + npuTypeName(table.type) +
                    " matrix from npu " + std::to_string(table.startNpu) +
                    " on " + config.toString() +
                    "\nbest W = " + std::to_string(advice.best.w) + "\n";
  for (const std::string &r : advice.reasons)
    out += "  " + r + "\n";
  out += "\n      W  channels  per npu  npus  bytes/row  fullest npu  "
         "all npus  waste\n";
  for (const MatrixChoice &c : table.choices)
    out += choiceRow(c, c.w == advice.best.w);
  return out;
}

} // namespace tessel
