//===- SequenceParallel.cpp - the sequence-parallel rewrite ---------------===//
//
// all_reduce -> rmsnorm           (first layer: the sum is also the residual)
// all_reduce -> add_rmsnorm       (middle and last layers)
// become reduce_scatter -> norm on this rank's tokens -> all_gather, with the
// residual stream kept scattered from one norm to the next (vLLM's
// SequenceParallelismPass patterns, on buffers).
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Diagnostics.h"
#include "TxDialect/Transforms/SequenceParallel.h"

#include "SPUtils.h"
#include "TxDialect/Transforms/DecisionRemark.h"
#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXSEQUENCEPARALLEL
#include "TxDialect/Transforms/SPPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// An all-reduce whose sum a norm reads: the unit the pass rewrites.
struct Candidate {
  AllReduceOp allReduce;
  Operation *norm; // RMSNormOp or AddRMSNormOp
};

/// The first norm (in block order) reading `ar`'s result as its input.
Operation *findNormUser(AllReduceOp ar) {
  Operation *best = nullptr;
  for (OpOperand &use : ar.getResult().getUses()) {
    Operation *user = use.getOwner();
    bool isInput =
        (isa<RMSNormOp>(user) && use.getOperandNumber() == 0) ||
        (isa<AddRMSNormOp>(user) && use.getOperandNumber() == 0);
    if (!isInput || user->getBlock() != ar->getBlock())
      continue;
    if (!best || user->isBeforeInBlock(best))
      best = user;
  }
  return best;
}

SmallVector<Candidate> collectCandidates(func::FuncOp func) {
  SmallVector<Candidate> out;
  func.walk([&](AllReduceOp ar) {
    auto type = cast<MemRefType>(ar.getInput().getType());
    if (type.getRank() < 2)
      return;
    if (Operation *norm = findNormUser(ar))
      out.push_back({ar, norm});
  });
  return out;
}

/// `type` with the token dimension divided by `group` (dynamic stays
/// dynamic), contiguous.
MemRefType scatteredType(MemRefType type, int64_t group) {
  SmallVector<int64_t> shape(type.getShape());
  if (!ShapedType::isDynamic(shape[kTokenDim]))
    shape[kTokenDim] /= group;
  return MemRefType::get(shape, type.getElementType());
}

MemRefType gatheredType(MemRefType type, int64_t group) {
  SmallVector<int64_t> shape(type.getShape());
  if (!ShapedType::isDynamic(shape[kTokenDim]))
    shape[kTokenDim] *= group;
  return MemRefType::get(shape, type.getElementType());
}

/// Rewrites one function. `scattered` maps each full value whose token
/// slice exists to that slice; values still needed in full are gathered
/// once, before their first consumer.
class FunctionRewriter {
public:
  FunctionRewriter(func::FuncOp func, int64_t group)
      : func(func), group(group), b(func.getContext()) {}

  void rewrite(ArrayRef<Candidate> candidates);

private:
  Value getRank(Location loc);
  Value sliceResidual(Value residual, Value scatteredInput, Location loc);
  Value gatherBefore(Value local, Value full, Location loc);
  void rewriteRMSNorm(RMSNormOp norm, Value rs);
  void rewriteAddRMSNorm(AddRMSNormOp norm, Value rs);

  func::FuncOp func;
  int64_t group;
  OpBuilder b;
  Value rank;
  llvm::MapVector<Value, Value> scattered;
  llvm::SetVector<Operation *> dead;
};

Value FunctionRewriter::getRank(Location loc) {
  if (!rank) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&func.getBody().front());
    rank = RankOp::create(b, loc, b.getIndexType(), group).getResult();
  }
  return rank;
}

/// The rows of a replicated residual that this rank's reduce-scatter slice
/// covers: [rank * L, (rank + 1) * L) with L the local token count.
Value FunctionRewriter::sliceResidual(Value residual, Value scatteredInput,
                                      Location loc) {
  auto type = cast<MemRefType>(residual.getType());
  auto localType = cast<MemRefType>(scatteredInput.getType());
  Value r = getRank(loc);
  Value localLen;
  int64_t staticLen = localType.getDimSize(kTokenDim);
  if (ShapedType::isDynamic(staticLen))
    localLen = memref::DimOp::create(b, loc, scatteredInput, kTokenDim);
  else
    localLen = arith::ConstantIndexOp::create(b, loc, staticLen);
  Value offset = arith::MulIOp::create(b, loc, r, localLen);

  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  offsets[kTokenDim] = offset;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    if (i == kTokenDim) {
      sizes.push_back(ShapedType::isDynamic(staticLen)
                          ? OpFoldResult(localLen)
                          : OpFoldResult(b.getIndexAttr(staticLen)));
    } else if (type.isDynamicDim(i)) {
      sizes.push_back(memref::DimOp::create(b, loc, residual, i).getResult());
    } else {
      sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
    }
  }
  return memref::SubViewOp::create(b, loc, residual, offsets, sizes, strides)
      .getResult();
}

/// An all-gather of `local` placed right before the first consumer of
/// `full` in the same block (after `local` is defined), replacing `full`
/// in every use that survives the rewrite.
Value FunctionRewriter::gatherBefore(Value local, Value full, Location loc) {
  Operation *localDef = local.getDefiningOp();
  Block *block = localDef->getBlock();
  Operation *first = nullptr;
  bool allInBlock = true;
  for (Operation *user : full.getUsers()) {
    if (dead.contains(user))
      continue;
    Operation *anc = block->findAncestorOpInBlock(*user);
    if (!anc) {
      allInBlock = false;
      continue;
    }
    if (!first || anc->isBeforeInBlock(first))
      first = anc;
  }
  if (!first && allInBlock)
    return Value(); // nothing reads it in full
  OpBuilder::InsertionGuard g(b);
  if (first && allInBlock && localDef->isBeforeInBlock(first))
    b.setInsertionPoint(first);
  else
    b.setInsertionPointAfter(localDef);
  auto type = cast<MemRefType>(local.getType());
  Value gathered = AllGatherOp::create(b, loc, gatheredType(type, group),
                                       local, kTokenDim, group)
                       .getResult();
  full.replaceUsesWithIf(gathered, [&](OpOperand &use) {
    return !dead.contains(use.getOwner());
  });
  return gathered;
}

void FunctionRewriter::rewriteRMSNorm(RMSNormOp norm, Value rs) {
  b.setInsertionPoint(norm);
  auto local = RMSNormOp::create(b, norm.getLoc(), rs.getType(), rs,
                                 norm.getWeight(), norm.getEpsilonAttr(),
                                 norm.getWeightOffsetAttr());
  gatherBefore(local.getResult(), norm.getResult(), norm.getLoc());
}

void FunctionRewriter::rewriteAddRMSNorm(AddRMSNormOp norm, Value rs) {
  b.setInsertionPoint(norm);
  Value residual = norm.getResidual();
  Value localResidual = scattered.lookup(residual);
  if (!localResidual)
    localResidual = sliceResidual(residual, rs, norm.getLoc());
  auto local = AddRMSNormOp::create(
      b, norm.getLoc(), rs.getType(), rs.getType(), rs, localResidual,
      norm.getWeight(), norm.getEpsilonAttr(), norm.getWeightOffsetAttr());
  gatherBefore(local.getResult(), norm.getResult(), norm.getLoc());
  scattered[norm.getResidualOut()] = local.getResidualOut();
}

void FunctionRewriter::rewrite(ArrayRef<Candidate> candidates) {
  for (const Candidate &c : candidates) {
    AllReduceOp ar = c.allReduce;
    b.setInsertionPoint(ar);
    auto inType = cast<MemRefType>(ar.getInput().getType());
    Value rs = ReduceScatterOp::create(b, ar.getLoc(),
                                       scatteredType(inType, group),
                                       ar.getInput(), kTokenDim, group)
                   .getResult();
    dead.insert(c.norm);
    if (auto norm = dyn_cast<RMSNormOp>(c.norm)) {
      // First layer: the all-reduced value is the residual from here on.
      rewriteRMSNorm(norm, rs);
      scattered[ar.getResult()] = rs;
    } else {
      rewriteAddRMSNorm(cast<AddRMSNormOp>(c.norm), rs);
    }
    dead.insert(ar);
  }
  // Whatever still needs a scattered value in full (a return, a residual
  // add that is not a norm, a norm in another block) gets it gathered.
  for (auto [full, local] : scattered) {
    bool needed = llvm::any_of(full.getUsers(), [&](Operation *user) {
      return !dead.contains(user);
    });
    if (needed)
      gatherBefore(local, full, full.getLoc());
  }
  for (Operation *op : llvm::reverse(dead)) {
    op->dropAllUses();
    op->erase();
  }
}

/// The candidates of `func` the rewrite applies to: static token counts at
/// or above `threshold` and divisible by `tp` (others get a remark of the
/// pass `remarksFor` unless it is empty), and dynamic ones when
/// `includeDynamic`. `dynamic` says whether there were any dynamic ones.
SmallVector<Candidate> selectCandidates(func::FuncOp func, int64_t threshold,
                                        int64_t tp, StringRef remarksFor,
                                        bool includeDynamic, bool &dynamic) {
  bool remarks = !remarksFor.empty();
  SmallVector<Candidate> applicable;
  dynamic = false;
  for (Candidate c : collectCandidates(func)) {
    int64_t tokens = cast<MemRefType>(c.allReduce.getInput().getType())
                         .getDimSize(kTokenDim);
    if (ShapedType::isDynamic(tokens)) {
      dynamic = true;
      if (includeDynamic)
        applicable.push_back(c);
      continue;
    }
    if (tokens < threshold) {
      if (remarks)
        DecisionRemark(c.allReduce, DecisionKind::Missed, "NotSequenceParallel",
                       remarksFor)
            << "not sequence-parallel: " << tokens
            << " tokens is below sp_min_tokens " << threshold;
      continue;
    }
    if (tokens % tp != 0) {
      if (remarks)
        DecisionRemark(c.allReduce, DecisionKind::Missed, "NotSequenceParallel",
                       remarksFor)
            << "not sequence-parallel: " << tokens
            << " tokens is not divisible by tp_size " << tp;
      continue;
    }
    applicable.push_back(c);
  }
  return applicable;
}

struct SequenceParallelPass
    : public tx::impl::TxSequenceParallelBase<SequenceParallelPass> {
  void runOnOperation() override;
  LogicalResult versionFunction(func::FuncOp func, int64_t threshold,
                                SymbolTable &symbols);
};

/// The first argument whose leading dimension is dynamic: the token count
/// the versioned function dispatches on.
std::optional<unsigned> tokenCountArgument(func::FuncOp func) {
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto m = dyn_cast<MemRefType>(type);
    if (m && m.getRank() >= 2 && m.isDynamicDim(kTokenDim))
      return i;
  }
  return std::nullopt;
}

} // namespace

/// @f becomes `scf.if (T >= threshold && T % tp == 0) { call @f_sp } else
/// { original body }` and @f_sp is the rewritten copy.
LogicalResult SequenceParallelPass::versionFunction(func::FuncOp func,
                                                    int64_t threshold,
                                                    SymbolTable &symbols) {
  int64_t tp = getCompileConfig(func).getTpSize();
  std::optional<unsigned> tokenArg = tokenCountArgument(func);
  if (!tokenArg)
    return func.emitError()
           << "has a dynamic token count but no argument with a dynamic "
              "leading (token) dimension to version on";
  if (!func.getBody().hasOneBlock() ||
      !isa<func::ReturnOp>(func.getBody().front().getTerminator()))
    return func.emitError() << "has a dynamic token count; versioning it "
                               "needs a single-block body";

  func::FuncOp spFunc = func.clone();
  spFunc.setName((func.getName() + "_sp").str());
  spFunc.setPrivate();
  symbols.insert(spFunc, std::next(Block::iterator(func)));
  bool dynamic;
  FunctionRewriter(spFunc, tp)
      .rewrite(selectCandidates(spFunc, threshold, tp, /*remarksFor=*/"",
                                /*includeDynamic=*/true, dynamic));

  Block &oldBody = func.getBody().front();
  Location loc = func.getLoc();
  auto *entry = new Block();
  func.getBody().push_front(entry);
  for (BlockArgument arg : oldBody.getArguments())
    entry->addArgument(arg.getType(), arg.getLoc());
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  Value tokens = memref::DimOp::create(b, loc, entry->getArgument(*tokenArg),
                                       kTokenDim);
  Value thr = arith::ConstantIndexOp::create(b, loc, threshold);
  Value tpVal = arith::ConstantIndexOp::create(b, loc, tp);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value big = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tokens,
                                    thr);
  Value rem = arith::RemUIOp::create(b, loc, tokens, tpVal);
  Value divisible =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem, zero);
  Value useSP = arith::AndIOp::create(b, loc, big, divisible);
  TypeRange results = func.getResultTypes();
  auto ifOp = scf::IfOp::create(b, loc, results, useSP, /*withElse=*/true);

  OpBuilder thenB = ifOp.getThenBodyBuilder();
  auto call = func::CallOp::create(thenB, loc, spFunc,
                                   ValueRange(entry->getArguments()));
  if (results.empty()) {
    // Builder already added the terminator.
  } else {
    scf::YieldOp::create(thenB, loc, call.getResults());
  }

  Block *elseBlock = ifOp.elseBlock();
  if (!elseBlock->empty())
    elseBlock->getTerminator()->erase();
  for (auto [oldArg, newArg] :
       llvm::zip(oldBody.getArguments(), entry->getArguments()))
    oldArg.replaceAllUsesWith(newArg);
  elseBlock->getOperations().splice(elseBlock->end(),
                                    oldBody.getOperations());
  auto ret = cast<func::ReturnOp>(elseBlock->getTerminator());
  OpBuilder eb(ret);
  scf::YieldOp::create(eb, ret.getLoc(), ret.getOperands());
  ret.erase();
  oldBody.erase();

  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc, ifOp.getResults());
  // At the function's location, without the whole function as a note.
  DecisionRemark(func, DecisionKind::Analysis, "Versioned", getArgument())
      << "versioned by token count: @" << spFunc.getName()
      << " (sequence parallel) when tokens >= " << threshold
      << " and divisible by " << tp << ", the original body otherwise";
  return success();
}

void SequenceParallelPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<CompileConfigAttr> gate = getEnabledFullGraphConfig(
      module, SPFeature::SequenceParallel, getArgument());
  if (failed(gate))
    return signalPassFailure();
  CompileConfigAttr config = *gate;
  if (!config)
    return;
  int64_t tp = config.getTpSize();
  if (tp < 2) {
    emitErrorAt(module) << "sequence_parallel with tp_size " << tp
                       << " has nothing to scatter; run tx-finalize-config";
    return signalPassFailure();
  }
  int64_t threshold = config.getSpMinTokens().value_or(0);

  SymbolTable symbols(module);
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  for (func::FuncOp func : funcs) {
    if (func.isExternal())
      continue;
    bool dynamic;
    SmallVector<Candidate> applicable =
        selectCandidates(func, threshold, tp, getArgument(),
                         /*includeDynamic=*/false, dynamic);
    if (dynamic) {
      if (failed(versionFunction(func, threshold, symbols)))
        return signalPassFailure();
      continue;
    }
    FunctionRewriter(func, tp).rewrite(applicable);
  }
}
