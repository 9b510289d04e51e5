//===- CodegenBinding.cpp - tessel.compile and tessel.Executable ----------===//
#include "Bindings.h"

#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloModule.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"
#include "tessel/Layout/PrimitiveType.h"
#include "tessel/Layout/Shape.h"
#include "tessel/Support/Host.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <new>
#include <optional>

namespace tessel::python {

namespace {

/// A compiled module and the module it came from (for its IR).
struct CompiledModule {
  std::unique_ptr<HloModule> module;
  std::shared_ptr<Executable> executable;
  CompileOptions options;
  /// Calls that ran on the arrays' own bytes (runInPlace).
  int64_t runsInPlace = 0;
};

CompiledModule compileModule(const std::string &text, bool excessPrecision,
                             bool tables, bool relayouts,
                             const std::string &device, int sm,
                             unsigned vectorWidth) {
  if (device != "cpu" && device != "gpu")
    raise("device must be 'cpu' or 'gpu', not '" + device + "'");
  if (sm != 0 && device != "gpu")
    raise("sm is for device='gpu'");
  std::unique_ptr<HloModule> module = unwrap(parseHloModule(text));
  check(verifyHloModule(*module), text);
  check(checkInlinedSize(*module));
  CompileOptions options;
  options.excessPrecision = excessPrecision;
  options.tables = tables;
  options.relayouts = relayouts;
  options.vectorWidth = vectorWidth;
  if (device == "gpu") {
    // PTX through the CUDA driver, opened now (tessel run --device gpu);
    // sm 0: the device's own compute capability.
    options.target = Target::Gpu;
    options.backend = Backend::Nvptx;
    options.smVersion = sm;
  }
  Expected<std::shared_ptr<Executable>> executable = [&] {
    nb::gil_scoped_release release;
    return Executable::compile(*module, options);
  }();
  return CompiledModule{std::move(module), unwrap(std::move(executable), text),
                        options};
}

EmitKind parseEmitKind(const std::string &kind) {
  if (kind == "partition")
    return EmitKind::Partition;
  if (kind == "mlir")
    return EmitKind::Mlir;
  if (kind == "lowered")
    return EmitKind::Lowered;
  if (kind == "llvm")
    return EmitKind::Llvm;
  if (kind == "asm")
    return EmitKind::Asm;
  if (kind == "ptx")
    return EmitKind::Ptx;
  if (kind == "explain")
    return EmitKind::Explain;
  raise("unknown IR '" + kind +
        "', expected partition, mlir, lowered, llvm, asm, ptx (device='gpu') "
        "or explain");
}

std::string emit(const CompiledModule &compiled, EmitKind kind,
                 CompileOptions options) {
  Expected<std::string> text = [&] {
    nb::gil_scoped_release release;
    return emitHloModule(*compiled.module, kind, options);
  }();
  return unwrap(std::move(text));
}

/// Whether numpy's C order of an array of `shape` is its buffer: the
/// row-major layout with nothing else set, static dims, whole bytes.
bool storedAsNumpy(const Shape &shape, int64_t physicalBytes) {
  if (!shape.isArray() || !shape.dynamicDims.empty())
    return false;
  if (shape.layout && (!shape.layout->hasOnlyMinorToMajor() ||
                       shape.layout->minorToMajor !=
                           Layout::rowMajor(shape.dims.size()).minorToMajor))
    return false;
  std::optional<int64_t> elements = shape.elementCount();
  return elements && *elements * byteWidth(shape.elementType) == physicalBytes;
}

/// Runs on the arrays' own bytes when every parameter and output is stored
/// as numpy stores it and every array is the parameter's type and dims, in
/// place and 16-byte aligned: no Literal, no copy. std::nullopt when the
/// run must go through Literals.
std::optional<nb::list> runInPlace(CompiledModule &c,
                                   const std::vector<ArrayArgument> &arrays,
                                   const ProgramShape &program,
                                   const RunOptions &options) {
  Executable &exe = *c.executable;
  std::vector<int64_t> inputBytes = exe.inputBytes();
  std::vector<int64_t> outputBytes = exe.outputBytes();
  std::vector<Shape> outputShapes = exe.outputShapes();
  if (inputBytes.size() != arrays.size() ||
      outputBytes.size() != outputShapes.size())
    return std::nullopt;
  std::vector<const void *> inputs;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const auto &[typeName, dims, bytes] = arrays[i];
    const Shape &parameter = program.parameters[i];
    std::optional<PrimitiveType> type = parsePrimitiveType(typeName);
    if (!type || *type != parameter.elementType || dims != parameter.dims ||
        !storedAsNumpy(parameter, inputBytes[i]) || bytes.size() == 0 ||
        static_cast<int64_t>(bytes.size()) != inputBytes[i] ||
        reinterpret_cast<uintptr_t>(bytes.data()) % 16 != 0)
      return std::nullopt;
    inputs.push_back(bytes.data());
  }
  // The compiler's buffers have the parameter instructions' layouts, which
  // entry_computation_layout may spell differently: both must be numpy's.
  for (const HloInstruction *param : c.module->entry()->parameters()) {
    int64_t number = param->parameterNumber();
    if (number < 0 || number >= static_cast<int64_t>(inputBytes.size()) ||
        !storedAsNumpy(param->shape(), inputBytes[number]))
      return std::nullopt;
  }
  for (size_t o = 0; o < outputShapes.size(); ++o)
    if (!storedAsNumpy(outputShapes[o], outputBytes[o]))
      return std::nullopt;
  // The results' buffers (HostBuffers: huge pages for large ones), handed
  // to numpy without a copy afterwards.
  std::vector<std::unique_ptr<HostBuffer>> results;
  std::vector<void *> outputs;
  for (int64_t size : outputBytes) {
    results.push_back(std::make_unique<HostBuffer>(std::max<int64_t>(size, 1)));
    if (!results.back()->data())
      throw std::bad_alloc();
    outputs.push_back(results.back()->data());
  }
  Status ran = [&] {
    nb::gil_scoped_release release;
    return exe.runPhysical(inputs, outputs, options);
  }();
  check(ran);
  ++c.runsInPlace;
  nb::list out;
  for (size_t o = 0; o < results.size(); ++o) {
    HostBuffer *owned = results[o].release();
    nb::capsule deleter(
        owned, [](void *p) noexcept { delete static_cast<HostBuffer *>(p); });
    nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>> bytes(
        owned->data(), {static_cast<size_t>(outputBytes[o])}, deleter);
    nb::list dims;
    for (int64_t d : outputShapes[o].dims)
      dims.append(d);
    out.append(nb::make_tuple(
        std::string(primitiveTypeName(outputShapes[o].elementType)),
        nb::tuple(dims), bytes));
  }
  return out;
}

} // namespace

void bindCodegen(nb::module_ &m) {
  nb::class_<CompiledModule>(m, "Executable", R"doc(
An HLO module compiled for this CPU (tessel/Codegen): call it on numpy
arrays, one per ENTRY parameter. Make one with tessel.compile().

>>> exe = tessel.compile(open("examples/gelu_small.hlo").read())
>>> y = exe(x)                       # the arrays `tessel run` would write
>>> print(exe.explain())             # kernels, emitters, launches
)doc")
      .def_prop_ro(
          "parameters",
          [](const CompiledModule &c) {
            std::vector<std::string> shapes;
            for (const Shape &shape : c.module->entryProgramShape().parameters)
              shapes.push_back(shape.toString());
            return shapes;
          },
          "The shapes of the ENTRY parameters.")
      .def_prop_ro(
          "outputs",
          [](const CompiledModule &c) {
            std::vector<std::string> shapes;
            for (const Shape &shape : c.executable->outputShapes())
              shapes.push_back(shape.toString());
            return shapes;
          },
          "The shapes of the outputs (one per ROOT tuple element).")
      .def_prop_ro(
          "device",
          [](const CompiledModule &c) {
            return std::string(c.options.backend == Backend::Nvptx ? "gpu"
                                                                   : "cpu");
          },
          "Where the kernels run: 'cpu' or 'gpu'.")
      .def_prop_ro(
          "_runs_in_place",
          [](const CompiledModule &c) { return c.runsInPlace; },
          "Calls that ran on the arrays' own bytes, with no copy.")
      .def_prop_ro(
          "compile_ms",
          [](const CompiledModule &c) {
            return c.executable->compileMilliseconds();
          },
          "Milliseconds from HLO to callable kernels.")
      .def(
          "_run",
          [](CompiledModule &c, const std::vector<ArrayArgument> &arrays,
             int threads) {
            ProgramShape program = c.module->entryProgramShape();
            if (arrays.size() != program.parameters.size())
              raise("the entry takes " +
                    std::to_string(program.parameters.size()) +
                    " parameters, given " + std::to_string(arrays.size()) +
                    " arrays");
            if (threads < 0)
              raise("threads must be 0 (one per core) or more, given " +
                    std::to_string(threads));
            RunOptions options;
            options.threads = threads;
            if (std::optional<nb::list> out =
                    runInPlace(c, arrays, program, options))
              return *out;
            std::vector<Literal> arguments;
            for (size_t i = 0; i < arrays.size(); ++i)
              arguments.push_back(argumentLiteral(
                  arrays[i], program.parameters[i],
                  /*logical=*/true, "argument " + std::to_string(i)));
            Expected<Literal> result = [&] {
              nb::gil_scoped_release release;
              return c.executable->run(arguments, options);
            }();
            Literal value = unwrap(std::move(result));
            nb::list out;
            if (!value.isTuple()) {
              out.append(resultTuple(value, value.shape(), true));
              return out;
            }
            for (const Literal &element : value.tupleElements())
              out.append(resultTuple(element, element.shape(), true));
            return out;
          },
          nb::arg("arrays"), nb::arg("threads") = 0)
      .def(
          "emit",
          [](const CompiledModule &c, const std::string &kind) {
            EmitKind emitKind = parseEmitKind(kind);
            if (emitKind == EmitKind::Ptx &&
                c.options.backend != Backend::Nvptx)
              raise("PTX is written for the GPU: compile with device='gpu'");
            return emit(c, emitKind, c.options);
          },
          nb::arg("kind") = "mlir",
          "The text `tessel compile --emit=KIND` prints: partition, mlir, "
          "lowered, llvm, asm, ptx (device='gpu'), or explain.\n\n"
          ">>> print(exe.emit('partition'))")
      .def(
          "explain",
          [](const CompiledModule &c) {
            return emit(c, EmitKind::Explain, c.options);
          },
          "The report of `tessel compile --explain`: the kernels, the "
          "emitter of each and why, the launch, then the partition.\n\n"
          ">>> print(exe.explain())")
      .def(
          "_dump",
          [](const CompiledModule &c, const std::string &regex,
             const std::string &dir) {
            CompileOptions options = c.options;
            options.dumpAfter = regex;
            options.dumpDir = dir;
            return emit(c, EmitKind::Lowered, options);
          },
          nb::arg("regex"), nb::arg("dir"));

  m.def("_compile", &compileModule, nb::arg("text"),
        nb::arg("excess_precision") = false, nb::arg("tables") = true,
        nb::arg("relayouts") = true, nb::arg("device") = "cpu",
        nb::arg("sm") = 0, nb::arg("vector_width") = 0,
        "Compiles HLO text; see tessel.compile.");
}

} // namespace tessel::python
