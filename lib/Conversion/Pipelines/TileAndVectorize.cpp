//===- TileAndVectorize.cpp - CPU tiling and vectorisation ----------------===//
//
// A transform-dialect script, instantiated with the tile sizes and applied
// to the module: tile each linalg.matmul (M, N, K), peel the token loop so
// that the main tiles are static (the remainder rows one by one), vectorise every static linalg op (GEMM
// tiles become vector.contract), and lower contractions to outer products
// (FMAs), transfers to 1-D loads and stores.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Conversion/TxToLinalg.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Parser/Parser.h"
#include <array>

namespace mlir::tx {
#define GEN_PASS_DEF_TXCPUTILEANDVECTORIZE
#define GEN_PASS_DEF_TXEMITCINTERFACE
#define GEN_PASS_DEF_TXCOPIESTOLINALG
#define GEN_PASS_DEF_TXRETURNCONTIGUOUS
#include "TxDialect/Conversion/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;

/// @M@, @N@, @K@: the M, N, K tile sizes.
static constexpr const char *kScript = R"mlir(
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    // GEMMs whose token count is dynamic or not a multiple of the M tile:
    // tile, then peel the token loop so that the main tiles are static.
    %mm = transform.structured.match ops{["linalg.matmul"]} attributes {tx.peel} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %mm : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      %t, %loops:3 = transform.structured.tile_using_for %one tile_sizes [@M@, @N@, @K@]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
      %m = transform.cast %loops#0 : !transform.any_op to !transform.op<"scf.for">
      %main, %rest = transform.loop.peel %m
          : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      // The last (< M) rows, one at a time, so that they vectorise too.
      %rest_mm = transform.structured.match ops{["linalg.matmul"]} in %rest
          : (!transform.any_op) -> !transform.any_op
      %rt, %rl = transform.structured.tile_using_for %rest_mm tile_sizes [1, 0, 0]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    }
    // A static token count that the M tile divides: nothing to peel (peeling
    // would fail: there is no remainder).
    %exact = transform.structured.match ops{["linalg.matmul"]} attributes {tx.no_peel} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.foreach %exact : !transform.any_op {
    ^bb0(%one: !transform.any_op):
      %t, %loops:3 = transform.structured.tile_using_for %one tile_sizes [@M@, @N@, @K@]
          : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    }
    %funcs = transform.structured.match ops{["func.func"]} in %root
        : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %vf = transform.structured.vectorize_children_and_apply_patterns %funcs
        : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %vf {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
)mlir";

namespace {
struct TxCpuTileAndVectorizePass
    : tx::impl::TxCpuTileAndVectorizeBase<TxCpuTileAndVectorizePass> {
  using TxCpuTileAndVectorizeBase::TxCpuTileAndVectorizeBase;
  void runOnOperation() override {
    SmallVector<int64_t> tile(gemmTile.begin(), gemmTile.end());
    if (tile.empty())
      tile = {8, 8, 8};
    if (tile.size() != 3 || llvm::any_of(tile, [](int64_t t) { return t <= 0; })) {
      getOperation().emitError("gemm-tile must be three positive sizes M,N,K");
      return signalPassFailure();
    }
    std::string script = kScript;
    for (auto [key, size] :
         llvm::zip(std::array<StringRef, 3>{"@M@", "@N@", "@K@"}, tile))
      for (size_t at = script.find(key.str()); at != std::string::npos;
           at = script.find(key.str(), at))
        script.replace(at, key.size(), std::to_string(size));
    OwningOpRef<ModuleOp> transformModule =
        parseSourceString<ModuleOp>(script, &getContext());
    if (!transformModule) {
      getOperation().emitError("internal error: the tiling script does not parse");
      return signalPassFailure();
    }
    // Which GEMMs need their token loop peeled (see the script).
    UnitAttr unit = UnitAttr::get(&getContext());
    getOperation().walk([&](linalg::MatmulOp mm) {
      auto a = dyn_cast<MemRefType>(mm.getDpsInputs()[0].getType());
      int64_t rows = a ? a.getDimSize(0) : ShapedType::kDynamic;
      bool exact = !ShapedType::isDynamic(rows) && rows % tile[0] == 0;
      mm->setAttr(exact ? "tx.no_peel" : "tx.peel", unit);
    });
    Operation *entry = transform::detail::findTransformEntryPoint(
        getOperation(), *transformModule, "__transform_main");
    if (!entry ||
        failed(transform::applyTransformNamedSequence(
            getOperation(), entry, *transformModule,
            transform::TransformOptions())))
      return signalPassFailure();
    getOperation().walk([](linalg::MatmulOp mm) {
      mm->removeAttr("tx.peel");
      mm->removeAttr("tx.no_peel");
    });
  }
};

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
          linalg::CopyOp::create(b, ret.getLoc(), v, copy);
          operand.set(copy);
        }
      });
      func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(),
                                     results));
    }
  }
};
} // namespace
