//===- TpuOps.td - A small tpu dialect with Mosaic's spelling -*- tablegen -*-===//
//
// Just enough of Mosaic TPU's dialect for kernels to be pasted as they are and
// checked for alignment (docs/alignment.md): the tiled memref layout, the
// memory spaces, assume_multiple, load and store.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_DIALECT_TPUOPS_TD
#define TESSEL_DIALECT_TPUOPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tpu_Dialect : Dialect {
  let name = "tpu";
  let cppNamespace = "::tessel::tpu";
  let summary = "Mosaic TPU's spelling of tiled memory, promises, loads and "
                "stores";
  let description = [{
    Kernels written for Mosaic TPU name their memory with a tiled layout
    (`#tpu.tiled`) and a memory space, promise divisibility with
    `tpu.assume_multiple`, and access memory with `vector.load`/`store` or
    `tpu.load`/`store`. tessel reads these to prove that every dynamic
    index into a tiled dim is a multiple of the tile.
  }];
  let useDefaultAttributePrinterParser = 1;
}

class Tpu_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tpu_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tpu_TiledLayoutAttr : Tpu_Attr<"TiledLayout", "tiled", [
    DeclareAttrInterfaceMethods<MemRefLayoutAttrInterface,
                                ["isIdentity", "verifyLayout"]>]> {
  let summary = "A memref layout made of tiles, then the strides of tiles";
  let description = [{
    The tiles of an XLA tiled layout, outermost first, then one stride per
    memref dim counted in tiles:

      memref<4x256xf32, #tpu.tiled<(8,128),[2,1]>>
      memref<16x256xbf16, #tpu.tiled<(16,128)(2,1),[2,1]>>

    The first tile tiles the memref's minor dims; later tiles tile the
    previous tile (here bf16 pairs). An index into a tiled dim must be a
    multiple of the first tile's extent in that dim.
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::DenseI64ArrayAttr", "tiles">:$tiles,
    ArrayRefParameter<"int64_t", "tile strides">:$tile_strides);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The extent of the first tile in memref dim `dim` of a memref of rank
    /// `rank`, or 1 when the dim is not tiled.
    int64_t tileExtent(unsigned dim, unsigned rank) const;
  }];
}

def Tpu_MemorySpace : I32EnumAttr<"MemorySpace", "a TPU memory", [
    I32EnumAttrCase<"any", 0>,
    I32EnumAttrCase<"vmem", 1>,
    I32EnumAttrCase<"smem", 2>,
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tessel::tpu";
}

def Tpu_MemorySpaceAttr : EnumAttr<Tpu_Dialect, Tpu_MemorySpace,
                                   "memory_space"> {
  let assemblyFormat = "`<` $value `>`";
}

class Tpu_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tpu_Dialect, mnemonic, traits>;

def Tpu_AssumeMultipleOp : Tpu_Op<"assume_multiple", [
    Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A promise that a value is a multiple of a constant";
  let description = [{
    Returns its operand; the compiler may assume every value is a multiple
    of `multiple` (a false promise gives wrong results):

      %j = tpu.assume_multiple %i, 128 : index
  }];
  let arguments = (ins AnyTypeOf<[Index, AnySignlessInteger]>:$value,
                       I32Attr:$multiple);
  let results = (outs AnyTypeOf<[Index, AnySignlessInteger]>:$result);
  let assemblyFormat = "$value `,` $multiple attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tpu_LoadOp : Tpu_Op<"load"> {
  let summary = "Loads a vector from memory at an index";
  let description = [{
      %v = tpu.load %m[%i, %j] {sublane_mask = array<i1: true, true>}
          : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemRead]>:$base,
                       Variadic<Index>:$indices,
                       OptionalAttr<DenseBoolArrayAttr>:$sublane_mask,
                       OptionalAttr<I32Attr>:$sublane_stride);
  let results = (outs AnyVector:$result);
  let assemblyFormat = [{
    $base `[` $indices `]` attr-dict `:` type($base) `,` type($result)
  }];
  let hasVerifier = 1;
}

def Tpu_StoreOp : Tpu_Op<"store"> {
  let summary = "Stores a vector to memory at an index";
  let description = [{
      tpu.store %v, %m[%i, %j] {sublane_mask = array<i1: true, true>}
          : memref<16x256xf32, #tpu.tiled<(8,128),[2,1]>>, vector<8x128xf32>
  }];
  let arguments = (ins AnyVector:$valueToStore,
                       Arg<AnyMemRef, "", [MemWrite]>:$base,
                       Variadic<Index>:$indices,
                       OptionalAttr<DenseBoolArrayAttr>:$sublane_mask,
                       OptionalAttr<I32Attr>:$sublane_stride);
  let assemblyFormat = [{
    $valueToStore `,` $base `[` $indices `]` attr-dict `:` type($base) `,`
    type($valueToStore)
  }];
  let hasVerifier = 1;
}

#endif // TESSEL_DIALECT_TPUOPS_TD
