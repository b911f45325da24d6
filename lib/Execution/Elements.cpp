//===- Elements.cpp - the element types the runner passes -----------------===//
//
// The runner's tensors are f32; f16 and bf16 memrefs and weights are
// converted at the boundary with APFloat (round to nearest even, as
// PyTorch's .to(torch.bfloat16) does; widening back is exact).
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Execution/Elements.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tx;

std::optional<ElementType> tx::runnerElementType(Type type) {
  if (type.isF32())
    return ElementType::F32;
  if (type.isF16())
    return ElementType::F16;
  if (type.isBF16())
    return ElementType::BF16;
  return std::nullopt;
}

static const llvm::fltSemantics &semanticsOf(ElementType element) {
  return element == ElementType::F16 ? llvm::APFloat::IEEEhalf()
                                     : llvm::APFloat::BFloat();
}

void tx::storeElements(const float *in, size_t count, ElementType element,
                       void *out) {
  if (element == ElementType::F32) {
    std::memcpy(out, in, count * sizeof(float));
    return;
  }
  const llvm::fltSemantics &semantics = semanticsOf(element);
  auto *bits = static_cast<uint16_t *>(out);
  for (size_t i = 0; i < count; ++i) {
    llvm::APFloat value(in[i]);
    bool losesInfo;
    value.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    bits[i] = static_cast<uint16_t>(
        value.bitcastToAPInt().getZExtValue());
  }
}

void tx::loadElements(const void *in, size_t count, ElementType element,
                      float *out) {
  if (element == ElementType::F32) {
    std::memcpy(out, in, count * sizeof(float));
    return;
  }
  const llvm::fltSemantics &semantics = semanticsOf(element);
  const auto *bits = static_cast<const uint16_t *>(in);
  for (size_t i = 0; i < count; ++i) {
    llvm::APFloat value(semantics, llvm::APInt(16, bits[i]));
    bool losesInfo;
    value.convert(llvm::APFloat::IEEEsingle(),
                  llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    out[i] = value.convertToFloat();
  }
}
