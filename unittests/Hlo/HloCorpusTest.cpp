//===- HloCorpusTest.cpp - tessel against XLA:CPU on the jax corpus -------===//
//
// test/Hlo/corpus/ holds modules that jax exported (module.hlo, and
// optimized.hlo after XLA:CPU's passes), their inputs and XLA:CPU's outputs
// (scripts/export-hlo-corpus.py). Every module must parse, print back to
// text that parses to the same module, verify, and evaluate to XLA's
// numbers within the tolerance MANIFEST.txt gives (0 0: bit-exact), and
// with Numerics::XlaCpu to XLA's bits, but for the cases kXlaCpuDiffers
// lists with the reason.
//
//===----------------------------------------------------------------------===//
#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Support/Npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

using namespace tessel;

namespace {

struct CorpusCase {
  std::string name;
  double rtol = 0;
  double atol = 0;
};

std::string corpusDir() { return TESSEL_HLO_CORPUS; }

std::vector<CorpusCase> readManifest() {
  std::vector<CorpusCase> cases;
  std::ifstream in(corpusDir() + "/MANIFEST.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    CorpusCase c;
    fields >> c.name >> c.rtol >> c.atol;
    cases.push_back(c);
  }
  return cases;
}

bool fileExists(const std::string &path) {
  return static_cast<bool>(std::ifstream(path));
}

/// The .npy as a literal of `type` (descrs are checked by the reader).
Literal npyToLiteral(const NpyArray &array, PrimitiveType type) {
  Literal literal(Shape(type, array.shape));
  if (!array.data.empty())
    std::memcpy(literal.data(), array.data.data(), array.data.size());
  return literal;
}

/// Compares an evaluated array with XLA's; returns "" or what differs.
std::string compareArrays(const Literal &got, const NpyArray &want, double rtol,
                          double atol) {
  if (got.dims() != want.shape)
    return "shape " + got.shape().toStringWithoutLayout() +
           " differs from XLA's";
  if (!npyDescrMatches(want.descr, got.elementType()))
    return "XLA's result has descr " + want.descr + ", tessel's is " +
           std::string(primitiveTypeName(got.elementType()));
  Literal expected = npyToLiteral(want, got.elementType());
  bool isFloatType = isFloat(got.elementType());
  bool isComplexType = isComplex(got.elementType());
  int mismatches = 0;
  std::string first;
  double worst = 0;
  // Complex elements compare part by part (2i the real, 2i+1 the imaginary
  // part), each like a float.
  int64_t parts = isComplexType ? 2 : 1;
  for (int64_t p = 0; p < got.elementCount() * parts; ++p) {
    int64_t i = p / parts;
    bool ok;
    if (!isFloatType && !isComplexType) {
      ok = got.getBits(i) == expected.getBits(i);
    } else {
      auto part = [&](const Literal &x) {
        if (!isComplexType)
          return x.getDouble(i);
        std::complex<double> z = x.getComplex(i);
        return p % 2 ? z.imag() : z.real();
      };
      double a = part(got), b = part(expected);
      if (std::isnan(a) || std::isnan(b))
        ok = std::isnan(a) && std::isnan(b);
      else if (rtol == 0 && atol == 0)
        ok = std::signbit(a) == std::signbit(b) && a == b;
      else if (std::isinf(a) || std::isinf(b))
        ok = a == b;
      else {
        double error = std::fabs(a - b);
        worst = std::max(worst, error / (atol + rtol * std::fabs(b)));
        ok = error <= atol + rtol * std::fabs(b);
      }
    }
    if (!ok && mismatches++ == 0)
      first = "element " + std::to_string(i) + ": tessel " +
              got.elementToString(i) + ", XLA " + expected.elementToString(i);
  }
  if (mismatches)
    return std::to_string(mismatches) + " of " +
           std::to_string(got.elementCount()) + " elements differ; first " +
           first + " (worst error/tolerance " + std::to_string(worst) + ")";
  return "";
}

/// The cases whose XLA:CPU bits tessel's --numerics=xla-cpu does not
/// reproduce, and why (docs/hlo.md, "Numerics").
const std::map<std::string, std::string> kXlaCpuDiffers = {
    {"gelu_tanh_f32", "tanh: XLA's own approximation, not the C library's"},
    {"softmax_f32", "exp: XLA's own approximation"},
    {"softmax_bf16", "module.hlo: XLA keeps f32 between the bf16 ops "
                     "(excess precision)"},
    {"layer_norm_f32", "rsqrt: XLA's estimate refined by Newton's method"},
    {"attention_scores_f32", "batched dot in YNNPACK; exp"},
    {"attention_scores_bf16", "module.hlo: excess precision between bf16 "
                              "ops"},
    {"matmul_bias_relu_f32", "dot in YNNPACK"},
    {"mixed_bf16_dot", "dot in YNNPACK"},
    {"unary_math_f32", "transcendental functions: XLA's approximations"},
    {"nested_call_f32", "tanh"},
    {"conditionals_f32", "tanh and exp in the branches"},
    {"convolution_f32", "convolution in a library kernel (order not "
                        "reproduced)"},
    {"complex_c64", "complex exp, log and division: XLA's formulas"},
};

void checkModule(const CorpusCase &c, const std::string &file,
                 const EvaluatorOptions &options = {}) {
  SCOPED_TRACE(c.name + "/" + file);
  std::string dir = corpusDir() + "/" + c.name + "/";
  Expected<std::string> text = readFileBytes(dir + file);
  ASSERT_TRUE(text) << text.error().message;
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(*text);
  ASSERT_TRUE(module) << module.error().message;
  // Round trip: print, parse, print the same text.
  std::string printed = (*module)->toString();
  Expected<std::unique_ptr<HloModule>> again = parseHloModule(printed);
  ASSERT_TRUE(again) << again.error().message << "\n" << printed;
  EXPECT_EQ((*again)->toString(), printed);
  Status problem = verifyHloModule(**module);
  ASSERT_TRUE(problem) << problem.error().message;

  std::vector<Literal> inputs;
  std::vector<HloInstruction *> params = (*module)->entry()->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    Expected<NpyArray> array =
        readNpyFile(dir + "input" + std::to_string(i) + ".npy");
    ASSERT_TRUE(array) << array.error().message;
    inputs.push_back(npyToLiteral(*array, params[i]->shape().elementType));
  }
  Expected<Literal> result = evaluateHloModule(**module, inputs, options);
  bool bitExact = options.numerics == Numerics::XlaCpu;
  ASSERT_TRUE(result) << result.error().message;
  std::vector<const Literal *> outputs;
  if (result->isTuple())
    for (const Literal &element : result->tupleElements())
      outputs.push_back(&element);
  else
    outputs.push_back(&*result);
  for (size_t i = 0;; ++i) {
    std::string path = dir + "output" + std::to_string(i) + ".npy";
    if (!fileExists(path)) {
      EXPECT_EQ(i, outputs.size()) << "XLA gave " << i << " outputs";
      break;
    }
    ASSERT_LT(i, outputs.size()) << "tessel gave " << outputs.size();
    Expected<NpyArray> want = readNpyFile(path);
    ASSERT_TRUE(want) << want.error().message;
    EXPECT_EQ(compareArrays(*outputs[i], *want, bitExact ? 0 : c.rtol,
                            bitExact ? 0 : c.atol),
              "")
        << "output " << i << (bitExact ? " (--numerics=xla-cpu)" : "");
  }
}

class HloCorpus : public testing::TestWithParam<CorpusCase> {};

TEST_P(HloCorpus, ModuleMatchesXla) { checkModule(GetParam(), "module.hlo"); }
TEST_P(HloCorpus, OptimizedModuleMatchesXla) {
  checkModule(GetParam(), "optimized.hlo");
}

TEST_P(HloCorpus, XlaCpuNumericsMatchXlaBitForBit) {
  if (kXlaCpuDiffers.count(GetParam().name))
    GTEST_SKIP() << kXlaCpuDiffers.at(GetParam().name);
  EvaluatorOptions options;
  options.numerics = Numerics::XlaCpu;
  checkModule(GetParam(), "module.hlo", options);
  checkModule(GetParam(), "optimized.hlo", options);
}

INSTANTIATE_TEST_SUITE_P(Corpus, HloCorpus, testing::ValuesIn(readManifest()),
                         [](const testing::TestParamInfo<CorpusCase> &info) {
                           return info.param.name;
                         });

TEST(HloCorpusManifest, XlaCpuDifferencesNameRealCases) {
  std::vector<CorpusCase> cases = readManifest();
  for (const auto &[name, why] : kXlaCpuDiffers) {
    bool found = false;
    for (const CorpusCase &c : cases)
      found |= c.name == name;
    EXPECT_TRUE(found) << name << " (" << why << ") is not in the corpus";
  }
}

TEST(HloCorpusManifest, HasTheCases) {
  // The list: GELU, softmax, layer norm, attention scores,
  // transposes, row and column reductions, pad/slice/concatenate, bf16 and
  // f32.
  std::vector<CorpusCase> cases = readManifest();
  EXPECT_GE(cases.size(), 30u);
  for (const char *name :
       {"gelu_tanh_bf16", "softmax_f32", "layer_norm_bf16",
        "attention_scores_f32", "transpose_4d_f32", "row_reduce_f32",
        "column_reduce_f32", "pad_slice_concat_bf16", "integer_ops_s32"}) {
    bool found = false;
    for (const CorpusCase &c : cases)
      found |= c.name == name;
    EXPECT_TRUE(found) << name;
  }
}

} // namespace
