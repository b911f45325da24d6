//===- AlignWorkgroupBuffers.cpp - shared buffers aligned for ldmatrix ----===//

#include "TxDialect/Codegen/GPUTarget.h"
#include "TxDialect/Diagnostics.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tx {
#define GEN_PASS_DECL_TXGPUALIGNWORKGROUPBUFFERS
#define GEN_PASS_DEF_TXGPUALIGNWORKGROUPBUFFERS
#include "TxDialect/Codegen/GPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

struct TxGPUAlignWorkgroupBuffersPass
    : public tx::impl::TxGPUAlignWorkgroupBuffersBase<
          TxGPUAlignWorkgroupBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
      tx::emitErrorAt(getOperation())
          << "tx-gpu-align-workgroup-buffers: alignment must be a power of "
             "two, got "
          << alignment;
      return signalPassFailure();
    }
    StringRef alignName = LLVM::LLVMDialect::getAlignAttrName();
    getOperation().walk([&](gpu::GPUFuncOp func) {
      for (unsigned i = 0, e = func.getNumWorkgroupAttributions(); i < e; ++i) {
        auto current = dyn_cast_or_null<IntegerAttr>(
            func.getWorkgroupAttributionAttr(i, alignName));
        if (current && current.getInt() >= alignment)
          continue;
        func.setWorkgroupAttributionAttr(
            i, alignName,
            IntegerAttr::get(IntegerType::get(&getContext(), 64), alignment));
      }
    });
  }
};

} // namespace
