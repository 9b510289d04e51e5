//===- LayoutPictureTest.cpp - Pictures show every offset exactly once ----===//
#include "tessel/Render/LayoutPicture.h"
#include "tessel/Layout/ShapeParser.h"

#include "../Layout/RandomLayouts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

using namespace tessel;

namespace {

/// The numbers and '.' marks inside the grid lines of a text picture (rows
/// that start with a row label and contain '|').
void scanGrid(const std::string &picture, std::multiset<int64_t> &numbers,
              int64_t &padding) {
  std::istringstream lines(picture);
  std::string line;
  while (std::getline(lines, line)) {
    size_t bar = line.find('|');
    if (bar == std::string::npos || line.find('+') != std::string::npos)
      continue;
    std::string cells = line.substr(bar);
    for (char &c : cells)
      if (c == '|')
        c = ' ';
    std::istringstream words(cells);
    std::string word;
    while (words >> word) {
      if (word == ".")
        ++padding;
      else
        numbers.insert(std::stoll(word));
    }
  }
}

TEST(LayoutPicture, ShowsEveryOffsetOfSmallLayouts) {
  tessel::testing::RandomLayouts random(31);
  PictureOptions options;
  options.maxRows = options.maxColumns = 1000;
  options.maxSlices = 1000;
  for (int n = 0; n < 400; ++n) {
    Shape shape = random.next(1024);
    SCOPED_TRACE(shape.toString());
    TiledLayout layout = *TiledLayout::get(shape);
    if (layout.rank() == 0)
      continue;
    std::multiset<int64_t> numbers, expected;
    int64_t padding = 0;
    scanGrid(renderLayoutText(layout, options), numbers, padding);
    tessel::testing::forEachIndex(layout.logicalDims(),
                                  [&](const std::vector<int64_t> &i) {
                                    expected.insert(layout.offset(i));
                                  });
    ASSERT_EQ(numbers, expected);
    // Padding cells: the padded box of the two drawn dims, per slice.
    int64_t rows =
        layout.rank() >= 2 ? layout.paddedExtent(layout.rank() - 2) : 1;
    int64_t dataRows =
        layout.rank() >= 2 ? layout.logicalDims()[layout.rank() - 2] : 1;
    int64_t cols = layout.paddedExtent(layout.rank() - 1);
    int64_t dataCols = layout.logicalDims()[layout.rank() - 1];
    int64_t slices =
        layout.logicalElements() / std::max<int64_t>(1, dataRows * dataCols);
    if (dataRows * dataCols == 0)
      continue;
    ASSERT_EQ(padding, slices * (rows * cols - dataRows * dataCols));
  }
}

TEST(LayoutPicture, ElidesLargeGridsAroundTheDataEdge) {
  TiledLayout layout =
      *TiledLayout::get(*parseShape("f32[1000,3]{1,0:T(8,128)}"));
  PictureOptions options;
  options.maxRows = 10;
  options.maxColumns = 8;
  std::string text = renderLayoutText(layout, options);
  EXPECT_NE(text.find("  0      1      2      3 ...    127"), std::string::npos)
      << text;
  EXPECT_NE(text.find("999 |127872 127873 127874      . ...      .|"),
            std::string::npos)
      << text;
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 20);
}

} // namespace
