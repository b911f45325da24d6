//===- SequenceParallel.h - sequence-parallelism passes ---------*- C++ -*-===//
//
// Config finalisation, the SP and async-TP rewrites and the SP contract
// check; `registerSPPasses()` registers them. The `tx-sp` pipeline is in
// TxDialect/Pipelines/SPPipeline.h, the collectives lowering (a conversion)
// in TxDialect/Conversion/CollectivesToRuntime.h.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_TRANSFORMS_SEQUENCEPARALLEL_H
#define TXDIALECT_TRANSFORMS_SEQUENCEPARALLEL_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;
namespace tx {

#define GEN_PASS_DECL
#include "TxDialect/Transforms/SPPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "TxDialect/Transforms/SPPasses.h.inc"

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_TRANSFORMS_SEQUENCEPARALLEL_H
