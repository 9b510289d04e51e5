//===- AlignCommand.cpp - tessel align: the alignment check on a file -----===//
//
//   tessel align kernel.mlir [--json]
//
// Runs --tessel-verify-alignment's check on an MLIR file (func, arith, scf,
// affine, memref, vector, gpu, tessel and tpu ops) and prints, for each index
// not proven a multiple of its tile, Mosaic's message and tessel's
// explanation, naming values as the file does. Exit status 1 when an access
// fails (or the file does not parse), 0 when every access is aligned.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "Commands.h"

#include "tessel/Analysis/AlignmentVerifier.h"
#include "tessel/Dialect/TesselDialect.h"
#include "tessel/Dialect/TpuDialect.h"
#include "tessel/Support/FileIO.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace tessel {
namespace {

const char *kOverview =
    "tessel align: prove that every dynamic index into tiled memory is a "
    "multiple of the tile (Mosaic TPU's rule), or say why not and how to "
    "fix it.\n\n"
    "  tessel align kernel.mlir [--json]\n";

/// The names values have in the source file: "%b", "%r#1".
llvm::DenseMap<Value, std::string> sourceNames(const AsmParserState &state) {
  llvm::DenseMap<Value, std::string> names;
  auto text = [](llvm::SMRange r) {
    return std::string(r.Start.getPointer(),
                       r.End.getPointer() - r.Start.getPointer());
  };
  for (const AsmParserState::OperationDefinition &def : state.getOpDefs()) {
    const auto &groups = def.resultGroups;
    for (size_t g = 0; g < groups.size(); ++g) {
      unsigned begin = groups[g].startIndex;
      unsigned end = g + 1 < groups.size() ? groups[g + 1].startIndex
                                           : def.op->getNumResults();
      for (unsigned i = begin; i < end; ++i)
        names[def.op->getResult(i)] =
            text(groups[g].definition.loc) +
            (end - begin > 1 ? "#" + std::to_string(i - begin) : "");
    }
  }
  for (const AsmParserState::BlockDefinition &def : state.getBlockDefs())
    for (auto [i, arg] : llvm::enumerate(def.arguments))
      if (i < def.block->getNumArguments() && arg.loc.isValid())
        names[def.block->getArgument(i)] = text(arg.loc);
  return names;
}

std::pair<unsigned, unsigned> lineAndColumn(Operation *op) {
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    return {loc.getLine(), loc.getColumn()};
  return {0, 0};
}

const char *verdictName(Verdict v) {
  return v == Verdict::ProvenNot ? "proven-not" : "unknown";
}

void printText(const std::string &file, const AlignmentReport &report) {
  llvm::raw_ostream &os = llvm::outs();
  for (const AlignmentFailure &f : report.failures) {
    auto [line, column] = lineAndColumn(f.op);
    os << file << ":" << line << ":" << column << ": error: " << f.message
       << "\n";
    os << "  op      " << f.op->getName().getStringRef() << "\n";
    os << "  why     " << f.source << "\n";
    os << "  term    " << f.term << "\n";
    os << "  status  " << f.status << "\n";
    llvm::StringRef fix = f.fix;
    fix.consume_front("fix: ");
    os << "  fix     " << fix << "\n\n";
  }
  os << report.accessesChecked << " accesses into tiled memory, "
     << report.indicesChecked << " dynamic indices into tiled dims: ";
  if (report.failures.empty())
    os << "all proven aligned\n";
  else
    os << report.failures.size() << " not proven aligned\n";
}

void printJson(const std::string &file, const AlignmentReport &report) {
  llvm::json::Array failures;
  for (const AlignmentFailure &f : report.failures) {
    auto [line, column] = lineAndColumn(f.op);
    failures.push_back(llvm::json::Object{
        {"line", line},
        {"column", column},
        {"op", f.op->getName().getStringRef().str()},
        {"dimension", f.dim},
        {"multiple", f.multiple},
        {"verdict", verdictName(f.verdict)},
        {"message", f.message},
        {"source", f.source},
        {"term", f.term},
        {"status", f.status},
        {"fix", f.fix},
    });
  }
  llvm::json::Object root{
      {"file", file},
      {"accesses", report.accessesChecked},
      {"indices", report.indicesChecked},
      {"aligned", report.failures.empty()},
      {"failures", std::move(failures)},
  };
  llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
               << "\n";
}

} // namespace

int runAlignCommand(int argc, char **argv) {
  cl::opt<bool> json("json", cl::desc("print the report as JSON"),
                     cl::cat(cli::category()));
  cl::opt<std::string> path(cl::Positional, cl::desc("<FILE.mlir>"),
                            cl::cat(cli::category()));
  std::string program = "tessel align";
  std::vector<char *> args(argv, argv + argc);
  args[0] = program.data();
  if (!cli::parseOptions(static_cast<int>(args.size()), args.data(), kOverview))
    return 2;
  if (path.empty())
    return cli::usageError("expected an MLIR file, e.g. tessel align k.mlir");

  // Bounded like every other read: /dev/zero must not be read for ever.
  Expected<std::string> text = readFileBytes(path);
  if (!text)
    return cli::fail(text.error().message);
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(*text, path);
  DialectRegistry registry;
  registry.insert<affine::AffineDialect, arith::ArithDialect, func::FuncDialect,
                  gpu::GPUDialect, memref::MemRefDialect, scf::SCFDialect,
                  vector::VectorDialect, TesselDialect, tpu::TpuDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagnosticStream);
  Block block;
  AsmParserState state;
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, &block, config, &state))) {
    llvm::errs() << diagnostics;
    return cli::fail("'" + path + "' is not valid MLIR");
  }
  llvm::DenseMap<Value, std::string> names = sourceNames(state);
  ValueNamer name = [&](Value v) -> std::string {
    auto it = names.find(v);
    if (it != names.end())
      return it->second;
    std::string s;
    llvm::raw_string_ostream os(s);
    v.printAsOperand(os, OpPrintingFlags());
    return s;
  };
  AlignmentReport report;
  for (Operation &op : block) {
    AlignmentReport one = verifyAlignment(&op, name);
    report.accessesChecked += one.accessesChecked;
    report.indicesChecked += one.indicesChecked;
    report.failures.insert(report.failures.end(), one.failures.begin(),
                           one.failures.end());
  }
  if (json)
    printJson(path, report);
  else
    printText(path, report);
  return report.failures.empty() ? 0 : 1;
}

} // namespace tessel
