//===- TextPipeline.h - the runner's lowering from pipeline text -*- C++ -*-===//
//
// tx-run --pipeline=... and tx-difftest --lowering=... take pass pipeline
// text from their user; the tools parse it (lib/ builds pipelines with the
// typed builders only), registering every tx and upstream pass first.
//
//===----------------------------------------------------------------------===//

#ifndef TX_TOOLS_TEXTPIPELINE_H
#define TX_TOOLS_TEXTPIPELINE_H

#include "TxDialect/Execution/CpuRunner.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::tx {

/// The runner's lowering for the pipeline text `text` (e.g.
/// "tx-fusion,tx-to-cpu{threads=2}"), named by that text in its messages;
/// text that does not parse is the builder's error, with the parser's
/// message.
inline void setTextPipeline(CpuRunnerOptions &options, std::string text) {
  options.pipelineName = text;
  options.pipeline = [text](OpPassManager &pm) -> llvm::Error {
    std::string errors;
    llvm::raw_string_ostream os(errors);
    if (failed(parsePassPipeline(text, pm, os)))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), errors);
    return llvm::Error::success();
  };
}

} // namespace mlir::tx

#endif // TX_TOOLS_TEXTPIPELINE_H
