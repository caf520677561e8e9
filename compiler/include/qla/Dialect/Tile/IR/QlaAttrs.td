#ifndef QLA_ATTRS_TD
#define QLA_ATTRS_TD

include "qla/Dialect/Tile/IR/QlaDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Qla_MemorySpace : I32EnumAttr<"MemorySpace", "where a tile lives", [
    I32EnumAttrCase<"smem", 0>,
    I32EnumAttrCase<"frag", 1>]> {
  let cppNamespace = "::qla";
  let genSpecializedAttr = 0;
}

class Qla_Attr<string name, string attrMnemonic> : AttrDef<Qla_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Qla_SwizzleAttr : Qla_Attr<"Swizzle", "swizzle"> {
  let summary = "shared-memory swizzle, in bytes (0, 32, 64 or 128), shared by the TMA box and the wgmma descriptor";
  let description = [{
    With `transposed`, a [R][C] tile is stored as its transpose [C][R] (so that it is K-major for the
    gemm that reads it); the swizzle then applies to the stored rows of R elements.
  }];
  let parameters = (ins "int64_t":$bytes, DefaultValuedParameter<"bool", "false">:$transposed);
  let assemblyFormat = "`<` $bytes (`,` `transposed` `=` $transposed^)? `>`";
  let genVerifyDecl = 1;
  let builders = [AttrBuilder<(ins "int64_t":$bytes), [{ return $_get($_ctxt, bytes, false); }]>];
}

def Qla_StridedLayoutAttr : Qla_Attr<"StridedLayout", "strided"> {
  let summary = "a fragment spread round-robin over the block's threads: element i (row-major) lives in "
                "thread i % threads";
  let parameters = (ins "int64_t":$threads);
  let assemblyFormat = "`<` `threads` `=` $threads `>`";
}

def Qla_WgmmaAccLayoutAttr : Qla_Attr<"WgmmaAccLayout", "wgmma_acc"> {
  let summary = "a fragment distributed like wgmma accumulators: rows split across warpgroups in blocks of 64";
  let parameters = (ins "int64_t":$warpgroups);
  let assemblyFormat = "`<` `warpgroups` `=` $warpgroups `>`";
  let genVerifyDecl = 1;
}

#endif
