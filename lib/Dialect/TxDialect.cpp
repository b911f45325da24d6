//===- TxDialect.cpp - tx dialect, types and attributes -------------------===//

#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::tx;

#include "TxDialect/TxDialect.cpp.inc"
#include "TxDialect/TxEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "TxDialect/TxTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "TxDialect/TxAttrs.cpp.inc"

void TxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "TxDialect/TxOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "TxDialect/TxTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "TxDialect/TxAttrs.cpp.inc"
      >();
}

Operation *TxDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

LogicalResult TxDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  if (attr.getName() == getConfigAttrName()) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "'" << getConfigAttrName()
                             << "' may only be attached to a builtin.module";
    if (!isa<CompileConfigAttr>(attr.getValue()))
      return op->emitError() << "'" << getConfigAttrName()
                             << "' must be a #tx.config<...> attribute, got "
                             << attr.getValue();
  }
  return success();
}

CompileConfigAttr mlir::tx::getCompileConfig(Operation *op) {
  ModuleOp module = dyn_cast<ModuleOp>(op);
  if (!module)
    module = op->getParentOfType<ModuleOp>();
  while (module) {
    if (auto config = module->getAttrOfType<CompileConfigAttr>(
            TxDialect::getConfigAttrName()))
      return config;
    module = module->getParentOfType<ModuleOp>();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult
StackEntryAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       StringAttr source, int64_t offset, int64_t size,
                       int64_t heads, bool unknownHeads) {
  if (!source || source.getValue().empty())
    return emitError() << "stack entry needs a non-empty source name";
  if (offset < 0)
    return emitError() << "stack entry '" << source.getValue()
                       << "' has negative offset " << offset;
  if (size <= 0)
    return emitError() << "stack entry '" << source.getValue()
                       << "' has non-positive size " << size;
  if (size > std::numeric_limits<int64_t>::max() - offset)
    return emitError() << "stack entry '" << source.getValue()
                       << "': rows [" << offset << ", " << offset << " + "
                       << size << ") overflow 64 bits";
  if (heads < 0)
    return emitError() << "stack entry '" << source.getValue()
                       << "' has negative head count " << heads;
  if (unknownHeads && heads != 0)
    return emitError() << "stack entry '" << source.getValue()
                       << "' has " << heads
                       << " heads and unknown_heads: give one or the other";
  if (heads > 0 && size % heads != 0)
    return emitError() << "stack entry '" << source.getValue() << "': size "
                       << size << " is not a multiple of its " << heads
                       << " heads";
  return success();
}

LogicalResult CompileConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t tpSize,
    bool sequenceParallel, bool asyncTp, std::optional<int64_t> spMinTokens,
    ArrayAttr splittingOps, bool graphPartition, CUDAGraphMode cudagraphMode,
    ArrayAttr captureSizes, std::optional<int64_t> hiddenSize,
    std::optional<int64_t> elementSize, StringAttr arch) {
  if (tpSize < 1)
    return emitError() << "tp_size must be at least 1, got " << tpSize;
  if (spMinTokens && *spMinTokens < 0)
    return emitError() << "sp_min_tokens must not be negative, got "
                       << *spMinTokens;
  if (hiddenSize && *hiddenSize <= 0)
    return emitError() << "hidden_size must be positive, got " << *hiddenSize;
  if (elementSize && *elementSize <= 0)
    return emitError() << "element_size must be positive, got "
                       << *elementSize;
  if (splittingOps)
    for (Attribute a : splittingOps) {
      auto name = dyn_cast<StringAttr>(a);
      if (!name || name.getValue().empty())
        return emitError() << "splitting_ops must be a list of op names, got "
                           << a;
    }
  if (captureSizes)
    for (Attribute a : captureSizes) {
      auto i = dyn_cast<IntegerAttr>(a);
      if (!i || i.getInt() <= 0)
        return emitError()
               << "capture_sizes must be a list of positive integers, got "
               << a;
    }
  return success();
}

bool CompileConfigAttr::isFullGraph() const {
  return getGraphPartition() || getEffectiveSplittingOps().empty();
}

ArrayAttr CompileConfigAttr::getEffectiveSplittingOps() const {
  if (ArrayAttr ops = getSplittingOps())
    return ops;
  return getDefaultSplittingOps(getContext());
}

ArrayAttr CompileConfigAttr::getDefaultSplittingOps(MLIRContext *ctx) {
  Builder b(ctx);
  return b.getStrArrayAttr({AttentionOp::getOperationName()});
}
