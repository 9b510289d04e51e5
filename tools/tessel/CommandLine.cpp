//===- CommandLine.cpp - Shared plumbing of the tessel command line -------===//
#include "CommandLine.h"

#include "tessel/Support/FileIO.h"
#include "tessel/Support/Messages.h"

#include "llvm/ADT/StringMap.h"
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

static bool looksNegative(const char *arg) {
  return arg[0] == '-' && std::isdigit(static_cast<unsigned char>(arg[1]));
}

/// LLVM reads a positional "-1,0" as an unknown option. When a positional
/// argument is a negative number, the positionals move behind "--" (in
/// their order), so `tessel layout index S -1,0` means what it says. An
/// option's value ("--offset -5") stays with its option.
static std::vector<char *> protectNegativeNumbers(int argc, char **argv) {
  std::vector<char *> options{argv[0]}, positionals;
  llvm::StringMap<llvm::cl::Option *> &known = llvm::cl::getRegisteredOptions();
  bool negative = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--") {
      positionals.insert(positionals.end(), argv + i + 1, argv + argc);
      break;
    }
    if (!arg.starts_with("-") || arg == "-" || looksNegative(argv[i])) {
      negative |= looksNegative(argv[i]);
      positionals.push_back(argv[i]);
      continue;
    }
    options.push_back(argv[i]);
    llvm::StringRef name = arg.ltrim('-');
    if (name.contains('='))
      continue;
    auto it = known.find(name);
    if (it != known.end() && i + 1 < argc &&
        it->second->getValueExpectedFlag() == llvm::cl::ValueRequired)
      options.push_back(argv[++i]);
  }
  if (!negative) {
    std::vector<char *> same(argv, argv + argc);
    return same;
  }
  static char separator[] = "--";
  options.push_back(separator);
  options.insert(options.end(), positionals.begin(), positionals.end());
  return options;
}

bool parseOptions(int argc, char **argv, const char *overview) {
  llvm::cl::HideUnrelatedOptions(category());
  std::vector<char *> args = protectNegativeNumbers(argc, argv);
  return llvm::cl::ParseCommandLineOptions(static_cast<int>(args.size()),
                                           args.data(), overview, &llvm::errs(),
                                           nullptr,
                                           /*LongOptionsUseDoubleDash=*/true);
}

int fail(const Error &error) {
  llvm::outs().flush();
  // renderError shortens the message and shows a window of a long line: a
  // huge input does not make a huge message.
  llvm::errs() << renderError(error, "tessel") << "\n";
  return 1;
}

int fail(const std::string &message) { return fail(Error(message)); }

int usageError(const std::string &message) {
  llvm::outs().flush();
  llvm::errs() << "tessel: usage error: " << message << "\n";
  return 2;
}

Status writeFileAtomically(const std::string &path,
                           const std::string &contents) {
  return writeFilesAtomically({{path, contents}});
}

Status writeFilesAtomically(
    const std::vector<std::pair<std::string, std::string>> &files) {
  // What went to llvm::outs() goes first when an output is `-`.
  llvm::outs().flush();
  return writeFiles(files);
}

Expected<std::vector<int64_t>> parseIntList(const std::string &text) {
  std::vector<int64_t> values;
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
      return Error::at(i, "expected an integer").locate(text);
    }
    // Accumulated with the sign applied, so that INT64_MIN parses too.
    int64_t value = 0;
    while (i < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[i]))) {
      int digit = text[i++] - '0';
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, negative ? -digit : digit, &value)) {
        return Error::at(start, i,
                         "integer too large, expected a value in int64")
            .locate(text);
      }
    }
    values.push_back(value);
    skip();
    if (i < text.size()) {
      if (text[i] != ',' &&
          !std::isspace(static_cast<unsigned char>(text[i]))) {
        return Error::at(i, "expected ',' between integers").locate(text);
      }
      ++i;
      skip();
    }
  }
  return values;
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
    Expected<std::vector<int64_t>> values = parseIntList(value);
    if (!values || values->size() != 1 || (*values)[0] < 0)
      return usageError("--threads '" + value +
                        "' is not a thread count, expected 0 (every "
                        "core) or more");
    // More threads than cores would only oversubscribe them.
    int64_t cores = std::max(1u, std::thread::hardware_concurrency());
    threads = std::min((*values)[0], cores);
    args.erase(args.begin() + i, args.begin() + i + taken);
    --i;
  }
  return 0;
}

} // namespace tessel::cli
