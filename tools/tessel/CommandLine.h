//===- CommandLine.h - Shared plumbing of the tessel command line -*- C++
//-*-===//
//
// `tessel GROUP VERB [options] ARGS`: main() picks the group (layout, npu,
// hlo, ...), the group picks the verb, and each verb declares its options as
// locals in the `cli::category()` category and calls `cli::parseOptions`.
//
// Exit status: 0 on success, 1 for bad input (a message naming the position
// and what was expected), 2 for a usage error.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TOOLS_COMMANDLINE_H
#define TESSEL_TOOLS_COMMANDLINE_H

#include "tessel/Support/Expected.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <utility>
#include <vector>

namespace tessel::cli {

/// The category of every tessel option; --help lists only these.
llvm::cl::OptionCategory &category();

/// One verb of a command group.
struct Verb {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

/// Runs the verb named by argv[1] with argv[0] set to "tessel GROUP VERB".
/// Prints the group's help for --help, -h or no verb.
int dispatch(const char *group, const char *summary, llvm::ArrayRef<Verb> verbs,
             int argc, char **argv);

/// Parses the options of a verb. Returns false after printing a usage error.
bool parseOptions(int argc, char **argv, const char *overview);

/// Prints `error` as renderError does (Support/Error.h) and returns 1 (bad
/// input): "SOURCE:LINE:COL: error: MESSAGE", the offending line and a
/// caret for an error with a position, "tessel: error: MESSAGE" without.
/// A parser's error is already located in its text: name the text with
/// `Error::inSource` (a file, or the option it came from: "--shape").
int fail(const Error &error);
/// Prints "tessel: error: MESSAGE" and returns 1 (bad input).
int fail(const std::string &message);
/// Prints "tessel: usage error: MESSAGE" and returns 2.
int usageError(const std::string &message);

/// Writes `contents` to `path` with tessel::writeFile (Support/FileIO.h):
/// a regular file through a temporary file and a rename, so a failure never
/// leaves a half-written file; `-` is standard output; devices and FIFOs
/// are written in place; symbolic links are followed.
Status writeFileAtomically(const std::string &path,
                           const std::string &contents);
/// Writes several files, all or none (tessel::writeFiles).
Status writeFilesAtomically(
    const std::vector<std::pair<std::string, std::string>> &files);

/// Parses "2,3" (or "2 3", "(2,3)") into integers. An error is located in
/// `text`: name it with `inSource` (the option it came from).
Expected<std::vector<int64_t>> parseIntList(const std::string &text);

/// Takes `--threads N` (or `--threads=N`) out of `args`: LLVM registers a
/// global option of that name, so it cannot be a cl::opt. Returns 0, or
/// the exit status of a usage error after printing it.
int takeThreadsOption(std::vector<char *> &args, int64_t &threads);
} // namespace tessel::cli

#endif // TESSEL_TOOLS_COMMANDLINE_H
