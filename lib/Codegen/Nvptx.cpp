//===- Nvptx.cpp - The llvm dialect of GPU kernels to PTX -----------------===//
//
// Translation to LLVM IR (the NVVM dialect's translation writes the kernel
// annotations), libdevice linked with only what the kernels call and made
// internal, -O3 with the NVPTX target machine (its pipeline runs
// NVVMReflect, which settles libdevice's __nvvm_reflect queries: no
// flush-to-zero), then the NVPTX backend's assembly printer.
//
//===----------------------------------------------------------------------===//
#include "tessel/Codegen/Nvptx.h"

#include "NvptxBackend.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <mutex>
#include <set>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tessel {

namespace {

constexpr const char kTriple[] = "nvptx64-nvidia-cuda";

std::string llvmErrorMessage(llvm::Error error) {
  std::string message;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &e) {
    message += e.message();
  });
  return message;
}

const llvm::Target *nvptxTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string error;
  return llvm::TargetRegistry::lookupTarget(kTriple, error);
}

std::unique_ptr<llvm::TargetMachine> nvptxTargetMachine(int smVersion) {
  const llvm::Target *target = nvptxTarget();
  if (!target)
    return nullptr;
  std::string cpu = "sm_" + std::to_string(smVersion);
  std::string features = "+ptx" + std::to_string(ptxVersionFor(smVersion));
  // Default options: no fp contraction, no fast math (kernels compute what
  // the evaluator computes).
  llvm::TargetOptions options;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      kTriple, cpu, features, options, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
}

/// Links the libdevice functions `llvmModule` calls into it, as internal
/// functions (the only externally visible functions are the kernels).
Status linkLibdevice(llvm::Module &llvmModule) {
  bool calls = false;
  for (llvm::Function &function : llvmModule)
    if (function.isDeclaration() && function.getName().starts_with("__nv_"))
      calls = true;
  if (!calls)
    return {};
  std::string path;
  if (const char *env = std::getenv("TESSEL_LIBDEVICE")) {
    path = env;
  } else {
    Expected<std::string> found =
        findCudaToolkitFile("nvvm/libdevice/libdevice.10.bc");
    if (!found)
      return Error("the kernels call CUDA's libdevice (for sin, cos, tanh, "
                   "... of f64 and the like) and " +
                   found.error().message);
    path = *found;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return Error("cannot read libdevice '" + path +
                 "': " + buffer.getError().message());
  auto library = llvm::parseBitcodeFile((*buffer)->getMemBufferRef(),
                                        llvmModule.getContext());
  if (!library)
    return Error("cannot parse libdevice '" + path +
                 "': " + llvmErrorMessage(library.takeError()));
  (*library)->setTargetTriple(llvmModule.getTargetTriple());
  (*library)->setDataLayout(llvmModule.getDataLayout());
  std::set<std::string> ours;
  for (llvm::Function &function : llvmModule)
    if (!function.isDeclaration())
      ours.insert(function.getName().str());
  if (llvm::Linker::linkModules(llvmModule, std::move(*library),
                                llvm::Linker::LinkOnlyNeeded))
    return Error("linking libdevice '" + path + "' failed");
  for (llvm::Function &function : llvmModule)
    if (!function.isDeclaration() && !ours.count(function.getName().str()))
      function.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &global : llvmModule.globals())
    if (!global.isDeclaration())
      global.setLinkage(llvm::GlobalValue::InternalLinkage);
  return {};
}

} // namespace

Expected<std::string> findCudaToolkitFile(llvm::StringRef relative) {
  std::vector<std::string> roots;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable))
      if (*value)
        roots.push_back(value);
  if (auto ptxas = llvm::sys::findProgramByName("ptxas")) {
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(*ptxas, real))
      real = *ptxas;
    // <root>/bin/ptxas
    roots.push_back(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(real)).str());
  }
  roots.push_back("/usr/local/cuda");
  std::string looked;
  for (const std::string &root : roots) {
    llvm::SmallString<256> path(root);
    llvm::sys::path::append(path, relative);
    if (llvm::sys::fs::exists(path))
      return std::string(path);
    looked += (looked.empty() ? "" : ", ") + std::string(path);
  }
  return Error("no " + relative.str() + " in the CUDA toolkit (looked at " +
               looked + "; set CUDA_HOME)");
}

int ptxVersionFor(int smVersion) {
  if (smVersion >= 89)
    return 78;
  if (smVersion >= 80)
    return 70;
  if (smVersion >= 75)
    return 63;
  return 60;
}

bool isSupportedSm(int smVersion) {
  const llvm::Target *target = nvptxTarget();
  if (!target || smVersion <= 0)
    return false;
  // A subtarget of the default GPU answers for the others (one made for
  // an unknown GPU would print a warning).
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(kTriple, "", ""));
  return info && info->isCPUStringValid("sm_" + std::to_string(smVersion));
}

Expected<std::string> translateToNvptx(mlir::ModuleOp module, int smVersion,
                                       bool ptx) {
  if (!isSupportedSm(smVersion))
    return Error("sm_" + std::to_string(smVersion) +
                 " is not a GPU that LLVM's NVPTX backend knows (sm_50 to "
                 "sm_90, e.g. --sm 80 or --sm 90)");
  std::unique_ptr<llvm::TargetMachine> machine = nvptxTargetMachine(smVersion);
  if (!machine)
    return Error("this LLVM has no NVPTX backend");
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return Error("translation of the GPU kernels to LLVM IR failed");
  llvmModule->setTargetTriple(kTriple);
  llvmModule->setDataLayout(machine->createDataLayout());
  Status linked = linkLibdevice(*llvmModule);
  if (!linked)
    return linked.error();
  auto optimize = mlir::makeOptimizingTransformer(3, 0, machine.get());
  if (llvm::Error error = optimize(llvmModule.get()))
    return Error("LLVM optimization failed: " +
                 llvmErrorMessage(std::move(error)));
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!ptx) {
    llvmModule->print(os, nullptr);
    return text;
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream asmStream(buffer);
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, asmStream, nullptr,
                                   llvm::CodeGenFileType::AssemblyFile))
    return Error("the NVPTX backend cannot emit PTX");
  pm.run(*llvmModule);
  return std::string(buffer.begin(), buffer.end());
}

} // namespace tessel
