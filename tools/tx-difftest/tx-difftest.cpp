//===- tx-difftest.cpp - run modules before and after a pipeline ----------===//
//
// Differential testing of tx rewrites: for each module, compiles the function
// as written and after a pipeline (default: the fusion pipeline), runs both
// on the same inputs and weights, and compares every output. Inputs come from
// seeds; f32 scalar arguments (branch flags) take +1 and -1 so both sides of
// every branch run. It also counts the rewrite's decisions (the remarks the
// pipeline emits), so a run says how much it exercised.
//
// A mismatch prints the module, the pipeline, the seed and the largest error,
// and copies the module to --reproducer-dir. Exit status: 0 when everything
// matched, 1 on any mismatch, 2 on an error (a module that does not parse or
// compile is an error, not a pass).
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Execution/CpuRunner.h"
#include "TxDialect/Execution/Devices.h"
#include "TxDialect/Execution/ToolOptions.h"
#include "TxDialect/Execution/SourceNames.h"
#include "TxDialect/InitAllTx.h"
#include "TextPipeline.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory toolCategory("tx-difftest options");

static cl::list<std::string> inputFiles(cl::Positional, cl::OneOrMore,
                                        cl::desc("<module.mlir>..."),
                                        cl::cat(toolCategory));
static cl::opt<std::string> entry("e", cl::desc("Function to compare"),
                                  cl::init("forward"), cl::cat(toolCategory));
static cl::opt<std::string>
    rewrite("rewrite",
            cl::desc("Pipeline under test, run before the lowering "
                     "(default: tx-fusion)"),
            cl::init("tx-fusion"), cl::cat(toolCategory));
static cl::opt<std::string> lowering("lowering",
                                     cl::desc("Lowering pipeline to the LLVM "
                                              "dialect (default: tx-to-cpu)"),
                                     cl::init("tx-to-cpu"),
                                     cl::cat(toolCategory));
static cl::opt<std::string> referenceLowering(
    "reference-lowering",
    cl::desc("Lowering of the reference side (default: --lowering), e.g. "
             "'tx-to-cpu{vectorize=false}' to test the vectoriser against "
             "naive loops"),
    cl::cat(toolCategory));
static cl::opt<std::string> device(
    "device",
    cl::desc("Where the rewritten side runs: cpu (default), emulator (the "
             "emulated CUDA device: --lowering defaults to its tx-to-nvvm, "
             "--reference-lowering to tx-to-cpu, so every kernel tx emits is "
             "compared with the CPU lowering) or cuda"),
    cl::init("cpu"), cl::cat(toolCategory));
static cl::opt<unsigned> seeds("seeds",
                               cl::desc("Input seeds per module (scalar "
                                        "flags alternate +1 / -1)"),
                               cl::init(2), cl::cat(toolCategory));
static cl::opt<std::string> weights(
    "weights",
    cl::desc("Checkpoint both sides load (default: pseudo-random weights): "
             "a directory of <checkpoint tensor>.npy files, a .safetensors "
             "file, a model.safetensors.index.json, or a directory holding "
             "model.safetensors[.index.json]"),
    cl::cat(toolCategory));
static cl::opt<int64_t> tokens("tokens", cl::desc("Size of dynamic dimensions"),
                               cl::init(3), cl::cat(toolCategory));
static cl::opt<double>
    tolerance("tolerance",
              cl::desc("Largest |a - b| / (1 + |a|) accepted (0: bit-exact)"),
              cl::init(1e-5), cl::cat(toolCategory));
static cl::opt<unsigned> optLevel("O", cl::desc("JIT optimisation level"),
                                  cl::init(1), cl::cat(toolCategory));
static cl::opt<std::string>
    reproducerDir("reproducer-dir",
                  cl::desc("Copy each mismatching module here"),
                  cl::cat(toolCategory));
static cl::opt<bool> verbose("v", cl::desc("One line per module"),
                             cl::cat(toolCategory));
static cl::opt<bool> noRun(
    "no-run",
    cl::desc("Only apply the rewrite and verify its output (for modules the "
             "CPU pipeline cannot run: containers, opaque calls)"),
    cl::cat(toolCategory));

/// The runtime library of --device (none for the CPU).
static std::vector<std::string> runtimeLibraries;
/// --weights, opened once (copies share the opened checkpoint).
static tx::WeightSource weightSource;

namespace {
struct Totals {
  unsigned modules = 0, runs = 0, matched = 0, bitExact = 0, mismatched = 0,
           errors = 0, fusedRemarks = 0, refusedRemarks = 0;
};
} // namespace

/// Runs `rewrite` on a clone of `module`, counting its decisions (the
/// remarks that say a group was fused or refused). The rewritten clone is
/// what gets compiled, so the harness tests exactly the IR the rewrite made.
static FailureOr<OwningOpRef<ModuleOp>> applyRewrite(ModuleOp module,
                                                     Totals &totals,
                                                     std::string &error) {
  OwningOpRef<ModuleOp> clone = module.clone();
  MLIRContext *ctx = module.getContext();
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    // The fusers' remarks: "fused ..." or "not fusing ...".
    std::string str = diag.str();
    StringRef text = str;
    if (diag.getSeverity() == DiagnosticSeverity::Remark) {
      if (text.starts_with("not fusing"))
        ++totals.refusedRemarks;
      else if (text.starts_with("fused"))
        ++totals.fusedRemarks;
      return success();
    }
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      error += str + "\n";
    return success();
  });
  PassManager pm(ctx);
  if (failed(parsePassPipeline(rewrite, pm)) || failed(pm.run(*clone)))
    return failure();
  return clone;
}

static std::vector<tx::Tensor> makeInputs(const tx::FunctionSignature &sig,
                                          unsigned seed) {
  std::vector<tx::Tensor> inputs;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const tx::ValueInfo &info = sig.inputs[i];
    // A container takes no input (each runner passes its own); an integer
    // argument (an i1 flag) is 0.
    if (info.isContainer)
      continue;
    if (info.intWidth) {
      inputs.emplace_back(std::vector<int64_t>{}, std::vector<float>{0.0f});
      continue;
    }
    if (info.isScalar) {
      inputs.emplace_back(std::vector<int64_t>{},
                          std::vector<float>{seed % 2 ? -1.0f : 1.0f});
      continue;
    }
    std::vector<int64_t> shape = info.shape;
    for (int64_t &d : shape)
      if (d < 0)
        d = tokens;
    inputs.push_back(
        tx::randomTensor("input" + std::to_string(i), shape, 1000 + seed));
  }
  return inputs;
}

/// Compares two result lists; returns the largest scaled error (or +inf on
/// a shape mismatch) and whether they are bit-identical.
static double compare(const std::vector<tx::Tensor> &a,
                      const std::vector<tx::Tensor> &b, bool &bitExact,
                      std::string &where) {
  bitExact = true;
  double worst = 0;
  if (a.size() != b.size()) {
    where = "result count " + std::to_string(a.size()) + " vs " +
            std::to_string(b.size());
    return INFINITY;
  }
  for (size_t r = 0; r < a.size(); ++r) {
    if (a[r].shape != b[r].shape) {
      where = "result " + std::to_string(r) + " shape " + a[r].typeString() +
              " vs " + b[r].typeString();
      return INFINITY;
    }
    for (size_t i = 0; i < a[r].data.size(); ++i) {
      float x = a[r].data[i], y = b[r].data[i];
      if (x != y && !(std::isnan(x) && std::isnan(y)))
        bitExact = false;
      double err = std::isnan(x) != std::isnan(y)
                       ? INFINITY
                       : std::fabs(double(x) - double(y)) /
                             (1.0 + std::fabs(double(x)));
      if (err > worst) {
        worst = err;
        where = "result " + std::to_string(r) + " element " +
                std::to_string(i) + ": " + std::to_string(x) + " vs " +
                std::to_string(y);
      }
    }
  }
  return worst;
}

static void saveReproducer(StringRef file) {
  if (reproducerDir.empty())
    return;
  (void)llvm::sys::fs::create_directories(reproducerDir);
  llvm::SmallString<256> dest(reproducerDir.getValue());
  llvm::sys::path::append(dest, llvm::sys::path::filename(file));
  if (std::error_code ec = llvm::sys::fs::copy_file(file, dest))
    llvm::errs() << "tx-difftest: cannot copy " << file << " to " << dest
                 << ": " << ec.message() << "\n";
  else
    llvm::outs() << "  reproducer: " << dest << "\n";
}

static void checkModule(MLIRContext &ctx, StringRef file, Totals &totals) {
  ++totals.modules;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module;
  if (auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(file)) {
    sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    module = tx::parseModuleNamingArguments(sourceMgr, &ctx);
  } else {
    llvm::outs() << "ERROR " << file << ": cannot read it: "
                 << buffer.getError().message() << "\n";
    ++totals.errors;
    return;
  }
  if (!module) {
    llvm::outs() << "ERROR " << file << ": does not parse\n";
    ++totals.errors;
    return;
  }
  std::string rewriteError;
  FailureOr<OwningOpRef<ModuleOp>> rewritten =
      applyRewrite(*module, totals, rewriteError);
  if (failed(rewritten)) {
    llvm::outs() << "ERROR " << file << ": '" << rewrite
                 << "' failed: " << rewriteError;
    ++totals.errors;
    saveReproducer(file);
    return;
  }

  if (noRun) {
    // The pass manager verified the output; print and re-parse it too, so
    // a module that verifies but does not round-trip is caught.
    std::string text;
    llvm::raw_string_ostream os(text);
    (*rewritten)->print(os);
    ParserConfig config(&ctx);
    if (!parseSourceString<ModuleOp>(text, config)) {
      llvm::outs() << "ERROR " << file << ": the rewritten module does not "
                   << "parse back\n";
      ++totals.errors;
      saveReproducer(file);
    } else if (verbose) {
      llvm::outs() << "ok " << file << "\n";
    }
    return;
  }

  tx::CpuRunnerOptions options;
  options.optLevel = optLevel;
  tx::setTextPipeline(options, lowering);
  options.sharedLibs = runtimeLibraries;
  options.weights = weightSource;
  tx::CpuRunnerOptions referenceOptions = options;
  if (!referenceLowering.empty())
    tx::setTextPipeline(referenceOptions, referenceLowering);
  auto reference = tx::CpuRunner::compile(*module, referenceOptions);
  if (!reference) {
    llvm::outs() << "ERROR " << file << ": " << toString(reference.takeError())
                 << "\n";
    ++totals.errors;
    return;
  }
  auto candidate = tx::CpuRunner::compile(**rewritten, options);
  if (!candidate) {
    llvm::outs() << "ERROR " << file << " after '" << rewrite
                 << "': " << toString(candidate.takeError()) << "\n";
    ++totals.errors;
    saveReproducer(file);
    return;
  }
  auto sig = (*reference)->signature(entry);
  if (!sig) {
    llvm::outs() << "ERROR " << file << ": " << toString(sig.takeError())
                 << "\n";
    ++totals.errors;
    return;
  }
  bool moduleOk = true;
  for (unsigned seed = 0; seed < seeds; ++seed) {
    std::vector<tx::Tensor> inputs = makeInputs(*sig, seed);
    auto want = (*reference)->call(entry, inputs);
    auto got = (*candidate)->call(entry, inputs);
    ++totals.runs;
    if (!want || !got) {
      llvm::outs() << "ERROR " << file << " seed " << seed << ": "
                   << (want ? toString(got.takeError())
                            : toString(want.takeError()))
                   << "\n";
      if (!got && want)
        llvm::consumeError(want.takeError());
      else if (got)
        llvm::consumeError(got.takeError());
      ++totals.errors;
      moduleOk = false;
      break;
    }
    bool exact;
    std::string where;
    double err = compare(*want, *got, exact, where);
    if (err > tolerance) {
      llvm::outs() << "MISMATCH " << file << " seed " << seed
                   << " (rewrite '" << rewrite << "'): " << where << "\n";
      ++totals.mismatched;
      moduleOk = false;
      saveReproducer(file);
      break;
    }
    ++totals.matched;
    totals.bitExact += exact;
  }
  if (verbose && moduleOk)
    llvm::outs() << "ok " << file << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::tx::registerAllTxPasses();
  tx::keepOnlyToolOptions(toolCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tx-difftest: compare a function before and after a rewrite\n");

  DialectRegistry registry;
  tx::registerAllTxDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  // Options are checked before any module runs: a bad value is an error
  // (exit 2), never an abort later (a negative size reaching std::vector).
  auto badOption = [](const llvm::Twine &msg) {
    llvm::errs() << "tx-difftest: error: " << msg << "\n";
    return 2;
  };
  if (tokens < 1)
    return badOption("--tokens must be at least 1, got " + llvm::Twine(tokens));
  if (!tx::Tensor::checkedNumElements({tokens, tokens, tokens}))
    return badOption("--tokens " + llvm::Twine(tokens) + " is too large");
  if (seeds < 1)
    return badOption("--seeds must be at least 1");
  if (!(tolerance >= 0) || std::isinf(tolerance))
    return badOption("--tolerance must be a finite number >= 0");
  if (optLevel > 3)
    return badOption("-O must be 0, 1, 2 or 3, got " + llvm::Twine(optLevel));
  if (entry.empty())
    return badOption("-e needs a function name");
  auto selected = tx::selectDevice(device, tx::toolLibraryDir(argv[0]));
  if (!selected)
    return badOption(llvm::toString(selected.takeError()));
  weightSource.path = weights;
  if (llvm::Error e = tx::openWeightSource(weightSource))
    return badOption("--weights: " + llvm::toString(std::move(e)));
  if (!selected->runtimeLibrary.empty()) {
    runtimeLibraries.push_back(selected->runtimeLibrary);
    if (!lowering.getNumOccurrences())
      lowering = selected->defaultPipelineName;
    if (!referenceLowering.getNumOccurrences())
      referenceLowering = "tx-to-cpu";
  }
  // Every pipeline must at least parse.
  using Flag = std::pair<StringRef, StringRef>;
  for (auto [flag, text] :
       {Flag{"--rewrite", rewrite}, Flag{"--lowering", lowering},
        Flag{"--reference-lowering", referenceLowering}}) {
    if (text.empty())
      continue;
    PassManager pm(&ctx);
    std::string err;
    llvm::raw_string_ostream os(err);
    if (failed(parsePassPipeline(text, pm, os)))
      return badOption("bad " + flag + " '" + text + "': " + err);
  }

  Totals totals;
  for (const std::string &file : inputFiles)
    checkModule(ctx, file, totals);

  llvm::outs() << "tx-difftest: " << totals.modules << " modules, "
               << totals.runs << " runs: " << totals.matched << " matched ("
               << totals.bitExact << " bit-exact), " << totals.mismatched
               << " mismatched, " << totals.errors << " errors; rewrite "
               << "decisions: " << totals.fusedRemarks << " fused, "
               << totals.refusedRemarks << " refused\n";
  if (totals.errors)
    return 2;
  return totals.mismatched ? 1 : 0;
}
