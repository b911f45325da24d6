//===- CpuRunner.cpp - lower, JIT and call a tx module --------------------===//

#include "TxDialect/Execution/CpuRunner.h"
#include "AsyncTasks.h"
#include "BufferCache.h"
#include "Containers.h"
#include "RuntimeChecks.h"
#include "SplitOddBf16Memory.h"
#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/TxDialect.h"
#include "TxDialect/Conversion/TxToLinalg.h"
#include "TxDialect/Conversion/ProfileOps.h"
#include "TxDialect/InitAllTx.h"
#include "TxDialect/Pipelines/CpuPipeline.h"
#include "llvm/Support/DynamicLibrary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Memory.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <sys/mman.h>

using namespace mlir;
using namespace mlir::tx;
using llvm::createStringError;

static std::string typeToString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

static std::string shapeToString(ArrayRef<int64_t> shape,
                                 ElementType element) {
  std::string s;
  for (int64_t d : shape)
    s += (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d)) +
         "x";
  return s + (element == ElementType::F32   ? "f32"
              : element == ElementType::F16 ? "f16"
                                            : "bf16");
}

/// What the runner supports as an argument or result: f32, f16 and bf16
/// memrefs (16-bit ones converted from and to the f32 tensors), f32 and
/// integer scalars, containers (arguments only).
static llvm::Expected<ValueInfo> describe(Type t, StringRef func,
                                          StringRef what, unsigned index) {
  ValueInfo info;
  info.typeString = typeToString(t);
  if (auto mt = dyn_cast<MemRefType>(t)) {
    if (std::optional<ElementType> element =
            runnerElementType(mt.getElementType())) {
      info.shape.assign(mt.getShape().begin(), mt.getShape().end());
      info.element = *element;
      return info;
    }
  } else if (t.isF32()) {
    info.isScalar = true;
    return info;
  } else if (t.isIndex() || (t.isSignlessInteger() &&
                             t.getIntOrFloatBitWidth() <= 64)) {
    info.isScalar = true;
    info.intWidth = t.isIndex() ? 64 : t.getIntOrFloatBitWidth();
    return info;
  } else if (isa<ContainerType>(t) && what == "argument") {
    info.isContainer = true;
    return info;
  }
  return createStringError(std::errc::not_supported,
                           "function '%s': %s #%u has type %s; the CPU runner "
                           "passes f32, f16 and bf16 memrefs, f32 and integer "
                           "scalars and containers only",
                           func.str().c_str(), what.str().c_str(), index,
                           info.typeString.c_str());
}

static void initializeTargetOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

namespace {
/// Records the weight globals right after tx-to-linalg made them: the
/// pipeline may have rewritten the layers (fusion merges them), and after
/// the LLVM lowering the globals no longer carry their checkpoint names.
struct WeightCollector : public PassInstrumentation {
  std::optional<std::vector<WeightBinding>> bindings;
  std::string error;
  /// The pass that makes the weight globals.
  TypeID toLinalg = createTxToLinalg()->getTypeID();
  void runAfterPass(Pass *pass, Operation *op) override {
    if (pass->getTypeID() != toLinalg || !isa<ModuleOp>(op))
      return;
    auto b = collectWeightBindings(cast<ModuleOp>(op));
    if (!b) {
      error = llvm::toString(b.takeError());
      return;
    }
    bindings = std::move(*b);
  }
};
} // namespace

/// The error of function `name`'s call that ended with `failure` (a device
/// error or a failed runtime check); success when there is none.
static llvm::Error
callFailureError(llvm::StringRef name,
                 const std::optional<tx::detail::RuntimeCheckFailure> &failure,
                 ArrayAttr runtimeChecks) {
  if (!failure)
    return llvm::Error::success();
  if (!failure->deviceError.empty())
    return createStringError(std::errc::invalid_argument,
                             "'%s': device error: %s", name.str().c_str(),
                             failure->deviceError.c_str());
  std::string message = formatRuntimeCheckFailure(
      runtimeChecks, failure->check, failure->lhs, failure->rhs);
  // A runtime function's own account (the containers').
  if (!failure->detail.empty())
    message += " " + failure->detail;
  return createStringError(std::errc::invalid_argument,
                           "'%s': runtime check failed: %s",
                           name.str().c_str(), message.c_str());
}

/// Calls a no-argument function of the lowered module if it has one (the
/// device-resident weights' load and release of tx-to-nvvm); a device error
/// or failed runtime check it raises becomes the error.
static llvm::Error callIfPresent(ExecutionEngine &engine, llvm::StringRef name,
                                 ArrayAttr runtimeChecks) {
  auto entry = engine.lookupPacked(name);
  if (!entry) {
    llvm::consumeError(entry.takeError());
    return llvm::Error::success();
  }
  void *none = nullptr;
  return callFailureError(
      name, tx::detail::invokeWithRuntimeChecks(*entry, &none),
      runtimeChecks);
}

namespace mlir::tx::detail {
/// The memory of the weight globals the runner took out of the JIT's image
/// (moveWeightsOutOfImage): one anonymous mapping, whose pages are zero
/// until bindWeights writes them, one aligned piece per global.
struct WeightStorage {
  llvm::sys::MemoryBlock block;
  /// Global name -> (address, bytes).
  std::vector<std::pair<std::string, std::pair<char *, uint64_t>>> globals;
  /// The addresses of all the module's host weight globals, here or in the
  /// JIT's image (a call's results that are one are not freed).
  std::set<void *> boundAddresses;
  WeightStorage() = default;
  WeightStorage(const WeightStorage &) = delete;
  ~WeightStorage() {
    if (block.base())
      llvm::sys::Memory::releaseMappedMemory(block);
  }
  bool holds(const void *p) const {
    auto *c = static_cast<const char *>(p);
    auto *base = static_cast<const char *>(block.base());
    return base && c >= base && c < base + block.allocatedSize();
  }
};
} // namespace mlir::tx::detail

/// Whether the initial value of `global` is nothing, undef, poison or all
/// zero bits: what storage of fresh (zero) pages holds.
static bool hasNoContents(LLVM::GlobalOp global) {
  if (Attribute value = global.getValueOrNull()) {
    if (isa<LLVM::ZeroAttr, LLVM::UndefAttr>(value))
      return true;
    auto dense = dyn_cast<DenseElementsAttr>(value);
    if (!dense || !dense.isSplat())
      return false;
    if (auto f = dyn_cast<FloatAttr>(dense.getSplatValue<Attribute>()))
      return f.getValue().isPosZero();
    if (auto i = dyn_cast<IntegerAttr>(dense.getSplatValue<Attribute>()))
      return i.getValue().isZero();
    return false;
  }
  Block *init = global.getInitializerBlock();
  if (!init)
    return true;
  for (Operation &op : *init)
    if (!isa<LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp, LLVM::ReturnOp>(op))
      return false;
  return true;
}

/// Takes the weight globals (`bindings`) of the lowered `module` out of the
/// JIT's image: each becomes an external declaration, its memory a piece of
/// one mapping the runner allocates (returned), bound to its name when the
/// engine links. Their initial value is undef: left in the module, the JIT
/// would give each a zero-initialised section and memset it at
/// materialisation, faulting in every page of every weight (0.87 GB a
/// Llama-3-8B layer) as part of the compile, before bindWeights writes them
/// all again. Globals with contents, constant ones and ones whose size is
/// not the binding's stay in the image.
static llvm::Expected<std::unique_ptr<tx::detail::WeightStorage>>
moveWeightsOutOfImage(ModuleOp module,
                      const std::vector<WeightBinding> &bindings) {
  llvm::StringMap<uint64_t> bindingBytes;
  for (const WeightBinding &b : bindings)
    bindingBytes[b.global] = b.bytes();
  DataLayout layout(module);
  std::vector<std::pair<LLVM::GlobalOp, uint64_t>> moved;
  uint64_t total = 0;
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    auto it = bindingBytes.find(global.getSymName());
    if (it == bindingBytes.end() || global.getConstant() ||
        global.getThreadLocal_() || !hasNoContents(global) ||
        layout.getTypeSize(global.getGlobalType()) != it->second)
      continue;
    // Page-aligned pieces (at least the global's alignment).
    uint64_t align = std::max<uint64_t>(global.getAlignment().value_or(1), 4096);
    total = llvm::alignTo(total, align);
    moved.emplace_back(global, total);
    total += std::max<uint64_t>(it->second, 1);
  }
  auto storage = std::make_unique<tx::detail::WeightStorage>();
  if (moved.empty())
    return storage;
  // Huge-page aligned: bindWeights faults the pages in, 2 MiB at a time
  // where the kernel gives transparent huge pages on request.
  constexpr uint64_t kHugePage = 2 << 20;
  std::error_code ec;
  storage->block = llvm::sys::Memory::allocateMappedMemory(
      total + kHugePage, nullptr,
      llvm::sys::Memory::MF_READ | llvm::sys::Memory::MF_WRITE, ec);
  if (ec || !storage->block.base())
    return createStringError(std::errc::not_enough_memory,
                             "cannot allocate %llu bytes for the module's "
                             "weights: %s",
                             static_cast<unsigned long long>(total),
                             ec.message().c_str());
  char *base = reinterpret_cast<char *>(llvm::alignTo(
      reinterpret_cast<uintptr_t>(storage->block.base()), kHugePage));
#ifdef MADV_HUGEPAGE
  (void)::madvise(base, llvm::alignTo(total, kHugePage), MADV_HUGEPAGE);
#endif
  for (auto [global, offset] : moved) {
    storage->globals.push_back(
        {global.getSymName().str(),
         {base + offset,
          bindingBytes[global.getSymName()]}});
    global.removeValueAttr();
    global.getInitializerRegion().getBlocks().clear();
    global.setLinkage(LLVM::Linkage::External);
  }
  return storage;
}

WeightStorageStats CpuRunner::weightStorageStats() const {
  WeightStorageStats stats;
  if (!engine)
    return stats;
  for (const WeightBinding &b : bindings) {
    llvm::Expected<void *> addr = engine->lookup(b.global);
    if (!addr) {
      llvm::consumeError(addr.takeError());
      continue;
    }
    uint64_t bytes = b.bytes();
    if (weightStorage && weightStorage->holds(*addr)) {
      ++stats.runnerGlobals;
      stats.runnerBytes += bytes;
    } else {
      ++stats.imageGlobals;
      stats.imageBytes += bytes;
    }
  }
  return stats;
}

/// ExecutionEngines of runners, alive now (CpuRunner::liveEngines).
static std::atomic<int64_t> liveEngineCount{0};

int64_t CpuRunner::liveEngines() { return liveEngineCount.load(); }

CpuRunner::CpuRunner()
    : asyncTasks(std::make_shared<detail::TaskCounter>()) {}

CpuRunner::~CpuRunner() {
  if (!engine)
    return;
  {
    // Device memory the module holds (tx-to-nvvm's resident weights).
    detail::TaskCounter::Scope scope(asyncTasks, bufferCache.get());
    llvm::consumeError(
        callIfPresent(*engine, "__tx_gpu_release_weights", runtimeChecks));
  }
  // A worker thread of the async runtime can still be returning through the
  // JIT'd code of a call's last task after the caller, woken by that task's
  // token, has gone on (AsyncTasks.h): the code stays mapped until every
  // task has returned. A task that never does (none is known) keeps the
  // engine and the buffers it may still free alive.
  if (!asyncTasks->waitIdle(std::chrono::minutes(1))) {
    (void)engine.release();
    (void)bufferCache.release();
    (void)weightStorage.release();
    return;
  }
  engine.reset();
  --liveEngineCount;
}

BufferCacheStats CpuRunner::bufferCacheStats() const {
  return bufferCache ? bufferCache->stats() : BufferCacheStats();
}

uint64_t CpuRunner::asyncTasksStarted() const { return asyncTasks->total(); }

/// Whether some op of `func` may write memory that may alias `arg`: an op
/// that declares no effects (a call, an opaque call) may write anything, a
/// container write keeps what it stores. What the lowering adds writes only
/// buffers it allocates, so this holds of the lowered code too.
static bool mayWriteArgument(func::FuncOp func, BlockArgument arg) {
  tx::TxAliasAnalysis aliases;
  return func.getFunctionBody()
      .walk([&](Operation *op) {
        return aliases.getOwnModRef(op, arg).isMod() ? WalkResult::interrupt()
                                                     : WalkResult::advance();
      })
      .wasInterrupted();
}

llvm::Expected<std::unique_ptr<CpuRunner>>
CpuRunner::compile(ModuleOp module, const CpuRunnerOptions &options) {
  initializeTargetOnce();
  auto start = std::chrono::steady_clock::now();
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registerAllTxDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadAllAvailableDialects();

  std::unique_ptr<CpuRunner> runner(new CpuRunner());
  runner->bufferCache = std::make_unique<detail::BufferCache>(options.bufferCache);
  // Signatures and weights come from the module as written.
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    FunctionSignature sig;
    FunctionType ft = func.getFunctionType();
    for (auto [i, t] : llvm::enumerate(ft.getInputs())) {
      auto info = describe(t, func.getName(), "argument", i);
      if (!info) {
        // Unsupported functions are reported when called, not here.
        llvm::consumeError(info.takeError());
        sig.inputs.clear();
        sig.inputs.push_back(ValueInfo{{}, false, "<unsupported>"});
        break;
      }
      info->name = "arg" + std::to_string(i);
      if (auto name = dyn_cast<NameLoc>(func.getArgument(i).getLoc()))
        info->name = name.getName().str();
      info->readOnly = isa<MemRefType>(t) && info->element == ElementType::F32 &&
                       (options.testUnsafeInputsInPlace ||
                        !mayWriteArgument(func, func.getArgument(i)));
      sig.inputs.push_back(*info);
    }
    for (auto [i, t] : llvm::enumerate(ft.getResults())) {
      auto info = describe(t, func.getName(), "result", i);
      if (!info) {
        llvm::consumeError(info.takeError());
        sig.results.push_back(ValueInfo{{}, false, "<unsupported>"});
        continue;
      }
      sig.results.push_back(*info);
    }
    runner->signatures.emplace_back(func.getName().str(), std::move(sig));
  }
  // An already lowered module carries its tagged globals; otherwise they are
  // collected when tx-to-linalg runs (below).
  auto bindings = collectWeightBindings(module);
  if (!bindings)
    return bindings.takeError();
  runner->bindings = std::move(*bindings);

  // Lower a clone.
  OwningOpRef<ModuleOp> lowered(cast<ModuleOp>(module->clone()));
  PassManager pm(ctx);
  if (!options.pipeline)
    buildTxToCPUPipeline(pm, TxToCPUOptions());
  else if (llvm::Error e = options.pipeline(pm))
    return createStringError(std::errc::invalid_argument,
                             "bad pipeline '%s': %s",
                             options.pipelineName.c_str(),
                             llvm::toString(std::move(e)).c_str());
  auto collector = std::make_unique<WeightCollector>();
  WeightCollector *weightsSeen = collector.get();
  pm.addInstrumentation(std::move(collector));
  {
    // Capture the pipeline's diagnostics into the error message.
    std::string diags;
    llvm::raw_string_ostream diagOs(diags);
    auto printLoc = [&](Location loc) {
      if (auto fl = loc->findInstanceOf<FileLineColLoc>())
        diagOs << fl.getFilename().getValue() << ":" << fl.getLine() << ":"
               << fl.getColumn();
      else
        diagOs << loc;
    };
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      printLoc(d.getLocation());
      diagOs << ": "
             << (d.getSeverity() == DiagnosticSeverity::Error ? "error: "
                                                              : "note: ")
             << d << "\n";
      for (Diagnostic &note : d.getNotes()) {
        printLoc(note.getLocation());
        diagOs << ": note: " << note << "\n";
      }
      return success();
    });
    // The whole module printed with every diagnostic would drown the message.
    bool printOp = ctx->shouldPrintOpOnDiagnostic();
    ctx->printOpOnDiagnostic(false);
    LogicalResult ran = pm.run(*lowered);
    ctx->printOpOnDiagnostic(printOp);
    runner->loweringTime = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count();
    if (failed(ran))
      return createStringError(std::errc::invalid_argument,
                               "lowering with '%s' failed:\n%s",
                               options.pipelineName.c_str(), diags.c_str());
  }
  if (!weightsSeen->error.empty())
    return createStringError(std::errc::not_supported, "%s",
                             weightsSeen->error.c_str());
  if (weightsSeen->bindings)
    runner->bindings = std::move(*weightsSeen->bindings);
  // The messages of the runtime checks tx-to-linalg emitted (or that a
  // module lowered elsewhere carries).
  if (auto table = (*lowered)->getAttrOfType<ArrayAttr>(kRuntimeChecksAttrName)) {
    runner->runtimeChecks = table;
    // Not LLVM IR: the translation need not see it.
    (*lowered)->removeAttr(kRuntimeChecksAttrName);
  }
  // The names of the ops a profile=true lowering times (ProfileOps.h).
  if (auto table = (*lowered)->getAttrOfType<ArrayAttr>(kProfileTableAttrName)) {
    runner->profileCounters = std::make_unique<detail::ProfileCounters>(table);
    (*lowered)->removeAttr(kProfileTableAttrName);
  }
  // The weights' memory: the runner's, not the JIT's.
  auto storage = moveWeightsOutOfImage(*lowered, runner->bindings);
  if (!storage)
    return storage.takeError();
  runner->weightStorage = std::move(*storage);
  if (options.dumpLowered)
    lowered->print(llvm::errs());

  ExecutionEngineOptions engineOptions;
  // ExecutionEngineOptions::transformer is a function_ref: the
  // std::function it refers to must outlive ExecutionEngine::create.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(options.optLevel, 0, nullptr);
  std::function<llvm::Error(llvm::Module *)> transformer =
      [&optimize](llvm::Module *m) -> llvm::Error {
    if (llvm::Error err = optimize(m))
      return err;
    detail::splitOddBf16MemoryOps(*m);
    return llvm::Error::success();
  };
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel =
      static_cast<llvm::CodeGenOptLevel>(std::min(options.optLevel, 3u));
  // Shared libraries are loaded into the process with global visibility and
  // found by the JIT's process-symbol lookup. Handing them to the engine
  // (ExecutionEngineOptions::sharedLibPaths) crashes inside
  // ExecutionEngine::create with Debian's LLVM 22 build, for any library.
  std::vector<std::string> libs = options.sharedLibs;
  // Code lowered with tx-to-cpu{threads=N} runs its tasks on MLIR's async
  // runtime.
  bool usesAsync = false;
  lowered->walk([&](LLVM::LLVMFuncOp f) {
    if (f.isExternal() && f.getName().starts_with("mlirAsyncRuntime"))
      usesAsync = true;
  });
  if (usesAsync)
    libs.push_back(TX_MLIR_ASYNC_RUNTIME);
  for (const std::string &l : libs) {
    std::string loadError;
    if (llvm::sys::DynamicLibrary::LoadLibraryPermanently(l.c_str(),
                                                          &loadError))
      return createStringError(std::errc::no_such_file_or_directory,
                               "cannot load shared library '%s': %s",
                               l.c_str(), loadError.c_str());
  }
  // Host code of tx-to-nvvm calls the GPU runtime (mgpu*): without a device
  // runtime loaded, say so here rather than let the JIT fail to find the
  // entry point later.
  std::string missingGpuCall;
  lowered->walk([&](LLVM::LLVMFuncOp f) {
    if (missingGpuCall.empty() && f.isExternal() &&
        f.getName().starts_with("mgpu") &&
        !llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
            f.getName().str()))
      missingGpuCall = f.getName().str();
  });
  if (!missingGpuCall.empty())
    return createStringError(
        std::errc::not_supported,
        "the lowered module is GPU host code (it calls '%s' of the GPU "
        "runtime) and no device runtime is loaded: run it on a device "
        "(tx-run --device=cuda or --device=emulator) or lower it with "
        "tx-to-cpu",
        missingGpuCall.c_str());
  // A device runtime that can hand its errors to the runner (the emulated
  // GPU) reports them as errors of the call instead of exiting.
  using SetErrorHandler = void (*)(void (*)(const char *));
  if (void *set = llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
          "txEmulatorSetErrorHandler"))
    reinterpret_cast<SetErrorHandler>(set)(&detail::deviceErrorHandler);
  auto jitStart = std::chrono::steady_clock::now();
  auto engine = ExecutionEngine::create(*lowered, engineOptions);
  if (!engine)
    return engine.takeError();
  runner->engine = std::move(*engine);
  ++liveEngineCount;
  runner->engine->registerSymbols([usesAsync,
                                   weights = runner->weightStorage.get()](
                                      llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (const auto &[name, piece] : weights->globals)
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(piece.first),
                             llvm::JITSymbolFlags::Exported};
    map[interner(kRuntimeCheckFunctionName)] = {
        llvm::orc::ExecutorAddr::fromPtr(detail::runtimeCheckFailedAddress()),
        llvm::JITSymbolFlags::Exported};
    map[interner(kProfileBeginFunctionName)] = {
        llvm::orc::ExecutorAddr::fromPtr(detail::profileBeginAddress()),
        llvm::JITSymbolFlags::Exported};
    map[interner(kProfileEndFunctionName)] = {
        llvm::orc::ExecutorAddr::fromPtr(detail::profileEndAddress()),
        llvm::JITSymbolFlags::Exported};
    for (auto [name, address] : detail::containerRuntimeSymbols())
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    // The code's malloc/free go to the runner's buffer cache; its async
    // tasks are counted (AsyncTasks.h).
    for (auto [name, address] : detail::BufferCache::runtimeSymbols())
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    if (usesAsync)
      for (auto [name, address] : detail::asyncTaskSymbols())
        map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                               llvm::JITSymbolFlags::Exported};
    return map;
  });
  if (options.extraSymbols)
    runner->engine->registerSymbols(options.extraSymbols);
  runner->engine->initialize();
  // The JIT compiles the module at its first symbol lookup: made here, so
  // that the weight time below is the weights' only.
  for (const auto &[name, sig] : runner->signatures) {
    auto fn = runner->engine->lookupPacked("_mlir_ciface_" + name);
    if (!fn)
      llvm::consumeError(fn.takeError());
    break;
  }
  for (const WeightBinding &b : runner->bindings) {
    if (auto a = runner->engine->lookup(b.global))
      runner->weightStorage->boundAddresses.insert(*a);
    else
      llvm::consumeError(a.takeError());
  }
  auto loadStart = std::chrono::steady_clock::now();
  runner->jitTime =
      std::chrono::duration<double>(loadStart - jitStart).count();
  detail::TaskCounter::Scope scope(runner->asyncTasks,
                                   runner->bufferCache.get());
  // tx-to-nvvm keeps the weights in device memory: allocated now, once
  // (uploaded from the module's globals, or written below piece by piece).
  if (llvm::Error e = callIfPresent(*runner->engine, "__tx_gpu_load_weights",
                                    runner->runtimeChecks)) {
    uint64_t bytes = 0;
    for (const WeightBinding &b : runner->bindings)
      bytes += b.bytes();
    return createStringError(
        std::errc::not_enough_memory,
        "loading the module's weights (%llu bytes) onto the device: %s",
        static_cast<unsigned long long>(bytes),
        llvm::toString(std::move(e)).c_str());
  }
  if (llvm::Error e = runner->bindWeights(options.weights))
    return std::move(e);
  runner->weightLoadTime = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - loadStart)
                               .count();
  runner->compileTime = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
  return runner;
}

/// Writes `binding` into its device-resident weight through the module's
/// `__tx_gpu_write_weight_<global>` (tx-to-nvvm{memory=device}), one
/// checkpoint tensor at a time into its rows: only that piece is ever held
/// on the host, never the whole (stacked) weight. `staged` gets the largest
/// number of host bytes held at once.
static llvm::Error writeDeviceWeight(void (*write)(void **),
                                     const WeightBinding &binding,
                                     const WeightSource &source,
                                     ArrayAttr runtimeChecks,
                                     uint64_t &staged) {
  int64_t rows = binding.shape.empty() ? 1 : binding.shape[0];
  int64_t rowElements = rows ? Tensor::numElements(binding.shape) / rows : 0;
  size_t width = elementBytes(binding.element);
  for (const WeightPiece &piece : binding.pieces) {
    // The piece alone, as a binding of its own rows.
    WeightBinding one = binding;
    if (!one.shape.empty())
      one.shape[0] = piece.rows;
    one.pieces = {WeightPiece{piece.tensor, 0, piece.rows}};
    llvm::Expected<std::vector<float>> data = loadWeight(one, source);
    if (!data)
      return data.takeError();
    std::vector<char> converted;
    void *host = data->data();
    if (binding.element != ElementType::F32) {
      converted.resize(data->size() * width);
      storeElements(data->data(), data->size(), binding.element,
                    converted.data());
      host = converted.data();
    }
    staged = std::max<uint64_t>(staged, data->size() * sizeof(float) +
                                            converted.size());
    int64_t offset = piece.rowOffset * rowElements * width;
    int64_t bytes = data->size() * width;
    void *args[] = {&host, &offset, &bytes};
    std::string name = "__tx_gpu_write_weight_" + binding.global;
    if (llvm::Error e = callFailureError(
            name, tx::detail::invokeWithRuntimeChecks(write, args),
            runtimeChecks))
      return createStringError(std::errc::invalid_argument,
                               "writing checkpoint tensor '%s' into device "
                               "weight '%s': %s",
                               piece.tensor.c_str(), binding.global.c_str(),
                               llvm::toString(std::move(e)).c_str());
  }
  return llvm::Error::success();
}

llvm::Error CpuRunner::releaseDeviceWeights() {
  detail::TaskCounter::Scope scope(asyncTasks, bufferCache.get());
  return callIfPresent(*engine, "__tx_gpu_release_weights", runtimeChecks);
}

llvm::Error CpuRunner::bindWeights(const WeightSource &source) {
  detail::TaskCounter::Scope scope(asyncTasks, bufferCache.get());
  hostWeightBytesHeld = 0;
  for (const WeightBinding &b : bindings) {
    // Device-resident without a host copy: written piece by piece.
    if (auto write = engine->lookupPacked("__tx_gpu_write_weight_" + b.global)) {
      if (llvm::Error e = writeDeviceWeight(*write, b, source, runtimeChecks,
                                            weightStagingPeak))
        return e;
      continue;
    } else {
      llvm::consumeError(write.takeError());
    }
    llvm::Expected<void *> addr = engine->lookup(b.global);
    if (!addr) {
      // The global is unused and was not emitted: nothing to fill.
      llvm::consumeError(addr.takeError());
      continue;
    }
    // Read straight into the global (no f32 copy of the whole weight).
    if (llvm::Error e = loadWeightInto(b, source, *addr))
      return e;
    hostWeightBytesHeld += b.bytes();
  }
  return llvm::Error::success();
}

void CpuRunner::clearContainers() { containers.clear(); }

std::vector<CpuRunner::ContainerValue> CpuRunner::containerContents() const {
  std::vector<ContainerValue> out;
  for (const auto &[name, container] : containers)
    for (const auto &[index, values] : container->entries)
      for (auto [slot, stored] : llvm::enumerate(values)) {
        if (!stored)
          continue;
        ElementType element = stored->dtype == 0   ? ElementType::F32
                              : stored->dtype == 1 ? ElementType::F16
                                                   : ElementType::BF16;
        Tensor t = Tensor::zeros(stored->shape);
        loadElements(stored->bytes.data(), t.data.size(), element,
                     t.data.data());
        out.push_back({name, index, static_cast<int64_t>(slot), std::move(t)});
      }
  return out;
}

std::vector<OpProfile> CpuRunner::profile() const {
  return profileCounters ? profileCounters->rows() : std::vector<OpProfile>();
}

void CpuRunner::resetProfile() {
  if (profileCounters)
    profileCounters->reset();
}

llvm::Expected<FunctionSignature>
CpuRunner::signature(llvm::StringRef name) const {
  for (const auto &[n, sig] : signatures)
    if (n == name)
      return sig;
  std::string known;
  for (const auto &[n, sig] : signatures)
    known += (known.empty() ? "" : ", ") + n;
  return createStringError(std::errc::invalid_argument,
                           "no public function '%s' in the module (it has: %s)",
                           name.str().c_str(),
                           known.empty() ? "none" : known.c_str());
}

namespace {
/// A memref descriptor of rank r as the C interface lays it out: allocated
/// and aligned pointers, offset, sizes[r], strides[r] (all 8 bytes).
struct Descriptor {
  std::vector<int64_t> words;
  explicit Descriptor(unsigned rank) : words(3 + 2 * rank, 0) {}
  void *allocated() const { return reinterpret_cast<void *>(words[0]); }
  void *aligned() const { return reinterpret_cast<void *>(words[1]); }
};
} // namespace

llvm::Expected<std::vector<Tensor>>
CpuRunner::call(llvm::StringRef name, const std::vector<Tensor> &inputs) {
  std::vector<Tensor> results;
  if (llvm::Error e = callInto(name, inputs, results))
    return std::move(e);
  return results;
}

llvm::Error CpuRunner::callInto(llvm::StringRef name,
                                const std::vector<Tensor> &inputs,
                                std::vector<Tensor> &results) {
  llvm::Expected<FunctionSignature> sigOr = signature(name);
  if (!sigOr)
    return sigOr.takeError();
  const FunctionSignature &sig = *sigOr;
  for (const ValueInfo &v : sig.inputs)
    if (v.typeString == "<unsupported>")
      return createStringError(std::errc::not_supported,
                               "function '%s' has an argument the CPU runner "
                               "cannot pass (only f32, f16 and bf16 memrefs, "
                               "f32 and integer scalars and containers)",
                               name.str().c_str());
  for (const ValueInfo &v : sig.results)
    if (v.typeString == "<unsupported>" || v.isScalar)
      return createStringError(std::errc::not_supported,
                               "function '%s' has a result the CPU runner "
                               "cannot return (only f32, f16 and bf16 "
                               "memrefs)",
                               name.str().c_str());
  // Containers take no input: the runner passes its own.
  std::vector<const ValueInfo *> tensorArgs;
  for (const ValueInfo &v : sig.inputs)
    if (!v.isContainer)
      tensorArgs.push_back(&v);
  if (inputs.size() != tensorArgs.size())
    return createStringError(
        std::errc::invalid_argument, "function '%s' takes %zu inputs%s, got %zu",
        name.str().c_str(), tensorArgs.size(),
        tensorArgs.size() == sig.inputs.size()
            ? ""
            : " (its container arguments take none)",
        inputs.size());
  for (auto [i, pair] : llvm::enumerate(llvm::zip(tensorArgs, inputs))) {
    const ValueInfo &want = *std::get<0>(pair);
    const Tensor &got = std::get<1>(pair);
    if (want.intWidth && got.shape.empty() && got.data.size() == 1) {
      // An integer argument: an integral value that fits (0 or 1 for i1).
      double v = got.data[0];
      double lo = want.intWidth == 1 ? 0 : -std::ldexp(1.0, want.intWidth - 1);
      double hi = want.intWidth == 1 ? 1 : std::ldexp(1.0, want.intWidth) - 1;
      if (v != std::floor(v) || v < lo || v > hi)
        return createStringError(
            std::errc::invalid_argument,
            "input #%zu of '%s' ('%s', %s): %g is not %s", i,
            name.str().c_str(), want.name.c_str(), want.typeString.c_str(), v,
            want.intWidth == 1 ? "0 or 1" : "an integer of that width");
      continue;
    }
    bool ok = want.isScalar ? got.shape.empty()
                            : got.shape.size() == want.shape.size();
    for (size_t d = 0; ok && d < want.shape.size(); ++d)
      ok = ShapedType::isDynamic(want.shape[d]) || want.shape[d] == got.shape[d];
    if (ok && static_cast<int64_t>(got.data.size()) != got.numElements())
      return createStringError(std::errc::invalid_argument,
                               "input #%zu: shape %s needs %lld values, the "
                               "tensor holds %zu",
                               i, got.typeString().c_str(),
                               (long long)got.numElements(), got.data.size());
    if (!ok)
      return createStringError(
          std::errc::invalid_argument,
          "input #%zu of '%s': expected %s, got %s", i, name.str().c_str(),
          want.intWidth ? (want.typeString + " (a scalar)").c_str()
          : want.isScalar
              ? "f32 (a scalar)"
              : shapeToString(want.shape, want.element).c_str(),
          got.typeString().c_str());
  }

  // Inputs are copied (converted to their element type): the function may
  // write them in place. An f32 input it never writes is passed in place.
  // (Not value-initialised: every byte is written by storeElements.)
  // Large ones come from the buffer cache (freed into it below).
  struct Release {
    void operator()(char *p) const { detail::BufferCache::release(p); }
  };
  std::vector<std::unique_ptr<char, Release>> scratch;
  // The caller's own data, passed in place (a result that is a view of it
  // is not freed).
  std::set<void *> inPlace;
  std::vector<Descriptor> argDescs;
  std::vector<float> scalars;
  // Integer arguments (little-endian: an i1 or i32 loads the low bytes) and
  // container pointers.
  std::vector<int64_t> integers;
  std::vector<void *> containerPtrs;
  scratch.reserve(inputs.size());
  scalars.reserve(inputs.size());
  integers.reserve(inputs.size());
  containerPtrs.reserve(sig.inputs.size());
  for (const ValueInfo &in : sig.inputs) {
    if (!in.isContainer)
      continue;
    std::unique_ptr<detail::Container> &c = containers[in.name];
    if (!c)
      c = std::make_unique<detail::Container>();
    containerPtrs.push_back(c.get());
  }
  for (auto [i, t] : llvm::enumerate(inputs)) {
    if (tensorArgs[i]->intWidth) {
      integers.push_back(static_cast<int64_t>(t.data[0]));
      continue;
    }
    if (tensorArgs[i]->isScalar) {
      scalars.push_back(t.data[0]);
      continue;
    }
    ElementType element = tensorArgs[i]->element;
    char *data;
    if (tensorArgs[i]->readOnly && !t.data.empty()) {
      data = reinterpret_cast<char *>(const_cast<float *>(t.data.data()));
      inPlace.insert(data);
    } else {
      size_t bytes =
          std::max<size_t>(1, t.data.size()) * elementBytes(element);
      scratch.emplace_back(
          static_cast<char *>(bufferCache->allocateAny(bytes)));
      if (!scratch.back())
        return createStringError(std::errc::not_enough_memory,
                                 "cannot allocate %zu bytes for input #%zu",
                                 bytes, i);
      data = scratch.back().get();
      storeElements(t.data.data(), t.data.size(), element, data);
    }
    Descriptor d(t.shape.size());
    d.words[0] = d.words[1] = reinterpret_cast<int64_t>(data);
    int64_t stride = 1;
    for (int64_t k = t.shape.size() - 1; k >= 0; --k) {
      d.words[3 + k] = t.shape[k];
      d.words[3 + t.shape.size() + k] = stride;
      stride *= t.shape[k];
    }
    argDescs.push_back(std::move(d));
  }
  // The results come back through a pointer to a struct of descriptors.
  size_t resultWords = 0;
  for (const ValueInfo &r : sig.results)
    resultWords += 3 + 2 * r.shape.size();
  std::vector<int64_t> resultStruct(std::max<size_t>(resultWords, 1), 0);

  std::vector<void *> values; // one per LLVM argument of the C interface
  if (!sig.results.empty())
    values.push_back(resultStruct.data());
  size_t memrefIdx = 0, scalarIdx = 0, intIdx = 0, containerIdx = 0;
  for (const ValueInfo &in : sig.inputs) {
    if (in.isContainer)
      values.push_back(&containerPtrs[containerIdx++]);
    else if (in.intWidth)
      values.push_back(&integers[intIdx++]);
    else if (in.isScalar)
      values.push_back(&scalars[scalarIdx++]);
    else
      values.push_back(argDescs[memrefIdx++].words.data());
  }
  // invokePacked wants a pointer to each argument's storage: descriptor
  // pointers are stored in `values`; scalars are passed by value, so their
  // storage is the float itself.
  std::vector<void *> packed;
  memrefIdx = 0;
  size_t v = 0;
  if (!sig.results.empty())
    packed.push_back(&values[v++]);
  for (const ValueInfo &in : sig.inputs) {
    if (in.isScalar || in.isContainer)
      packed.push_back(values[v++]);
    else
      packed.push_back(&values[v++]);
  }
  auto entry = engine->lookupPacked(("_mlir_ciface_" + name).str());
  if (!entry)
    return createStringError(std::errc::invalid_argument,
                             "cannot call '%s' (was it lowered with "
                             "llvm.emit_c_interface?): %s",
                             name.str().c_str(),
                             llvm::toString(entry.takeError()).c_str());
  std::optional<detail::RuntimeCheckFailure> failure;
  {
    detail::ActiveProfile profiling(profileCounters.get());
    detail::TaskCounter::Scope scope(asyncTasks, bufferCache.get());
    failure = detail::invokeWithRuntimeChecks(*entry, packed.data());
  }
  if (llvm::Error error = callFailureError(name, failure, runtimeChecks))
    return std::move(error);

  // Copy results out (they may be strided views), then free the buffers the
  // function allocated for them.
  // A tensor of `results` with the result's shape keeps its storage.
  results.resize(sig.results.size());
  std::set<void *> owned(inPlace);
  for (auto &s : scratch)
    owned.insert(s.get());
  const std::set<void *> &weightsAddrs = weightStorage->boundAddresses;
  std::set<void *> toFree;
  // A result that is a view of an input passed in place may be a view of
  // one of `results` (a caller passing its previous results back): then
  // every result goes to fresh tensors first, so that none is overwritten
  // before it is read.
  bool viewsInput = false;
  for (size_t k = 0, off = 0; k < sig.results.size(); ++k) {
    viewsInput |= inPlace.count(reinterpret_cast<void *>(resultStruct[off])) > 0;
    off += 3 + 2 * sig.results[k].shape.size();
  }
  std::vector<Tensor> fresh(viewsInput ? sig.results.size() : 0);
  size_t off = 0;
  for (const ValueInfo &r : sig.results) {
    size_t rank = r.shape.size();
    const int64_t *w = resultStruct.data() + off;
    off += 3 + 2 * rank;
    std::vector<int64_t> shape(w + 3, w + 3 + rank);
    const int64_t *strides = w + 3 + rank;
    size_t bytes = elementBytes(r.element);
    const char *base = reinterpret_cast<const char *>(w[1]) + w[2] * bytes;
    Tensor &t = (viewsInput ? fresh : results)[&r - sig.results.data()];
    if (t.shape != shape || t.data.size() != size_t(Tensor::numElements(shape)))
      t = Tensor::zeros(shape);
    int64_t count = t.numElements();
    // Contiguous row-major (what tx-return-contiguous makes of public
    // results): one conversion of the whole buffer; a strided view: element
    // by element.
    bool contiguous = true;
    for (int64_t k = rank - 1, expect = 1; k >= 0; --k) {
      if (shape[k] != 1 && strides[k] != expect)
        contiguous = false;
      expect *= shape[k];
    }
    if (contiguous) {
      loadElements(base, count, r.element, t.data.data());
    } else {
      std::vector<int64_t> idx(rank, 0);
      for (int64_t n = 0; n < count; ++n) {
        int64_t o = 0;
        for (size_t k = 0; k < rank; ++k)
          o += idx[k] * strides[k];
        loadElements(base + o * bytes, 1, r.element, &t.data[n]);
        for (int64_t k = rank - 1; k >= 0; --k) {
          if (++idx[k] < shape[k])
            break;
          idx[k] = 0;
        }
      }
    }
    void *alloc = reinterpret_cast<void *>(w[0]);
    // finalize-memref-to-llvm marks a memref.get_global's allocated pointer
    // with 0xdeadbeef: it is not heap memory.
    if (alloc && alloc != reinterpret_cast<void *>(0xdeadbeef) &&
        !owned.count(alloc) && !weightsAddrs.count(alloc))
      toFree.insert(alloc);
  }
  if (viewsInput)
    results = std::move(fresh);
  // Buffers from memref.alloc (malloc in the lowered code): to the
  // allocator the code's malloc took them from.
  for (void *p : toFree)
    detail::BufferCache::release(p);
  return llvm::Error::success();
}
