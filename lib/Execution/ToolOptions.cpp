//===- ToolOptions.cpp - command lines of the tx tools --------------------===//

#include "TxDialect/Execution/ToolOptions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace cl = llvm::cl;

void mlir::tx::keepOnlyToolOptions(cl::OptionCategory &category) {
  cl::HideUnrelatedOptions(category);
  // Hidden options are still accepted: remove the unrelated ones.
  llvm::SmallPtrSet<cl::Option *, 32> unrelated;
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.second->getOptionHiddenFlag() == cl::ReallyHidden &&
        !llvm::is_contained(entry.second->Categories, &category))
      unrelated.insert(entry.second);
  for (cl::Option *option : unrelated)
    option->removeArgument();
}
