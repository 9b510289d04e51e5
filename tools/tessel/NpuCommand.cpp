//===- NpuCommand.cpp - `tessel npu ...` ----------------------------------===//
//
//   tessel npu address  A -> (npu, offset) and back
//   tessel npu explain  placement, strides and what they mean, footprint, waste
//   tessel npu where    element -> (npu, slot, byte) and byte -> element
//   tessel npu draw     the seed's figures, in the terminal or as SVG
//   tessel npu fit      matrix W advice; whether tensors fit, where the waste
//   is
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "Commands.h"
#include "NpuOptions.h"
#include "NpuVerbs.h"

#include "tessel/Json/ReportJson.h"
#include "tessel/Npu/NpuAdvisor.h"
#include "tessel/Npu/NpuReport.h"
#include "tessel/Support/MathExtras.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel {
namespace npucli {
namespace {

//===----------------------------------------------------------------------===//
// address
//===----------------------------------------------------------------------===//

llvm::json::Object placeJson(NpuPlace p) {
  return llvm::json::Object{{"npu", p.npu}, {"offset", p.offset}};
}

/// --npu Q --offset R: the address.
int addressOf(const NpuConfig &config, NpuPlace place, bool json) {
  if (place.npu < 0 || place.npu >= config.npus() || place.offset < 0 ||
      place.offset >= config.bytesPerNpu())
    return cli::fail("npu " + std::to_string(place.npu) + " offset " +
                     std::to_string(place.offset) +
                     " is outside local memory, expected npu 0.." +
                     std::to_string(config.npus() - 1) + " and offset 0.." +
                     std::to_string(config.bytesPerNpu() - 1));
  int64_t a = config.address(place);
  if (json)
    printJson(llvm::json::Object{{"address", a}});
  else
    llvm::outs() << "address " << a << "\n";
  return 0;
}

/// Addresses: one (npu, offset) each.
int splitAddresses(const NpuConfig &config,
                   const std::vector<std::string> &addresses, bool json) {
  llvm::json::Array out;
  std::string text;
  for (const std::string &arg : addresses) {
    // Decimal, or hexadecimal after 0x; a leading 0 is not octal.
    int64_t a;
    llvm::StringRef digits = arg;
    unsigned radix = 10;
    if (digits.starts_with_insensitive("0x")) {
      digits = digits.drop_front(2);
      radix = 16;
    }
    if (digits.empty() || digits.getAsInteger(radix, a))
      return cli::fail("address '" + arg +
                       "' is not an integer, expected a decimal number or "
                       "0x and hexadecimal digits");
    Expected<NpuPlace> p = config.split(a);
    if (!p)
      return cli::fail(p.error());
    text += "npu " + std::to_string(p->npu) + " offset " +
            std::to_string(p->offset) + "\n";
    llvm::json::Object o = placeJson(*p);
    if (addresses.size() > 1)
      o["address"] = a;
    out.push_back(std::move(o));
  }
  if (!json)
    llvm::outs() << text;
  else if (out.size() == 1)
    printJson(std::move(out[0]));
  else
    printJson(std::move(out));
  return 0;
}

int runAddress(int argc, char **argv) {
  ConfigOptions configOpts;
  cl::list<std::string> addresses(cl::Positional, cl::desc("[A...]"),
                                  cl::cat(cli::category()));
  cl::opt<int64_t> npu("npu", cl::desc("with --offset: the address of a place"),
                       cl::value_desc("Q"), cl::init(-1),
                       cl::cat(cli::category()));
  cl::opt<int64_t> offset("offset", cl::desc("byte offset R inside the npu"),
                          cl::value_desc("R"), cl::init(-1),
                          cl::cat(cli::category()));
  cl::opt<bool> json("json", cl::desc("print JSON"), cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "split a local-memory address A into npu Q = A / S, offset R = A % "
          "S\n\n"
          "  tessel npu address --npus 4 --mem 1024 1472   -> npu 1 offset "
          "448\n"
          "  tessel npu address --npus 4 --mem 1024 --npu 1 --offset 448\n"
          "                                                -> address 1472\n"))
    return 2;
  int status = 0;
  std::optional<NpuConfig> config = configOpts.resolve(status);
  if (!config)
    return status;
  bool reverse = npu.getNumOccurrences() || offset.getNumOccurrences();
  if (reverse == !addresses.empty())
    return cli::usageError("give addresses, or --npu Q --offset R");
  if (reverse && (!npu.getNumOccurrences() || !offset.getNumOccurrences()))
    return cli::usageError(
        std::string(npu.getNumOccurrences() ? "--npu" : "--offset") +
        " needs " + (npu.getNumOccurrences() ? "--offset" : "--npu") +
        ": give both, --npu Q --offset R");
  if (reverse)
    return addressOf(*config, {npu, offset}, json);
  return splitAddresses(*config, addresses, json);
}

//===----------------------------------------------------------------------===//
// explain
//===----------------------------------------------------------------------===//

/// A tensor in system memory (the continuous layout): strides and bytes.
int explainSystem(const TensorSpec &spec, bool json) {
  const TensorDesc &d = spec.desc;
  if (d.mode != StorageMode::Normal)
    return cli::fail("storage modes apply to local memory, not to the "
                     "continuous layout");
  std::optional<int64_t> bytes = byteWidth(d.type);
  for (int64_t dim : d.shape)
    bytes = bytes ? checkedMul(*bytes, dim) : std::nullopt;
  if (!bytes)
    return cli::fail("tensor " + dimsText(d.shape) + " is too large");
  Dims4 s = continuousStrides(d.shape);
  if (json) {
    printJson(llvm::json::Object{{"memory", "system"},
                                 {"shape", dimsJson(d.shape)},
                                 {"strides", stridesJson(s)},
                                 {"bytes", *bytes}});
    return 0;
  }
  static const char *kWhy[4] = {"n -> n+1: C * H * W", "c -> c+1: H * W",
                                "h -> h+1: W", "w -> w+1"};
  std::string out =
      describeField("tensor", npuTypeName(d.type) + " " + dimsText(d.shape) +
                                  " continuous (system memory)");
  out += describeField("strides", "n " + std::to_string(s[0]) + "  c " +
                                      std::to_string(s[1]) + "  h " +
                                      std::to_string(s[2]) + "  w " +
                                      std::to_string(s[3]));
  for (int i = 0; i < 4; ++i)
    out += describeField(
        std::string("  ") + "nchw"[i] + " " + std::to_string(s[i]),
        d.shape[i] > 1 ? kWhy[i]
                       : std::string("unused: ") + "NCHW"[i] + " = 1");
  llvm::outs() << out << describeField("bytes", std::to_string(*bytes));
  return 0;
}

int runExplain(int argc, char **argv) {
  ConfigOptions configOpts;
  TensorOptions tensorOpts;
  cl::opt<std::string> specText(cl::Positional, cl::desc("[SPEC]"),
                                cl::cat(cli::category()));
  cl::opt<bool> json("json", cl::desc("print JSON"), cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "where a tensor lives in local memory: start npu, channels per npu,\n"
          "strides and what they mean, bytes per npu, wasted bytes and why\n\n"
          "  tessel npu explain --npus 4 --mem 1024 --shape 2,3,4,5 --dtype "
          "fp32 \\\n      --layout aligned --address 2048\n"
          "  tessel npu explain --chip bm1684x 'x=fp16[1,96,56,56]:eu@0'\n"
          "  tessel npu explain --npus 4 --mem 1024 'fp32[2,40]:matrix(20)'\n"
          "  tessel npu explain 'fp32[2,3,4,5]:continuous'   (system "
          "memory)\n"))
    return 2;
  int status = 0;
  std::optional<TensorSpec> spec = tensorOpts.resolve(specText, status);
  if (!spec)
    return status;
  if (spec->desc.layout == NpuLayout::Continuous)
    return explainSystem(*spec, json);
  std::optional<NpuConfig> config = configOpts.resolve(status);
  bool chooseW =
      spec->desc.layout == NpuLayout::Matrix && spec->desc.matrixW == 0;
  if (!config || !chooseMatrixW(*config, *spec, status))
    return status;
  std::optional<LocalTensor> t = makeTensor(*config, *spec, status);
  if (!t)
    return status;
  std::vector<std::string> problems = localTensorProblems(*t);
  if (json) {
    printJson(localTensorExplainJson(*t));
  } else {
    llvm::outs() << explainLocalTensor(*t, chooseW);
  }
  return problems.empty() ? 0 : cli::fail(problems.front());
}

//===----------------------------------------------------------------------===//
// where
//===----------------------------------------------------------------------===//

int whereElement(const LocalTensor &t, const std::string &indexText,
                 bool json) {
  Expected<std::vector<int64_t>> parsed = cli::parseIntList(indexText);
  if (!parsed)
    return cli::fail(parsed.takeError().inSource("--index"));
  const std::vector<int64_t> &values = *parsed;
  int rank = t.layout() == NpuLayout::Matrix ? 2 : 4;
  Expected<Dims4> checked = checkTensorIndex(t, values, indexText);
  if (!checked)
    return cli::fail(checked.error());
  Dims4 index = *checked;
  NpuPlace p = t.locate(index);
  int64_t slot = t.slotOf(index);
  int64_t address = t.config().address(p);
  if (json) {
    printJson(llvm::json::Object{{"index", dimsJson(index, rank)},
                                 {"npu", p.npu},
                                 {"slot", slot},
                                 {"offset", p.offset},
                                 {"address", address}});
    return 0;
  }
  llvm::outs() << "npu " << p.npu << " slot " << slot << " offset " << p.offset
               << " (address " << address << ")\n";
  return 0;
}

int wherePlace(const LocalTensor &t, NpuPlace place, bool json) {
  ByteInfo info = t.classify(place);
  if (!json) {
    llvm::outs() << describeByte(t, info, place) << "\n";
    return 0;
  }
  llvm::json::Object o{{"npu", place.npu},
                       {"offset", place.offset},
                       {"address", t.config().address(place)},
                       {"kind", std::string(byteKindName(info.kind))}};
  o["slot"] = info.slot;
  if (info.kind == ByteKind::Element) {
    o["index"] = dimsJson(info.index, t.layout() == NpuLayout::Matrix ? 2 : 4);
    o["byte"] = info.byte;
  } else if (info.kind != ByteKind::Outside && info.kind != ByteKind::Gap) {
    o["stored_index"] = dimsJson(info.index);
  }
  printJson(std::move(o));
  return 0;
}

int runWhere(int argc, char **argv) {
  ConfigOptions configOpts;
  TensorOptions tensorOpts;
  cl::opt<std::string> specText(cl::Positional, cl::desc("[SPEC]"),
                                cl::cat(cli::category()));
  cl::opt<std::string> index("index",
                             cl::desc("the element N,C,H,W (ROW,COL for a "
                                      "matrix) to locate"),
                             cl::value_desc("I"), cl::cat(cli::category()));
  cl::opt<int64_t> npu("npu", cl::desc("with --offset: what this npu holds"),
                       cl::value_desc("Q"), cl::init(-1),
                       cl::cat(cli::category()));
  cl::opt<int64_t> offset("offset", cl::desc("byte offset inside --npu"),
                          cl::value_desc("B"), cl::init(-1),
                          cl::cat(cli::category()));
  cl::opt<int64_t> at("at", cl::desc("what local-memory address A holds"),
                      cl::value_desc("A"), cl::init(-1),
                      cl::cat(cli::category()));
  cl::opt<bool> json("json", cl::desc("print JSON"), cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "element to place, and place to element\n\n"
          "  tessel npu where --npus 4 --mem 1024 'fp32[2,3,4,5]@2048' "
          "--index 1,2,3,4\n      -> npu 0 slot 1 offset 460 (address 460)\n"
          "  tessel npu where --npus 4 --mem 1024 'fp32[2,3,4,5]@2048' "
          "--npu 0 --offset 460\n      -> element (1,2,3,4), byte 0 of 4\n"))
    return 2;
  int ways = !index.empty() +
             (npu.getNumOccurrences() > 0 || offset.getNumOccurrences() > 0) +
             (at.getNumOccurrences() > 0);
  if (ways != 1)
    return cli::usageError("give --index I, or --npu Q --offset B, or --at A");
  int status = 0;
  std::optional<NpuConfig> config = configOpts.resolve(status);
  if (!config)
    return status;
  std::optional<TensorSpec> spec = tensorOpts.resolve(specText, status);
  if (!spec || !chooseMatrixW(*config, *spec, status))
    return status;
  std::optional<LocalTensor> t = makeTensor(*config, *spec, status);
  if (!t)
    return status;
  if (!index.empty())
    return whereElement(*t, index, json);
  NpuPlace place{npu, offset};
  if (at.getNumOccurrences()) {
    Expected<NpuPlace> split = config->split(at);
    if (!split)
      return cli::fail(split.error());
    place = *split;
  } else if (npu < 0 || npu >= config->npus() || offset < 0 ||
             offset >= config->bytesPerNpu()) {
    return cli::fail("npu " + std::to_string(npu) + " offset " +
                     std::to_string(offset) + " is outside local memory");
  }
  return wherePlace(*t, place, json);
}

const cli::Verb kVerbs[] = {
    {"address", "split an address into (npu, offset) and back", runAddress},
    {"explain", "placement, strides, footprint and waste of a tensor",
     runExplain},
    {"where", "element to (npu, slot, byte) and byte to element", runWhere},
    {"draw", "pictures of local memory: the seed's figures, text or SVG",
     runDraw},
    {"fit", "matrix W advice; whether tensors fit and where the waste is",
     runFit},
};

} // namespace
} // namespace npucli

int runNpuCommand(int argc, char **argv) {
  return cli::dispatch("npu",
                       "NPU local memory of a Sophgo-style TPU: X NPUs of S "
                       "bytes each,\ntensors scattered over them channel by "
                       "channel.",
                       npucli::kVerbs, argc, argv);
}

} // namespace tessel
