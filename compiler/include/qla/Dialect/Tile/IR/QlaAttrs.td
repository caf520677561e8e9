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
  let description = [{
    With `copies` > 1 the fragment is held `copies` times, once by each group of `threads` consecutive
    threads (each warpgroup a copy, in a kernel marked qla.warpgroup_local): element i lives in thread
    i % threads of every group, so an exchange from it stays inside the group (a named barrier of the
    group's threads, its own copy in scratch) and the groups need not wait for each other.
  }];
  let parameters = (ins "int64_t":$threads, DefaultValuedParameter<"int64_t", "1">:$copies);
  let assemblyFormat = "`<` `threads` `=` $threads (`,` `copies` `=` $copies^)? `>`";
  let builders = [AttrBuilder<(ins "int64_t":$threads), [{ return $_get($_ctxt, threads, 1); }]>];
}

def Qla_RoleAttr : Qla_Attr<"Role", "role"> {
  let summary = "a named group of warpgroups of a warp-specialized kernel, with its register budget";
  let description = [{
    A kernel lists its roles in `qla.roles`, in warpgroup order: the first role's warpgroups come
    first. `registers` is the per-thread budget `setmaxnreg` gives the role (0: none); a `producer`
    role issues the loads. Ops carry the role that runs them in `qla.role` (the role's name).
  }];
  let parameters = (ins "::mlir::StringAttr":$name, "int64_t":$warpgroups,
                        DefaultValuedParameter<"int64_t", "0">:$registers,
                        DefaultValuedParameter<"bool", "false">:$producer);
  let assemblyFormat = "`<` $name `,` `warpgroups` `=` $warpgroups (`,` `registers` `=` $registers^)? "
                       "(`,` `producer` `=` $producer^)? `>`";
  let genVerifyDecl = 1;
}

def Qla_WgmmaAccLayoutAttr : Qla_Attr<"WgmmaAccLayout", "wgmma_acc"> {
  let summary = "a fragment distributed like wgmma accumulators: rows split across warpgroups in blocks of 64";
  let parameters = (ins "int64_t":$warpgroups);
  let assemblyFormat = "`<` `warpgroups` `=` $warpgroups `>`";
  let genVerifyDecl = 1;
}

def Qla_AccSliceLayoutAttr : Qla_Attr<"AccSliceLayout", "acc_slice"> {
  let summary = "a vector held like the rows (along = 0) or columns (along = 1) of a wgmma_acc fragment";
  let description = [{
    A tile with one dimension of n elements (the others 1) whose element i is held by every thread that
    holds row i (`along = 0`) or column i (`along = 1`) of a wgmma_acc fragment over `warpgroups`
    warpgroups with n rows (columns): a thread holds 2 rows a 64-row block, or n / 4 columns.
    Broadcasting it into that fragment along the other dimension moves no data (Triton's slice layout);
    loads and elementwise maps treat it like any fragment. qla-assign-layouts gives it to the vectors
    that broadcasts into accumulator fragments read.
  }];
  let parameters = (ins "int64_t":$warpgroups, "int64_t":$along);
  let assemblyFormat = "`<` `warpgroups` `=` $warpgroups `,` `along` `=` $along `>`";
  let genVerifyDecl = 1;
}

#endif
