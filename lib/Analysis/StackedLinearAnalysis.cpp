//===- StackedLinearAnalysis.cpp - checks shared by every fuser -----------===//

#include "TxDialect/Analysis/StackedLinearAnalysis.h"
#include "TxDialect/Analysis/TxAliasAnalysis.h"

#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tx;

std::string tx::describeLayers(ArrayRef<StackedCall> calls) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(calls, os, [&](StackedCall c) {
    os << "'" << c.layer.getSymName() << "'";
  });
  return s;
}

static std::string quoted(Operation *op) {
  return ("'" + op->getName().getStringRef() + "'").str();
}

StackedLinearAnalysis::StackedLinearAnalysis(ModuleOp module)
    : module(module), aliasAnalysis(module), dominance(module) {
  addTxAliasAnalysis(aliasAnalysis);
  // One walk indexes every symbol use; looking up each layer's uses
  // separately would walk the module once per layer.
  module.walk([&](Operation *op) {
    op->getAttrDictionary().walk([&](SymbolRefAttr ref) {
      symbolUsers[ref.getRootReference()].push_back(op);
    });
  });
}

void StackedLinearAnalysis::recordSymbolUser(StringAttr symbol,
                                             Operation *user) {
  symbolUsers[symbol].push_back(user);
}

void StackedLinearAnalysis::forgetSymbol(StringAttr symbol) {
  symbolUsers.erase(symbol);
}

//===----------------------------------------------------------------------===//
// Step 1: sibling groups
//===----------------------------------------------------------------------===//

SmallVector<SiblingGroup>
StackedLinearAnalysis::findSiblingGroups(FunctionOpInterface func) {
  SymbolTable symbols(module);
  // Group by what must match exactly (input type, layer in-features,
  // element type, bias) and by the buffer the input is a view of; inside
  // such a bucket an input joins a group when it is the same value or alias
  // analysis says the two must alias. Keying on the view root keeps the
  // alias queries local (a module of 80 layers would otherwise ask every
  // input against every other one).
  using Key = std::tuple<Type, int64_t, Type, int, Value>;
  llvm::DenseMap<Key, SmallVector<std::pair<Value, unsigned>, 1>> buckets;
  SmallVector<SiblingGroup> groups;
  unsigned order = 0;
  func.walk([&](LinearOp call) {
    ++order;
    auto layer = symbols.lookup<LayerOp>(call.getLayer());
    if (!layer)
      return;
    Value input = call.getInput();
    Value root = input;
    while (auto view = root.getDefiningOp<ViewLikeOpInterface>())
      root = view.getViewSource();
    Key key{input.getType(), static_cast<int64_t>(layer.getInFeatures()),
            layer.getDtype(), layer.getBias() ? 1 : 0, root};
    auto &reps = buckets[key];
    for (auto &[rep, index] : reps) {
      if (rep == input || aliasAnalysis.alias(rep, input).isMust()) {
        groups[index].calls.push_back({call, layer, order});
        return;
      }
    }
    reps.push_back({input, static_cast<unsigned>(groups.size())});
    groups.push_back({{{call, layer, order}}});
  });
  // The walk is in program order, so groups are ordered by first call.
  return llvm::to_vector(llvm::make_filter_range(
      groups, [](const SiblingGroup &g) { return g.calls.size() >= 2; }));
}

//===----------------------------------------------------------------------===//
// Step 2: one call per layer, guards foldable
//===----------------------------------------------------------------------===//

std::optional<Refusal>
StackedLinearAnalysis::checkSingleCalls(ArrayRef<StackedCall> calls,
                                        SmallVectorImpl<LayerRefOp> &refs) {
  for (StackedCall c : calls) {
    StringRef name = c.layer.getSymName();
    auto it = symbolUsers.find(c.layer.getSymNameAttr());
    if (it == symbolUsers.end())
      continue;
    for (Operation *user : it->second) {
      if (user == c.call)
        continue;
      if (isa<LinearOp, AllGatherLinearOp, LinearReduceScatterOp>(user))
        return Refusal{RefusalKind::CalledTwice, user,
                       ("'" + name + "' is called twice").str()};
      auto ref = dyn_cast<LayerRefOp>(user);
      if (!ref)
        return Refusal{RefusalKind::OtherUse, user,
                       ("'" + name + "' is used by " + quoted(user)).str()};
      for (Operation *refUser : ref->getUsers()) {
        auto guard = dyn_cast<GuardOp>(refUser);
        if (!guard)
          return Refusal{RefusalKind::Escape, refUser,
                         ("reference to '" + name + "' escapes into " +
                          quoted(refUser))
                             .str()};
        if (!guard.isFoldable())
          return Refusal{
              RefusalKind::Guard, guard,
              ("'" + name + "' is compared with " +
               (guard.getPredicate() == GuardPredicate::eq_none ? "==" : "!=") +
               " None")
                  .str()};
      }
      refs.push_back(ref);
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Step 3: insertion point
//===----------------------------------------------------------------------===//

FailureOr<InsertionPoint>
StackedLinearAnalysis::findInsertionPoint(ArrayRef<StackedCall> calls,
                                          Refusal &refusal) {
  Block *dom = calls.front().call->getBlock();
  for (StackedCall c : calls.drop_front())
    dom = dominance.findNearestCommonDominator(dom, c.call->getBlock());
  auto refuse = [&](RefusalKind kind, Operation *op, const Twine &msg) {
    refusal = {kind, op, msg.str()};
    return failure();
  };
  if (!dom)
    return refuse(RefusalKind::Unstructured, calls.front().call,
                  "the calls have no common dominator block");

  // The first op of `dom` that is or contains a call.
  Operation *first = nullptr;
  for (StackedCall c : calls) {
    Operation *ancestor = dom->findAncestorOpInBlock(*c.call);
    if (!ancestor)
      return refuse(RefusalKind::Unstructured, c.call,
                    "'" + c.layer.getSymName() +
                        "' is called in another block of an unstructured "
                        "region than the other projections");
    if (!first || ancestor->isBeforeInBlock(first))
      first = ancestor;
  }

  // Hoisting out of a loop would change how often the projection runs.
  for (StackedCall c : calls)
    for (Operation *p = c.call->getParentOp(); p && p != dom->getParentOp();
         p = p->getParentOp())
      if (isa<LoopLikeOpInterface>(p))
        return refuse(RefusalKind::Loop, c.call,
                      "'" + c.layer.getSymName() +
                          "' is called inside a loop the merged projection "
                          "would be hoisted out of");

  // The inputs must-alias; use the first one available at the insertion
  // point.
  for (StackedCall c : calls)
    if (dominance.properlyDominates(c.call.getInput(), first))
      return InsertionPoint{first, c.call.getInput()};
  return refuse(RefusalKind::Dominance, calls.front().call,
                "the input is not available where the merged projection "
                "would go");
}

//===----------------------------------------------------------------------===//
// Step 4: input stability
//===----------------------------------------------------------------------===//

/// True when `op` runs after `call` has run, as seen from their innermost
/// common block: ops in other branches or before the call are not after it.
static bool runsAfter(Operation *op, Operation *call) {
  for (Block *block = call->getBlock(); block;
       block = block->getParentOp() ? block->getParentOp()->getBlock()
                                    : nullptr) {
    Operation *opAncestor = block->findAncestorOpInBlock(*op);
    if (!opAncestor)
      continue;
    Operation *callAncestor = block->findAncestorOpInBlock(*call);
    return opAncestor != callAncestor &&
           callAncestor->isBeforeInBlock(opAncestor);
  }
  return false;
}

/// Why `op` may write `input` (for remarks and the test printer).
static std::string describeWrite(Operation *op, Value input,
                                 AliasAnalysis &aa) {
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface)
    return "declares no memory effects, so it may write anything";
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  for (const MemoryEffects::EffectInstance &effect : effects) {
    if (!isa<MemoryEffects::Write>(effect.getEffect()))
      continue;
    Value written = effect.getValue();
    if (!written)
      return "writes a resource without naming a buffer";
    AliasResult result = aa.alias(written, input);
    if (result.isNo())
      continue;
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "writes a buffer that "
       << (result.isMust() ? "must" : result.isPartial() ? "partially" : "may")
       << " alias the input";
    return s;
  }
  return "may write the input";
}

/// True when every buffer `op` writes that may alias `input` was allocated
/// at or after `point`: a buffer created after the input existed is not the
/// input. Local alias analysis cannot tell this when the input is not itself
/// a fresh allocation or an argument (a container_get or scf.if result).
static bool writesOnlyLaterAllocations(Operation *op, Value input,
                                       Operation *point, AliasAnalysis &aa,
                                       DominanceInfo &dom) {
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface)
    return false;
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  for (const MemoryEffects::EffectInstance &effect : effects) {
    if (!isa<MemoryEffects::Write>(effect.getEffect()))
      continue;
    Value base = effect.getValue();
    if (!base)
      return false;
    if (aa.alias(base, input).isNo())
      continue;
    while (auto view = base.getDefiningOp<ViewLikeOpInterface>())
      base = view.getViewSource();
    Operation *def = base.getDefiningOp();
    auto defEffects = dyn_cast_or_null<MemoryEffectOpInterface>(def);
    if (!defEffects ||
        !defEffects.getEffectOnValue<MemoryEffects::Allocate>(base) ||
        !(def == point || dom.properlyDominates(point, def)))
      return false;
  }
  return true;
}

std::optional<Refusal>
StackedLinearAnalysis::inputIsStable(ArrayRef<StackedCall> calls,
                                     const InsertionPoint &point,
                                     SmallVectorImpl<InputWriter> *writers) {
  Block *block = point.before->getBlock();
  Operation *last = point.before;
  SmallVector<Operation *> callsInLast;
  for (StackedCall c : calls) {
    Operation *ancestor = block->findAncestorOpInBlock(*c.call);
    if (last->isBeforeInBlock(ancestor)) {
      last = ancestor;
      callsInLast.clear();
    }
    if (ancestor == last)
      callsInLast.push_back(c.call);
  }

  std::optional<Refusal> refusal;
  auto visit = [&](Operation *op) -> WalkResult {
    // Inside the op holding the last call, what runs after every call there
    // is no longer between the insertion point and the last call.
    if (op != last && last->isAncestor(op) &&
        llvm::all_of(callsInLast,
                     [&](Operation *call) { return runsAfter(op, call); }))
      return WalkResult::skip();
    // Recursive ops answer ModRef for everything; their nested ops are
    // visited one by one instead.
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    if (!aliasAnalysis.getModRef(op, point.input).isMod() ||
        writesOnlyLaterAllocations(op, point.input, point.before,
                                   aliasAnalysis, dominance))
      return WalkResult::advance();
    std::string why = describeWrite(op, point.input, aliasAnalysis);
    if (writers)
      writers->push_back({op, why});
    if (!refusal)
      refusal = Refusal{RefusalKind::InputWritten, op,
                        "input may be written by " + quoted(op) +
                            " before the last call (" + why + ")"};
    return writers ? WalkResult::advance() : WalkResult::interrupt();
  };
  for (Operation *op = point.before;; op = op->getNextNode()) {
    if (op->walk<WalkOrder::PreOrder>(visit).wasInterrupted() || op == last)
      break;
  }
  return refusal;
}

FailureOr<FusionPlan>
StackedLinearAnalysis::checkGroup(ArrayRef<StackedCall> calls,
                                  Refusal &refusal, bool checkStability) {
  FusionPlan plan;
  plan.calls.assign(calls.begin(), calls.end());
  if (std::optional<Refusal> r = checkSingleCalls(calls, plan.guardedRefs)) {
    refusal = *r;
    return failure();
  }
  FailureOr<InsertionPoint> point = findInsertionPoint(calls, refusal);
  if (failed(point))
    return failure();
  plan.point = *point;
  if (!checkStability)
    return plan;
  if (std::optional<Refusal> r = inputIsStable(calls, plan.point)) {
    refusal = *r;
    return failure();
  }
  return plan;
}
