//===- TxOps.h - tx dialect operations --------------------------*- C++ -*-===//

#ifndef TXDIALECT_TXOPS_H
#define TXDIALECT_TXOPS_H

#include "TxDialect/TxDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tx {
class LayerOp;

/// What a collective communicates (TxCollectiveOpInterface).
enum class CollectiveKind { AllReduce, ReduceScatter, AllGather };
} // namespace mlir::tx

#include "TxDialect/TxInterfaces.h.inc"

#define GET_OP_CLASSES
#include "TxDialect/TxOps.h.inc"

#endif // TXDIALECT_TXOPS_H
