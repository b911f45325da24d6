//===- Containers.cpp - tx.container_* as calls of a container runtime ---===//
//
// A `!tx.container` (a Python dict or list such as `shared_kv_states`)
// becomes an opaque pointer (`!llvm.ptr`) to a container object that the
// caller owns and that outlives the call (the runner keeps one per container
// argument across calls). Its ops become calls of the host's container
// runtime (TxToLinalg.h, kContainer*FunctionName):
//
//  * `tx.container_set %c[%i] = %k, %v` replaces entry %i by copies of the
//    buffers as they are at the write (strided views are copied element by
//    element);
//  * `%k, %v = tx.container_get %c[%i]` asks the runtime for the stored
//    sizes (the runtime checks that entry %i was set, holds as many values as
//    the op reads, of its element type, rank and static sizes: a mismatch
//    ends the call with an error naming the op), allocates fresh buffers of
//    the op's result types and has the runtime copy into them.
//
// Copies, not references: PyTorch's dict holds the tensors themselves, so a
// write to a tensor after it was stored, or to a tensor read back, would be
// seen through the dict there and not here. Such a program is rejected
// before anything is lowered (an error at the write, a note at the container
// op), so that whatever runs gives PyTorch's numbers.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/Diagnostics.h"
#include "TxDialect/TxOps.h"

#include "mlir/IR/Dominance.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::detail;

/// The element type codes of the container runtime.
static std::optional<int64_t> elementCode(Type t) {
  if (t.isF32())
    return 0;
  if (t.isF16())
    return 1;
  if (t.isBF16())
    return 2;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Copy semantics must agree with PyTorch's reference semantics
//===----------------------------------------------------------------------===//

/// Whether `later` may run after `op`: it comes after it in the function's
/// text and not in a branch exclusive with it, or both are in one loop.
static bool mayRunAfter(Operation *later, Operation *op,
                        const llvm::DenseMap<Operation *, unsigned> &order) {
  if (order.lookup(later) > order.lookup(op) &&
      !insideMutuallyExclusiveRegions(later, op))
    return true;
  for (auto loop = op->getParentOfType<LoopLikeOpInterface>(); loop;
       loop = loop->getParentOfType<LoopLikeOpInterface>())
    if (loop->isProperAncestor(later))
      return true;
  return false;
}

/// Whether `v` is (a view of) a buffer its defining op allocates.
static bool isFreshAllocation(Value v) {
  Value root = getViewRoot(v);
  Operation *def = root.getDefiningOp();
  return def && hasEffect<MemoryEffects::Allocate>(def, root);
}

/// Whether `op` may write `buffer` by its own effects. A write to a result
/// the op allocates is to a fresh buffer, never `buffer`; nor is a write to
/// another allocation when `buffer` is one read from a container (a copy
/// the lowering allocates), nor to a buffer allocated after `containerOp`
/// (which `buffer` was stored by or read from): nothing is freed at this
/// level, so a new allocation is apart from every buffer that exists.
static bool mayWrite(Operation *op, Value buffer, Operation *containerOp,
                     DominanceInfo &dom, TxAliasAnalysis &aa) {
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface)
    return true;
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  auto allocates = [&](Value v) {
    return llvm::any_of(effects, [&](const auto &e) {
      return e.getValue() == v && isa<MemoryEffects::Allocate>(e.getEffect());
    });
  };
  for (const MemoryEffects::EffectInstance &e : effects) {
    if (!isa<MemoryEffects::Write>(e.getEffect()))
      continue;
    Value v = e.getValue();
    if (!v)
      return true;
    if (isa<OpResult>(v) && v.getDefiningOp() == op && allocates(v))
      continue;
    Value root = getViewRoot(buffer);
    if (root.getDefiningOp<ContainerGetOp>() && getViewRoot(v) != root &&
        (isFreshAllocation(v) || getViewRoot(v).getDefiningOp<ContainerGetOp>()))
      continue;
    if (isFreshAllocation(v) &&
        dom.properlyDominates(containerOp, getViewRoot(v).getDefiningOp()))
      continue;
    if (!aa.alias(v, buffer).isNo())
      return true;
  }
  return false;
}

/// Rejects a write, after a container op, to a buffer the container copied
/// (`tx.container_set`'s values) or that was copied out of it
/// (`tx.container_get`'s results).
static LogicalResult checkNoWritesAfter(FunctionOpInterface func) {
  llvm::DenseMap<Operation *, unsigned> order;
  SmallVector<Operation *> leaves;
  // Every op that may write on its own: ops without regions, and ops with
  // regions that declare effects of their own (a linalg.fill, generic or
  // copy writes its init) or whose effects are unknown; the ops nested in
  // a region op with recursive effects are checked one by one.
  func->walk<WalkOrder::PreOrder>([&](Operation *op) {
    order[op] = order.size();
    if (op != func &&
        (op->getNumRegions() == 0 || isa<MemoryEffectOpInterface>(op) ||
         !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()))
      leaves.push_back(op);
  });
  TxAliasAnalysis aa;
  DominanceInfo dom(func);
  bool failed = false;
  auto check = [&](Operation *containerOp, Value buffer, StringRef what) {
    for (Operation *op : leaves) {
      if (isa<ContainerSetOp, ContainerGetOp>(op) ||
          !mayRunAfter(op, containerOp, order) ||
          !mayWrite(op, buffer, containerOp, dom, aa))
        continue;
      InFlightDiagnostic diag = emitErrorAt(op);
      diag << "may write a buffer " << what
           << ": tx containers hold copies, a PyTorch container holds the "
              "tensor itself (it would see the write)";
      diag.attachNote(containerOp->getLoc())
          << "the '" << containerOp->getName() << "' here";
      failed = true;
      return;
    }
  };
  func->walk([&](Operation *op) {
    if (auto set = dyn_cast<ContainerSetOp>(op))
      for (Value v : set.getValues())
        check(set, v, "stored into a container");
    else if (auto get = dyn_cast<ContainerGetOp>(op))
      for (Value v : get.getValues())
        check(get, v, "read from a container");
  });
  return failure(failed);
}

//===----------------------------------------------------------------------===//
// The lowering
//===----------------------------------------------------------------------===//

namespace {
struct ContainerLowering {
  ModuleOp module;
  bool swapGet;
  Type ptrType, i64;
  /// Messages of the checks the calls carry (appended to the module's
  /// runtime-check table).
  SmallVector<Attribute> messages;
  int64_t firstCheck = 0;

  ContainerLowering(ModuleOp module, bool swapGet)
      : module(module), swapGet(swapGet) {
    MLIRContext *ctx = module.getContext();
    ptrType = LLVM::LLVMPointerType::get(ctx);
    i64 = IntegerType::get(ctx, 64);
    if (auto table =
            module->getAttrOfType<ArrayAttr>(kRuntimeChecksAttrName))
      firstCheck = table.size();
  }

  Value constI64(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  }
  Value toI64(OpBuilder &b, Location loc, Value index) {
    return arith::IndexCastOp::create(b, loc, i64, index);
  }
  /// The buffer's aligned pointer as an i64.
  Value pointerOf(OpBuilder &b, Location loc, Value buffer) {
    return toI64(b, loc,
                 memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer));
  }
  /// A check number whose message is "'op' at loc: container (...) index
  /// {0}" (the runtime adds what went wrong).
  Value check(OpBuilder &b, Operation *op, Value originalContainer) {
    std::string text = "'" + op->getName().getStringRef().str() + "' at " +
                       shortLocation(op->getLoc()) + ": " +
                       describeOperand("container", originalContainer) +
                       " index {0}";
    messages.push_back(b.getStringAttr(text));
    return constI64(b, op->getLoc(), firstCheck + messages.size() - 1);
  }

  LogicalResult lowerSet(ContainerSetOp set, Value container) {
    OpBuilder b(set);
    Location loc = set.getLoc();
    Value checkId = check(b, set, set.getContainer());
    Value index = toI64(b, loc, set.getIndex());
    Value count = constI64(b, loc, set.getValues().size());
    for (auto [slot, value] : llvm::enumerate(set.getValues())) {
      auto type = cast<MemRefType>(value.getType());
      std::optional<int64_t> code = elementCode(type.getElementType());
      if (!code)
        return set.emitOpError("cannot be lowered: value #")
               << slot << " has element type " << type.getElementType()
               << "; containers hold f32, f16 and bf16 buffers";
      int64_t rank = type.getRank();
      // [offset, sizes..., strides...] in a stack buffer.
      auto metaType = MemRefType::get({1 + 2 * rank}, i64);
      Value meta = memref::AllocaOp::create(b, loc, metaType);
      auto md = memref::ExtractStridedMetadataOp::create(b, loc, value);
      auto store = [&](Value v, int64_t at) {
        memref::StoreOp::create(
            b, loc, toI64(b, loc, v), meta,
            ValueRange{arith::ConstantIndexOp::create(b, loc, at)});
      };
      store(md.getOffset(), 0);
      for (int64_t d = 0; d < rank; ++d) {
        store(md.getSizes()[d], 1 + d);
        store(md.getStrides()[d], 1 + rank + d);
      }
      func::CallOp::create(
          b, loc, kContainerSetFunctionName, TypeRange{},
          ValueRange{container, checkId, index, constI64(b, loc, slot), count,
                     constI64(b, loc, *code), constI64(b, loc, rank),
                     pointerOf(b, loc, value), pointerOf(b, loc, meta)});
    }
    set.erase();
    return success();
  }

  LogicalResult lowerGet(ContainerGetOp get, Value container) {
    OpBuilder b(get);
    Location loc = get.getLoc();
    Value checkId = check(b, get, get.getContainer());
    Value index = toI64(b, loc, get.getIndex());
    int64_t n = get.getValues().size();
    Value count = constI64(b, loc, n);
    SmallVector<Value> results;
    for (auto [i, result] : llvm::enumerate(get.getValues())) {
      auto type = cast<MemRefType>(result.getType());
      std::optional<int64_t> code = elementCode(type.getElementType());
      if (!code || !type.getLayout().isIdentity())
        return get.emitOpError("cannot be lowered: result #")
               << i << " has type " << type
               << "; containers give identity-layout f32, f16 and bf16 "
                  "buffers";
      // Testing only: the values read in reverse order (k for v).
      int64_t slot = swapGet ? n - 1 - i : i;
      int64_t rank = type.getRank();
      // The op's sizes (-1: dynamic) in, the stored sizes out.
      auto metaType = MemRefType::get({std::max<int64_t>(rank, 1)}, i64);
      Value meta = memref::AllocaOp::create(b, loc, metaType);
      for (int64_t d = 0; d < rank; ++d)
        memref::StoreOp::create(
            b, loc,
            constI64(b, loc, type.isDynamicDim(d) ? -1 : type.getDimSize(d)),
            meta, ValueRange{arith::ConstantIndexOp::create(b, loc, d)});
      Value slotValue = constI64(b, loc, slot);
      func::CallOp::create(
          b, loc, kContainerGetFunctionName, TypeRange{},
          ValueRange{container, checkId, index, slotValue, count,
                     constI64(b, loc, *code), constI64(b, loc, rank),
                     pointerOf(b, loc, meta)});
      SmallVector<Value> dynSizes;
      for (int64_t d = 0; d < rank; ++d)
        if (type.isDynamicDim(d)) {
          Value size = memref::LoadOp::create(
              b, loc, meta,
              ValueRange{arith::ConstantIndexOp::create(b, loc, d)});
          dynSizes.push_back(arith::IndexCastOp::create(
              b, loc, b.getIndexType(), size));
        }
      Value buffer = memref::AllocOp::create(b, loc, type, dynSizes);
      func::CallOp::create(b, loc, kContainerReadFunctionName, TypeRange{},
                           ValueRange{container, index, slotValue,
                                      pointerOf(b, loc, buffer)});
      results.push_back(buffer);
    }
    get.replaceAllUsesWith(results);
    get.erase();
    return success();
  }

  void declare(StringRef name, unsigned numI64) {
    if (module.lookupSymbol(name))
      return;
    OpBuilder b(module.getContext());
    b.setInsertionPointToStart(module.getBody());
    SmallVector<Type> inputs{ptrType};
    inputs.append(numI64, i64);
    auto decl = func::FuncOp::create(b, module.getLoc(), name,
                                     b.getFunctionType(inputs, {}));
    decl.setPrivate();
  }
};
} // namespace

LogicalResult tx::detail::lowerTxContainers(ModuleOp module, bool swapGet) {
  bool any = false;
  module.walk([&](Operation *op) {
    if (isa<ContainerSetOp, ContainerGetOp>(op))
      any = true;
  });
  bool failed = false;
  module.walk([&](FunctionOpInterface func) {
    if (any && ::failed(checkNoWritesAfter(func)))
      failed = true;
  });
  if (failed)
    return failure();

  ContainerLowering lowering(module, swapGet);
  // Container arguments become pointers (in place: the ops below read the
  // new values).
  auto isContainer = [](Type t) { return isa<ContainerType>(t); };
  for (auto func : module.getOps<func::FuncOp>()) {
    FunctionType ft = func.getFunctionType();
    if (llvm::any_of(ft.getResults(), isContainer)) {
      emitErrorAt(func) << "cannot be lowered: function '" << func.getName()
                        << "' returns a container";
      return failure();
    }
    if (!llvm::any_of(ft.getInputs(), isContainer))
      continue;
    SmallVector<Type> inputs(ft.getInputs());
    for (Type &t : inputs)
      if (isContainer(t))
        t = lowering.ptrType;
    func.setFunctionType(FunctionType::get(module.getContext(), inputs,
                                           ft.getResults()));
    if (!func.isExternal())
      for (BlockArgument arg : func.getArguments())
        if (isContainer(arg.getType()))
          arg.setType(lowering.ptrType);
  }

  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<ContainerSetOp, ContainerGetOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    // The container operand is the pointer now (a function argument); the
    // messages still describe it as the argument it was.
    Value container = op->getOperand(0);
    if (!isa<LLVM::LLVMPointerType>(container.getType())) {
      op->emitOpError("cannot be lowered: its container is not a function "
                      "argument");
      return failure();
    }
    LogicalResult lowered =
        isa<ContainerSetOp>(op) ? lowering.lowerSet(cast<ContainerSetOp>(op),
                                                    container)
                                : lowering.lowerGet(cast<ContainerGetOp>(op),
                                                    container);
    if (::failed(lowered))
      return failure();
  }
  if (lowering.messages.empty())
    return success();
  SmallVector<Attribute> table;
  if (auto existing = module->getAttrOfType<ArrayAttr>(kRuntimeChecksAttrName))
    table.append(existing.begin(), existing.end());
  table.append(lowering.messages);
  module->setAttr(kRuntimeChecksAttrName,
                  ArrayAttr::get(module.getContext(), table));
  lowering.declare(kContainerSetFunctionName, 8);
  lowering.declare(kContainerGetFunctionName, 7);
  lowering.declare(kContainerReadFunctionName, 3);
  return success();
}
