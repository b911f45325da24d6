//===- TxAliasAnalysis.h - alias and effect facts for tx rewrites -*- C++ -*-===//
//
// The one place where tx decides whether two buffers are the same, may
// overlap, or are disjoint, and whether an op may read or write a buffer.
// Every rewrite that moves a read or write (the stacked-linear fusion, the
// CPU pipeline's accumulator hoisting) asks this and nothing else.
//
// Upstream LocalAliasAnalysis answers MustAlias for any two views of one
// allocation (it compares the underlying values only): `x[:, 0:8]` and
// `x[:, 8:16]` "must alias", and so do two subviews with different dynamic
// offsets. MustAlias is therefore never taken as "the same buffer" here:
//
//  * isSameBuffer: the same SSA value, up to identity views (tx.alias, a
//    same-type tx.view or memref.cast, an identity tx.transpose), or two
//    pure view ops that OperationEquivalence finds equal with operands that
//    are (recursively) the same.
//  * TxAliasAnalysis::alias: MustAlias only for isSameBuffer; NoAlias for
//    views of one identity-layout buffer whose static index boxes are
//    disjoint (slices of a merged projection's output), for a fresh
//    allocation against a module global, for a container against a buffer;
//    LocalAliasAnalysis otherwise, with its MustAlias weakened to MayAlias.
//  * TxAliasAnalysis::getOwnModRef / getModRef: an op's own declared effects
//    always count, whatever its traits (a linalg.generic writing its init
//    has RecursiveMemoryEffects *and* declares that write); getModRef adds
//    the ops nested in its regions. An op that declares nothing (and is not
//    recursive) may read and write anything.
//
// The analysis is used directly rather than through mlir::AliasAnalysis:
// the upstream aggregator asks LocalAliasAnalysis first and returns its
// first non-May answer, so no added implementation could correct its
// MustAlias for disjoint views.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_ANALYSIS_TXALIASANALYSIS_H
#define TXDIALECT_ANALYSIS_TXALIASANALYSIS_H

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"

namespace mlir {
namespace tx {

/// Whether `a` and `b` denote the same elements under the same layout
/// whenever both are defined (see the file comment).
bool isSameBuffer(Value a, Value b);

/// The buffer `value` is a view of: followed through view-like ops
/// (subview, reshape, cast, tx.view, ...) to the value they start from.
/// Two values with different roots may still alias (function arguments);
/// values with one root are views of one buffer.
Value getViewRoot(Value value);

class TxAliasAnalysis : public LocalAliasAnalysis {
public:
  /// Testing only, UNSAFE: the checks that can be switched off to show that
  /// the differential tests catch what follows.
  struct UnsafeTestOptions {
    /// Take MustAlias for "the same buffer" (upstream's answer unchanged).
    bool trustMustAlias = false;
    /// Ops with RecursiveMemoryEffects: their own declared effects ignored.
    bool ignoreRecursiveOpsOwnEffects = false;
  };

  TxAliasAnalysis() = default;
  explicit TxAliasAnalysis(UnsafeTestOptions unsafe) : unsafe(unsafe) {}

  /// Whether `lhs` and `rhs` may overlap (see the file comment). Hides
  /// LocalAliasAnalysis::alias, which this refines; upstream then asks
  /// aliasImpl of the underlying values.
  AliasResult alias(Value lhs, Value rhs);

  /// The effects `op` itself declares on `location` (not those of nested
  /// ops): NoModRef for an op without effects or with only recursive ones,
  /// ModRef for an op that declares nothing.
  ModRefResult getOwnModRef(Operation *op, Value location);

  /// What `op`, or any op nested in its regions, may do to `location`.
  ModRefResult getModRef(Operation *op, Value location);

  const UnsafeTestOptions &getUnsafeTestOptions() const { return unsafe; }

protected:
  AliasResult aliasImpl(Value lhs, Value rhs) override;

private:
  UnsafeTestOptions unsafe;
};

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_ANALYSIS_TXALIASANALYSIS_H
