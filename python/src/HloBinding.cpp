//===- HloBinding.cpp - tessel.hlo ----------------------------------------===//
#include "Bindings.h"

#include "tessel/Hlo/HloEvaluator.h"
#include "tessel/Hlo/HloModule.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Hlo/LiteralArrays.h"
#include "tessel/Indexing/HloIndexing.h"
#include "tessel/Json/ReportJson.h"

#include "mlir/IR/MLIRContext.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>

namespace tessel::python {

Literal argumentLiteral(const ArrayArgument &array, const Shape &parameter,
                        bool logical, const std::string &name) {
  const auto &[typeName, dims, bytes] = array;
  if (!parameter.isArray())
    raise(name + ": parameter shape " + parameter.toString() +
          " is not an array");
  // numpy stores bf16 and f8 as void elements: compare the exact types
  // first, so that bf16 is never taken for f16.
  std::optional<PrimitiveType> type = parsePrimitiveType(typeName);
  if (!type || *type != parameter.elementType)
    raise(name + ": holds " + typeName + " elements, expected " +
          std::string(primitiveTypeName(parameter.elementType)) + " for " +
          parameter.toString());
  NpyArray npy;
  npy.descr = npyDescr(*type);
  npy.shape = dims;
  npy.data.assign(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  return unwrap(literalFromArray(npy, parameter, logical, name));
}

nb::tuple resultTuple(const Literal &value, const Shape &shape, bool logical) {
  NpyArray array = unwrap(arrayFromLiteral(value, shape, logical));
  auto *owned = new std::string(std::move(array.data));
  nb::capsule deleter(
      owned, [](void *p) noexcept { delete static_cast<std::string *>(p); });
  size_t size = owned->size();
  nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>> bytes(
      reinterpret_cast<uint8_t *>(owned->data()), {size}, deleter);
  nb::list dims;
  for (int64_t d : array.shape)
    dims.append(d);
  return nb::make_tuple(std::string(primitiveTypeName(value.elementType())),
                        nb::tuple(dims), bytes);
}

namespace {

std::unique_ptr<HloModule> parseModule(const std::string &text, bool verify) {
  std::unique_ptr<HloModule> module = unwrap(parseHloModule(text));
  if (verify)
    check(verifyHloModule(*module), text);
  return module;
}

std::vector<std::string> parameterShapes(const HloModule &module) {
  std::vector<std::string> shapes;
  for (const Shape &shape : module.entryProgramShape().parameters)
    shapes.push_back(shape.toString());
  return shapes;
}

/// The results of a run as result tuples: one, or one per element of a
/// tuple ROOT (the shapes of entry_computation_layout where it has them).
nb::list resultList(const Literal &result, const Shape &resultShape,
                    bool logical) {
  nb::list out;
  if (!result.isTuple()) {
    out.append(resultTuple(result, resultShape, logical));
    return out;
  }
  const std::vector<Literal> &elements = result.tupleElements();
  for (size_t i = 0; i < elements.size(); ++i) {
    if (elements[i].isTuple())
      raise("result " + std::to_string(i) +
            " is a nested tuple, expected arrays");
    const Shape &shape = i < resultShape.tupleShapes.size()
                             ? resultShape.tupleShapes[i]
                             : elements[i].shape();
    out.append(resultTuple(elements[i], shape, logical));
  }
  return out;
}

} // namespace

void bindHlo(nb::module_ &m) {
  nb::class_<HloModule>(m, "HloModule", R"doc(
A parsed HLO module (tessel/Hlo), printed back in XLA's canonical form by
str(). Make one with tessel.hlo.parse().
)doc")
      .def("__str__", &HloModule::toString)
      .def("__repr__",
           [](const HloModule &module) {
             return "<tessel.hlo.HloModule " + module.name() + ">";
           })
      .def_prop_ro("name", &HloModule::name)
      .def_prop_ro("parameters", &parameterShapes,
                   "The shapes of the ENTRY parameters, in order.")
      .def_prop_ro(
          "result",
          [](const HloModule &module) {
            return module.entryProgramShape().result.toString();
          },
          "The shape of the ENTRY result.")
      .def(
          "verify",
          [](const HloModule &module) { check(verifyHloModule(module)); },
          "Raises ValueError for what `tessel hlo verify` reports.")
      .def(
          "_evaluate",
          [](const HloModule &module, const std::vector<ArrayArgument> &arrays,
             bool logical) {
            ProgramShape program = module.entryProgramShape();
            if (arrays.size() != program.parameters.size())
              raise("the entry takes " +
                    std::to_string(program.parameters.size()) +
                    " parameters, given " + std::to_string(arrays.size()) +
                    " arrays");
            std::vector<Literal> arguments;
            for (size_t i = 0; i < arrays.size(); ++i)
              arguments.push_back(
                  argumentLiteral(arrays[i], program.parameters[i], logical,
                                  "argument " + std::to_string(i)));
            Expected<Literal> result = [&] {
              nb::gil_scoped_release release;
              return evaluateHloModule(module, arguments);
            }();
            return resultList(unwrap(std::move(result)), program.result,
                              logical);
          },
          nb::arg("arrays"), nb::arg("logical") = true)
      .def(
          "indexing",
          [](const HloModule &module, const std::string &instruction,
             const std::string &computation,
             std::optional<int64_t> inputToOutput) {
            const HloInstruction *inst =
                unwrap(findInstruction(module, instruction, computation));
            mlir::MLIRContext context;
            return unwrap(describeHloIndexing(*inst, inputToOutput, &context));
          },
          nb::arg("instruction") = "", nb::arg("computation") = "",
          nb::arg("input_to_output") = nb::none(),
          "The indexing maps of an instruction (default: the ROOT of the "
          "entry), as `tessel indexing maps` prints them.")
      .def(
          "_indexing_json",
          [](const HloModule &module, const std::string &instruction,
             const std::string &computation,
             std::optional<int64_t> inputToOutput) {
            const HloInstruction *inst =
                unwrap(findInstruction(module, instruction, computation));
            mlir::MLIRContext context;
            return formatJson(
                unwrap(hloIndexingJson(*inst, inputToOutput, &context)));
          },
          nb::arg("instruction") = "", nb::arg("computation") = "",
          nb::arg("input_to_output") = nb::none(),
          "`tessel indexing maps --json` (text).");

  m.def("_hlo_parse", &parseModule, nb::arg("text"), nb::arg("verify") = true,
        "Parses (and verifies) HLO text; see tessel.hlo.parse.");
}

} // namespace tessel::python
