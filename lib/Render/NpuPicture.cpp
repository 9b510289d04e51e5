//===- NpuPicture.cpp - Pictures of NPU local memory ----------------------===//
#include "tessel/Render/NpuPicture.h"

#include "tessel/Render/Svg.h"
#include "tessel/Support/MathExtras.h"

#include <algorithm>
#include <map>
#include <set>

namespace tessel {
namespace {

//===----------------------------------------------------------------------===//
// The memory picture's model: rows of blocks of parts
//===----------------------------------------------------------------------===//

/// What one part of a block (a whole block, or one sub-block element) holds.
struct Part {
  ByteKind kind = ByteKind::Outside;
  int tensor = -1;
  int64_t feature = -1;   ///< feature (n', c) or matrix (row, channel) id
  std::string label;      ///< element label for the SVG
  bool firstByte = false; ///< the part starts its element
};

struct Row {
  int64_t npu = 0, offset = 0;
  bool skippedBefore = false; ///< rows were left out above this one
  std::vector<std::vector<Part>> blocks;
};

struct MemoryModel {
  std::vector<Row> rows;
  int64_t partBytes = 4;
  /// Legend: symbol of each (tensor, feature) in first-seen order.
  std::vector<std::pair<std::pair<int, int64_t>, std::string>> features;
  std::set<ByteKind> kinds;
};

constexpr const char kSymbols[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
constexpr int64_t kNumSymbols = sizeof(kSymbols) - 1;

char kindSymbol(ByteKind kind) {
  switch (kind) {
  case ByteKind::FeaturePadding:
    return '.';
  case ByteKind::EmptySlot:
    return '-';
  case ByteKind::Dummy:
    return '0';
  case ByteKind::MatrixTail:
    return '=';
  case ByteKind::Gap:
    return '_';
  default:
    return ' ';
  }
}

const char *kindText(ByteKind kind) {
  switch (kind) {
  case ByteKind::FeaturePadding:
    return "padding";
  case ByteKind::EmptySlot:
    return "empty slot";
  case ByteKind::Dummy:
    return "dummy";
  case ByteKind::MatrixTail:
    return "matrix tail";
  case ByteKind::Gap:
    return "gap";
  default:
    return "free";
  }
}

int64_t featureId(const LocalTensor &t, const Dims4 &stored) {
  return stored[0] * t.storageShape()[1] + stored[1];
}

/// The stored (n', c) of a logical element.
Dims4 storedOf(const LocalTensor &t, const Dims4 &i) {
  if (t.layout() == NpuLayout::Matrix)
    return {i[0], i[1] / t.desc().matrixW, 0, i[1] % t.desc().matrixW};
  return {i[0] / modeLanes(t.mode()), i[1], i[2], i[3]};
}

std::string featureText(const LocalTensor &t, int64_t id) {
  int64_t c = id % t.storageShape()[1], n = id / t.storageShape()[1];
  if (t.layout() == NpuLayout::Matrix) {
    int64_t w = t.desc().matrixW;
    int64_t last = std::min(t.shape()[1], (c + 1) * w) - 1;
    return "row " + std::to_string(n) + " cols " + std::to_string(c * w) +
           (last > c * w ? ".." + std::to_string(last) : "");
  }
  int64_t lanes = modeLanes(t.mode());
  if (lanes == 1)
    return "(" + std::to_string(n) + "," + std::to_string(c) + ")";
  int64_t last = std::min(t.shape()[0], (n + 1) * lanes) - 1;
  return "(n " + std::to_string(n * lanes) + ".." + std::to_string(last) +
         ", c " + std::to_string(c) + ")";
}

/// What part [offset, offset + partBytes) of an NPU holds.
Part classifyPart(const std::vector<NamedTensor> &tensors, NpuPlace place) {
  Part part;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const LocalTensor &t = tensors[k].tensor;
    ByteInfo info = t.classify(place);
    if (info.kind == ByteKind::Outside)
      continue;
    part.kind = info.kind;
    part.tensor = static_cast<int>(k);
    const Dims4 &i = info.index;
    if (info.kind == ByteKind::Element) {
      part.feature = featureId(t, storedOf(t, i));
      part.firstByte = info.byte == 0;
      part.label = t.layout() == NpuLayout::Matrix ? std::to_string(i[1])
                   : modeLanes(t.mode()) > 1
                       ? "n" + std::to_string(i[0])
                       : std::to_string(i[2] * t.shape()[3] + i[3]);
    } else if (info.kind == ByteKind::Dummy ||
               info.kind == ByteKind::MatrixTail) {
      part.feature = featureId(t, i);
      part.label = info.kind == ByteKind::Dummy ? "0" : "";
    }
    return part;
  }
  return part;
}

/// Which NPUs a picture shows: all of them up to 16, else those touched.
std::vector<int64_t> shownNpus(const NpuConfig &config,
                               const std::vector<NamedTensor> &tensors) {
  std::vector<int64_t> out;
  for (int64_t npu = 0; npu < config.npus(); ++npu) {
    bool touched = false;
    for (const NamedTensor &t : tensors)
      touched = touched || t.tensor.touchesNpu(npu);
    if (touched || config.npus() <= 16)
      out.push_back(npu);
  }
  return out;
}

Status checkOptions(const NpuPictureOptions &o) {
  if (o.blockBytes < 1 || o.rowBytes < o.blockBytes ||
      o.rowBytes % o.blockBytes != 0 || o.rowBytes / o.blockBytes > 512)
    return Error("a row of " + std::to_string(o.rowBytes) + " bytes is not " +
                 "1..512 blocks of " + std::to_string(o.blockBytes) + " bytes");
  return {};
}

Expected<MemoryModel> buildMemory(const std::vector<NamedTensor> &tensors,
                                  const NpuPictureOptions &o) {
  if (Status e = checkOptions(o); !e)
    return e.takeError();
  if (tensors.empty())
    return Error("nothing to draw");
  const NpuConfig &config = tensors.front().tensor.config();
  int64_t lo = config.bytesPerNpu(), hi = 0;
  MemoryModel model;
  model.partBytes = o.blockBytes;
  for (const NamedTensor &t : tensors) {
    lo = std::min(lo, t.tensor.start().offset);
    hi = std::max(hi,
                  std::min(config.bytesPerNpu(),
                           t.tensor.start().offset + t.tensor.bytesPerNpu()));
    model.partBytes = std::min(model.partBytes, t.tensor.elementBytes());
  }
  while (o.blockBytes % model.partBytes != 0)
    --model.partBytes;
  lo = lo / o.rowBytes * o.rowBytes;
  hi = ceilDiv(hi, o.rowBytes) * o.rowBytes;
  if ((hi - lo) / o.rowBytes > o.maxRowsPerNpu)
    return Error("the picture would have " +
                 std::to_string((hi - lo) / o.rowBytes) +
                 " rows per npu, more than " + std::to_string(o.maxRowsPerNpu) +
                 "; draw a smaller tensor or use wider rows");
  std::map<std::pair<int, int64_t>, bool> seen;
  for (int64_t npu : shownNpus(config, tensors))
    for (int64_t off = lo; off < hi; off += o.rowBytes) {
      Row row{npu, off, false, {}};
      for (int64_t b = off; b < off + o.rowBytes; b += o.blockBytes) {
        std::vector<Part> parts;
        for (int64_t p = b; p < b + o.blockBytes; p += model.partBytes) {
          Part part = classifyPart(tensors, {npu, p});
          model.kinds.insert(part.kind);
          if (part.kind == ByteKind::Element &&
              !seen[{part.tensor, part.feature}]) {
            seen[{part.tensor, part.feature}] = true;
            model.features.push_back({{part.tensor, part.feature}, ""});
          }
          parts.push_back(part);
        }
        row.blocks.push_back(std::move(parts));
      }
      model.rows.push_back(std::move(row));
    }
  // Features in (tensor, feature) order get the symbols a, b, c, ...
  std::sort(model.features.begin(), model.features.end());
  for (size_t k = 0; k < model.features.size(); ++k)
    model.features[k].second =
        std::string(1, kSymbols[static_cast<int64_t>(k) % kNumSymbols]);
  return model;
}

std::string symbolOf(const MemoryModel &m, const Part &part, bool byTensor) {
  if (part.kind != ByteKind::Element)
    return std::string(1, kindSymbol(part.kind));
  if (byTensor)
    return std::string(1, kSymbols[part.tensor % kNumSymbols]);
  auto it = std::lower_bound(
      m.features.begin(), m.features.end(),
      std::make_pair(std::make_pair(part.tensor, part.feature), std::string()));
  return it->second;
}

/// The symbol for a whole block: its first element part, else its first
/// part.
std::string blockSymbol(const MemoryModel &m, const std::vector<Part> &parts,
                        bool byTensor) {
  for (const Part &p : parts)
    if (p.kind == ByteKind::Element)
      return symbolOf(m, p, byTensor);
  return symbolOf(m, parts.front(), byTensor);
}

std::string pad(std::string text, size_t width, bool right = true) {
  if (text.size() >= width)
    return text;
  std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

std::string legendText(const MemoryModel &m,
                       const std::vector<NamedTensor> &tensors, bool byTensor) {
  std::string out;
  size_t width = 0;
  if (byTensor) {
    for (size_t k = 0; k < tensors.size(); ++k)
      out += std::string(k ? "  " : "") + kSymbols[k % kNumSymbols] + " = " +
             tensors[k].name;
  } else {
    for (const auto &[key, symbol] : m.features) {
      std::string item =
          symbol + " " +
          (tensors.size() > 1 ? tensors[key.first].name + " " : "") +
          featureText(tensors[key.first].tensor, key.second);
      if (width + item.size() > 78 && width > 0) {
        out += "\n";
        width = 0;
      }
      out += (width ? "  " : "") + item;
      width += item.size() + 2;
    }
  }
  out += "\n";
  std::string kinds;
  for (ByteKind kind : m.kinds)
    if (kind != ByteKind::Element)
      kinds += std::string(kinds.empty() ? "" : "  ") +
               (kind == ByteKind::Outside ? "(blank)"
                                          : std::string(1, kindSymbol(kind))) +
               " " + kindText(kind);
  return out + (kinds.empty() ? "" : kinds + "\n");
}

} // namespace

Expected<std::string> drawMemoryText(const std::vector<NamedTensor> &tensors,
                                     const NpuPictureOptions &o) {
  Expected<MemoryModel> model = buildMemory(tensors, o);
  if (!model)
    return model.takeError();
  std::string out = o.title.empty() ? "" : o.title + "\n";
  out += "one character = " + std::to_string(o.blockBytes) + " bytes, " +
         std::to_string(o.rowBytes / o.blockBytes) + " per row\n";
  int64_t lastNpu = -1;
  for (const Row &row : model->rows) {
    std::string head =
        row.npu != lastNpu ? "npu " + std::to_string(row.npu) : std::string();
    lastNpu = row.npu;
    out += pad(head, 8, false) + pad(std::to_string(row.offset), 7) + " |";
    for (size_t b = 0; b < row.blocks.size(); ++b) {
      if (b && b % 8 == 0)
        out += " ";
      out += blockSymbol(*model, row.blocks[b], o.byTensor);
    }
    out += "|\n";
  }
  return out + legendText(*model, tensors, o.byTensor);
}

//===----------------------------------------------------------------------===//
// SVG of the memory picture
//===----------------------------------------------------------------------===//

namespace {

struct Grid {
  double left = 110, top = 34, cellW = 26, cellH = 22, npuGap = 8;
};

/// A label that fits `width` pixels: font size shrinks with the text.
void fitText(SvgWriter &svg, double x, double y, double width,
             const std::string &text, const std::string &fill = "#222") {
  if (text.empty())
    return;
  double size = std::min(9.0, width / (0.62 * text.size() + 0.4));
  if (size >= 3.5)
    svg.text(x, y, text, size, "middle", fill);
}

void drawPart(SvgWriter &svg, const Part &part, double x, double y, double w,
              double h, bool byTensor) {
  switch (part.kind) {
  case ByteKind::Element:
    svg.rect(x, y, w, h,
             tileColor(byTensor ? part.tensor : part.feature + 3 * part.tensor),
             "#555", 0.6);
    if (part.firstByte)
      fitText(svg, x + w / 2, y + h / 2, w, part.label);
    return;
  case ByteKind::FeaturePadding:
  case ByteKind::MatrixTail:
    svg.hatchedRect(x, y, w, h);
    svg.rect(x, y, w, h, "none", "#999", 0.6);
    return;
  case ByteKind::EmptySlot:
    svg.rect(x, y, w, h, "#a6a6a6", "#999", 0.6);
    return;
  case ByteKind::Dummy:
    svg.rect(x, y, w, h, "#ffffff", "#555", 0.6);
    fitText(svg, x + w / 2, y + h / 2, w, "0", "#999");
    return;
  case ByteKind::Gap:
    svg.rect(x, y, w, h, "#f7f7f7", "#ccc", 0.6);
    return;
  case ByteKind::Outside:
    svg.rect(x, y, w, h, "#ffffff", "#e3e3e3", 0.6);
    return;
  }
}

using LegendItems = std::vector<std::pair<std::string, std::string>>;

/// Where each legend item goes when wrapped at maxWidth: (x, y) offsets.
std::vector<std::pair<double, double>> layoutLegend(const LegendItems &items,
                                                    double maxWidth) {
  std::vector<std::pair<double, double>> at;
  double cx = 0, cy = 0;
  for (const auto &item : items) {
    double w = 22 + 6.2 * item.second.size();
    if (cx + w > maxWidth && cx > 0) {
      cx = 0;
      cy += 18;
    }
    at.push_back({cx, cy});
    cx += w + 8;
  }
  return at;
}

double legendHeight(const LegendItems &items, double maxWidth) {
  std::vector<std::pair<double, double>> at = layoutLegend(items, maxWidth);
  return at.empty() ? 0 : at.back().second + 18;
}

/// Swatches and names under a picture.
void drawLegend(SvgWriter &svg, double x, double y, const LegendItems &items,
                double maxWidth) {
  std::vector<std::pair<double, double>> at = layoutLegend(items, maxWidth);
  for (size_t i = 0; i < items.size(); ++i) {
    double cx = x + at[i].first, cy = y + at[i].second;
    if (items[i].first == "hatch")
      svg.hatchedRect(cx, cy, 14, 12);
    else
      svg.rect(cx, cy, 14, 12, items[i].first, "#555", 0.6);
    svg.text(cx + 18, cy + 6, items[i].second, 10, "start");
  }
}

LegendItems memoryLegend(const MemoryModel &model,
                         const std::vector<NamedTensor> &tensors,
                         bool byTensor) {
  LegendItems legend;
  if (byTensor) {
    for (size_t k = 0; k < tensors.size(); ++k)
      legend.push_back({tileColor(static_cast<int64_t>(k)), tensors[k].name});
  } else {
    for (const auto &[key, symbol] : model.features)
      legend.push_back(
          {tileColor(key.second + 3 * key.first),
           (tensors.size() > 1 ? tensors[key.first].name + " " : "") +
               featureText(tensors[key.first].tensor, key.second)});
  }
  for (ByteKind kind : model.kinds)
    if (kind == ByteKind::FeaturePadding || kind == ByteKind::MatrixTail)
      legend.push_back({"hatch", kindText(kind)});
    else if (kind == ByteKind::EmptySlot)
      legend.push_back({"#a6a6a6", kindText(kind)});
    else if (kind == ByteKind::Dummy)
      legend.push_back({"#ffffff", "0 dummy"});
    else if (kind == ByteKind::Gap)
      legend.push_back({"#f7f7f7", kindText(kind)});
  return legend;
}

/// The rows of blocks, NPU by NPU; returns the y below the last row.
double drawMemoryRows(SvgWriter &svg, const MemoryModel &model, const Grid &g,
                      const NpuPictureOptions &o) {
  int64_t blocks = o.rowBytes / o.blockBytes;
  int64_t parts = o.blockBytes / model.partBytes;
  double y = g.top;
  int64_t lastNpu = -1;
  for (const Row &row : model.rows) {
    if (row.npu != lastNpu) {
      y += lastNpu < 0 ? 0 : g.npuGap;
      svg.text(8, y + g.cellH / 2, "npu " + std::to_string(row.npu), 11,
               "start");
      lastNpu = row.npu;
    }
    svg.text(g.left - 6, y + g.cellH / 2, std::to_string(row.offset), 9, "end",
             "#777");
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t p = 0; p < parts; ++p)
        drawPart(svg, row.blocks[b][p],
                 g.left + b * g.cellW + p * g.cellW / parts, y, g.cellW / parts,
                 g.cellH, o.byTensor);
    y += g.cellH;
  }
  return y;
}

} // namespace

Expected<std::string> drawMemorySvg(const std::vector<NamedTensor> &tensors,
                                    const NpuPictureOptions &o) {
  Expected<MemoryModel> model = buildMemory(tensors, o);
  if (!model)
    return model.takeError();
  Grid g;
  int64_t blocks = o.rowBytes / o.blockBytes;
  int64_t parts = o.blockBytes / model->partBytes;
  // Sub-block elements (int8, 4N lanes) get room for their labels.
  g.cellW = blocks > 48 ? 16 : std::max<double>(26, 14.0 * parts);
  int64_t npuCount = 0, lastNpu = -1;
  for (const Row &row : model->rows)
    if (row.npu != lastNpu) {
      ++npuCount;
      lastNpu = row.npu;
    }
  double width = g.left + blocks * g.cellW + 20;
  double gridH = model->rows.size() * g.cellH + npuCount * g.npuGap;
  LegendItems legend = memoryLegend(*model, tensors, o.byTensor);
  SvgWriter svg(width,
                g.top + gridH + 16 + legendHeight(legend, width - 20) + 8);
  svg.text(10, 14, o.title.empty() ? "local memory" : o.title, 12, "start");
  for (int64_t b = 0; b < blocks; b += 8)
    svg.text(g.left + b * g.cellW, g.top - 8,
             "+" + std::to_string(b * o.blockBytes), 8, "start", "#777");
  double y = drawMemoryRows(svg, *model, g, o);
  drawLegend(svg, 10, y + 16, legend, width - 20);
  return svg.finish();
}

//===----------------------------------------------------------------------===//
// Scatter
//===----------------------------------------------------------------------===//

namespace {

/// The stored channel in slot `slot` of `npu`, or -1.
int64_t channelAt(const LocalTensor &t, int64_t npu, int64_t slot) {
  int64_t c = slot * t.config().npus() + npu - t.start().npu;
  return c >= 0 && c < t.storageShape()[1] ? c : -1;
}

std::string pair(int64_t a, int64_t b) {
  return "(" + std::to_string(a) + "," + std::to_string(b) + ")";
}

} // namespace

std::string drawScatterText(const LocalTensor &t, const NpuPictureOptions &o) {
  int64_t x = t.config().npus();
  const Dims4 &stored = t.storageShape();
  size_t width =
      std::max<size_t>(7, pair(stored[0] - 1, stored[1] - 1).size() + 2);
  std::string out = o.title.empty() ? "" : o.title + "\n";
  out += pad("", 14);
  for (int64_t npu = 0; npu < x; ++npu)
    out += pad("npu " + std::to_string(npu), width);
  out += "\n";
  for (int64_t n = 0; n < stored[0]; ++n)
    for (int64_t slot = 0; slot < t.channelsPerNpu(); ++slot) {
      out += pad("n " + std::to_string(n) + " slot " + std::to_string(slot), 14,
                 false);
      for (int64_t npu = 0; npu < x; ++npu) {
        int64_t c = t.touchesNpu(npu) ? channelAt(t, npu, slot) : -1;
        out += pad(c < 0 ? (t.touchesNpu(npu) ? "-" : ".") : pair(n, c), width);
      }
      out += "\n";
    }
  return out + "(n,c) feature   - empty slot   . npu unused by the tensor\n";
}

std::string drawScatterSvg(const LocalTensor &t, const NpuPictureOptions &o) {
  int64_t x = t.config().npus();
  const Dims4 &stored = t.storageShape();
  double cellW = 58, cellH = 26, left = 90, top = 50;
  int64_t rows = stored[0] * t.channelsPerNpu();
  SvgWriter svg(left + x * cellW + 20, top + rows * cellH + 44);
  svg.text(10, 14, o.title.empty() ? "features over npus" : o.title, 12,
           "start");
  for (int64_t npu = 0; npu < x; ++npu)
    svg.text(left + npu * cellW + cellW / 2, top - 10,
             "npu " + std::to_string(npu), 11);
  for (int64_t n = 0; n < stored[0]; ++n)
    for (int64_t slot = 0; slot < t.channelsPerNpu(); ++slot) {
      double y = top + (n * t.channelsPerNpu() + slot) * cellH;
      svg.text(left - 8, y + cellH / 2,
               "n " + std::to_string(n) + " slot " + std::to_string(slot), 10,
               "end", "#555");
      for (int64_t npu = 0; npu < x; ++npu) {
        double cx = left + npu * cellW;
        int64_t c = t.touchesNpu(npu) ? channelAt(t, npu, slot) : -1;
        if (c >= 0) {
          svg.rect(cx, y, cellW, cellH, tileColor(c), "#555", 0.8);
          svg.text(cx + cellW / 2, y + cellH / 2, pair(n, c), 10);
        } else {
          svg.rect(cx, y, cellW, cellH, t.touchesNpu(npu) ? "#a6a6a6" : "#fff",
                   "#999", 0.8);
        }
      }
    }
  drawLegend(svg, 10, top + rows * cellH + 14,
             {{"#a6a6a6", "empty slot"}, {"#ffffff", "npu unused"}},
             left + x * cellW);
  return svg.finish();
}

//===----------------------------------------------------------------------===//
// Addresses
//===----------------------------------------------------------------------===//

namespace {

/// Rows (npu, offset) to show: all when an NPU has at most 32 rows, else the
/// rows holding a marked address.
std::vector<std::pair<int64_t, int64_t>>
addressRows(const NpuConfig &config, const std::vector<int64_t> &addresses,
            const NpuPictureOptions &o) {
  std::vector<std::pair<int64_t, int64_t>> rows;
  int64_t perNpu = ceilDiv(config.bytesPerNpu(), o.rowBytes);
  std::set<std::pair<int64_t, int64_t>> marked;
  for (int64_t a : addresses)
    marked.insert({a / config.bytesPerNpu(),
                   a % config.bytesPerNpu() / o.rowBytes * o.rowBytes});
  for (int64_t npu = 0; npu < config.npus(); ++npu)
    for (int64_t r = 0; r < perNpu; ++r)
      if (perNpu <= 32 || marked.count({npu, r * o.rowBytes}))
        rows.push_back({npu, r * o.rowBytes});
  return rows;
}

std::string markerName(size_t k) {
  return k < 26 ? std::string(1, static_cast<char>('A' + k))
                : "#" + std::to_string(k + 1);
}

Status checkAddresses(const NpuConfig &config,
                      const std::vector<int64_t> &addresses,
                      const NpuPictureOptions &o) {
  if (Status e = checkOptions(o); !e)
    return e;
  for (int64_t a : addresses)
    if (Expected<NpuPlace> p = config.split(a); !p)
      return p.takeError();
  if (config.npus() > 64 && addresses.empty())
    return Error("too many npus to draw without addresses");
  return {};
}

} // namespace

Expected<std::string> drawAddressesText(const NpuConfig &config,
                                        const std::vector<int64_t> &addresses,
                                        const NpuPictureOptions &o) {
  if (Status e = checkAddresses(config, addresses, o); !e)
    return e.takeError();
  std::string out = o.title.empty() ? "" : o.title + "\n";
  out += "one character = " + std::to_string(o.blockBytes) + " bytes, " +
         std::to_string(o.rowBytes / o.blockBytes) + " per row\n";
  int64_t lastNpu = -1, lastOffset = 0;
  for (auto [npu, off] : addressRows(config, addresses, o)) {
    if (npu == lastNpu && off != lastOffset + o.rowBytes)
      out += pad("", 15) + " ...\n";
    std::string head = npu != lastNpu ? "npu " + std::to_string(npu) : "";
    out += pad(head, 8, false) + pad(std::to_string(off), 7) + " |";
    for (int64_t b = off, k = 0; b < off + o.rowBytes; b += o.blockBytes, ++k) {
      if (k && k % 8 == 0)
        out += " ";
      std::string mark = ".";
      for (size_t i = 0; i < addresses.size(); ++i)
        if (addresses[i] / config.bytesPerNpu() == npu &&
            addresses[i] % config.bytesPerNpu() / o.blockBytes ==
                b / o.blockBytes)
          mark = i < 26 ? markerName(i) : "*";
      out += b < config.bytesPerNpu() ? mark : " ";
    }
    out += "|\n";
    lastNpu = npu;
    lastOffset = off;
  }
  for (size_t i = 0; i < addresses.size(); ++i) {
    NpuPlace p = *config.split(addresses[i]);
    out += markerName(i) + " " + std::to_string(addresses[i]) + " = npu " +
           std::to_string(p.npu) + " offset " + std::to_string(p.offset) + "\n";
  }
  return out;
}

Expected<std::string> drawAddressesSvg(const NpuConfig &config,
                                       const std::vector<int64_t> &addresses,
                                       const NpuPictureOptions &o) {
  if (Status e = checkAddresses(config, addresses, o); !e)
    return e.takeError();
  Grid g;
  int64_t blocks = o.rowBytes / o.blockBytes;
  if (blocks > 48)
    g.cellW = 16;
  std::vector<std::pair<int64_t, int64_t>> rows =
      addressRows(config, addresses, o);
  double height = g.top + rows.size() * g.cellH + config.npus() * g.npuGap +
                  addresses.size() * 16 + 20;
  SvgWriter svg(g.left + blocks * g.cellW + 20, height);
  svg.text(10, 14, o.title.empty() ? "addresses in local memory" : o.title, 12,
           "start");
  double y = g.top;
  int64_t lastNpu = -1;
  for (auto [npu, off] : rows) {
    if (npu != lastNpu) {
      y += lastNpu < 0 ? 0 : g.npuGap;
      svg.text(8, y + g.cellH / 2, "npu " + std::to_string(npu), 11, "start");
      lastNpu = npu;
    }
    svg.text(g.left - 6, y + g.cellH / 2, std::to_string(off), 9, "end",
             "#777");
    for (int64_t k = 0; k < blocks; ++k) {
      int64_t b = off + k * o.blockBytes;
      double x = g.left + k * g.cellW;
      std::string mark;
      for (size_t i = 0; i < addresses.size(); ++i)
        if (addresses[i] / config.bytesPerNpu() == npu &&
            addresses[i] % config.bytesPerNpu() / o.blockBytes ==
                b / o.blockBytes)
          mark = markerName(i);
      if (b >= config.bytesPerNpu())
        continue;
      svg.rect(x, y, g.cellW, g.cellH, mark.empty() ? "#ffffff" : "#fb8072",
               "#bbb", 0.6);
      fitText(svg, x + g.cellW / 2, y + g.cellH / 2, g.cellW, mark);
    }
    y += g.cellH;
  }
  for (size_t i = 0; i < addresses.size(); ++i) {
    NpuPlace p = *config.split(addresses[i]);
    svg.text(10, y + 16 + i * 16,
             markerName(i) + " = " + std::to_string(addresses[i]) + ": npu " +
                 std::to_string(p.npu) + ", offset " + std::to_string(p.offset),
             11, "start");
  }
  return svg.finish();
}

} // namespace tessel
