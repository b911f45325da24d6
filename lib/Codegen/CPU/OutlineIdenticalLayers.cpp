//===- OutlineIdenticalLayers.cpp - identical layers compiled once --------===//
//
// tx-outline-identical-layers: a module of N decoder layers lowered by
// tx-to-linalg is N copies of one op sequence that differ only in the
// weights they read (memref.get_global of other globals) and in the numbers
// of their runtime checks. This pass finds those repeated segments, proves
// each identical to the first of its class with OperationEquivalence, moves
// that one into a private function taking its inputs and weights as
// arguments, and replaces every segment by a call: tiling, vectorisation
// and the LLVM compile then see one layer.
//
// Soundness rests on the proof: every op pair is equivalent (name,
// attributes, properties, types, regions), values defined inside the
// segments correspond, and values from outside correspond through one
// function (segment 0's input -> segment k's input), so the outlined body
// with segment k's inputs substituted is segment k. Anything not proved
// stays inline.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Codegen/CPUCodegen.h"

#include "TxDialect/Analysis/TxAliasAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tx {
#define GEN_PASS_DEF_TXOUTLINEIDENTICALLAYERS
#include "TxDialect/Codegen/CPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

/// Testing-only switches (test-disable-checks).
struct Unsafe {
  bool constants = false;
  bool sameOperands = false;
};

/// Ops that are pure and have no operands: moved to the function's entry
/// before the segments are cut, so segments never contain them and
/// they are inputs like any other outside value.
bool isHoistable(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 &&
         (op->hasTrait<OpTrait::ConstantLike>() ||
          isa<memref::GetGlobalOp>(op));
}

bool isConstant(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>();
}

Attribute constantValue(Value v) {
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return {};
  return attr;
}

/// A run of top-level ops [begin, begin + length) of one block.
struct Segment {
  ArrayRef<Operation *> ops;
  llvm::DenseSet<Operation *> set;

  Segment(ArrayRef<Operation *> ops) : ops(ops), set(ops.begin(), ops.end()) {}

  /// Whether `v` is defined by an op of the segment or in one's regions.
  bool defines(Value v) const {
    Operation *owner = isa<BlockArgument>(v)
                           ? cast<BlockArgument>(v).getOwner()->getParentOp()
                           : v.getDefiningOp();
    if (!owner)
      return false;
    Block *block = ops.front()->getBlock();
    Operation *top = block->findAncestorOpInBlock(*owner);
    return top && set.contains(top);
  }
};

/// How segment k corresponds to the class's first segment (the
/// representative): the proof's value maps.
struct Match {
  unsigned index = 0;
  /// Values defined in the representative -> values defined in segment k.
  DenseMap<Value, Value> inner;
  /// Inputs of the representative -> inputs of segment k.
  DenseMap<Value, Value> inputs;
  /// Constant inputs that differ in segment k (passed as arguments).
  llvm::SmallDenseSet<Value> parameters;
};

/// Whether every use of `v` by an op of `seg` is an operand of a func.call
/// (a runtime-check number, not a size or a scalar the code computes with).
bool onlyCallOperand(Value v, const Segment &seg) {
  for (OpOperand &use : v.getUses()) {
    Operation *top = seg.ops.front()->getBlock()->findAncestorOpInBlock(
        *use.getOwner());
    if (top && seg.set.contains(top) && !isa<func::CallOp>(use.getOwner()))
      return false;
  }
  return true;
}

/// Proves `seg` identical to `rep`; fills `match` on success.
bool prove(const Segment &rep, const Segment &seg, Match &match,
           const Unsafe &unsafe) {
  auto check = [&](Value a, Value b) -> LogicalResult {
    if (rep.defines(a)) {
      auto it = match.inner.find(a);
      return success(it != match.inner.end() && it->second == b);
    }
    if (seg.defines(b) || a.getType() != b.getType())
      return failure();
    auto [it, inserted] = match.inputs.try_emplace(a, b);
    if (!inserted)
      return success(it->second == b);
    if (!isConstant(a))
      return success();
    if (isConstant(b) && constantValue(a) == constantValue(b))
      return success();
    if (unsafe.constants)
      return success();
    // A constant that differs (or a constant against a computed value) is
    // an argument when the code only passes it to calls.
    if (!onlyCallOperand(a, rep))
      return failure();
    match.parameters.insert(a);
    return success();
  };
  auto mark = [&](Value a, Value b) { match.inner[a] = b; };
  for (auto [opA, opB] : llvm::zip_equal(rep.ops, seg.ops)) {
    if (!OperationEquivalence::isEquivalentTo(
            opA, opB, check, mark, OperationEquivalence::IgnoreLocations))
      return false;
    if (unsafe.sameOperands)
      continue;
    // isEquivalentTo accepts an operand that is the same value in both ops
    // without asking `check`; that value must still map consistently (an
    // input of both segments used in the same place in both, never a value
    // of the representative used by segment k).
    SmallVector<Operation *> walkA, walkB;
    opA->walk<WalkOrder::PreOrder>([&](Operation *op) { walkA.push_back(op); });
    opB->walk<WalkOrder::PreOrder>([&](Operation *op) { walkB.push_back(op); });
    if (walkA.size() != walkB.size())
      return false;
    for (auto [a, b] : llvm::zip_equal(walkA, walkB))
      for (auto [x, y] : llvm::zip_equal(a->getOperands(), b->getOperands()))
        if (x == y && failed(check(x, y)))
          return false;
  }
  return true;
}

/// Whether a segment allocates on the stack of its function (a buffer that
/// would die with the outlined function's frame).
bool allocatesOnFunctionStack(const Segment &seg, Operation *func) {
  for (Operation *top : seg.ops) {
    bool found = false;
    top->walk([&](MemoryEffectOpInterface op) {
      SmallVector<MemoryEffects::EffectInstance> effects;
      op.getEffects(effects);
      for (auto &effect : effects)
        if (isa<MemoryEffects::Allocate>(effect.getEffect()) &&
            isa<SideEffects::AutomaticAllocationScopeResource>(
                effect.getResource()) &&
            op->getParentWithTrait<OpTrait::AutomaticAllocationScope>() ==
                func)
          found = true;
    });
    if (found)
      return true;
  }
  return false;
}

/// The top-level segments of `block`'s `ops` that repeat: the segment
/// length is the distance between two layers' first weights (the period of
/// the get_global types), the start the longest run of ops that repeat
/// with that length. `globals` is the get_global types with the index of
/// the op (in `ops`) that holds or follows each.
SmallVector<ArrayRef<Operation *>>
findSegments(ArrayRef<Operation *> ops,
             ArrayRef<std::pair<Type, size_t>> globals) {
  size_t g = globals.size();
  size_t bestPeriod = 0, bestCover = 0, bestStart = 0;
  for (size_t p = 1; p <= g / 2; ++p) {
    size_t run = 0;
    for (size_t i = 0; i + p < g; ++i) {
      run = globals[i].first == globals[i + p].first ? run + 1 : 0;
      size_t cover = (run + p) / p * p;
      if (run && cover > bestCover && cover >= 2 * p) {
        bestCover = cover;
        bestPeriod = p;
        bestStart = i + 1 - run;
      }
    }
  }
  if (!bestPeriod)
    return {};
  size_t length = globals[bestStart + bestPeriod].second -
                  globals[bestStart].second;
  if (length == 0 || length * 2 > ops.size())
    return {};
  SmallVector<llvm::hash_code> hashes;
  for (Operation *op : ops)
    hashes.push_back(OperationEquivalence::computeHash(
        op, OperationEquivalence::ignoreHashValue,
        OperationEquivalence::ignoreHashValue,
        OperationEquivalence::IgnoreLocations));
  size_t run = 0, bestRun = 0, runStart = 0;
  for (size_t i = 0; i + length < ops.size(); ++i) {
    run = hashes[i] == hashes[i + length] ? run + 1 : 0;
    if (run > bestRun) {
      bestRun = run;
      runStart = i + 1 - run;
    }
  }
  size_t count = (bestRun + length) / length;
  SmallVector<ArrayRef<Operation *>> segments;
  for (size_t k = 0; count >= 2 && k < count; ++k)
    segments.push_back(ops.slice(runStart + k * length, length));
  return segments;
}

/// One class of identical segments, as it will be outlined.
struct Plan {
  /// members[0] is the representative.
  SmallVector<Match> members;
  /// The representative's inputs in order of first use, those that become
  /// arguments, and its values used after any member.
  llvm::SetVector<Value> inputs, results;
  SmallVector<Value> arguments;
};

struct TxOutlineIdenticalLayersPass
    : tx::impl::TxOutlineIdenticalLayersBase<TxOutlineIdenticalLayersPass> {
  using Base::Base;

  void runOnOperation() override {
    for (StringRef check : testDisableChecks) {
      if (check == "constants")
        unsafe.constants = true;
      else if (check == "same-operands")
        unsafe.sameOperands = true;
      else {
        getOperation().emitError("tx-outline-identical-layers: unknown "
                                 "test-disable-checks entry '")
            << check << "' (constants, same-operands)";
        return signalPassFailure();
      }
    }
    SymbolTable symbols(getOperation());
    for (auto func : llvm::to_vector(getOperation().getOps<func::FuncOp>()))
      if (!func.isExternal() && func.getBody().hasOneBlock())
        outlineIn(func, symbols);
  }

  void outlineIn(func::FuncOp func, SymbolTable &symbols);
  std::optional<Plan> plan(func::FuncOp func, ArrayRef<Segment> segments,
                           SmallVector<Match> members);
  void outline(func::FuncOp func, SymbolTable &symbols,
               ArrayRef<Segment> segments, const Plan &plan);

  Unsafe unsafe;
  /// Values of replaced segments -> the call results that replace them.
  DenseMap<Value, Value> replaced;
  SmallVector<Operation *> toErase;
};

void TxOutlineIdenticalLayersPass::outlineIn(func::FuncOp func,
                                             SymbolTable &symbols) {
  Block &block = func.getBody().front();
  // The weights' types in order, each with the index of its top-level op
  // among those that stay, before constants and get_globals move.
  SmallVector<std::pair<Type, size_t>> globals;
  SmallVector<Operation *> ops, hoist;
  for (Operation &top : block.without_terminator()) {
    top.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op != &top && op->hasTrait<OpTrait::IsIsolatedFromAbove>())
        return WalkResult::skip();
      if (auto global = dyn_cast<memref::GetGlobalOp>(op))
        globals.push_back({global.getType(), ops.size()});
      if (isHoistable(op))
        hoist.push_back(op);
      return WalkResult::advance();
    });
    if (!isHoistable(&top))
      ops.push_back(&top);
  }
  SmallVector<ArrayRef<Operation *>> cuts = findSegments(ops, globals);
  if (cuts.empty())
    return;
  // In their order, before everything else.
  Block::iterator pos = block.begin();
  for (Operation *op : hoist) {
    if (&*pos == op)
      ++pos;
    else
      op->moveBefore(&block, pos);
  }

  std::vector<Segment> segments(cuts.begin(), cuts.end());
  // Classes of identical segments: the first segment of each is its
  // representative (at most 4 classes are tried, so the proofs stay linear).
  SmallVector<std::pair<unsigned, SmallVector<Match>>> classes;
  for (unsigned k = 0; k < segments.size(); ++k) {
    bool placed = false;
    for (auto &[rep, members] : classes) {
      Match match;
      match.index = k;
      if (!prove(segments[rep], segments[k], match, unsafe))
        continue;
      members.push_back(std::move(match));
      placed = true;
      break;
    }
    if (!placed && classes.size() < 4) {
      Match self;
      self.index = k;
      classes.push_back({k, {}});
      classes.back().second.push_back(std::move(self));
    }
  }
  // Every class is planned before any is outlined: the plans refer to the
  // values as they are now.
  SmallVector<Plan> plans;
  for (auto &[rep, members] : classes)
    if (members.size() >= 2)
      if (std::optional<Plan> p = plan(func, segments, std::move(members)))
        plans.push_back(std::move(*p));
  for (const Plan &p : plans)
    outline(func, symbols, segments, p);
  for (Operation *op : toErase)
    op->dropAllReferences();
  for (Operation *op : llvm::reverse(toErase))
    op->erase();
  toErase.clear();
  replaced.clear();
}

std::optional<Plan>
TxOutlineIdenticalLayersPass::plan(func::FuncOp func,
                                   ArrayRef<Segment> segments,
                                   SmallVector<Match> members) {
  const Segment &rep = segments[members.front().index];
  if (allocatesOnFunctionStack(rep, func))
    return std::nullopt;
  Block *block = rep.ops.front()->getBlock();
  auto usedOutside = [&](Value v, const Segment &seg) {
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      Operation *top = block->findAncestorOpInBlock(*user);
      return !top || !seg.set.contains(top);
    });
  };
  // The representative's inputs, in order of first use, and its values
  // used after any member.
  Plan plan;
  llvm::SetVector<Value> &inputs = plan.inputs, &results = plan.results;
  llvm::SmallDenseSet<Value> parameters;
  for (Operation *top : rep.ops)
    top->walk([&](Operation *op) {
      for (Value v : op->getOperands())
        if (!rep.defines(v))
          inputs.insert(v);
    });
  for (const Match &m : members)
    parameters.insert(m.parameters.begin(), m.parameters.end());
  for (Operation *top : rep.ops)
    for (Value v : top->getResults())
      for (const Match &m : members) {
        Value w = m.index == members.front().index ? v : m.inner.lookup(v);
        if (w && usedOutside(w, segments[m.index])) {
          results.insert(v);
          break;
        }
      }
  // A result must be a buffer of its own, allocated in the segment: the
  // caller owns it (ownership-based deallocation frees it once), and no
  // later write through an input can change it.
  llvm::SmallDenseSet<Value> roots;
  for (Value v : results) {
    if (!isa<BaseMemRefType>(v.getType()))
      continue;
    Value root = tx::getViewRoot(v);
    auto alloc = root.getDefiningOp<memref::AllocOp>();
    if (!alloc || !rep.defines(root) || !roots.insert(root).second)
      return std::nullopt;
  }
  // The inputs that become arguments: all but the constants every member
  // shares (cloned into the function, so they stay constants).
  for (Value v : inputs)
    if (!isConstant(v) || parameters.contains(v))
      plan.arguments.push_back(v);
  plan.members = std::move(members);
  return plan;
}

void TxOutlineIdenticalLayersPass::outline(func::FuncOp func,
                                           SymbolTable &symbols,
                                           ArrayRef<Segment> segments,
                                           const Plan &plan) {
  ArrayRef<Match> members = plan.members;
  const Segment &rep = segments[members.front().index];
  Block *block = rep.ops.front()->getBlock();
  // Values of segments outlined before this class are call results now.
  auto current = [&](Value v) {
    while (Value r = replaced.lookup(v))
      v = r;
    return v;
  };
  OpBuilder b(func);
  b.setInsertionPointAfter(func);
  SmallVector<Type> argTypes, resultTypes;
  for (Value v : plan.arguments)
    argTypes.push_back(v.getType());
  for (Value v : plan.results)
    resultTypes.push_back(v.getType());
  Location loc = rep.ops.front()->getLoc();
  auto outlined = func::FuncOp::create(
      b, loc, (func.getSymName() + "_layer").str(),
      b.getFunctionType(argTypes, resultTypes));
  outlined.setPrivate();
  symbols.insert(outlined);
  Block *body = outlined.addEntryBlock();
  b.setInsertionPointToStart(body);
  IRMapping mapping;
  for (auto [v, arg] : llvm::zip_equal(plan.arguments, body->getArguments()))
    mapping.map(current(v), arg);
  for (Value v : plan.inputs)
    if (!mapping.contains(current(v)))
      mapping.map(v, b.clone(*v.getDefiningOp())->getResult(0));
  for (Operation *op : rep.ops)
    b.clone(*op, mapping);
  SmallVector<Value> returned;
  for (Value v : plan.results)
    returned.push_back(mapping.lookup(v));
  func::ReturnOp::create(b, loc, returned);

  // Every member becomes a call with its own inputs.
  for (const Match &m : members) {
    const Segment &seg = segments[m.index];
    bool self = m.index == members.front().index;
    SmallVector<Value> operands;
    for (Value v : plan.arguments) {
      // (An input is always mapped, but with test-disable-checks=
      // same-operands one used as itself in every op is not recorded.)
      Value input = self ? v : m.inputs.lookup(v);
      operands.push_back(current(input ? input : v));
    }
    b.setInsertionPoint(seg.ops.front());
    auto call = func::CallOp::create(b, seg.ops.front()->getLoc(), outlined,
                                     operands);
    for (auto [v, result] : llvm::zip_equal(plan.results, call.getResults())) {
      Value w = self ? v : m.inner.lookup(v);
      w.replaceUsesWithIf(result, [&](OpOperand &use) {
        Operation *top = block->findAncestorOpInBlock(*use.getOwner());
        return !top || !seg.set.contains(top);
      });
      replaced[w] = result;
    }
    toErase.append(seg.ops.begin(), seg.ops.end());
  }
}

} // namespace
