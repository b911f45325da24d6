//===- ToolOptions.h - command lines of the tx tools ------------*- C++ -*-===//
//
// tx-run and tx-difftest behave as LLVM tools do: --help lists only their
// own options (and the generic --help, --version), and the backend options
// linked in with LLVM are not accepted either, so a stray one (--threads)
// is an error instead of a silent no-op.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_TOOLOPTIONS_H
#define TXDIALECT_EXECUTION_TOOLOPTIONS_H

#include "llvm/Support/CommandLine.h"

namespace mlir::tx {

/// Hides and unregisters every option outside `category` (and the generic
/// ones); call before llvm::cl::ParseCommandLineOptions.
void keepOnlyToolOptions(llvm::cl::OptionCategory &category);

} // namespace mlir::tx

#endif // TXDIALECT_EXECUTION_TOOLOPTIONS_H
