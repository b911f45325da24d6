//===- EngineInternal.h - the objects behind the C handles ------*- C++ -*-===//

#ifndef TXDIALECT_LIB_CAPI_ENGINEINTERNAL_H
#define TXDIALECT_LIB_CAPI_ENGINEINTERNAL_H

#include "TxDialect-c/Engine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

/// A context plus the diagnostics of its current call. Reference counted:
/// modules keep their context alive.
struct TxContext {
  TxContext();
  /// Clears the last error and the diagnostics before an API call.
  void beginCall();
  void release();

  mlir::MLIRContext mlirContext;
  std::string diagnostics; // Everything emitted during the current call.
  std::string errors;      // Its error diagnostics only.
  unsigned refCount = 1;
};

struct TxModule {
  TxModule(TxContext *context, mlir::OwningOpRef<mlir::ModuleOp> module);
  ~TxModule();

  TxContext *context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

namespace mlir::tx::capi {
/// Clears the thread's last error at the start of an API call.
void clearLastError();
/// Sets the thread's last error (trailing newlines trimmed) and returns
/// `status`.
TxStatus fail(TxStatus status, const llvm::Twine &message);
TxStatus failWithDiagnostics(TxContext *context, TxStatus status,
                             const llvm::Twine &fallback);
/// A malloc'ed copy, freed by txStringDestroy.
char *copyString(llvm::StringRef str);
/// Adds the passes of pipeline text `pipeline` (the caller's, e.g.
/// "tx-fusion,tx-to-cpu{threads=2}") to `pm`, parsed by MLIR's C API
/// (mlirOpPassManagerAddPipeline); the parser's message when it fails.
llvm::Error addPipelineText(mlir::OpPassManager &pm, llvm::StringRef pipeline);
} // namespace mlir::tx::capi

#endif // TXDIALECT_LIB_CAPI_ENGINEINTERNAL_H
