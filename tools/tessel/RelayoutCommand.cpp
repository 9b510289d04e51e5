//===- RelayoutCommand.cpp - `tessel relayout` ----------------------------===//
//
//   tessel relayout --shape 'bf16[4096,4096]' --from '{1,0}'
//                   --to '{1,0:T(8,128)(2,1)}' in.npy out.bin
//
// Reads a buffer in one layout and writes it in another (RelayoutPlan).
//
//===----------------------------------------------------------------------===//
#include "CommandLine.h"
#include "Commands.h"

#include "tessel/Layout/ShapeParser.h"
#include "tessel/Relayout/Relayout.h"
#include "tessel/Support/Host.h"
#include "tessel/Support/Npy.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace cl = llvm::cl;

namespace tessel {
namespace {

constexpr const char *kOverview =
    "convert an array buffer from one layout to another\n\n"
    "  tessel relayout --shape 'bf16[4096,4096]' --from '{1,0}' \\\n"
    "      --to '{1,0:T(8,128)(2,1)}' in.npy out.bin\n\n"
    "--shape gives the element type and dims; --from and --to are bare\n"
    "layouts (when omitted: the layout of --shape if it has one, else\n"
    "row-major {n-1,...,0}). Padding slots of the\n"
    "output are zero. --threads N sets the worker threads (0, the default,\n"
    "means every core); -v prints the kernel chosen, the instruction set\n"
    "level it ran at and the GB/s. The kernels run at the best level the\n"
    "CPU has (sse2, avx2, avx512); TESSEL_ISA=sse2|avx2|avx512 in the\n"
    "environment caps it.\n\n"
    "Files are raw bytes (the physical buffer, padding included) or .npy.\n"
    "With --format=auto a file is .npy when its name ends in .npy.\n"
    "  input  .npy: when --from is row-major, its dtype and shape must be\n"
    "         the logical ones; otherwise its data is taken as the raw\n"
    "         physical buffer, whatever its dtype and shape.\n"
    "  output .npy: written only when --to is row-major (dtype and shape of\n"
    "         the array); any other destination is written as raw bytes,\n"
    "         even to a .npy name (a note says so).\n";

enum class Format { Raw, Npy, Auto };

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isNpy(Format format, const std::string &path) {
  return format == Format::Npy ||
         (format == Format::Auto && endsWith(path, ".npy"));
}

/// The payload of the input file: raw bytes, or the data of a .npy file
/// checked against the logical array when the source is row-major.
std::optional<std::string> readInput(const std::string &path, Format format,
                                     const TiledLayout &from) {
  // Refuse a larger file before reading it: a device such as /dev/zero
  // never ends. A .npy file may add its header.
  int64_t limit = from.physicalBytes();
  if (isNpy(format, path))
    limit += 1 << 20;
  Expected<std::string> bytes =
      readFileBytes(path, limit,
                    from.shape().toString() + " needs " +
                        std::to_string(from.physicalBytes()) + " (" +
                        describePhysicalSize(from) + ")" +
                        (isNpy(format, path) ? " and a .npy header" : ""));
  if (!bytes) {
    cli::fail(bytes.error());
    return std::nullopt;
  }
  std::string payload = std::move(*bytes);
  if (isNpy(format, path)) {
    Expected<NpyArray> array = parseNpy(payload);
    if (!array) {
      cli::fail(array.takeError().inSource(path));
      return std::nullopt;
    }
    PrimitiveType type = from.shape().elementType;
    if (isPlainRowMajor(from) && !npyDescrMatches(array->descr, type)) {
      cli::fail(path + ": holds '" + array->descr + "' elements, expected " +
                npyDescr(type) + " for " +
                std::string(primitiveTypeName(type)));
      return std::nullopt;
    }
    if (Status problem =
            checkSourceArray(from, array->shape, array->fortranOrder,
                             static_cast<int64_t>(array->data.size()), path,
                             /*isArrayFile=*/true);
        !problem) {
      cli::fail(problem.error());
      return std::nullopt;
    }
    return std::move(array->data);
  }
  if (Status problem = checkSourceArray(
          from, {}, false, static_cast<int64_t>(payload.size()), path,
          /*isArrayFile=*/false);
      !problem) {
    cli::fail(problem.error());
    return std::nullopt;
  }
  return payload;
}

std::optional<Layout> parseLayoutOption(const char *name,
                                        const std::string &text,
                                        const Shape &shape) {
  if (text.empty())
    return shape.layout ? *shape.layout : Layout::rowMajor(shape.rank());
  Expected<Layout> layout = parseLayoutFor(text, shape);
  if (!layout) {
    cli::fail(layout.takeError().inSource("--" + std::string(name)));
    return std::nullopt;
  }
  return *layout;
}

void printSpeed(const RelayoutPlan &plan, double seconds) {
  int64_t moved = plan.sourceBytes() + plan.destinationBytes();
  std::string levels;
  for (const std::string &level : relayoutIsaLevels())
    levels += (levels.empty() ? "" : " ") + level;
  llvm::errs() << "relayout: " << plan.describe() << "\n"
               << "relayout: instruction set " << plan.isa()
               << " (this CPU: " << levels << ")\n"
               << "relayout: " << moved << " bytes read + written in "
               << llvm::format("%.3f", seconds * 1e3) << " ms, "
               << llvm::format("%.2f", moved / std::max(seconds, 1e-9) / 1e9)
               << " GB/s\n";
}

/// Writes the destination buffer: as .npy when asked and row-major, else
/// raw (with a note when a .npy was asked for). Returns the exit status.
int writeOutput(const std::string &path, Format format,
                const TiledLayout &destination, std::string output) {
  if (isNpy(format, path)) {
    if (isPlainRowMajor(destination)) {
      NpyArray array{npyDescr(destination.shape().elementType),
                     destination.logicalDims(), false, std::move(output)};
      output = writeNpy(array);
    } else {
      llvm::errs() << "tessel: note: " << path
                   << " holds the raw physical buffer, not .npy: the "
                      "destination layout "
                   << destination.layout().toString() << " is not row-major\n";
    }
  }
  Status written = cli::writeFileAtomically(path, output);
  return written ? 0 : cli::fail(written.error());
}

} // namespace

int runRelayoutCommand(int argc, char **argv) {
  cl::opt<std::string> shapeText(
      "shape", cl::desc("element type and dims, e.g. 'f32[3,5]'"),
      cl::value_desc("SHAPE"), cl::cat(cli::category()));
  cl::opt<std::string> fromText(
      "from",
      cl::desc("layout of the input (default: the layout of --shape, else "
               "row-major)"),
      cl::value_desc("LAYOUT"), cl::cat(cli::category()));
  cl::opt<std::string> toText("to",
                              cl::desc("layout of the output (default: the "
                                       "layout of --shape, else row-major)"),
                              cl::value_desc("LAYOUT"),
                              cl::cat(cli::category()));
  cl::opt<bool> verbose(
      "verbose", cl::desc("print the kernel chosen and the speed to stderr"),
      cl::cat(cli::category()));
  cl::alias verboseShort("v", cl::desc("alias for --verbose"),
                         cl::aliasopt(verbose), cl::cat(cli::category()));
  cl::opt<Format> format(
      "format", cl::desc("file format (default auto)"), cl::init(Format::Auto),
      cl::values(clEnumValN(Format::Raw, "raw", "raw bytes"),
                 clEnumValN(Format::Npy, "npy", ".npy files"),
                 clEnumValN(Format::Auto, "auto", ".npy by file name")),
      cl::cat(cli::category()));
  cl::opt<std::string> inPath(cl::Positional, cl::desc("<IN>"),
                              cl::cat(cli::category()));
  cl::opt<std::string> outPath(cl::Positional, cl::desc("<OUT>"),
                               cl::cat(cli::category()));
  std::string program = "tessel relayout";
  std::vector<char *> args(argv, argv + argc);
  args[0] = program.data();
  // LLVM registers a global option named "threads", so --threads is taken
  // out of the arguments here rather than declared as a cl::opt.
  int64_t threads = 0;
  if (int status = cli::takeThreadsOption(args, threads))
    return status;
  if (!cli::parseOptions(static_cast<int>(args.size()), args.data(), kOverview))
    return 2;
  if (shapeText.empty())
    return cli::usageError("--shape is required, e.g. --shape 'f32[3,5]'");
  if (inPath.empty() || outPath.empty())
    return cli::usageError("expected an input and an output file");

  Expected<Shape> shape = parseShape(shapeText);
  if (!shape)
    return cli::fail(shape.takeError().inSource("--shape"));
  if (!shape->isArray())
    return cli::fail("--shape '" + shapeText + "' is not an array shape");
  std::optional<Layout> from = parseLayoutOption("from", fromText, *shape);
  if (!from)
    return 1;
  std::optional<Layout> to = parseLayoutOption("to", toText, *shape);
  if (!to)
    return 1;
  RelayoutOptions options;
  options.threads = static_cast<int>(threads);
  Expected<RelayoutPlan> plan =
      RelayoutPlan::create(*shape, *from, *to, options);
  if (!plan)
    return cli::fail(plan.error());

  // Both buffers live in memory at once: refuse what the machine cannot
  // hold before allocating either (the build has no exceptions, so a
  // failed allocation would abort).
  double needed = static_cast<double>(plan->sourceBytes()) +
                  static_cast<double>(plan->destinationBytes());
  double memory = static_cast<double>(physicalMemoryBytes());
  if (!canAllocate(needed))
    return cli::fail(
        "the output " + plan->destination().shape().toString() + " takes " +
        describeBytes(static_cast<double>(plan->destinationBytes())) + " for " +
        describePhysicalSize(plan->destination()) + ", and the input " +
        describeBytes(static_cast<double>(plan->sourceBytes())) +
        ": more than this machine can allocate (" + describeBytes(memory) +
        " of memory)");
  std::optional<std::string> input = readInput(inPath, format, plan->source());
  if (!input)
    return 1;
  std::string output(plan->destinationBytes(), '\0');
  auto start = std::chrono::steady_clock::now();
  if (Status error = plan->execute(input->data(), input->size(), output.data(),
                                   output.size());
      !error)
    return cli::fail(error.error());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (verbose)
    printSpeed(*plan, seconds);
  return writeOutput(outPath, format, plan->destination(), std::move(output));
}

} // namespace tessel
