/* The tx C API from plain C: the upstream-style dialect handle and every
 * engine call, with the bad inputs each must reject without crashing.
 *
 * RUN: tx-capi-test %tx_src_root/examples/llama_decoder_layer.mlir 2>/dev/null | FileCheck %s
 */

#include "TxDialect-c/Dialects.h"
#include "TxDialect-c/Engine.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *readFile(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)size + 1);
  if (fread(text, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    free(text);
    return NULL;
  }
  text[size] = '\0';
  fclose(f);
  return text;
}

/* Prints `label: STATUS: message` so FileCheck pins status and text. */
static void report(const char *label, TxStatus status) {
  printf("%s: %s: %s\n", label, txStatusGetName(status),
         status == TX_OK ? "" : txGetLastError());
}

/* Counts the lines of `text` that contain `needle`. */
static int countLines(const char *text, const char *needle) {
  int count = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
    ++count;
  return count;
}

static void testDialectHandle(void) {
  printf("== dialect handle\n");
  MlirContext ctx = mlirContextCreate();
  MlirDialectHandle handle = mlirGetDialectHandle__tx__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(handle);
  printf("namespace: %.*s\n", (int)ns.length, ns.data);
  mlirDialectHandleRegisterDialect(handle, ctx);
  MlirDialect dialect = mlirDialectHandleLoadDialect(handle, ctx);
  printf("loaded: %d\n", !mlirDialectIsNull(dialect));
  const char *text = "module {\n"
                     "  tx.layer @q_proj : 64 -> 64, f32\n"
                     "}\n";
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(text));
  printf("parsed with handle: %d\n", !mlirModuleIsNull(module));
  if (!mlirModuleIsNull(module))
    mlirModuleDestroy(module);
  mlirContextDestroy(ctx);

  /* Everything at once, and a tx pipeline through upstream's pass manager. */
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  txRegisterAllDialects(registry);
  txRegisterAllPasses();
  ctx = mlirContextCreate();
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  module = mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(text));
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm, mlirStringRefCreateFromCString("builtin.module(tx-fusion)"), NULL,
      NULL);
  printf("tx-fusion via mlir-c: %d\n", mlirLogicalResultIsSuccess(parsed));
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  printf("ran: %d\n", mlirLogicalResultIsSuccess(ran));
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
}

// CHECK-LABEL: == dialect handle
// CHECK-NEXT: namespace: tx
// CHECK-NEXT: loaded: 1
// CHECK-NEXT: parsed with handle: 1
// CHECK-NEXT: tx-fusion via mlir-c: 1
// CHECK-NEXT: ran: 1

static void testBadArguments(TxContext *ctx) {
  printf("== bad arguments\n");
  TxModule *module = (TxModule *)0x1;
  report("create NULL", txContextCreate(NULL));
  report("parse NULL context", txModuleParse(NULL, "module {}", NULL, &module));
  printf("module cleared: %d\n", module == NULL);
  report("parse NULL text", txModuleParse(ctx, NULL, NULL, &module));
  report("parse NULL out", txModuleParse(ctx, "module {}", NULL, NULL));
  char *text = NULL;
  report("print NULL", txModulePrint(NULL, 0, &text));
  report("verify NULL", txModuleVerify(NULL));
  report("pipeline NULL module", txModuleRunPipeline(NULL, "canonicalize"));
  report("named NULL module",
         txModuleRunNamedPipeline(NULL, "tx-fusion", NULL, NULL, 0));
  report("export NULL", txModuleExportStackingMaps(NULL, 1, &text));
  /* Destroying NULL is a no-op. */
  txModuleDestroy(NULL);
  txContextDestroy(NULL);
  txStringDestroy(NULL);
  printf("diagnostics of NULL: '%s'\n", txContextGetDiagnostics(NULL));
}

// CHECK-LABEL: == bad arguments
// CHECK-NEXT: create NULL: TX_ERROR_INVALID_ARGUMENT: txContextCreate: outContext is NULL
// CHECK-NEXT: parse NULL context: TX_ERROR_INVALID_ARGUMENT: txModuleParse: context is NULL
// CHECK-NEXT: module cleared: 1
// CHECK-NEXT: parse NULL text: TX_ERROR_INVALID_ARGUMENT: txModuleParse: text is NULL
// CHECK-NEXT: parse NULL out: TX_ERROR_INVALID_ARGUMENT: txModuleParse: outModule is NULL
// CHECK-NEXT: print NULL: TX_ERROR_INVALID_ARGUMENT: txModulePrint: module is NULL
// CHECK-NEXT: verify NULL: TX_ERROR_INVALID_ARGUMENT: txModuleVerify: module is NULL
// CHECK-NEXT: pipeline NULL module: TX_ERROR_INVALID_ARGUMENT: txModuleRunPipeline: module is NULL
// CHECK-NEXT: named NULL module: TX_ERROR_INVALID_ARGUMENT: txModuleRunNamedPipeline: module is NULL
// CHECK-NEXT: export NULL: TX_ERROR_INVALID_ARGUMENT: txModuleExportStackingMaps: module is NULL
// CHECK-NEXT: diagnostics of NULL: ''

static void testMalformed(TxContext *ctx) {
  printf("== malformed\n");
  TxModule *module = NULL;
  report("syntax", txModuleParse(ctx, "module {\n  %x = \n}\n", "bad.mlir",
                                 &module));
  report("unknown op",
         txModuleParse(ctx, "module {\n  tx.no_such_op\n}\n", "bad.mlir",
                       &module));
  /* Parses, but the verifier rejects it: a located diagnostic too. */
  report("verifier",
         txModuleParse(ctx,
                       "module {\n  func.func @f() {\n"
                       "    %p = tx.get_param @missing : memref<4xf32>\n"
                       "    return\n  }\n}\n",
                       "bad.mlir", &module));
  printf("module is NULL: %d\n", module == NULL);
}

// CHECK-LABEL: == malformed
// CHECK-NEXT: syntax: TX_ERROR_PARSE: bad.mlir:2:7: error: expected operation name in quotes
// CHECK: unknown op: TX_ERROR_PARSE: bad.mlir:2:3: error: {{.*}}tx.no_such_op
// CHECK: verifier: TX_ERROR_PARSE: bad.mlir:3:10: error: 'tx.get_param' op {{.*}}missing
// CHECK: module is NULL: 1

static void testPipelines(TxContext *ctx, const char *llama) {
  printf("== pipelines\n");
  TxModule *module = NULL;
  report("parse llama", txModuleParse(ctx, llama, "llama.mlir", &module));
  report("verify", txModuleVerify(module));

  report("unknown pipeline",
         txModuleRunNamedPipeline(module, "tx-no-such-pipeline", NULL, NULL,
                                  0));
  const char *badKey[] = {"no-such-option"};
  const char *badValue[] = {"1"};
  report("unknown option",
         txModuleRunNamedPipeline(module, "tx-fusion", badKey, badValue, 1));
  const char *nullValue[] = {NULL};
  report("NULL option value",
         txModuleRunNamedPipeline(module, "tx-fusion", badKey, nullValue, 1));
  report("bad pipeline text", txModuleRunPipeline(module, "canonicalize,,("));
  report("unknown pass in text", txModuleRunPipeline(module, "tx-bogus"));

  report("canonicalize", txModuleRunPipeline(module, "canonicalize"));
  const char *keys[] = {"fusers"};
  const char *values[] = {"qkv,merged-column"};
  report("tx-fusion", txModuleRunNamedPipeline(module, "tx-fusion", keys,
                                               values, 1));
  /* The fusion's remarks are the diagnostics of that call. */
  const char *diags = txContextGetDiagnostics(ctx);
  const char *fused = strstr(diags, "fused 'q_proj'");
  if (fused) {
    const char *line = fused;
    while (line > diags && line[-1] != '\n')
      --line;
    printf("remark: %.*s\n", (int)(strchr(fused, '\n') - line), line);
  }
  char *text = NULL;
  report("print", txModulePrint(module, 0, &text));
  printf("q_proj left: %d\n", countLines(text, "@q_proj "));
  printf("merged linears: %d\n", countLines(text, "tx.linear @"));
  txStringDestroy(text);

  char *json = NULL;
  report("export tp 0", txModuleExportStackingMaps(module, 0, &json));
  report("export tp 2", txModuleExportStackingMaps(module, 2, &json));
  printf("json has ranks: %d\n", json && strstr(json, "\"ranks\"") != NULL);
  printf("json names q_proj: %d\n",
         json && strstr(json, "self_attn.q_proj") != NULL);
  txStringDestroy(json);

  /* The module keeps the context alive: destroy order does not matter. */
  txModuleDestroy(module);
}

// CHECK-LABEL: == pipelines
// CHECK-NEXT: parse llama: TX_OK
// CHECK-NEXT: verify: TX_OK
// CHECK-NEXT: unknown pipeline: TX_ERROR_PIPELINE: txModuleRunNamedPipeline: unknown pass or pipeline 'tx-no-such-pipeline'
// CHECK-NEXT: unknown option: TX_ERROR_PIPELINE: txModuleRunNamedPipeline: invalid pipeline 'tx-fusion{no-such-option=1}': {{.*}}no-such-option
// CHECK: NULL option value: TX_ERROR_INVALID_ARGUMENT: txModuleRunNamedPipeline: option 0 has a NULL key or value
// CHECK-NEXT: bad pipeline text: TX_ERROR_PIPELINE: txModuleRunPipeline: invalid pipeline 'canonicalize,,('
// CHECK: unknown pass in text: TX_ERROR_PIPELINE: txModuleRunPipeline: invalid pipeline 'tx-bogus': {{.*}}tx-bogus
// CHECK: canonicalize: TX_OK
// CHECK-NEXT: tx-fusion: TX_OK
// CHECK-NEXT: remark: llama.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: fused 'q_proj', 'k_proj', 'v_proj' into 'qkv_proj' (qkv)
// CHECK-NEXT: print: TX_OK
// CHECK-NEXT: q_proj left: 0
// CHECK-NEXT: merged linears: 4
// CHECK-NEXT: export tp 0: TX_ERROR_INVALID_ARGUMENT: txModuleExportStackingMaps: tpSize must be at least 1, got 0
// CHECK-NEXT: export tp 2: TX_OK
// CHECK-NEXT: json has ranks: 1
// CHECK-NEXT: json names q_proj: 1

static void testExecution(TxContext *ctx, const char *llama) {
  printf("== execution\n");
  TxModule *module = NULL;
  txModuleParse(ctx, llama, "llama.mlir", &module);
  TxExecutable *exe = NULL;
  report("compile NULL module", txModuleCompileCpu(NULL, NULL, 0, NULL, &exe));
  report("compile bad pipeline",
         txModuleCompileCpu(module, "tx-bogus", 0, NULL, &exe));
  report("compile", txModuleCompileCpu(module, NULL, 0, NULL, &exe));

  enum { T = 2 };
  float x[T * 64], cs[T * 8], sn[T * 8], out[T * 64];
  for (int i = 0; i < T * 64; ++i)
    x[i] = (float)((i % 7) - 3) / 4.0f;
  for (int i = 0; i < T * 8; ++i) {
    cs[i] = 1.0f;
    sn[i] = 0.0f;
  }
  int64_t xShape[] = {T, 64}, csShape[] = {T, 8}, badShape[] = {T, 63};
  TxBuffer inputs[3] = {{x, xShape, 2}, {cs, csShape, 2}, {sn, csShape, 2}};
  TxBuffer outputs[1] = {{out, xShape, 2}};
  report("invoke", txExecutableInvoke(exe, "forward", inputs, 3, outputs, 1));
  int finite = 1;
  for (int i = 0; i < T * 64; ++i)
    finite &= out[i] == out[i] && out[i] > -1e30f && out[i] < 1e30f;
  printf("finite: %d\n", finite);
  size_t numResults = 0;
  TxBuffer result = {NULL, NULL, 0};
  txExecutableGetNumResults(exe, &numResults);
  if (txExecutableGetResult(exe, 0, &result) == TX_OK && result.rank == 2)
    printf("results: %zu, rank %lld, %lldx%lld, same: %d\n", numResults,
           (long long)result.rank, (long long)result.shape[0],
           (long long)result.shape[1],
           memcmp(result.data, out, sizeof(out)) == 0);
  report("result out of range", txExecutableGetResult(exe, 1, &result));
  /* A call of the same shapes writes into the previous call's result
   * memory (no allocation), overwriting all of it: other inputs give other
   * numbers, the first inputs the first numbers again. */
  const void *firstData = result.data;
  float x2[T * 64];
  for (int i = 0; i < T * 64; ++i)
    x2[i] = x[i] * 2.0f + 0.5f;
  TxBuffer inputs2[3] = {{x2, xShape, 2}, {cs, csShape, 2}, {sn, csShape, 2}};
  txExecutableInvoke(exe, "forward", inputs2, 3, NULL, 0);
  txExecutableGetResult(exe, 0, &result);
  int differs = memcmp(result.data, out, sizeof(out)) != 0;
  report("invoke again", txExecutableInvoke(exe, "forward", inputs, 3, NULL, 0));
  txExecutableGetResult(exe, 0, &result);
  printf("result memory kept: %d, other inputs differ: %d, same again: %d\n",
         result.data == firstData, differs,
         memcmp(result.data, out, sizeof(out)) == 0);

  TxBuffer badInputs[3] = {{x, badShape, 2}, {cs, csShape, 2},
                           {sn, csShape, 2}};
  report("wrong input shape",
         txExecutableInvoke(exe, "forward", badInputs, 3, NULL, 0));
  report("too few inputs",
         txExecutableInvoke(exe, "forward", inputs, 2, NULL, 0));
  TxBuffer nullData[3] = {{NULL, xShape, 2}, {cs, csShape, 2},
                          {sn, csShape, 2}};
  report("NULL input data",
         txExecutableInvoke(exe, "forward", nullData, 3, NULL, 0));
  TxBuffer badOutputs[1] = {{out, badShape, 2}};
  report("wrong output shape",
         txExecutableInvoke(exe, "forward", inputs, 3, badOutputs, 1));
  /* Dynamic sizes that disagree (x has 2 tokens, cos 1) are checked when
   * the function runs, before anything reads past cos. */
  int64_t shortShape[] = {1, 8};
  TxBuffer shortCos[3] = {{x, xShape, 2}, {cs, shortShape, 2},
                          {sn, csShape, 2}};
  report("mismatched tokens",
         txExecutableInvoke(exe, "forward", shortCos, 3, NULL, 0));
  int64_t hugeShape[] = {(int64_t)1 << 40, (int64_t)1 << 40};
  TxBuffer huge[3] = {{x, hugeShape, 2}, {cs, csShape, 2}, {sn, csShape, 2}};
  report("huge input", txExecutableInvoke(exe, "forward", huge, 3, NULL, 0));
  report("unknown function",
         txExecutableInvoke(exe, "backward", inputs, 3, NULL, 0));
  report("invoke NULL", txExecutableInvoke(NULL, "forward", inputs, 3, NULL, 0));

  /* The same function on the emulated CUDA device: the GPU kernels run on
   * the CPU and give the CPU's numbers. */
  TxExecutable *emu = NULL;
  report("compile bad device",
         txModuleCompileForDevice(module, "tpu", NULL, 0, NULL, &emu));
  report("compile emulator",
         txModuleCompileForDevice(module, "emulator", NULL, 0, NULL, &emu));
  float emuOut[T * 64];
  TxBuffer emuOutputs[1] = {{emuOut, xShape, 2}};
  report("invoke emulator",
         txExecutableInvoke(emu, "forward", inputs, 3, emuOutputs, 1));
  float worst = 0;
  for (int i = 0; i < T * 64; ++i) {
    float d = emuOut[i] - out[i];
    d = d < 0 ? -d : d;
    worst = d > worst ? d : worst;
  }
  printf("emulator matches cpu: %d\n", worst < 1e-4f);
  txExecutableDestroy(emu);
  txExecutableDestroy(exe);
  txExecutableDestroy(NULL);
  txModuleDestroy(module);

  /* A kernel error on the emulated device is an error of the call, not the
   * end of the process. */
  static const char *outOfBounds =
      "func.func @oob(%buf: memref<16xf32>) -> memref<16xf32> {\n"
      "  %c1 = arith.constant 1 : index\n"
      "  %c32 = arith.constant 32 : index\n"
      "  %one = arith.constant 1.0 : f32\n"
      "  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)\n"
      "      threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {\n"
      "    %p = memref.reinterpret_cast %buf to offset: [0], sizes: [32], "
      "strides: [1] : memref<16xf32> to memref<32xf32, strided<[1]>>\n"
      "    memref.store %one, %p[%tx] : memref<32xf32, strided<[1]>>\n"
      "    gpu.terminator\n"
      "  }\n"
      "  return %buf : memref<16xf32>\n"
      "}\n";
  TxModule *bad = NULL;
  txModuleParse(ctx, outOfBounds, "oob.mlir", &bad);
  report("compile oob",
         txModuleCompileForDevice(bad, "emulator",
                                  "tx-to-nvvm{format=llvm math=polynomial "
                                  "cuda-toolkit=none deallocate=false}",
                                  0, NULL, &emu));
  float buf[16] = {0};
  int64_t bufShape[] = {16};
  TxBuffer bufInput[1] = {{buf, bufShape, 1}};
  report("invoke oob", txExecutableInvoke(emu, "oob", bufInput, 1, NULL, 0));
  txExecutableDestroy(emu);
  txModuleDestroy(bad);
}

// CHECK-LABEL: == execution
// CHECK-NEXT: compile NULL module: TX_ERROR_INVALID_ARGUMENT: txModuleCompileCpu: module is NULL
// CHECK-NEXT: compile bad pipeline: TX_ERROR_EXECUTION: txModuleCompileCpu: {{.*}}tx-bogus
// CHECK: compile: TX_OK
// CHECK-NEXT: invoke: TX_OK
// CHECK-NEXT: finite: 1
// CHECK-NEXT: results: 1, rank 2, 2x64, same: 1
// CHECK-NEXT: result out of range: TX_ERROR_INVALID_ARGUMENT: txExecutableGetResult: index 1 out of range (1 results)
// CHECK-NEXT: invoke again: TX_OK
// CHECK-NEXT: result memory kept: 1, other inputs differ: 1, same again: 1
// CHECK-NEXT: wrong input shape: TX_ERROR_INVALID_ARGUMENT: txExecutableInvoke: {{.*}}63
// CHECK: too few inputs: TX_ERROR_INVALID_ARGUMENT: txExecutableInvoke:
// CHECK: NULL input data: TX_ERROR_INVALID_ARGUMENT: txExecutableInvoke: input 0 has NULL data
// CHECK-NEXT: wrong output shape: TX_ERROR_INVALID_ARGUMENT: txExecutableInvoke: result 0 is 2x64xf32, output buffer is 2x63xf32
// CHECK-NEXT: mismatched tokens: TX_ERROR_INVALID_ARGUMENT: txExecutableInvoke: 'forward': runtime check failed: 'tx.rotary' at llama.mlir:{{[0-9]+}}:{{[0-9]+}}: input (the result of 'tx.view' at llama.mlir:{{.*}}) dim 0 = 2 but cos (argument 1 'cos') dim 0 = 1
// CHECK-NEXT: huge input: TX_ERROR_INVALID_ARGUMENT: txExecutableInvoke: input 0 has more than 4294967296 elements
// CHECK-NEXT: unknown function: TX_ERROR_INVALID_ARGUMENT: txExecutableInvoke: {{.*}}backward
// CHECK: invoke NULL: TX_ERROR_INVALID_ARGUMENT: txExecutableInvoke: executable is NULL
// CHECK-NEXT: compile bad device: TX_ERROR_INVALID_ARGUMENT: txModuleCompileForDevice: --device must be cpu, cuda or emulator, not 'tpu'
// CHECK-NEXT: compile emulator: TX_OK
// CHECK-NEXT: invoke emulator: TX_OK
// CHECK-NEXT: emulator matches cpu: 1
// CHECK-NEXT: compile oob: TX_OK
// CHECK-NEXT: invoke oob: TX_ERROR_INVALID_ARGUMENT: txExecutableInvoke: 'oob': device error: kernel 'oob_kernel', block (0,0,0), thread (16,0,0): out-of-bounds 4-byte store

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tx-capi-test <llama_decoder_layer.mlir>\n");
    return 2;
  }
  /* Unbuffered, so that a crash cannot hide what came before it. */
  setvbuf(stdout, NULL, _IONBF, 0);
  char *llama = readFile(argv[1]);
  if (!llama) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  testDialectHandle();
  TxContext *ctx = NULL;
  report("create", txContextCreate(&ctx));
  testBadArguments(ctx);
  testMalformed(ctx);
  testPipelines(ctx, llama);
  testExecution(ctx, llama);
  txContextDestroy(ctx);
  free(llama);
  printf("== done\n");
  return 0;
}

// CHECK-LABEL: == done
