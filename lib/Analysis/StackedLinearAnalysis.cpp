//===- StackedLinearAnalysis.cpp - checks shared by every fuser -----------===//

#include "TxDialect/Analysis/StackedLinearAnalysis.h"
#include "TxDialect/Analysis/TxAliasAnalysis.h"
#include "TxDialect/CheckpointLayout.h"

#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
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

FailureOr<UnsafeTestChecks>
UnsafeTestChecks::parse(ArrayRef<std::string> names, std::string &unknown) {
  UnsafeTestChecks checks;
  for (const std::string &name : names) {
    bool *flag = llvm::StringSwitch<bool *>(name)
                     .Case("input-identity", &checks.alias.trustMustAlias)
                     .Case("cfg-loops", &checks.ignoreCfgLoops)
                     .Case("region-op-effects",
                           &checks.alias.ignoreRecursiveOpsOwnEffects)
                     .Case("input-stability", &checks.skipInputStability)
                     .Case("speculation", &checks.allowSpeculation)
                     .Default(nullptr);
    if (!flag) {
      unknown = name;
      return failure();
    }
    *flag = true;
  }
  return checks;
}

StackedLinearAnalysis::StackedLinearAnalysis(ModuleOp module,
                                             UnsafeTestChecks unsafe)
    : module(module), unsafe(unsafe),
      aliasAnalysis(unsafe.alias),
      dominance(module) {
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
  // such a bucket an input joins a group when it is the same buffer: the
  // same value, or identical views of it. MustAlias is not enough: two
  // slices of one buffer at different (dynamic) offsets must-alias. Keying
  // on the view root keeps the queries local (a module of 80 layers would
  // otherwise ask every input against every other one).
  // A layer whose checkpoint weight is stored transposed (GPT-2's Conv1D)
  // stacks only with such layers: the merged weight is read one way.
  using Key = std::tuple<Type, int64_t, Type, int, int, Value>;
  llvm::DenseMap<Key, SmallVector<std::pair<Value, unsigned>, 1>> buckets;
  SmallVector<SiblingGroup> groups;
  unsigned order = 0;
  func.walk([&](LinearOp call) {
    ++order;
    auto layer = symbols.lookup<LayerOp>(call.getLayer());
    if (!layer)
      return;
    Value input = call.getInput();
    Value root = getViewRoot(input);
    Key key{input.getType(), static_cast<int64_t>(layer.getInFeatures()),
            layer.getDtype(), layer.getBias() ? 1 : 0,
            layer->hasAttr(kCheckpointTransposedAttrName) ? 1 : 0, root};
    auto &reps = buckets[key];
    for (auto &[rep, index] : reps) {
      bool same = unsafe.alias.trustMustAlias
                      ? aliasAnalysis.alias(rep, input).isMust()
                      : isSameBuffer(rep, input);
      if (same) {
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
      if (isa<TxProjectionOpInterface>(user))
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

/// Whether `block` can reach itself through its region's branches.
static bool isInCFGCycle(Block *block) {
  SmallVector<Block *> stack(block->getSuccessors());
  llvm::SmallPtrSet<Block *, 8> seen;
  while (!stack.empty()) {
    Block *b = stack.pop_back_val();
    if (b == block)
      return true;
    if (seen.insert(b).second)
      llvm::append_range(stack, b->getSuccessors());
  }
  return false;
}

/// The op whose region may run `op` several times for one run of `dom`, or
/// null: a loop op, a repetitive region of a region-branch op, a region of
/// an op of unknown control flow, or a block in a CFG cycle of its region.
/// This is LoopLikeOpInterface::blockIsInLoop's notion of "in a loop",
/// asked only up to `dom` (a loop around both is no hoisting).
static Operation *repeatingAncestor(Operation *op, Block *dom,
                                    bool ignoreCfgLoops) {
  for (Block *block = op->getBlock(); block && block != dom;
       block = block->getParentOp()->getBlock()) {
    Operation *parent = block->getParentOp();
    if (!parent)
      return nullptr;
    if (isa<LoopLikeOpInterface>(parent))
      return parent;
    if (ignoreCfgLoops)
      continue;
    auto branch = dyn_cast<RegionBranchOpInterface>(parent);
    if (!branch ||
        branch.isRepetitiveRegion(block->getParent()->getRegionNumber()) ||
        isInCFGCycle(block))
      return parent;
  }
  return nullptr;
}

static std::string describeLoop(Operation *loop) {
  if (isa<LoopLikeOpInterface>(loop))
    return "a loop ('" + loop->getName().getStringRef().str() + "')";
  if (isa<RegionBranchOpInterface>(loop))
    return "a region of '" + loop->getName().getStringRef().str() +
           "' that may run repeatedly (a loop of blocks or a repetitive "
           "region)";
  return "a region of '" + loop->getName().getStringRef().str() +
         "', which may run it any number of times";
}

/// Whether running `op` always runs one of `calls`: `op` is one, or on
/// every way into its regions (RegionBranchOpInterface's successors of the
/// parent, the parent itself excluded: an scf.if with an else, every case
/// of a switch, an execute_region) the entry block holds such an op. Ops of
/// unknown control flow and loops (which may run zero times) do not.
static bool alwaysRunsACall(Operation *op,
                            const llvm::SmallPtrSetImpl<Operation *> &calls) {
  if (calls.contains(op))
    return true;
  auto branch = dyn_cast<RegionBranchOpInterface>(op);
  if (!branch)
    return false;
  SmallVector<RegionSuccessor> successors;
  branch.getSuccessorRegions(RegionBranchPoint::parent(), successors);
  if (successors.empty())
    return false;
  for (RegionSuccessor &successor : successors) {
    Region *region = successor.getSuccessor();
    if (successor.isParent() || !region || region->empty() ||
        llvm::none_of(region->front(), [&](Operation &nested) {
          return alwaysRunsACall(&nested, calls);
        }))
      return false;
  }
  return true;
}

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
    if (Operation *loop = repeatingAncestor(c.call, dom, unsafe.ignoreCfgLoops))
      return refuse(RefusalKind::Loop, c.call,
                    "'" + c.layer.getSymName() +
                        "' is called inside " + describeLoop(loop) +
                        " the merged projection would be hoisted out of");

  // The merged projection must not run where the program calls none of the
  // projections (it is not speculatable: it reads the input, which the
  // conditions may protect, and checks its sizes at run time): from the
  // insertion point on, some op of the block must always run a call.
  if (!unsafe.allowSpeculation) {
    llvm::SmallPtrSet<Operation *, 4> callOps;
    for (StackedCall c : calls)
      callOps.insert(c.call);
    bool runs = false;
    for (Operation *op = first; op && !runs; op = op->getNextNode())
      runs = alwaysRunsACall(op, callOps);
    if (!runs)
      return refuse(RefusalKind::Speculative, calls.front().call,
                    "no call of " + describeLayers(calls) +
                        " runs on every path from where the merged projection "
                        "would go (each is under a condition): it would run "
                        "where the program calls none of them");
  }

  // The inputs are the same buffer; use the first one available at the
  // insertion point.
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
/// (Only asked below the insertion point's block, where no call is in a
/// loop: a later position in a block is then a later time.)
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
                                 TxAliasAnalysis &aa) {
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
                                       Operation *point, TxAliasAnalysis &aa,
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
    // Inside the op holding the last call, what runs after every call there,
    // or in a branch exclusive with it, is not between the insertion point
    // and a call.
    if (op != last && last->isAncestor(op) &&
        llvm::all_of(callsInLast, [&](Operation *call) {
          return runsAfter(op, call) ||
                 insideMutuallyExclusiveRegions(op, call);
        }))
      return WalkResult::skip();
    // The op's own effects count whatever its traits (a linalg.generic
    // declares its writes and has recursive effects); the walk visits the
    // nested ops one by one.
    if (!aliasAnalysis.getOwnModRef(op, point.input).isMod() ||
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
                                  Refusal &refusal) {
  FusionPlan plan;
  plan.calls.assign(calls.begin(), calls.end());
  if (std::optional<Refusal> r = checkSingleCalls(calls, plan.guardedRefs)) {
    refusal = *r;
    return failure();
  }
  // Tied layers (one checkpoint tensor loaded by two layers) would need
  // the same tensor twice in one stacking map. A layer loads its stacking
  // map's sources, or else its checkpoint prefix.
  llvm::StringMap<LayerOp> loadedBy;
  for (StackedCall c : calls) {
    SmallVector<StringRef> tensors;
    if (ArrayAttr stacking = c.layer.getStackingAttr())
      for (auto entry : stacking.getAsRange<StackEntryAttr>())
        tensors.push_back(entry.getSource().getValue());
    else
      tensors.push_back(c.layer.getCheckpointPrefix());
    for (StringRef tensor : tensors) {
      auto [it, inserted] = loadedBy.try_emplace(tensor, c.layer);
      if (inserted || it->second == c.layer)
        continue;
      refusal = {RefusalKind::TiedCheckpoint, c.call,
                 ("'" + it->second.getSymName() + "' and '" +
                  c.layer.getSymName() + "' load the same checkpoint tensors ('" +
                  tensor + "')")
                     .str()};
      return failure();
    }
  }
  FailureOr<InsertionPoint> point = findInsertionPoint(calls, refusal);
  if (failed(point))
    return failure();
  plan.point = *point;
  if (unsafe.skipInputStability)
    return plan;
  if (std::optional<Refusal> r = inputIsStable(calls, plan.point)) {
    refusal = *r;
    return failure();
  }
  return plan;
}
