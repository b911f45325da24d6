//===- tx-run.cpp - run a function of a tx module on the CPU --------------===//
//
// Lowers a module with a pass pipeline (default tx-to-cpu), JIT-compiles it
// and calls one function on inputs read from .npy files or generated from a
// seed, with weights bound by checkpoint tensor name. Writes the outputs as
// .npy and prints a summary.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Execution/CpuRunner.h"
#include "TxDialect/Execution/Devices.h"
#include "TxDialect/Execution/ToolOptions.h"
#include "TxDialect/Execution/SourceNames.h"
#include "TxDialect/InitAllTx.h"
#include "TxDialect/Pipelines/CpuPipeline.h"
#include "TextPipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory txRunCategory("tx-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<module.mlir>"),
                                      cl::Required, cl::cat(txRunCategory));
static cl::opt<std::string> entry("e", cl::desc("Function to call"),
                                  cl::init("forward"), cl::cat(txRunCategory));
static cl::opt<std::string>
    pipeline("pipeline",
             cl::desc("Pass pipeline that lowers the module to the LLVM "
                      "dialect (default: tx-to-cpu), e.g. "
                      "'tx-fusion,tx-to-cpu'"),
             cl::init("tx-to-cpu"), cl::cat(txRunCategory));
static cl::opt<std::string>
    inputsOpt("inputs",
              cl::desc("Comma-separated .npy files, one per argument "
                       "(default: generated from --seed)"),
              cl::cat(txRunCategory));
static cl::list<std::string> scalarArgs(
    "arg",
    cl::desc("NAME=VALUE: the integer (i1: 0 or 1) argument NAME (its name "
             "in the source, or its position) (repeat, one per integer "
             "argument; --inputs and generated inputs are for the others; "
             "container arguments take nothing: the runner keeps one per "
             "name across the calls of --repeat)"),
    cl::cat(txRunCategory));
static cl::opt<int64_t>
    tokens("tokens",
           cl::desc("Size of every dynamic dimension of generated inputs"),
           cl::init(4), cl::cat(txRunCategory));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Shape of a generated input, e.g. 8x64 (repeat, one per "
             "argument; overrides --tokens for that argument)"),
    cl::cat(txRunCategory));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed of generated inputs and weights"),
                              cl::init(0), cl::cat(txRunCategory));
static cl::opt<std::string>
    weightsDir("weights",
               cl::desc("Checkpoint: a directory of <checkpoint tensor>.npy "
                        "files, a .safetensors file, a sharded checkpoint's "
                        "model.safetensors.index.json, or a directory holding "
                        "model.safetensors[.index.json] (default: "
                        "pseudo-random from --seed)"),
               cl::cat(txRunCategory));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write result i to DIR/<function>.<i>.npy, and "
                       "container[index] = (a, b, ...) of a container "
                       "argument to DIR/<argument>.<index>.<0, 1, ...>.npy"),
              cl::cat(txRunCategory));
static cl::opt<bool>
    dumpInputs("dump-inputs",
               cl::desc("Also write the inputs used to --output-dir as "
                        "DIR/<function>.input<i>.npy (for a reference "
                        "run elsewhere)"),
               cl::cat(txRunCategory));
static cl::opt<std::string> dumpWeights(
    "dump-weights",
    cl::desc("Write every checkpoint tensor the module binds to "
             "DIR/<tensor name>.npy, or to one F32 safetensors file when the "
             "name ends in .safetensors (loadable again with --weights)"),
    cl::cat(txRunCategory));
static cl::opt<bool> print("print", cl::desc("Print the output values"),
                           cl::cat(txRunCategory));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Call the function N times; report "
                                         "the first call (warm-up) and the "
                                         "median of the others"),
                                cl::init(1), cl::cat(txRunCategory));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimisation level"),
                                  cl::init(3), cl::cat(txRunCategory));
static cl::list<std::string>
    sharedLibs("shared-libs", cl::desc("Libraries the JIT'ed code may call"),
               cl::CommaSeparated, cl::cat(txRunCategory));
static cl::opt<std::string>
    device("device",
           cl::desc("cpu (default); cuda: lower with tx-to-nvvm (unless "
                    "--pipeline says otherwise) and load the tx CUDA runtime "
                    "(lib/libtx_cuda_runtime.so beside bin/tx-run); "
                    "emulator: lower with tx-to-nvvm{format=llvm "
                    "math=polynomial} and run the kernels on the emulated "
                    "CUDA device (lib/libtx_emulator_runtime.so), no GPU "
                    "needed"),
           cl::init("cpu"), cl::cat(txRunCategory));
static cl::opt<bool>
    profileOps("profile",
               cl::desc("Time each tx op (tx-to-cpu{profile=true}) and print "
                        "the table sorted by time (without the first call "
                        "when --repeat > 1)"),
               cl::cat(txRunCategory));
static cl::opt<bool> dumpLowered("dump-lowered",
                                 cl::desc("Print the lowered module"),
                                 cl::cat(txRunCategory));

static cl::opt<bool>
    stats("device-stats",
          cl::desc("With --device=cuda or emulator: print what crossed "
                   "between host and device when the module was loaded and "
                   "in each call (bytes host->device and device->host, kernel "
                   "and graph launches, synchronisations), from the device "
                   "runtime's counters"),
          cl::cat(txRunCategory));

static cl::opt<bool> testInputsInPlace(
    "test-unsafe-inputs-in-place",
    cl::desc("Testing only, UNSAFE: pass every f32 input in place, also one "
             "the function writes"),
    cl::Hidden, cl::cat(txRunCategory));
static cl::opt<bool> noBufferCache(
    "no-buffer-cache",
    cl::desc("Return every buffer the JIT'ed code frees to the C library "
             "instead of keeping the large ones (>= 128 KiB) for the next "
             "call (the runner's buffer cache)"),
    cl::cat(txRunCategory));
static cl::opt<bool> runnerStats(
    "runner-stats",
    cl::desc("Print the runner's buffer cache counts (large allocations "
             "served from kept buffers or the C library, bytes kept), the "
             "async tasks started, and the ExecutionEngines alive after the "
             "runner is destroyed"),
    cl::cat(txRunCategory));

static cl::opt<bool> testReleaseWeights(
    "test-release-weights",
    cl::desc("Testing only: release the module's device-resident weights "
             "(what unloading it does) before the first call, which must "
             "then fail"),
    cl::Hidden, cl::cat(txRunCategory));

namespace {
/// The device runtime's counters (`txGpuCounter` of libtx_emulator_runtime
/// and libtx_cuda_runtime), read after loading and after each call.
struct DeviceCounters {
  static constexpr const char *names[] = {"bytes_h2d", "bytes_d2h",
                                          "launches", "graph_launches",
                                          "syncs", "graphs_captured"};
  uint64_t values[6] = {};
  static DeviceCounters read() {
    using Counter = uint64_t (*)(const char *);
    auto counter = reinterpret_cast<Counter>(
        llvm::sys::DynamicLibrary::SearchForAddressOfSymbol("txGpuCounter"));
    DeviceCounters c;
    for (int i = 0; counter && i < 6; ++i)
      c.values[i] = counter(names[i]);
    return c;
  }
  void print(llvm::raw_ostream &os, llvm::StringRef what,
             const DeviceCounters &before) const {
    auto d = [&](int i) { return values[i] - before.values[i]; };
    os << "  device " << what << ": " << d(0) << " bytes host->device, "
       << d(1) << " bytes device->host, " << d(2) << " kernel launches, "
       << d(3) << " graph launches (" << d(5) << " captured), " << d(4)
       << " syncs\n";
  }
};
} // namespace

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "tx-run: error: " << msg << "\n";
  return 1;
}

/// `pipeline` with profile=true added to its tx-to-cpu; "" when it has none.
static std::string withProfile(StringRef pipeline) {
  size_t at = pipeline.find("tx-to-cpu");
  if (at == StringRef::npos)
    return "";
  size_t end = at + StringRef("tx-to-cpu").size();
  if (end < pipeline.size() && pipeline[end] == '{')
    return (pipeline.take_front(end + 1) + "profile=true " +
            pipeline.drop_front(end + 1))
        .str();
  return (pipeline.take_front(end) + "{profile=true}" +
          pipeline.drop_front(end))
      .str();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tx::keepOnlyToolOptions(txRunCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tx-run: compile a tx module for the CPU and run one function\n\n"
      "  tx-run examples/llama_decoder_layer.mlir -e forward --tokens 8 "
      "--print\n"
      "  tx-run m.mlir --inputs x.npy,cos.npy,sin.npy --weights ckpt/ "
      "--output-dir out/\n");

  // Options first: a bad value is an error before any work, never an abort
  // later (a negative size reaching std::vector).
  if (tokens < 1)
    return fail("--tokens must be at least 1, got " + llvm::Twine(tokens));
  if (repeat < 1)
    return fail("--repeat must be at least 1");
  if (stats && device == "cpu")
    return fail("--device-stats counts device work: it needs --device=cuda or "
                "--device=emulator");
  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3, got " + llvm::Twine(optLevel));
  if (entry.empty())
    return fail("-e needs a function name");
  auto selected = tx::selectDevice(device, tx::toolLibraryDir(argv[0]));
  if (!selected)
    return fail(llvm::toString(selected.takeError()));
  if (!weightsDir.empty() && !llvm::sys::fs::exists(weightsDir))
    return fail("--weights '" + weightsDir + "' is not a directory, a "
                ".safetensors file or an index .json: no such file");
  if (!inputsOpt.empty() && !inputShapes.empty())
    return fail("--inputs and --input-shape exclude each other (the shapes "
                "of .npy inputs are in the files)");
  if (dumpInputs && outputDir.empty())
    return fail("--dump-inputs needs --output-dir");

  MLIRContext context;
  DialectRegistry registry;
  tx::registerAllTxDialects(registry);
  context.appendDialectRegistry(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer)
    return fail("cannot read '" + inputFile + "': " +
                buffer.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      tx::parseModuleNamingArguments(sourceMgr, &context);
  if (!module)
    return fail("cannot parse '" + inputFile + "'");

  std::vector<std::string> libs(sharedLibs.begin(), sharedLibs.end());
  if (!selected->runtimeLibrary.empty())
    libs.push_back(selected->runtimeLibrary);

  // The lowering: the user's pipeline text, parsed here, or the device's,
  // built with its pipeline's typed builder.
  tx::CpuRunnerOptions options;
  if (pipeline.getNumOccurrences()) {
    std::string pipelineText = pipeline;
    if (profileOps) {
      pipelineText = withProfile(pipelineText);
      if (pipelineText.empty())
        return fail("--profile needs a pipeline with tx-to-cpu, got '" +
                    pipeline.getValue() + "'");
    }
    tx::registerAllTxPasses();
    tx::setTextPipeline(options, pipelineText);
  } else if (profileOps) {
    if (!selected->isCPU)
      return fail("--profile needs a pipeline with tx-to-cpu, got '" +
                  selected->defaultPipelineName + "'");
    options.pipelineName = "tx-to-cpu{profile=true}";
    options.pipeline = [](OpPassManager &pm) {
      tx::TxToCPUOptions cpu;
      cpu.profile = true;
      tx::buildTxToCPUPipeline(pm, cpu);
      return llvm::Error::success();
    };
  } else {
    options.pipelineName = selected->defaultPipelineName;
    options.pipeline = [build = selected->buildDefaultPipeline](
                           OpPassManager &pm) {
      build(pm);
      return llvm::Error::success();
    };
  }
  options.optLevel = optLevel;
  options.weights.seed = seed;
  options.weights.path = weightsDir;
  // A bad checkpoint (header, shards) is an error before compiling.
  if (llvm::Error e = tx::openWeightSource(options.weights))
    return fail(llvm::toString(std::move(e)));
  options.sharedLibs = libs;
  options.dumpLowered = dumpLowered;
  options.bufferCache = !noBufferCache;
  options.testUnsafeInputsInPlace = testInputsInPlace;
  auto runner = tx::CpuRunner::compile(*module, options);
  if (!runner)
    return fail(llvm::toString(runner.takeError()));
  if (!dumpWeights.empty()) {
    // One .safetensors file, or a directory of .npy files.
    bool toSafetensors = StringRef(dumpWeights).ends_with(".safetensors");
    if (!toSafetensors)
      if (std::error_code ec = llvm::sys::fs::create_directories(dumpWeights))
        return fail("cannot create '" + dumpWeights + "': " + ec.message());
    std::vector<std::pair<std::string, tx::Tensor>> tensors;
    for (const tx::WeightBinding &b : (*runner)->weights()) {
      for (const tx::WeightPiece &piece : b.pieces) {
        // A tensor that fills two globals is written once.
        if (toSafetensors && llvm::any_of(tensors, [&](const auto &t) {
              return t.first == piece.tensor;
            }))
          continue;
        tx::WeightBinding one{b.global, b.shape, {piece}};
        if (!one.shape.empty())
          one.shape[0] = piece.rows;
        one.pieces[0].rowOffset = 0;
        auto data = tx::loadWeight(one, options.weights);
        if (!data)
          return fail(llvm::toString(data.takeError()));
        if (toSafetensors) {
          tensors.emplace_back(piece.tensor, tx::Tensor(one.shape, *data));
          continue;
        }
        llvm::SmallString<256> path(dumpWeights);
        llvm::sys::path::append(path, piece.tensor + ".npy");
        if (auto e = tx::writeNpy(path, tx::Tensor(one.shape, *data)))
          return fail(llvm::toString(std::move(e)));
      }
    }
    if (toSafetensors)
      if (auto e = tx::writeSafetensors(dumpWeights, tensors))
        return fail(llvm::toString(std::move(e)));
  }
  auto sig = (*runner)->signature(entry);
  if (!sig)
    return fail(llvm::toString(sig.takeError()));

  // Integer arguments: from --arg NAME=VALUE (by name or position).
  std::map<size_t, int64_t> argValues;
  for (StringRef a : scalarArgs) {
    auto [key, text] = a.split('=');
    int64_t value;
    if (!a.contains('=') || key.empty() || text.getAsInteger(10, value))
      return fail("bad --arg '" + a + "' (expected NAME=INTEGER, e.g. "
                  "is_kv_shared_layer=1)");
    std::optional<size_t> at;
    for (auto [i, in] : llvm::enumerate(sig->inputs))
      if (in.name == key || std::to_string(i) == key)
        at = i;
    if (!at)
      return fail("--arg '" + a + "': '" + entry + "' has no argument '" +
                  key + "'");
    if (!sig->inputs[*at].intWidth)
      return fail("--arg '" + a + "': argument '" + key + "' has type " +
                  sig->inputs[*at].typeString +
                  ", not an integer (give tensors with --inputs)");
    argValues[*at] = value;
  }
  for (auto [i, in] : llvm::enumerate(sig->inputs))
    if (in.intWidth && !argValues.count(i))
      return fail("argument #" + llvm::Twine(i) + " '" + in.name + "' of '" +
                  entry + "' is " + in.typeString + ": give it with --arg " +
                  in.name + "=VALUE");
  // The arguments --inputs and generated inputs are for.
  std::vector<size_t> tensorArgs;
  for (auto [i, in] : llvm::enumerate(sig->inputs))
    if (!in.intWidth && !in.isContainer)
      tensorArgs.push_back(i);

  // Inputs: from files, or generated.
  std::vector<tx::Tensor> inputs;
  if (!inputsOpt.empty()) {
    SmallVector<StringRef> paths;
    StringRef(inputsOpt).split(paths, ',');
    for (StringRef p : paths) {
      if (p.empty())
        return fail("--inputs '" + inputsOpt + "' has an empty file name");
      auto t = tx::readNpy(p);
      if (!t)
        return fail(llvm::toString(t.takeError()));
      inputs.push_back(std::move(*t));
    }
  } else {
    if (inputShapes.size() > tensorArgs.size())
      return fail("--input-shape given " + llvm::Twine(inputShapes.size()) +
                  " times, but '" + entry + "' takes " +
                  llvm::Twine(tensorArgs.size()) + " inputs");
    for (auto [i, argIndex] : llvm::enumerate(tensorArgs)) {
      const tx::ValueInfo &in = sig->inputs[argIndex];
      std::vector<int64_t> shape = in.shape;
      if (i < inputShapes.size()) {
        shape.clear();
        SmallVector<StringRef> dims;
        StringRef(inputShapes[i]).split(dims, 'x');
        // A scalar argument takes an empty shape ("").
        if (!(dims.size() == 1 && dims[0].empty())) {
          for (StringRef d : dims) {
            int64_t v;
            if (d.getAsInteger(10, v) || v < 0)
              return fail("bad --input-shape '" + inputShapes[i] +
                          "' (expected sizes separated by 'x', e.g. 8x64)");
            shape.push_back(v);
          }
        }
      } else {
        for (int64_t &d : shape)
          if (ShapedType::isDynamic(d))
            d = tokens;
      }
      if (!tx::Tensor::checkedNumElements(shape))
        return fail("input #" + llvm::Twine(i) + " would have more than " +
                    llvm::Twine(tx::Tensor::kMaxElements) +
                    " elements (--tokens " + llvm::Twine(tokens) +
                    " or --input-shape too large)");
      inputs.push_back(
          tx::randomTensor("input" + std::to_string(i), shape, seed));
    }
  }

  // The runner's inputs: one per argument but containers, in order.
  if (!argValues.empty()) {
    std::vector<tx::Tensor> all;
    size_t next = 0;
    for (auto [i, in] : llvm::enumerate(sig->inputs)) {
      if (in.isContainer)
        continue;
      if (in.intWidth)
        all.emplace_back(std::vector<int64_t>{},
                         std::vector<float>{float(argValues[i])});
      else if (next < inputs.size())
        all.push_back(std::move(inputs[next++]));
    }
    // More files than arguments: the runner's count check says so.
    for (; next < inputs.size(); ++next)
      all.push_back(std::move(inputs[next]));
    inputs = std::move(all);
  }

  // Each call timed on its own: the first pays one-time costs (page faults
  // on fresh buffers, the async runtime's threads), so it is reported apart
  // and the others by their median.
  std::vector<tx::Tensor> outputs;
  std::vector<double> callSeconds;
  // Counters before the load (zero: the runtime was loaded with the module)
  // and after it and each call.
  std::vector<DeviceCounters> counters{DeviceCounters(),
                                       DeviceCounters::read()};
  if (testReleaseWeights)
    if (llvm::Error e = (*runner)->releaseDeviceWeights())
      return fail(llvm::toString(std::move(e)));
  for (unsigned r = 0; r < std::max(1u, repeat.getValue()); ++r) {
    auto start = std::chrono::steady_clock::now();
    // Into the same result tensors each time (a fresh 32 MB result would
    // cost every call its page faults).
    llvm::Error error = (*runner)->callInto(entry, inputs, outputs);
    callSeconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
    if (error)
      return fail(llvm::toString(std::move(error)));
    if (stats)
      counters.push_back(DeviceCounters::read());
    if (r == 0 && repeat > 1)
      (*runner)->resetProfile();
  }
  double firstSeconds = callSeconds.front();
  std::vector<double> rest(callSeconds.begin() + 1, callSeconds.end());
  std::sort(rest.begin(), rest.end());
  double medianSeconds =
      rest.empty() ? firstSeconds
      : rest.size() % 2 ? rest[rest.size() / 2]
                        : (rest[rest.size() / 2 - 1] + rest[rest.size() / 2]) / 2;

  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create '" + outputDir + "': " + ec.message());
    auto write = [&](const std::string &name, const tx::Tensor &t) {
      llvm::SmallString<256> path(outputDir);
      llvm::sys::path::append(path, name);
      return tx::writeNpy(path, t);
    };
    for (auto [i, t] : llvm::enumerate(outputs))
      if (auto e = write(entry + "." + std::to_string(i) + ".npy", t))
        return fail(llvm::toString(std::move(e)));
    // What the containers hold after the calls:
    // DIR/<container>.<index>.<slot>.npy.
    for (const auto &c : (*runner)->containerContents())
      if (auto e = write(c.container + "." + std::to_string(c.index) + "." +
                             std::to_string(c.slot) + ".npy",
                         c.value))
        return fail(llvm::toString(std::move(e)));
    if (dumpInputs)
      for (auto [i, t] : llvm::enumerate(inputs))
        if (auto e = write(entry + ".input" + std::to_string(i) + ".npy", t))
          return fail(llvm::toString(std::move(e)));
  }

  // compile includes the weight binding; both are printed apart.
  double loadSeconds = (*runner)->weightLoadSeconds();
  llvm::outs() << "tx-run: " << entry << " (" << options.pipelineName << "): compile "
               << llvm::format("%.3f",
                               (*runner)->compileSeconds() - loadSeconds)
               << " s, weights " << llvm::format("%.3f", loadSeconds) << " s, ";
  if (rest.empty())
    llvm::outs() << "run " << llvm::format("%.6f", firstSeconds) << " s\n";
  else
    llvm::outs() << "first call " << llvm::format("%.6f", firstSeconds)
                 << " s, run " << llvm::format("%.6f", medianSeconds)
                 << " s (median of the " << rest.size()
                 << " calls after the first)\n";
  for (auto [i, t] : llvm::enumerate(outputs)) {
    double sum = 0, sumAbs = 0;
    for (float v : t.data) {
      sum += v;
      sumAbs += std::fabs(v);
    }
    llvm::outs() << "  result " << i << ": " << t.typeString()
                 << " sum=" << llvm::format("%.6g", sum)
                 << " mean|x|="
                 << llvm::format("%.6g", t.data.empty() ? 0.0
                                                        : sumAbs / t.data.size())
                 << "\n";
    if (print) {
      llvm::outs() << "  [";
      for (auto [k, v] : llvm::enumerate(t.data))
        llvm::outs() << (k ? ", " : "") << llvm::format("%.6g", v);
      llvm::outs() << "]\n";
    }
  }
  if (profileOps)
    tx::printProfile(llvm::outs(), (*runner)->profile());
  if (stats) {
    for (size_t k = 1; k < counters.size(); ++k)
      counters[k].print(llvm::outs(),
                        k == 1 ? "load" : "call " + std::to_string(k - 1),
                        counters[k - 1]);
    // What the host keeps of the weights: device-only weights leave none,
    // only the largest checkpoint tensor staged while writing them.
    llvm::outs() << "  host weights: " << (*runner)->hostWeightBytes()
                 << " bytes held in the module, staging peak "
                 << (*runner)->weightStagingPeakBytes() << " bytes\n";
  }
  if (runnerStats) {
    tx::BufferCacheStats cache = (*runner)->bufferCacheStats();
    llvm::outs() << "  buffer cache" << (noBufferCache ? " (off)" : "")
                 << ": " << cache.fromCache << " large allocations from the "
                 << "cache, " << cache.fromSystem << " from malloc, "
                 << cache.returnedBlocks << " returned, " << cache.keptBytes
                 << " bytes kept (peak live " << cache.peakLiveBytes
                 << " bytes)\n";
    llvm::outs() << "  async tasks: " << (*runner)->asyncTasksStarted()
                 << " started\n";
    if (auto sig = (*runner)->signature(entry)) {
      unsigned buffers = 0, inPlace = 0;
      for (const tx::ValueInfo &in : sig->inputs) {
        if (in.isScalar || in.isContainer || in.intWidth)
          continue;
        ++buffers;
        inPlace += in.readOnly;
      }
      llvm::outs() << "  inputs passed in place (never written): " << inPlace
                   << " of " << buffers << " buffers\n";
    } else {
      llvm::consumeError(sig.takeError());
    }
    tx::WeightStorageStats weights = (*runner)->weightStorageStats();
    llvm::outs() << "  weight globals: " << weights.runnerGlobals << " ("
                 << weights.runnerBytes << " bytes) in the runner's storage, "
                 << weights.imageGlobals << " (" << weights.imageBytes
                 << " bytes) in the JIT's image\n";
    llvm::outs() << "  compile: lowering "
                 << llvm::format("%.3f", (*runner)->loweringSeconds())
                 << " s, JIT " << llvm::format("%.3f", (*runner)->jitSeconds())
                 << " s\n";
    runner->reset();
    llvm::outs() << "  engines alive after destroying the runner: "
                 << tx::CpuRunner::liveEngines() << "\n";
  }
  return 0;
}
