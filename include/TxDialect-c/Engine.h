/*===- TxDialect-c/Engine.h - tx as a compiler backend -------------*- C -*-===*\
|*                                                                            *|
|* The engine-level C API: what an inference engine needs from tx, with no    *|
|* MLIR types in the interface. Every call validates its arguments and        *|
|* returns a TxStatus; on failure txGetLastError() says why (diagnostics with *|
|* their locations). Nothing here aborts on bad input.                        *|
|*                                                                            *|
|* Ownership: txContextCreate / txModuleParse / txModuleCompileCpu return     *|
|* objects the caller destroys. A module keeps its context alive, so the      *|
|* destroy calls may come in any order. Strings returned through `char **`    *|
|* are freed with txStringDestroy. One context is used by one thread at a     *|
|* time.                                                                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TXDIALECT_C_ENGINE_H
#define TXDIALECT_C_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define TX_CAPI_EXPORTED __declspec(dllexport)
#else
#define TX_CAPI_EXPORTED __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum TxStatus {
  TX_OK = 0,
  TX_ERROR_INVALID_ARGUMENT = 1, /* NULL pointer, bad buffer, bad value */
  TX_ERROR_PARSE = 2,            /* malformed or invalid IR */
  TX_ERROR_PIPELINE = 3,         /* unknown pipeline, pass or option */
  TX_ERROR_PASS_FAILED = 4,      /* a pass or the export reported an error */
  TX_ERROR_EXECUTION = 5,        /* CPU compilation or invocation failed */
  TX_ERROR_UNSUPPORTED = 6       /* not available in this build */
} TxStatus;

typedef struct TxContext TxContext;
typedef struct TxModule TxModule;
typedef struct TxExecutable TxExecutable;

/* A short name for a status ("TX_ERROR_PARSE"). */
TX_CAPI_EXPORTED const char *txStatusGetName(TxStatus status);

/* The message of the last failed call on this thread ("" if none). Valid
 * until the next tx call on this thread. */
TX_CAPI_EXPORTED const char *txGetLastError(void);

/* Frees a string returned by this API (NULL is allowed). */
TX_CAPI_EXPORTED void txStringDestroy(char *str);

/*===--------------------------------------------------------------------===*
 * Contexts
 *===--------------------------------------------------------------------===*/

/* A context with tx and every upstream dialect, pass and pipeline. */
TX_CAPI_EXPORTED TxStatus txContextCreate(TxContext **outContext);
TX_CAPI_EXPORTED void txContextDestroy(TxContext *context);

/* Every diagnostic (errors, warnings, remarks, notes) emitted by the last
 * call on this context, one per line as `file:line:col: severity: message`.
 * Remarks from a successful pipeline (e.g. refused fusions) are here. The
 * string is owned by the context and valid until its next call. */
TX_CAPI_EXPORTED const char *txContextGetDiagnostics(const TxContext *context);

/*===--------------------------------------------------------------------===*
 * Modules
 *===--------------------------------------------------------------------===*/

/* Parses and verifies `text` (NUL-terminated); `sourceName` (may be NULL)
 * names the buffer in locations. */
TX_CAPI_EXPORTED TxStatus txModuleParse(TxContext *context, const char *text,
                                        const char *sourceName,
                                        TxModule **outModule);
TX_CAPI_EXPORTED void txModuleDestroy(TxModule *module);

/* Prints the module in MLIR's textual form (`generic` != 0: generic form). */
TX_CAPI_EXPORTED TxStatus txModulePrint(TxModule *module, int generic,
                                        char **outText);

/* Runs the verifier. */
TX_CAPI_EXPORTED TxStatus txModuleVerify(TxModule *module);

/* Runs a textual pass pipeline, e.g. "tx-fusion,canonicalize" or
 * "builtin.module(func.func(cse))". Passes anchored on other ops than
 * builtin.module are nested implicitly, as with mlir-opt's --pass. */
TX_CAPI_EXPORTED TxStatus txModuleRunPipeline(TxModule *module,
                                              const char *pipeline);

/* Runs one registered pass or pipeline `name` with `numOptions` options
 * `keys[i]=values[i]` (e.g. "tx-fusion", {"tp-size"}, {"2"}). An unknown
 * name or option is TX_ERROR_PIPELINE. */
TX_CAPI_EXPORTED TxStatus txModuleRunNamedPipeline(
    TxModule *module, const char *name, const char *const *keys,
    const char *const *values, size_t numOptions);

/* The stacking maps of the merged layers as JSON (see
 * TxDialect/Transforms/StackingMaps.h), for tensor-parallel size tpSize. */
TX_CAPI_EXPORTED TxStatus txModuleExportStackingMaps(TxModule *module,
                                                     int64_t tpSize,
                                                     char **outJson);

/*===--------------------------------------------------------------------===*
 * CPU execution
 *===--------------------------------------------------------------------===*/

/* A dense f32 buffer in C (row-major) order owned by the caller; rank 0 is
 * a scalar (`shape` may then be NULL). */
typedef struct TxBuffer {
  float *data;
  const int64_t *shape;
  int64_t rank;
} TxBuffer;

/* Lowers a copy of the module with `pipeline` (NULL: "tx-to-cpu") and
 * JIT-compiles it. Weights are read from `weightsPath`: a directory of
 * `<tensor>.npy` files, a `.safetensors` file, a sharded checkpoint's
 * `model.safetensors.index.json`, or a directory holding
 * `model.safetensors[.index.json]`; when it is NULL they are pseudo-random
 * from `seed`. A missing or malformed checkpoint is
 * TX_ERROR_INVALID_ARGUMENT, a tensor missing from it or of another shape
 * TX_ERROR_EXECUTION (messages name the file and the tensor). The module
 * is not changed. */
TX_CAPI_EXPORTED TxStatus txModuleCompileCpu(TxModule *module,
                                             const char *pipeline,
                                             uint64_t seed,
                                             const char *weightsPath,
                                             TxExecutable **outExecutable);
/* The same on `device`: "cpu" (as txModuleCompileCpu), "emulator" (the
 * emulated CUDA device: `pipeline` NULL means tx-to-nvvm{format=llvm
 * math=polynomial cuda-toolkit=none}, the kernels run on the CPU, and a
 * kernel error (out of bounds, shared-memory race, deadlock) makes the
 * invocation fail as a failed runtime check does, with a message naming the
 * kernel, block and thread) or "cuda" (a GPU; pipeline
 * tx-to-nvvm). The device runtime library is found beside the library that
 * holds this API; an unknown device or a missing runtime is
 * TX_ERROR_INVALID_ARGUMENT. */
TX_CAPI_EXPORTED TxStatus txModuleCompileForDevice(
    TxModule *module, const char *device, const char *pipeline,
    uint64_t seed, const char *weightsPath,
    TxExecutable **outExecutable);
TX_CAPI_EXPORTED void txExecutableDestroy(TxExecutable *executable);

/* Calls public function `function` with `inputs` (copied). Its results are
 * kept in the executable until the next call (txExecutableGetResult). When
 * `outputs` is not NULL, `numOutputs` must be the result count and result i
 * is copied into outputs[i], whose shape must be the result's: a mismatch
 * (like an input of the wrong shape) is TX_ERROR_INVALID_ARGUMENT. */
TX_CAPI_EXPORTED TxStatus txExecutableInvoke(TxExecutable *executable,
                                             const char *function,
                                             const TxBuffer *inputs,
                                             size_t numInputs,
                                             TxBuffer *outputs,
                                             size_t numOutputs);

/* The results of the last txExecutableInvoke: their count, and a view of
 * result `index` (data and shape owned by the executable, valid until its
 * next call, which writes results of the same shapes into the same memory
 * instead of allocating it again). */
TX_CAPI_EXPORTED TxStatus txExecutableGetNumResults(TxExecutable *executable,
                                                    size_t *outNumResults);
TX_CAPI_EXPORTED TxStatus txExecutableGetResult(TxExecutable *executable,
                                                size_t index,
                                                TxBuffer *outResult);

#ifdef __cplusplus
}
#endif

#endif /* TXDIALECT_C_ENGINE_H */
