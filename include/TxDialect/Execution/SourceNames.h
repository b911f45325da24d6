//===- SourceNames.h - parse a module keeping argument names ----*- C++ -*-===//
//
// MLIR forgets SSA names when it parses. The runner's messages are clearer
// with them ("argument 2 'cos' dim 0 = 3"), so the tools parse through
// `parseModuleNamingArguments`, which gives every function argument a
// NameLoc with its source name (`%cos` -> "cos"). The name lives in the
// argument's location only: the IR and its printed form are unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_SOURCENAMES_H
#define TXDIALECT_EXECUTION_SOURCENAMES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::tx {

/// parseSourceFile<ModuleOp> of `sourceMgr`'s main buffer (diagnostics go to
/// the context's handlers), with the arguments of every function named after
/// their SSA names in the source (arguments whose location is a NameLoc
/// already keep it). A bytecode file is parsed as it is.
OwningOpRef<ModuleOp> parseModuleNamingArguments(llvm::SourceMgr &sourceMgr,
                                                 MLIRContext *context);

/// The same for a module in a string; `sourceName` names it in locations.
OwningOpRef<ModuleOp> parseModuleNamingArguments(StringRef text,
                                                 StringRef sourceName,
                                                 MLIRContext *context);

} // namespace mlir::tx

#endif // TXDIALECT_EXECUTION_SOURCENAMES_H
