//===- LayoutPicture.cpp - Pictures of tiled layouts ----------------------===//
#include "tessel/Render/LayoutPicture.h"

#include "tessel/Render/Svg.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

namespace tessel {
namespace {

constexpr int64_t kGap = -1;

/// Indices of [0, extent) to draw within `budget` entries: the first ones,
/// the last data ones, the first padding one and the last one; kGap marks
/// each run left out.
std::vector<int64_t> visibleIndices(int64_t extent, int64_t data,
                                    int64_t budget) {
  std::vector<int64_t> out;
  if (extent <= budget) {
    for (int64_t i = 0; i < extent; ++i)
      out.push_back(i);
    return out;
  }
  std::set<int64_t> keep;
  int64_t head =
      std::min(std::max<int64_t>(1, budget - 5), std::max<int64_t>(1, data));
  for (int64_t i = 0; i < head; ++i)
    keep.insert(i);
  for (int64_t i : {data - 2, data - 1, data, extent - 1})
    if (i >= 0 && i < extent)
      keep.insert(i);
  int64_t previous = -1;
  for (int64_t i : keep) {
    if (i != previous + 1)
      out.push_back(kGap);
    out.push_back(i);
    previous = i;
  }
  return out;
}

struct Cell {
  int64_t offset = 0;
  bool padding = false;
  int64_t tile0 = 0;
  int64_t tile1 = 0;
};

/// What is drawn: which rows, columns and leading indices, and each cell.
class GridModel {
public:
  GridModel(const TiledLayout &layout, const PictureOptions &options)
      : layout(layout) {
    int64_t rank = layout.rank();
    rowDim = rank >= 2 ? rank - 2 : -1;
    colDim = rank >= 1 ? rank - 1 : -1;
    rows = rowDim < 0
               ? std::vector<int64_t>{0}
               : visibleIndices(layout.paddedExtent(rowDim),
                                layout.logicalDims()[rowDim], options.maxRows);
    cols = colDim < 0 ? std::vector<int64_t>{0}
                      : visibleIndices(layout.paddedExtent(colDim),
                                       layout.logicalDims()[colDim],
                                       options.maxColumns);
    std::vector<int64_t> leading(layout.logicalDims().begin(),
                                 layout.logicalDims().begin() +
                                     std::max<int64_t>(0, rank - 2));
    int64_t count = 1;
    for (int64_t d : leading)
      count *= d;
    for (int64_t s = 0; s < count; ++s) {
      if (count > options.maxSlices && s == options.maxSlices - 1 &&
          s != count - 1) {
        slices.push_back(std::nullopt);
        s = count - 2;
        continue;
      }
      std::vector<int64_t> lead(leading.size());
      int64_t rest = s;
      for (size_t i = leading.size(); i-- > 0;) {
        lead[i] = rest % leading[i];
        rest /= leading[i];
      }
      slices.push_back(lead);
    }
    hasSecondLevel = layout.steps().size() >= 2;
  }

  Cell cell(const std::vector<int64_t> &lead, int64_t row, int64_t col) const {
    std::vector<int64_t> index = lead;
    if (rowDim >= 0)
      index.push_back(row);
    if (colDim >= 0)
      index.push_back(col);
    Cell c;
    for (size_t d = 0; d < index.size(); ++d)
      c.padding |= index[d] >= layout.logicalDims()[d];
    c.offset = layout.paddedOffset(index);
    if (!layout.steps().empty())
      c.tile0 = layout.tileId(index, 0);
    if (hasSecondLevel)
      c.tile1 = layout.tileId(index, 1);
    return c;
  }

  std::string sliceLabel(const std::vector<int64_t> &lead) const {
    std::string label = "[";
    for (int64_t i : lead)
      label += std::to_string(i) + ",";
    return label + ":,:]";
  }

  const TiledLayout &layout;
  int64_t rowDim, colDim;
  std::vector<int64_t> rows, cols;
  std::vector<std::optional<std::vector<int64_t>>> slices;
  bool hasSecondLevel = false;
};

std::string headline(const TiledLayout &layout) {
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.1f",
                layout.physicalElements() == 0
                    ? 100.0
                    : 100.0 * layout.logicalElements() /
                          layout.physicalElements());
  auto count = [](int64_t n, const char *noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
  };
  std::string line = layout.shape().toString() + ": " +
                     count(layout.logicalElements(), "element") + " in " +
                     count(layout.physicalElements(), "slot") + " (" + percent +
                     "% used)";
  return line;
}

std::string pad(const std::string &text, size_t width) {
  return text.size() >= width ? text
                              : std::string(width - text.size(), ' ') + text;
}

/// The text picture of one grid (one index of the leading dims).
void renderTextGrid(const GridModel &model, const std::vector<int64_t> &lead,
                    std::string &out) {
  const std::vector<int64_t> &rows = model.rows, &cols = model.cols;
  std::vector<std::vector<Cell>> cells(rows.size(),
                                       std::vector<Cell>(cols.size()));
  size_t width = 1;
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < cols.size(); ++c) {
      if (rows[r] == kGap || cols[c] == kGap)
        continue;
      cells[r][c] = model.cell(lead, rows[r], cols[c]);
      width = std::max(width, std::to_string(cells[r][c].offset).size());
    }
  for (int64_t c : cols)
    if (c != kGap)
      width = std::max(width, std::to_string(c).size());
  size_t label = 1;
  for (int64_t r : rows)
    label = std::max(label, std::to_string(r).size());
  auto cellWidth = [&](size_t c) { return cols[c] == kGap ? 3 : width; };
  auto isBorder = [&](size_t r1, size_t r2, size_t c1, size_t c2) {
    if (r1 >= rows.size() || r2 >= rows.size() || c1 >= cols.size() ||
        c2 >= cols.size())
      return true; // outer border
    if (rows[r1] == kGap || rows[r2] == kGap || cols[c1] == kGap ||
        cols[c2] == kGap)
      return false;
    return cells[r1][c1].tile0 != cells[r2][c2].tile0;
  };
  const size_t none = static_cast<size_t>(-1);
  // Vertical separator left of column c (c == cols.size(): right edge).
  auto vertical = [&](size_t r, size_t c) {
    if (r == none || r >= rows.size() || rows[r] == kGap)
      return false;
    return c == 0 || c == cols.size() || isBorder(r, r, c - 1, c);
  };
  // Horizontal border above row r (r == rows.size(): bottom) in column c.
  std::function<bool(size_t, size_t)> horizontal = [&](size_t r, size_t c) {
    if (c == none || c >= cols.size())
      return false;
    if (cols[c] == kGap) // continue the line of the column on the left
      return c > 0 && horizontal(r, c - 1);
    return r == 0 || r == rows.size() || isBorder(r - 1, r, c, c);
  };
  // Column header.
  std::string header(label + 1, ' ');
  for (size_t c = 0; c < cols.size(); ++c)
    header += " " + pad(cols[c] == kGap ? "..." : std::to_string(cols[c]),
                        cellWidth(c));
  out += header + "\n";
  auto borderLine = [&](size_t r) {
    std::string line(label + 1, ' ');
    bool any = false;
    for (size_t c = 0; c <= cols.size(); ++c) {
      bool up = vertical(r == 0 ? none : r - 1, c), down = vertical(r, c);
      bool left = horizontal(r, c == 0 ? none : c - 1),
           right = horizontal(r, c);
      line += (up || down) && (left || right) ? '+'
              : (up || down)                  ? '|'
              : (left || right)               ? '-'
                                              : ' ';
      if (c < cols.size()) {
        line += std::string(cellWidth(c), right ? '-' : ' ');
        any |= right;
      }
    }
    if (any)
      out += line + "\n";
  };
  for (size_t r = 0; r <= rows.size(); ++r) {
    borderLine(r);
    if (r == rows.size())
      break;
    if (rows[r] == kGap) {
      std::string line = pad(":", label) + " ";
      for (size_t c = 0; c < cols.size(); ++c)
        line += " " + pad(":", cellWidth(c));
      out += line + "\n";
      continue;
    }
    std::string line = pad(std::to_string(rows[r]), label) + " ";
    for (size_t c = 0; c < cols.size(); ++c) {
      line += vertical(r, c) ? '|' : ' ';
      if (cols[c] == kGap)
        line += "...";
      else
        line +=
            pad(cells[r][c].padding ? "." : std::to_string(cells[r][c].offset),
                width);
    }
    line += '|';
    out += line + "\n";
  }
}

} // namespace

std::string renderLayoutText(const TiledLayout &layout,
                             const PictureOptions &options) {
  GridModel model(layout, options);
  std::string out = headline(layout) + "\n";
  std::string legend = "numbers are offsets in elements";
  if (!layout.steps().empty())
    legend += "; lines are the borders of tile " +
              layout.steps().front().tile.toString();
  legend += "; '.' is padding";
  out += legend + "\n";
  if (model.rowDim < 0 && model.colDim < 0) {
    out += "the scalar is at offset 0\n";
    return out;
  }
  for (const auto &slice : model.slices) {
    if (!slice) {
      out += "\n...\n";
      continue;
    }
    if (layout.rank() > 2)
      out += "\n" + model.sliceLabel(*slice) + "\n";
    else
      out += "\n";
    renderTextGrid(model, *slice, out);
  }
  return out;
}

std::string renderLayoutSvg(const TiledLayout &layout,
                            const PictureOptions &options) {
  GridModel model(layout, options);
  const double cellW = 34, cellH = 24, gapW = 18, margin = 40, titleH = 40;
  auto colX = [&](size_t c) {
    double x = margin;
    for (size_t i = 0; i < c; ++i)
      x += model.cols[i] == kGap ? gapW : cellW;
    return x;
  };
  auto rowY = [&](size_t r) {
    double y = 0;
    for (size_t i = 0; i < r; ++i)
      y += model.rows[i] == kGap ? gapW : cellH;
    return y;
  };
  double gridW = colX(model.cols.size()) - margin;
  double gridH = rowY(model.rows.size());
  double sliceH = gridH + 40;
  std::string title = headline(layout);
  double width = std::max(gridW + 2 * margin,
                          2 * margin + 8.0 * static_cast<double>(title.size()));
  double height = titleH + sliceH * model.slices.size() + 20;
  SvgWriter svg(width, height);
  svg.text(margin, 18, title, 13, "start");
  std::string legend = "colour: tile";
  if (!layout.steps().empty())
    legend += " " + layout.steps().front().tile.toString();
  if (model.hasSecondLevel)
    legend += "; red: tile " + layout.steps()[1].tile.toString();
  svg.text(margin, 32, legend + "; hatched: padding", 11, "start", "#555");
  double top = titleH;
  for (const auto &slice : model.slices) {
    if (!slice) {
      svg.text(margin, top + 14, "...", 14, "start");
      top += 30;
      continue;
    }
    double y0 = top + 28;
    if (layout.rank() > 2)
      svg.text(margin, top + 8, model.sliceLabel(*slice), 12, "start");
    for (size_t c = 0; c < model.cols.size(); ++c)
      svg.text(colX(c) + (model.cols[c] == kGap ? gapW : cellW) / 2, y0 - 8,
               model.cols[c] == kGap ? "..." : std::to_string(model.cols[c]),
               10, "middle", "#777");
    // Cells first, then the tile borders on top of them.
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t r = 0; r < model.rows.size(); ++r) {
        double y = y0 + rowY(r);
        double h = model.rows[r] == kGap ? gapW : cellH;
        if (pass == 0)
          svg.text(margin - 6, y + h / 2,
                   model.rows[r] == kGap ? ":" : std::to_string(model.rows[r]),
                   10, "end", "#777");
        for (size_t c = 0; c < model.cols.size(); ++c) {
          double x = colX(c), w = model.cols[c] == kGap ? gapW : cellW;
          if (model.rows[r] == kGap || model.cols[c] == kGap) {
            if (pass == 0)
              svg.text(x + w / 2, y + h / 2,
                       model.rows[r] == kGap ? ":" : "...", 10, "middle",
                       "#999");
            continue;
          }
          Cell cell = model.cell(*slice, model.rows[r], model.cols[c]);
          if (pass == 0) {
            if (cell.padding)
              svg.hatchedRect(x, y, w, h);
            else
              svg.rect(x, y, w, h, tileColor(cell.tile0), "#ffffff", 0.5);
            svg.text(x + w / 2, y + h / 2 + 1, std::to_string(cell.offset), 11,
                     "middle", cell.padding ? "#999999" : "#222222");
            continue;
          }
          // Borders to the right and below: first level, then second.
          auto border = [&](size_t r2, size_t c2, double x1, double y1,
                            double x2, double y2) {
            if (r2 >= model.rows.size() || c2 >= model.cols.size() ||
                model.rows[r2] == kGap || model.cols[c2] == kGap)
              return;
            Cell next = model.cell(*slice, model.rows[r2], model.cols[c2]);
            if (next.tile0 != cell.tile0)
              svg.line(x1, y1, x2, y2, "#222222", 2);
            else if (model.hasSecondLevel && next.tile1 != cell.tile1)
              svg.line(x1, y1, x2, y2, "#d62728", 1.5);
          };
          border(r, c + 1, x + w, y, x + w, y + h);
          border(r + 1, c, x, y + h, x + w, y + h);
        }
      }
    }
    svg.rect(margin, y0, gridW, gridH, "none", "#222222", 2);
    top += sliceH;
  }
  return svg.finish();
}

Status checkPictureSize(const TiledLayout &layout,
                        const PictureOptions &options) {
  int64_t rank = layout.rank();
  const std::vector<int64_t> &dims = layout.logicalDims();
  double cells = 1;
  if (rank >= 1)
    cells *= std::min<double>(layout.paddedExtent(rank - 1),
                              static_cast<double>(options.maxColumns));
  if (rank >= 2)
    cells *= std::min<double>(layout.paddedExtent(rank - 2),
                              static_cast<double>(options.maxRows));
  double slices = 1;
  for (int64_t d = 0; d + 2 < rank; ++d)
    slices *= dims[d];
  cells *= std::min<double>(slices, static_cast<double>(options.maxSlices));
  if (cells <= kMaxDrawnCells)
    return {};
  char count[64];
  std::snprintf(count, sizeof count, "%.0f", cells);
  return Error(std::string("the picture would draw ") + count +
               " cells, more than the " + std::to_string(kMaxDrawnCells) +
               " tessel draws; lower --max-rows, --max-cols or --max-slices");
}

} // namespace tessel
