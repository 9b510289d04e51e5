//===- CommandLine.cpp - Shared plumbing of the tessel command line -------===//
#include "CommandLine.h"

#include "tessel/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <thread>
#include <vector>

namespace tessel::cli {

llvm::cl::OptionCategory &category() {
  static llvm::cl::OptionCategory theCategory("tessel options");
  return theCategory;
}

static void printGroupHelp(const char *group, const char *summary,
                           llvm::ArrayRef<Verb> verbs) {
  llvm::outs() << "USAGE: tessel " << group << " VERB [options] ...\n\n"
               << summary << "\n\nVERBS:\n";
  for (const Verb &verb : verbs)
    llvm::outs() << "  " << llvm::left_justify(verb.name, 12) << verb.summary
                 << "\n";
  llvm::outs() << "\nRun `tessel " << group
               << " VERB --help` for the options of a verb.\n";
}

int dispatch(const char *group, const char *summary, llvm::ArrayRef<Verb> verbs,
             int argc, char **argv) {
  if (argc < 2) {
    printGroupHelp(group, summary, verbs);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-help" || name == "-h" || name == "help") {
    printGroupHelp(group, summary, verbs);
    return 0;
  }
  for (const Verb &verb : verbs) {
    if (name != verb.name)
      continue;
    std::string program = std::string("tessel ") + group + " " + verb.name;
    std::vector<char *> args(argv + 1, argv + argc);
    args[0] = program.data();
    return verb.run(static_cast<int>(args.size()), args.data());
  }
  std::string known;
  for (const Verb &verb : verbs)
    known += std::string(known.empty() ? "" : ", ") + verb.name;
  return usageError("unknown verb '" + name + "' for tessel " + group +
                    ", expected one of " + known);
}

bool parseOptions(int argc, char **argv, const char *overview) {
  llvm::cl::HideUnrelatedOptions(category());
  return llvm::cl::ParseCommandLineOptions(argc, argv, overview, &llvm::errs(),
                                           nullptr,
                                           /*LongOptionsUseDoubleDash=*/true);
}

int fail(const std::string &message) {
  llvm::outs().flush();
  llvm::errs() << "tessel: error: " << message << "\n";
  return 1;
}

int usageError(const std::string &message) {
  llvm::outs().flush();
  llvm::errs() << "tessel: usage error: " << message << "\n";
  return 2;
}

std::string writeFileAtomically(const std::string &path,
                                const std::string &contents) {
  return writeFilesAtomically({{path, contents}});
}

std::string writeFilesAtomically(
    const std::vector<std::pair<std::string, std::string>> &files) {
  // What went to llvm::outs() goes first when an output is `-`.
  llvm::outs().flush();
  std::optional<Error> error = writeFiles(files);
  return error ? error->message : "";
}

bool parseIntList(const std::string &text, std::vector<int64_t> &values,
                  std::string &error) {
  values.clear();
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() &&
           (std::isspace(static_cast<unsigned char>(text[i])) ||
            text[i] == '(' || text[i] == ')' || text[i] == '[' ||
            text[i] == ']'))
      ++i;
  };
  skip();
  while (i < text.size()) {
    size_t start = i;
    bool negative = text[i] == '-';
    if (negative)
      ++i;
    if (i >= text.size() ||
        !std::isdigit(static_cast<unsigned char>(text[i]))) {
      error = "column " + std::to_string(i + 1) + " of '" + text +
              "': expected an integer";
      return false;
    }
    // Accumulated with the sign applied, so that INT64_MIN parses too.
    int64_t value = 0;
    while (i < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[i]))) {
      int digit = text[i++] - '0';
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, negative ? -digit : digit, &value)) {
        error = "column " + std::to_string(start + 1) + " of '" + text +
                "': integer too large, expected a value in int64";
        return false;
      }
    }
    values.push_back(value);
    skip();
    if (i < text.size()) {
      if (text[i] != ',' &&
          !std::isspace(static_cast<unsigned char>(text[i]))) {
        error = "column " + std::to_string(i + 1) + " of '" + text +
                "': expected ',' between integers";
        return false;
      }
      ++i;
      skip();
    }
  }
  return true;
}

/// Removes `--threads N` / `--threads=N` from args. Returns 0, or the exit
/// status of a usage error.
int takeThreadsOption(std::vector<char *> &args, int64_t &threads) {
  for (size_t i = 1; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--")
      break;
    std::string value;
    size_t taken = 1;
    if (arg == "--threads" || arg == "-threads") {
      if (i + 1 >= args.size())
        return usageError("--threads needs a value, e.g. --threads 2");
      value = args[i + 1];
      taken = 2;
    } else if (arg.rfind("--threads=", 0) == 0) {
      value = arg.substr(10);
    } else {
      continue;
    }
    std::vector<int64_t> values;
    std::string error;
    if (!parseIntList(value, values, error) || values.size() != 1 ||
        values[0] < 0)
      return usageError("--threads '" + value +
                        "' is not a thread count, expected 0 (every "
                        "core) or more");
    // More threads than cores would only oversubscribe them.
    int64_t cores = std::max(1u, std::thread::hardware_concurrency());
    threads = std::min(values[0], cores);
    args.erase(args.begin() + i, args.begin() + i + taken);
    --i;
  }
  return 0;
}

} // namespace tessel::cli
