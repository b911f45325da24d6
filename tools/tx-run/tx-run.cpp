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

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

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
               cl::desc("Directory of <checkpoint tensor>.npy weights "
                        "(default: pseudo-random from --seed)"),
               cl::cat(txRunCategory));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write result i to DIR/<function>.<i>.npy"),
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
             "DIR/<tensor name>.npy (loadable again with --weights DIR)"),
    cl::cat(txRunCategory));
static cl::opt<bool> print("print", cl::desc("Print the output values"),
                           cl::cat(txRunCategory));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Call the function N times and "
                                         "report the mean time"),
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
static cl::opt<bool> dumpLowered("dump-lowered",
                                 cl::desc("Print the lowered module"),
                                 cl::cat(txRunCategory));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "tx-run: error: " << msg << "\n";
  return 1;
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
  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3, got " + llvm::Twine(optLevel));
  if (entry.empty())
    return fail("-e needs a function name");
  auto selected = tx::selectDevice(device, tx::toolLibraryDir(argv[0]));
  if (!selected)
    return fail(llvm::toString(selected.takeError()));
  if (!weightsDir.empty() && !llvm::sys::fs::is_directory(weightsDir))
    return fail("--weights '" + weightsDir + "' is not a directory");
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
  std::string pipelineText = pipeline;
  if (!pipeline.getNumOccurrences())
    pipelineText = selected->defaultPipeline;
  if (!selected->runtimeLibrary.empty())
    libs.push_back(selected->runtimeLibrary);

  tx::CpuRunnerOptions options;
  options.pipeline = pipelineText;
  options.optLevel = optLevel;
  options.weights.seed = seed;
  options.weights.directory = weightsDir;
  options.sharedLibs = libs;
  options.dumpLowered = dumpLowered;
  auto runner = tx::CpuRunner::compile(*module, options);
  if (!runner)
    return fail(llvm::toString(runner.takeError()));
  if (!dumpWeights.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpWeights))
      return fail("cannot create '" + dumpWeights + "': " + ec.message());
    for (const tx::WeightBinding &b : (*runner)->weights()) {
      for (const tx::WeightPiece &piece : b.pieces) {
        tx::WeightBinding one{b.global, b.shape, {piece}};
        if (!one.shape.empty())
          one.shape[0] = piece.rows;
        one.pieces[0].rowOffset = 0;
        auto data = tx::loadWeight(one, options.weights);
        if (!data)
          return fail(llvm::toString(data.takeError()));
        llvm::SmallString<256> path(dumpWeights);
        llvm::sys::path::append(path, piece.tensor + ".npy");
        if (auto e = tx::writeNpy(path, tx::Tensor(one.shape, *data)))
          return fail(llvm::toString(std::move(e)));
      }
    }
  }
  auto sig = (*runner)->signature(entry);
  if (!sig)
    return fail(llvm::toString(sig.takeError()));

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
    if (inputShapes.size() > sig->inputs.size())
      return fail("--input-shape given " + llvm::Twine(inputShapes.size()) +
                  " times, but '" + entry + "' takes " +
                  llvm::Twine(sig->inputs.size()) + " inputs");
    for (auto [i, in] : llvm::enumerate(sig->inputs)) {
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

  std::vector<tx::Tensor> outputs;
  auto start = std::chrono::steady_clock::now();
  for (unsigned r = 0; r < std::max(1u, repeat.getValue()); ++r) {
    auto res = (*runner)->call(entry, inputs);
    if (!res)
      return fail(llvm::toString(res.takeError()));
    outputs = std::move(*res);
  }
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count() /
                   std::max(1u, repeat.getValue());

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
    if (dumpInputs)
      for (auto [i, t] : llvm::enumerate(inputs))
        if (auto e = write(entry + ".input" + std::to_string(i) + ".npy", t))
          return fail(llvm::toString(std::move(e)));
  }

  llvm::outs() << "tx-run: " << entry << " (" << pipelineText << "): compile "
               << llvm::format("%.3f", (*runner)->compileSeconds())
               << " s, run " << llvm::format("%.6f", seconds) << " s"
               << (repeat > 1 ? " (mean of " + std::to_string(repeat) + ")"
                              : std::string())
               << "\n";
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
  return 0;
}
