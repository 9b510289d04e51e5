//===- Commands.h - Entry points of the tessel command groups ---*- C++ -*-===//
#ifndef TESSEL_TOOLS_COMMANDS_H
#define TESSEL_TOOLS_COMMANDS_H

namespace tessel {

/// `tessel layout VERB ...`; argv[0] is "layout".
int runLayoutCommand(int argc, char **argv);
/// `tessel hlo VERB ...`; argv[0] is "hlo".
int runHloCommand(int argc, char **argv);

/// `tessel npu VERB ...`; argv[0] is "npu".
int runNpuCommand(int argc, char **argv);
/// `tessel indexing VERB ...`; argv[0] is "indexing".
int runIndexingCommand(int argc, char **argv);
/// `tessel relayout [options] IN OUT`; argv[0] is "relayout" (no verbs).
int runRelayoutCommand(int argc, char **argv);
/// `tessel compile M.hlo [options]`; argv[0] is "compile".
int runCompileCommand(int argc, char **argv);
/// `tessel run M.hlo [options]`; argv[0] is "run".
int runRunCommand(int argc, char **argv);
/// `tessel align FILE.mlir [--json]`; argv[0] is "align".
int runAlignCommand(int argc, char **argv);

} // namespace tessel

#endif // TESSEL_TOOLS_COMMANDS_H
