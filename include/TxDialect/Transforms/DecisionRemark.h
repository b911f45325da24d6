//===- DecisionRemark.h - remarks for tx rewrite decisions ------*- C++ -*-===//
//
// Every decision of the fusion and SP rewrites (fused, refused, versioned) is
// reported twice:
//
// * as a classic remark at the location of the op it is about (the
//   human-readable default output, checked by -verify-diagnostics);
// * through MLIR's remark framework (mlir/IR/Remarks.h), as a passed, missed
//   or analysis remark with a name, the pass as category and the enclosing
//   function, when the context has a remark engine: `tx-opt
//   --remarks-filter='tx-fuse.*' --remarks-output-file=r.yaml
//   --remark-format=yaml` writes them as YAML.
//
// An op with regions (a function, a loop) is not printed as a note of its
// remark: the note would be the whole function.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_TRANSFORMS_DECISIONREMARK_H
#define TXDIALECT_TRANSFORMS_DECISIONREMARK_H

#include "TxDialect/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <string>
#include <utility>

namespace mlir::tx {

/// What a decision remark says, as the remark framework's kinds.
enum class DecisionKind {
  /// A rewrite was applied.
  Passed,
  /// A rewrite was considered and refused.
  Missed,
  /// Neither: how a rewrite was applied (e.g. versioning).
  Analysis,
};

/// A remark under construction: stream the message into it as into an
/// InFlightDiagnostic; it is reported when it goes out of scope.
class DecisionRemark {
public:
  /// A remark about `op` (at its location) named `name` (a CamelCase
  /// identifier, e.g. "Fused") of `pass` (the framework's category, e.g.
  /// "tx-fuse-stacked-linears"), with an optional sub-category (e.g. the
  /// fuser).
  DecisionRemark(Operation *op, DecisionKind kind, StringRef name,
                 StringRef pass, StringRef subCategory = {})
      : DecisionRemark(op->getLoc(), op, kind, name, pass, subCategory) {
    this->op = op;
  }
  /// The same at `loc`, in the function of `scope`, without an op note
  /// (for a decision about several ops, or ops a rewrite erased).
  DecisionRemark(Location loc, Operation *scope, DecisionKind kind,
                 StringRef name, StringRef pass, StringRef subCategory = {})
      : diag(mlir::emitRemark(loc)), loc(loc), kind(kind),
        opts(remark::RemarkOpts::name(intern(loc, name))
                 .category(intern(loc, pass))
                 .subCategory(intern(loc, subCategory))
                 .function(intern(loc, functionName(scope)))) {}

  DecisionRemark(DecisionRemark &&) = default;
  DecisionRemark(const DecisionRemark &) = delete;
  DecisionRemark &operator=(const DecisionRemark &) = delete;
  DecisionRemark &operator=(DecisionRemark &&) = delete;

  template <typename T> DecisionRemark &operator<<(T &&value) {
    diag << std::forward<T>(value);
    return *this;
  }

  ~DecisionRemark() {
    Diagnostic *underlying = diag.getUnderlyingDiagnostic();
    if (!underlying) // moved from
      return;
    std::string message = underlying->str();
    // The op itself as a note, as Operation::emitRemark does, unless it has
    // regions (see Diagnostics.h).
    if (op && showsOpAsNote(op) &&
        op->getContext()->shouldPrintOpOnDiagnostic())
      diag.attachNote(loc) << "see current operation: " << *op;
    diag.report();
    switch (kind) {
    case DecisionKind::Passed:
      remark::passed(loc, opts) << StringRef(message);
      break;
    case DecisionKind::Missed:
      remark::missed(loc, opts) << StringRef(message);
      break;
    case DecisionKind::Analysis:
      remark::analysis(loc, opts) << StringRef(message);
      break;
    }
  }

private:
  /// `s` kept alive as long as the context: the remark engine may hold its
  /// remarks until the end (the "final" policy).
  static StringRef intern(Location loc, StringRef s) {
    return s.empty() ? s : StringAttr::get(loc->getContext(), s).getValue();
  }

  /// The name of the function `op` is (in), or "" outside any.
  static StringRef functionName(Operation *op) {
    if (!op)
      return {};
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!func)
      func = op->getParentOfType<FunctionOpInterface>();
    return func ? func.getName() : StringRef();
  }

  InFlightDiagnostic diag;
  Location loc;
  DecisionKind kind;
  remark::RemarkOpts opts;
  Operation *op = nullptr;
};

} // namespace mlir::tx

#endif // TXDIALECT_TRANSFORMS_DECISIONREMARK_H
