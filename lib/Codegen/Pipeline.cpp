//===- Pipeline.cpp - From HLO to the llvm dialect ------------------------===//
#include "Pipeline.h"

#include "tessel/Codegen/ComputationPartitioner.h"
#include "tessel/Codegen/Passes.h"
#include "tessel/Dialect/ErrorDiagnostics.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel {

std::unique_ptr<mlir::MLIRContext> createCodegenContext() {
  mlir::DialectRegistry registry;
  registry.insert<TesselDialect, mlir::arith::ArithDialect,
                  mlir::complex::ComplexDialect, mlir::cf::ControlFlowDialect,
                  mlir::func::FuncDialect, mlir::gpu::GPUDialect,
                  mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect, mlir::vector::VectorDialect>();
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // Kernels are compiled one at a time; MLIR's own thread pool would only
  // compete with the workers that run them.
  context->disableMultithreading();
  return context;
}

Target launchTarget(const CompileOptions &options) {
  return options.backend == Backend::Nvptx ? Target::Gpu : options.target;
}

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
emitKernels(const ModulePlan &plan, const CompileOptions &options,
            mlir::MLIRContext *context, unsigned squareBits) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(context));
  // The emitters report what they cannot compile as diagnostics at the
  // instruction's line and column.
  ErrorCapture capture(context);
  for (const PlannedKernel &kernel : plan.kernels) {
    auto entry =
        emitFusion(*module, *kernel.computation, kernel.name,
                   launchTarget(options), kernel.outputIndices, squareBits);
    if (mlir::failed(entry))
      return capture.takeError("");
  }
  if (mlir::failed(mlir::verify(*module)))
    return capture.takeError("internal error: the emitted IR does not verify");
  return module;
}

namespace {

/// Writes the IR after each pass whose flag matches a regex to
/// DIR/NN.<flag>.mlir.
/// The name MLIR gives scf.for's canonicalization pattern that inlines a
/// loop of one trip (and removes one of none): its class's type name.
/// `min-max-on-bits.test` fails where it stops matching.
const std::string kOneTripLoopPattern =
    "(anonymous namespace)::SimplifyTrivialLoops";

class DumpInstrumentation : public mlir::PassInstrumentation {
public:
  DumpInstrumentation(std::string regex, std::string dir)
      : regex(std::move(regex)), dir(std::move(dir)) {}
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    ++count;
    llvm::StringRef flag = pass->getArgument();
    if (!regex.match(flag))
      return;
    char prefix[8];
    std::snprintf(prefix, sizeof(prefix), "%02d.", count);
    std::string path = dir + "/" + prefix + flag.str() + ".mlir";
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (!ec)
      op->print(out);
  }

private:
  llvm::Regex regex;
  std::string dir;
  int count = 0;
};

} // namespace

Status lowerToLlvmDialect(mlir::ModuleOp module,
                          const CompileOptions &options) {
  mlir::MLIRContext *context = module.getContext();
  mlir::PassManager pm(context);
  pm.addPass(createInlineSubgraphsPass());
  pm.addPass(createFoldNanConstantsPass());
  if (options.excessPrecision)
    pm.addPass(createSimplifyFpConversionsPass());
  // On the CPU the canonicalizers before -tessel-vectorize-partials keep
  // loops of one trip: a row of two chunks of partial results (32 to 47
  // elements) would lose its loop, and with it the vector of its partials
  // (Zen 3, one thread: the bf16 maxima of rows of 32 at about a fifth of
  // a copy's speed). That pass removes them after it.
  auto earlyCanonicalizer = [&] {
    if (options.backend == Backend::Nvptx)
      return mlir::createCanonicalizerPass();
    return mlir::createCanonicalizerPass(mlir::GreedyRewriteConfig(),
                                         {kOneTripLoopPattern});
  };
  pm.addPass(earlyCanonicalizer());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(createLowerLoopsPass());
  pm.addPass(createFlattenTensorsPass());
  pm.addPass(earlyCanonicalizer());
  pm.addPass(mlir::createCSEPass());
  // On the CPU row maxima and minima run on the bits, and a row's partial
  // results become the lanes of one vector, before short row loops are
  // unrolled.
  if (options.backend != Backend::Nvptx) {
    pm.addPass(createMinMaxOnBitsPass());
    pm.addPass(createVectorizePartialsPass());
  }
  pm.addPass(createVectorizeLoadsStoresPass());
  pm.addPass(createUnrollLoopsPass());
  pm.addPass(mlir::createCanonicalizerPass());
  // For the CPU, whichever launch configuration the kernels were emitted
  // for, threads run as a loop (a GPU launch's too); for the GPU they are
  // its threads. On the CPU, threads that each reduce a row then read 4
  // rows at a time.
  if (options.backend == Backend::Nvptx) {
    pm.addPass(createLowerGridToNvvmPass());
  } else {
    pm.addPass(createLowerGridToCpuPass());
    pm.addPass(createSplitRaggedBlocksPass());
    pm.addPass(createVectorizeLaneLoopsPass());
    pm.addPass(createJamReductionLoopsPass());
    pm.addPass(createColumnExtremesPass());
  }
  pm.addPass(createLowerIndexingPass());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(createLowerTensorsPass());
  pm.addPass(createLowerToLlvmPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  if (!options.dumpAfter.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(options.dumpDir))
      return Error("cannot create the dump directory '" + options.dumpDir +
                   "': " + ec.message());
    llvm::Regex regex(options.dumpAfter);
    std::string regexError;
    if (!regex.isValid(regexError))
      return Error("--dump-after '" + options.dumpAfter +
                   "' is not a valid regex: " + regexError);
    std::error_code ec;
    llvm::raw_fd_ostream out(options.dumpDir + "/00.emitted.mlir", ec);
    if (!ec)
      module.print(out);
    pm.addInstrumentation(std::make_unique<DumpInstrumentation>(
        options.dumpAfter, options.dumpDir));
  }
  ErrorCapture capture(context);
  if (mlir::failed(pm.run(module)))
    return capture.takeError("the pass pipeline failed");
  return success();
}

} // namespace tessel
