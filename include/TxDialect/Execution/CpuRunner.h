//===- CpuRunner.h - compile a tx module and call it in-process -*- C++ -*-===//
//
// "Compile this module for the CPU, call function F with these buffers."
//
//   mlir::MLIRContext ctx;                     // any context; the runner adds
//   auto module = parseSourceFile<ModuleOp>(...);  // what it needs
//   tx::CpuRunnerOptions opts;                 // tx-to-cpu, seed 0
//   auto runner = tx::CpuRunner::compile(*module, opts);
//   if (!runner) report(runner.takeError());
//   auto outs = (*runner)->call("forward", {x, cos, sin});
//
// The module is cloned and lowered with a pipeline the caller builds
// (default `tx-to-cpu`), then JIT-compiled by mlir::ExecutionEngine. Weights
// (the globals the tx-to-linalg conversion makes of tx.layer / tx.param) are
// bound by checkpoint tensor name: pseudo-random from a seed, or read from
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
#include "TxDialect/Pipelines/CpuPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
class OpPassManager;
namespace tx {
namespace detail {
struct Container;
class BufferCache;
class TaskCounter;
struct WeightStorage;
} // namespace detail

//===----------------------------------------------------------------------===//
// The runner
//===----------------------------------------------------------------------===//

/// What one argument or result of a function is: a memref of `shape`
/// (ShapedType::kDynamic for dynamic dims) or, with `isScalar`, an f32 value
/// or (`intWidth` > 0) an integer one (i1 for a flag, index as 64 bits), or
/// (`isContainer`) a `!tx.container`, which takes no input: the runner
/// passes its own container of that argument's name.
struct ValueInfo {
  std::vector<int64_t> shape;
  bool isScalar = false;
  std::string typeString; // as MLIR prints it
  ElementType element = ElementType::F32;
  unsigned intWidth = 0;
  bool isContainer = false;
  /// The argument's name in the source (`%name`), or "arg<i>".
  std::string name;
  /// An f32 buffer argument the function provably never writes (no op of
  /// it may write memory aliasing the argument, TxAliasAnalysis): the
  /// runner passes the caller's data in place of a copy.
  bool readOnly = false;
};
struct FunctionSignature {
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> results;
};

/// Adds a lowering to `pm`, a pass manager on builtin.module; an error
/// meant for the user when it cannot (pipeline text that does not parse).
using PipelineBuilder = std::function<llvm::Error(OpPassManager &pm)>;

struct CpuRunnerOptions {
  /// The lowering run on (a clone of) the module; none: tx-to-cpu with its
  /// default options (buildTxToCPUPipeline). It must produce the LLVM
  /// dialect with `llvm.emit_c_interface` on the functions to call
  /// (tx-to-cpu does). The runner registers no pass: a host that takes
  /// pipeline text parses it in its builder (tx-run --pipeline=...).
  PipelineBuilder pipeline;
  /// The lowering as messages name it, e.g. "tx-to-cpu" or the user's
  /// pipeline text.
  std::string pipelineName = kTxToCPUPipelineName.str();
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
  /// Keep the large buffers (>= 128 KiB) the JIT'ed code frees and hand
  /// them out again in later calls, instead of returning them to the C
  /// library (which unmaps them, so that every call faults their pages in
  /// again). At most the runner's peak of live buffers is kept; all is
  /// freed with the runner. Off: every buffer is malloc'ed and freed.
  bool bufferCache = true;
  /// Testing only, UNSAFE: every f32 buffer input is passed in place, also
  /// one the function writes (ValueInfo::readOnly taken as true), to show
  /// that the tests catch a wrong read-only answer.
  bool testUnsafeInputsInPlace = false;
};

/// What a runner's buffer cache did over its life (CpuRunnerOptions::
/// bufferCache; counted the same when it is off, which only keeps nothing).
struct BufferCacheStats {
  /// Large allocations served from kept buffers / from the C library.
  uint64_t fromCache = 0, fromSystem = 0;
  /// Buffers given back to the C library (evicted, or freed with the cache
  /// off).
  uint64_t returnedBlocks = 0;
  /// Bytes of freed buffers kept now, and the most bytes of large buffers
  /// allocated at once (the bound of what is kept).
  uint64_t keptBytes = 0, peakLiveBytes = 0;
};

/// Where the memory of a runner's host weight globals is: storage the
/// runner allocates (lazily zero pages, filled by bindWeights), or the
/// JIT's image of the module (a global the runner could not move out, e.g.
/// one with a nonzero initializer). Globals the lowering dropped are in
/// neither.
struct WeightStorageStats {
  uint64_t runnerGlobals = 0, runnerBytes = 0;
  uint64_t imageGlobals = 0, imageBytes = 0;
};

class CpuRunner {
public:
  /// Lowers a clone of `module` with `options.pipeline`, JIT-compiles it and
  /// binds the weights. `module` is not modified; its context gets the
  /// dialects and translations the runner needs.
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
  /// buffers the call allocated before the check are freed with the runner
  /// when they are large, BufferCacheStats, and never when small.)
  llvm::Expected<std::vector<Tensor>> call(llvm::StringRef name,
                                           const std::vector<Tensor> &inputs);
  /// As `call`, the results written into `results` (resized to the result
  /// count): a tensor already of its result's shape keeps its storage, so
  /// that repeated calls of one shape allocate no result memory (a fresh
  /// tensor of a large result costs a page fault per 4 KB, and zeroing).
  /// On an error, what `results` holds is unspecified.
  llvm::Error callInto(llvm::StringRef name, const std::vector<Tensor> &inputs,
                       std::vector<Tensor> &results);
  /// (In `call`, `inputs` has one tensor per argument that is not a
  /// container: integer arguments take a rank-0 tensor holding an integer,
  /// 0 or 1 for an i1. A container argument gets the runner's container of
  /// its name, created empty at its first call and kept across calls, so
  /// that one call can read what an earlier one stored.)

  /// Empties the runner's containers.
  void clearContainers();
  /// One value a container holds: `container[index][slot]`.
  struct ContainerValue {
    std::string container; // the argument's name
    int64_t index = 0, slot = 0;
    Tensor value;          // converted to f32
  };
  /// What the runner's containers hold now, by name, index and slot.
  std::vector<ContainerValue> containerContents() const;

  /// Refills every weight from `source`: the module's weight globals, or,
  /// for a module lowered with tx-to-nvvm{memory=device}, its
  /// device-resident weights directly, one checkpoint tensor at a time.
  llvm::Error bindWeights(const WeightSource &source);
  /// Frees the device memory of a tx-to-nvvm module's resident weights now
  /// (also done when the runner is destroyed); a call after it fails with
  /// an error saying so. Nothing for a module without device weights.
  llvm::Error releaseDeviceWeights();
  /// Bytes of weights the JIT'ed module holds on the host (its weight
  /// globals), as of the last bindWeights: 0 when every weight lives on
  /// the device only.
  uint64_t hostWeightBytes() const { return hostWeightBytesHeld; }
  /// The most host bytes held at once to write device-only weights (one
  /// checkpoint tensor and its element-type copy), over the runner's life.
  uint64_t weightStagingPeakBytes() const { return weightStagingPeak; }
  const std::vector<WeightBinding> &weights() const { return bindings; }

  /// Seconds spent lowering and JIT-compiling, including the weight binding
  /// of `compile` (weightLoadSeconds).
  double compileSeconds() const { return compileTime; }
  /// With a module lowered with tx-to-cpu{profile=true}: the time of each
  /// tx op and function over the calls so far (empty otherwise).
  std::vector<OpProfile> profile() const;
  /// Forgets the calls so far (e.g. the warm-up call).
  void resetProfile();

  /// The buffer cache's counts (CpuRunnerOptions::bufferCache).
  BufferCacheStats bufferCacheStats() const;
  /// Async tasks (tx-to-cpu{threads=N}) the module's calls started.
  uint64_t asyncTasksStarted() const;
  /// ExecutionEngines of runners alive in the process: a destroyed runner
  /// destroys its engine once its async tasks have all returned.
  static int64_t liveEngines();

  /// Of compileSeconds, the seconds `compile` spent binding the weights
  /// (reading or generating them and storing them into the globals).
  double weightLoadSeconds() const { return weightLoadTime; }
  /// Of compileSeconds, the seconds of the lowering pipeline, and of the
  /// JIT (translation to LLVM IR, optimisation, code generation, linking).
  double loweringSeconds() const { return loweringTime; }
  double jitSeconds() const { return jitTime; }
  /// Where the weight globals' memory is (WeightStorageStats).
  WeightStorageStats weightStorageStats() const;

private:
  CpuRunner();
  /// Where the JIT'ed code's large buffers come from and go to (outlives
  /// the engine).
  std::unique_ptr<detail::BufferCache> bufferCache;
  /// The async tasks the module's code started and that have not returned.
  std::shared_ptr<detail::TaskCounter> asyncTasks;
  std::unique_ptr<ExecutionEngine> engine;
  std::vector<std::pair<std::string, FunctionSignature>> signatures;
  std::vector<WeightBinding> bindings;
  /// The lowered module's `tx.runtime_checks` messages (TxToLinalg.h).
  ArrayAttr runtimeChecks;
  double compileTime = 0;
  double weightLoadTime = 0;
  double loweringTime = 0, jitTime = 0;
  /// The memory of the weight globals, allocated by the runner rather than
  /// by the JIT (outlives the engine).
  std::unique_ptr<detail::WeightStorage> weightStorage;
  uint64_t hostWeightBytesHeld = 0;
  uint64_t weightStagingPeak = 0;
  /// Of a module lowered with profile=true (Profile.h).
  std::unique_ptr<detail::ProfileCounters> profileCounters;
  /// The containers passed to container arguments, by argument name.
  std::map<std::string, std::unique_ptr<detail::Container>> containers;
};

} // namespace tx
} // namespace mlir

#endif // TXDIALECT_EXECUTION_CPURUNNER_H
