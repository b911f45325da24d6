//===- FinalizeConfig.cpp - vLLM's compilation-config decision table ------===//
//
// Reproduces how vLLM finalises sequence parallelism in its config
// (vllm/config/vllm.py and CompilationConfig.set_splitting_ops_for_v1):
// every change is a warning on the module saying what changed and why.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Diagnostics.h"
#include "TxDialect/Transforms/SequenceParallel.h"

#include "TxDialect/TxDialect.h"
#include "TxDialect/TxOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <limits>

namespace mlir::tx {
#define GEN_PASS_DEF_TXFINALIZECONFIG
#include "TxDialect/Transforms/SPPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;
using namespace mlir::tx;

namespace {

/// Per-architecture constants of vLLM's SP threshold heuristic: SP pays off
/// once each GPU's share of the all-reduce is at least `minMB` MiB, for
/// models of at least `minHidden` hidden features.
struct SPThresholdConstants {
  int64_t minHidden;
  int64_t minMB;
};

std::optional<SPThresholdConstants> lookupArch(StringRef arch) {
  if (arch == "sm_90")
    return SPThresholdConstants{8192, 8};
  if (arch == "sm_100")
    return SPThresholdConstants{8192, 32};
  return std::nullopt;
}

/// The mutable form of a CompileConfigAttr.
struct Config {
  int64_t tp;
  bool sp, asyncTp;
  std::optional<int64_t> minTokens;
  ArrayAttr splittingOps;
  bool graphPartition;
  CUDAGraphMode cudagraph;
  ArrayAttr captureSizes;
  std::optional<int64_t> hidden, elementSize;
  StringAttr arch;

  explicit Config(CompileConfigAttr c)
      : tp(c.getTpSize()), sp(c.getSequenceParallel()),
        asyncTp(c.getAsyncTp()), minTokens(c.getSpMinTokens()),
        splittingOps(c.getSplittingOps()),
        graphPartition(c.getGraphPartition()),
        cudagraph(c.getCudagraphMode()), captureSizes(c.getCaptureSizes()),
        hidden(c.getHiddenSize()), elementSize(c.getElementSize()),
        arch(c.getArch()) {}

  CompileConfigAttr get(MLIRContext *ctx) const {
    return CompileConfigAttr::get(ctx, tp, sp, asyncTp, minTokens,
                                  splittingOps, graphPartition, cudagraph,
                                  captureSizes, hidden, elementSize, arch);
  }
};

bool hasPiecewiseGraphs(CUDAGraphMode m) {
  return m == CUDAGraphMode::piecewise ||
         m == CUDAGraphMode::full_and_piecewise;
}

struct FinalizeConfigPass
    : public tx::impl::TxFinalizeConfigBase<FinalizeConfigPass> {
  void runOnOperation() override;

  /// Hidden size and element size from the norms' weights: every rmsnorm
  /// normalises the residual stream, so its weight length is the hidden
  /// size. Fails (with an error) when the norms disagree.
  LogicalResult inferFromNorms(ModuleOp module, std::optional<int64_t> &hidden,
                               std::optional<int64_t> &elementSize);

  /// Computes the SP threshold or says why there is none (and turns SP
  /// off). Fails (with an error) on inconsistent or overflowing settings.
  LogicalResult computeMinTokens(ModuleOp module, Config &c);
};

} // namespace

LogicalResult
FinalizeConfigPass::inferFromNorms(ModuleOp module,
                                   std::optional<int64_t> &hidden,
                                   std::optional<int64_t> &elementSize) {
  Operation *first = nullptr;
  WalkResult r = module.walk([&](Operation *op) {
    Value weight, input;
    if (auto n = dyn_cast<RMSNormOp>(op))
      weight = n.getWeight(), input = n.getInput();
    else if (auto n = dyn_cast<AddRMSNormOp>(op))
      weight = n.getWeight(), input = n.getInput();
    else
      return WalkResult::advance();
    // The normalised (last) dimension: the weight's size where there is
    // one, the input's otherwise (a weightless norm).
    auto type = cast<MemRefType>(weight ? weight.getType() : input.getType());
    int64_t h = type.getShape().back();
    if (ShapedType::isDynamic(h))
      return WalkResult::advance();
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    if (!first) {
      first = op;
      hidden = h;
      elementSize = bytes;
      return WalkResult::advance();
    }
    if (*hidden != h) {
      InFlightDiagnostic d = op->emitError()
                             << "norm weights disagree on the hidden size ("
                             << h << " here, " << *hidden
                             << " before); set hidden_size in tx.config";
      d.attachNote(first->getLoc()) << "hidden size " << *hidden << " here";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

LogicalResult FinalizeConfigPass::computeMinTokens(ModuleOp module,
                                                   Config &c) {
  auto disable = [&](const Twine &why) -> LogicalResult {
    emitWarningAt(module)
        << why
        << ": disabling sequence_parallel and async_tp (set sp_min_tokens "
           "by hand to force sequence parallelism)";
    c.sp = false;
    c.asyncTp = false;
    return success();
  };

  std::optional<int64_t> normHidden, normElementSize;
  if (!c.hidden || !c.elementSize) {
    if (failed(inferFromNorms(module, normHidden, normElementSize)))
      return failure();
  }
  if (!c.hidden) {
    if (!normHidden)
      return disable("sp_min_tokens is unset and the hidden size is unknown "
                     "(no hidden_size in tx.config and no rmsnorm weight to "
                     "infer it from)");
    c.hidden = normHidden;
    emitWarningAt(module) << "hidden_size is unset: inferred " << *c.hidden
                         << " from the rmsnorm weights";
  }
  if (!c.elementSize) {
    c.elementSize = normElementSize ? *normElementSize : 2;
    emitWarningAt(module) << "element_size is unset: using " << *c.elementSize
                         << (normElementSize ? " (the rmsnorm element type)"
                                             : " (bf16/f16, the default)");
  }
  if (!c.arch)
    return disable("sp_min_tokens is unset and no arch is given for the "
                   "threshold heuristic");
  std::optional<SPThresholdConstants> k = lookupArch(c.arch.getValue());
  if (!k)
    return disable("sp_min_tokens is unset and the threshold heuristic has "
                   "no constants for arch '" +
                   c.arch.getValue() + "' (known: sm_90, sm_100)");
  if (*c.hidden < k->minHidden)
    return disable("hidden_size " + Twine(*c.hidden) +
                   " is too small for the SP threshold heuristic on " +
                   c.arch.getValue() + " (needs at least " +
                   Twine(k->minHidden) + ")");
  // floor(MB * 2^20 * tp / (hidden * element_size)) in 128 bits: neither
  // product fits 64 bits for every tp_size and hidden_size the attribute
  // accepts.
  unsigned __int128 num = static_cast<unsigned __int128>(k->minMB) *
                          (uint64_t(1) << 20) * static_cast<uint64_t>(c.tp);
  unsigned __int128 den = static_cast<unsigned __int128>(*c.hidden) *
                          static_cast<uint64_t>(*c.elementSize);
  unsigned __int128 tokens = num / den;
  if (tokens > static_cast<unsigned __int128>(
                   std::numeric_limits<int64_t>::max())) {
    return emitErrorAt(module)
           << "the SP threshold for tp_size " << c.tp
           << " does not fit in 64 bits; set sp_min_tokens";
  }
  c.minTokens = static_cast<int64_t>(tokens);
  emitWarningAt(module) << "sp_min_tokens is unset: computed " << *c.minTokens
                       << " = floor(" << k->minMB << " MiB * " << c.tp
                       << " / (" << *c.hidden << " * " << *c.elementSize
                       << " B)) for " << c.arch.getValue();
  return success();
}

void FinalizeConfigPass::runOnOperation() {
  ModuleOp module = getOperation();
  CompileConfigAttr original = getCompileConfig(module);
  if (!original || !module->hasAttr(TxDialect::getConfigAttrName()))
    return;
  Config c(original);

  if (c.elementSize && !llvm::is_contained({1, 2, 4, 8}, *c.elementSize)) {
    emitErrorAt(module) << "element_size " << *c.elementSize
                       << " is not the size of a float type (1, 2, 4 or 8)";
    return signalPassFailure();
  }

  // Async TP is built on sequence parallelism.
  if (c.asyncTp && !c.sp) {
    emitWarningAt(module) << "async_tp requires sequence_parallel: enabling "
                            "sequence_parallel";
    c.sp = true;
  }

  if (c.sp) {
    if (c.tp == 1) {
      emitWarningAt(module) << "sequence parallelism requires tp_size > 1: "
                              "disabling sequence_parallel and async_tp";
      c.sp = false;
      c.asyncTp = false;
    } else if (!c.minTokens && failed(computeMinTokens(module, c))) {
      return signalPassFailure();
    }
  }

  // CompilationConfig.set_splitting_ops_for_v1. Unset splitting ops are the
  // default ones (attention): piecewise compilation. A user-given empty list
  // means one full graph, so there are no piecewise graphs to capture.
  bool defaulted = !c.splittingOps;
  if (defaulted) {
    c.splittingOps = CompileConfigAttr::getDefaultSplittingOps(
        module.getContext());
  } else if (c.splittingOps.empty()) {
    if (c.cudagraph == CUDAGraphMode::piecewise) {
      emitWarningAt(module) << "splitting_ops is empty, so there are no "
                              "piecewise CUDA graphs: cudagraph_mode "
                              "piecewise becomes none";
      c.cudagraph = CUDAGraphMode::none;
    } else if (c.cudagraph == CUDAGraphMode::full_and_piecewise) {
      emitWarningAt(module) << "splitting_ops is empty, so there are no "
                              "piecewise CUDA graphs: cudagraph_mode "
                              "full_and_piecewise becomes full";
      c.cudagraph = CUDAGraphMode::full;
    }
  }

  // SP splits activations along tokens, so a residual passed between
  // piecewise subgraphs would have different sizes on different ranks.
  if ((c.sp || c.asyncTp) && !c.graphPartition && !c.splittingOps.empty()) {
    emitWarningAt(module) << "sequence parallelism requires full-graph "
                            "compilation without graph_partition: clearing "
                            "splitting_ops"
                         << (defaulted ? " (unset: the default, attention)"
                                       : "")
                         << " to keep sequence_parallel and async_tp";
    c.splittingOps = ArrayAttr::get(module.getContext(), {});
    if (hasPiecewiseGraphs(c.cudagraph)) {
      emitWarningAt(module)
          << "sequence parallelism is incompatible with piecewise CUDA "
             "graphs without graph_partition: cudagraph_mode "
          << stringifyCUDAGraphMode(c.cudagraph) << " becomes full";
      c.cudagraph = CUDAGraphMode::full;
    }
  }

  // Under SP every captured batch is split across the ranks.
  if (c.sp && c.captureSizes) {
    SmallVector<Attribute> kept;
    SmallVector<int64_t> dropped;
    for (Attribute a : c.captureSizes) {
      int64_t n = cast<IntegerAttr>(a).getInt();
      if (n % c.tp == 0)
        kept.push_back(a);
      else
        dropped.push_back(n);
    }
    if (!dropped.empty()) {
      InFlightDiagnostic d = emitWarningAt(module);
      d << "sequence parallelism needs capture sizes divisible by tp_size "
        << c.tp << ": dropping ";
      llvm::interleaveComma(dropped, d);
      c.captureSizes = ArrayAttr::get(module.getContext(), kept);
    }
  }

  CompileConfigAttr finalised = c.get(module.getContext());
  if (finalised != original)
    module->setAttr(TxDialect::getConfigAttrName(), finalised);
}
