//===- RelayoutBinding.cpp - tessel.relayout's plan -----------------------===//
//
// tessel.relayout (python/tessel/__init__.py) checks and allocates numpy
// arrays; the plan bound here converts their buffers in place, with the GIL
// released, from the memory numpy owns (no copy).
//
//===----------------------------------------------------------------------===//
#include "Bindings.h"

#include "tessel/Layout/ShapeParser.h"
#include "tessel/Relayout/Relayout.h"
#include "tessel/Support/Messages.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace tessel::python {

namespace {

using SourceBytes =
    nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using DestinationBytes =
    nb::ndarray<uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/// A layout for `shape` given as a bare layout ("{1,0:T(2,2)}"), as a shape
/// with a layout of the same element type and dims, or not at all (the
/// layout of `shape`, else row-major). `label` names the argument.
Layout resolveLayout(const std::string &label,
                     const std::optional<std::string> &text,
                     const Shape &shape) {
  if (!text || text->empty())
    return shape.layout ? *shape.layout : Layout::rowMajor(shape.rank());
  size_t first = text->find_first_not_of(" \t");
  if (first != std::string::npos && (*text)[first] == '{') {
    Expected<Layout> layout = parseLayoutFor(*text, shape);
    if (!layout)
      raise(layout.takeError().inSource(label));
    return *layout;
  }
  Expected<Shape> given = parseShape(*text);
  if (!given)
    raise(given.takeError().inSource(label));
  if (!given->isArray() || given->elementType != shape.elementType ||
      given->dims != shape.dims)
    raise(label + "='" + *text + "' is " + given->toStringWithoutLayout() +
          ", expected the element type and dims of " +
          shape.toStringWithoutLayout());
  return given->layout ? *given->layout : Layout::rowMajor(shape.rank());
}

RelayoutPlan makePlan(const std::string &shapeText,
                      const std::optional<std::string> &fromText,
                      const std::optional<std::string> &toText, int threads) {
  Expected<Shape> shape = parseShape(shapeText);
  if (!shape)
    raise(shape.takeError().inSource("shape"));
  if (!shape->isArray())
    raise("shape='" + shapeText + "' is not an array shape");
  if (threads < 0)
    raise("threads must be 0 (every core) or more, given " +
          std::to_string(threads));
  Layout from = resolveLayout("from_", fromText, *shape);
  Layout to = resolveLayout("to", toText, *shape);
  RelayoutOptions options;
  options.threads = threads;
  return unwrap(RelayoutPlan::create(*shape, from, to, options));
}

} // namespace

void bindRelayout(nb::module_ &m) {
  nb::class_<RelayoutPlan>(m, "RelayoutPlan", R"doc(
A planned conversion between two layouts of one shape (tessel/Relayout).
tessel.relayout() makes one per call; keep a plan to convert many arrays.

>>> plan = tessel.RelayoutPlan("f32[3,5]", to="{1,0:T(2,2)}")
>>> plan.destination_bytes
96
)doc")
      .def(
          "__init__",
          [](RelayoutPlan *self, const std::string &shape,
             std::optional<std::string> from, std::optional<std::string> to,
             int threads) {
            new (self) RelayoutPlan(makePlan(shape, from, to, threads));
          },
          nb::arg("shape"), nb::arg("from_") = nb::none(),
          nb::arg("to") = nb::none(), nb::arg("threads") = 0,
          "Plans the conversion of an array of `shape` (element type and "
          "dims, e.g. 'bf16[4096,4096]') from layout `from_` to layout `to` "
          "(bare layouts such as '{1,0:T(8,128)(2,1)}' or shapes with "
          "layouts; default: the layout of `shape`, else row-major). "
          "threads=0 uses every core.")
      .def_prop_ro(
          "source",
          [](const RelayoutPlan &p) { return TiledLayout(p.source()); },
          "The source layout.")
      .def_prop_ro(
          "destination",
          [](const RelayoutPlan &p) { return TiledLayout(p.destination()); },
          "The destination layout.")
      .def_prop_ro("source_bytes", &RelayoutPlan::sourceBytes)
      .def_prop_ro("destination_bytes", &RelayoutPlan::destinationBytes)
      .def_prop_ro(
          "source_is_array",
          [](const RelayoutPlan &p) { return isPlainRowMajor(p.source()); },
          "Whether the source is row-major: read as an array of the logical "
          "shape rather than a flat buffer.")
      .def_prop_ro(
          "destination_is_array",
          [](const RelayoutPlan &p) {
            return isPlainRowMajor(p.destination());
          },
          "Whether the destination is row-major: written as an array of the "
          "logical shape rather than a flat buffer.")
      .def("describe", &RelayoutPlan::describe,
           "The kernel chosen and why (`tessel relayout -v`).")
      .def(
          "check_source",
          [](const RelayoutPlan &p, const std::vector<int64_t> &dims,
             bool fortranOrder, int64_t bytes) {
            check(checkSourceArray(p.source(), dims, fortranOrder, bytes,
                                   "array", /*isArrayFile=*/true));
          },
          nb::arg("dims"), nb::arg("fortran_order"), nb::arg("nbytes"),
          "Raises ValueError when an array of these dims and bytes cannot "
          "be the source (the checks of `tessel relayout` on a .npy input).")
      .def(
          "execute",
          [](const RelayoutPlan &p, SourceBytes src, DestinationBytes dst) {
            const uint8_t *in = src.data();
            uint8_t *out = dst.data();
            int64_t inBytes = static_cast<int64_t>(src.size());
            int64_t outBytes = static_cast<int64_t>(dst.size());
            if (inBytes && outBytes && in < out + outBytes &&
                out < in + inBytes)
              raise("the output array shares memory with the input; "
                    "relayout needs a separate buffer");
            Status executed = [&] {
              nb::gil_scoped_release release;
              return p.execute(in, inBytes, out, outBytes);
            }();
            check(executed);
          },
          nb::arg("src"), nb::arg("dst"),
          "Converts the bytes of `src` into `dst` (1-D uint8 views of "
          "C-contiguous buffers of source_bytes and destination_bytes), "
          "with the GIL released.");
}

} // namespace tessel::python
