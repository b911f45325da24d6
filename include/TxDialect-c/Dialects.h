/*===- TxDialect-c/Dialects.h - tx dialect in MLIR's C API ---------*- C -*-===*\
|*                                                                            *|
|* The upstream-style half of the tx C API: a dialect handle and the          *|
|* registration calls, for programs that already speak MLIR's C API (the      *|
|* mlir-c functions are part of libTxCompiler.so).                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TXDIALECT_C_DIALECTS_H
#define TXDIALECT_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mlirGetDialectHandle__tx__(): the tx dialect alone. */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Tx, tx);

/* Inserts tx and every upstream dialect and extension into `registry`. */
MLIR_CAPI_EXPORTED void txRegisterAllDialects(MlirDialectRegistry registry);

/* Registers every tx pass and pipeline plus every upstream pass, globally
 * (idempotent), so that mlirParsePassPipeline knows them. */
MLIR_CAPI_EXPORTED void txRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* TXDIALECT_C_DIALECTS_H */
