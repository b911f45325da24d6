// Embeds tx: the C++ API (parse, run the fusion pipeline, print) and the C
// API (stacking maps) of the installed TxDialect package.
//
//   tx-consumer <module.mlir>

#include "TxDialect-c/Engine.h"
#include "TxDialect/InitAllTx.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: tx-consumer <module.mlir>\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  mlir::tx::registerAllTxDialects(registry);
  mlir::tx::registerAllTxPasses();
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline("tx-fusion,canonicalize", pm)) ||
      mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  llvm::outs().flush();

  // The C API lives in the same library.
  TxContext *ctx = nullptr;
  TxModule *fused = nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  char *json = nullptr;
  if (txContextCreate(&ctx) != TX_OK ||
      txModuleParse(ctx, text.c_str(), "fused.mlir", &fused) != TX_OK ||
      txModuleExportStackingMaps(fused, 2, &json) != TX_OK) {
    std::fprintf(stderr, "tx C API: %s\n", txGetLastError());
    return 1;
  }
  std::printf("stacking maps: %s\n", json);
  txStringDestroy(json);
  txModuleDestroy(fused);
  txContextDestroy(ctx);
  return 0;
}
