//===- Diagnostics.h - diagnostics about modules and functions --*- C++ -*-===//
//
// Operation::emitError/emitWarning/emitRemark attach the operation as a note
// ("see current operation: ..."). For an op with regions, a module or a
// function, that note is the whole program. These emit at the op's location
// and attach the note only for ops without regions.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_DIAGNOSTICS_H
#define TXDIALECT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace mlir::tx {

/// Whether a diagnostic about `op` shows `op` as a note: not when it has
/// regions (a module, a function, a loop would be printed whole).
inline bool showsOpAsNote(Operation *op) { return op->getNumRegions() == 0; }

inline InFlightDiagnostic emitDiagnosticAt(Operation *op,
                                           DiagnosticSeverity severity) {
  bool withNote = showsOpAsNote(op);
  Location loc = op->getLoc();
  switch (severity) {
  case DiagnosticSeverity::Error:
    return withNote ? op->emitError() : mlir::emitError(loc);
  case DiagnosticSeverity::Warning:
    return withNote ? op->emitWarning() : mlir::emitWarning(loc);
  case DiagnosticSeverity::Remark:
  case DiagnosticSeverity::Note:
    break;
  }
  return withNote ? op->emitRemark() : mlir::emitRemark(loc);
}

/// An error about `op`, without the whole op as a note when it has regions.
inline InFlightDiagnostic emitErrorAt(Operation *op) {
  return emitDiagnosticAt(op, DiagnosticSeverity::Error);
}

/// A warning about `op`, without the whole op as a note when it has regions.
inline InFlightDiagnostic emitWarningAt(Operation *op) {
  return emitDiagnosticAt(op, DiagnosticSeverity::Warning);
}

} // namespace mlir::tx

#endif // TXDIALECT_DIAGNOSTICS_H
