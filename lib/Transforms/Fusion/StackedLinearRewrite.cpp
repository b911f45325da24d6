//===- StackedLinearRewrite.cpp - the stacked-linear rewrite --------------===//

#include "TxDialect/Transforms/FusionRewrite.h"
#include "TxDialect/CheckpointLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tx;

/// The type of `tx.slice` of `source` along `dim`, as its verifier wants it.
static MemRefType sliceType(MemRefType source, int64_t dim, int64_t offset,
                            int64_t size) {
  auto [strides, srcOffset] = source.getStridesAndOffset();
  int64_t newOffset = srcOffset;
  if (offset != 0)
    newOffset = ShapedType::isDynamic(srcOffset) ||
                        ShapedType::isDynamic(strides[dim])
                    ? ShapedType::kDynamic
                    : srcOffset + offset * strides[dim];
  SmallVector<int64_t> shape(source.getShape());
  shape[dim] = size;
  return MemRefType::get(
      shape, source.getElementType(),
      StridedLayoutAttr::get(source.getContext(), newOffset, strides),
      source.getMemorySpace());
}

/// The type of `tx.transpose` of `source` by `perm`.
static MemRefType transposeType(MemRefType source, ArrayRef<int64_t> perm) {
  auto [strides, offset] = source.getStridesAndOffset();
  SmallVector<int64_t> shape, newStrides;
  for (int64_t p : perm) {
    shape.push_back(source.getDimSize(p));
    newStrides.push_back(strides[p]);
  }
  return MemRefType::get(
      shape, source.getElementType(),
      StridedLayoutAttr::get(source.getContext(), offset, newStrides),
      source.getMemorySpace());
}

/// Whether every use of `value`, given the strided type `type`, still
/// verifies once the views down the use chain take re-inferred types
/// (collected in `retypes`). The tx compute ops listed below accept strided
/// operands (retypeUses verifies them once retyped); anything else (yields,
/// returns, calls, container writes, opaque calls, ops added later) gets the
/// exact old type through a copy.
static bool collectRetypes(Value value, MemRefType type,
                           SmallVectorImpl<std::pair<Value, Type>> &retypes) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    FailureOr<MemRefType> next = failure();
    if (auto view = dyn_cast<ViewOp>(user))
      next = ViewOp::inferResultType(
          type, cast<MemRefType>(view.getType()).getShape());
    else if (auto slice = dyn_cast<SliceOp>(user))
      next = sliceType(type, slice.getDim(), slice.getOffset(),
                       slice.getSize());
    else if (auto transpose = dyn_cast<TransposeOp>(user))
      next = transposeType(type, transpose.getPermutation());
    else if (isa<AliasOp>(user))
      next = type;
    else if (isa<TxProjectionOpInterface, TxCollectiveOpInterface, UnaryOp,
                 BinaryOp, UnaryIntoOp, BinaryIntoOp, CopyOp, RMSNormOp,
                 AddRMSNormOp, LayerNormOp, RotaryOp, AttentionOp>(user))
      continue;
    else
      return false;
    if (failed(next))
      return false;
    Value result = user->getResult(0);
    retypes.push_back({result, *next});
    if (!collectRetypes(result, *next, retypes))
      return false;
  }
  return true;
}

/// Replaces the uses of `oldResult` by `slice` and retypes the views down
/// the use chains as `retypes` says, then verifies every op that uses a
/// value whose type changed: an op may tie an operand's type to another's
/// (tx.layernorm's bias to its weight: a slice at another offset, or a
/// contiguous parameter, has another layout). Where one does not verify,
/// everything is undone and false returned.
static bool retypeUses(Value oldResult, Value slice,
                       ArrayRef<std::pair<Value, Type>> retypes) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : oldResult.getUses())
    uses.push_back(&use);
  SmallVector<Type> oldTypes;
  for (auto &[value, type] : retypes)
    oldTypes.push_back(value.getType());
  oldResult.replaceAllUsesWith(slice);
  for (auto [value, type] : retypes)
    value.setType(type);
  SetVector<Operation *> users;
  for (OpOperand *use : uses)
    users.insert(use->getOwner());
  for (auto &[value, type] : retypes)
    for (Operation *user : value.getUsers())
      users.insert(user);
  bool ok = true;
  {
    // Failing candidates are expected: their diagnostics are not errors.
    ScopedDiagnosticHandler quiet(slice.getContext(),
                                  [](Diagnostic &) { return success(); });
    for (Operation *user : users)
      if (failed(verify(user, /*verifyRecursively=*/false))) {
        ok = false;
        break;
      }
  }
  if (ok)
    return true;
  for (auto [entry, type] : llvm::zip(retypes, oldTypes)) {
    Value value = entry.first;
    value.setType(type);
  }
  for (OpOperand *use : uses)
    use->set(oldResult);
  return false;
}

/// Replaces `oldResult` by `slice`, retyping views, or by a contiguous copy
/// of the slice made where the old result was produced.
static void replaceBySlice(OpBuilder &b, Value oldResult, Value slice) {
  SmallVector<std::pair<Value, Type>> retypes;
  if (collectRetypes(oldResult, cast<MemRefType>(slice.getType()), retypes) &&
      retypeUses(oldResult, slice, retypes))
    return;
  // One copy for all uses keeps the semantics of the original fresh buffer
  // exactly, whatever later writes go through which use.
  Location loc = slice.getLoc();
  auto oldType = cast<MemRefType>(oldResult.getType());
  SmallVector<Value> dynSizes;
  for (int64_t i = 0, e = oldType.getRank(); i < e; ++i)
    if (oldType.isDynamicDim(i))
      dynSizes.push_back(memref::DimOp::create(b, loc, slice, i));
  Value copy = memref::AllocOp::create(b, loc, oldType, dynSizes);
  CopyOp::create(b, loc, slice, copy);
  oldResult.replaceAllUsesWith(copy);
}

LinearOp tx::rewriteStackedLinears(FusionPlan &plan, StringRef name,
                                   ArrayRef<int64_t> heads,
                                   SymbolTable &symbols,
                                   StackedLinearAnalysis &analysis) {
  MLIRContext *ctx = plan.point.before->getContext();
  OpBuilder b(ctx);

  // The stacking map, in plan order; merged layers are flattened.
  SmallVector<Attribute> entries;
  SmallVector<int64_t> offsets;
  int64_t rows = 0;
  LayerOp anchor = plan.calls.front().layer;
  for (auto [i, c] : llvm::enumerate(plan.calls)) {
    if (c.layer->isBeforeInBlock(anchor))
      anchor = c.layer;
    offsets.push_back(rows);
    if (std::optional<ArrayAttr> stacking = c.layer.getStacking()) {
      for (auto e : stacking->getAsRange<StackEntryAttr>())
        entries.push_back(StackEntryAttr::get(
            ctx, e.getSource(), rows + e.getOffset(), e.getSize(),
            e.getHeads(), e.getUnknownHeads()));
    } else {
      // A negative count: made of heads, how many unknown.
      entries.push_back(StackEntryAttr::get(
          ctx, b.getStringAttr(c.layer.getCheckpointPrefix()), rows,
          c.layer.getOutFeatures(), std::max<int64_t>(heads[i], 0),
          heads[i] < 0));
    }
    rows += c.layer.getOutFeatures();
  }

  std::string unique = name.str();
  for (unsigned n = 1; symbols.lookup(unique); ++n)
    unique = (name + "_" + Twine(n)).str();
  LayerOp first = plan.calls.front().layer;
  auto merged = LayerOp::create(
      b, anchor.getLoc(), b.getStringAttr(unique),
      b.getI64IntegerAttr(first.getInFeatures()), b.getI64IntegerAttr(rows),
      TypeAttr::get(first.getDtype()), first.getBiasAttr(), StringAttr(),
      b.getArrayAttr(entries));
  // The layers stacked all store their checkpoint weights one way (the
  // analysis groups by it): so does the merged layer.
  if (first->hasAttr(kCheckpointTransposedAttrName))
    merged->setAttr(kCheckpointTransposedAttrName, b.getUnitAttr());
  symbols.insert(merged, anchor->getIterator());

  // One projection at the insertion point.
  SmallVector<Location> locs;
  for (StackedCall c : plan.calls)
    locs.push_back(c.call.getLoc());
  Location loc = b.getFusedLoc(locs);
  auto inType = cast<MemRefType>(plan.point.input.getType());
  SmallVector<int64_t> shape(inType.getShape());
  shape.back() = rows;
  auto resultType = MemRefType::get(shape, inType.getElementType(),
                                    MemRefLayoutAttrInterface(),
                                    inType.getMemorySpace());
  b.setInsertionPoint(plan.point.before);
  auto call = LinearOp::create(b, loc, resultType,
                               FlatSymbolRefAttr::get(merged.getSymNameAttr()),
                               plan.point.input);
  analysis.recordSymbolUser(merged.getSymNameAttr(), call);

  // Each original result becomes its slice of the merged output.
  int64_t lastDim = resultType.getRank() - 1;
  for (auto [i, c] : llvm::enumerate(plan.calls)) {
    b.setInsertionPoint(c.call);
    int64_t size = c.layer.getOutFeatures();
    if (c.call.getResult().use_empty()) {
      c.call.erase();
      continue;
    }
    auto slice = SliceOp::create(
        b, c.call.getLoc(), sliceType(resultType, lastDim, offsets[i], size),
        call.getResult(), b.getI64IntegerAttr(lastDim),
        b.getI64IntegerAttr(offsets[i]), b.getI64IntegerAttr(size));
    replaceBySlice(b, c.call.getResult(), slice);
    c.call.erase();
  }

  // The merged layers exist: their guards fold.
  for (LayerRefOp ref : plan.guardedRefs) {
    for (Operation *user : llvm::make_early_inc_range(ref->getUsers())) {
      auto guard = cast<GuardOp>(user);
      b.setInsertionPoint(guard);
      Value cst = arith::ConstantOp::create(b, guard.getLoc(),
                                            b.getBoolAttr(guard.evaluate(true)));
      guard.replaceAllUsesWith(cst);
      guard.erase();
    }
    ref.erase();
  }
  for (StackedCall c : plan.calls) {
    analysis.forgetSymbol(c.layer.getSymNameAttr());
    symbols.erase(c.layer);
  }
  return call;
}
