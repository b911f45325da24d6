//===- Engine.cpp - the engine-level tx C API -----------------------------===//
//
// Wraps MLIRContext/ModuleOp/PassManager behind opaque handles. Every entry
// point checks its arguments, collects the diagnostics of the call and turns
// failures into a TxStatus plus a thread-local message.
//
//===----------------------------------------------------------------------===//

#include "TxDialect-c/Dialects.h"
#include "TxDialect-c/Engine.h"

#include "TxDialect/Execution/SourceNames.h"
#include "TxDialect/InitAllTx.h"
#include "TxDialect/Transforms/StackingMaps.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "EngineInternal.h"

using namespace mlir;

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static thread_local std::string lastError;

void tx::capi::clearLastError() { lastError.clear(); }

TxStatus tx::capi::fail(TxStatus status, const llvm::Twine &message) {
  lastError = llvm::StringRef(message.str()).rtrim().str();
  return status;
}

/// Fails with the error diagnostics of the call, or `fallback` when the
/// failure emitted none.
TxStatus tx::capi::failWithDiagnostics(TxContext *context, TxStatus status,
                                       const llvm::Twine &fallback) {
  if (context->errors.empty())
    return fail(status, fallback);
  return fail(status, context->errors);
}

char *tx::capi::copyString(llvm::StringRef str) {
  char *out = static_cast<char *>(std::malloc(str.size() + 1));
  if (!out)
    return nullptr;
  std::memcpy(out, str.data(), str.size());
  out[str.size()] = '\0';
  return out;
}

const char *txStatusGetName(TxStatus status) {
  switch (status) {
  case TX_OK:
    return "TX_OK";
  case TX_ERROR_INVALID_ARGUMENT:
    return "TX_ERROR_INVALID_ARGUMENT";
  case TX_ERROR_PARSE:
    return "TX_ERROR_PARSE";
  case TX_ERROR_PIPELINE:
    return "TX_ERROR_PIPELINE";
  case TX_ERROR_PASS_FAILED:
    return "TX_ERROR_PASS_FAILED";
  case TX_ERROR_EXECUTION:
    return "TX_ERROR_EXECUTION";
  case TX_ERROR_UNSUPPORTED:
    return "TX_ERROR_UNSUPPORTED";
  }
  return "TX_UNKNOWN_STATUS";
}

const char *txGetLastError(void) { return lastError.c_str(); }

void txStringDestroy(char *str) { std::free(str); }

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

/// `file:line:col` for file locations (as mlir-opt prints them), the MLIR
/// form of the location otherwise.
static void printLocation(Location loc, llvm::raw_ostream &os) {
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>()) {
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn();
    return;
  }
  loc.print(os);
}

static llvm::StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    return "note";
  }
  return "diagnostic";
}

static void printDiagnostic(Diagnostic &diag, llvm::raw_ostream &os) {
  printLocation(diag.getLocation(), os);
  os << ": " << severityName(diag.getSeverity()) << ": " << diag << "\n";
  for (Diagnostic &note : diag.getNotes())
    printDiagnostic(note, os);
}

static DialectRegistry makeRegistry() {
  DialectRegistry registry;
  tx::registerAllTxDialects(registry);
  return registry;
}

TxContext::TxContext() : mlirContext(makeRegistry()) {
  mlirContext.getDiagEngine().registerHandler([this](Diagnostic &diag) {
    llvm::raw_string_ostream os(diagnostics);
    printDiagnostic(diag, os);
    if (diag.getSeverity() == DiagnosticSeverity::Error) {
      llvm::raw_string_ostream errorOs(errors);
      printDiagnostic(diag, errorOs);
    }
    return success();
  });
}

void TxContext::beginCall() {
  lastError.clear();
  diagnostics.clear();
  errors.clear();
}

void TxContext::release() {
  if (--refCount == 0)
    delete this;
}

TxStatus txContextCreate(TxContext **outContext) {
  lastError.clear();
  if (!outContext)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txContextCreate: outContext is NULL");
  txRegisterAllPasses();
  *outContext = new TxContext();
  return TX_OK;
}

void txContextDestroy(TxContext *context) {
  if (context)
    context->release();
}

const char *txContextGetDiagnostics(const TxContext *context) {
  return context ? context->diagnostics.c_str() : "";
}

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

TxModule::TxModule(TxContext *context, OwningOpRef<ModuleOp> module)
    : context(context), module(std::move(module)) {
  ++context->refCount;
}

TxModule::~TxModule() {
  module = nullptr; // Before the context that owns its storage.
  context->release();
}

TxStatus txModuleParse(TxContext *context, const char *text,
                       const char *sourceName, TxModule **outModule) {
  lastError.clear();
  if (outModule)
    *outModule = nullptr;
  if (!context)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txModuleParse: context is NULL");
  if (!text)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txModuleParse: text is NULL");
  if (!outModule)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txModuleParse: outModule is NULL");
  context->beginCall();
  // Function arguments keep their SSA names (in their locations), for the
  // runner's messages.
  OwningOpRef<ModuleOp> module = tx::parseModuleNamingArguments(
      text, sourceName ? sourceName : "<string>", &context->mlirContext);
  if (!module)
    return tx::capi::failWithDiagnostics(context, TX_ERROR_PARSE,
                                         "txModuleParse: cannot parse module");
  *outModule = new TxModule(context, std::move(module));
  return TX_OK;
}

void txModuleDestroy(TxModule *module) { delete module; }

TxStatus txModulePrint(TxModule *module, int generic, char **outText) {
  lastError.clear();
  if (!module)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txModulePrint: module is NULL");
  if (!outText)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txModulePrint: outText is NULL");
  module->context->beginCall();
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  module->module->print(os, flags);
  *outText = tx::capi::copyString(text);
  return TX_OK;
}

TxStatus txModuleVerify(TxModule *module) {
  lastError.clear();
  if (!module)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txModuleVerify: module is NULL");
  module->context->beginCall();
  if (failed(verify(*module->module)))
    return tx::capi::failWithDiagnostics(module->context, TX_ERROR_PARSE,
                                         "txModuleVerify: invalid module");
  return TX_OK;
}

llvm::Error tx::capi::addPipelineText(OpPassManager &pm,
                                      llvm::StringRef pipeline) {
  std::string errors;
  MlirLogicalResult parsed = mlirOpPassManagerAddPipeline(
      wrap(&pm), wrap(pipeline),
      [](MlirStringRef text, void *errors) {
        static_cast<std::string *>(errors)->append(text.data, text.length);
      },
      &errors);
  if (mlirLogicalResultIsFailure(parsed))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), errors);
  return llvm::Error::success();
}

/// Parses `pipeline` into a module-level pass manager and runs it.
static TxStatus runPipeline(TxModule *module, llvm::StringRef pipeline,
                            llvm::StringRef caller) {
  module->context->beginCall();
  pipeline = pipeline.trim();
  // The explicit form names the root; the pass manager below is that root.
  if (pipeline.consume_front("builtin.module(")) {
    if (!pipeline.consume_back(")"))
      return tx::capi::fail(TX_ERROR_PIPELINE,
                            caller + ": unbalanced 'builtin.module(' in '" +
                                pipeline + "'");
  }
  PassManager pm(&module->context->mlirContext, ModuleOp::getOperationName(),
                 OpPassManager::Nesting::Implicit);
  if (llvm::Error e = tx::capi::addPipelineText(pm, pipeline))
    return tx::capi::fail(TX_ERROR_PIPELINE,
                          caller + ": invalid pipeline '" + pipeline +
                              "': " + llvm::toString(std::move(e)));
  if (failed(pm.run(*module->module)))
    return tx::capi::failWithDiagnostics(
        module->context, TX_ERROR_PASS_FAILED,
        caller + ": pipeline '" + pipeline + "' failed");
  return TX_OK;
}

TxStatus txModuleRunPipeline(TxModule *module, const char *pipeline) {
  lastError.clear();
  if (!module)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txModuleRunPipeline: module is NULL");
  if (!pipeline)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txModuleRunPipeline: pipeline is NULL");
  return runPipeline(module, pipeline, "txModuleRunPipeline");
}

TxStatus txModuleRunNamedPipeline(TxModule *module, const char *name,
                                  const char *const *keys,
                                  const char *const *values,
                                  size_t numOptions) {
  lastError.clear();
  llvm::StringRef caller = "txModuleRunNamedPipeline";
  if (!module)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": module is NULL");
  if (!name)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT, caller + ": name is NULL");
  if (numOptions && (!keys || !values))
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": keys or values is NULL");
  llvm::StringRef nameRef(name);
  // One registered pass or pipeline: its name alone parses.
  OpPassManager probe(ModuleOp::getOperationName(),
                      OpPassManager::Nesting::Implicit);
  bool known = !nameRef.empty() &&
               nameRef.find_first_of(",(){}= \t\n") == llvm::StringRef::npos;
  if (known) {
    llvm::Error e = tx::capi::addPipelineText(probe, nameRef);
    known = !e;
    llvm::consumeError(std::move(e));
  }
  if (!known)
    return tx::capi::fail(TX_ERROR_PIPELINE, caller +
                                                 ": unknown pass or pipeline '" +
                                                 nameRef + "'");
  std::string pipeline = nameRef.str();
  if (numOptions) {
    pipeline += "{";
    for (size_t i = 0; i < numOptions; ++i) {
      if (!keys[i] || !values[i])
        return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                              caller + ": option " + llvm::Twine(i) +
                                  " has a NULL key or value");
      llvm::StringRef key(keys[i]);
      if (key.empty() || key.find_first_of("={} ") != llvm::StringRef::npos)
        return tx::capi::fail(TX_ERROR_PIPELINE,
                              caller + ": invalid option name '" + key + "'");
      pipeline += (i ? " " : "") + key.str() + "=" + values[i];
    }
    pipeline += "}";
  }
  return runPipeline(module, pipeline, caller);
}

TxStatus txModuleExportStackingMaps(TxModule *module, int64_t tpSize,
                                    char **outJson) {
  lastError.clear();
  llvm::StringRef caller = "txModuleExportStackingMaps";
  if (!module)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": module is NULL");
  if (!outJson)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": outJson is NULL");
  *outJson = nullptr;
  if (tpSize < 1)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": tpSize must be at least 1, got " +
                              llvm::Twine(tpSize));
  module->context->beginCall();
  std::string json;
  llvm::raw_string_ostream os(json);
  if (failed(tx::exportStackingMaps(*module->module, tpSize, os)))
    return tx::capi::failWithDiagnostics(module->context, TX_ERROR_PASS_FAILED,
                                         caller + ": export failed");
  *outJson = tx::capi::copyString(json);
  return TX_OK;
}
