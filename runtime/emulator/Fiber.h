//===- Fiber.h - threads of a block as fibers -------------------*- C++ -*-===//
//
// A fiber is a stack and a saved stack pointer. On x86-64 a switch saves
// the callee-saved registers and the floating-point control state on the
// current stack and loads the other fiber's (a few instructions, no system
// call: swapcontext's signal-mask save is a system call per switch, and
// kernels switch at every barrier and warp-collective). Elsewhere fibers
// are ucontext_t.
//
//===----------------------------------------------------------------------===//

#ifndef TX_RUNTIME_EMULATOR_FIBER_H
#define TX_RUNTIME_EMULATOR_FIBER_H

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace tx::emulator {

struct Fiber {
#if defined(__x86_64__)
  void *sp = nullptr;
#else
  ucontext_t context;
#endif
};

/// Prepares `fiber` to run `entry` on [stack, stack + size) at its first
/// switch. `entry` must never return: it ends by switching away for good.
void initFiber(Fiber &fiber, char *stack, size_t size, void (*entry)());

/// Saves the running code into `from` and runs `to`.
void switchFiber(Fiber &from, Fiber &to);

} // namespace tx::emulator

#endif // TX_RUNTIME_EMULATOR_FIBER_H
