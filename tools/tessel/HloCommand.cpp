//===- HloCommand.cpp - `tessel hlo ...` ----------------------------------===//
//
//   tessel hlo fmt M.hlo                     parse, verify, print in XLA's form
//   tessel hlo verify M.hlo                  shape inference on every op
//   tessel hlo eval M.hlo --input x.npy ... [--output y.npy ...]
//                   [--max-steps N]          bound on while-loop iterations
//                   [--numerics=exact|xla-cpu]  whose rounding choices
//
// eval reads and writes logical arrays: a .npy file is the array in
// row-major order whatever the layout (jax often declares a column-major
// result). --physical reads and writes the physical buffers of the entry's
// parameters and results (entry_computation_layout, else the shapes of the
// parameters and the root): another dim order is the array with its dims in
// physical (major to minor) order, a tiled layout is the flat buffer with
// its padding.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "Commands.h"
#include "HloInput.h"

#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Support/Npy.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace cl = llvm::cl;

namespace tessel {
namespace {

int runFmt(int argc, char **argv) {
  cl::opt<std::string> path(cl::Positional, cl::Required, cl::desc("<M.hlo>"),
                            cl::cat(cli::category()));
  cl::opt<bool> noVerify("no-verify", cl::desc("print without checking shapes"),
                         cl::cat(cli::category()));
  cl::opt<std::string> output("o", cl::desc("write to FILE, not stdout"),
                              cl::value_desc("FILE"), cl::cat(cli::category()));
  if (!cli::parseOptions(argc, argv,
                         "print an HLO module in XLA's canonical text form\n\n"
                         "  tessel hlo fmt examples/gelu.hlo\n"))
    return 2;
  std::unique_ptr<HloModule> module = cli::loadHloModule(path, !noVerify);
  if (!module)
    return 1;
  std::string text = module->toString();
  if (output.empty()) {
    llvm::outs() << text;
    return 0;
  }
  Status written = cli::writeFileAtomically(output, text);
  return written ? 0 : cli::fail(written.error());
}

int runVerify(int argc, char **argv) {
  cl::opt<std::string> path(cl::Positional, cl::Required, cl::desc("<M.hlo>"),
                            cl::cat(cli::category()));
  if (!cli::parseOptions(argc, argv,
                         "check an HLO module: names, shapes of every "
                         "supported op, calls\n\n"
                         "  tessel hlo verify examples/gelu.hlo   -> ok\n"))
    return 2;
  std::unique_ptr<HloModule> module = cli::loadHloModule(path);
  if (!module)
    return 1;
  llvm::outs() << "ok\n";
  return 0;
}

int runEval(int argc, char **argv) {
  cl::opt<std::string> path(cl::Positional, cl::Required, cl::desc("<M.hlo>"),
                            cl::cat(cli::category()));
  cl::list<std::string> inputs(
      "input", cl::desc("an argument, in parameter order (.npy)"),
      cl::value_desc("FILE"), cl::cat(cli::category()));
  cl::list<std::string> outputs(
      "output",
      cl::desc("where to write the result (.npy); one per tuple element"),
      cl::value_desc("FILE"), cl::cat(cli::category()));
  cl::opt<bool> physical(
      "physical",
      cl::desc("read and write the physical buffers of the entry's layouts "
               "(dims in physical order; tiled: the flat buffer)"),
      cl::cat(cli::category()));
  cl::opt<bool> logicalFlag(
      "logical",
      cl::desc("read and write logical arrays (the default; kept for "
               "scripts that pass it)"),
      cl::cat(cli::category()));
  cl::opt<int64_t> maxSteps(
      "max-steps",
      cl::desc("stop with an error after this many while-loop iterations "
               "in all (default 100000000)"),
      cl::init(EvaluatorOptions().maxSteps), cl::value_desc("N"),
      cl::cat(cli::category()));
  cl::opt<Numerics> numerics(
      "numerics",
      cl::desc("whose floating-point choices (reduction order, fused "
               "multiply-add) the evaluator makes"),
      cl::values(
          clEnumValN(Numerics::Exact, "exact",
                     "the reference: reduce in row-major order, dot "
                     "accumulated in f64, every op rounded (default)"),
          clEnumValN(Numerics::XlaCpu, "xla-cpu",
                     "XLA:CPU's (jax 0.10.2, x86-64): its tree reduction "
                     "order, f32 dot with fused multiply-adds, add of a "
                     "multiply as one fma; bit for bit where XLA compiles "
                     "the op itself, not for the reductions of 4096 "
                     "elements or more and the dots it hands to YNNPACK "
                     "(their order depends on the host's vector width and "
                     "threads)")),
      cl::init(Numerics::Exact), cl::cat(cli::category()));
  if (!cli::parseOptions(
          argc, argv,
          "evaluate an HLO module with XLA's semantics (the reference "
          "evaluator)\n\n"
          "  tessel hlo eval m.hlo --input x.npy --output y.npy\n"
          "  tessel hlo eval m.hlo --input x.npy          prints the result\n\n"
          "Arrays are logical (a .npy file holds the array in row-major "
          "order,\nwhatever the layout); --physical reads and writes the "
          "buffers of\nentry_computation_layout instead: a tiled result is "
          "its flat buffer,\npadding included.\n"))
    return 2;
  if (physical && logicalFlag)
    return cli::usageError("give --physical or --logical, not both");
  bool logical = !physical;
  std::unique_ptr<HloModule> module = cli::loadHloModule(path);
  if (!module)
    return 1;
  ProgramShape program = module->entryProgramShape();
  if (inputs.size() != program.parameters.size())
    return cli::usageError(
        "the entry takes " + std::to_string(program.parameters.size()) +
        " parameters, given " + std::to_string(inputs.size()) + " --input");
  std::vector<Literal> arguments;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Expected<Literal> argument =
        cli::readArgument(inputs[i], program.parameters[i], logical);
    if (!argument)
      return cli::fail(argument.error());
    arguments.push_back(std::move(*argument));
  }
  if (maxSteps < 0)
    return cli::usageError("--max-steps must be 0 or more");
  EvaluatorOptions options;
  options.maxSteps = maxSteps;
  options.numerics = numerics;
  Expected<Literal> result = evaluateHloModule(*module, arguments, options);
  if (!result)
    return cli::fail(cli::atFile(path, result.takeError()));
  std::vector<const Literal *> values;
  std::vector<Shape> shapes;
  if (result->isTuple()) {
    for (size_t i = 0; i < result->tupleElements().size(); ++i) {
      values.push_back(&result->tupleElements()[i]);
      shapes.push_back(i < program.result.tupleShapes.size()
                           ? program.result.tupleShapes[i]
                           : result->tupleElements()[i].shape());
    }
  } else {
    values.push_back(&*result);
    shapes.push_back(program.result);
  }
  if (outputs.empty()) {
    for (size_t i = 0; i < values.size(); ++i)
      llvm::outs() << values[i]->shape().toStringWithoutLayout() << " "
                   << values[i]->toString() << "\n";
    return 0;
  }
  if (outputs.size() != values.size())
    return cli::usageError("the result has " + std::to_string(values.size()) +
                           " arrays, given " + std::to_string(outputs.size()) +
                           " --output");
  std::vector<std::string> files;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i]->isTuple())
      return cli::fail("result " + std::to_string(i) +
                       " is a nested tuple, expected arrays");
    Expected<NpyArray> array = cli::resultArray(*values[i], shapes[i], logical);
    if (!array)
      return cli::fail(array.error());
    files.push_back(writeNpy(*array));
  }
  std::vector<std::pair<std::string, std::string>> named;
  for (size_t i = 0; i < files.size(); ++i)
    named.emplace_back(outputs[i], std::move(files[i]));
  Status written = cli::writeFilesAtomically(named);
  if (!written)
    return cli::fail(written.error());
  return 0;
}

const cli::Verb kVerbs[] = {
    {"fmt", "parse, verify and print a module in XLA's form", runFmt},
    {"verify", "check names and shapes of a module", runVerify},
    {"eval", "evaluate a module on .npy arrays", runEval},
};

} // namespace

int runHloCommand(int argc, char **argv) {
  return cli::dispatch("hlo",
                       "HLO modules as XLA and JAX print them: parse, "
                       "verify, print, evaluate.",
                       kVerbs, argc, argv);
}

} // namespace tessel
