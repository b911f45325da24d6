//===- MLIRCAPI.cpp - MLIR's C API as a shared library ---------------------===//
//
// libTxMLIRCAPI.so has no code of its own: it is Debian's libMLIRCAPIIR.a,
// whole, over libMLIR.so (Debian ships no libMLIR-C.so). See
// cmake/TxCompiler.cmake for why it is not part of libTxCompiler.so.
//
//===----------------------------------------------------------------------===//
