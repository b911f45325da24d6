//===- InitAllTx.cpp - registration shared by every tx tool ---------------===//

#include "TxDialect/InitAllTx.h"
#include "TxDialect/TxDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"

using namespace mlir;

void tx::registerTxDialect(DialectRegistry &registry) {
  registry.insert<tx::TxDialect>();
}

void tx::registerAllTxDialects(DialectRegistry &registry) {
  registerTxDialect(registry);
  registerAllDialects(registry);
  registerAllExtensions(registry);
}

void tx::registerTxPasses() {}

void tx::registerAllTxPasses() {
  registerAllPasses();
  registerTxPasses();
}
