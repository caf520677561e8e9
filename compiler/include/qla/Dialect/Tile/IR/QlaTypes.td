#ifndef QLA_TYPES_TD
#define QLA_TYPES_TD

include "qla/Dialect/Tile/IR/QlaAttrs.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Qla_Type<string name, string typeMnemonic, list<Trait> traits = []> : TypeDef<Qla_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Qla_TensorType : Qla_Type<"Tensor", "tensor"> {
  let summary = "a tensor in global memory: shape, element strides (row-major when omitted) and dtype";
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
                        ArrayRefParameter<"int64_t">:$strides);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType), [{
      return $_get(elementType.getContext(), shape, elementType, ::llvm::ArrayRef<int64_t>{});
    }]>];
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// Strides in elements; row-major contiguous when none were given.
    ::llvm::SmallVector<int64_t> getEffectiveStrides() const;
  }];
}

def Qla_TileType : Qla_Type<"Tile", "tile"> {
  let summary = "a tile in shared memory (smem) or distributed over registers (frag)";
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
                        "::qla::MemorySpace":$memorySpace,
                        DefaultValuedParameter<"::mlir::Attribute", "::mlir::Attribute()">:$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
                                        "::qla::MemorySpace":$space,
                                        CArg<"::mlir::Attribute", "{}">:$layout), [{
      return $_get(elementType.getContext(), shape, elementType, space, layout);
    }]>];
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
    int64_t getSizeInBytes() const;
    bool isShared() const { return getMemorySpace() == ::qla::MemorySpace::smem; }
    bool isFragment() const { return getMemorySpace() == ::qla::MemorySpace::frag; }
    TileType withLayout(::mlir::Attribute layout) const {
      return TileType::get(getContext(), getShape(), getElementType(), getMemorySpace(), layout);
    }
    TileType withShape(::llvm::ArrayRef<int64_t> shape) const {
      return TileType::get(getContext(), shape, getElementType(), getMemorySpace(), getLayout());
    }
    TileType withElementType(::mlir::Type t) const {
      return TileType::get(getContext(), getShape(), t, getMemorySpace(), getLayout());
    }
  }];
}

def Qla_AnyTile : Type<CPred<"::llvm::isa<::qla::TileType>($_self)">, "qla tile", "::qla::TileType">;
def Qla_SmemTile : Type<And<[Qla_AnyTile.predicate,
    CPred<"::llvm::cast<::qla::TileType>($_self).isShared()">]>, "shared-memory tile", "::qla::TileType">;
def Qla_FragTile : Type<And<[Qla_AnyTile.predicate,
    CPred<"::llvm::cast<::qla::TileType>($_self).isFragment()">]>, "register fragment", "::qla::TileType">;

#endif
