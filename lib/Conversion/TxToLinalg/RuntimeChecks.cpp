//===- RuntimeChecks.cpp - dynamic sizes compared when the program runs --===//
//
// The verifier can only compare static sizes. Where an op needs two sizes to
// agree and one of them is dynamic, the lowering compares them before the op
// reads or writes anything, and calls tx_rt_check_failed (TxToLinalg.h) on a
// mismatch: one compare per dimension per op, outside every loop.
//
// The patterns emit the call with a placeholder check number and the
// message as an attribute; `finalizeRuntimeChecks` numbers them once the
// conversion succeeded (a pattern must not edit the module) and moves the
// messages into the module's table.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "TxDialect/Conversion/TxToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::detail;

/// The message of a check, carried by its call until it is numbered.
static constexpr StringLiteral kPendingMessageAttr = "tx.runtime_check";

std::string mlir::tx::detail::shortLocation(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto fl = loc->findInstanceOf<FileLineColLoc>())
    os << fl.getFilename().getValue() << ":" << fl.getLine() << ":"
       << fl.getColumn();
  else
    os << loc;
  return s;
}

/// "argument 2 'cos'" for an argument of a function (its name when the
/// argument's location is a NameLoc, as the tools make them from the source's
/// SSA names), or "" for another block argument.
static std::string describeArgument(BlockArgument arg) {
  Block *block = arg.getOwner();
  if (!block->isEntryBlock() ||
      !isa_and_nonnull<FunctionOpInterface>(block->getParentOp()))
    return "";
  std::string s = "argument " + std::to_string(arg.getArgNumber());
  if (auto name = dyn_cast<NameLoc>(arg.getLoc()))
    s += " '" + name.getName().str() + "'";
  return s;
}

std::string tx::detail::describeOperand(StringRef role, Value original) {
  std::string origin;
  if (auto arg = dyn_cast<BlockArgument>(original)) {
    origin = describeArgument(arg);
    if (origin.empty())
      origin = "a block argument";
  } else {
    Operation *def = original.getDefiningOp();
    origin = "the result of '" + def->getName().getStringRef().str() +
             "' at " + shortLocation(def->getLoc());
    // A view of a function argument says which.
    Value root = original;
    while (auto view = root.getDefiningOp<ViewLikeOpInterface>())
      root = view.getViewSource();
    if (auto arg = dyn_cast<BlockArgument>(root)) {
      std::string a = describeArgument(arg);
      if (!a.empty())
        origin += ", a view of " + a;
    }
  }
  return (role + " (" + origin + ")").str();
}

CheckedBuffer tx::detail::checked(StringRef role, Value original,
                                  Value converted) {
  return {converted, describeOperand(role, original)};
}

/// The size of dimension `dim` of memref `v` as an index value.
static Value dimSize(OpBuilder &b, Location loc, Value v, int64_t dim) {
  auto type = cast<MemRefType>(v.getType());
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  return memref::DimOp::create(b, loc, v, dim);
}

void tx::detail::emitRuntimeCheck(OpBuilder &b, Operation *op, Value failed,
                                  Value lhs, Value rhs, StringRef message) {
  Location loc = op->getLoc();
  std::string text = "'" + op->getName().getStringRef().str() + "' at " +
                     shortLocation(loc) + ": " + message.str();
  scf::IfOp::create(b, loc, failed, [&](OpBuilder &nb, Location nl) {
    Type i64 = nb.getI64Type();
    Value placeholder = arith::ConstantIntOp::create(nb, nl, i64, -1);
    Value l = arith::IndexCastOp::create(nb, nl, i64, lhs);
    Value r = arith::IndexCastOp::create(nb, nl, i64, rhs);
    auto call = func::CallOp::create(nb, nl, kRuntimeCheckFunctionName,
                                     TypeRange{},
                                     ValueRange{placeholder, l, r});
    call->setAttr(kPendingMessageAttr, nb.getStringAttr(text));
    scf::YieldOp::create(nb, nl);
  });
}

void tx::detail::checkDimsEqual(OpBuilder &b, Operation *op,
                                const CheckedBuffer &lhs, int64_t lhsDim,
                                const CheckedBuffer &rhs, int64_t rhsDim) {
  auto lt = cast<MemRefType>(lhs.buffer.getType());
  auto rt = cast<MemRefType>(rhs.buffer.getType());
  if (!lt.isDynamicDim(lhsDim) && !rt.isDynamicDim(rhsDim))
    return;
  Location loc = op->getLoc();
  Value l = dimSize(b, loc, lhs.buffer, lhsDim);
  Value r = dimSize(b, loc, rhs.buffer, rhsDim);
  Value ne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, l, r);
  emitRuntimeCheck(b, op, ne, l, r,
                   (lhs.name + " dim " + Twine(lhsDim) + " = {0} but " +
                    rhs.name + " dim " + Twine(rhsDim) + " = {1}")
                       .str());
}

void tx::detail::checkDimEquals(OpBuilder &b, Operation *op,
                                const CheckedBuffer &buffer, int64_t dim,
                                int64_t expected, StringRef what) {
  auto type = cast<MemRefType>(buffer.buffer.getType());
  if (!type.isDynamicDim(dim))
    return;
  Location loc = op->getLoc();
  Value size = dimSize(b, loc, buffer.buffer, dim);
  Value want = arith::ConstantIndexOp::create(b, loc, expected);
  Value ne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, size,
                                   want);
  emitRuntimeCheck(b, op, ne, size, want,
                   (buffer.name + " dim " + Twine(dim) + " = {0} but " +
                    what + " is {1}")
                       .str());
}

void tx::detail::checkSameShape(OpBuilder &b, Operation *op,
                                const CheckedBuffer &lhs,
                                const CheckedBuffer &rhs) {
  int64_t rank = cast<MemRefType>(lhs.buffer.getType()).getRank();
  for (int64_t i = 0; i < rank; ++i)
    checkDimsEqual(b, op, lhs, i, rhs, i);
}

void tx::detail::checkResultShape(OpBuilder &b, Operation *op,
                                  const CheckedBuffer &input,
                                  MemRefType result, StringRef resultName) {
  auto in = cast<MemRefType>(input.buffer.getType());
  for (int64_t i = 0, e = result.getRank(); i < e; ++i)
    if (!result.isDynamicDim(i) && in.isDynamicDim(i))
      checkDimEquals(b, op, input, i, result.getDimSize(i),
                     ("dim " + Twine(i) + " of the " + resultName + " type")
                         .str());
}

void tx::detail::checkAttentionShapes(OpBuilder &b, AttentionOp op,
                                      const CheckedBuffer &query,
                                      const CheckedBuffer &key,
                                      const CheckedBuffer &value,
                                      int64_t headDim) {
  checkDimsEqual(b, op, key, 0, value, 0);
  checkDimsEqual(b, op, key, 1, value, 1);
  checkDimEquals(b, op, key, 2, headDim, "the query's head_dim");
  checkResultShape(b, op, query, cast<MemRefType>(op.getResult().getType()));
}

std::string tx::formatRuntimeCheckFailure(ArrayAttr table, int64_t check,
                                          int64_t lhs, int64_t rhs) {
  StringAttr entry;
  if (table && check >= 0 && check < static_cast<int64_t>(table.size()))
    entry = dyn_cast<StringAttr>(table[check]);
  if (!entry)
    return "runtime check #" + std::to_string(check) + " failed: " +
           std::to_string(lhs) + " vs " + std::to_string(rhs);
  std::string out;
  StringRef text = entry.getValue();
  while (!text.empty()) {
    size_t at = text.find('{');
    out += text.substr(0, at).str();
    if (at == StringRef::npos)
      break;
    text = text.drop_front(at);
    if (text.starts_with("{0}")) {
      out += std::to_string(lhs);
      text = text.drop_front(3);
    } else if (text.starts_with("{1}")) {
      out += std::to_string(rhs);
      text = text.drop_front(3);
    } else {
      out += '{';
      text = text.drop_front(1);
    }
  }
  return out;
}

void tx::detail::finalizeRuntimeChecks(ModuleOp module, bool keep) {
  MLIRContext *ctx = module.getContext();
  SmallVector<Attribute> table;
  if (auto existing = module->getAttrOfType<ArrayAttr>(kRuntimeChecksAttrName))
    table.append(existing.begin(), existing.end());
  size_t before = table.size();
  SmallVector<func::CallOp> calls;
  module.walk([&](func::CallOp call) {
    if (call->hasAttr(kPendingMessageAttr))
      calls.push_back(call);
  });
  for (func::CallOp call : calls) {
    if (!keep) {
      // The scf.if around the call, and the compare that fed it once unused.
      auto guard = call->getParentOfType<scf::IfOp>();
      Value cond = guard.getCondition();
      guard.erase();
      if (Operation *cmp = cond.getDefiningOp(); cmp && cmp->use_empty())
        cmp->erase();
      continue;
    }
    OpBuilder b(call);
    Operation *placeholder = call.getOperand(0).getDefiningOp();
    call->setOperand(0, arith::ConstantIntOp::create(
                            b, call.getLoc(), b.getI64Type(), table.size()));
    if (placeholder && placeholder->use_empty())
      placeholder->erase();
    table.push_back(call->getAttr(kPendingMessageAttr));
    call->removeAttr(kPendingMessageAttr);
  }
  if (table.size() == before)
    return;
  module->setAttr(kRuntimeChecksAttrName, ArrayAttr::get(ctx, table));
  if (module.lookupSymbol(kRuntimeCheckFunctionName))
    return;
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  Type i64 = b.getI64Type();
  auto decl = func::FuncOp::create(
      b, module.getLoc(), kRuntimeCheckFunctionName,
      b.getFunctionType({i64, i64, i64}, {}));
  decl.setPrivate();
}
