//===- GPUCodegen.h - linalg to NVIDIA GPU kernels --------------*- C++ -*-===//
//
// The GPU code generation of tx-to-nvvm (lib/Codegen/GPU): its passes
// (GPUPasses.td: the target checks, the GEMM kernel generator, the memory
// models) and their options structs, which the pipeline takes as they are.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_CODEGEN_GPUCODEGEN_H
#define TXDIALECT_CODEGEN_GPUCODEGEN_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace tx {

#define GEN_PASS_DECL
#include "TxDialect/Codegen/GPUPasses.h.inc"

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_CODEGEN_GPUCODEGEN_H
