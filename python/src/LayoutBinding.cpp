//===- LayoutBinding.cpp - tessel.Layout ----------------------------------===//
#include "Bindings.h"

#include "tessel/Indexing/LayoutMap.h"
#include "tessel/Json/ReportJson.h"
#include "tessel/Layout/Decomposition.h"
#include "tessel/Layout/LayoutSizes.h"
#include "tessel/Layout/ShapeParser.h"
#include "tessel/Layout/TiledLayout.h"
#include "tessel/Layout/TpuLayout.h"
#include "tessel/Render/LayoutPicture.h"
#include "tessel/Support/Messages.h"

#include "mlir/IR/MLIRContext.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

namespace tessel::python {

namespace {

/// The layout of LAYOUT text, with the messages of `tessel layout`.
TiledLayout loadLayout(const std::string &text) {
  Expected<Shape> shape = parseShape(text);
  if (!shape)
    raise(shape.takeError().inSource("<layout>"));
  return unwrap(TiledLayout::get(*shape));
}

nb::tuple toTuple(const std::vector<int64_t> &values) {
  nb::list list;
  for (int64_t v : values)
    list.append(v);
  return nb::tuple(list);
}

PictureOptions pictureOptions(int64_t maxRows, int64_t maxCols,
                              int64_t maxSlices) {
  if (maxRows < 4 || maxCols < 4 || maxSlices < 2)
    raise("max_rows and max_cols must be at least 4, max_slices at least 2");
  PictureOptions options;
  options.maxRows = maxRows;
  options.maxColumns = maxCols;
  options.maxSlices = maxSlices;
  return options;
}

Expected<TpuLayoutChoice> tpuChoice(const std::string &text, bool packedPred) {
  Expected<Shape> shape = parseShape(text);
  if (!shape)
    return shape.takeError().inSource("<shape>");
  return chooseTpuLayout(*shape, TpuOptions{packedPred});
}

} // namespace

void bindLayout(nb::module_ &m) {
  nb::class_<TiledLayout>(m, "Layout", R"doc(
An array shape with its layout, as XLA writes it: element type, dims, dim
order and tiles. Every element has an offset in the buffer; padding slots
have no index.

>>> l = tessel.Layout("f32[3,5]{1,0:T(2,2)}")
>>> l.offset((2, 3))
17
>>> l.index_at(9) is None      # a padding slot
True
>>> l.physical_elements, l.utilization
(24, 0.625)
)doc")
      .def(
          "__init__",
          [](TiledLayout *self, const std::string &text) {
            new (self) TiledLayout(loadLayout(text));
          },
          nb::arg("text"),
          "Parses a shape with an optional layout (row-major without one).\n\n"
          ">>> tessel.Layout('bf16[3,300]{1,0:T(8,128)(2,1)}')\n"
          "Layout('bf16[3,300]{1,0:T(8,128)(2,1)}')")
      .def("__str__", [](const TiledLayout &l) { return l.shape().toString(); })
      .def("__repr__",
           [](const TiledLayout &l) {
             return "Layout('" + l.shape().toString() + "')";
           })
      .def("__eq__",
           [](const TiledLayout &a, const TiledLayout &b) {
             return a.shape().toString() == b.shape().toString();
           })
      .def("__hash__",
           [](const TiledLayout &l) {
             return nb::hash(nb::str(l.shape().toString().c_str()));
           })
      .def(
          "offset",
          [](const TiledLayout &l, const std::vector<int64_t> &index) {
            return unwrap(l.checkedOffset(index));
          },
          nb::arg("index"),
          "The offset, in elements, of a logical index (as `tessel layout "
          "index`).\n\n"
          ">>> tessel.Layout('f32[3,5]{1,0:T(2,2)}').offset((2, 3))\n17")
      .def(
          "index_at",
          [](const TiledLayout &l, int64_t offset) -> std::optional<nb::tuple> {
            std::optional<std::vector<int64_t>> index =
                unwrap(l.checkedLogicalIndex(offset));
            if (!index)
              return std::nullopt;
            return toTuple(*index);
          },
          nb::arg("offset"),
          "The logical index stored at an offset, or None for a padding "
          "slot.\n\n"
          ">>> l = tessel.Layout('f32[3,5]{1,0:T(2,2)}')\n"
          ">>> l.index_at(17), l.index_at(9)\n((2, 3), None)")
      .def_prop_ro(
          "element_type",
          [](const TiledLayout &l) {
            return std::string(primitiveTypeName(l.shape().elementType));
          },
          "The element type as XLA spells it ('bf16').")
      .def_prop_ro(
          "dims", [](const TiledLayout &l) { return toTuple(l.logicalDims()); },
          "The logical dims.")
      .def_prop_ro(
          "minor_to_major",
          [](const TiledLayout &l) { return toTuple(l.layout().minorToMajor); },
          "The dim order, most minor dim first.")
      .def_prop_ro(
          "tiles",
          [](const TiledLayout &l) {
            std::vector<std::string> tiles;
            for (const Tile &tile : l.layout().tiles)
              tiles.push_back(tile.toString());
            return tiles;
          },
          "The tiles, e.g. ['(8,128)', '(2,1)'].")
      .def_prop_ro(
          "physical_shape",
          [](const TiledLayout &l) { return toTuple(l.finalDims()); },
          "The shape after every tile.")
      .def_prop_ro("element_bits", &TiledLayout::elementBits,
                   "Bits one element occupies (E(n), or the type's).")
      .def_prop_ro("logical_elements", &TiledLayout::logicalElements)
      .def_prop_ro("physical_elements", &TiledLayout::physicalElements,
                   "Elements the buffer holds, padding included.")
      .def_prop_ro("physical_bytes", &TiledLayout::physicalBytes)
      .def_prop_ro(
          "data_bytes",
          [](const TiledLayout &l) { return computeSizes(l).dataBytes; },
          "Bytes the logical elements need.")
      .def_prop_ro(
          "padding_bytes",
          [](const TiledLayout &l) { return computeSizes(l).paddingBytes; })
      .def_prop_ro(
          "utilization",
          [](const TiledLayout &l) { return computeSizes(l).utilization; },
          "data_bytes / physical_bytes.")
      .def_prop_ro(
          "padding_reason",
          [](const TiledLayout &l) {
            return describeWorstPadding(computeSizes(l));
          },
          "Why the buffer is padded, or '' when it is not.")
      .def_prop_ro(
          "xla_bytes",
          [](const TiledLayout &l) { return computeSizes(l).xlaBytes; },
          "XLA's own size figure (ShapeUtil::ArraySize), or None.")
      .def(
          "to_dict",
          [](const TiledLayout &l) {
            return nb::module_::import_("json").attr("loads")(
                formatJson(layoutExplainJson(l)));
          },
          "The object `tessel layout explain --json` prints, as a dict: "
          "canonical, sizes, padding, utilization, xla_bytes, cheaper.\n\n"
          ">>> "
          "tessel.Layout('f32[3,5]{1,0:T(2,2)}').to_dict()['physical_bytes']"
          "\n96")
      .def("explain", &explainLayout,
           "The report of `tessel layout explain`: sizes, padding, why, and "
           "a cheaper layout.\n\n"
           ">>> print(tessel.Layout('f32[1000,3]{1,0:T(8,128)}').explain())")
      .def("decompose", &describeDecomposition,
           "The layout as pad, reshape (bitcast) and transpose steps "
           "(`tessel layout decompose`).\n\n"
           ">>> print(tessel.Layout('f32[3,5]{1,0:T(2,2)}').decompose())")
      .def(
          "draw",
          [](const TiledLayout &l, int64_t maxRows, int64_t maxCols,
             int64_t maxSlices) {
            PictureOptions options =
                pictureOptions(maxRows, maxCols, maxSlices);
            check(checkPictureSize(l, options));
            return renderLayoutText(l, options);
          },
          nb::arg("max_rows") = 24, nb::arg("max_cols") = 16,
          nb::arg("max_slices") = 4,
          "The terminal picture of `tessel layout draw`.\n\n"
          ">>> print(tessel.Layout('f32[3,5]{1,0:T(2,2)}').draw())")
      .def(
          "svg",
          [](const TiledLayout &l, int64_t maxRows, int64_t maxCols,
             int64_t maxSlices) {
            PictureOptions options =
                pictureOptions(maxRows, maxCols, maxSlices);
            check(checkPictureSize(l, options));
            return renderLayoutSvg(l, options);
          },
          nb::arg("max_rows") = 24, nb::arg("max_cols") = 16,
          nb::arg("max_slices") = 4,
          "The SVG document of `tessel layout draw --svg`.\n\n"
          ">>> open('fig1.svg', "
          "'w').write(tessel.Layout('f32[3,5]{1,0:T(2,2)}').svg())")
      .def(
          "_repr_svg_",
          [](const TiledLayout &l) -> std::optional<std::string> {
            PictureOptions options;
            if (!checkPictureSize(l, options))
              return std::nullopt;
            return renderLayoutSvg(l, options);
          },
          "The picture a notebook shows.")
      .def(
          "as_indexing_map",
          [](const TiledLayout &l, bool inverse) {
            mlir::MLIRContext context;
            IndexingMap map = inverse ? getPhysicalToLogicalMap(l, &context)
                                      : getLogicalToPhysicalMap(l, &context);
            return map.toString();
          },
          nb::arg("inverse") = false,
          "The layout as an indexing map in XLA's text form (`tessel layout "
          "map`); `inverse=True` maps the offset back to the index.\n\n"
          ">>> tessel.Layout('f32[3,5]{1,0:T(2,2)}').as_indexing_map()\n"
          "'(d0, d1) -> ((d0 floordiv 2) * 12 + (d1 floordiv 2) * 4 + (d0 "
          "mod 2) * 2 + d1 mod 2), domain: d0 in [0, 2], d1 in [0, 4]'")
      .def_static(
          "tpu",
          [](const std::string &shape, bool packedPred) {
            TpuLayoutChoice choice = unwrap(tpuChoice(shape, packedPred));
            return unwrap(TiledLayout::get(choice.shape));
          },
          nb::arg("shape"), nb::arg("packed_pred") = false,
          "The tiling a TPU compiler picks for a shape (`tessel layout "
          "tpu`).\n\n"
          ">>> tessel.Layout.tpu('bf16[3,300]')\n"
          "Layout('bf16[3,300]{1,0:T(4,128)(2,1)}')")
      .def_static(
          "tpu_dict",
          [](const std::string &shape, bool packedPred) {
            return nb::module_::import_("json").attr("loads")(formatJson(
                tpuLayoutJson(unwrap(tpuChoice(shape, packedPred)))));
          },
          nb::arg("shape"), nb::arg("packed_pred") = false,
          "The object `tessel layout tpu --json` prints, as a dict: layout, "
          "reason, physical_bytes, utilization.\n\n"
          ">>> tessel.Layout.tpu_dict('bf16[3,300]')['layout']\n"
          "'bf16[3,300]{1,0:T(4,128)(2,1)}'")
      .def_static(
          "tpu_reason",
          [](const std::string &shape, bool packedPred) {
            return unwrap(tpuChoice(shape, packedPred)).reason;
          },
          nb::arg("shape"), nb::arg("packed_pred") = false,
          "Why Layout.tpu picks its tiling, in a sentence or two.");
}

} // namespace tessel::python
