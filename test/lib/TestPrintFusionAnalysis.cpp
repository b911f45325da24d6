//===- TestPrintFusionAnalysis.cpp - prints the fusers' analysis ----------===//
//
// Test-only: the answers of the shared stacked-linear checks for every
// sibling group, so dominance and alias facts are checked on their own.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Analysis/StackedLinearAnalysis.h"

#include "mlir/Pass/Pass.h"

#include "mlir/IR/AsmState.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace tx {
#define GEN_PASS_DEF_TXTESTPRINTFUSIONANALYSIS
#include "TestPasses.h.inc"
} // namespace tx
} // namespace mlir

using namespace mlir;
using namespace mlir::tx;

namespace {

/// `'tx.linear' at line 12`.
void printOp(llvm::raw_ostream &os, Operation *op) {
  os << "'" << op->getName() << "'";
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << " at line " << loc.getLine();
}

struct TestPrintFusionAnalysisPass
    : public tx::impl::TxTestPrintFusionAnalysisBase<
          TestPrintFusionAnalysisPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StackedLinearAnalysis analysis(module);
    llvm::raw_ostream &os = llvm::outs();
    for (auto func : module.getOps<FunctionOpInterface>()) {
      AsmState state(func);
      for (SiblingGroup &group : analysis.findSiblingGroups(func)) {
        os << "group in @" << func.getName() << ": "
           << describeLayers(group.calls) << "\n";
        for (StackedCall c : group.calls) {
          os << "  call: ";
          printOp(os, c.call);
          os << " '" << c.layer.getSymName() << "'\n";
        }
        SmallVector<LayerRefOp> refs;
        if (std::optional<Refusal> r =
                analysis.checkSingleCalls(group.calls, refs)) {
          os << "  single calls: refused at ";
          printOp(os, r->op);
          os << ": " << r->message << "\n";
        } else {
          os << "  single calls: ok, " << refs.size()
             << " guard reference(s) to fold\n";
        }
        Refusal refusal;
        FailureOr<InsertionPoint> point =
            analysis.findInsertionPoint(group.calls, refusal);
        if (failed(point)) {
          os << "  insertion point: refused at ";
          printOp(os, refusal.op);
          os << ": " << refusal.message << "\n";
          continue;
        }
        os << "  insertion point: before ";
        printOp(os, point->before);
        os << (point->before->getBlock() ==
                       &func.getFunctionBody().front()
                   ? " in the entry block"
                   : " in a nested block")
           << "\n  input: ";
        point->input.printAsOperand(os, state);
        os << "\n  may alias the input:";
        TxAliasAnalysis &aa = analysis.getAliasAnalysis();
        auto printIfAliasing = [&](Value v) {
          if (!isa<BaseMemRefType>(v.getType()))
            return;
          AliasResult result = aa.alias(v, point->input);
          if (result.isNo())
            return;
          os << " ";
          v.printAsOperand(os, state);
          os << (result.isMust() ? "(must)" : "(may)");
        };
        for (BlockArgument arg : func.getArguments())
          printIfAliasing(arg);
        func.walk([&](Operation *op) {
          for (Value v : op->getResults())
            printIfAliasing(v);
        });
        os << "\n";
        SmallVector<InputWriter> writers;
        analysis.inputIsStable(group.calls, *point, &writers);
        if (writers.empty())
          os << "  writes the input: none\n";
        for (const InputWriter &w : writers) {
          os << "  writes the input: ";
          printOp(os, w.op);
          os << ": " << w.reason << "\n";
        }
      }
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
