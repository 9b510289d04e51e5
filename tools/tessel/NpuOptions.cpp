//===- NpuOptions.cpp - Options shared by the `tessel npu` verbs ----------===//
#include "NpuOptions.h"

#include "tessel/Json/ReportJson.h"

#include <cstdlib>

#include "tessel/Npu/NpuAdvisor.h"
#include "tessel/Npu/NpuReport.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel::npucli {

std::optional<NpuConfig> ConfigOptions::resolve(int &status) const {
  if (chip.empty() && !(npus.getNumOccurrences() && mem.getNumOccurrences())) {
    status = cli::usageError(
        "give --chip NAME (bm1684, bm1684x, bm1688) or --npus X --mem S, "
        "e.g. --npus 4 --mem 1024 for the seed's figures");
    return std::nullopt;
  }
  std::optional<int64_t> bytes;
  if (mem.getNumOccurrences()) {
    Expected<int64_t> parsed = parseByteSize(mem);
    if (!parsed) {
      status = cli::fail("--mem: " + parsed.error().message);
      return std::nullopt;
    }
    bytes = *parsed;
  }
  auto given = [](const cl::opt<int64_t> &opt) {
    return opt.getNumOccurrences() ? std::optional<int64_t>(opt.getValue())
                                   : std::nullopt;
  };
  Expected<NpuConfig> config =
      NpuConfig::resolve(chip, given(npus), bytes, given(banks), given(align));
  if (!config) {
    status = cli::fail(config.error());
    return std::nullopt;
  }
  return *config;
}

static bool parseDims(const std::string &text, const char *what, size_t want,
                      std::vector<int64_t> &values, int &status) {
  Expected<std::vector<int64_t>> parsed = cli::parseIntList(text);
  if (!parsed) {
    status = cli::fail(parsed.takeError().inSource(what));
    return false;
  }
  values = std::move(*parsed);
  if (want && values.size() != want) {
    status = cli::fail(std::string(what) + " '" + text + "' has " +
                       std::to_string(values.size()) + " values, expected " +
                       std::to_string(want));
    return false;
  }
  return true;
}

/// The spec text the flags describe, so that flags and specs share one
/// parser (and one set of messages).
std::optional<TensorSpec> TensorOptions::resolve(const std::string &specText,
                                                 int &status) const {
  std::string text = specText;
  bool flags = shape.getNumOccurrences() || dtype.getNumOccurrences() ||
               layout.getNumOccurrences() || mode.getNumOccurrences() ||
               w.getNumOccurrences() || strides.getNumOccurrences() ||
               address.getNumOccurrences();
  if (!text.empty() && flags) {
    status = cli::usageError("give the tensor either as a SPEC or as --shape "
                             "and friends, not both");
    return std::nullopt;
  }
  if (text.empty()) {
    if (shape.empty()) {
      status = cli::usageError("give a tensor SPEC such as "
                               "'fp32[2,3,4,5]:aligned@0' or --shape N,C,H,W");
      return std::nullopt;
    }
    std::string lay = strides.empty() ? layout.getValue() : "strided";
    if (lay == "strided" && strides.empty()) {
      status = cli::usageError("--layout strided needs --strides N,C,H,W");
      return std::nullopt;
    }
    // Which flag wrote which columns of the spec, so that an error names
    // the flag the user typed, not a spec the user never saw.
    std::vector<std::pair<size_t, std::string>> starts;
    auto append = [&](const std::string &flag, const std::string &value,
                      const std::string &before) {
      // A separator belongs to the flag after it ('[' starts the shape).
      starts.emplace_back(text.size(), flag + " '" + value + "'");
      text += before + value;
    };
    append("--dtype", dtype, "");
    append("--shape", shape, "[");
    append("--layout", lay, "]:");
    if (lay == "matrix" && w > 0)
      append("--w", std::to_string(w), "(");
    if (!strides.empty()) {
      std::vector<int64_t> values;
      if (!parseDims(strides, "--strides", 4, values, status))
        return std::nullopt;
      append("--strides", strides, "(");
    }
    append("--mode", mode,
           strides.empty() && !(lay == "matrix" && w > 0) ? ":" : "):");
    append("--address", address, "@");
    Expected<TensorSpec> spec = parseTensorSpec(text);
    if (spec)
      return *spec;
    // The spec was put together from the options: name the option the
    // error is in rather than the text nobody typed.
    const Error &error = spec.error();
    size_t at = error.span ? error.span->begin : 0;
    std::string flag = starts.front().second;
    for (const auto &[start, name] : starts)
      if (at >= start)
        flag = name;
    status = cli::fail("in " + flag + ": " + error.message);
    return std::nullopt;
  }
  Expected<TensorSpec> spec = parseTensorSpec(text);
  if (!spec) {
    status = cli::fail(spec.takeError().inSource("<spec>"));
    return std::nullopt;
  }
  return *spec;
}

std::optional<LocalTensor> makeTensor(const NpuConfig &config,
                                      const TensorSpec &spec, int &status) {
  Expected<LocalTensor> t = LocalTensor::get(config, spec.desc);
  if (!t) {
    status = cli::fail(t.error());
    return std::nullopt;
  }
  return *t;
}

/// Fills in the advisor's W for a matrix given without one.
bool chooseMatrixW(const NpuConfig &config, TensorSpec &spec, int &status) {
  if (Status error = tessel::chooseMatrixW(config, spec.desc); !error) {
    status = cli::fail(error.error());
    return false;
  }
  return true;
}

void printJson(llvm::json::Value value) {
  llvm::outs() << llvm::formatv("{0:2}", value) << "\n";
}

llvm::json::Object configJson(const NpuConfig &config) {
  return npuConfigJson(config);
}

llvm::json::Object stridesJson(const Dims4 &strides) {
  return npuStridesJson(strides);
}

llvm::json::Array dimsJson(const Dims4 &dims, int rank) {
  return npuDimsJson(dims, rank);
}

std::string dimsText(const Dims4 &dims, int rank) {
  return describeDims(dims, rank);
}

std::string npuListText(const std::vector<int64_t> &npus) {
  return describeNpuList(npus);
}

std::string tensorLine(const LocalTensor &t) { return describeTensorLine(t); }

} // namespace tessel::npucli
