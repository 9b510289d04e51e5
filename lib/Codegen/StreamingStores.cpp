//===- StreamingStores.cpp - Non-temporal stores into large outputs -------===//
//
// Copies a kernel and, in the copy, marks the aligned vector stores into
// its outputs non-temporal (StreamingStores.h).
//
//===----------------------------------------------------------------------===//
#include "StreamingStores.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/Support/KnownBits.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>

namespace tessel {

void addStreamingCopy(llvm::Module &module, llvm::StringRef name,
                      llvm::StringRef suffix,
                      llvm::ArrayRef<unsigned> outputs) {
  llvm::Function *function = module.getFunction(name);
  llvm::ValueToValueMapTy map;
  llvm::Function *copy = llvm::CloneFunction(function, map);
  copy->setName(name.str() + suffix.str());
  std::string list;
  for (unsigned k : outputs)
    list += (list.empty() ? "" : ",") + std::to_string(k);
  copy->addFnAttr(kStreamOutputsAttr, list);
  // Its own function, so that the packed wrapper calls it (and the marks
  // find its stores) rather than inlining it.
  copy->addFnAttr(llvm::Attribute::NoInline);
}

namespace {

/// log2 of the alignment `pointer` is known to have when every argument
/// in `outputs` is 64-byte aligned (at most 6), or -1 when it is not an
/// offset from one of them.
int knownAlignmentLog2(llvm::Value *pointer,
                       const llvm::SmallVectorImpl<llvm::Argument *> &outputs,
                       const llvm::DataLayout &layout) {
  int log2 = 6;
  for (int depth = 0; depth < 16; ++depth) {
    pointer = pointer->stripPointerCasts();
    if (auto *arg = llvm::dyn_cast<llvm::Argument>(pointer))
      return llvm::is_contained(outputs, arg) ? log2 : -1;
    auto *gep = llvm::dyn_cast<llvm::GEPOperator>(pointer);
    if (!gep)
      return -1;
    unsigned bits = layout.getIndexTypeSizeInBits(gep->getType());
    llvm::MapVector<llvm::Value *, llvm::APInt> variables;
    llvm::APInt constant(bits, 0);
    if (!gep->collectOffset(layout, bits, variables, constant))
      return -1;
    if (!constant.isZero())
      log2 = std::min<int>(log2, constant.countr_zero());
    for (auto &[value, scale] : variables) {
      llvm::KnownBits known = llvm::computeKnownBits(value, layout);
      int zeros = static_cast<int>(known.countMinTrailingZeros()) +
                  static_cast<int>(scale.countr_zero());
      log2 = std::min(log2, zeros);
    }
    pointer = gep->getPointerOperand();
  }
  return -1;
}

int markFunction(llvm::Function &function) {
  llvm::SmallVector<llvm::Argument *> outputs;
  llvm::SmallVector<llvm::StringRef> numbers;
  llvm::StringRef list =
      function.getFnAttribute(kStreamOutputsAttr).getValueAsString();
  list.split(numbers, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef number : numbers) {
    unsigned k = 0;
    if (!number.getAsInteger(10, k) && k < function.arg_size())
      outputs.push_back(function.getArg(k));
  }
  const llvm::DataLayout &layout = function.getParent()->getDataLayout();
  llvm::LLVMContext &context = function.getContext();
  llvm::MDNode *nontemporal = llvm::MDNode::get(
      context, llvm::ConstantAsMetadata::get(
                   llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), 1)));
  int marked = 0;
  llvm::SmallVector<llvm::ReturnInst *> returns;
  for (llvm::BasicBlock &block : function)
    for (llvm::Instruction &inst : block) {
      if (auto *ret = llvm::dyn_cast<llvm::ReturnInst>(&inst))
        returns.push_back(ret);
      auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst);
      if (!store || store->isVolatile() || store->isAtomic())
        continue;
      llvm::Type *type = store->getValueOperand()->getType();
      if (!type->isVectorTy())
        continue;
      // A store wider than a line (a vector<32xf32> of the CPU's lane
      // loops) is split into the target's registers by the code
      // generator, each part keeping the hint: it needs a line's
      // alignment, and a whole number of lines.
      uint64_t bytes = layout.getTypeStoreSize(type).getFixedValue();
      if (bytes < 16 || !llvm::isPowerOf2_64(bytes) ||
          layout.getTypeAllocSize(type) != bytes)
        continue;
      uint64_t needed = std::min<uint64_t>(bytes, 64);
      int log2 =
          knownAlignmentLog2(store->getPointerOperand(), outputs, layout);
      if (log2 < 0 || (uint64_t(1) << log2) < needed)
        continue;
      store->setAlignment(llvm::Align(needed));
      store->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
      ++marked;
    }
  if (marked > 0)
    for (llvm::ReturnInst *ret : returns) {
      llvm::IRBuilder<> b(ret);
      b.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
    }
  return marked;
}

} // namespace

int markStreamingStores(llvm::Module &module) {
  int marked = 0;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.hasFnAttribute(kStreamOutputsAttr))
      marked += markFunction(function);
  return marked;
}

} // namespace tessel
