//===- CpuRunner.h - compile a tx module and call it in-process -*- C++ -*-===//
//
// "Compile this module for the CPU, call function F with these buffers."
//
//   mlir::MLIRContext ctx;                     // any context; the runner adds
//   auto module = parseSourceFile<ModuleOp>(...);  // what it needs
//   tx::CpuRunnerOptions opts;                 // pipeline "tx-to-cpu", seed 0
//   auto runner = tx::CpuRunner::compile(*module, opts);
//   if (!runner) report(runner.takeError());
//   auto outs = (*runner)->call("forward", {x, cos, sin});
//
// The module is cloned and lowered with a textual pass pipeline (default
// `tx-to-cpu`), then JIT-compiled by mlir::ExecutionEngine. Weights (the
// globals the tx-to-linalg conversion makes of tx.layer / tx.param) are bound
// by checkpoint tensor name: pseudo-random from a seed, or read from
// `<dir>/<tensor name>.npy`. A merged layer's stacking map is honoured, so a
// fused module gets exactly the numbers of the unfused one.
//
// Errors are llvm::Error values with a message meant for the user (no
// exceptions): a missing function, wrong input count/shape/dtype, a missing
// or malformed weight file (naming the tensor), a pipeline that fails,
// dynamic sizes that do not agree when the function runs.
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_CPURUNNER_H
#define TXDIALECT_EXECUTION_CPURUNNER_H

#include "TxDialect/Execution/Elements.h"
#include "TxDialect/Execution/Npy.h"
#include "TxDialect/Execution/Profile.h"
#include "TxDialect/Execution/Tensor.h"
#include "TxDialect/Execution/Weights.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace tx {

//===----------------------------------------------------------------------===//
// The runner
//===----------------------------------------------------------------------===//

/// What one argument or result of a function is: a memref of `shape`
/// (ShapedType::kDynamic for dynamic dims) or, with `isScalar`, an f32 value.
struct ValueInfo {
  std::vector<int64_t> shape;
  bool isScalar = false;
  std::string typeString; // as MLIR prints it
  ElementType element = ElementType::F32;
};
struct FunctionSignature {
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> results;
};

struct CpuRunnerOptions {
  /// Textual pass pipeline run on (a clone of) the module, e.g.
  /// "tx-to-cpu" or "tx-fusion,tx-to-cpu{vectorize=false}". It must
  /// produce the LLVM dialect with `llvm.emit_c_interface` on the functions
  /// to call (tx-to-cpu does).
  std::string pipeline = "tx-to-cpu";
  /// LLVM optimisation level of the JIT (0-3).
  unsigned optLevel = 3;
  WeightSource weights;
  /// Shared libraries the JIT'ed code may call into.
  std::vector<std::string> sharedLibs;
  /// Extra runtime symbols (e.g. the collectives runtime's tx_rt_*),
  /// registered with ExecutionEngine::registerSymbols before anything is
  /// linked.
  std::function<llvm::orc::SymbolMap(llvm::orc::MangleAndInterner)>
      extraSymbols;
  /// Print the IR after the pipeline to stderr (debugging).
  bool dumpLowered = false;
};

class CpuRunner {
public:
  /// Lowers a clone of `module` with `options.pipeline`, JIT-compiles it and
  /// binds the weights. `module` is not modified; its context gets the
  /// dialects and translations the runner needs. The first call registers
  /// every tx and upstream pass unless `tx-to-cpu` is registered already (a
  /// host that calls tx::registerAllTxPasses must do so before).
  static llvm::Expected<std::unique_ptr<CpuRunner>>
  compile(ModuleOp module, const CpuRunnerOptions &options = {});
  ~CpuRunner();

  /// The signature of public function `name` as written in the input module.
  llvm::Expected<FunctionSignature> signature(llvm::StringRef name) const;

  /// Calls `name` with `inputs` (copied; the function may write them) and
  /// returns its results as contiguous tensors. Inputs must match the
  /// signature: count, rank, static dims, f32. Dynamic sizes the program
  /// needs to agree are checked as it runs (tx-to-linalg's runtime checks):
  /// a mismatch ends the call with an error naming the op, its location and
  /// both operands and sizes, e.g. "'tx.rotary' at m.mlir:9:10: input
  /// (argument 0 'x') dim 0 = 8 but cos (argument 1 'cos') dim 0 = 3". (The
  /// buffers the call allocated before the check are not freed.)
  llvm::Expected<std::vector<Tensor>> call(llvm::StringRef name,
                                           const std::vector<Tensor> &inputs);

  /// Refills every weight global from `source`.
  llvm::Error bindWeights(const WeightSource &source);
  const std::vector<WeightBinding> &weights() const { return bindings; }

  /// Seconds spent lowering and JIT-compiling, including the weight binding
  /// of `compile` (weightLoadSeconds).
  double compileSeconds() const { return compileTime; }
  /// With a module lowered with tx-to-cpu{profile=true}: the time of each
  /// tx op and function over the calls so far (empty otherwise).
  std::vector<OpProfile> profile() const;
  /// Forgets the calls so far (e.g. the warm-up call).
  void resetProfile();

  /// Of compileSeconds, the seconds `compile` spent binding the weights
  /// (reading or generating them and storing them into the globals).
  double weightLoadSeconds() const { return weightLoadTime; }

private:
  CpuRunner() = default;
  std::unique_ptr<ExecutionEngine> engine;
  std::vector<std::pair<std::string, FunctionSignature>> signatures;
  std::vector<WeightBinding> bindings;
  /// The lowered module's `tx.runtime_checks` messages (TxToLinalg.h).
  ArrayAttr runtimeChecks;
  double compileTime = 0;
  double weightLoadTime = 0;
  /// Of a module lowered with profile=true (Profile.h).
  std::unique_ptr<detail::ProfileCounters> profileCounters;
};

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_EXECUTION_CPURUNNER_H
