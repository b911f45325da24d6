//===- ProfileOps.cpp - bracket each tx op with profiling calls -----------===//
//
// tx-profile-ops: before any lowering, every tx op that computes gets a call
// of tx_rt_profile_begin(id) before it and tx_rt_profile_end(id) after it,
// and every function body one pair around it; the module's tx.profile_ops
// table says what each id is (ProfileOps.h). The calls are opaque to the
// passes that follow, so the lowered op stays between them.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Conversion/ProfileOps.h"
#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXPROFILEOPS
#include "TxDialect/Conversion/Passes.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

/// "file:line:col" of the first file location in `loc` ("?" when none).
static std::string locationText(Location loc) {
  if (auto fl = loc->findInstanceOf<FileLineColLoc>())
    return (fl.getFilename().getValue() + ":" + Twine(fl.getLine()) + ":" +
            Twine(fl.getColumn()))
        .str();
  return "?";
}

/// Ops that lower to work: tx ops but the symbols, layer references and the
/// pure ones (views, get_param, guards, rank), which lower to no code.
static bool isProfiled(Operation *op) {
  if (!isa<TxDialect>(op->getDialect()))
    return false;
  if (isa<LayerOp, NoneLayerOp, ParamOp, LayerRefOp>(op) || isPure(op))
    return false;
  return true;
}

/// "tx.linear @q_proj": the op's name and the symbol it refers to, if any.
static std::string opText(Operation *op) {
  std::string text = op->getName().getStringRef().str();
  for (NamedAttribute attr : op->getAttrs())
    if (auto sym = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
      text += " @" + sym.getValue().str();
  return text;
}

namespace {
struct TxProfileOpsPass : tx::impl::TxProfileOpsBase<TxProfileOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    SmallVector<Attribute> table;
    if (auto existing = module->getAttrOfType<ArrayAttr>(kProfileTableAttrName))
      table.assign(existing.begin(), existing.end());
    auto entry = [&](StringRef kind, StringRef name, Location loc,
                     StringRef func) {
      table.push_back(b.getArrayAttr(
          {b.getStringAttr(kind), b.getStringAttr(name),
           b.getStringAttr(locationText(loc)), b.getStringAttr(func)}));
      return static_cast<int64_t>(table.size() - 1);
    };
    auto call = [&](Location loc, StringRef callee, int64_t id) {
      Value v = arith::ConstantIntOp::create(b, loc, id, 64);
      func::CallOp::create(b, loc, callee, TypeRange{}, ValueRange{v});
    };

    bool any = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      SmallVector<Operation *> ops;
      func.walk([&](Operation *op) {
        if (isProfiled(op))
          ops.push_back(op);
      });
      for (Operation *op : ops) {
        int64_t id = entry("op", opText(op), op->getLoc(), func.getName());
        b.setInsertionPoint(op);
        call(op->getLoc(), kProfileBeginFunctionName, id);
        b.setInsertionPointAfter(op);
        call(op->getLoc(), kProfileEndFunctionName, id);
      }
      int64_t id = entry("function", ("@" + func.getName()).str(),
                         func.getLoc(), func.getName());
      b.setInsertionPointToStart(&func.getBody().front());
      call(func.getLoc(), kProfileBeginFunctionName, id);
      func.walk([&](func::ReturnOp ret) {
        b.setInsertionPoint(ret);
        call(ret.getLoc(), kProfileEndFunctionName, id);
      });
      any = true;
    }
    if (!any)
      return;
    module->setAttr(kProfileTableAttrName, b.getArrayAttr(table));
    b.setInsertionPointToStart(module.getBody());
    for (StringRef name : {kProfileBeginFunctionName, kProfileEndFunctionName}) {
      if (module.lookupSymbol(name))
        continue;
      auto decl = func::FuncOp::create(
          b, module.getLoc(), name,
          b.getFunctionType({b.getI64Type()}, {}));
      decl.setPrivate();
    }
  }
};
} // namespace
