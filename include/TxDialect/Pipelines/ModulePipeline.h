//===- ModulePipeline.h - register a pipeline that runs on modules -*- C++ -*-===//
//
// The tx pipelines (tx-fusion, tx-sp, tx-to-cpu, tx-to-nvvm) are made of
// passes anchored on builtin.module. Upstream's PassPipelineRegistration
// adds them to whatever pass manager the textual pipeline nests them in, and
// a module pass added under `func.func(...)` is a fatal error ("did you
// intend to nest?") that aborts the process. Registered through
// `registerModulePipeline`, such a pipeline is a parse error instead:
//
//   tx-to-cpu must run on builtin.module, not func.func
//
// Header-only: every library that registers a pipeline includes it, and none
// has to link another for it.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_PIPELINES_MODULEPIPELINE_H
#define TXDIALECT_PIPELINES_MODULEPIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <functional>
#include <string>

namespace mlir::tx {

/// Fails through `errorHandler` when `pm` is anchored on an operation other
/// than builtin.module (an op-agnostic pass manager is accepted: the pass
/// manager checks the anchor when it runs, with a diagnostic).
inline LogicalResult
checkModulePipelineAnchor(OpPassManager &pm, StringRef pipeline,
                          function_ref<LogicalResult(const Twine &)>
                              errorHandler) {
  std::optional<StringRef> anchor = pm.getOpName();
  if (!anchor || *anchor == ModuleOp::getOperationName())
    return success();
  return errorHandler(Twine(pipeline) + " must run on " +
                      ModuleOp::getOperationName() + ", not " + *anchor);
}

/// PassPipelineRegistration<Options> for a pipeline of module passes: the
/// same options parsing and help, plus the anchor check above.
template <typename Options>
void registerModulePipeline(
    StringRef arg, StringRef description,
    std::function<void(OpPassManager &, const Options &)> builder) {
  std::string name = arg.str();
  registerPassPipeline(
      arg, description,
      [name, builder](OpPassManager &pm, StringRef optionsStr,
                      function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        if (failed(checkModulePipelineAnchor(pm, name, errorHandler)))
          return failure();
        Options options;
        if (failed(options.parseFromString(optionsStr)))
          return failure();
        builder(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

/// A pipeline of module passes whose options are those of one of its passes,
/// `optionsPass`, parsed by that pass itself (no mirrored options struct):
/// `build(pm, optionsPass)` adds it and the pipeline's other passes.
/// `--help` lists no options under the pipeline; its description names the
/// pass whose options it takes.
inline void registerModulePassPipeline(
    StringRef arg, StringRef description,
    std::function<std::unique_ptr<Pass>()> createOptionsPass,
    std::function<void(OpPassManager &, std::unique_ptr<Pass>)> build) {
  std::string name = arg.str();
  registerPassPipeline(
      arg, description,
      [name, createOptionsPass,
       build](OpPassManager &pm, StringRef optionsStr,
              function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        if (failed(checkModulePipelineAnchor(pm, name, errorHandler)))
          return failure();
        std::unique_ptr<Pass> pass = createOptionsPass();
        if (failed(pass->initializeOptions(optionsStr, errorHandler)))
          return failure();
        build(pm, std::move(pass));
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)>) {});
}

} // namespace mlir::tx

#endif // TXDIALECT_PIPELINES_MODULEPIPELINE_H
