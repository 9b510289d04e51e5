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

/// Whether `loop` converts between half and a wider float, and the widest
/// floating-point type its instructions compute (in bits).
bool convertsHalf(const llvm::Loop &loop, unsigned &widestFloatBits) {
  bool converts = false;
  widestFloatBits = 32;
  for (const llvm::BasicBlock *block : loop.blocks())
    for (const llvm::Instruction &instruction : *block) {
      if (llvm::isa<llvm::FPTruncInst>(instruction) &&
          isHalf(instruction.getType()))
        converts = true;
      if (llvm::isa<llvm::FPExtInst>(instruction) &&
          isHalf(instruction.getOperand(0)->getType()))
        converts = true;
      llvm::Type *type = instruction.getType()->getScalarType();
      if (type->isFloatingPointTy())
        widestFloatBits = std::max<unsigned>(
            widestFloatBits, type->getPrimitiveSizeInBits().getFixedValue());
    }
  return converts;
}

} // namespace

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

VectorUnit vectorUnitOf(llvm::TargetMachine &machine) {
  VectorUnit unit;
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  unit.halfConversions = subtarget && subtarget->checkFeatures("+f16c");
  // The width the vectorizer itself uses, asked of a function for the host.
  llvm::LLVMContext context;
  llvm::Module probe("probe", context);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), false);
  llvm::Function *function = llvm::Function::Create(
      type, llvm::Function::ExternalLinkage, "probe", probe);
  function->addFnAttr("target-cpu", machine.getTargetCPU());
  function->addFnAttr("target-features", machine.getTargetFeatureString());
  llvm::TargetTransformInfo info = machine.getTargetTransformInfo(*function);
  unit.bits = static_cast<unsigned>(
      info.getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
          .getFixedValue());
  return unit;
}

unsigned halfConversionVectorBits(llvm::TargetMachine &machine) {
  VectorUnit unit = vectorUnitOf(machine);
  return unit.halfConversions ? unit.bits : 0;
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
      unsigned widest = 32;
      if (!loop->isInnermost() || loop->getLoopID() || !loop->getLoopLatch() ||
          !convertsHalf(*loop, widest))
        continue;
      unsigned width = vectorBits / widest;
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
