//===- TxAliasAnalysis.cpp - alias and effect facts for tx rewrites -------===//

#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>

using namespace mlir;
using namespace mlir::tx;

//===----------------------------------------------------------------------===//
// Identity of buffers
//===----------------------------------------------------------------------===//

/// The source of `value` when `value` is a view that shows exactly the same
/// elements under the same layout, else null.
static Value identityViewSource(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return {};
  if (auto alias = dyn_cast<AliasOp>(def))
    return alias.getSource();
  if (auto cast = dyn_cast<memref::CastOp>(def))
    return cast.getSource().getType() == value.getType() ? cast.getSource()
                                                         : Value();
  if (auto transpose = dyn_cast<TransposeOp>(def)) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    for (auto [i, p] : llvm::enumerate(perm))
      if (static_cast<int64_t>(i) != p)
        return {};
    return transpose.getSource().getType() == value.getType()
               ? transpose.getSource()
               : Value();
  }
  if (auto view = dyn_cast<ViewOp>(def)) {
    // Same type, and at most one dynamic dimension: the element count then
    // fixes that dimension to the source's.
    auto type = dyn_cast<MemRefType>(value.getType());
    if (type && view.getSource().getType() == type &&
        type.getNumDynamicDims() <= 1)
      return view.getSource();
  }
  return {};
}

static Value stripIdentityViews(Value value) {
  while (Value source = identityViewSource(value))
    value = source;
  return value;
}

/// Whether `a` and `b` always hold the same value: the same SSA value, or
/// results (same index) of two side-effect-free, region-free ops that are
/// equivalent with operands that are the same values. `depth` bounds the
/// recursion.
static bool isSameValue(Value a, Value b, unsigned depth) {
  if (isa<BaseMemRefType>(a.getType()) || isa<BaseMemRefType>(b.getType())) {
    a = stripIdentityViews(a);
    b = stripIdentityViews(b);
  }
  if (a == b)
    return true;
  if (depth == 0 || a.getType() != b.getType())
    return false;
  auto ra = dyn_cast<OpResult>(a), rb = dyn_cast<OpResult>(b);
  if (!ra || !rb || ra.getResultNumber() != rb.getResultNumber())
    return false;
  Operation *opA = ra.getOwner(), *opB = rb.getOwner();
  if (opA->getNumRegions() || opB->getNumRegions() ||
      !isMemoryEffectFree(opA) || !isMemoryEffectFree(opB))
    return false;
  // A memref result must come from a view op: a pure op creating a buffer
  // (none should exist) would give two distinct buffers.
  if (isa<BaseMemRefType>(a.getType()) && !isa<ViewLikeOpInterface>(opA))
    return false;
  return OperationEquivalence::isEquivalentTo(
      opA, opB,
      [&](Value x, Value y) {
        return success(isSameValue(x, y, depth - 1));
      },
      /*markEquivalent=*/nullptr,
      OperationEquivalence::IgnoreLocations |
          OperationEquivalence::IgnoreDiscardableAttrs);
}

bool tx::isSameBuffer(Value a, Value b) { return isSameValue(a, b, 8); }

//===----------------------------------------------------------------------===//
// Disjoint views
//===----------------------------------------------------------------------===//

namespace {
/// The elements a view shows, as a box of index ranges in the identity-
/// layout buffer it is a view of: [lo[d], hi[d]) for each root dimension d.
struct IndexBox {
  Value root;
  SmallVector<int64_t> lo, hi;
};
} // namespace

static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

/// The box `value` covers in its root, when every view between them is a
/// rank-preserving unit-stride slice with static offsets (tx.slice, a static
/// memref.subview), a transpose or an identity view; failure otherwise.
static FailureOr<IndexBox> indexBox(Value value) {
  SmallVector<Operation *> chain;
  Value root = value;
  while (true) {
    if (Value source = identityViewSource(root)) {
      root = source;
      continue;
    }
    Operation *def = root.getDefiningOp();
    if (!def || !isa<SliceOp, TransposeOp, memref::SubViewOp>(def))
      break;
    chain.push_back(def);
    root = def->getOperand(0);
  }
  auto rootType = dyn_cast<MemRefType>(root.getType());
  if (!rootType || !rootType.getLayout().isIdentity())
    return failure();

  IndexBox box{root, {}, {}};
  int64_t rank = rootType.getRank();
  box.lo.assign(rank, 0);
  box.hi.assign(rank, kUnbounded);
  for (int64_t d = 0; d < rank; ++d)
    if (!rootType.isDynamicDim(d))
      box.hi[d] = rootType.getDimSize(d);
  // dims[i]: the root dimension the current view's dimension i walks, with
  // unit stride from box.lo of that dimension.
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  auto narrow = [&](int64_t viewDim, int64_t offset, int64_t size) {
    int64_t d = dims[viewDim];
    if (offset < 0 || size < 0 || box.lo[d] > kUnbounded - offset)
      return failure();
    box.lo[d] += offset;
    int64_t end = box.lo[d] > kUnbounded - size ? kUnbounded : box.lo[d] + size;
    box.hi[d] = std::min(box.hi[d], end);
    return success();
  };
  for (Operation *op : llvm::reverse(chain)) {
    if (auto slice = dyn_cast<SliceOp>(op)) {
      if (static_cast<int64_t>(slice.getDim()) >= rank ||
          failed(narrow(slice.getDim(), slice.getOffset(), slice.getSize())))
        return failure();
    } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
      ArrayRef<int64_t> perm = transpose.getPermutation();
      if (static_cast<int64_t>(perm.size()) != rank)
        return failure();
      SmallVector<int64_t> permuted;
      for (int64_t p : perm) {
        if (p < 0 || p >= rank)
          return failure();
        permuted.push_back(dims[p]);
      }
      dims = std::move(permuted);
    } else {
      auto subview = cast<memref::SubViewOp>(op);
      ArrayRef<int64_t> offsets = subview.getStaticOffsets();
      ArrayRef<int64_t> sizes = subview.getStaticSizes();
      ArrayRef<int64_t> strides = subview.getStaticStrides();
      if (subview.getType().getRank() != rank ||
          static_cast<int64_t>(offsets.size()) != rank)
        return failure();
      for (int64_t i = 0; i < rank; ++i) {
        if (ShapedType::isDynamic(offsets[i]) || strides[i] != 1)
          return failure();
        // A dynamic size only leaves the end open.
        int64_t size = ShapedType::isDynamic(sizes[i]) ? kUnbounded : sizes[i];
        if (failed(narrow(i, offsets[i], size)))
          return failure();
      }
    }
  }
  return box;
}

/// Whether `lhs` and `rhs` are views of one identity-layout buffer whose
/// index boxes do not overlap in some dimension.
static bool provablyDisjoint(Value lhs, Value rhs) {
  FailureOr<IndexBox> a = indexBox(lhs);
  if (failed(a))
    return false;
  FailureOr<IndexBox> b = indexBox(rhs);
  if (failed(b) || a->root != b->root)
    return false;
  for (size_t d = 0; d < a->lo.size(); ++d)
    if (a->hi[d] <= b->lo[d] || b->hi[d] <= a->lo[d])
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Alias queries
//===----------------------------------------------------------------------===//

Value tx::getViewRoot(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>()) {
    if (view.getViewDest() != value)
      break;
    value = view.getViewSource();
  }
  return value;
}

/// Whether `value` is the result of an allocation (memref.alloc, alloca).
static bool isFreshAllocation(Value value) {
  auto effects = value.getDefiningOp<MemoryEffectOpInterface>();
  return effects &&
         effects.getEffectOnValue<MemoryEffects::Allocate>(value).has_value();
}

AliasResult TxAliasAnalysis::alias(Value lhs, Value rhs) {
  // A container's slots hold references to buffers, not tensor storage.
  bool lhsContainer = isa<ContainerType>(lhs.getType());
  bool rhsContainer = isa<ContainerType>(rhs.getType());
  if (lhsContainer != rhsContainer &&
      (isa<BaseMemRefType>(lhs.getType()) || isa<BaseMemRefType>(rhs.getType())))
    return AliasResult::NoAlias;
  if (unsafe.trustMustAlias)
    return LocalAliasAnalysis::alias(lhs, rhs);
  if (isSameBuffer(lhs, rhs))
    return AliasResult::MustAlias;
  if (provablyDisjoint(lhs, rhs))
    return AliasResult::NoAlias;
  AliasResult result = LocalAliasAnalysis::alias(lhs, rhs);
  // Upstream's MustAlias means "one underlying allocation"; the views may
  // still show different elements.
  return result.isMust() ? AliasResult::MayAlias : result;
}

AliasResult TxAliasAnalysis::aliasImpl(Value lhs, Value rhs) {
  // Upstream asks this of the underlying values (view roots, region branch
  // operands) of the two values. A fresh allocation is disjoint from a
  // module global (weights, norm parameters after lowering): upstream
  // answers MayAlias, as it knows nothing of what a get_global returns.
  Value lhsRoot = getViewRoot(lhs), rhsRoot = getViewRoot(rhs);
  if ((isFreshAllocation(lhsRoot) &&
       rhsRoot.getDefiningOp<memref::GetGlobalOp>()) ||
      (isFreshAllocation(rhsRoot) &&
       lhsRoot.getDefiningOp<memref::GetGlobalOp>()))
    return AliasResult::NoAlias;
  return LocalAliasAnalysis::aliasImpl(lhs, rhs);
}

//===----------------------------------------------------------------------===//
// Mod/ref queries
//===----------------------------------------------------------------------===//

ModRefResult TxAliasAnalysis::getOwnModRef(Operation *op, Value location) {
  bool recursive = op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface || (recursive && unsafe.ignoreRecursiveOpsOwnEffects))
    return recursive ? ModRefResult::getNoModRef()
                     : ModRefResult::getModAndRef();
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  ModRefResult result = ModRefResult::getNoModRef();
  for (const MemoryEffects::EffectInstance &effect : effects) {
    if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(effect.getEffect()))
      continue;
    // An effect on a resource without a value (or on a symbol) may touch
    // any buffer.
    if (Value value = effect.getValue())
      if (alias(value, location).isNo())
        continue;
    result = result.merge(isa<MemoryEffects::Read>(effect.getEffect())
                              ? ModRefResult::getRef()
                              : ModRefResult::getMod());
    if (result.isModAndRef())
      break;
  }
  return result;
}

ModRefResult TxAliasAnalysis::getModRef(Operation *op, Value location) {
  ModRefResult result = ModRefResult::getNoModRef();
  op->walk([&](Operation *nested) {
    result = result.merge(getOwnModRef(nested, location));
    return result.isModAndRef() ? WalkResult::interrupt()
                                : WalkResult::advance();
  });
  return result;
}
