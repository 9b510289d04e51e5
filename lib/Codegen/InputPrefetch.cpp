//===- InputPrefetch.cpp - Prefetching the next tile's input rows ---------===//
//
// Puts a prefetch before the vector loads of a marked kernel's inputs
// (InputPrefetch.h).
//
//===----------------------------------------------------------------------===//
#include "InputPrefetch.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

#include <map>
#include <string>
#include <tuple>

namespace tessel {

void markInputPrefetches(llvm::Module &module, llvm::StringRef name,
                         llvm::ArrayRef<std::pair<unsigned, int64_t>> inputs) {
  if (inputs.empty())
    return;
  llvm::Function *function = module.getFunction(name);
  std::string list;
  for (auto [arg, bytes] : inputs)
    list += (list.empty() ? "" : ",") + std::to_string(arg) + ":" +
            std::to_string(bytes);
  function->addFnAttr(kPrefetchInputsAttr, list);
  function->addFnAttr(llvm::Attribute::NoInline);
}

namespace {

/// The attribute's (argument, bytes ahead) pairs; malformed entries are
/// skipped (the attribute is only written by markInputPrefetches).
std::map<llvm::Argument *, int64_t> listedInputs(llvm::Function &function) {
  std::map<llvm::Argument *, int64_t> inputs;
  llvm::StringRef value =
      function.getFnAttribute(kPrefetchInputsAttr).getValueAsString();
  llvm::SmallVector<llvm::StringRef> entries;
  value.split(entries, ',', -1, false);
  for (llvm::StringRef entry : entries) {
    auto [argText, bytesText] = entry.split(':');
    unsigned arg = 0;
    int64_t bytes = 0;
    if (argText.getAsInteger(10, arg) || bytesText.getAsInteger(10, bytes) ||
        arg >= function.arg_size() ||
        !function.getArg(arg)->getType()->isPointerTy())
      continue;
    inputs[function.getArg(arg)] = bytes;
  }
  return inputs;
}

} // namespace

int addInputPrefetches(llvm::Module &module) {
  int added = 0;
  for (llvm::Function &function : module) {
    if (function.isDeclaration() ||
        !function.hasFnAttribute(kPrefetchInputsAttr))
      continue;
    std::map<llvm::Argument *, int64_t> inputs = listedInputs(function);
    // (load, its address, bytes ahead)
    llvm::SmallVector<std::tuple<llvm::Instruction *, llvm::Value *, int64_t>>
        loads;
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &instruction : block) {
        if (!instruction.getType()->isVectorTy())
          continue;
        // Plain vector loads, and the masked ones of tiles at the array's
        // ragged edges.
        llvm::Value *address = nullptr;
        if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&instruction))
          address = load->getPointerOperand();
        else if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction);
                 call && call->getIntrinsicID() == llvm::Intrinsic::masked_load)
          address = call->getArgOperand(0);
        if (!address)
          continue;
        auto *arg =
            llvm::dyn_cast<llvm::Argument>(llvm::getUnderlyingObject(address));
        auto it = arg ? inputs.find(arg) : inputs.end();
        if (it != inputs.end())
          loads.push_back({&instruction, address, it->second});
      }
    for (auto [load, address, bytes] : loads) {
      llvm::IRBuilder<> builder(load);
      llvm::Value *ahead = builder.CreateGEP(builder.getInt8Ty(), address,
                                             builder.getInt64(bytes));
      // Read (0), into L2 (locality 2), data (1).
      builder.CreateIntrinsic(llvm::Intrinsic::prefetch, {ahead->getType()},
                              {ahead, builder.getInt32(0), builder.getInt32(2),
                               builder.getInt32(1)});
      ++added;
    }
  }
  return added;
}

} // namespace tessel
