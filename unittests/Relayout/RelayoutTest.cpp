//===- RelayoutTest.cpp - Relayout plans against the per-element oracle ---===//
#include "tessel/Relayout/Relayout.h"
#include "tessel/Layout/ShapeParser.h"

#include "RandomLayouts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

using namespace tessel;

namespace {

using Bytes = std::vector<uint8_t>;

Shape parse(const std::string &text) {
  Expected<Shape> shape = parseShape(text);
  EXPECT_TRUE(shape) << text << ": " << shape.error().message;
  return shape ? *shape : Shape();
}

TiledLayout compile(const Shape &shape) {
  Expected<TiledLayout> layout = TiledLayout::get(shape);
  EXPECT_TRUE(layout) << shape.toString() << ": " << layout.error().message;
  return *layout;
}

Bytes randomBytes(std::mt19937 &rng, int64_t size) {
  Bytes bytes(size);
  for (uint8_t &byte : bytes)
    byte = static_cast<uint8_t>(rng());
  return bytes;
}

Bytes reference(const Shape &from, const Shape &to, const Bytes &src) {
  TiledLayout a = compile(from), b = compile(to);
  Bytes dst(b.physicalBytes(), 0xEE);
  relayoutReference(a, b, src.data(), dst.data());
  return dst;
}

/// Runs a plan on src into a destination pre-filled with 0xFF garbage that
/// starts `misalign` bytes past a 64-byte boundary (the streaming kernels
/// peel a head of ordinary stores up to the first line boundary, or use
/// ordinary stores throughout where no boundary falls between elements).
Bytes run(const Shape &from, const Shape &to, const Bytes &src,
          RelayoutOptions options = {}, std::string *description = nullptr,
          int64_t misalign = 0) {
  Expected<RelayoutPlan> plan = RelayoutPlan::create(from, to, options);
  EXPECT_TRUE(plan) << plan.error().message;
  if (!plan)
    return {};
  if (description)
    *description = plan->describe();
  if (!options.isa.empty()) {
    EXPECT_EQ(plan->isa(), options.isa);
  }
  Bytes storage(plan->destinationBytes() + 128, 0xFF);
  uint8_t *dst = storage.data() +
                 (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64 +
                 misalign;
  Status error =
      plan->execute(src.data(), src.size(), dst, plan->destinationBytes());
  EXPECT_TRUE(error) << error.error().message;
  return Bytes(dst, dst + plan->destinationBytes());
}

/// A random layout for `shape`'s type and dims: row-major, TPU-like tiles
/// (with the packing tile of 16- and 8-bit types), or random tiles with
/// `*`, more dims than the shape, L(n) and E(n).
Layout randomLayout(std::mt19937 &rng, const Shape &shape) {
  auto pick = [&](std::initializer_list<int64_t> values) {
    return tessel::testing::pickOne(rng, values);
  };
  auto chance = [&](int percent) {
    return tessel::testing::withChance(rng, percent);
  };
  int64_t rank = shape.rank();
  Layout layout = Layout::rowMajor(rank);
  if (!chance(40))
    std::shuffle(layout.minorToMajor.begin(), layout.minorToMajor.end(), rng);
  int kind = static_cast<int>(rng() % 4);
  if (kind == 1) {
    layout.tiles.push_back(Tile({pick({1, 2, 4, 8}), pick({4, 16, 128})}));
    int bytes = byteWidth(shape.elementType);
    if (bytes <= 2 && chance(70))
      layout.tiles.push_back(Tile({bytes == 2 ? 2 : 4, 1}));
  } else if (kind >= 2) {
    int64_t tiles = pick({1, 1, 2, 3});
    for (int64_t t = 0; t < tiles; ++t)
      layout.tiles.push_back(tessel::testing::randomTile(rng));
  }
  if (chance(10))
    layout.tailPaddingAlignment = pick({2, 3, 8, 64});
  int natural = bitWidth(shape.elementType);
  if (natural < 8 && chance(70))
    layout.elementSizeInBits = chance(80) ? natural : pick({5, 6, 7, 8});
  return layout;
}

/// Another layout of the same type and dims, small enough to check.
Shape withRandomLayout(std::mt19937 &rng, const Shape &shape,
                       int64_t maxElements) {
  for (;;) {
    Shape result(shape.elementType, shape.dims, randomLayout(rng, shape));
    Expected<TiledLayout> layout = TiledLayout::get(result);
    if (layout && layout->physicalElements() <= maxElements)
      return result;
  }
}

TEST(Relayout, FigureOneOfTheDocument) {
  std::vector<float> src(15);
  for (int i = 0; i < 15; ++i)
    src[i] = static_cast<float>(i);
  Bytes in(60);
  std::memcpy(in.data(), src.data(), 60);
  Bytes out = run(parse("f32[3,5]{1,0}"), parse("f32[3,5]{1,0:T(2,2)}"), in);
  ASSERT_EQ(out.size(), 96u);
  std::vector<float> tiled(24);
  std::memcpy(tiled.data(), out.data(), 96);
  EXPECT_EQ(tiled,
            (std::vector<float>{0,  1,  5, 6, 2,  3,  7, 8, 4,  0, 9, 0,
                                10, 11, 0, 0, 12, 13, 0, 0, 14, 0, 0, 0}));
  Bytes back = run(parse("f32[3,5]{1,0:T(2,2)}"), parse("f32[3,5]{1,0}"), out);
  EXPECT_EQ(back, in);
}

TEST(Relayout, SubByteElementsPackLowBitsFirst) {
  // s4 row-major with E(4): element k holds bits [4k, 4k+4).
  Bytes in = {0x21, 0x43, 0x05}; // elements 1,2,3,4,5,0 of s4[2,3]
  Bytes out = run(parse("s4[2,3]{1,0:E(4)}"), parse("s4[2,3]{0,1:E(4)}"), in);
  // Column-major: 1,4,2,5,3,0.
  EXPECT_EQ(out, (Bytes{0x41, 0x52, 0x03}));
  // Unpacking to one byte per element sign-extends: 0xF is -1.
  Bytes unpacked = run(parse("s4[2]{0:E(4)}"), parse("s4[2]{0}"), {0x7F});
  EXPECT_EQ(unpacked, (Bytes{0xFF, 0x07}));
  // pred E(1): eight values a byte, padding bits zero.
  Bytes bits = run(parse("pred[3,3]{1,0}"), parse("pred[3,3]{1,0:E(1)}"),
                   {1, 0, 1, 1, 1, 0, 0, 0, 1});
  EXPECT_EQ(bits, (Bytes{0x1D, 0x01}));
}

TEST(Relayout, RandomLayoutPairsAgreeWithTheReference) {
  tessel::testing::RandomLayouts shapes(7);
  std::mt19937 rng(11);
  int64_t checked = 0, identities = 0;
  for (int i = 0; i < 1500; ++i) {
    Shape from = shapes.next(2048);
    Shape to = withRandomLayout(rng, from, 4096);
    SCOPED_TRACE(from.toString() + " -> " + to.toString());
    Bytes src = randomBytes(rng, compile(from).physicalBytes());
    RelayoutOptions options;
    options.threads = 1 + static_cast<int>(rng() % 3);
    options.parallelThresholdBytes = rng() % 2 ? 0 : -1;
    options.streamingThresholdBytes = rng() % 2 ? 0 : -1;
    int64_t misalign = rng() % 4 ? 0 : 8;
    Bytes expected = reference(from, to, src);
    Bytes back = reference(to, from, expected);
    // Every instruction set level this CPU has, the same bytes.
    for (const std::string &isa : relayoutIsaLevels()) {
      SCOPED_TRACE(isa);
      options.isa = isa;
      ASSERT_EQ(run(from, to, src, options, nullptr, misalign), expected);
      // Back again: the reverse plan agrees too.
      ASSERT_EQ(run(to, from, expected, options, nullptr, misalign), back);
    }
    // When no bits are lost (same element size) A -> B -> A gives the data
    // back with A's padding zeroed.
    if (compile(from).elementBits() == compile(to).elementBits()) {
      ASSERT_EQ(back, reference(from, from, src));
      ++identities;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 1500);
  EXPECT_GT(identities, 1000);
}

/// Checks a fast path both ways against the reference, with ordinary and
/// streaming stores, and that create() picked the kernel named `kernel`.
void checkFastPath(const std::string &fromText, const std::string &toText,
                   const std::string &kernel, std::mt19937 &rng) {
  Shape from = parse(fromText), to = parse(toText);
  SCOPED_TRACE(fromText + " <-> " + toText);
  Bytes src = randomBytes(rng, compile(from).physicalBytes());
  Bytes expected = reference(from, to, src);
  Bytes back = reference(to, from, expected);
  // The way back ignores whatever the source's padding holds: refill it
  // with garbage (the mask has 0xFF on data bytes, 0 on padding).
  TiledLayout tiled = compile(to);
  Bytes ones(expected.size(), 0xFF), mask(expected.size());
  relayoutReference(tiled, tiled, ones.data(), mask.data());
  Bytes garbage = randomBytes(rng, expected.size());
  for (size_t i = 0; i < garbage.size(); ++i)
    garbage[i] = (expected[i] & mask[i]) | (garbage[i] & ~mask[i]);
  std::string inverse = kernel == "tile rows" ? "untile rows" : kernel;
  for (const std::string &isa : relayoutIsaLevels())
    for (int64_t streaming : {-1, 0})
      for (int64_t misalign : {0, 16, 1, 8, 48}) {
        SCOPED_TRACE(isa + (streaming ? " ordinary" : " streaming") +
                     " stores, destination 64-byte boundary + " +
                     std::to_string(misalign));
        RelayoutOptions options;
        options.isa = isa;
        options.streamingThresholdBytes = streaming;
        options.parallelThresholdBytes = 0;
        std::string forward, backward;
        EXPECT_EQ(run(from, to, src, options, &forward, misalign), expected);
        EXPECT_NE(forward.find(kernel), std::string::npos) << forward;
        EXPECT_EQ(run(to, from, garbage, options, &backward, misalign), back);
        EXPECT_NE(backward.find(inverse), std::string::npos) << backward;
      }
}

TEST(Relayout, TileFastPathsAgreeWithTheReference) {
  std::mt19937 rng(5);
  const char *cases[][2] = {
      {"f32[3,5]", "{1,0:T(2,2)}"},
      {"f32[16,256]", "{1,0:T(8,128)}"},
      {"f32[2,9,300]", "{2,1,0:T(8,128)}"},
      {"f32[17,129]", "{1,0:T(8,128)}"},
      {"f32[130]", "{0:T(8,128)}"},
      {"f32[3,130]", "{1,0:T(2,128)}"},
      {"f32[7,300]", "{1,0:T(4,128)}"},
      {"f32[9,260]", "{1,0:T(8,128)L(1024)}"},
      {"bf16[16,256]", "{1,0:T(8,128)(2,1)}"},
      {"bf16[5,33,259]", "{2,1,0:T(8,128)(2,1)}"},
      {"bf16[3,300]", "{1,0:T(4,128)(2,1)}"},
      {"s8[32,128]", "{1,0:T(8,128)(4,1)}"},
      {"s8[37,131]", "{1,0:T(8,128)(4,1)}"},
      {"pred[9,140]", "{1,0:T(8,128)(4,1)}"},
      {"s8[2,11,40]", "{2,1,0:T(2,128)(2,1)}"},
      {"f64[5,129]", "{1,0:T(8,128)}"},
      {"c128[3,17]", "{1,0:T(2,4)}"},
  };
  for (auto &[shape, layout] : cases) {
    std::string base(shape);
    int64_t rank = parse(base).rank();
    std::string rowMajor = Layout::rowMajor(rank).toString();
    checkFastPath(base + rowMajor, base + layout, "tile rows", rng);
  }
}

// A tiling whose dims are in another order than row-major, the same on both
// sides, tiles the array in that order (the tiles cover the two most minor
// dims of the physical order).
TEST(Relayout, TilingsInAnyDimOrderAgreeWithTheReference) {
  std::mt19937 rng(21);
  const char *cases[][3] = {
      {"f32[5,17,260]", "{1,2,0}", "{1,2,0:T(8,128)}"},
      {"f32[9,300]", "{0,1}", "{0,1:T(8,128)}"},
      {"bf16[3,40,33]", "{0,2,1}", "{0,2,1:T(8,128)(2,1)}"},
      {"s8[2,3,37,131]", "{2,3,0,1}", "{2,3,0,1:T(8,128)(4,1)}"},
      {"s4[6,16,20]", "{1,2,0:E(4)}", "{1,2,0:T(8,128)E(4)}"},
  };
  for (auto &[shape, plain, tiled] : cases)
    checkFastPath(std::string(shape) + plain, std::string(shape) + tiled,
                  "tile rows", rng);
}

// A tiling into another dim order than the source's goes in two steps
// through a plain buffer of the tiled side's order: a permute then a tiling,
// or an untiling then a permute.
TEST(Relayout, TilingsThatPermuteGoInTwoSteps) {
  std::mt19937 rng(22);
  const char *cases[][2] = {
      {"f32[5,17,260]{2,1,0}", "f32[5,17,260]{1,2,0:T(8,128)}"},
      {"f32[300,9]{1,0}", "f32[300,9]{0,1:T(8,128)}"},
      {"bf16[3,40,33]{2,1,0}", "bf16[3,40,33]{0,2,1:T(8,128)(2,1)}"},
      {"s8[2,3,37,131]{3,2,1,0}", "s8[2,3,37,131]{2,3,0,1:T(8,128)(4,1)}"},
      {"f32[4,6,130]{0,1,2}", "f32[4,6,130]{2,0,1:T(2,128)}"},
      // Packed 4-bit elements: the permute is the sub-byte transpose.
      {"s4[3,40,260]{2,1,0:E(4)}", "s4[3,40,260]{1,2,0:T(8,128)E(4)}"},
      // Tiled on both sides in different orders (other than a batch of
      // tiled transposes): an untiling, then the two steps.
      {"bf16[3,40,33]{2,1,0:T(8,128)(2,1)}", "bf16[3,40,33]{0,2,1:T(4,128)}"},
      {"f32[5,17,260]{2,1,0:T(8,128)}", "f32[5,17,260]{0,2,1:T(8,128)}"},
  };
  for (auto &[from, to] : cases)
    checkFastPath(from, to, "two steps", rng);
  // Where the minor dim stays, the generic kernel copies runs of 512 bytes
  // in one pass, and keeps the relayout.
  const char *plain = "f32[4,6,260]{2,1,0}",
             *tiled = "f32[4,6,260]{2,0,1:T(2,128)}";
  for (auto [from, to] : {std::pair(plain, tiled), std::pair(tiled, plain)}) {
    std::string text = RelayoutPlan::create(parse(from), parse(to))->describe();
    EXPECT_NE(text.find("generic"), std::string::npos) << text;
  }
  // A plan reused keeps its middle buffer; two threads at once each get one.
  Shape from = parse("f32[5,17,260]{2,1,0}"),
        to = parse("f32[5,17,260]{1,2,0:T(8,128)}");
  Expected<RelayoutPlan> plan = RelayoutPlan::create(from, to);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_NE(plan->describe().find("two steps through a f32[5,17,260]{1,2,0} "
                                  "buffer: permute"),
            std::string::npos)
      << plan->describe();
  Bytes src = randomBytes(rng, plan->sourceBytes());
  Bytes expected = reference(from, to, src);
  std::vector<Bytes> outputs(4, Bytes(plan->destinationBytes()));
  auto runInto = [&](Bytes &out) {
    EXPECT_TRUE(plan->execute(src.data(), src.size(), out.data(), out.size()));
  };
  runInto(outputs[0]);
  runInto(outputs[1]);
  std::thread other([&] { runInto(outputs[2]); });
  runInto(outputs[3]);
  other.join();
  for (const Bytes &out : outputs)
    EXPECT_EQ(out, expected);
  // A middle buffer the machine cannot hold fails with a message, before
  // anything is read or written (the buffers here are only named by size).
  Expected<RelayoutPlan> huge =
      RelayoutPlan::create(parse("f32[1048576,1048576]{1,0}"),
                           parse("f32[1048576,1048576]{0,1:T(8,128)}"));
  ASSERT_TRUE(huge) << huge.error().message;
  ASSERT_NE(huge->describe().find("two steps"), std::string::npos)
      << huge->describe();
  uint8_t byte = 0;
  Status failed = huge->execute(&byte, huge->sourceBytes(), &byte,
                                huge->destinationBytes());
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find(
                "a relayout in two steps needs a buffer of 4398046511104 "
                "bytes (4096.0 GiB) in the middle, more than this machine can "
                "allocate"),
            std::string::npos)
      << failed.error().message;
}

// Packed sub-byte elements whose matrix rows and tile rows are whole bytes
// tile and untile as bytes (T(8,128) of s4 is T(8,64) of bytes); odd
// rows of s4 (a row starts inside a byte) stay with the bit walk.
TEST(Relayout, SubByteTilesMoveAsBytes) {
  std::mt19937 rng(13);
  const char *cases[][3] = {
      {"s4[16,256]", "{1,0:E(4)}", "{1,0:T(8,128)E(4)}"},
      {"s4[37,262]", "{1,0:E(4)}", "{1,0:T(8,128)E(4)}"},
      {"u4[3,5,300]", "{2,1,0:E(4)}", "{2,1,0:T(8,128)E(4)}"},
      {"s4[9,140]", "{1,0:E(4)}", "{1,0:T(4,128)L(1024)E(4)}"},
      {"u2[11,68]", "{1,0:E(2)}", "{1,0:T(8,64)E(2)}"},
      {"pred[9,136]", "{1,0:E(1)}", "{1,0:T(8,128)E(1)}"},
  };
  for (auto &[shape, rowMajor, tiled] : cases)
    checkFastPath(std::string(shape) + rowMajor, std::string(shape) + tiled,
                  "tile rows", rng);
  std::string described = RelayoutPlan::create(parse("s4[16,256]{1,0:E(4)}"),
                                               parse("s4[16,256]{1,0:T(8,"
                                                     "128)E(4)}"))
                              ->describe();
  EXPECT_NE(
      described.find("tile rows into (8,128) tiles, 4-bit elements moved as "
                     "bytes"),
      std::string::npos)
      << described;
  for (const char *odd :
       {"s4[6,7]{1,0:T(8,128)E(4)}", "s4[6,8]{1,0:T(8,3)E(4)}"}) {
    Shape to = parse(odd);
    Shape from(to.elementType, to.dims, parse("s4[1,1]{1,0:E(4)}").layout);
    std::string text = RelayoutPlan::create(from, to)->describe();
    EXPECT_EQ(text.find("tile rows"), std::string::npos) << text;
    Bytes src = randomBytes(rng, compile(from).physicalBytes());
    EXPECT_EQ(run(from, to, src), reference(from, to, src)) << odd;
  }
}

TEST(Relayout, RetileFastPathAgreesWithTheReference) {
  std::mt19937 rng(8);
  const char *cases[][2] = {
      {"bf16[5,33,259]{2,1,0:T(8,128)(2,1)}", "bf16[5,33,259]{2,1,0:T(8,128)}"},
      {"f32[17,129]{1,0:T(8,128)}", "f32[17,129]{1,0:T(4,128)}"},
      {"f32[3,130]{1,0:T(2,128)}", "f32[3,130]{1,0:T(8,128)L(2048)}"},
      {"s8[37,131]{1,0:T(8,128)(4,1)}", "s8[37,131]{1,0:T(2,128)(2,1)}"},
      {"f32[130]{0:T(8,128)}", "f32[130]{0:T(3,16)}"},
      {"c128[6,20]{1,0:T(2,8)}", "c128[6,20]{1,0:T(3,4)}"},
  };
  for (auto &[from, to] : cases)
    checkFastPath(from, to, "retile", rng);
  // The same tile width, no (k,1), whole bands and tile columns: runs of
  // gcd(a, a') rows straight from tile to tile, both ways.
  const char *direct[][2] = {
      {"f32[16,256]{1,0:T(8,128)}", "f32[16,256]{1,0:T(4,128)}"},
      {"f32[2,24,384]{2,1,0:T(8,128)}", "f32[2,24,384]{2,1,0:T(2,128)}"},
      {"bf16[48,256]{1,0:T(16,128)}", "bf16[48,256]{1,0:T(8,128)L(16384)}"},
      {"s8[24,128]{1,0:T(8,128)}", "s8[24,128]{1,0:T(12,128)}"},
  };
  for (auto &[from, to] : direct)
    checkFastPath(from, to, "straight from tile to tile", rng);
  // The same tiles but for (k,1) on one side, whole tiles: tile by tile.
  const char *paired[][2] = {
      {"bf16[16,256]{1,0:T(8,128)(2,1)}", "bf16[16,256]{1,0:T(8,128)}"},
      {"s8[2,8,384]{2,1,0:T(8,128)(4,1)}", "s8[2,8,384]{2,1,0:T(8,128)}"},
      {"bf16[24,128]{1,0:T(4,128)}", "bf16[24,128]{1,0:T(4,128)(2,1)}"},
  };
  for (auto &[from, to] : paired)
    checkFastPath(from, to, "tile by tile", rng);
}

TEST(Relayout, TiledTransposeAgreesWithTheReference) {
  std::mt19937 rng(12);
  const char *cases[][2] = {
      {"f32[256,384]{1,0:T(8,128)}", "f32[256,384]{0,1:T(8,128)}"},
      // Ragged both ways, more than one block each way.
      {"f32[300,141]{1,0:T(8,128)}", "f32[300,141]{0,1:T(8,128)}"},
      {"bf16[67,300]{0,1:T(8,128)}", "bf16[67,300]{1,0:T(4,128)}"},
      {"s8[130,257]{1,0:T(8,128)}", "s8[130,257]{0,1:T(32,128)}"},
      {"f64[37,19]{1,0:T(2,4)}", "f64[37,19]{0,1:T(8,2)L(512)}"},
      {"c128[9,10]{1,0:T(2,4)}", "c128[9,10]{0,1:T(4,2)}"},
      // A batch: the two minor dims of the physical order swapped, the
      // leading ones the same (ragged matrices, so each one's padding).
      {"f32[5,17,260]{2,1,0:T(8,128)}", "f32[5,17,260]{1,2,0:T(8,128)}"},
      {"bf16[67,300,3,2]{1,0,3,2:T(8,128)}",
       "bf16[67,300,3,2]{0,1,3,2:T(4,128)}"},
      {"f32[2,256,3,384]{3,1,2,0:T(8,128)}",
       "f32[2,256,3,384]{1,3,2,0:T(8,128)}"},
  };
  for (auto &[from, to] : cases)
    checkFastPath(from, to, "tiled transpose", rng);
  std::string batched =
      RelayoutPlan::create(parse("f32[5,17,260]{2,1,0:T(8,128)}"),
                           parse("f32[5,17,260]{1,2,0:T(8,128)}"))
          ->describe();
  EXPECT_NE(batched.find("tiled transpose of 5 matrices"), std::string::npos)
      << batched;
  // Blocks inside the array go straight from tile to tile in bands of
  // 64 / element-size rows (transposeRows of each level), both ways; the
  // blocks at ragged edges still go through the stages.
  const char *direct[][2] = {
      {"f32[256,384]{1,0:T(8,128)}", "f32[256,384]{0,1:T(8,128)}"},
      {"f32[300,141]{1,0:T(8,128)}", "f32[300,141]{0,1:T(8,128)}"},
      {"bf16[256,300]{1,0:T(8,128)}", "bf16[256,300]{0,1:T(8,128)}"},
      {"s8[256,390]{1,0:T(32,128)}", "s8[256,390]{0,1:T(32,128)}"},
      {"f64[70,40]{1,0:T(8,16)}", "f64[70,40]{0,1:T(4,8)}"},
      // Tiles of 3 rows: a band of 16 rows spans six tiles.
      {"f32[800,260]{1,0:T(3,128)}", "f32[800,260]{0,1:T(8,128)}"},
      // 4- and 8-byte bands go two at a time: blocks of one band, and of
      // three (a pair, then one alone).
      {"f32[100,200]{1,0:T(8,16)}", "f32[100,200]{0,1:T(8,16)}"},
      {"f32[200,160]{1,0:T(3,16)}", "f32[200,160]{0,1:T(8,16)}"},
      {"f64[100,70]{1,0:T(3,16)}", "f64[100,70]{0,1:T(4,8)}"},
  };
  for (auto &[from, to] : direct)
    checkFastPath(from, to, "straight from tiles to tiles", rng);
  // 4- and 8-byte elements go two bands at a time.
  std::string pairs = RelayoutPlan::create(parse("f32[256,384]{1,0:T(8,128)}"),
                                           parse("f32[256,384]{0,1:T(8,128)}"))
                          ->describe();
  EXPECT_NE(pairs.find("bands of 16 rows, two at a time"), std::string::npos)
      << pairs;
  // Direct one way only (the other way's tile rows are 24 elements, not
  // whole lines); tile rows of 24 columns leave 8 to the scalar rest.
  checkFastPath("f32[70,100]{1,0:T(8,24)}", "f32[70,100]{0,1:T(8,32)}",
                "tiled transpose", rng);
  std::string forward = RelayoutPlan::create(parse("f32[70,100]{1,0:T(8,24)}"),
                                             parse("f32[70,100]{0,1:T(8,32)}"))
                            ->describe();
  EXPECT_NE(forward.find("straight from tiles to tiles in bands of 16 rows"),
            std::string::npos)
      << forward;
}

TEST(Relayout, PermuteFastPathsAgreeWithTheReference) {
  std::mt19937 rng(6);
  const char *transposes[][2] = {
      {"f32[67,301]{1,0}", "f32[67,301]{0,1}"},
      {"f32[64,64]{1,0}", "f32[64,64]{0,1}"},
      // More than one 256-byte staged block each way, ragged at both ends.
      {"f32[130,201]{1,0}", "f32[130,201]{0,1}"},
      {"bf16[150,270]{1,0}", "bf16[150,270]{0,1}"},
      {"s8[300,517]{1,0}", "s8[300,517]{0,1}"},
      {"f64[70,45]{1,0}", "f64[70,45]{0,1}"},
      {"bf16[33,65]{1,0}", "bf16[33,65]{0,1}"},
      {"s8[35,70]{1,0}", "s8[35,70]{0,1}"},
      // Source rows 4 KiB apart: the s8 and bf16 bands (and f32's at avx2)
      // copy them to a tile (and prefetch them).
      {"s8[70,4096]{1,0}", "s8[70,4096]{0,1}"},
      {"bf16[40,2048]{1,0}", "bf16[40,2048]{0,1}"},
      {"f32[40,1024]{1,0}", "f32[40,1024]{0,1}"},
      // Four bands at once and more (transposeWideBand, and f32's grouped
      // bands at avx512), rows 4 KiB apart or not, a band or two left over.
      {"s8[300,4096]{1,0}", "s8[300,4096]{0,1}"},
      {"bf16[170,2048]{1,0}", "bf16[170,2048]{0,1}"},
      // 2-byte elements 128 rows and 128 columns at a time
      // (wideBandSquares): columns and rows left over, rows 4 KiB apart or
      // not, an outer dim.
      {"bf16[300,1000]{1,0}", "bf16[300,1000]{0,1}"},
      {"f16[130,4096]{1,0}", "f16[130,4096]{0,1}"},
      {"u16[3,130,300]{2,1,0}", "u16[3,130,300]{1,2,0}"},
      // 1-byte elements 256 rows and 512, then 128, columns at a time
      // (wideBandSquares): both column blocks, columns and rows left over,
      // an outer dim.
      {"s8[600,1400]{1,0}", "s8[600,1400]{0,1}"},
      {"u8[2,260,700]{2,1,0}", "u8[2,260,700]{1,2,0}"},
      {"f32[100,1030]{1,0}", "f32[100,1030]{0,1}"},
      {"u8[129,17]{0,1}", "u8[129,17]{1,0}"},
      {"f64[17,9]{1,0}", "f64[17,9]{0,1}"},
      {"c128[5,7]{1,0}", "c128[5,7]{0,1}"},
      {"f32[3,4,5,6]{3,2,1,0}", "f32[3,4,5,6]{0,2,1,3}"},
      {"f32[2,3,40,50]{3,2,1,0}", "f32[2,3,40,50]{2,3,1,0}"},
      {"bf16[3,1,17,5,2]{4,3,2,1,0}", "bf16[3,1,17,5,2]{1,3,0,2,4}"},
      {"s8[4,1,33,18]{3,2,1,0}", "s8[4,1,33,18]{2,3,1,0:L(64)}"},
  };
  for (auto &[from, to] : transposes)
    checkFastPath(from, to, "blocked transpose", rng);
  const char *rowCopies[][2] = {
      {"f32[4,5,6]{2,1,0}", "f32[4,5,6]{2,0,1}"},
      {"f32[40,50]{1,0}", "f32[40,50]{1,0}"},
      {"c128[3,2,7]{2,1,0}", "c128[3,2,7]{2,0,1}"},
      {"f32[]{}", "f32[]{}"},
  };
  for (auto &[from, to] : rowCopies)
    checkFastPath(from, to, "copy rows", rng);
}

/// Transposes whose bands are short contiguous runs of the source (rows of
/// at most 4 KiB / (64 / element size) bytes): at avx2 and avx512 the outer
/// dims then run in the source's order and each band prefetches the next.
/// Ragged slices, outer dims of odd sizes whose order changes, tiny rows.
TEST(Relayout, PermutesOfShortRowsAgreeWithTheReference) {
  std::mt19937 rng(12);
  const char *transposes[][2] = {
      {"f32[3,5,37,64]{3,2,1,0}", "f32[3,5,37,64]{2,0,3,1}"},
      {"f32[4,3,50,16]{3,2,1,0}", "f32[4,3,50,16]{2,0,3,1}"},
      {"bf16[5,2,70,64]{3,2,1,0}", "bf16[5,2,70,64]{2,0,3,1}"},
      {"s8[3,3,100,48]{3,2,1,0}", "s8[3,3,100,48]{2,0,3,1}"},
      {"f64[3,4,20,32]{3,2,1,0}", "f64[3,4,20,32]{2,0,3,1}"},
      {"f32[3,70,64]{2,1,0}", "f32[3,70,64]{1,0,2}"},
      {"f32[2,3,4,33,16]{4,3,2,1,0}", "f32[2,3,4,33,16]{3,0,4,2,1}"},
      {"bf16[2,3,4,33,16]{4,3,2,1,0}", "bf16[2,3,4,33,16]{3,0,4,2,1}"},
      {"f32[7,5,17,3]{3,2,1,0}", "f32[7,5,17,3]{2,0,3,1}"},
  };
  for (auto &[from, to] : transposes)
    checkFastPath(from, to, "blocked transpose", rng);
}

TEST(Relayout, ThreadCountsGiveTheSameBytes) {
  std::mt19937 rng(3);
  for (const char *text :
       {"f32[67,301]{0,1}", "bf16[3,40,129]{1,2,0:T(8,128)(2,1)}",
        "s8[130,257]{1,0:T(8,128)(4,1)}", "c128[17,33]{0,1}",
        "f64[5,7,9,11]{2,0,3,1:T(2,4)}", "f32[64,65,3]{2,1,0:T(*,8,16)}",
        "f32[3,5,37,64]{2,0,3,1}", "bf16[2,3,4,33,16]{3,0,4,2,1}"}) {
    Shape to = parse(text);
    Shape from(to.elementType, to.dims);
    Bytes src = randomBytes(rng, compile(from).physicalBytes());
    Bytes expected = reference(from, to, src);
    for (int threads : {1, 2, 3, 8})
      for (const std::string &isa : relayoutIsaLevels()) {
        RelayoutOptions options;
        options.threads = threads;
        options.parallelThresholdBytes = 0;
        options.isa = isa;
        SCOPED_TRACE(std::string(text) + " threads " + std::to_string(threads) +
                     " " + isa);
        EXPECT_EQ(run(from, to, src, options), expected);
        EXPECT_EQ(run(to, from, expected, options), src);
      }
  }
}

TEST(Relayout, SubByteRelayoutsAgreeWithTheReferenceOnEveryPath) {
  std::mt19937 rng(9);
  const char *cases[][3] = {
      // Runs of 128 nibbles, byte-aligned on both sides: memcpy, any split.
      {"s4[40,4,300]{2,1,0:E(4)}", "s4[40,4,300]{2,0,1:T(8,128)E(4)}",
       "runs of whole bytes copied, split among threads"},
      // Row-major tiling whose rows are whole bytes: the tile kernel.
      {"s4[40,300]{1,0:E(4)}", "s4[40,300]{1,0:T(8,128)E(4)}",
       "4-bit elements moved as bytes"},
      // Transposes whose rows are whole bytes: through byte stages.
      {"s4[64,130]{1,0:E(4)}", "s4[64,130]{0,1:E(4)}",
       "sub-byte transpose of 130x64 slices"},
      {"s2[3,20,68]{2,1,0:E(2)}", "s2[3,20,68]{1,2,0:E(2)}",
       "sub-byte transpose of 68x20 slices of 2-bit elements"},
      {"s4[6,130,2]{2,1,0:E(4)}", "s4[6,130,2]{1,0,2:L(64)E(4)}",
       "sub-byte transpose"},
      // Odd rows of nibbles: the bit walk, rows share bytes.
      {"s4[63,130]{1,0:E(4)}", "s4[63,130]{0,1:E(4)}",
       "one thread (destination bytes shared across the walk)"},
      // Padding bytes of whole-byte runs are zeroed.
      {"s4[20,4,130]{2,1,0:E(4)}", "s4[20,4,130]{2,0,1:T(8,128)E(4)}",
       "runs of whole bytes copied, split among threads"},
      {"s4[20,130]{1,0:E(4)}", "s4[20,130]{1,0:T(8,128)E(4)}",
       "4-bit elements moved as bytes"},
      // Unpacking to whole bytes never shares a destination byte.
      {"s4[33,70]{1,0:E(4)}", "s4[33,70]{0,1}", "split among threads"},
      // Odd rows of nibbles: rows share bytes.
      {"s4[33,71]{0,1}", "s4[33,71]{1,0:E(4)}",
       "one thread (destination bytes shared across the walk)"},
      {"pred[40,24]{1,0:E(1)}", "pred[40,24]{0,1:E(1)}",
       "sub-byte transpose of 24x40 slices of 1-bit elements"},
  };
  for (auto &[fromText, toText, split] : cases) {
    Shape from = parse(fromText), to = parse(toText);
    SCOPED_TRACE(std::string(fromText) + " -> " + toText);
    Bytes src = randomBytes(rng, compile(from).physicalBytes());
    // Sub-byte sources: only the value bits matter; the reference defines
    // the expected bytes from the same source.
    Bytes expected = reference(from, to, src);
    for (int threads : {1, 2, 3}) {
      RelayoutOptions options;
      options.threads = threads;
      options.parallelThresholdBytes = 0;
      std::string description;
      EXPECT_EQ(run(from, to, src, options, &description), expected);
      EXPECT_NE(description.find(split), std::string::npos) << description;
    }
  }
}

// 4-bit transposes combine rows in pairs and transpose blocks of 128 rows
// (512 by 512 columns where the level has the wide band: avx2, avx512) by
// 512 or 128 columns as bytes (streamed when the output is large), with 64
// x 64 byte stages at the ragged edges: every level, both store kinds,
// destinations on and off a line.
TEST(Relayout, NibbleTransposesAgreeWithTheReference) {
  std::mt19937 rng(14);
  const char *cases[][2] = {
      {"s4[300,1200]{1,0:E(4)}", "s4[300,1200]{0,1:E(4)}"},
      {"s4[256,640]{1,0:E(4)}", "s4[256,640]{0,1:E(4)}"},
      {"u4[3,260,140]{2,1,0:E(4)}", "u4[3,260,140]{1,2,0:E(4)}"},
      {"s4[2,3,260,256]{3,2,1,0:E(4)}", "s4[2,3,260,256]{2,3,1,0:E(4)}"},
      // Whole chunks of 512 rows (the wide band), 128-nibble widths beside
      // them, a ragged chunk.
      {"s4[1100,1200]{1,0:E(4)}", "s4[1100,1200]{0,1:E(4)}"},
      {"u4[2,512,640]{2,1,0:E(4)}", "u4[2,512,640]{1,2,0:E(4)}"},
  };
  for (auto &[from, to] : cases)
    checkFastPath(from, to, "rows combined in pairs into bytes", rng);
}

TEST(Relayout, SizeMismatchesFailBeforeWriting) {
  Expected<RelayoutPlan> plan = RelayoutPlan::create(
      parse("f32[3,5]{1,0}"), parse("f32[3,5]{1,0:T(2,2)}"));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->sourceBytes(), 60);
  EXPECT_EQ(plan->destinationBytes(), 96);
  Bytes src(100), dst(96, 0xAB);
  Status error = plan->execute(src.data(), 100, dst.data(), dst.size());
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().message,
            "source buffer has 100 bytes, f32[3,5]{1,0} needs 60");
  EXPECT_EQ(dst, Bytes(96, 0xAB));
  error = plan->execute(src.data(), 60, dst.data(), 95);
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().message,
            "destination buffer has 95 bytes, f32[3,5]{1,0:T(2,2)} needs 96");
  EXPECT_EQ(dst, Bytes(96, 0xAB));
}

TEST(Relayout, CreateRejectsMismatchedShapesAndBadLayouts) {
  Expected<RelayoutPlan> dims =
      RelayoutPlan::create(parse("f32[3,5]{1,0}"), parse("f32[5,3]{1,0}"));
  ASSERT_FALSE(dims);
  EXPECT_EQ(dims.error().message,
            "source f32[3,5] and destination f32[5,3] differ; a relayout keeps "
            "the element type and dims");
  Layout bad = Layout::rowMajor(2);
  bad.minorToMajor = {1, 1};
  Expected<RelayoutPlan> layout = RelayoutPlan::create(
      Shape(PrimitiveType::F32, {3, 5}), Layout::rowMajor(2), bad);
  ASSERT_FALSE(layout);
  EXPECT_NE(layout.error().message.find("destination layout: "),
            std::string::npos);
}

TEST(Relayout, EmptyAndScalarArrays) {
  Bytes out = run(parse("f32[0,5]{1,0}"), parse("f32[0,5]{1,0:T(2,2)}"), {});
  EXPECT_TRUE(out.empty());
  Bytes scalar =
      run(parse("f64[]{}"), parse("f64[]{:T(4)}"), {1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(scalar.size(), 32u);
  EXPECT_EQ(Bytes(scalar.begin(), scalar.begin() + 8),
            (Bytes{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(Bytes(scalar.begin() + 8, scalar.end()), Bytes(24, 0));
}

} // namespace

TEST(Relayout, StreamingStoresFromHalfTheLastLevelCacheByDefault) {
  // Plans only: nothing is allocated or run. The destination's size picks
  // the stores; an explicit threshold overrides the default.
  auto describe = [](const std::string &shape, RelayoutOptions options = {}) {
    Expected<RelayoutPlan> plan = RelayoutPlan::create(
        parse(shape + "{1,0}"), parse(shape + "{1,0:T(8,128)}"), options);
    EXPECT_TRUE(plan) << plan.error().message;
    return plan ? plan->describe() : std::string();
  };
  // Half the L3 the CPU reports, at most 32 MiB of it: between 512 KiB
  // and 16 MiB, or the 16 MiB fallback; f32 rows of 512 elements, 2 KiB
  // each.
  int64_t threshold = relayoutDefaultStreamingThreshold();
  EXPECT_GE(threshold, int64_t(512) << 10);
  EXPECT_LE(threshold, int64_t(16) << 20);
  std::string rows = std::to_string(threshold / 2048);
  std::string fewer = std::to_string(threshold / 2048 - 8);
  EXPECT_NE(describe("f32[" + rows + ",512]").find("streaming stores"),
            std::string::npos); // exactly the threshold
  EXPECT_NE(describe("f32[" + fewer + ",512]").find("ordinary stores"),
            std::string::npos); // just under
  RelayoutOptions options;
  options.streamingThresholdBytes = 0;
  EXPECT_NE(describe("f32[8,128]", options).find("streaming stores"),
            std::string::npos);
}

TEST(Relayout, InstructionSetLevels) {
  std::vector<std::string> levels = relayoutIsaLevels();
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), "sse2");
  auto plan = [](const std::string &isa) {
    RelayoutOptions options;
    options.isa = isa;
    return RelayoutPlan::create(parse("bf16[16,256]{1,0}"),
                                parse("bf16[16,256]{1,0:T(8,128)(2,1)}"),
                                options);
  };
  // Each level runs when asked for, and describe() names it last.
  for (const std::string &isa : levels) {
    Expected<RelayoutPlan> p = plan(isa);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->isa(), isa);
    EXPECT_EQ(p->describe(), "tile rows into (8,128)(2,1) tiles, 2 rows "
                             "interleaved, 2-byte elements, ordinary stores, " +
                                 isa);
  }
  // No cap: the best level of the CPU. A cap above it: the same.
  EXPECT_EQ(plan("")->isa(), levels.back());
  EXPECT_EQ(plan("avx512")->isa(), levels.back());
  Expected<RelayoutPlan> bad = plan("avx9");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "instruction set option: unknown instruction "
                                 "set 'avx9', expected sse2, avx2 or avx512");
}

TEST(Relayout, TesselIsaCapsTheLevel) {
  const char *saved = std::getenv("TESSEL_ISA");
  std::string previous = saved ? saved : "";
  auto create = [](const std::string &isa) {
    RelayoutOptions options;
    options.isa = isa;
    return RelayoutPlan::create(parse("f32[64,64]{1,0}"),
                                parse("f32[64,64]{0,1}"), options);
  };
  ::setenv("TESSEL_ISA", "sse2", 1);
  EXPECT_EQ(create("")->isa(), "sse2");
  EXPECT_EQ(create("avx512")->isa(), "sse2");
  ::setenv("TESSEL_ISA", "avx512", 1);
  EXPECT_EQ(create("sse2")->isa(), "sse2"); // the lower of the two
  ::setenv("TESSEL_ISA", "sse3", 1);
  Expected<RelayoutPlan> bad = create("");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "TESSEL_ISA: unknown instruction set "
                                 "'sse3', expected sse2, avx2 or avx512");
  if (saved)
    ::setenv("TESSEL_ISA", previous.c_str(), 1);
  else
    ::unsetenv("TESSEL_ISA");
}
