//===- TesselAttrs.td - Attributes of the tessel dialect ---*- tablegen -*-===//
#ifndef TESSEL_DIALECT_TESSELATTRS_TD
#define TESSEL_DIALECT_TESSELATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "tessel/Dialect/TesselDialect.td"

def Tessel_IndexingMapAttr : AttrDef<Tessel_Dialect, "IndexingMap"> {
  let mnemonic = "indexing_map";
  let summary = "An indexing map: an affine map with a bounded domain";
  let description = [{
    A tessel::IndexingMap (include/tessel/Indexing/IndexingMap.h) in XLA's
    text form, quoted:

      #tessel.indexing_map<"(th_x, bl_x)[vector_index] -> (bl_x * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">

    The text is parsed and printed by the IndexingMap code, so it reads
    exactly as `tessel indexing` prints maps. Printed IR names these
    attributes `#indexing_map`, `#indexing_map1`, ...
  }];
  let parameters = (ins AttrParameter<"::tessel::IndexingMap", "the map",
                                     "const ::tessel::IndexingMap &">:$indexing_map);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // TESSEL_DIALECT_TESSELATTRS_TD
