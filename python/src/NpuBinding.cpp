//===- NpuBinding.cpp - tessel.npu ----------------------------------------===//
#include "Bindings.h"

#include "tessel/Indexing/NpuMap.h"
#include "tessel/Json/ReportJson.h"
#include "tessel/Npu/LocalMemory.h"
#include "tessel/Npu/LocalTensor.h"
#include "tessel/Npu/NpuAdvisor.h"
#include "tessel/Npu/NpuConfig.h"
#include "tessel/Npu/NpuReport.h"
#include "tessel/Npu/TensorSpec.h"
#include "tessel/Render/NpuPicture.h"
#include "tessel/Support/Messages.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <variant>

namespace tessel::python {

namespace {

/// A local tensor with the name and spec it was made from.
struct NpuTensor {
  TensorSpec spec;
  LocalTensor tensor;
  bool matrixWChosen = false;
};

struct NpuMemory {
  LocalMemory memory;
};

struct NpuFit {
  FitReport report;
  NpuConfig config;
};

struct NpuMatrixAdvice {
  MatrixAdviceTable table;
  NpuConfig config;
};

/// A --json object as the dict json.loads gives for the command's output.
nb::object jsonDict(const llvm::json::Value &value) {
  return nb::module_::import_("json").attr("loads")(formatJson(value));
}

TensorSpec parseSpec(const std::string &text) {
  Expected<TensorSpec> spec = parseTensorSpec(text);
  if (!spec)
    raise(spec.takeError().inSource("<spec>"));
  return *spec;
}

NpuConfig
makeConfig(const std::optional<std::string> &chip, std::optional<int64_t> npus,
           const std::optional<std::variant<int64_t, std::string>> &mem,
           std::optional<int64_t> banks, std::optional<int64_t> align) {
  if ((!chip || chip->empty()) && !(npus && mem))
    raise("give chip=NAME (bm1684, bm1684x, bm1688) or npus=X, mem=S, "
          "e.g. npus=4, mem=1024 for the seed's figures");
  std::optional<int64_t> bytes;
  if (mem) {
    if (const int64_t *value = std::get_if<int64_t>(&*mem)) {
      bytes = *value;
    } else {
      Expected<int64_t> parsed = parseByteSize(std::get<std::string>(*mem));
      if (!parsed)
        raise("mem: " + parsed.error().message);
      bytes = *parsed;
    }
  }
  return unwrap(
      NpuConfig::resolve(chip.value_or(""), npus, bytes, banks, align));
}

NpuTensor makeTensor(const std::string &text, const NpuConfig &config) {
  TensorSpec spec = parseSpec(text);
  if (spec.desc.layout == NpuLayout::Continuous)
    raise("'" + text +
          "' is in system memory (continuous), not a local tensor");
  bool chosen = spec.desc.layout == NpuLayout::Matrix && spec.desc.matrixW == 0;
  check(chooseMatrixW(config, spec.desc));
  LocalTensor tensor = unwrap(LocalTensor::get(config, spec.desc));
  return NpuTensor{spec, tensor, chosen};
}

/// The text of a map, as `tessel indexing npu` prints it.
std::string mapText(const IndexingMap &map) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << map;
  return text;
}

/// `tessel indexing npu SPEC`: (n, c, h, w) -> (npu, byte offset) of a
/// local tensor, or -> (byte offset) of a tensor in system memory.
std::string npuIndexingMap(const std::string &text, const NpuConfig *config) {
  mlir::MLIRContext context;
  TensorSpec spec = parseSpec(text);
  if (spec.desc.layout == NpuLayout::Continuous)
    return mapText(
        getContinuousMap(spec.desc.shape, byteWidth(spec.desc.type), &context));
  if (!config)
    raise("'" + text +
          "' is a local tensor: give config=tessel.npu.Config(chip=NAME) or "
          "Config(npus=X, mem=S)");
  return mapText(getNpuLocalMap(makeTensor(text, *config).tensor, &context));
}

int tensorRank(const LocalTensor &t) {
  return t.layout() == NpuLayout::Matrix ? 2 : 4;
}

/// The logical shape numpy sees: (n, c, h, w), or (rows, cols).
std::vector<int64_t> logicalShape(const LocalTensor &t) {
  return std::vector<int64_t>(t.shape().begin(),
                              t.shape().begin() + tensorRank(t));
}

nb::tuple toTuple(const std::vector<int64_t> &values) {
  nb::list list;
  for (int64_t v : values)
    list.append(v);
  return nb::tuple(list);
}

void checkArray(const NpuTensor &t, const ArrayArgument &array) {
  const auto &[typeName, dims, bytes] = array;
  PrimitiveType type = t.tensor.desc().type;
  std::optional<PrimitiveType> given = parsePrimitiveType(typeName);
  if (!given || *given != type)
    raise("array: holds " + typeName + " elements, expected " +
          std::string(primitiveTypeName(type)) + " (" + npuTypeName(type) +
          ") for " + describeTensorLine(t.tensor));
  if (dims != logicalShape(t.tensor)) {
    std::string have = "(";
    for (size_t i = 0; i < dims.size(); ++i)
      have += (i ? "," : "") + std::to_string(dims[i]);
    raise("array: shape " + have + "), expected " +
          describeDims(t.tensor.shape(), tensorRank(t.tensor)) + " for " +
          describeTensorLine(t.tensor));
  }
  (void)bytes;
}

NpuPictureOptions tensorPicture(const NpuTensor &t) {
  check(t.tensor.checkFits());
  NpuPictureOptions options;
  options.title = describePictureTitle(t.tensor);
  return options;
}

std::vector<NamedTensor> fitTensorsOf(const FitReport &report) {
  std::vector<NamedTensor> tensors;
  for (const FitEntry &e : report.entries)
    tensors.push_back({e.name, e.tensor});
  if (tensors.empty())
    raise("the report has no tensors to draw");
  return tensors;
}

NpuPictureOptions fitPicture() {
  NpuPictureOptions options;
  options.byTensor = true;
  options.title = "local memory";
  return options;
}

} // namespace

void bindNpu(nb::module_ &m) {
  nb::class_<NpuConfig>(m, "NpuConfig", R"doc(
The local memory of a Sophgo-style TPU: X NPUs of S bytes each, banks and
the alignment unit (tessel/Npu). Make one with tessel.npu.Config().
)doc")
      .def("__str__", &NpuConfig::toString)
      .def("__repr__",
           [](const NpuConfig &c) {
             return "<tessel.npu.NpuConfig " + c.toString() + ">";
           })
      .def("__eq__", &NpuConfig::operator==)
      .def_prop_ro("name", &NpuConfig::name)
      .def_prop_ro("npus", &NpuConfig::npus)
      .def_prop_ro("bytes_per_npu", &NpuConfig::bytesPerNpu)
      .def_prop_ro("banks", &NpuConfig::banks)
      .def_prop_ro("align_bytes", &NpuConfig::alignBytes)
      .def_prop_ro("total_bytes", &NpuConfig::totalBytes)
      .def(
          "split",
          [](const NpuConfig &c, int64_t address) {
            NpuPlace p = unwrap(c.split(address));
            return std::make_tuple(p.npu, p.offset);
          },
          nb::arg("address"),
          "The (npu, offset) of a local-memory address (`tessel npu "
          "address`).\n\n>>> tessel.npu.Config(npus=4, mem=1024).split(1472)\n"
          "(1, 448)")
      .def(
          "address",
          [](const NpuConfig &c, int64_t npu, int64_t offset) {
            if (npu < 0 || npu >= c.npus() || offset < 0 ||
                offset >= c.bytesPerNpu())
              raise("npu " + std::to_string(npu) + " offset " +
                    std::to_string(offset) +
                    " is outside local memory, expected npu 0.." +
                    std::to_string(c.npus() - 1) + " and offset 0.." +
                    std::to_string(c.bytesPerNpu() - 1));
            return c.address(NpuPlace{npu, offset});
          },
          nb::arg("npu"), nb::arg("offset"),
          "The address of (npu, offset).\n\n"
          ">>> tessel.npu.Config(npus=4, mem=1024).address(1, 448)\n1472");

  m.def("_npu_config", &makeConfig, nb::arg("chip") = nb::none(),
        nb::arg("npus") = nb::none(), nb::arg("mem") = nb::none(),
        nb::arg("banks") = nb::none(), nb::arg("align") = nb::none());
  m.def(
      "_npu_presets",
      [] {
        std::vector<std::string> names;
        for (std::string_view name : NpuConfig::presetNames())
          names.emplace_back(name);
        return names;
      },
      "The chips tessel knows.");

  nb::class_<NpuTensor>(m, "LocalTensor", R"doc(
A tensor in NPU local memory, from a spec as `tessel npu` reads it:
NAME=TYPE[N,C,H,W]:LAYOUT[:MODE]@ADDRESS.

>>> chip = tessel.npu.Config(npus=4, mem=1024)
>>> t = tessel.npu.LocalTensor("x=fp32[2,3,4,5]:aligned@2048", chip)
>>> t.where((1, 2, 3, 4))      # (npu, slot, offset, address)
(0, 1, 460, 460)
)doc")
      .def(
          "__init__",
          [](NpuTensor *self, const std::string &spec,
             const NpuConfig &config) {
            new (self) NpuTensor(makeTensor(spec, config));
          },
          nb::arg("spec"), nb::arg("config"))
      .def("__str__",
           [](const NpuTensor &t) { return printTensorSpec(t.spec); })
      .def("__repr__",
           [](const NpuTensor &t) {
             return "<tessel.npu.LocalTensor " + printTensorSpec(t.spec) + ">";
           })
      .def_prop_ro("name", [](const NpuTensor &t) { return t.spec.name; })
      .def_prop_ro(
          "shape",
          [](const NpuTensor &t) { return toTuple(logicalShape(t.tensor)); },
          "The logical shape: (n, c, h, w), or (rows, cols) for a matrix.")
      .def_prop_ro("element_type",
                   [](const NpuTensor &t) {
                     return std::string(
                         primitiveTypeName(t.tensor.desc().type));
                   })
      .def_prop_ro(
          "strides",
          [](const NpuTensor &t) {
            const Dims4 &s = t.tensor.strides();
            return toTuple({s[0], s[1], s[2], s[3]});
          },
          "The (n, c, h, w) strides in stored elements.")
      .def_prop_ro(
          "npus", [](const NpuTensor &t) { return toTuple(t.tensor.npus()); },
          "The NPUs that hold a channel of the tensor.")
      .def_prop_ro("channels_per_npu",
                   [](const NpuTensor &t) { return t.tensor.channelsPerNpu(); })
      .def_prop_ro("bytes_per_npu",
                   [](const NpuTensor &t) { return t.tensor.bytesPerNpu(); })
      .def_prop_ro(
          "matrix_w",
          [](const NpuTensor &t) { return t.tensor.desc().matrixW; },
          "Columns per channel of a matrix (the advisor's when not given).")
      .def_prop_ro(
          "problems",
          [](const NpuTensor &t) { return localTensorProblems(t.tensor); },
          "Alignment, fit and aliasing problems ([] when there are none).")
      .def(
          "to_dict",
          [](const NpuTensor &t) {
            return jsonDict(localTensorExplainJson(t.tensor));
          },
          "The object `tessel npu explain --json` prints, as a dict.\n\n"
          ">>> t.to_dict()['waste']['total']")
      .def(
          "explain",
          [](const NpuTensor &t) {
            return explainLocalTensor(t.tensor, t.matrixWChosen);
          },
          "The report of `tessel npu explain`.\n\n>>> print(t.explain())")
      .def(
          "where",
          [](const NpuTensor &t, const std::vector<int64_t> &index) {
            std::string text;
            for (size_t i = 0; i < index.size(); ++i)
              text += (i ? "," : "") + std::to_string(index[i]);
            Dims4 at = unwrap(checkTensorIndex(t.tensor, index, text));
            NpuPlace p = t.tensor.locate(at);
            return std::make_tuple(p.npu, t.tensor.slotOf(at), p.offset,
                                   t.tensor.config().address(p));
          },
          nb::arg("index"),
          "(npu, slot, offset, address) of an element (`tessel npu where "
          "--index`).")
      .def(
          "what_is",
          [](const NpuTensor &t, int64_t npu, int64_t offset) {
            const NpuConfig &c = t.tensor.config();
            if (npu < 0 || npu >= c.npus() || offset < 0 ||
                offset >= c.bytesPerNpu())
              raise("npu " + std::to_string(npu) + " offset " +
                    std::to_string(offset) +
                    " is outside local memory, expected npu 0.." +
                    std::to_string(c.npus() - 1) + " and offset 0.." +
                    std::to_string(c.bytesPerNpu() - 1));
            NpuPlace place{npu, offset};
            return describeByte(t.tensor, t.tensor.classify(place), place);
          },
          nb::arg("npu"), nb::arg("offset"),
          "What the byte at (npu, offset) holds (`tessel npu where --npu "
          "--offset`).")
      .def(
          "draw",
          [](const NpuTensor &t, bool scatter) {
            NpuPictureOptions options = tensorPicture(t);
            if (scatter)
              return drawScatterText(t.tensor, options);
            return unwrap(drawMemoryText({{t.spec.name, t.tensor}}, options));
          },
          nb::arg("scatter") = false,
          "The terminal picture of `tessel npu draw` (scatter=True: which "
          "NPU and slot hold each (n, c)).")
      .def(
          "svg",
          [](const NpuTensor &t, bool scatter) {
            NpuPictureOptions options = tensorPicture(t);
            if (scatter)
              return drawScatterSvg(t.tensor, options);
            return unwrap(drawMemorySvg({{t.spec.name, t.tensor}}, options));
          },
          nb::arg("scatter") = false, "The SVG of `tessel npu draw --svg`.")
      .def("_repr_svg_", [](const NpuTensor &t) -> std::optional<std::string> {
        if (!t.tensor.checkFits())
          return std::nullopt;
        Expected<std::string> svg =
            drawMemorySvg({{t.spec.name, t.tensor}}, tensorPicture(t));
        if (!svg)
          return std::nullopt;
        return *svg;
      });

  nb::class_<NpuMemory>(m, "LocalMemory", R"doc(
The byte-exact simulator of local memory: store numpy arrays into local
tensors and load them back (tessel/Npu/LocalMemory.h).

>>> mem = tessel.npu.LocalMemory(chip)
>>> mem.store(t, x)            # x: float32 (2,3,4,5)
>>> np.array_equal(mem.load(t), x)
True
)doc")
      .def(
          "__init__",
          [](NpuMemory *self, const NpuConfig &config) {
            new (self) NpuMemory{unwrap(LocalMemory::create(config))};
          },
          nb::arg("config"))
      .def(
          "_store",
          [](NpuMemory &m, const NpuTensor &t, const ArrayArgument &array) {
            checkArray(t, array);
            const ByteView &bytes = std::get<2>(array);
            return unwrap(m.memory.store(
                t.tensor, bytes.data(), static_cast<int64_t>(bytes.size()),
                continuousStrides(t.tensor.shape()), t.spec.name));
          },
          nb::arg("tensor"), nb::arg("array"))
      .def(
          "_load",
          [](const NpuMemory &m, const NpuTensor &t) {
            int64_t bytes =
                t.tensor.logicalElements() * byteWidth(t.tensor.desc().type);
            Literal value = unwrap(Literal::create(
                Shape(t.tensor.desc().type, logicalShape(t.tensor))));
            unwrap(m.memory.load(t.tensor, value.data(), bytes,
                                 continuousStrides(t.tensor.shape())));
            return resultTuple(value, value.shape(), true);
          },
          nb::arg("tensor"))
      .def(
          "bytes",
          [](const NpuMemory &m) {
            const std::vector<uint8_t> &b = m.memory.bytes();
            return nb::bytes(reinterpret_cast<const char *>(b.data()),
                             b.size());
          },
          "Every byte of local memory, NPU after NPU.")
      .def(
          "fill", [](NpuMemory &m, uint8_t value) { m.memory.fill(value); },
          nb::arg("value"), "Sets every byte of local memory.");

  nb::class_<NpuFit>(m, "FitReport", R"doc(
Whether tensors fit in local memory together (`tessel npu fit`): str() is
the report, .fits and .problems the verdict.
)doc")
      .def(
          "__str__",
          [](const NpuFit &f) { return describeFitReport(f.report, f.config); })
      .def_prop_ro("fits", [](const NpuFit &f) { return f.report.fits(); })
      .def_prop_ro("problems",
                   [](const NpuFit &f) { return f.report.problems; })
      .def_prop_ro(
          "tensors",
          [](const NpuFit &f) {
            std::vector<std::string> specs;
            for (const FitEntry &e : f.report.entries)
              specs.push_back(printTensorSpec(e.spec));
            return specs;
          },
          "The specs as placed (addresses and W filled in).")
      .def(
          "draw",
          [](const NpuFit &f) {
            return unwrap(drawMemoryText(fitTensorsOf(f.report), fitPicture()));
          },
          "The terminal picture of `tessel npu fit --draw`.")
      .def(
          "svg",
          [](const NpuFit &f) {
            return unwrap(drawMemorySvg(fitTensorsOf(f.report), fitPicture()));
          },
          "The SVG of `tessel npu fit --svg`.")
      .def(
          "to_dict",
          [](const NpuFit &f) {
            return jsonDict(fitReportJson(f.report, f.config));
          },
          "The object `tessel npu fit --json` prints, as a dict.");

  nb::class_<NpuMatrixAdvice>(m, "MatrixAdvice", R"doc(
The W advisor's answer for a matrix (`tessel npu fit --matrix RxC`): str()
is the report with its table, .best_w the W it picks, to_dict() the object
`--json` prints.
)doc")
      .def("__str__",
           [](const NpuMatrixAdvice &a) {
             return describeMatrixAdvice(a.table, a.config);
           })
      .def_prop_ro(
          "best_w",
          [](const NpuMatrixAdvice &a) { return a.table.advice.best.w; },
          "The W the advisor picks.")
      .def_prop_ro(
          "reasons",
          [](const NpuMatrixAdvice &a) { return a.table.advice.reasons; },
          "Sentences explaining the choice.")
      .def(
          "to_dict",
          [](const NpuMatrixAdvice &a) {
            return jsonDict(matrixAdviceJson(a.table, a.config));
          },
          "The object `tessel npu fit --matrix RxC --json` prints, as a "
          "dict.");

  m.def("_indexing_npu", &npuIndexingMap, nb::arg("spec"),
        nb::arg("config").none(), "`tessel indexing npu SPEC`.");

  m.def(
      "_npu_advise_matrix",
      [](int64_t rows, int64_t cols, const NpuConfig &config,
         const std::string &dtype, int64_t startNpu,
         const std::vector<int64_t> &ws) {
        PrimitiveType type = unwrap(parseNpuType(dtype));
        return NpuMatrixAdvice{
            unwrap(adviseMatrixTable(config, rows, cols, type, startNpu, ws)),
            config};
      },
      nb::arg("rows"), nb::arg("cols"), nb::arg("config"), nb::arg("dtype"),
      nb::arg("start_npu"), nb::arg("ws"));

  m.def(
      "_npu_fit",
      [](const std::variant<std::string, std::vector<std::string>> &given,
         const NpuConfig &config) {
        std::vector<TensorSpec> specs;
        if (const std::string *list = std::get_if<std::string>(&given))
          specs = unwrap(parseTensorSpecList(*list));
        else
          for (const std::string &text :
               std::get<std::vector<std::string>>(given))
            specs.push_back(parseSpec(text));
        if (specs.empty())
          raise("give tensor specs, e.g. 'a=fp32[2,3,4,5]'");
        return NpuFit{unwrap(fitTensors(config, specs)), config};
      },
      nb::arg("specs"), nb::arg("config"));
}

} // namespace tessel::python
