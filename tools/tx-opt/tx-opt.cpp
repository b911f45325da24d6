//===- tx-opt.cpp - the tx optimizer driver -------------------------------===//
//
// mlir-opt with the tx dialect, passes and pipelines: every upstream dialect,
// pass and mlir-opt flag is available too.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/InitAllTx.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::tx::test {
void registerTestPasses();
} // namespace mlir::tx::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tx::registerAllTxDialects(registry);
  mlir::tx::registerAllTxPasses();
  mlir::tx::test::registerTestPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "tx optimizer driver: tx passes on top of mlir-opt\n",
      registry));
}
