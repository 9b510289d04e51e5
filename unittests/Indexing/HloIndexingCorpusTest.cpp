//===- HloIndexingCorpusTest.cpp - Maps of the jax corpus's fusions -------===//
//
// Every fusion of every optimized module in test/Hlo/corpus is cut out into
// a module of its own (its operands become parameters) and its maps are
// checked by brute force against the evaluator, as in HloIndexingTest.
//
//===----------------------------------------------------------------------===//
#include "HloInfluence.h"

#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Support/Npy.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>

using namespace tessel;
using namespace tessel::testing;

namespace {

/// Largest total of operand elements checked (each is perturbed and the
/// fusion evaluated again).
constexpr int64_t kMaxPerturbedElements = 1024;

/// The fusion as the ROOT of a module whose parameters are its operands.
std::string standaloneModule(const HloModule &module,
                             const HloInstruction &fusion) {
  std::string text = "HloModule standalone\n\n";
  for (const std::unique_ptr<HloComputation> &c : module.computations())
    if (c.get() != module.entry())
      text += c->toString() + "\n\n";
  text += "ENTRY %e {\n";
  std::string operands;
  for (int64_t k = 0; k < fusion.operandCount(); ++k) {
    std::string name = "%operand." + std::to_string(k);
    text += "  " + name + " = " + fusion.operand(k)->shape().toString() +
            " parameter(" + std::to_string(k) + ")\n";
    operands += (k ? ", " : "") + name;
  }
  text += "  ROOT %f = " + fusion.shape().toString() + " fusion(" + operands +
          "), kind=kLoop, calls=%" + fusion.calledComputation()->name() +
          "\n}\n";
  return text;
}

/// Whether the computation (or one it calls) has an instruction for which
/// `match` holds.
bool calls(const HloComputation &computation,
           const std::function<bool(const HloInstruction &)> &match) {
  for (const std::unique_ptr<HloInstruction> &inst :
       computation.instructions()) {
    if (match(*inst))
      return true;
    for (const HloComputation *called : inst->calledComputations())
      if (calls(*called, match))
        return true;
  }
  return false;
}

bool calls(const HloComputation &computation, HloOpcode opcode) {
  return calls(computation, [opcode](const HloInstruction &inst) {
    return inst.opcode() == opcode;
  });
}

/// Ops whose output can ignore a change of a value they read: a compare
/// or is-finite keeps its answer, an integer divide, remainder or shift of
/// small values stays 0, maximum, minimum and clamp keep the other operand,
/// real and imag drop a part. The brute-force reference then sees less
/// influence than the (correct) maps name.
bool isValueDependent(const HloInstruction &inst) {
  switch (inst.opcode()) {
  case HloOpcode::Compare:
  case HloOpcode::IsFinite:
  case HloOpcode::Maximum:
  case HloOpcode::Minimum:
  case HloOpcode::Clamp:
  case HloOpcode::Real:
  case HloOpcode::Imag:
  case HloOpcode::Remainder:
  case HloOpcode::ShiftLeft:
  case HloOpcode::ShiftRightLogical:
  case HloOpcode::ShiftRightArithmetic:
    return true;
  case HloOpcode::Divide:
    return isInteger(inst.shape().elementType);
  default:
    return false;
  }
}

TEST(HloIndexingCorpusTest, EveryFusionPassesTheBruteForceCheck) {
  mlir::MLIRContext context;
  std::vector<std::string> dirs;
  for (const auto &entry :
       std::filesystem::directory_iterator(TESSEL_HLO_CORPUS))
    if (entry.is_directory())
      dirs.push_back(entry.path().string());
  std::sort(dirs.begin(), dirs.end());
  int exact = 0, covering = 0;
  for (const std::string &dir : dirs) {
    Expected<std::string> text = readFileBytes(dir + "/optimized.hlo");
    ASSERT_TRUE(text.ok()) << dir;
    Expected<std::unique_ptr<HloModule>> module = parseHloModule(*text);
    ASSERT_TRUE(module.ok()) << dir << ": " << module.error().message;
    for (const std::unique_ptr<HloInstruction> &inst :
         (*module)->entry()->instructions()) {
      // A fusion of no operands (an iota) reads nothing to check.
      if (inst->opcode() != HloOpcode::Fusion || inst->operandCount() == 0)
        continue;
      int64_t elements = 0;
      for (const HloInstruction *operand : inst->operands())
        elements += operand->shape().elementCount().value_or(0);
      if (elements > kMaxPerturbedElements)
        continue;
      std::string standalone = standaloneModule(**module, *inst);
      Expected<std::unique_ptr<HloModule>> cut = parseHloModule(standalone);
      ASSERT_TRUE(cut.ok()) << cut.error().message << "\n" << standalone;
      ASSERT_TRUE(verifyHloModule(**cut)) << standalone;
      const HloComputation &body = *inst->calledComputation();
      CheckOptions options;
      // Runtime start indices are not fixed here, and some ops ignore
      // values they read: there the maps must cover what is read.
      options.subsetAll =
          calls(body, HloOpcode::DynamicSlice) ||
          calls(body, HloOpcode::DynamicUpdateSlice) ||
          calls(body, HloOpcode::Gather) || calls(body, HloOpcode::Scatter) ||
          calls(body, HloOpcode::Sort) || calls(body, isValueDependent);
      EXPECT_EQ(checkRootMaps(**cut, options, &context), "")
          << dir << " %" << inst->name() << "\n"
          << body.toString();
      ++(options.subsetAll ? covering : exact);
    }
  }
  // 115 exact and 24 covering when this was written.
  EXPECT_GT(exact, 100);
  EXPECT_GT(covering, 20);
  std::printf("%d fusions checked exactly, %d for coverage\n", exact, covering);
}

} // namespace
