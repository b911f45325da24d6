//===- StackedLinearFusion.cpp - QKV, MLA, GLU and merged-column fusers ---===//
//
// The fusers differ only in which sibling projections they pick and how
// they name the merged layer; the checks and the rewrite are the shared
// mechanism (StackedLinearAnalysis, rewriteStackedLinears).
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Diagnostics.h"
#include "TxDialect/Analysis/StackedLinearAnalysis.h"
#include "TxDialect/Transforms/DecisionRemark.h"
#include "TxDialect/Transforms/FusionPasses.h"
#include "TxDialect/Transforms/FusionRewrite.h"
#include "TxDialect/TxDialect.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

namespace mlir {
namespace tx {
#define GEN_PASS_DEF_TXFUSESTACKEDLINEARS
#include "TxDialect/Transforms/FusionPasses.h.inc"
} // namespace tx
} // namespace mlir

using namespace mlir;
using namespace mlir::tx;

namespace {

/// A part's head count when it is made of attention heads but nobody said
/// how many (see FuseStackedLinearsPass::headsFor).
constexpr int64_t kUnknownHeads = -1;

/// A group a fuser picked, with the merged layer's name and every part's
/// heads (0: not head-structured; kUnknownHeads: heads of unknown count).
struct Candidate {
  SmallVector<StackedCall> calls;
  std::string name;
  SmallVector<int64_t> heads;
};

/// `name` plays the role `pattern` when it ends with it at a word boundary
/// (`layers_0_q_proj` is a q projection, `kv_proj` is not a v projection);
/// `prefix` receives what comes before.
bool matchesRole(StringRef name, StringRef pattern, StringRef *prefix) {
  if (pattern.empty() || !name.ends_with(pattern))
    return false;
  StringRef before = name.drop_back(pattern.size());
  if (!before.empty() && llvm::isAlnum(before.back()))
    return false;
  if (prefix)
    *prefix = before;
  return true;
}

/// The heads `call`'s result is viewed as: a `tx.view` of it to
/// (..., H, D) with H * D its rows, as attention code splits q/k/v into
/// heads; 0 when there is no such view (or views disagree).
int64_t headsFromViews(LinearOp call) {
  auto type = cast<MemRefType>(call.getType());
  int64_t rows = type.getShape().back(), heads = 0;
  for (Operation *user : call->getUsers()) {
    auto view = dyn_cast<ViewOp>(user);
    if (!view)
      continue;
    ArrayRef<int64_t> shape = cast<MemRefType>(view.getType()).getShape();
    if (static_cast<int64_t>(shape.size()) != type.getRank() + 1)
      continue;
    int64_t h = shape[shape.size() - 2], d = shape.back();
    if (ShapedType::isDynamic(h) || ShapedType::isDynamic(d) || h <= 0 ||
        d <= 0 || rows % h != 0 || rows / h != d)
      continue;
    if (heads != 0 && heads != h)
      return 0;
    heads = h;
  }
  return heads;
}

struct FuseStackedLinearsPass
    : public tx::impl::TxFuseStackedLinearsBase<FuseStackedLinearsPass> {
  using TxFuseStackedLinearsBase::TxFuseStackedLinearsBase;

  void runOnOperation() override;

private:
  /// Takes the first call in `avail` playing `pattern`; null if none.
  std::optional<StackedCall> take(SmallVectorImpl<StackedCall> &avail,
                                  StringRef pattern, StringRef *prefix) {
    for (auto *it = avail.begin(); it != avail.end(); ++it) {
      if (matchesRole(it->layer.getSymName(), pattern, prefix)) {
        StackedCall c = *it;
        avail.erase(it);
        return c;
      }
    }
    return std::nullopt;
  }

  std::optional<Candidate> pickQKV(SmallVectorImpl<StackedCall> &avail);
  std::optional<Candidate> pickMLA(SmallVectorImpl<StackedCall> &avail);
  std::optional<Candidate> pickGLU(SmallVectorImpl<StackedCall> &avail);
  std::optional<Candidate> pickMergedColumn(SmallVectorImpl<StackedCall> &avail);

  /// Heads of one part, the same whichever fuser merges it (q, k or v left
  /// to merged-column keep theirs): the layer's `heads` attribute; else by
  /// role: q/k/v take `q-heads`/`kv-heads`, else the heads their result is
  /// viewed as, else kUnknownHeads; MLA's down-projections are one latent
  /// head shared by all query heads (replicated on every rank, as vLLM's
  /// ReplicatedLinear); anything else is not head-structured (0).
  int64_t headsFor(StackedCall c);

  /// Why `cand` must not be fused under tensor-parallel size `tp` (a part
  /// of unknown heads when tp > 1, heads that do not divide a part's rows,
  /// rows that overflow), as a remark on the call at fault; success if none.
  LogicalResult checkHeads(const Candidate &cand, int64_t tp,
                           StringRef fuser, StringRef layers);

  void countRefusal(RefusalKind kind);
};

std::optional<Candidate>
FuseStackedLinearsPass::pickQKV(SmallVectorImpl<StackedCall> &avail) {
  SmallVector<StackedCall> rest(avail.begin(), avail.end());
  StringRef prefix, unused;
  std::optional<StackedCall> q = take(rest, qPattern, &prefix);
  std::optional<StackedCall> k = take(rest, kPattern, &unused);
  if (!q || !k)
    return std::nullopt;
  // v is optional: with attention_k_eq_v it is None and never called.
  std::optional<StackedCall> v = take(rest, vPattern, &unused);
  Candidate cand{{*q, *k}, (prefix + "qkv_proj").str(),
                 {headsFor(*q), headsFor(*k)}};
  if (v) {
    cand.calls.push_back(*v);
    cand.heads.push_back(headsFor(*v));
  }
  avail.assign(rest.begin(), rest.end());
  return cand;
}

std::optional<Candidate>
FuseStackedLinearsPass::pickMLA(SmallVectorImpl<StackedCall> &avail) {
  SmallVector<StackedCall> rest(avail.begin(), avail.end());
  StringRef prefix, unused;
  std::optional<StackedCall> kva = take(rest, kvaPattern, &prefix);
  if (!kva)
    return std::nullopt;
  // Without q-LoRA the query projection reads the hidden state directly.
  std::optional<StackedCall> q = take(rest, qaPattern, &unused);
  if (!q)
    q = take(rest, qPattern, &unused);
  if (!q)
    return std::nullopt;
  avail.assign(rest.begin(), rest.end());
  return Candidate{{*q, *kva},
                   (prefix + "fused_qkv_a_proj").str(),
                   {headsFor(*q), headsFor(*kva)}};
}

/// Whether `gate` and `up` feed `act(gate) * up`.
static bool feedsGatedActivation(LinearOp gate, LinearOp up) {
  for (Operation *user : gate->getUsers()) {
    auto act = dyn_cast<UnaryOp>(user);
    if (!act || act.getKind() == UnaryKind::neg || act.getKind() == UnaryKind::exp)
      continue;
    for (Operation *actUser : act->getUsers()) {
      auto mul = dyn_cast<BinaryOp>(actUser);
      if (mul && mul.getKind() == BinaryKind::mul &&
          ((mul.getLhs() == act.getResult() && mul.getRhs() == up.getResult()) ||
           (mul.getRhs() == act.getResult() && mul.getLhs() == up.getResult())))
        return true;
    }
  }
  return false;
}

std::optional<Candidate>
FuseStackedLinearsPass::pickGLU(SmallVectorImpl<StackedCall> &avail) {
  SmallVector<StackedCall> rest(avail.begin(), avail.end());
  StringRef prefix, unused;
  std::optional<StackedCall> gate = take(rest, gatePattern, &prefix);
  std::optional<StackedCall> up = take(rest, upPattern, &unused);
  if (!gate || !up || !feedsGatedActivation(gate->call, up->call))
    return std::nullopt;
  avail.assign(rest.begin(), rest.end());
  return Candidate{{*gate, *up},
                   (prefix + "gate_up_proj").str(),
                   {headsFor(*gate), headsFor(*up)}};
}

std::optional<Candidate>
FuseStackedLinearsPass::pickMergedColumn(SmallVectorImpl<StackedCall> &avail) {
  if (avail.size() < 2)
    return std::nullopt;
  Candidate cand;
  cand.calls.assign(avail.begin(), avail.end());
  avail.clear();
  // Name: the shared prefix up to a word boundary, then each layer's rest.
  StringRef first = cand.calls.front().layer.getSymName();
  size_t common = first.size();
  for (StackedCall c : cand.calls) {
    StringRef n = c.layer.getSymName();
    size_t i = 0;
    while (i < common && i < n.size() && n[i] == first[i])
      ++i;
    common = i;
  }
  StringRef prefix = first.take_front(common);
  prefix = prefix.take_front(prefix.find_last_of("_.") + 1);
  std::string name = prefix.str();
  llvm::ListSeparator sep("_");
  for (StackedCall c : cand.calls) {
    name += sep;
    name += c.layer.getSymName().drop_front(prefix.size()).str();
    cand.heads.push_back(headsFor(c));
  }
  cand.name = name;
  return cand;
}

int64_t FuseStackedLinearsPass::headsFor(StackedCall c) {
  if (auto attr = c.layer->getAttrOfType<IntegerAttr>("heads"))
    return attr.getInt();
  StringRef name = c.layer.getSymName();
  if (matchesRole(name, qaPattern, nullptr) ||
      matchesRole(name, kvaPattern, nullptr))
    return 1;
  int64_t option = 0;
  if (matchesRole(name, qPattern, nullptr))
    option = qHeads;
  else if (matchesRole(name, kPattern, nullptr) ||
           matchesRole(name, vPattern, nullptr))
    option = kvHeads;
  else
    return 0;
  if (option > 0)
    return option;
  if (int64_t viewed = headsFromViews(c.call))
    return viewed;
  return kUnknownHeads;
}

LogicalResult FuseStackedLinearsPass::checkHeads(const Candidate &cand,
                                                 int64_t tp, StringRef fuser,
                                                 StringRef layers) {
  int64_t rows = 0;
  for (auto [i, heads] : llvm::enumerate(cand.heads)) {
    StackedCall c = cand.calls[i];
    auto refuse = [&]() {
      DecisionRemark d(c.call, DecisionKind::Missed, "NotFused", getArgument(),
                       fuser);
      d << "not fusing " << layers << " (" << fuser << "): '"
        << c.layer.getSymName() << "' ";
      return d;
    };
    int64_t size = c.layer.getOutFeatures();
    if (auto attr = c.layer->getAttrOfType<IntegerAttr>("heads");
        attr && attr.getInt() < 0) {
      refuse() << "has a negative `heads` attribute (" << attr.getInt()
               << ")";
      return failure();
    }
    bool unknown = heads == kUnknownHeads;
    if (std::optional<ArrayAttr> stacking = c.layer.getStacking())
      for (auto e : stacking->getAsRange<StackEntryAttr>())
        unknown |= e.getUnknownHeads();
    if (unknown && tp > 1) {
      refuse() << "is made of attention heads but has no head count under "
                  "tp_size "
               << tp
               << ", so its stacking map could split a head across ranks "
                  "(give the layer a `heads` attribute or set "
                  "q-heads/kv-heads)";
      return failure();
    }
    if (heads > 0 && size % heads != 0) {
      refuse() << "has " << size << " rows, not a multiple of its " << heads
               << " heads";
      return failure();
    }
    if (size > std::numeric_limits<int64_t>::max() - rows) {
      refuse() << "would make the merged layer's rows overflow 64 bits";
      return failure();
    }
    rows += size;
  }
  return success();
}

void FuseStackedLinearsPass::countRefusal(RefusalKind kind) {
  switch (kind) {
  case RefusalKind::Guard:
    ++numRefusedGuard;
    break;
  case RefusalKind::Escape:
    ++numRefusedEscape;
    break;
  case RefusalKind::CalledTwice:
    ++numRefusedCalledTwice;
    break;
  case RefusalKind::OtherUse:
    ++numRefusedOtherUse;
    break;
  case RefusalKind::Unstructured:
    ++numRefusedUnstructured;
    break;
  case RefusalKind::Loop:
    ++numRefusedLoop;
    break;
  case RefusalKind::Dominance:
    ++numRefusedDominance;
    break;
  case RefusalKind::InputWritten:
    ++numRefusedInputWritten;
    break;
  case RefusalKind::Speculative:
    ++numRefusedSpeculative;
    break;
  case RefusalKind::TiedCheckpoint:
    ++numRefusedTiedCheckpoint;
    break;
  }
}

void FuseStackedLinearsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<std::string> order(fusers.begin(), fusers.end());
  if (order.empty())
    order = {"qkv", "mla", "glu", "merged-column"};
  using Picker = std::optional<Candidate> (FuseStackedLinearsPass::*)(
      SmallVectorImpl<StackedCall> &);
  SmallVector<std::pair<std::string, Picker>> pickers;
  for (const std::string &f : order) {
    Picker p = llvm::StringSwitch<Picker>(f)
                   .Case("qkv", &FuseStackedLinearsPass::pickQKV)
                   .Case("mla", &FuseStackedLinearsPass::pickMLA)
                   .Case("glu", &FuseStackedLinearsPass::pickGLU)
                   .Case("merged-column",
                         &FuseStackedLinearsPass::pickMergedColumn)
                   .Default(nullptr);
    if (!p) {
      emitErrorAt(module) << "unknown fuser '" << f
                         << "' (expected qkv, mla, glu or merged-column)";
      return signalPassFailure();
    }
    pickers.push_back({f, p});
  }

  std::string unknownCheck;
  FailureOr<UnsafeTestChecks> unsafe =
      UnsafeTestChecks::parse(llvm::to_vector(testDisableChecks), unknownCheck);
  if (failed(unsafe)) {
    emitErrorAt(module) << "unknown check '" << unknownCheck
                       << "' in test-disable-checks (expected "
                          "input-identity, cfg-loops, region-op-effects or "
                          "input-stability)";
    return signalPassFailure();
  }
  unsafe->skipInputStability |= testSkipInputStability;
  if (qHeads < 0 || kvHeads < 0) {
    emitErrorAt(module) << "q-heads and kv-heads must not be negative, got "
                       << static_cast<int64_t>(qHeads) << " and "
                       << static_cast<int64_t>(kvHeads);
    return signalPassFailure();
  }
  // The tensor-parallel size the stacking maps are for: a part of unknown
  // heads is fused only where no rank shard can split it.
  int64_t tp = 1;
  if (CompileConfigAttr config = getCompileConfig(module))
    tp = config.getTpSize();

  StackedLinearAnalysis analysis(module, *unsafe);
  SymbolTable symbols(module);
  for (auto func : llvm::to_vector(module.getOps<FunctionOpInterface>())) {
    // Each call is offered to one fuser only: a group a fuser refused is
    // not offered again, piecemeal, to the next one.
    SmallVector<SmallVector<StackedCall>> avail;
    for (SiblingGroup &g : analysis.findSiblingGroups(func))
      avail.push_back(std::move(g.calls));
    for (auto &[fuser, pick] : pickers) {
      for (SmallVector<StackedCall> &group : avail) {
        while (std::optional<Candidate> cand = (this->*pick)(group)) {
          ++numGroups;
          std::string layers = describeLayers(cand->calls);
          if (failed(checkHeads(*cand, tp, fuser, layers)))
            continue;
          Refusal refusal;
          FailureOr<FusionPlan> plan =
              analysis.checkGroup(cand->calls, refusal);
          if (failed(plan)) {
            countRefusal(refusal.kind);
            DecisionRemark(refusal.op, DecisionKind::Missed, "NotFused",
                           getArgument(), fuser)
                << "not fusing " << layers << " (" << fuser
                << "): " << refusal.message;
            continue;
          }
          // The remark goes on the first call in program order.
          StackedCall *first = &cand->calls.front();
          for (StackedCall &c : cand->calls)
            if (c.order < first->order)
              first = &c;
          Location loc = first->call.getLoc();
          LinearOp merged = rewriteStackedLinears(*plan, cand->name,
                                                  cand->heads, symbols,
                                                  analysis);
          DecisionRemark(loc, func, DecisionKind::Passed, "Fused",
                         getArgument(), fuser)
              << "fused " << layers << " into '" << merged.getLayer() << "' ("
              << fuser << ")";
          ++numFused;
        }
      }
    }
  }
}

} // namespace
