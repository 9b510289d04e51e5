//===- main.cpp - The tessel command line ---------------------------------===//
//
// tessel layout ...   tiled layouts: offsets, sizes, pictures, TPU tilings
// tessel hlo ...      HLO modules: parse, verify, print, evaluate
// tessel npu ...      NPU local memory: addresses, strides, pictures, fit
// tessel indexing ... indexing maps: simplify, compose, evaluate
// tessel relayout ... convert a buffer between two layouts
// tessel compile ...  compile an HLO module's fusions, print any IR
// tessel run ...      compile and run an HLO module, check, time
// tessel align ...    prove tile alignment of a kernel's memory accesses
//
// Each group lives in its own <Group>Command.cpp and is listed in kGroups.
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "Commands.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace {

struct Group {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

const Group kGroups[] = {
    {"layout", "tiled layouts: offsets, sizes, pictures, TPU tilings",
     tessel::runLayoutCommand},
    {"hlo", "HLO modules: parse, verify, print, evaluate",
     tessel::runHloCommand},
    {"npu", "NPU local memory: addresses, strides, layouts, pictures, fit",
     tessel::runNpuCommand},
    {"indexing", "indexing maps: simplify, compose, evaluate",
     tessel::runIndexingCommand},
    {"relayout", "convert a buffer between two layouts (no verb)",
     tessel::runRelayoutCommand},
    {"compile", "compile an HLO module's fusions; print IR (no verb)",
     tessel::runCompileCommand},
    {"run", "compile and run an HLO module on this CPU, check, time (no verb)",
     tessel::runRunCommand},
    {"align", "prove that a kernel's accesses are tile-aligned (no verb)",
     tessel::runAlignCommand},
};

void printHelp() {
  llvm::outs() << "USAGE: tessel GROUP VERB [options] ...\n\n"
                  "tessel explains how tensors live in accelerator memory.\n\n"
                  "GROUPS:\n";
  for (const Group &group : kGroups)
    llvm::outs() << "  " << llvm::left_justify(group.name, 12) << group.summary
                 << "\n";
  llvm::outs() << "\nRun `tessel GROUP --help` for the verbs of a group.\n";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    printHelp();
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-help" || name == "-h" || name == "help") {
    printHelp();
    return 0;
  }
  for (const Group &group : kGroups)
    if (name == group.name)
      return group.run(argc - 1, argv + 1);
  std::string known;
  for (const Group &group : kGroups)
    known += std::string(known.empty() ? "" : ", ") + group.name;
  return tessel::cli::usageError("unknown command '" + name +
                                 "', expected one of " + known);
}
