//===- FusionPasses.h - stacked-linear fusion passes ------------*- C++ -*-===//

#ifndef TXDIALECT_TRANSFORMS_FUSIONPASSES_H
#define TXDIALECT_TRANSFORMS_FUSIONPASSES_H

#include "TxDialect/TxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace tx {

#define GEN_PASS_DECL
#include "TxDialect/Transforms/FusionPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "TxDialect/Transforms/FusionPasses.h.inc"

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_TRANSFORMS_FUSIONPASSES_H
