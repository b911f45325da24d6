//===- TxOps.cpp - tx op verifiers, symbol checks and folds ---------------===//

#include "TxDialect/TxOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tx;

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

namespace {
/// Prints a shape as `4x?x8`.
struct ShapeStr {
  ArrayRef<int64_t> shape;
};
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, ShapeStr s) {
  if (s.shape.empty())
    return os << "scalar";
  llvm::interleave(
      s.shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << '?';
        else
          os << d;
      },
      "x");
  return os;
}
Diagnostic &operator<<(Diagnostic &diag, ShapeStr s) {
  std::string str;
  llvm::raw_string_ostream os(str);
  os << s;
  return diag << str;
}
} // namespace

static bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// `a` and `b` have the same rank and compatible dimensions.
static LogicalResult verifySameShape(Operation *op, Type a, Type b,
                                     StringRef aName, StringRef bName) {
  auto at = cast<MemRefType>(a), bt = cast<MemRefType>(b);
  if (at.getRank() != bt.getRank() ||
      failed(verifyCompatibleShape(at.getShape(), bt.getShape())))
    return op->emitOpError() << aName << " shape " << ShapeStr{at.getShape()}
                             << " does not match " << bName << " shape "
                             << ShapeStr{bt.getShape()};
  return success();
}

static LogicalResult verifyFloatElements(Operation *op, Type t,
                                         StringRef name) {
  auto mt = cast<MemRefType>(t);
  if (!isa<FloatType>(mt.getElementType()))
    return op->emitOpError() << name << " must hold floats, got "
                             << mt.getElementType();
  return success();
}

static LogicalResult verifySameElementType(Operation *op, Type a, Type b,
                                           StringRef aName, StringRef bName) {
  Type ae = getElementTypeOrSelf(a), be = getElementTypeOrSelf(b);
  if (ae != be)
    return op->emitOpError() << aName << " element type " << ae
                             << " does not match " << bName
                             << " element type " << be;
  return success();
}

/// A collective's group must be the module's tensor-parallel group.
static LogicalResult verifyGroupSize(Operation *op, int64_t groupSize) {
  if (CompileConfigAttr config = getCompileConfig(op))
    if (config.getTpSize() != groupSize)
      return op->emitOpError()
             << "group size " << groupSize
             << " does not match the module's tensor-parallel size "
             << config.getTpSize();
  return success();
}

/// The result of a scatter (`factor` < 0: divide) or gather (multiply) along
/// `dim`: every other dimension unchanged.
static LogicalResult verifyScaledDim(Operation *op, MemRefType in,
                                     MemRefType out, int64_t dim,
                                     int64_t groupSize, bool gather) {
  if (dim >= in.getRank())
    return op->emitOpError() << "dim " << dim << " is out of range for rank "
                             << in.getRank();
  if (in.getRank() != out.getRank())
    return op->emitOpError() << "result rank " << out.getRank()
                             << " differs from input rank " << in.getRank();
  for (int64_t i = 0, e = in.getRank(); i < e; ++i) {
    int64_t a = in.getDimSize(i), b = out.getDimSize(i);
    if (i != dim) {
      if (!dimsCompatible(a, b))
        return op->emitOpError() << "result dimension " << i << " (" << b
                                 << ") differs from input (" << a << ")";
      continue;
    }
    if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b))
      continue;
    if (gather && b != a * groupSize)
      return op->emitOpError()
             << "gathered dimension " << dim << " should be " << a * groupSize
             << " (" << a << " x group " << groupSize << "), got " << b;
    if (!gather) {
      if (a % groupSize != 0)
        return op->emitOpError() << "dimension " << dim << " of size " << a
                                 << " is not divisible by group size "
                                 << groupSize;
      if (b != a / groupSize)
        return op->emitOpError()
               << "scattered dimension " << dim << " should be "
               << a / groupSize << " (" << a << " / group " << groupSize
               << "), got " << b;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Layers and parameters
//===----------------------------------------------------------------------===//

LogicalResult LayerOp::verify() {
  std::optional<ArrayAttr> stacking = getStacking();
  if (!stacking)
    return success();
  if (stacking->empty())
    return emitOpError("stacking map must not be empty");
  int64_t next = 0;
  llvm::StringSet<> seen;
  for (auto entry : stacking->getAsRange<StackEntryAttr>()) {
    if (!seen.insert(entry.getSource().getValue()).second)
      return emitOpError() << "stacking map lists '"
                           << entry.getSource().getValue() << "' twice";
    if (entry.getOffset() != next)
      return emitOpError() << "stacking map entry '"
                           << entry.getSource().getValue() << "' starts at row "
                           << entry.getOffset() << ", expected " << next
                           << " (entries must be contiguous and in order)";
    next += entry.getSize();
  }
  if (next != static_cast<int64_t>(getOutFeatures()))
    return emitOpError() << "stacking map covers " << next
                         << " rows but the layer has " << getOutFeatures()
                         << " output features";
  return success();
}

LogicalResult GetParamOp::verifySymbolUses(SymbolTableCollection &tables) {
  Operation *sym = tables.lookupNearestSymbolFrom(*this, getParamAttr());
  auto param = dyn_cast_or_null<ParamOp>(sym);
  if (!param) {
    if (!sym)
      return emitOpError() << "'@" << getParam() << "' is not a symbol";
    return emitOpError() << "'@" << getParam() << "' is a "
                         << sym->getName() << ", not a tx.param";
  }
  if (param.getType() != getResult().getType())
    return emitOpError() << "result type " << getResult().getType()
                         << " does not match parameter type "
                         << param.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Guards
//===----------------------------------------------------------------------===//

LogicalResult LayerRefOp::verifySymbolUses(SymbolTableCollection &tables) {
  Operation *sym = tables.lookupNearestSymbolFrom(*this, getLayerAttr());
  if (!sym)
    return emitOpError() << "'@" << getLayer() << "' is not a symbol";
  if (!isa<LayerOp, NoneLayerOp>(sym))
    return emitOpError() << "'@" << getLayer() << "' is a " << sym->getName()
                         << ", not a layer (tx.layer or tx.none_layer)";
  return success();
}

bool GuardOp::evaluate(bool exists) {
  switch (getPredicate()) {
  case GuardPredicate::is_not_none:
  case GuardPredicate::truthy:
  case GuardPredicate::ne_none:
    return exists;
  case GuardPredicate::is_none:
  case GuardPredicate::falsy:
  case GuardPredicate::eq_none:
    return !exists;
  }
  llvm_unreachable("unknown guard predicate");
}

OpFoldResult GuardOp::fold(FoldAdaptor) {
  if (!isFoldable())
    return {};
  auto ref = getRef().getDefiningOp<LayerRefOp>();
  if (!ref)
    return {};
  Operation *sym = SymbolTable::lookupNearestSymbolFrom(*this,
                                                        ref.getLayerAttr());
  if (!sym || !isa<LayerOp, NoneLayerOp>(sym))
    return {};
  return BoolAttr::get(getContext(), evaluate(isa<LayerOp>(sym)));
}

//===----------------------------------------------------------------------===//
// Projections
//===----------------------------------------------------------------------===//

/// Checks a projection of `layer` from `input` to `result`, where `dim` is
/// gathered (`gather`) or scattered by `groupSize` on the way.
static LogicalResult verifyProjectionShapes(Operation *op, Value input,
                                            Value result,
                                            std::optional<int64_t> dim,
                                            int64_t groupSize, bool gather) {
  auto in = cast<MemRefType>(input.getType());
  auto out = cast<MemRefType>(result.getType());
  if (failed(verifyFloatElements(op, in, "input")) ||
      failed(verifySameElementType(op, in, out, "input", "result")))
    return failure();
  if (in.getRank() < 1)
    return op->emitOpError("input must have at least one dimension");
  if (in.getRank() != out.getRank())
    return op->emitOpError() << "result rank " << out.getRank()
                             << " differs from input rank " << in.getRank();
  if (!out.getLayout().isIdentity())
    return op->emitOpError("result must be a contiguous buffer");
  int64_t last = in.getRank() - 1;
  if (dim) {
    if (*dim >= last)
      return op->emitOpError() << "dim " << *dim
                               << " must be a token dimension (below "
                               << last << ")";
    if (failed(verifyGroupSize(op, groupSize)))
      return failure();
  }
  for (int64_t i = 0; i < last; ++i) {
    int64_t a = in.getDimSize(i), b = out.getDimSize(i);
    if (dim && i == *dim) {
      if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b)) {
        int64_t expect = gather ? a * groupSize : a / groupSize;
        if ((!gather && a % groupSize != 0) || b != expect)
          return op->emitOpError()
                 << "dimension " << i << " should be " << (gather ? "gathered" : "scattered")
                 << " by group " << groupSize << ": input " << a
                 << ", result " << b;
      }
      continue;
    }
    if (!dimsCompatible(a, b))
      return op->emitOpError() << "result dimension " << i << " (" << b
                               << ") differs from input (" << a << ")";
  }
  return success();
}

/// The symbol side of a projection: `layer` is a tx.layer whose sizes and
/// element type match the buffers.
static LogicalResult verifyLayerUse(Operation *op, FlatSymbolRefAttr layerRef,
                                    Value input, Value result,
                                    SymbolTableCollection &tables) {
  Operation *sym = tables.lookupNearestSymbolFrom(op, layerRef);
  if (!sym)
    return op->emitOpError() << "'@" << layerRef.getValue()
                             << "' is not a symbol";
  if (isa<NoneLayerOp>(sym))
    return op->emitOpError() << "calls '@" << layerRef.getValue()
                             << "', which is None";
  auto layer = dyn_cast<LayerOp>(sym);
  if (!layer)
    return op->emitOpError() << "'@" << layerRef.getValue() << "' is a "
                             << sym->getName() << ", not a tx.layer";
  auto in = cast<MemRefType>(input.getType());
  auto out = cast<MemRefType>(result.getType());
  if (in.getElementType() != layer.getDtype())
    return op->emitOpError() << "input element type " << in.getElementType()
                             << " does not match layer '@"
                             << layerRef.getValue() << "' of "
                             << layer.getDtype();
  int64_t inFeat = in.getShape().back(), outFeat = out.getShape().back();
  if (!dimsCompatible(inFeat, layer.getInFeatures()))
    return op->emitOpError() << "input has " << inFeat
                             << " features but layer '@" << layerRef.getValue()
                             << "' takes " << layer.getInFeatures();
  if (!dimsCompatible(outFeat, layer.getOutFeatures()))
    return op->emitOpError() << "result has " << outFeat
                             << " features but layer '@" << layerRef.getValue()
                             << "' produces " << layer.getOutFeatures();
  return success();
}

LogicalResult LinearOp::verify() {
  return verifyProjectionShapes(*this, getInput(), getResult(), std::nullopt,
                                1, false);
}
LogicalResult LinearOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyLayerUse(*this, getLayerAttr(), getInput(), getResult(),
                        tables);
}
LogicalResult AllGatherLinearOp::verify() {
  return verifyProjectionShapes(*this, getInput(), getResult(), getDim(),
                                getGroupSize(), /*gather=*/true);
}
LogicalResult
AllGatherLinearOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyLayerUse(*this, getLayerAttr(), getInput(), getResult(),
                        tables);
}
LogicalResult LinearReduceScatterOp::verify() {
  return verifyProjectionShapes(*this, getInput(), getResult(), getDim(),
                                getGroupSize(), /*gather=*/false);
}
LogicalResult
LinearReduceScatterOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyLayerUse(*this, getLayerAttr(), getInput(), getResult(),
                        tables);
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

static LogicalResult verifyViewBasics(Operation *op, MemRefType src,
                                      MemRefType res) {
  if (src.getElementType() != res.getElementType())
    return op->emitOpError() << "result element type " << res.getElementType()
                             << " differs from source "
                             << src.getElementType();
  if (src.getMemorySpace() != res.getMemorySpace())
    return op->emitOpError("result memory space differs from source");
  return success();
}

/// The result's strides and offset must be exactly `strides` / `offset`.
static LogicalResult verifyLayout(Operation *op, MemRefType res,
                                  ArrayRef<int64_t> strides, int64_t offset) {
  SmallVector<int64_t> got;
  int64_t gotOffset;
  if (failed(res.getStridesAndOffset(got, gotOffset)) ||
      ArrayRef<int64_t>(got) != strides || gotOffset != offset) {
    std::string want;
    llvm::raw_string_ostream os(want);
    os << "strided<[";
    llvm::interleaveComma(strides, os, [&](int64_t s) {
      if (ShapedType::isDynamic(s))
        os << '?';
      else
        os << s;
    });
    os << "], offset: ";
    if (ShapedType::isDynamic(offset))
      os << '?';
    else
      os << offset;
    os << ">";
    return op->emitOpError() << "result layout must be " << want << ", got "
                             << res;
  }
  return success();
}

Value ViewOp::getViewSource() { return getSource(); }
Value TransposeOp::getViewSource() { return getSource(); }
Value SliceOp::getViewSource() { return getSource(); }
Value AliasOp::getViewSource() { return getSource(); }

/// PyTorch's stride computation for `view` (ATen's computeStride): walks
/// the old dimensions from the innermost, groups them into chunks that are
/// contiguous within themselves, and requires the new shape to split or
/// merge dimensions only inside a chunk. Shapes are static here.
static std::optional<SmallVector<int64_t>>
computeViewStrides(ArrayRef<int64_t> oldShape, ArrayRef<int64_t> oldStrides,
                   ArrayRef<int64_t> newShape) {
  SmallVector<int64_t> newStrides(newShape.size(), 1);
  if (oldShape.empty())
    return newStrides;
  int64_t viewD = static_cast<int64_t>(newShape.size()) - 1;
  int64_t chunkBaseStride = oldStrides.back();
  int64_t tensorNumel = 1, viewNumel = 1;
  for (int64_t d = static_cast<int64_t>(oldShape.size()) - 1; d >= 0; --d) {
    tensorNumel *= oldShape[d];
    if (d == 0 || (oldShape[d - 1] != 1 &&
                   oldStrides[d - 1] != tensorNumel * chunkBaseStride)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        newStrides[viewD] = viewNumel * chunkBaseStride;
        viewNumel *= newShape[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return std::nullopt;
      if (d > 0) {
        chunkBaseStride = oldStrides[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return newStrides;
}

static int64_t staticProduct(ArrayRef<int64_t> shape) {
  int64_t p = 1;
  for (int64_t d : shape)
    if (!ShapedType::isDynamic(d))
      p *= d;
  return p;
}

FailureOr<MemRefType> ViewOp::inferResultType(MemRefType source,
                                              ArrayRef<int64_t> shape,
                                              std::string *reason) {
  auto fail = [&](const Twine &why) -> FailureOr<MemRefType> {
    if (reason)
      *reason = why.str();
    return failure();
  };
  int64_t numDynamic = llvm::count_if(shape, ShapedType::isDynamic);
  if (numDynamic > 1)
    return fail("at most one result dimension may be dynamic");
  // A contiguous source takes any shape of the same number of elements.
  if (source.getLayout().isIdentity()) {
    int64_t srcStatic = staticProduct(source.getShape());
    int64_t resStatic = staticProduct(shape);
    if (source.hasStaticShape() && numDynamic == 0 && srcStatic != resStatic)
      return fail("cannot view " + Twine(srcStatic) + " elements as " +
                  Twine(resStatic));
    if (source.hasStaticShape() && numDynamic == 1 &&
        (resStatic == 0 || srcStatic % resStatic != 0))
      return fail("cannot view " + Twine(srcStatic) +
                  " elements with a shape whose static part has " +
                  Twine(resStatic));
    if (!source.hasStaticShape() && numDynamic == 0)
      return fail("a dynamic source needs a dynamic result dimension");
    return MemRefType::get(shape, source.getElementType(), MemRefLayoutAttrInterface(),
                           source.getMemorySpace());
  }
  // A strided source: leading dynamic dimensions stay, the static rest is
  // reshaped by PyTorch's rule.
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(source.getStridesAndOffset(strides, offset)))
    return fail("source layout is not strided");
  int64_t lead = 0;
  while (lead < source.getRank() && source.isDynamicDim(lead))
    ++lead;
  for (int64_t i = lead; i < source.getRank(); ++i)
    if (source.isDynamicDim(i))
      return fail("a strided source may only have leading dynamic dimensions");
  if (static_cast<int64_t>(shape.size()) < lead ||
      llvm::count_if(shape.take_front(lead), ShapedType::isDynamic) != lead ||
      numDynamic != (lead ? 1 : 0) || lead > 1)
    return fail("viewing a strided source must keep its leading dynamic "
                "dimension in place");
  for (int64_t s : ArrayRef<int64_t>(strides).drop_front(lead))
    if (ShapedType::isDynamic(s))
      return fail("source strides must be static");
  ArrayRef<int64_t> oldRest = source.getShape().drop_front(lead);
  ArrayRef<int64_t> newRest = shape.drop_front(lead);
  if (staticProduct(oldRest) != staticProduct(newRest))
    return fail("cannot view " + Twine(staticProduct(oldRest)) +
                " elements as " + Twine(staticProduct(newRest)));
  std::optional<SmallVector<int64_t>> rest = computeViewStrides(
      oldRest, ArrayRef<int64_t>(strides).drop_front(lead), newRest);
  if (!rest)
    return fail("the view splits or merges dimensions that are not "
                "contiguous in the source (PyTorch would need reshape)");
  SmallVector<int64_t> newStrides(ArrayRef<int64_t>(strides).take_front(lead));
  newStrides.append(*rest);
  auto layout = StridedLayoutAttr::get(source.getContext(), offset, newStrides);
  return MemRefType::get(shape, source.getElementType(), layout,
                         source.getMemorySpace());
}

LogicalResult ViewOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  auto res = cast<MemRefType>(getResult().getType());
  if (failed(verifyViewBasics(*this, src, res)))
    return failure();
  std::string reason;
  FailureOr<MemRefType> expected =
      inferResultType(src, res.getShape(), &reason);
  if (failed(expected))
    return emitOpError() << "cannot view " << src << " as "
                         << ShapeStr{res.getShape()} << ": " << reason;
  auto [strides, offset] = expected->getStridesAndOffset();
  return verifyLayout(*this, res, strides, offset);
}

LogicalResult TransposeOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  auto res = cast<MemRefType>(getResult().getType());
  if (failed(verifyViewBasics(*this, src, res)))
    return failure();
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != src.getRank())
    return emitOpError() << "permutation has " << perm.size()
                         << " entries for a rank-" << src.getRank()
                         << " source";
  SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= src.getRank() || seen[p])
      return emitOpError() << "permutation " << perm
                           << " is not a permutation of 0.."
                           << src.getRank() - 1;
    seen[p] = true;
  }
  auto [srcStrides, srcOffset] = src.getStridesAndOffset();
  SmallVector<int64_t> shape, strides;
  for (int64_t p : perm) {
    shape.push_back(src.getDimSize(p));
    strides.push_back(srcStrides[p]);
  }
  if (res.getRank() != src.getRank() ||
      failed(verifyCompatibleShape(res.getShape(), shape)) ||
      res.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result shape " << ShapeStr{res.getShape()}
                         << " is not the permuted source shape "
                         << ShapeStr{shape};
  return verifyLayout(*this, res, strides, srcOffset);
}

LogicalResult SliceOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  auto res = cast<MemRefType>(getResult().getType());
  if (failed(verifyViewBasics(*this, src, res)))
    return failure();
  int64_t dim = getDim();
  if (dim >= src.getRank())
    return emitOpError() << "dim " << dim << " is out of range for rank "
                         << src.getRank();
  int64_t extent = src.getDimSize(dim);
  if (!ShapedType::isDynamic(extent) &&
      static_cast<int64_t>(getOffset() + getSize()) > extent)
    return emitOpError() << "slice [" << getOffset() << ", "
                         << getOffset() + getSize()
                         << ") is out of bounds for dimension " << dim
                         << " of size " << extent;
  SmallVector<int64_t> shape(src.getShape());
  shape[dim] = getSize();
  if (res.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result shape " << ShapeStr{res.getShape()}
                         << " should be " << ShapeStr{shape};
  auto [strides, offset] = src.getStridesAndOffset();
  int64_t newOffset = offset;
  if (getOffset() != 0) {
    if (ShapedType::isDynamic(offset) || ShapedType::isDynamic(strides[dim]))
      newOffset = ShapedType::kDynamic;
    else
      newOffset = offset + getOffset() * strides[dim];
  }
  return verifyLayout(*this, res, strides, newOffset);
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

/// `rhs` is a scalar of the element type, or a buffer whose shape is that of
/// `lhs` or a suffix of it (broadcast over leading dimensions).
static LogicalResult verifyBinaryOperands(Operation *op, Value lhs,
                                          Value rhs) {
  auto l = cast<MemRefType>(lhs.getType());
  if (failed(verifyFloatElements(op, l, "lhs")))
    return failure();
  if (isa<FloatType>(rhs.getType())) {
    if (rhs.getType() != l.getElementType())
      return op->emitOpError() << "scalar rhs of type " << rhs.getType()
                               << " does not match element type "
                               << l.getElementType();
    return success();
  }
  auto r = cast<MemRefType>(rhs.getType());
  if (failed(verifySameElementType(op, l, r, "lhs", "rhs")))
    return failure();
  if (r.getRank() > l.getRank() ||
      failed(verifyCompatibleShape(
          l.getShape().take_back(r.getRank()), r.getShape())))
    return op->emitOpError() << "rhs shape " << ShapeStr{r.getShape()}
                             << " neither matches nor broadcasts to lhs shape "
                             << ShapeStr{l.getShape()};
  return success();
}

static LogicalResult verifyElementwiseResult(Operation *op, Value in,
                                             Value out, StringRef outName) {
  if (failed(verifySameElementType(op, in.getType(), out.getType(), "input",
                                   outName)))
    return failure();
  return verifySameShape(op, in.getType(), out.getType(), "input", outName);
}

/// Reads of the buffer operands of a binary op (a scalar rhs is a value).
static void addBinaryReads(
    Operation *op, OpOperand &lhs, OpOperand &rhs,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &lhs,
                       SideEffects::DefaultResource::get());
  if (isa<BaseMemRefType>(rhs.get().getType()))
    effects.emplace_back(MemoryEffects::Read::get(), &rhs,
                         SideEffects::DefaultResource::get());
}

void BinaryOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addBinaryReads(*this, getLhsMutable(), getRhsMutable(), effects);
  OpResult result = getOperation()->getOpResult(0);
  effects.emplace_back(MemoryEffects::Allocate::get(), result,
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), result,
                       SideEffects::DefaultResource::get());
}

void BinaryIntoOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addBinaryReads(*this, getLhsMutable(), getRhsMutable(), effects);
  effects.emplace_back(MemoryEffects::Write::get(), &getTargetMutable(),
                       SideEffects::DefaultResource::get());
}

LogicalResult UnaryOp::verify() {
  if (failed(verifyFloatElements(*this, getInput().getType(), "input")))
    return failure();
  return verifyElementwiseResult(*this, getInput(), getResult(), "result");
}
LogicalResult BinaryOp::verify() {
  if (failed(verifyBinaryOperands(*this, getLhs(), getRhs())))
    return failure();
  return verifyElementwiseResult(*this, getLhs(), getResult(), "result");
}
LogicalResult UnaryIntoOp::verify() {
  if (failed(verifyFloatElements(*this, getInput().getType(), "input")))
    return failure();
  return verifyElementwiseResult(*this, getInput(), getTarget(), "target");
}
LogicalResult BinaryIntoOp::verify() {
  if (failed(verifyBinaryOperands(*this, getLhs(), getRhs())))
    return failure();
  return verifyElementwiseResult(*this, getLhs(), getTarget(), "target");
}
LogicalResult CopyOp::verify() {
  return verifyElementwiseResult(*this, getSource(), getTarget(), "target");
}

//===----------------------------------------------------------------------===//
// Transformer ops
//===----------------------------------------------------------------------===//

/// The input of a norm, its optional weight (`[D]`, D the normalised last
/// dimension, the input's element type) and epsilon.
static LogicalResult verifyNormWeight(Operation *op, Value input,
                                      Value weight, double eps) {
  auto in = cast<MemRefType>(input.getType());
  if (failed(verifyFloatElements(op, in, "input")))
    return failure();
  if (in.getRank() < 1)
    return op->emitOpError("input must have at least one dimension");
  if (weight) {
    auto w = cast<MemRefType>(weight.getType());
    if (failed(verifySameElementType(op, in, w, "input", "weight")))
      return failure();
    if (w.getRank() != 1 ||
        !dimsCompatible(w.getDimSize(0), in.getShape().back()))
      return op->emitOpError() << "weight shape " << ShapeStr{w.getShape()}
                               << " must be [" << in.getShape().back()
                               << "], the normalised dimension";
  }
  if (!(eps > 0.0))
    return op->emitOpError() << "epsilon must be positive, got " << eps;
  return success();
}

/// A weight offset scales by `offset + weight`: it needs the weight.
static LogicalResult verifyWeightOffset(Operation *op, Value weight,
                                        double offset) {
  if (!weight && offset != 0.0)
    return op->emitOpError() << "weight offset " << offset
                             << " without a weight (the offset is added to "
                                "the weight)";
  return success();
}

LogicalResult RMSNormOp::verify() {
  if (failed(verifyNormWeight(*this, getInput(), getWeight(),
                              getEpsilon().convertToDouble())) ||
      failed(verifyWeightOffset(*this, getWeight(),
                                getWeightOffset().convertToDouble())))
    return failure();
  return verifyElementwiseResult(*this, getInput(), getResult(), "result");
}

LogicalResult AddRMSNormOp::verify() {
  if (failed(verifyNormWeight(*this, getInput(), getWeight(),
                              getEpsilon().convertToDouble())) ||
      failed(verifyWeightOffset(*this, getWeight(),
                                getWeightOffset().convertToDouble())) ||
      failed(verifyElementwiseResult(*this, getInput(), getResidual(),
                                     "residual")) ||
      failed(verifyElementwiseResult(*this, getInput(), getResult(),
                                     "result")))
    return failure();
  return verifyElementwiseResult(*this, getInput(), getResidualOut(),
                                 "residual_out");
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyNormWeight(*this, getInput(), getWeight(),
                              getEpsilon().convertToDouble())))
    return failure();
  if (Value bias = getBias()) {
    if (!getWeight())
      return emitOpError("a bias needs a weight (F.layer_norm(x, shape, "
                         "None, bias) is not supported)");
    if (bias.getType() != getWeight().getType())
      return emitOpError() << "bias type " << bias.getType()
                           << " must be the weight type "
                           << getWeight().getType();
  }
  return verifyElementwiseResult(*this, getInput(), getResult(), "result");
}

LogicalResult RotaryOp::verify() {
  auto in = cast<MemRefType>(getInput().getType());
  if (failed(verifyFloatElements(*this, in, "input")))
    return failure();
  if (in.getRank() != 3)
    return emitOpError() << "input must be [tokens, heads, head_dim], got "
                         << ShapeStr{in.getShape()};
  int64_t headDim = in.getDimSize(2);
  if (!ShapedType::isDynamic(headDim) && headDim % 2 != 0)
    return emitOpError() << "head_dim " << headDim << " must be even";
  int64_t half =
      ShapedType::isDynamic(headDim) ? ShapedType::kDynamic : headDim / 2;
  for (auto [v, name] : {std::pair<Value, StringRef>{getCos(), "cos"},
                         std::pair<Value, StringRef>{getSin(), "sin"}}) {
    auto t = cast<MemRefType>(v.getType());
    if (failed(verifySameElementType(*this, in, t, "input", name)))
      return failure();
    if (t.getRank() != 2 || !dimsCompatible(t.getDimSize(0), in.getDimSize(0)) ||
        !dimsCompatible(t.getDimSize(1), half))
      return emitOpError() << name << " shape " << ShapeStr{t.getShape()}
                           << " must be [tokens, head_dim / 2] = ["
                           << ShapeStr{in.getShape().take_front()} << ", "
                           << ShapeStr{ArrayRef<int64_t>(half)} << "]";
  }
  return verifyElementwiseResult(*this, getInput(), getResult(), "result");
}

LogicalResult AttentionOp::verify() {
  auto q = cast<MemRefType>(getQuery().getType());
  auto k = cast<MemRefType>(getKey().getType());
  auto v = cast<MemRefType>(getValue().getType());
  if (failed(verifyFloatElements(*this, q, "query")) ||
      failed(verifySameElementType(*this, q, k, "query", "key")) ||
      failed(verifySameElementType(*this, q, v, "query", "value")))
    return failure();
  for (auto [t, name] : {std::pair<MemRefType, StringRef>{q, "query"},
                         std::pair<MemRefType, StringRef>{k, "key"},
                         std::pair<MemRefType, StringRef>{v, "value"}})
    if (t.getRank() != 3)
      return emitOpError() << name
                           << " must be [tokens, heads, head_dim], got "
                           << ShapeStr{t.getShape()};
  // Key and value: the same tokens and heads; the value's head_dim is its
  // own (MLA: DeepSeek's v_head_dim differs from the qk head_dim).
  for (int64_t i = 0; i < 2; ++i)
    if (!dimsCompatible(k.getDimSize(i), v.getDimSize(i)))
      return emitOpError() << "key shape " << ShapeStr{k.getShape()}
                           << " and value shape " << ShapeStr{v.getShape()}
                           << " differ in " << (i == 0 ? "tokens" : "heads");
  if (!dimsCompatible(q.getDimSize(2), k.getDimSize(2)))
    return emitOpError() << "query head_dim " << q.getDimSize(2)
                         << " differs from key head_dim " << k.getDimSize(2);
  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      (hkv == 0 || hq % hkv != 0))
    return emitOpError() << hq << " query heads cannot be grouped over "
                         << hkv << " kv heads";
  if (!(getScale().convertToDouble() > 0.0))
    return emitOpError("scale must be positive");
  if (IntegerAttr windowAttr = getWindowAttr()) {
    int64_t window = windowAttr.getInt();
    if (window <= 0)
      return emitOpError() << "window must be positive, got " << window;
    // A window bounds how far back a query looks; without `causal` it would
    // also have to say how far ahead (HF's sliding windows are all causal).
    if (!getCausal())
      return emitOpError("window needs causal (a sliding window limits the "
                         "keys before the query)");
  }
  if (FloatAttr softcap = getSoftcapAttr())
    if (!(softcap.getValueAsDouble() > 0.0))
      return emitOpError() << "softcap must be positive, got "
                           << softcap.getValueAsDouble();
  // The result: [query tokens, query heads, value head_dim].
  auto r = cast<MemRefType>(getResult().getType());
  if (failed(verifySameElementType(*this, q, r, "query", "result")))
    return failure();
  SmallVector<int64_t> expected = {q.getDimSize(0), q.getDimSize(1),
                                   v.getDimSize(2)};
  if (r.getRank() != 3 ||
      failed(verifyCompatibleShape(r.getShape(), expected)))
    return emitOpError() << "result shape " << ShapeStr{r.getShape()}
                         << " is not [query tokens, query heads, value "
                            "head_dim] = "
                         << ShapeStr{expected};
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  if (failed(verifyGroupSize(*this, getGroupSize())))
    return failure();
  return verifyElementwiseResult(*this, getInput(), getResult(), "result");
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyGroupSize(*this, getGroupSize())) ||
      failed(verifySameElementType(*this, getInput().getType(),
                                   getResult().getType(), "input", "result")))
    return failure();
  return verifyScaledDim(*this, cast<MemRefType>(getInput().getType()),
                         cast<MemRefType>(getResult().getType()), getDim(),
                         getGroupSize(), /*gather=*/false);
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyGroupSize(*this, getGroupSize())) ||
      failed(verifySameElementType(*this, getInput().getType(),
                                   getResult().getType(), "input", "result")))
    return failure();
  return verifyScaledDim(*this, cast<MemRefType>(getInput().getType()),
                         cast<MemRefType>(getResult().getType()), getDim(),
                         getGroupSize(), /*gather=*/true);
}

LogicalResult RankOp::verify() {
  return verifyGroupSize(*this, getGroupSize());
}

CollectiveKind AllReduceOp::getCollectiveKind() {
  return CollectiveKind::AllReduce;
}
std::optional<int64_t> AllReduceOp::getCollectiveDim() { return std::nullopt; }

CollectiveKind ReduceScatterOp::getCollectiveKind() {
  return CollectiveKind::ReduceScatter;
}
std::optional<int64_t> ReduceScatterOp::getCollectiveDim() { return getDim(); }

CollectiveKind AllGatherOp::getCollectiveKind() {
  return CollectiveKind::AllGather;
}
std::optional<int64_t> AllGatherOp::getCollectiveDim() { return getDim(); }

CollectiveKind AllGatherLinearOp::getCollectiveKind() {
  return CollectiveKind::AllGather;
}
std::optional<int64_t> AllGatherLinearOp::getCollectiveDim() {
  return getDim();
}

CollectiveKind LinearReduceScatterOp::getCollectiveKind() {
  return CollectiveKind::ReduceScatter;
}
std::optional<int64_t> LinearReduceScatterOp::getCollectiveDim() {
  return getDim();
}

//===----------------------------------------------------------------------===//
// Interfaces
//===----------------------------------------------------------------------===//

LayerOp TxProjectionOpInterface::lookupLayer() {
  return SymbolTable::lookupNearestSymbolFrom<LayerOp>(getOperation(),
                                                       getLayerAttr());
}

bool TxCollectiveOpInterface::isFusedWithProjection() {
  return isa<TxProjectionOpInterface>(getOperation());
}

StringRef TxCollectiveOpInterface::getCollectiveName() {
  switch (getCollectiveKind()) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllGather:
    return "all_gather";
  }
  llvm_unreachable("unknown collective kind");
}

#include "TxDialect/TxInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "TxDialect/TxOps.cpp.inc"
