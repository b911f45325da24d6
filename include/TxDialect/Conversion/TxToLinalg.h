//===- TxToLinalg.h - tx to linalg on buffers -------------------*- C++ -*-===//
//
// The conversion of tx to linalg/memref/arith/math, shared by the CPU
// pipeline (tx-to-cpu) and the GPU pipeline. Most users want the
// `tx-to-linalg` pass; the pieces are exposed so that another lowering can
// run them with its own conversion target.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_CONVERSION_TXTOLINALG_H
#define TXDIALECT_CONVERSION_TXTOLINALG_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
class ConversionTarget;
class RewritePatternSet;
namespace tx {

#define GEN_PASS_DECL
#include "TxDialect/Conversion/Passes.h.inc"

/// Names of the memref.global that hold a layer's weight / bias and a
/// parameter's value after the conversion.
std::string getWeightGlobalName(StringRef layer);
std::string getBiasGlobalName(StringRef layer);
std::string getParamGlobalName(StringRef param);

/// Attribute names carried by those globals: the checkpoint tensor that fills
/// it (StringAttr) and, for a merged layer, its stacking map (ArrayAttr of
/// #tx.stack) whose sources are checkpoint prefixes (`<source>.weight`,
/// `<source>.bias`).
inline constexpr StringLiteral kCheckpointAttrName = "tx.checkpoint";
inline constexpr StringLiteral kStackingAttrName = "tx.stacking";

/// Runtime checks. Where an op needs two dynamic sizes to agree (an
/// elementwise op's operands, rotary's tokens and cos/sin rows, attention's
/// key and value tokens, a linear's input features, a slice's extent, ...),
/// the lowered code compares them and, when they differ, calls
///
///   void tx_rt_check_failed(int64_t check, int64_t lhs, int64_t rhs);
///
/// which must not return (the runner's implementation ends the call with an
/// error; CpuRunner.h). `check` indexes the module's `tx.runtime_checks`
/// table (an ArrayAttr of StringAttr): a message naming the op, its location
/// and both operands and dimensions, with `{0}` and `{1}` standing for `lhs`
/// and `rhs`.
inline constexpr StringLiteral kRuntimeCheckFunctionName = "tx_rt_check_failed";
inline constexpr StringLiteral kRuntimeChecksAttrName = "tx.runtime_checks";

/// Containers (`!tx.container`, e.g. `shared_kv_states`) are opaque pointers
/// to a container object of the host (the runner keeps one per container
/// argument across calls); `tx.container_set` / `tx.container_get` call
///
///   void tx_rt_container_set(void *c, int64_t check, int64_t index,
///                            int64_t slot, int64_t count, int64_t dtype,
///                            int64_t rank, int64_t data, int64_t meta);
///   void tx_rt_container_get(void *c, int64_t check, int64_t index,
///                            int64_t slot, int64_t count, int64_t dtype,
///                            int64_t rank, int64_t meta);
///   void tx_rt_container_read(void *c, int64_t index, int64_t slot,
///                             int64_t data);
///
/// `set` replaces entry `index` (a tuple of `count` values) when `slot` is 0
/// and stores a copy of value `slot`: element type `dtype` (0 f32, 1 f16,
/// 2 bf16), `rank`, its aligned pointer `data` and `meta` pointing to
/// [offset, sizes..., strides...]. `get` checks that value `slot` of the
/// entry exists and has the type the op reads (`meta` points to its sizes,
/// -1 for dynamic ones) and writes the stored sizes to `meta`; `read` copies
/// it, contiguous, to `data`. A failed check must not return (as
/// tx_rt_check_failed; `check` indexes the runtime-check table, `{0}` being
/// the index).
inline constexpr StringLiteral kContainerSetFunctionName = "tx_rt_container_set";
inline constexpr StringLiteral kContainerGetFunctionName = "tx_rt_container_get";
inline constexpr StringLiteral kContainerReadFunctionName =
    "tx_rt_container_read";

/// The message of a failed check: `check`'s entry of `table` with the
/// values filled in ("check #N failed" when the table has no such entry).
std::string formatRuntimeCheckFailure(ArrayAttr table, int64_t check,
                                      int64_t lhs, int64_t rhs);

/// Creates a memref.global for every tx.layer and tx.param of `module` (next
/// to it), unless one of that name already exists. The tx symbols stay until
/// `eraseTxSymbols`.
void lowerTxSymbolsToGlobals(ModuleOp module);

/// Replaces every tx.guard by its constant value and erases the tx.layer_ref
/// ops left unused. Fails (with a diagnostic) on a layer reference used by
/// anything but a guard.
LogicalResult lowerTxGuards(ModuleOp module);

/// Erases tx.layer, tx.none_layer and tx.param once nothing refers to them.
void eraseTxSymbols(ModuleOp module);

/// Emits an error for every op in `module` that the conversion cannot lower
/// (opaque calls and, unless `allowCollectives`, collectives
/// over more than one rank). Succeeds when there is none.
LogicalResult checkTxLowerable(ModuleOp module, bool allowCollectives);

/// Patterns lowering tx compute, view, elementwise and single-rank collective
/// ops. Run after `lowerTxSymbolsToGlobals` (the patterns read the globals).
void populateTxToLinalgPatterns(RewritePatternSet &patterns);

/// Marks the ops the patterns lower illegal and their output legal. With
/// `allowCollectives`, collectives over more than one rank stay legal.
void configureTxToLinalgTarget(ConversionTarget &target,
                               bool allowCollectives);

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_CONVERSION_TXTOLINALG_H
