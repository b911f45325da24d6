//===- TxDialect.h - the tx dialect, its types and attributes ---*- C++ -*-===//

#ifndef TXDIALECT_TXDIALECT_H
#define TXDIALECT_TXDIALECT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "TxDialect/TxDialect.h.inc"
#include "TxDialect/TxEnums.h.inc"

#define GET_TYPEDEF_CLASSES
#include "TxDialect/TxTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "TxDialect/TxAttrs.h.inc"

namespace mlir::tx {
/// The compilation settings of the module enclosing `op` (`tx.config`), or
/// null when the module has none.
CompileConfigAttr getCompileConfig(Operation *op);
} // namespace mlir::tx

#endif // TXDIALECT_TXDIALECT_H
