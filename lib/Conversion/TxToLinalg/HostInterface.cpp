//===- HostInterface.cpp - the host interface of lowered modules ----------===//
//
// Passes that shape what the code lowered from tx looks like to its host,
// shared by the CPU (tx-to-cpu) and GPU (tx-to-nvvm) pipelines: public
// functions return contiguous buffers (tx-return-contiguous), memref.copy
// becomes linalg.copy so that no runtime library is needed
// (tx-copies-to-linalg), and public functions get C-interface wrappers
// (tx-emit-c-interface).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "TxDialect/Conversion/TxToLinalg.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXEMITCINTERFACE
#define GEN_PASS_DEF_TXCOPIESTOLINALG
#define GEN_PASS_DEF_TXRETURNCONTIGUOUS
#include "TxDialect/Conversion/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

struct TxEmitCInterfacePass
    : tx::impl::TxEmitCInterfaceBase<TxEmitCInterfacePass> {
  void runOnOperation() override {
    UnitAttr unit = UnitAttr::get(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        func->setAttr("llvm.emit_c_interface", unit);
  }
};

struct TxCopiesToLinalgPass
    : tx::impl::TxCopiesToLinalgBase<TxCopiesToLinalgPass> {
  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};

struct TxReturnContiguousPass
    : tx::impl::TxReturnContiguousBase<TxReturnContiguousPass> {
  using TxReturnContiguousBase::TxReturnContiguousBase;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      SmallVector<Type> results(func.getResultTypes());
      for (auto [i, t] : llvm::enumerate(results)) {
        auto mt = dyn_cast<MemRefType>(t);
        if (mt && !mt.getLayout().isIdentity())
          t = MemRefType::get(mt.getShape(), mt.getElementType(),
                              MemRefLayoutAttrInterface(),
                              mt.getMemorySpace());
      }
      func.walk([&](func::ReturnOp ret) {
        OpBuilder b(ret);
        for (OpOperand &operand : ret->getOpOperands()) {
          Type want = results[operand.getOperandNumber()];
          Value v = operand.get();
          if (v.getType() == want)
            continue;
          auto mt = cast<MemRefType>(want);
          SmallVector<Value> dyn;
          for (int64_t d = 0; d < mt.getRank(); ++d)
            if (mt.isDynamicDim(d))
              dyn.push_back(memref::DimOp::create(b, ret.getLoc(), v, d));
          Value copy = memref::AllocOp::create(b, ret.getLoc(), mt, dyn);
          tx::detail::buildCopy(b, ret.getLoc(), v, copy, rows);
          operand.set(copy);
        }
      });
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                     results));
    }
  }
};
} // namespace
