//===- NpuDraw.cpp - `tessel npu draw` and the seed's figures -------------===//
//
// `tessel npu draw --figure NAME` regenerates a figure of the seed by
// expanding NAME into the options that draw it (`--list-figures` prints
// them), so each figure is also an example of the command line.
//
//===----------------------------------------------------------------------===//
#include "NpuOptions.h"
#include "NpuVerbs.h"
#include "tessel/Npu/NpuReport.h"

#include "tessel/Npu/NpuReport.h"
#include "tessel/Render/NpuPicture.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace tessel::npucli {
namespace {

struct Figure {
  const char *name;
  const char *what;
  const char *args; ///< options after `tessel npu draw`, space-separated
};

// The seed's figures, by the names of its image files; X = 4, S = 1024.
const Figure kFigures[] = {
    {"address", "addresses 340, 1472, 2300, 3088",
     "--addresses 340,1472,2300,3088"},
    {"scatter_0", "C = X - 1 from npu 0", "--scatter fp32[2,3,1,1]@0"},
    {"scatter_1", "C = X - 1 from npu 1", "--scatter fp32[2,3,1,1]@1024"},
    {"scatter_2", "C = X + 2 from npu 0", "--scatter fp32[2,6,1,1]@0"},
    {"scatter_3", "C = X + 2 from npu X - 1", "--scatter fp32[2,6,1,1]@3072"},
    {"stride_local_0", "W stride 2, H 16, C 56, N 120 from npu 0",
     "fp32[2,5,3,4]:strides(120,56,16,2)@0"},
    {"stride_local_1", "W stride 2, N 120 from npu 1 (H, C unused)",
     "fp32[2,3,1,10]:strides(120,0,0,2)@1024"},
    {"align_fp32_start_0_2_3_4_5", "aligned fp32 (2,3,4,5) from npu 0",
     "fp32[2,3,4,5]:aligned@0"},
    {"align_fp32_start_2_2_3_4_5", "aligned fp32 (2,3,4,5) from npu 2",
     "fp32[2,3,4,5]:aligned@2048"},
    {"compact_fp32_start_0_2_3_4_5", "compact fp32 (2,3,4,5) from npu 0",
     "fp32[2,3,4,5]:compact@0"},
    {"compact_fp32_start_2_2_3_4_5", "compact fp32 (2,3,4,5) from npu 2",
     "fp32[2,3,4,5]:compact@2048"},
    {"matrix_w_40", "2 x 40 fp32 matrix, W = 40", "fp32[2,40]:matrix(40)@0"},
    {"matrix_w_20", "2 x 40 fp32 matrix, W = 20", "fp32[2,40]:matrix(20)@0"},
    {"matrix_w_10", "2 x 40 fp32 matrix, W = 10", "fp32[2,40]:matrix(10)@0"},
    {"matrix_w_8", "2 x 40 fp32 matrix, W = 8", "fp32[2,40]:matrix(8)@0"},
    {"matrix_w_15", "2 x 40 fp32 matrix, W = 15", "fp32[2,40]:matrix(15)@0"},
    {"matrix_w_6", "2 x 40 fp32 matrix, W = 6", "fp32[2,40]:matrix(6)@0"},
    {"aligned_4N", "int8 (6,5,4,5) in 4N mode, aligned",
     "int8[6,5,4,5]:aligned:4n@0"},
    {"aligned_2N", "int16 (3,5,4,5) in 2N mode, aligned",
     "int16[3,5,4,5]:aligned:2n@0"},
    {"aligned_2IC", "fp32 conv weight [3,5,2,2] in 2IC mode (not in the seed)",
     "fp32[3,5,2,2]:aligned:2ic@0"},
};

/// Replaces `--figure NAME` (or --figure=NAME) in argv by the figure's
/// options and the seed's configuration. Returns false after printing an
/// error for an unknown name.
bool expandFigure(int argc, char **argv, std::vector<std::string> &out,
                  int &status) {
  out.assign(argv, argv + argc);
  for (size_t i = 1; i < out.size(); ++i) {
    std::string name;
    size_t erase = 1;
    if (out[i] == "--figure" && i + 1 < out.size()) {
      name = out[i + 1];
      erase = 2;
    } else if (llvm::StringRef(out[i]).starts_with("--figure=")) {
      name = out[i].substr(9);
    } else {
      continue;
    }
    const Figure *figure = nullptr;
    for (const Figure &f : kFigures)
      if (name == f.name)
        figure = &f;
    if (!figure) {
      status = cli::fail("unknown figure '" + name +
                         "', see `tessel npu draw --list-figures`");
      return false;
    }
    out.erase(out.begin() + i, out.begin() + i + erase);
    std::vector<std::string> args = {
        "--npus", "4",       "--mem",
        "1024",   "--title", std::string(figure->name) + ": " + figure->what};
    for (llvm::StringRef rest = figure->args; !rest.empty();) {
      auto [word, tail] = rest.split(' ');
      args.push_back(word.str());
      rest = tail;
    }
    out.insert(out.begin() + i, args.begin(), args.end());
    return true;
  }
  return true;
}

int listFigures() {
  for (const Figure &f : kFigures)
    llvm::outs() << llvm::left_justify(f.name, 30) << f.what
                 << "\n    tessel npu draw --npus 4 --mem 1024 " << f.args
                 << "\n";
  return 0;
}

int emit(const Expected<std::string> &picture, const std::string &svgPath,
         bool svg) {
  if (!picture)
    return cli::fail(picture.error());
  if (!svg) {
    llvm::outs() << *picture;
    return 0;
  }
  Status written = cli::writeFileAtomically(svgPath, *picture);
  return written ? 0 : cli::fail(written.error());
}

int drawAddresses(const NpuConfig &config, const std::string &list,
                  NpuPictureOptions &options, const std::string &svgPath) {
  Expected<std::vector<int64_t>> parsed = cli::parseIntList(list);
  if (!parsed)
    return cli::fail(parsed.takeError().inSource("--addresses"));
  const std::vector<int64_t> &addresses = *parsed;
  if (options.title.empty())
    options.title = "addresses on " + config.toString();
  return emit(svgPath.empty() ? drawAddressesText(config, addresses, options)
                              : drawAddressesSvg(config, addresses, options),
              svgPath, !svgPath.empty());
}

int drawTensor(const NpuConfig &config, const TensorSpec &spec,
               NpuPictureOptions &options, bool scatter,
               const std::string &svg) {
  int status = 0;
  std::optional<LocalTensor> t = makeTensor(config, spec, status);
  if (!t)
    return status;
  if (Status e = t->checkFits(); !e)
    return cli::fail(e.error());
  if (options.title.empty())
    options.title = describePictureTitle(*t);
  if (scatter)
    return emit(svg.empty() ? drawScatterText(*t, options)
                            : drawScatterSvg(*t, options),
                svg, !svg.empty());
  std::vector<NamedTensor> tensors{{spec.name, *t}};
  return emit(svg.empty() ? drawMemoryText(tensors, options)
                          : drawMemorySvg(tensors, options),
              svg, !svg.empty());
}

} // namespace

int runDraw(int argc, char **argv) {
  std::vector<std::string> args;
  int status = 0;
  if (!expandFigure(argc, argv, args, status))
    return status;
  std::vector<char *> argp;
  for (std::string &a : args)
    argp.push_back(a.data());
  ConfigOptions configOpts;
  TensorOptions tensorOpts;
  cl::opt<std::string> specText(cl::Positional, cl::desc("[SPEC]"),
                                cl::cat(cli::category()));
  cl::opt<std::string> figure("figure",
                              cl::desc("draw one of the seed's figures (see "
                                       "--list-figures)"),
                              cl::value_desc("NAME"), cl::cat(cli::category()));
  cl::opt<bool> list("list-figures",
                     cl::desc("list the seed's figures and their commands"),
                     cl::cat(cli::category()));
  cl::opt<std::string> addresses(
      "addresses", cl::desc("mark these addresses instead of drawing a tensor"),
      cl::value_desc("A,B,..."), cl::cat(cli::category()));
  cl::opt<bool> scatter("scatter",
                        cl::desc("draw channel slots over npus, not bytes"),
                        cl::cat(cli::category()));
  cl::opt<std::string> svg("svg", cl::desc("write an SVG file"),
                           cl::value_desc("FILE"), cl::cat(cli::category()));
  cl::opt<int64_t> rowBytes("row-bytes", cl::desc("bytes per row (128)"),
                            cl::value_desc("B"), cl::init(128),
                            cl::cat(cli::category()));
  cl::opt<int64_t> blockBytes(
      "block-bytes", cl::desc("bytes per block (4, as the seed)"),
      cl::value_desc("B"), cl::init(4), cl::cat(cli::category()));
  cl::opt<std::string> title("title", cl::desc("the picture's title"),
                             cl::cat(cli::category()));
  if (!cli::parseOptions(
          static_cast<int>(argp.size()), argp.data(),
          "pictures of local memory, in the terminal or as SVG\n\n"
          "  tessel npu draw --figure matrix_w_15 --svg matrix_w_15.svg\n"
          "  tessel npu draw --npus 4 --mem 1024 'fp32[2,3,4,5]:aligned@2048'\n"
          "  tessel npu draw --npus 4 --mem 1024 --scatter "
          "'fp32[2,6,1,1]@3072'\n"
          "  tessel npu draw --npus 4 --mem 1024 --addresses 340,1472\n"))
    return 2;
  if (list)
    return listFigures();
  std::optional<NpuConfig> config = configOpts.resolve(status);
  if (!config)
    return status;
  NpuPictureOptions options;
  options.rowBytes = rowBytes;
  options.blockBytes = blockBytes;
  options.title = title;
  if (!addresses.empty())
    return drawAddresses(*config, addresses, options, svg);
  std::optional<TensorSpec> spec = tensorOpts.resolve(specText, status);
  if (!spec || !chooseMatrixW(*config, *spec, status))
    return status;
  return drawTensor(*config, *spec, options, scatter, svg);
}

} // namespace tessel::npucli
