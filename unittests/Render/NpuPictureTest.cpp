//===- NpuPictureTest.cpp - Terminal and SVG pictures of local memory -----===//
#include "tessel/Render/NpuPicture.h"

#include <gtest/gtest.h>

using namespace tessel;

namespace {

LocalTensor make(Dims4 shape, NpuLayout layout, int64_t address,
                 PrimitiveType type = PrimitiveType::F32,
                 StorageMode mode = StorageMode::Normal) {
  TensorDesc d;
  d.shape = shape;
  d.layout = layout;
  d.address = address;
  d.type = type;
  d.mode = mode;
  Expected<LocalTensor> t = LocalTensor::get(NpuConfig::seed(), d);
  EXPECT_TRUE(t) << t.error().message;
  return *t;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size()))
    ++n;
  return n;
}

TEST(NpuPicture, SeedAlignedVersusCompactAtNpu0) {
  NpuPictureOptions o;
  Expected<std::string> aligned =
      drawMemoryText({{"x", make({2, 3, 4, 5}, NpuLayout::Aligned, 0)}}, o);
  ASSERT_TRUE(aligned);
  EXPECT_EQ(*aligned, "one character = 4 bytes, 32 per row\n"
                      "npu 0         0 |aaaaaaaa aaaaaaaa aaaa.... ........|\n"
                      "            128 |dddddddd dddddddd dddd.... ........|\n"
                      "npu 1         0 |bbbbbbbb bbbbbbbb bbbb.... ........|\n"
                      "            128 |eeeeeeee eeeeeeee eeee.... ........|\n"
                      "npu 2         0 |cccccccc cccccccc cccc.... ........|\n"
                      "            128 |ffffffff ffffffff ffff.... ........|\n"
                      "npu 3         0 |                                   |\n"
                      "            128 |                                   |\n"
                      "a (0,0)  b (0,1)  c (0,2)  d (1,0)  e (1,1)  f (1,2)\n"
                      ". padding  (blank) free\n");
  Expected<std::string> compact =
      drawMemoryText({{"x", make({2, 3, 4, 5}, NpuLayout::Compact, 0)}}, o);
  ASSERT_TRUE(compact);
  EXPECT_EQ(*compact, "one character = 4 bytes, 32 per row\n"
                      "npu 0         0 |aaaaaaaa aaaaaaaa aaaadddd dddddddd|\n"
                      "            128 |dddddddd                           |\n"
                      "npu 1         0 |bbbbbbbb bbbbbbbb bbbbeeee eeeeeeee|\n"
                      "            128 |eeeeeeee                           |\n"
                      "npu 2         0 |cccccccc cccccccc ccccffff ffffffff|\n"
                      "            128 |ffffffff                           |\n"
                      "npu 3         0 |                                   |\n"
                      "            128 |                                   |\n"
                      "a (0,0)  b (0,1)  c (0,2)  d (1,0)  e (1,1)  f (1,2)\n"
                      "(blank) free\n");
}

TEST(NpuPicture, SeedScatterFromNpu3) {
  // C = X + 2 at Q = X - 1: three slot rows, X - 1 empty in the first and
  // the third.
  NpuPictureOptions o;
  o.title = "C = 6 from npu 3";
  EXPECT_EQ(drawScatterText(make({1, 6, 1, 1}, NpuLayout::Compact, 3072), o),
            "C = 6 from npu 3\n"
            "                npu 0  npu 1  npu 2  npu 3\n"
            "n 0 slot 0          -      -      -  (0,0)\n"
            "n 0 slot 1      (0,1)  (0,2)  (0,3)  (0,4)\n"
            "n 0 slot 2      (0,5)      -      -      -\n"
            "(n,c) feature   - empty slot   . npu unused by the tensor\n");
  // C = X - 1 at Q = 1: NPU 0 unused.
  EXPECT_EQ(drawScatterText(make({2, 3, 1, 1}, NpuLayout::Compact, 1024),
                            NpuPictureOptions()),
            "                npu 0  npu 1  npu 2  npu 3\n"
            "n 0 slot 0          .  (0,0)  (0,1)  (0,2)\n"
            "n 1 slot 0          .  (1,0)  (1,1)  (1,2)\n"
            "(n,c) feature   - empty slot   . npu unused by the tensor\n");
}

TEST(NpuPicture, SeedAddresses) {
  Expected<std::string> text = drawAddressesText(
      NpuConfig::seed(), {340, 1472, 2300, 3088}, NpuPictureOptions());
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("npu 0         0 |........"), std::string::npos);
  EXPECT_NE(text->find("            256 |........ ........ .....A.. "
                       "........|\n"),
            std::string::npos);
  EXPECT_NE(text->find("            384 |........ ........ B....... "
                       "........|\n"),
            std::string::npos);
  EXPECT_NE(text->find("            128 |........ ........ ........ "
                       ".......C|\n"),
            std::string::npos);
  EXPECT_NE(text->find("npu 3         0 |....D... "), std::string::npos);
  EXPECT_NE(text->find("B 1472 = npu 1 offset 448\n"), std::string::npos);
  EXPECT_EQ(count(*text, "\n"), 1 + 32 + 4);
  // A big chip shows only the rows with addresses.
  Expected<std::string> big = drawAddressesText(*NpuConfig::preset("bm1684"),
                                                {600000}, NpuPictureOptions());
  ASSERT_TRUE(big);
  EXPECT_EQ(*big, "one character = 4 bytes, 32 per row\n"
                  "npu 1     75648 |........ ........ A....... ........|\n"
                  "A 600000 = npu 1 offset 75712\n");
  EXPECT_FALSE(
      drawAddressesText(NpuConfig::seed(), {4096}, NpuPictureOptions()));
}

TEST(NpuPicture, PackedModesSplitBlocksIntoLanes) {
  NpuPictureOptions o;
  LocalTensor t = make({6, 5, 4, 5}, NpuLayout::Aligned, 0, PrimitiveType::S8,
                       StorageMode::N4);
  Expected<std::string> svg = drawMemorySvg({{"w", t}}, o);
  ASSERT_TRUE(svg);
  // Two dummy lanes in each of the 5 * 4 * 5 int8x4 elements of n' = 1.
  EXPECT_EQ(count(*svg, "fill=\"#999\">0</text>"), 200u);
  EXPECT_EQ(count(*svg, ">n5</text>"), 100u);
  EXPECT_NE(svg->find("(n 4..5, c 0)"), std::string::npos);
  Expected<std::string> text = drawMemoryText({{"w", t}}, o);
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("0 dummy"), std::string::npos);
}

TEST(NpuPicture, MatrixTailAndSvgShape) {
  TensorDesc d;
  d.shape = {2, 40, 1, 1};
  d.layout = NpuLayout::Matrix;
  d.matrixW = 15;
  LocalTensor t = *LocalTensor::get(NpuConfig::seed(), d);
  Expected<std::string> text = drawMemoryText({{"m", t}}, NpuPictureOptions());
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("npu 2         0 |cccccccc cc=====. "),
            std::string::npos);
  EXPECT_NE(text->find("c row 0 cols 30..39"), std::string::npos);
  Expected<std::string> svg = drawMemorySvg({{"m", t}}, NpuPictureOptions());
  ASSERT_TRUE(svg);
  EXPECT_EQ(svg->rfind("<svg", 0), 0u);
  EXPECT_EQ(count(*svg, "</svg>"), 1u);
  // 4 NPUs x 2 rows x 32 blocks, one rect each, plus background and legend.
  EXPECT_GE(count(*svg, "<rect"), 256u);
  EXPECT_EQ(count(*svg, ">39</text>"), 2u);
}

TEST(NpuPicture, Errors) {
  NpuPictureOptions o;
  o.rowBytes = 6;
  EXPECT_EQ(
      drawMemoryText({{"x", make({1, 1, 1, 1}, NpuLayout::Aligned, 0)}}, o)
          .error()
          .message,
      "a row of 6 bytes is not 1..512 blocks of 4 bytes");
  NpuPictureOptions small;
  small.maxRowsPerNpu = 1;
  EXPECT_EQ(
      drawMemoryText({{"x", make({2, 3, 4, 5}, NpuLayout::Aligned, 0)}}, small)
          .error()
          .message,
      "the picture would have 2 rows per npu, more than 1; draw a "
      "smaller tensor or use wider rows");
}

} // namespace
