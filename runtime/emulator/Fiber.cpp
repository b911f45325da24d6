//===- Fiber.cpp - threads of a block as fibers ---------------------------===//

#include "Fiber.h"

#include <cstdint>
#include <cstring>

using namespace tx::emulator;

#if defined(__x86_64__)
extern "C" void tx_emulator_switch_stack(void **save, void *load);

// System V x86-64: rbx, rbp, r12-r15 are callee-saved, and so are MXCSR's
// control bits and the x87 control word. The saved frame, from the saved
// stack pointer up: [mxcsr | x87 cw], r15, r14, r13, r12, rbx, rbp, return
// address.
asm(R"(
  .text
  .globl tx_emulator_switch_stack
  .type tx_emulator_switch_stack,@function
tx_emulator_switch_stack:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tx_emulator_switch_stack, .-tx_emulator_switch_stack
  .section .note.GNU-stack,"",@progbits
  .text
)");

void tx::emulator::initFiber(Fiber &fiber, char *stack, size_t size,
                             void (*entry)()) {
  // The first switch "returns" into `entry` with the stack as after a call:
  // rsp = frame + 64 must be 8 modulo 16, so frame is 8 modulo 16 below a
  // 16-aligned top; frame[8] is `entry`'s (null) return address.
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15);
  auto *frame = reinterpret_cast<uint64_t *>(top) - 11;
  uint32_t mxcsr;
  uint16_t cw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(cw));
  uint64_t control = mxcsr | (static_cast<uint64_t>(cw) << 32);
  frame[0] = control;
  for (int i = 1; i <= 6; ++i)
    frame[i] = 0; // r15, r14, r13, r12, rbx, rbp
  frame[7] = reinterpret_cast<uint64_t>(entry);
  frame[8] = 0; // a null return address for `entry`: it never returns
  frame[9] = frame[10] = 0;
  fiber.sp = frame;
}

void tx::emulator::switchFiber(Fiber &from, Fiber &to) {
  tx_emulator_switch_stack(&from.sp, to.sp);
}
#else
void tx::emulator::initFiber(Fiber &fiber, char *stack, size_t size,
                             void (*entry)()) {
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = stack;
  fiber.context.uc_stack.ss_size = size;
  fiber.context.uc_link = nullptr;
  makecontext(&fiber.context, entry, 0);
}

void tx::emulator::switchFiber(Fiber &from, Fiber &to) {
  swapcontext(&from.context, &to.context);
}
#endif
