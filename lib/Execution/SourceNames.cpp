//===- SourceNames.cpp - parse a module keeping argument names -----------===//

#include "TxDialect/Execution/SourceNames.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

OwningOpRef<ModuleOp>
tx::parseModuleNamingArguments(llvm::SourceMgr &sourceMgr,
                               MLIRContext *context) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  ParserConfig config(context);
  if (isBytecode(*buffer))
    return parseSourceFile<ModuleOp>(sourceMgr, config);
  Location fileLoc =
      FileLineColLoc::get(context, buffer->getBufferIdentifier(), 0, 0);
  Block block;
  AsmParserState state;
  if (failed(parseAsmSourceFile(sourceMgr, &block, config, &state)))
    return {};
  for (const AsmParserState::BlockDefinition &def : state.getBlockDefs()) {
    Block *b = def.block;
    if (!b || !b->isEntryBlock() ||
        !isa_and_nonnull<FunctionOpInterface>(b->getParentOp()))
      continue;
    for (auto [arg, source] : llvm::zip(b->getArguments(), def.arguments)) {
      const char *start = source.loc.Start.getPointer();
      const char *end = source.loc.End.getPointer();
      if (!start || end <= start || isa<NameLoc>(arg.getLoc()))
        continue;
      StringRef name(start, end - start);
      name.consume_front("%");
      if (name.empty())
        continue;
      arg.setLoc(NameLoc::get(StringAttr::get(context, name), arg.getLoc()));
    }
  }
  return mlir::detail::constructContainerOpForParserIfNecessary<ModuleOp>(
      &block, context, fileLoc);
}

OwningOpRef<ModuleOp> tx::parseModuleNamingArguments(StringRef text,
                                                     StringRef sourceName,
                                                     MLIRContext *context) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, sourceName,
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  return parseModuleNamingArguments(sourceMgr, context);
}
