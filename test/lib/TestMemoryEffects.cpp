//===- TestMemoryEffects.cpp - print what alias analysis says of tx ops ---===//
//
// -tx-test-print-modref: for every op tagged `test.query`, prints the
// upstream AliasAnalysis::getModRef answer against each memref argument of
// the enclosing function (argN) and each value defined by an op tagged
// `test.name` (by that name). This checks that the memory effects the tx ops
// declare are the ones the fusion's stability check relies on. With
// `tx-alias`, TxAliasAnalysis answers instead (own and nested effects), and
// the alias answer of every pair of those values is printed too.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Analysis/TxAliasAnalysis.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct TestPrintModRefPass
    : PassWrapper<TestPrintModRefPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintModRefPass)
  TestPrintModRefPass() = default;
  TestPrintModRefPass(const TestPrintModRefPass &other)
      : PassWrapper(other) {}
  Option<bool> txAlias{*this, "tx-alias",
                       llvm::cl::desc("Ask TxAliasAnalysis (what the fusion "
                                      "and the CPU pipeline use)"),
                       llvm::cl::init(false)};
  StringRef getArgument() const final { return "tx-test-print-modref"; }
  StringRef getDescription() const final {
    return "Print getModRef of ops tagged test.query against each memref "
           "argument";
  }
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    tx::TxAliasAnalysis txAA;
    AliasAnalysis &upstream = getAnalysis<AliasAnalysis>();
    llvm::raw_ostream &os = llvm::outs();
    SmallVector<std::pair<std::string, Value>> locations;
    for (BlockArgument arg : func.getArguments())
      if (isa<BaseMemRefType>(arg.getType()))
        locations.push_back({"arg" + std::to_string(arg.getArgNumber()), arg});
    func.walk([&](Operation *op) {
      if (auto name = op->getAttrOfType<StringAttr>("test.name"))
        locations.push_back({name.str(), op->getResult(0)});
    });
    func.walk([&](Operation *op) {
      auto tag = op->getAttrOfType<StringAttr>("test.query");
      if (!tag)
        return;
      os << func.getSymName() << " " << tag.getValue() << " ("
         << op->getName() << "):";
      for (auto &[name, value] : locations) {
        os << " " << name << "=";
        if (txAlias)
          os << txAA.getModRef(op, value);
        else
          os << upstream.getModRef(op, value);
      }
      os << "\n";
    });
    if (!txAlias)
      return;
    // Every pair of named values (and memref arguments), as TxAliasAnalysis
    // answers.
    for (size_t i = 0; i < locations.size(); ++i)
      for (size_t j = i + 1; j < locations.size(); ++j)
        os << func.getSymName() << " alias " << locations[i].first << " "
           << locations[j].first << ": "
           << txAA.alias(locations[i].second, locations[j].second) << "\n";
  }
};
} // namespace

namespace mlir::tx::test {
void registerTestMemoryEffectsPass() {
  PassRegistration<TestPrintModRefPass>();
}
} // namespace mlir::tx::test
