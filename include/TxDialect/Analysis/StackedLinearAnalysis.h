//===- StackedLinearAnalysis.h - checks shared by every fuser ---*- C++ -*-===//
//
// The one mechanism behind every stacked-linear fuser (QKV, MLA, GLU,
// merged-column), after vLLM's StackedFuser (`_unguarded_calls`,
// `_check_input_stable`), on IR instead of Python source:
//
//   1. findSiblingGroups: projections of one input (the same buffer:
//      isSameBuffer, never mere MustAlias), same in-features, element type
//      and bias;
//   2. checkSingleCalls: each layer is called once, every other reference is
//      a foldable existence guard;
//   3. findInsertionPoint: nearest common dominator block of the calls,
//      before the first op that is or contains a call; no call in a loop the
//      merged projection would be hoisted out of: a loop op, a repetitive
//      region, a region of unknown semantics, or a CFG cycle of blocks;
//   4. inputIsStable: nothing that may run between the insertion point and
//      the last call may write memory that may alias the input (an op's own
//      effects and those of every op nested in it; ops that run only after
//      every later call, or in branches exclusive with them, do not count).
//
// A refused check returns a Refusal naming the op and the reason; the
// fusers turn it into a remark.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_ANALYSIS_STACKEDLINEARANALYSIS_H
#define TXDIALECT_ANALYSIS_STACKEDLINEARANALYSIS_H

#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/TxOps.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>

namespace mlir {
namespace tx {

/// The check a refused group failed; statistics count refusals by it.
enum class RefusalKind {
  Guard,        // compared with ==/!= None
  Escape,       // a layer reference used other than by a guard
  CalledTwice,  // more than one call of a layer
  OtherUse,     // the layer symbol used by some other op
  Unstructured, // calls in different blocks of a CFG region
  Loop,         // a call inside a loop the merged GEMM would leave
  Dominance,    // the input is not available at the insertion point
  InputWritten, // something may write the input before the last call
  Speculative,  // no call runs on every path from the insertion point
  TiedCheckpoint, // two layers of the group load the same checkpoint tensors
};

struct Refusal {
  RefusalKind kind;
  Operation *op; // where the remark goes
  std::string message;
};

/// One projection call and the layer it calls.
struct StackedCall {
  LinearOp call;
  LayerOp layer;
  unsigned order = 0; // position in the function's program order
};

/// Sibling projections: one input (isSameBuffer), same in-features,
/// element type and bias presence; calls in program order.
struct SiblingGroup {
  SmallVector<StackedCall> calls;
};

/// Where the merged projection goes: before `before`, reading `input`.
struct InsertionPoint {
  Operation *before = nullptr;
  Value input;
};

/// An op judged to write the input, and why.
struct InputWriter {
  Operation *op;
  std::string reason;
};

/// A group that passed every check, ready for the rewrite.
struct FusionPlan {
  SmallVector<StackedCall> calls; // stacking order
  InsertionPoint point;
  SmallVector<LayerRefOp> guardedRefs; // references folded to "exists"
};

/// Testing only, UNSAFE: soundness checks switched off one at a time, so
/// that the differential tests can show they catch what follows.
struct UnsafeTestChecks {
  /// The alias analysis's own switches: inputs that MustAlias (upstream's
  /// answer) grouped as one input; the own writes of ops with recursive
  /// effects ignored.
  TxAliasAnalysis::UnsafeTestOptions alias;
  /// Only loop ops are loops (CFG cycles and repetitive regions are not).
  bool ignoreCfgLoops = false;
  /// No input-stability check at all.
  bool skipInputStability = false;
  /// The merged projection placed where no call of the group may run.
  bool allowSpeculation = false;

  /// From the names `input-identity`, `cfg-loops`, `region-op-effects`,
  /// `input-stability`, `speculation`; failure names the first unknown one.
  static FailureOr<UnsafeTestChecks> parse(ArrayRef<std::string> names,
                                           std::string &unknown);
};

class StackedLinearAnalysis {
public:
  explicit StackedLinearAnalysis(ModuleOp module,
                                 UnsafeTestChecks unsafe = {});

  /// Step 1: every group of >= 2 sibling projections in `func`, ordered by
  /// their first call.
  SmallVector<SiblingGroup> findSiblingGroups(FunctionOpInterface func);

  /// Step 2: each layer of `calls` is called exactly once (by that call) and
  /// otherwise only tested by foldable guards, collected into `refs`.
  std::optional<Refusal> checkSingleCalls(ArrayRef<StackedCall> calls,
                                          SmallVectorImpl<LayerRefOp> &refs);

  /// Step 3: where the merged projection goes.
  FailureOr<InsertionPoint> findInsertionPoint(ArrayRef<StackedCall> calls,
                                               Refusal &refusal);

  /// Step 4: the first op that may write the input between `point` and the
  /// last call, or none. With `writers`, collects every such op instead of
  /// stopping at the first.
  std::optional<Refusal>
  inputIsStable(ArrayRef<StackedCall> calls, const InsertionPoint &point,
                SmallVectorImpl<InputWriter> *writers = nullptr);

  /// Steps 2 to 4 in order; the plan keeps `calls` in the given order.
  FailureOr<FusionPlan> checkGroup(ArrayRef<StackedCall> calls,
                                   Refusal &refusal);

  /// Keeps the symbol-use index current after a rewrite.
  void recordSymbolUser(StringAttr symbol, Operation *user);
  void forgetSymbol(StringAttr symbol);

  TxAliasAnalysis &getAliasAnalysis() { return aliasAnalysis; }
  DominanceInfo &getDominance() { return dominance; }

private:
  ModuleOp module;
  UnsafeTestChecks unsafe;
  TxAliasAnalysis aliasAnalysis;
  DominanceInfo dominance;
  /// Every op referring to a symbol of the module, in walk order.
  llvm::DenseMap<StringAttr, SmallVector<Operation *, 2>> symbolUsers;
};

/// `'a', 'b', 'c'` for the layers of `calls`, for messages.
std::string describeLayers(ArrayRef<StackedCall> calls);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_ANALYSIS_STACKEDLINEARANALYSIS_H
