//===- tx-bench-cpu.cpp - fused vs unfused projections against OpenBLAS ---===//
//
// For a Llama-like layer of hidden size H, builds two tx modules per token
// count M:
//   qkv:     q, k, v = q_proj(x), k_proj(x), v_proj(x)     (three tx.linear)
//   gate_up: silu(gate_proj(x)) * up_proj(x)              (two tx.linear)
// compiles each with "tx-to-cpu" (unfused) and "tx-fusion,tx-to-cpu" (fused)
// through tx::CpuRunner, and times, interleaved in one loop, the unfused
// call, the fused call and OpenBLAS cblas_sgemm (C = A * B^T) on the merged
// GEMM shape [M x K] * [N x K]^T with 1 and 2 OpenBLAS threads. The tx code
// is single-threaded JIT code unless the pipeline says threads=N: compare it
// with the OpenBLAS column of as many threads.
//
// So that the table cannot compare wrong work, every row checks
//   - that tx-fusion really merged the projections (tx.layer count drops),
//   - the fused outputs against the unfused ones (max abs difference),
//   - the unfused outputs against the same function computed from the
//     OpenBLAS GEMM on the same weights (relative max difference).
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Execution/CpuRunner.h"
#include "TxDialect/InitAllTx.h"
#include "TextPipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<int64_t> hidden("hidden", cl::desc("Hidden size K"),
                               cl::init(4096));
static cl::opt<int64_t> kvDim("kv-dim",
                              cl::desc("k_proj / v_proj output size (GQA: "
                                       "kv heads x head dim)"),
                              cl::init(1024));
static cl::opt<int64_t>
    intermediate("intermediate",
                 cl::desc("gate_proj / up_proj output size each"),
                 cl::init(11008));
static cl::list<int64_t> tokens("m", cl::desc("Token counts M (default "
                                              "1,16,512,2048; --quick 1,16)"),
                                cl::CommaSeparated);
static cl::opt<unsigned> reps("reps",
                              cl::desc("Timed repetitions per M and kind "
                                       "(median reported; default 5, 3 "
                                       "for M >= 512, 1 with --quick)"),
                              cl::init(0));
static cl::opt<unsigned> warmup("warmup",
                                cl::desc("Untimed calls first (default 1, "
                                         "0 with --quick)"),
                                cl::init(~0u));
static cl::opt<bool> quick("quick",
                           cl::desc("Smoke test: M = 1,16, one repetition, "
                                    "no warm-up"));
static cl::opt<bool> noBufferCache(
    "no-buffer-cache",
    cl::desc("Compile the runners without their buffer cache "
             "(CpuRunnerOptions::bufferCache): every large buffer of a call "
             "is malloc'ed and freed, as before the cache"));
static cl::opt<bool> freshResults(
    "fresh-results",
    cl::desc("Each call returns new result tensors (CpuRunner::call) "
             "instead of writing into the previous call's "
             "(CpuRunner::callInto), as before callInto"));
static cl::opt<std::string> kinds("kinds",
                                  cl::desc("Comma-separated: qkv,gate_up"),
                                  cl::init("qkv,gate_up"));
static cl::opt<std::string>
    cpuPipeline("cpu-pipeline",
                cl::desc("The lowering of both tx modules (default tx-to-cpu; "
                         "e.g. 'tx-to-cpu{gemm-cache-tile=0,0}' to compare "
                         "lowerings by their tx/BLAS1 ratio)"),
                cl::init("tx-to-cpu"));
static cl::opt<unsigned> evictMb(
    "evict-mb",
    cl::desc("Before every timed call (tx and OpenBLAS alike), write a "
             "buffer of this many MiB so that the weights come from memory, "
             "as in a model whose layers do not fit in the caches (0: off; "
             "default 0: each side's weights are as warm as the interleaving "
             "left them)"),
    cl::init(0));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of inputs and weights"),
                              cl::init(0));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "tx-bench-cpu: " << msg << "\n";
  return 1;
}

using Clock = std::chrono::steady_clock;
static double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {
/// One projection group: the layers it reads, in merged-row order.
struct Proj {
  std::string name;       // symbol, e.g. q_proj
  std::string checkpoint; // checkpoint prefix
  int64_t rows;           // out features
};
struct Kind {
  std::string name; // "qkv" or "gate_up"
  std::vector<Proj> projs;
  int64_t mergedN() const {
    int64_t n = 0;
    for (const Proj &p : projs)
      n += p.rows;
    return n;
  }
};
} // namespace

/// memref<?xNxf32>: tokens are dynamic, as in real modules, so one
/// compilation serves every M.
static std::string memref(int64_t n) {
  return "memref<?x" + std::to_string(n) + "xf32>";
}

/// The module text of `kind`.
static std::string buildModule(const Kind &kind, int64_t k) {
  std::string s =
      "module attributes {tx.config = #tx.config<tp_size = 1>} {\n";
  for (const Proj &p : kind.projs)
    s += "  tx.layer @" + p.name + " : " + std::to_string(k) + " -> " +
         std::to_string(p.rows) + ", f32 {checkpoint = \"" + p.checkpoint +
         "\"}\n";
  std::string in = memref(k);
  if (kind.name == "qkv") {
    std::string results;
    for (const Proj &p : kind.projs)
      results += (results.empty() ? "" : ", ") + memref(p.rows);
    s += "  func.func @forward(%x: " + in + ") -> (" + results + ") {\n";
    std::string names;
    for (const Proj &p : kind.projs) {
      s += "    %" + p.name + " = tx.linear @" + p.name + "(%x) : " + in +
           " -> " + memref(p.rows) + "\n";
      names += (names.empty() ? "%" : ", %") + p.name;
    }
    s += "    return " + names + " : " + results + "\n  }\n}\n";
    return s;
  }
  // gate_up: silu(gate(x)) * up(x).
  std::string out = memref(kind.projs[0].rows);
  s += "  func.func @forward(%x: " + in + ") -> " + out + " {\n";
  s += "    %g = tx.linear @" + kind.projs[0].name + "(%x) : " + in + " -> " +
       out + "\n";
  s += "    %u = tx.linear @" + kind.projs[1].name + "(%x) : " + in + " -> " +
       out + "\n";
  s += "    %a = tx.unary silu %g : " + out + " -> " + out + "\n";
  s += "    %y = tx.binary mul %a, %u : " + out + ", " + out + " -> " + out +
       "\n";
  s += "    return %y : " + out + "\n  }\n}\n";
  return s;
}

/// Number of tx.layer ops after running `pipeline` on a clone of `module`.
static FailureOr<int> layersAfter(ModuleOp module, StringRef pipeline) {
  OwningOpRef<ModuleOp> clone = module.clone();
  PassManager pm(module.getContext());
  std::string err;
  llvm::raw_string_ostream os(err);
  if (failed(parsePassPipeline(pipeline, pm, os)) ||
      failed(pm.run(*clone))) {
    llvm::errs() << "tx-bench-cpu: pipeline '" << pipeline
                 << "' failed: " << err << "\n";
    return failure();
  }
  int n = 0;
  clone->walk([&](Operation *op) {
    if (op->getName().getStringRef() == "tx.layer")
      ++n;
  });
  return n;
}

/// The reference of `kind`'s outputs from the merged GEMM C [M x N]:
/// column blocks for qkv, silu(gate) * up for gate_up.
static std::vector<tx::Tensor> referenceFrom(const Kind &kind,
                                             const std::vector<float> &c,
                                             int64_t m) {
  int64_t n = kind.mergedN();
  std::vector<tx::Tensor> outs;
  if (kind.name == "qkv") {
    int64_t col = 0;
    for (const Proj &p : kind.projs) {
      tx::Tensor t = tx::Tensor::zeros({m, p.rows});
      for (int64_t i = 0; i < m; ++i)
        std::copy_n(&c[i * n + col], p.rows, &t.data[i * p.rows]);
      outs.push_back(std::move(t));
      col += p.rows;
    }
    return outs;
  }
  int64_t r = kind.projs[0].rows;
  tx::Tensor t = tx::Tensor::zeros({m, r});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < r; ++j) {
      float g = c[i * n + j], u = c[i * n + r + j];
      t.data[i * r + j] = g / (1.0f + std::exp(-g)) * u;
    }
  outs.push_back(std::move(t));
  return outs;
}

/// max |a - b| over all outputs, and max |b| (the scale of a relative check).
static std::pair<double, double> maxDiff(const std::vector<tx::Tensor> &a,
                                         const std::vector<tx::Tensor> &b) {
  double diff = INFINITY, scale = 0;
  if (a.size() != b.size())
    return {diff, scale};
  diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].data.size() != b[i].data.size())
      return {INFINITY, scale};
    for (size_t j = 0; j < a[i].data.size(); ++j) {
      diff = std::max(diff, (double)std::fabs(a[i].data[j] - b[i].data[j]));
      scale = std::max(scale, (double)std::fabs(b[i].data[j]));
    }
  }
  return {diff, scale};
}

namespace {
struct Row {
  std::string kind;
  int64_t m = 0, n = 0, k = 0;
  double unfusedMs = 0, fusedMs = 0, blas1Ms = 0, blas2Ms = 0;
  double fusedDiff = 0, blasRelDiff = 0;
  int layersBefore = 0, layersAfter = 0;
  bool ok = false;
};
} // namespace

static void printRow(const Row &r) {
  double gflop = 2.0 * r.m * r.n * r.k * 1e-9;
  auto gfs = [&](double ms) { return gflop / (ms * 1e-3); };
  llvm::outs() << llvm::format(
      "| %-7s | %4lld | %5lld | %10.3f | %10.3f | %5.2fx | %7.1f | %7.1f | "
      "%7.1f | %5.2f | %5.2f | %8.1e | %8.1e | %-4s |\n",
      r.kind.c_str(), (long long)r.m, (long long)r.n, r.unfusedMs, r.fusedMs,
      r.unfusedMs / r.fusedMs, gfs(r.fusedMs), gfs(r.blas1Ms), gfs(r.blas2Ms),
      r.blas1Ms / r.fusedMs, r.blas2Ms / r.fusedMs, r.fusedDiff,
      r.blasRelDiff, r.ok ? "ok" : "FAIL");
  llvm::outs().flush();
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tx CPU benchmark: fused vs unfused QKV and gate/up projections, and "
      "the tx GEMM throughput against OpenBLAS sgemm, side by side\n");

  std::vector<int64_t> ms(tokens.begin(), tokens.end());
  if (ms.empty())
    ms = quick ? std::vector<int64_t>{1, 16}
               : std::vector<int64_t>{1, 16, 512, 2048};
  unsigned warm = warmup != ~0u ? warmup : (quick ? 0 : 1);
  int64_t k = hidden;
  if (k <= 0 || kvDim <= 0 || intermediate <= 0)
    return fail("--hidden, --kv-dim and --intermediate must be positive");
  for (int64_t m : ms)
    if (m <= 0)
      return fail("every --m must be positive");

  std::vector<Kind> allKinds;
  for (StringRef name : llvm::split(StringRef(kinds), ',')) {
    if (name == "qkv")
      allKinds.push_back(
          {"qkv",
           {{"q_proj", "model.layers.0.self_attn.q_proj", k},
            {"k_proj", "model.layers.0.self_attn.k_proj", kvDim},
            {"v_proj", "model.layers.0.self_attn.v_proj", kvDim}}});
    else if (name == "gate_up")
      allKinds.push_back(
          {"gate_up",
           {{"gate_proj", "model.layers.0.mlp.gate_proj", intermediate},
            {"up_proj", "model.layers.0.mlp.up_proj", intermediate}}});
    else
      return fail("unknown kind '" + name + "' (expected qkv or gate_up)");
  }

  MLIRContext context;
  DialectRegistry registry;
  tx::registerAllTxDialects(registry);
  context.appendDialectRegistry(registry);
  tx::registerAllTxPasses();

  const char *coretype = std::getenv("OPENBLAS_CORETYPE");
  const char *l2 = std::getenv("OPENBLAS_L2_SIZE");
  // glibc's malloc returns allocations of 32 MB and more (tx's outputs and
  // the runner's copies at long prompts) to the kernel at every free, so
  // each call faults their pages in again: GLIBC_TUNABLES can keep them.
  const char *tunables = std::getenv("GLIBC_TUNABLES");
  llvm::outs() << "tx CPU benchmark: hidden " << k << ", q " << k << ", k/v "
               << kvDim << ", gate/up " << intermediate << " each; f32\n"
               << "tx: " << cpuPipeline << " JIT; fused: "
               << "tx-fusion," << cpuPipeline << "\n"
               << OPENBLAS_VERSION << " (" << openblas_get_config()
               << "), core " << openblas_get_corename()
               << "; OPENBLAS_CORETYPE="
               << (coretype ? coretype : "(unset)") << " OPENBLAS_L2_SIZE="
               << (l2 ? l2 : "(unset)") << "; GLIBC_TUNABLES="
               << (tunables ? tunables : "(unset)") << "; runner buffer cache "
               << (noBufferCache ? "off" : "on") << "; caches evicted "
               << (evictMb ? "(" + std::to_string(evictMb) +
                                 " MiB written) before every timed call"
                           : std::string("never"))
               << "\n"
               << "timing: median of interleaved repetitions after " << warm
               << " warm-up call(s); tx times include the runner's copies "
                  "of inputs and results (into the previous call's result "
                  "tensors)\n"
               << "GFLOP/s count the GEMM only (2*M*N*K, N merged); "
                  "ratio = OpenBLAS time / tx fused time (>1: tx faster)\n\n";
  llvm::outs()
      << "| kind    |    M |     N  | unfused ms |   fused ms | fused speedup "
         "| tx GF/s | BLAS1 GF/s | BLAS2 GF/s | tx/BLAS1 | tx/BLAS2 "
         "| max|fused-unfused| | rel diff vs BLAS | check |\n";
  llvm::outs() << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  llvm::outs().flush();

  // The buffer --evict-mb writes before each timed call (one byte per
  // cache line is enough to evict; the sum keeps the writes).
  std::vector<char> evictBuffer(size_t(evictMb) << 20);
  unsigned evictRound = 0;
  auto evict = [&]() {
    ++evictRound;
    for (size_t i = 0; i < evictBuffer.size(); i += 64)
      evictBuffer[i] = char(evictRound + i);
    asm volatile("" : : "r"(evictBuffer.data()) : "memory");
  };

  bool allOk = true;
  for (const Kind &kind : allKinds) {
    std::string text = buildModule(kind, k);
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return fail("cannot parse the generated module:\n" + text);
    auto layersBefore = layersAfter(*module, "canonicalize");
    auto layersFused = layersAfter(*module, "tx-fusion");
    if (failed(layersBefore) || failed(layersFused))
      return 1;
    if (*layersFused >= *layersBefore)
      llvm::errs() << "tx-bench-cpu: tx-fusion did not merge the " << kind.name
                   << " projections (" << *layersBefore << " layers -> "
                   << *layersFused << ")\n";

    tx::CpuRunnerOptions unfusedOpts, fusedOpts;
    unfusedOpts.weights.seed = fusedOpts.weights.seed = seed;
    unfusedOpts.bufferCache = fusedOpts.bufferCache = !noBufferCache;
    tx::setTextPipeline(unfusedOpts, cpuPipeline);
    tx::setTextPipeline(fusedOpts, "tx-fusion," + cpuPipeline);
    auto unfused = tx::CpuRunner::compile(*module, unfusedOpts);
    if (!unfused)
      return fail(llvm::toString(unfused.takeError()));
    auto fused = tx::CpuRunner::compile(*module, fusedOpts);
    if (!fused)
      return fail(llvm::toString(fused.takeError()));

    // OpenBLAS's B: the same checkpoint weights, stacked in the order of
    // `kind.projs` (independent of how tx-fusion lays out its merged layer).
    int64_t mergedN = kind.mergedN();
    std::vector<float> w;
    w.reserve(mergedN * k);
    for (const Proj &p : kind.projs) {
      tx::Tensor t = tx::defaultCheckpointTensor(p.checkpoint + ".weight",
                                                 {p.rows, k}, seed);
      w.insert(w.end(), t.data.begin(), t.data.end());
    }

    for (int64_t m : ms) {
      Row row;
      row.kind = kind.name;
      row.m = m;
      row.n = mergedN;
      row.k = k;
      row.layersBefore = *layersBefore;
      row.layersAfter = *layersFused;
      unsigned n = reps ? reps : (quick ? 1 : (m >= 512 ? 3 : 5));
      tx::Tensor x = tx::randomTensor("x", {m, k}, seed);
      std::vector<float> c(m * row.n);
      auto sgemm = [&](int threads) {
        openblas_set_num_threads(threads);
        auto t0 = Clock::now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, row.n, k,
                    1.0f, x.data.data(), k, w.data(), k, 0.0f, c.data(),
                    row.n);
        return secondsSince(t0) * 1e3;
      };
      std::vector<tx::Tensor> unfusedOut, fusedOut;
      auto call = [&](tx::CpuRunner &r, std::vector<tx::Tensor> &out,
                      double &ms) -> bool {
        // Into the tensors of the previous call, as OpenBLAS writes into
        // the same C each time.
        auto fresh = [&]() -> llvm::Error {
          auto res = r.call("forward", {x});
          if (!res)
            return res.takeError();
          out = std::move(*res);
          return llvm::Error::success();
        };
        auto t0 = Clock::now();
        llvm::Error error =
            freshResults ? fresh() : r.callInto("forward", {x}, out);
        ms = secondsSince(t0) * 1e3;
        if (error) {
          llvm::errs() << "tx-bench-cpu: " << llvm::toString(std::move(error))
                       << "\n";
          return false;
        }
        return true;
      };

      std::vector<double> tu, tf, tb1, tb2;
      for (unsigned i = 0; i < warm + n; ++i) {
        double a, b;
        evict();
        if (!call(**unfused, unfusedOut, a))
          return 1;
        evict();
        if (!call(**fused, fusedOut, b))
          return 1;
        // OpenBLAS's threads spin for a while after a call (about 2^28
        // cycles) before they sleep. Its 2-thread call is timed with them
        // awake (an untimed call first, as in a run of GEMMs back to back);
        // then they are let sleep, so that the next tx call does not share
        // the cores with them (with threads, it ran no faster than one).
        evict();
        double b1 = sgemm(1);
        sgemm(2);
        evict();
        double b2 = sgemm(2);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (i < warm)
          continue;
        tu.push_back(a);
        tf.push_back(b);
        tb1.push_back(b1);
        tb2.push_back(b2);
      }
      row.unfusedMs = median(tu);
      row.fusedMs = median(tf);
      row.blas1Ms = median(tb1);
      row.blas2Ms = median(tb2);

      row.fusedDiff = maxDiff(fusedOut, unfusedOut).first;
      auto [d, scale] = maxDiff(unfusedOut, referenceFrom(kind, c, m));
      row.blasRelDiff = scale > 0 ? d / scale : d;
      // Fusion keeps each output's summation order, so fused and unfused
      // agree to rounding; OpenBLAS sums in another order: 1e-4 relative.
      row.ok = row.layersAfter < row.layersBefore &&
               row.fusedDiff <= 1e-5 * std::max(scale, 1.0) &&
               row.blasRelDiff <= 1e-4;
      allOk &= row.ok;
      printRow(row);
    }
  }
  llvm::outs() << "\ncheck: " << (allOk ? "PASS" : "FAIL")
               << " (fusion merged the layers; fused == unfused; tx == "
                  "OpenBLAS reference)\n";
  return allOk ? 0 : 1;
}
