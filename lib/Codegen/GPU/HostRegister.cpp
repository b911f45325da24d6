//===- HostRegister.cpp - host buffers the kernels read, made mapped -------===//

#include "HostBuffers.h"
#include "TxDialect/Codegen/GPUTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tx {
#define GEN_PASS_DECL_TXGPUHOSTREGISTER
#define GEN_PASS_DEF_TXGPUHOSTREGISTER
#include "TxDialect/Codegen/GPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

bool isRegistrable(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getElementType().isIntOrFloat() &&
         !type.getMemorySpace();
}

Value toUnranked(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto unranked = UnrankedMemRefType::get(type.getElementType(),
                                          type.getMemorySpace());
  return memref::CastOp::create(b, loc, unranked, memref);
}

struct TxGPUHostRegisterPass
    : public tx::impl::TxGPUHostRegisterBase<TxGPUHostRegisterPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal() || func->getParentOfType<gpu::GPUModuleOp>())
        return;
      tx::registerHostBuffers(func);
    });
  }
};

} // namespace

unsigned tx::registerHostBuffers(func::FuncOp func, Value *first) {
  bool launches = false;
  func.walk([&](gpu::LaunchOp) { launches = true; });
  if (!launches)
    return 0;
  OpBuilder b(func.getContext());
  unsigned registered = 0;
  auto registerAfter = [&](Value memref, Location loc) {
    if (!registered++ && first)
      *first = memref;
    gpu::HostRegisterOp::create(b, loc, toUnranked(b, loc, memref));
  };
  b.setInsertionPointToStart(&func.getBody().front());
  for (BlockArgument arg : func.getArguments())
    if (isRegistrable(arg))
      registerAfter(arg, func.getLoc());
  func.walk([&](Operation *op) {
    if (op->getParentOfType<gpu::LaunchOp>())
      return;
    if (isa<memref::AllocOp, memref::GetGlobalOp>(op) &&
        isRegistrable(op->getResult(0))) {
      b.setInsertionPointAfter(op);
      registerAfter(op->getResult(0), op->getLoc());
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      if (!isRegistrable(dealloc.getMemref()))
        return;
      b.setInsertionPoint(dealloc);
      gpu::HostUnregisterOp::create(
          b, dealloc.getLoc(),
          toUnranked(b, dealloc.getLoc(), dealloc.getMemref()));
    }
  });
  return registered;
}
