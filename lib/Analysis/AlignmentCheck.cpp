//===- AlignmentCheck.cpp - The alignment check of an MLIR source ---------===//
#include "tessel/Analysis/AlignmentCheck.h"

#include "tessel/Analysis/AlignmentVerifier.h"
#include "tessel/Dialect/TesselDialect.h"
#include "tessel/Dialect/TpuDialect.h"

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
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace tessel {
namespace {

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

AlignmentFinding toFinding(const AlignmentFailure &f) {
  AlignmentFinding finding;
  if (auto loc = dyn_cast<FileLineColLoc>(f.op->getLoc())) {
    finding.line = loc.getLine();
    finding.column = loc.getColumn();
  }
  finding.op = f.op->getName().getStringRef().str();
  finding.dim = f.dim;
  finding.multiple = f.multiple;
  finding.verdict = f.verdict;
  finding.message = f.message;
  finding.source = f.source;
  finding.term = f.term;
  finding.status = f.status;
  finding.fix = f.fix;
  return finding;
}

} // namespace

const char *alignmentVerdictName(Verdict verdict) {
  return verdict == Verdict::ProvenNot ? "proven-not" : "unknown";
}

Status checkAlignmentOfSource(llvm::StringRef text, llvm::StringRef bufferName,
                              AlignmentSourceReport &report,
                              std::string &diagnostics) {
  report = AlignmentSourceReport();
  diagnostics.clear();
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName);
  DialectRegistry registry;
  registry.insert<affine::AffineDialect, arith::ArithDialect, func::FuncDialect,
                  gpu::GPUDialect, memref::MemRefDialect, scf::SCFDialect,
                  vector::VectorDialect, TesselDialect, tpu::TpuDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagnosticStream);
  Block block;
  AsmParserState state;
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, &block, config, &state)))
    return Error("'" + bufferName.str() + "' is not valid MLIR");
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
  for (Operation &op : block) {
    AlignmentReport one = verifyAlignment(&op, name);
    report.accessesChecked += one.accessesChecked;
    report.indicesChecked += one.indicesChecked;
    for (const AlignmentFailure &f : one.failures)
      report.failures.push_back(toFinding(f));
  }
  return {};
}

std::string formatAlignmentReport(llvm::StringRef file,
                                  const AlignmentSourceReport &report) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const AlignmentFinding &f : report.failures) {
    os << file << ":" << f.line << ":" << f.column << ": error: " << f.message
       << "\n";
    os << "  op      " << f.op << "\n";
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
  return text;
}

llvm::json::Value alignmentReportJson(llvm::StringRef file,
                                      const AlignmentSourceReport &report) {
  llvm::json::Array failures;
  for (const AlignmentFinding &f : report.failures)
    failures.push_back(llvm::json::Object{
        {"line", f.line},
        {"column", f.column},
        {"op", f.op},
        {"dimension", f.dim},
        {"multiple", f.multiple},
        {"verdict", alignmentVerdictName(f.verdict)},
        {"message", f.message},
        {"source", f.source},
        {"term", f.term},
        {"status", f.status},
        {"fix", f.fix},
    });
  return llvm::json::Object{
      {"file", file.str()},
      {"accesses", report.accessesChecked},
      {"indices", report.indicesChecked},
      {"aligned", report.failures.empty()},
      {"failures", std::move(failures)},
  };
}

} // namespace tessel
