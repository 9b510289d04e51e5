//===- CodegenBinding.cpp - tessel.compile and tessel.Executable ----------===//
#include "Bindings.h"

#include "tessel/Codegen/Compiler.h"
#include "tessel/Hlo/HloParser.h"
#include "tessel/Hlo/HloVerifier.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace tessel::python {

namespace {

/// A compiled module and the module it came from (for its IR).
struct CompiledModule {
  std::unique_ptr<HloModule> module;
  std::shared_ptr<Executable> executable;
  CompileOptions options;
};

CompiledModule compileModule(const std::string &text, bool excessPrecision) {
  std::unique_ptr<HloModule> module = unwrap(parseHloModule(text));
  check(verifyHloModule(*module));
  check(checkInlinedSize(*module));
  CompileOptions options;
  options.excessPrecision = excessPrecision;
  Expected<std::shared_ptr<Executable>> executable = [&] {
    nb::gil_scoped_release release;
    return Executable::compile(*module, options);
  }();
  return CompiledModule{std::move(module), unwrap(std::move(executable)),
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
  if (kind == "explain")
    return EmitKind::Explain;
  raise("unknown IR '" + kind +
        "', expected partition, mlir, lowered, llvm, asm or explain");
}

std::string emit(const CompiledModule &compiled, EmitKind kind,
                 CompileOptions options) {
  Expected<std::string> text = [&] {
    nb::gil_scoped_release release;
    return emitHloModule(*compiled.module, kind, options);
  }();
  return unwrap(std::move(text));
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
            std::vector<Literal> arguments;
            for (size_t i = 0; i < arrays.size(); ++i)
              arguments.push_back(argumentLiteral(
                  arrays[i], program.parameters[i],
                  /*logical=*/true, "argument " + std::to_string(i)));
            RunOptions options;
            options.threads = threads;
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
            return emit(c, parseEmitKind(kind), c.options);
          },
          nb::arg("kind") = "mlir",
          "The text `tessel compile --emit=KIND` prints: partition, mlir, "
          "lowered, llvm, asm (or explain).\n\n"
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
        nb::arg("excess_precision") = false,
        "Compiles HLO text; see tessel.compile.");
}

} // namespace tessel::python
