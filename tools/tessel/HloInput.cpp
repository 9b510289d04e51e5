//===- HloInput.cpp - Reading HLO modules for the commands ----------------===//
#include "HloInput.h"
#include "CommandLine.h"

#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Support/MathExtras.h"
#include "tessel/Support/Npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>

namespace tessel::cli {

std::string atFile(const std::string &path, const std::string &message) {
  bool positioned =
      !message.empty() && std::isdigit(static_cast<unsigned char>(message[0]));
  return path + (positioned ? ":" : ": ") + message;
}

std::unique_ptr<HloModule> loadHloModule(const std::string &path, bool verify) {
  Expected<std::string> text = readFileBytes(path);
  if (!text) {
    fail(text.error().message);
    return nullptr;
  }
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(*text);
  if (!module) {
    fail(atFile(path, module.error().message));
    return nullptr;
  }
  if (verify)
    if (std::optional<Error> problem = verifyHloModule(**module)) {
      fail(atFile(path, problem->message));
      return nullptr;
    }
  return std::move(*module);
}

/// Instructions of `computation` with every call inlined, saturated at
/// `limit + 1`.
static int64_t inlinedSize(const HloComputation &computation, int64_t limit,
                           std::map<const HloComputation *, int64_t> &memo) {
  auto found = memo.find(&computation);
  if (found != memo.end())
    return found->second;
  int64_t size = 0;
  for (const auto &inst : computation.instructions()) {
    size = std::min(size + 1, limit + 1);
    for (const HloComputation *callee : inst->calledComputations())
      if (callee)
        size = std::min(size + inlinedSize(*callee, limit, memo), limit + 1);
  }
  memo[&computation] = size;
  return size;
}

bool checkInlinedSize(const HloModule &module, const std::string &path,
                      int64_t limit) {
  if (!module.entry())
    return true;
  std::map<const HloComputation *, int64_t> memo;
  if (inlinedSize(*module.entry(), limit, memo) <= limit)
    return true;
  fail(path + ": with every call inlined the module has more than " +
       std::to_string(limit) +
       " instructions, the most tessel compiles (a computation called from "
       "several places is compiled once per call)");
  return false;
}

/// The dims of the .npy that holds an array of `shape` (with its layout) as
/// a physical buffer: the logical dims for row-major, the dims in physical
/// order for another permutation, the flat buffer for tiles and L(n).
static Expected<std::vector<int64_t>> physicalNpyDims(const Shape &shape) {
  Expected<TiledLayout> layout = TiledLayout::get(shape);
  if (!layout)
    return layout.takeError();
  Layout l = shape.layoutOrDefault();
  if (!l.tiles.empty() || l.tailPaddingAlignment != 1)
    return std::vector<int64_t>{layout->physicalElements()};
  std::vector<int64_t> dims;
  for (int64_t d : layout->physicalOrder())
    dims.push_back(shape.dims[d]);
  return dims;
}

static std::string joinDims(const std::vector<int64_t> &dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? "," : "") + std::to_string(dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

/// The data of an .npy in C order.
static std::string cOrderData(const NpyArray &array) {
  if (!array.fortranOrder || array.shape.size() < 2)
    return array.data;
  int64_t width = array.itemSize(), rank = array.shape.size();
  std::string out(array.data.size(), '\0');
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < array.elementCount(); ++i) {
    int64_t f = 0, stride = 1;
    for (int64_t d = 0; d < rank; ++d) {
      f += index[d] * stride;
      stride *= array.shape[d];
    }
    std::memcpy(&out[i * width], &array.data[f * width], width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < array.shape[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

Expected<Literal> readArgument(const std::string &file, const Shape &param,
                               bool logical) {
  // Messages name the file, or standard input for `-`.
  std::string path = file == "-" ? "standard input" : file;
  if (!param.isArray())
    return Error(path + ": parameter shape " + param.toString() +
                 " is not an array");
  Shape logicalShape(param.elementType, param.dims);
  bool physical = !logical && param.layout &&
                  *param.layout != Layout::rowMajor(param.rank());
  std::vector<int64_t> want = param.dims;
  if (physical) {
    Expected<std::vector<int64_t>> dims = physicalNpyDims(param);
    if (!dims)
      return Error(path + ": " + dims.error().message);
    want = *dims;
  }
  // The file holds a header and the array: refuse anything much larger
  // before reading it (a device such as /dev/zero never ends).
  std::optional<int64_t> dataBytes = byteWidth(param.elementType);
  for (int64_t d : want)
    if (dataBytes)
      dataBytes = checkedMul(*dataBytes, d);
  int64_t limit = kMaxInputBytes;
  std::string why;
  if (dataBytes && *dataBytes < INT64_MAX - (1 << 20)) {
    limit = *dataBytes + (1 << 20);
    why = param.toString() + " takes " + std::to_string(*dataBytes) +
          " bytes of data and a .npy header";
  }
  Expected<NpyArray> array = readNpyFile(file, limit, why);
  if (!array)
    return Error(array.error().message);
  if (!npyDescrMatches(array->descr, param.elementType))
    return Error(path + ": holds '" + array->descr + "' elements, expected " +
                 npyDescr(param.elementType) + " for " +
                 std::string(primitiveTypeName(param.elementType)));
  if (array->shape != want)
    return Error(path + ": shape " + joinDims(array->shape) + ", expected " +
                 joinDims(want) + " for " + param.toString() +
                 (physical ? " (its physical buffer, as --physical reads "
                             "it; without --physical, the logical array)"
                           : ""));
  std::string data = cOrderData(*array);
  if (physical) {
    Expected<Literal> literal = fromPhysical(data, param);
    if (!literal)
      return Error(path + ": " + literal.error().message);
    return std::move(*literal);
  }
  Expected<Literal> literal = Literal::create(logicalShape);
  if (!literal)
    return Error(path + ": " + literal.error().message);
  if (!data.empty())
    std::memcpy(literal->data(), data.data(), data.size());
  return std::move(*literal);
}

Expected<NpyArray> resultArray(const Literal &value, const Shape &shape,
                               bool logical) {
  NpyArray array;
  array.descr = npyDescr(value.elementType());
  bool physical = !logical && shape.layout &&
                  *shape.layout != Layout::rowMajor(shape.rank());
  if (!physical) {
    array.shape = value.dims();
    array.data.assign(reinterpret_cast<const char *>(value.data()),
                      value.elementCount() * value.elementBytes());
    return array;
  }
  Expected<std::vector<int64_t>> dims = physicalNpyDims(shape);
  if (!dims)
    return dims.takeError();
  Expected<std::string> buffer = toPhysical(value, shape);
  if (!buffer)
    return buffer.takeError();
  array.shape = *dims;
  array.data = std::move(*buffer);
  return array;
}

} // namespace tessel::cli
