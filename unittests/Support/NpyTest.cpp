//===- NpyTest.cpp - .npy reading and writing -----------------------------===//
#include "tessel/Support/Npy.h"
#include "tessel/Layout/PrimitiveType.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tessel;

namespace {

std::string input(const char *name) {
  return std::string(TESSEL_TEST_INPUTS) + "/" + name;
}

TEST(Npy, ReadsFilesNumpyWrote) {
  Expected<NpyArray> a = readNpyFile(input("f32_2x3.npy"));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->descr, "<f4");
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(a->fortranOrder);
  ASSERT_EQ(a->data.size(), 24u);
  float values[6];
  std::memcpy(values, a->data.data(), 24);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(values[i], static_cast<float>(i));

  Expected<NpyArray> b = readNpyFile(input("bf16_4.npy"));
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(b->descr, "<V2");
  EXPECT_TRUE(npyDescrMatches(b->descr, PrimitiveType::BF16));
  EXPECT_FALSE(npyDescrMatches(b->descr, PrimitiveType::F32));
  // bf16 1.0 is 0x3f80.
  EXPECT_EQ(static_cast<unsigned char>(b->data[0]), 0x80);
  EXPECT_EQ(static_cast<unsigned char>(b->data[1]), 0x3f);

  Expected<NpyArray> c = readNpyFile(input("bool_scalar.npy"));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->shape.empty());
  EXPECT_EQ(primitiveTypeFromNpyDescr(c->descr), PrimitiveType::Pred);
  EXPECT_EQ(c->data, std::string(1, '\1'));

  Expected<NpyArray> d = readNpyFile(input("i64_fortran.npy"));
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(d->fortranOrder);
  EXPECT_EQ(d->shape, (std::vector<int64_t>{3, 2}));
}

TEST(Npy, WriteThenParseRoundTrips) {
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, {7}, {2, 3, 4}, {0, 5}}) {
    NpyArray a;
    a.descr = "<i2";
    a.shape = shape;
    a.data.assign(2 * a.elementCount(), '\x5a');
    std::string bytes = writeNpy(a);
    EXPECT_EQ((bytes.size() - a.data.size()) % 64, 0u);
    Expected<NpyArray> b = parseNpy(bytes);
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_EQ(b->shape, shape);
    EXPECT_EQ(b->descr, "<i2");
    EXPECT_EQ(b->data, a.data);
  }
}

TEST(Npy, ErrorsSayWhatIsWrong) {
  EXPECT_EQ(parseNpy("hello world").error().message,
            "not a .npy file: it does not start with \\x93NUMPY");
  NpyArray a;
  a.descr = "<f4";
  a.shape = {2, 3};
  a.data.assign(24, '\0');
  std::string bytes = writeNpy(a);
  EXPECT_EQ(parseNpy(bytes.substr(0, bytes.size() - 4)).error().message,
            "npy data holds 20 bytes, expected 24 for 6 elements of '<f4'");
  EXPECT_EQ(parseNpy(bytes.substr(0, 40)).error().message,
            "npy file ends inside its header");
  EXPECT_EQ(readNpyFile("/nonexistent/x.npy").error().message,
            "cannot open /nonexistent/x.npy: no such file or directory");
  // A header error names the byte of the file (as the column of line 1);
  // the binary file shows no line.
  std::string bad = bytes;
  bad[10] = '[';
  Expected<NpyArray> header = parseNpy(bad);
  ASSERT_FALSE(header);
  EXPECT_EQ(renderError(header.error().inSource("x.npy")),
            "x.npy:1:11: error: npy header: expected '{'");
}

TEST(Npy, DescrsOfEveryType) {
  for (PrimitiveType type : kArrayTypes) {
    std::string descr = npyDescr(type);
    EXPECT_TRUE(npyDescrMatches(descr, type)) << descr;
    NpyArray a{descr, {1}, false, std::string(byteWidth(type), '\0')};
    EXPECT_EQ(a.itemSize(), byteWidth(type)) << descr;
  }
  EXPECT_EQ(primitiveTypeFromNpyDescr("<f4"), PrimitiveType::F32);
  EXPECT_EQ(primitiveTypeFromNpyDescr("|u1"), PrimitiveType::U8);
  EXPECT_EQ(primitiveTypeFromNpyDescr("<V2"), std::nullopt);
  EXPECT_EQ(primitiveTypeFromNpyDescr(">f4"), std::nullopt);
}

} // namespace
