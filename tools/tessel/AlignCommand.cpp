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

#include "tessel/Analysis/AlignmentCheck.h"
#include "tessel/Support/FileIO.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace tessel {
namespace {

const char *kOverview =
    "tessel align: prove that every dynamic index into tiled memory is a "
    "multiple of the tile (Mosaic TPU's rule), or say why not and how to "
    "fix it.\n\n"
    "  tessel align kernel.mlir [--json]\n";

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
    return cli::fail(text.error());
  AlignmentSourceReport report;
  std::string diagnostics;
  if (Status error = checkAlignmentOfSource(*text, path, report, diagnostics);
      !error) {
    llvm::errs() << diagnostics;
    return cli::fail(error.error());
  }
  if (json)
    llvm::outs() << llvm::formatv("{0:2}", alignmentReportJson(path, report))
                 << "\n";
  else
    llvm::outs() << formatAlignmentReport(path, report);
  return report.failures.empty() ? 0 : 1;
}

} // namespace tessel
