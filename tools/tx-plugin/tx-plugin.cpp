//===- tx-plugin.cpp - tx as a plugin of stock mlir-opt -------------------===//
//
//   mlir-opt --load-dialect-plugin=libTxPlugin.so \
//            --load-pass-plugin=libTxPlugin.so --pass-pipeline=...
//
// mlir-opt already has every upstream dialect and pass; this adds tx's. The
// plugin links libMLIR.so like mlir-opt, so the registries it fills are the
// ones mlir-opt reads.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/InitAllTx.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

#include <mutex>

/// Both entry points register the passes (either flag alone is enough to
/// run them); once is enough.
static void registerTxPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] { mlir::tx::registerTxPasses(); });
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TxDialect", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            mlir::tx::registerTxDialect(*registry);
            registerTxPassesOnce();
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TxPasses", LLVM_VERSION_STRING,
          [] { registerTxPassesOnce(); }};
}
