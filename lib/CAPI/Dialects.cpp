//===- Dialects.cpp - tx dialect in MLIR's C API --------------------------===//

#include "TxDialect-c/Dialects.h"

#include "TxDialect/InitAllTx.h"
#include "TxDialect/TxDialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

#include <mutex>

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Tx, tx, mlir::tx::TxDialect)

void txRegisterAllDialects(MlirDialectRegistry registry) {
  mlir::tx::registerAllTxDialects(*unwrap(registry));
}

void txRegisterAllPasses(void) {
  // The pass registry is global; registering twice would be an error.
  static std::once_flag once;
  std::call_once(once, [] { mlir::tx::registerAllTxPasses(); });
}
