//===- TpuLayout.cpp - The tiling a TPU compiler picks --------------------===//
#include "tessel/Layout/TpuLayout.h"

#include "tessel/Layout/TiledLayout.h"

namespace tessel {
namespace {

/// 32 / packing = rows of this type packed into one 32-bit word.
int64_t packing(PrimitiveType type, const TpuOptions &options) {
  if (type == PrimitiveType::Pred && options.packedPred)
    return 32;
  int bits = type == PrimitiveType::Pred ? 8 : bitWidth(type);
  return bits >= 32 ? 1 : 32 / bits;
}

/// E(n) for types stored below a byte.
int64_t elementBits(PrimitiveType type, const TpuOptions &options) {
  if (type == PrimitiveType::Pred)
    return options.packedPred ? 1 : 0;
  return bitWidth(type) < 8 ? bitWidth(type) : 0;
}

std::string typeWords(PrimitiveType type, int64_t pack) {
  std::string name(primitiveTypeName(type));
  if (pack == 1)
    return name + " values fill 32-bit lanes";
  return std::to_string(pack) + " " + name +
         " values share one 32-bit word, taken from " + std::to_string(pack) +
         " consecutive rows (the (" + std::to_string(pack) +
         ",1) tile): moving data across rows is cheap on a TPU, across "
         "lanes it is not";
}

void chooseRank1(int64_t n, int64_t pack, std::vector<Tile> &tiles,
                 std::string &reason) {
  if (n <= 128) {
    tiles = {Tile({128})};
    reason = "a 1-D array of at most 128 elements fits one row of 128 "
             "lanes; with a single row there is nothing to pack";
    return;
  }
  tiles = {Tile({1024})};
  reason = "a 1-D array is cut into chunks of 1024 = 8 x 128 elements, one "
           "vector register of 32-bit values";
  if (pack > 1) {
    tiles.push_back(Tile({128}));
    tiles.push_back(Tile({pack, 1}));
    reason += "; (128) makes each chunk 8 rows of 128 and (" +
              std::to_string(pack) + ",1) packs " + std::to_string(pack) +
              " rows into each 32-bit word";
  }
}

void chooseRank2(int64_t secondMinor, int64_t pack, PrimitiveType type,
                 std::vector<Tile> &tiles, std::string &reason) {
  int64_t rows = 8;
  std::string why = "the two most minor dims are tiled to match a TPU "
                    "vector register of 8 x 128 32-bit lanes";
  if (pack == 32 || pack == 16) {
    rows = pack;
    why = "the two most minor dims are tiled so that " + std::to_string(pack) +
          " rows pack into the 32-bit lanes of a "
          "register";
  } else if (pack <= 2 && secondMinor <= 2) {
    rows = 2;
    why = "the second-minor dim has only " + std::to_string(secondMinor) +
          " rows, so a compact 2 x 128 tile wastes less than 8 x 128";
  } else if (pack <= 4 && secondMinor <= 4) {
    rows = 4;
    why = "the second-minor dim has only " + std::to_string(secondMinor) +
          " rows, so a compact 4 x 128 tile wastes less than 8 x 128";
    if (pack == 4 && secondMinor <= 2)
      why += " (a 2 x 128 tile would still be padded to the 4 rows one "
             "32-bit word packs)";
  }
  tiles = {Tile({rows, 128})};
  if (pack > 1)
    tiles.push_back(Tile({pack, 1}));
  reason = why + "; " + typeWords(type, pack);
}

} // namespace

Expected<TpuLayoutChoice> chooseTpuLayout(const Shape &shape,
                                          const TpuOptions &options) {
  if (!shape.isArray())
    return Error("a TPU layout needs an array shape, got " + shape.toString());
  if (!shape.dynamicDims.empty())
    return Error("a TPU layout needs static dims, got " + shape.toString());
  if (std::optional<LayoutProblem> problem = verifyLayout(shape))
    return Error(problem->message);
  TpuLayoutChoice choice;
  choice.shape = shape;
  Layout layout;
  layout.minorToMajor = shape.layoutOrDefault().minorToMajor;
  int64_t pack = packing(shape.elementType, options);
  if (shape.rank() == 0) {
    choice.reason = "a scalar lives in scalar memory: no tiling";
  } else if (shape.rank() == 1) {
    chooseRank1(shape.dims[0], pack, layout.tiles, choice.reason);
  } else {
    int64_t secondMinor = shape.dims[layout.minorToMajor[1]];
    chooseRank2(secondMinor, pack, shape.elementType, layout.tiles,
                choice.reason);
  }
  layout.elementSizeInBits = elementBits(shape.elementType, options);
  if (layout.elementSizeInBits != 0)
    choice.reason += "; E(" + std::to_string(layout.elementSizeInBits) +
                     ") stores each value in " +
                     std::to_string(layout.elementSizeInBits) +
                     (layout.elementSizeInBits == 1 ? " bit" : " bits");
  if (std::int64_t bits = bitWidth(shape.elementType); bits == 64)
    choice.reason += "; 64-bit values are tiled like 32-bit ones (TPUs "
                     "emulate them with 32-bit halves)";
  choice.shape.layout = layout;
  Expected<TiledLayout> check = TiledLayout::get(choice.shape);
  if (!check)
    return check.takeError();
  return choice;
}

} // namespace tessel
