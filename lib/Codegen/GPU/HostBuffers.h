//===- HostBuffers.h - host buffers made device-accessible ------*- C++ -*-===//
//
// The host-mapped memory model (tx-gpu-host-register, and the functions
// tx-gpu-device-buffers cannot keep on the device): every host buffer a
// kernel reads is registered with the driver where it comes into being.
//
//===----------------------------------------------------------------------===//

#ifndef TX_LIB_CODEGEN_GPU_HOSTBUFFERS_H
#define TX_LIB_CODEGEN_GPU_HOSTBUFFERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tx {

/// Registers the arguments, weights and allocations of `func` (a host
/// function that launches kernels) with gpu.host_register, and unregisters
/// each allocation before its dealloc. Returns the number of buffers
/// registered and, in `first`, the first of them.
unsigned registerHostBuffers(func::FuncOp func, Value *first = nullptr);

} // namespace mlir::tx

#endif // TX_LIB_CODEGEN_GPU_HOSTBUFFERS_H
