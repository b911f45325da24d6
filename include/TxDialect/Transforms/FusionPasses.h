//===- FusionPasses.h - stacked-linear fusion passes ------------*- C++ -*-===//

#ifndef TXDIALECT_TRANSFORMS_FUSIONPASSES_H
#define TXDIALECT_TRANSFORMS_FUSIONPASSES_H

#include "TxDialect/TxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace tx {

#define GEN_PASS_DECL
#include "TxDialect/Transforms/FusionPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "TxDialect/Transforms/FusionPasses.h.inc"

/// Options of the `tx-fusion` pipeline (those of tx-fuse-stacked-linears).
struct FusionPipelineOptions
    : public PassPipelineOptions<FusionPipelineOptions> {
  ListOption<std::string> fusers{
      *this, "fusers",
      llvm::cl::desc("Fusers to run, in order (default: qkv, mla, glu, "
                     "merged-column)")};
  Option<std::string> qPattern{*this, "q-pattern",
                               llvm::cl::desc("Query projection suffix"),
                               llvm::cl::init("q_proj")};
  Option<std::string> kPattern{*this, "k-pattern",
                               llvm::cl::desc("Key projection suffix"),
                               llvm::cl::init("k_proj")};
  Option<std::string> vPattern{*this, "v-pattern",
                               llvm::cl::desc("Value projection suffix"),
                               llvm::cl::init("v_proj")};
  Option<std::string> gatePattern{*this, "gate-pattern",
                                  llvm::cl::desc("GLU gate suffix"),
                                  llvm::cl::init("gate_proj")};
  Option<std::string> upPattern{*this, "up-pattern",
                                llvm::cl::desc("GLU up suffix"),
                                llvm::cl::init("up_proj")};
  Option<std::string> qaPattern{*this, "q-a-pattern",
                                llvm::cl::desc("MLA q-LoRA suffix"),
                                llvm::cl::init("q_a_proj")};
  Option<std::string> kvaPattern{*this, "kv-a-pattern",
                                 llvm::cl::desc("MLA kv suffix"),
                                 llvm::cl::init("kv_a_proj_with_mqa")};
  Option<int64_t> qHeads{*this, "q-heads", llvm::cl::desc("Query heads"),
                         llvm::cl::init(0)};
  Option<int64_t> kvHeads{*this, "kv-heads",
                          llvm::cl::desc("Key/value heads"),
                          llvm::cl::init(0)};
};

/// Adds the fusion passes to `pm` (the `tx-fusion` pipeline).
void buildFusionPipeline(OpPassManager &pm,
                         const FusionPipelineOptions &options);

/// Registers the fusion passes and the `tx-fusion` pipeline.
void registerFusionPasses();

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_TRANSFORMS_FUSIONPASSES_H
