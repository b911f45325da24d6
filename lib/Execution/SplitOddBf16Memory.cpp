//===- SplitOddBf16Memory.cpp - bf16 vectors of 8k+1 lanes, after LLVM's -O ===//
//
// LLVM 22's X86 back end aborts on a load or store of a vector of 8k+1 bf16
// lanes with avx512bf16 ("Do not know how to soft promote this operator's
// operand"). tx-cpu-split-odd-bf16-vectors splits them before LLVM, but the
// optimiser merges the two halves back where it knows the memory is
// dereferenceable (a parameter global of known size, e.g. a norm weight of
// 33 elements). This runs after the optimiser, before code generation, and
// splits them again the same way: the first 8k lanes, then the last one.
//
//===----------------------------------------------------------------------===//

#include "SplitOddBf16Memory.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

using namespace llvm;

/// The lane count of `type` when it is a fixed vector of 8k+1 bf16 lanes
/// (k >= 1), else 0.
static unsigned oddBf16Lanes(Type *type) {
  auto *vec = dyn_cast<FixedVectorType>(type);
  if (!vec || !vec->getElementType()->isBFloatTy())
    return 0;
  unsigned n = vec->getNumElements();
  return n > 1 && n % 8 == 1 ? n : 0;
}

void mlir::tx::detail::splitOddBf16MemoryOps(Module &module) {
  SmallVector<Instruction *> work;
  for (Function &f : module)
    for (BasicBlock &block : f)
      for (Instruction &inst : block) {
        if (auto *load = dyn_cast<LoadInst>(&inst)) {
          if (load->isSimple() && oddBf16Lanes(load->getType()))
            work.push_back(load);
        } else if (auto *store = dyn_cast<StoreInst>(&inst)) {
          if (store->isSimple() &&
              oddBf16Lanes(store->getValueOperand()->getType()))
            work.push_back(store);
        }
      }
  for (Instruction *inst : work) {
    IRBuilder<> b(inst);
    Type *bf16 = b.getBFloatTy();
    bool isLoad = isa<LoadInst>(inst);
    unsigned n = oddBf16Lanes(isLoad ? inst->getType()
                                     : cast<StoreInst>(inst)->getValueOperand()
                                           ->getType());
    Value *ptr = getLoadStorePointerOperand(inst);
    Align align = getLoadStoreAlignment(inst);
    Value *lastPtr = b.CreateConstInBoundsGEP1_64(bf16, ptr, n - 1);
    Align lastAlign = commonAlignment(align, 2 * (n - 1));
    SmallVector<int> headMask;
    for (unsigned i = 0; i + 1 < n; ++i)
      headMask.push_back(i);
    if (isLoad) {
      Value *head =
          b.CreateAlignedLoad(FixedVectorType::get(bf16, n - 1), ptr, align);
      Value *last = b.CreateAlignedLoad(bf16, lastPtr, lastAlign);
      SmallVector<int> widen(headMask);
      widen.push_back(PoisonMaskElem);
      Value *whole = b.CreateInsertElement(b.CreateShuffleVector(head, widen),
                                           last, b.getInt64(n - 1));
      inst->replaceAllUsesWith(whole);
    } else {
      Value *value = cast<StoreInst>(inst)->getValueOperand();
      b.CreateAlignedStore(b.CreateShuffleVector(value, headMask), ptr, align);
      b.CreateAlignedStore(b.CreateExtractElement(value, b.getInt64(n - 1)),
                           lastPtr, lastAlign);
    }
    inst->eraseFromParent();
  }
}
