//===- HalfConversionLoops.cpp - Vector width hints for f16 loops ---------===//
//
// Finds the innermost loops that convert to or from f16 and asks the loop
// vectorizer for the host's full vector width (HalfConversionLoops.h).
//
//===----------------------------------------------------------------------===//
#include "HalfConversionLoops.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>

namespace tessel {

namespace {

bool isHalf(llvm::Type *type) { return type->getScalarType()->isHalfTy(); }

/// Whether `loop` converts between half and a wider float.
bool convertsHalf(const llvm::Loop &loop) {
  for (const llvm::BasicBlock *block : loop.blocks())
    for (const llvm::Instruction &instruction : *block) {
      if (llvm::isa<llvm::FPTruncInst>(instruction) &&
          isHalf(instruction.getType()))
        return true;
      if (llvm::isa<llvm::FPExtInst>(instruction) &&
          isHalf(instruction.getOperand(0)->getType()))
        return true;
    }
  return false;
}

} // namespace

unsigned widestFloatBits(const llvm::Loop &loop) {
  unsigned widest = 32;
  for (const llvm::BasicBlock *block : loop.blocks())
    for (const llvm::Instruction &instruction : *block) {
      llvm::Type *type = instruction.getType()->getScalarType();
      if (type->isFloatingPointTy())
        widest = std::max<unsigned>(
            widest, type->getPrimitiveSizeInBits().getFixedValue());
    }
  return widest;
}

llvm::MDNode *loopIdWithHint(llvm::LLVMContext &context, llvm::StringRef hint,
                             unsigned value) {
  llvm::Metadata *pair[] = {
      llvm::MDString::get(context, hint),
      llvm::ConstantAsMetadata::get(
          llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), value))};
  llvm::Metadata *operands[] = {nullptr, llvm::MDNode::get(context, pair)};
  llvm::MDNode *id = llvm::MDNode::getDistinct(context, operands);
  id->replaceOperandWith(0, id);
  return id;
}

unsigned defaultVectorWidth(llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  bool wide = subtarget && subtarget->checkFeatures("+avx512f,+avx512vbmi2");
  return wide ? 512 : 0;
}

void preferVectorWidth(llvm::Function &function, llvm::TargetMachine &machine,
                       unsigned bits) {
  if (bits == 0)
    bits = defaultVectorWidth(machine);
  if (bits != 0)
    function.addFnAttr("prefer-vector-width", std::to_string(bits));
}

VectorUnit vectorUnitOf(llvm::TargetMachine &machine, unsigned preferredBits) {
  VectorUnit unit;
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  unit.halfConversions = subtarget && subtarget->checkFeatures("+f16c");
  unit.halvesWideVectors = machine.getTargetCPU() == "znver4";
  // The width the vectorizer itself uses, asked of a function for the host.
  llvm::LLVMContext context;
  llvm::Module probe("probe", context);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
  llvm::Function *function = llvm::Function::Create(
      type, llvm::Function::ExternalLinkage, "probe", probe);
  function->addFnAttr("target-cpu", machine.getTargetCPU());
  function->addFnAttr("target-features", machine.getTargetFeatureString());
  preferVectorWidth(*function, machine, preferredBits);
  llvm::TargetTransformInfo info = machine.getTargetTransformInfo(*function);
  unit.bits = static_cast<unsigned>(
      info.getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
          .getFixedValue());
  return unit;
}

unsigned halfConversionVectorBits(llvm::TargetMachine &machine,
                                  unsigned preferredBits) {
  VectorUnit unit = vectorUnitOf(machine, preferredBits);
  return unit.halfConversions ? unit.bits : 0;
}

bool carriesFloat(const llvm::Loop &loop) {
  for (const llvm::PHINode &phi : loop.getHeader()->phis())
    if (phi.getType()->isFPOrFPVectorTy())
      return true;
  return false;
}

int hintHalfConversionLoops(llvm::Module &module, unsigned vectorBits) {
  if (vectorBits == 0)
    return 0;
  int marked = 0;
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      if (!loop->isInnermost() || loop->getLoopID() || !loop->getLoopLatch() ||
          !convertsHalf(*loop) || carriesFloat(*loop))
        continue;
      unsigned width = vectorBits / widestFloatBits(*loop);
      if (width < 2)
        continue;
      loop->setLoopID(loopIdWithHint(function.getContext(),
                                     "llvm.loop.vectorize.width", width));
      ++marked;
    }
  }
  return marked;
}

} // namespace tessel
