//===- CompilerCorpusTest.cpp - Every corpus module compiled and run ------===//
//
// Every module of the jax corpus (test/Hlo/corpus: jax's unoptimized HLO and
// XLA:CPU's optimized HLO, whose fusions are the kernels) is compiled for
// the CPU, run on the corpus inputs and on random inputs with special
// values, and compared with the reference evaluator: bit-exact unless the
// module uses approximated functions (then within kernelComparisonBound).
// Both launch configurations run: the CPU's and the GPU's (threads as a
// loop on the CPU). Modules the compiler refuses must be listed below with
// the reason, so a new refusal is a failure.
//
//===----------------------------------------------------------------------===//
#include "CorpusRefusals.h"
#include "KernelCheck.h"

#include "tessel/Hlo/HloParser.h"
#include "tessel/Support/Npy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

using namespace tessel;

namespace {

std::string corpusDir() { return TESSEL_HLO_CORPUS; }

std::vector<std::string> corpusModules() {
  std::vector<std::string> names;
  std::ifstream in(corpusDir() + "/MANIFEST.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    std::string name;
    fields >> name;
    names.push_back(name + "/module.hlo");
    names.push_back(name + "/optimized.hlo");
  }
  return names;
}

struct CorpusModule {
  std::unique_ptr<HloModule> module;
  std::vector<Literal> inputs;
};

CorpusModule load(const std::string &name) {
  CorpusModule loaded;
  std::string path = corpusDir() + "/" + name;
  Expected<std::string> text = readFileBytes(path);
  EXPECT_TRUE(text) << text.error().message;
  if (!text)
    return loaded;
  Expected<std::unique_ptr<HloModule>> module = parseHloModule(*text);
  EXPECT_TRUE(module) << module.error().message;
  if (!module)
    return loaded;
  loaded.module = std::move(*module);
  std::string dir = path.substr(0, path.rfind('/') + 1);
  std::vector<HloInstruction *> params = loaded.module->entry()->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    Expected<NpyArray> array =
        readNpyFile(dir + "input" + std::to_string(i) + ".npy");
    EXPECT_TRUE(array) << array.error().message;
    if (!array)
      return {};
    Literal literal(Shape(params[i]->shape().elementType, array->shape));
    if (!array->data.empty())
      std::memcpy(literal.data(), array->data.data(), array->data.size());
    loaded.inputs.push_back(std::move(literal));
  }
  return loaded;
}

class CompilerCorpus : public testing::TestWithParam<std::string> {};

TEST_P(CompilerCorpus, MatchesTheEvaluator) {
  CorpusModule c = load(GetParam());
  ASSERT_TRUE(c.module);
  auto known = knownRefusals().find(GetParam());
  const std::string *refusal =
      known != knownRefusals().end() ? &known->second : nullptr;
  // TESSEL_TEST_BACKEND=nvptx sends the GPU's launch to the GPU, whose
  // executable may refuse a module (gpuRunRefusals).
  const char *backend = std::getenv("TESSEL_TEST_BACKEND");
  bool onTheGpu = backend && std::string(backend) == "nvptx";
  for (Target target : {Target::Cpu, Target::Gpu}) {
    SCOPED_TRACE(target == Target::Cpu ? "CPU launch" : "GPU launch");
    auto gpu = gpuRunRefusals().find(GetParam());
    if (!refusal && onTheGpu && target == Target::Gpu &&
        gpu != gpuRunRefusals().end())
      refusal = &gpu->second;
    CompileOptions options;
    options.target = target;
    // The corpus inputs, then random ones with NaN, infinities, zeros of
    // both signs, subnormals and the largest values.
    std::vector<Literal> randomInputs;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      randomInputs.push_back(
          randomLiteral(c.inputs[i].shape(), 1000 + i, /*specials=*/true));
    for (const std::vector<Literal> *inputs : {&c.inputs, &randomInputs}) {
      KernelCheckResult check = checkKernels(*c.module, *inputs, options, 2);
      if (refusal) {
        EXPECT_TRUE(check.refused)
            << "now compiles: remove it from knownRefusals() (or "
               "gpuRunRefusals())";
        EXPECT_NE(check.failure.find(*refusal), std::string::npos)
            << check.failure;
        return;
      }
      EXPECT_EQ(check.failure, "")
          << (inputs == &c.inputs ? "corpus inputs" : "random inputs");
    }
  }
}

std::string testName(const testing::TestParamInfo<std::string> &info) {
  std::string name = info.param;
  for (char &ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CompilerCorpus,
                         testing::ValuesIn(corpusModules()), testName);

TEST(CompilerCorpusList, CoversTheCorpus) {
  EXPECT_GE(corpusModules().size(), 60u);
  for (const auto &[name, reason] : knownRefusals()) {
    bool listed = false;
    for (const std::string &module : corpusModules())
      listed |= module == name;
    EXPECT_TRUE(listed) << name << " is not in the corpus any more";
  }
  for (const auto &[name, reason] : gpuRunRefusals()) {
    bool listed = false;
    for (const std::string &module : corpusModules())
      listed |= module == name;
    EXPECT_TRUE(listed) << name << " is not in the corpus any more";
    EXPECT_EQ(knownRefusals().count(name), 0u) << name;
  }
}

} // namespace
