//===- TestPassRegistration.cpp - registers the test-only passes ----------===//

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir::tx {
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "TestPasses.h.inc"

namespace test {
void registerTestMemoryEffectsPass();

void registerTestPasses() {
  registerTxTestPasses();
  registerTestMemoryEffectsPass();
}
} // namespace test
} // namespace mlir::tx
