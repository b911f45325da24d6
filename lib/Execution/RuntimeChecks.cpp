//===- RuntimeChecks.cpp - failed runtime checks end the call ------------===//
//
// Code lowered by tx-to-linalg calls tx_rt_check_failed(check, lhs, rhs)
// when dynamic sizes that must agree do not (TxToLinalg.h), and relies on it
// not returning: the next instruction would read out of bounds. The runner's
// implementation records the failure and jumps back to the runner, which
// turns it into an llvm::Error. The jump only crosses frames of JIT-compiled
// code (plain C calling convention, nothing to unwind); buffers the call
// allocated before the check are leaked, once per failed call. Errors of a
// device runtime that lets the runner handle them (the emulated GPU: out of
// bounds, races, deadlocks) end the call the same way.
//
//===----------------------------------------------------------------------===//

#include "RuntimeChecks.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>

using namespace mlir::tx::detail;

namespace {
/// The call in progress on this thread (the checks run in the calling
/// thread: they are emitted outside the loops that may run on others).
thread_local std::jmp_buf *activeCall = nullptr;
thread_local RuntimeCheckFailure lastFailure;
} // namespace

static void runtimeCheckFailed(int64_t check, int64_t lhs, int64_t rhs) {
  if (!activeCall) {
    // Not inside invokeWithRuntimeChecks: nothing to return to.
    std::fprintf(stderr,
                 "tx: runtime check #%lld failed (%lld vs %lld) outside a "
                 "runner call; aborting\n",
                 static_cast<long long>(check), static_cast<long long>(lhs),
                 static_cast<long long>(rhs));
    std::abort();
  }
  lastFailure = {check, lhs, rhs};
  std::longjmp(*activeCall, 1);
}

namespace {
thread_local std::string pendingDetail;
} // namespace

bool mlir::tx::detail::setRuntimeCheckDetail(std::string detail) {
  pendingDetail = std::move(detail);
  return !pendingDetail.empty();
}

void mlir::tx::detail::raiseRuntimeCheck(int64_t check, int64_t lhs) {
  if (!activeCall) {
    std::fprintf(stderr, "tx: runtime check #%lld failed (%lld: %s) outside "
                 "a runner call; aborting\n", static_cast<long long>(check),
                 static_cast<long long>(lhs), pendingDetail.c_str());
    std::abort();
  }
  lastFailure = {check, lhs, 0};
  lastFailure.detail = pendingDetail;
  std::longjmp(*activeCall, 1);
}

void mlir::tx::detail::deviceErrorHandler(const char *message) {
  if (!activeCall) {
    std::fprintf(stderr, "tx: device error: %s\n", message);
    std::exit(1);
  }
  lastFailure = RuntimeCheckFailure();
  lastFailure.deviceError = message;
  // The error may come from a fiber of the emulated device (another stack):
  // the jump restores the runner's stack; the device forgets the launch.
  std::longjmp(*activeCall, 1);
}

void *mlir::tx::detail::runtimeCheckFailedAddress() {
  return reinterpret_cast<void *>(&runtimeCheckFailed);
}

std::optional<RuntimeCheckFailure>
mlir::tx::detail::invokeWithRuntimeChecks(void (*function)(void **),
                                          void **arguments) {
  std::jmp_buf buffer;
  std::jmp_buf *outer = activeCall;
  activeCall = &buffer;
  if (setjmp(buffer)) {
    activeCall = outer;
    return lastFailure;
  }
  function(arguments);
  activeCall = outer;
  return std::nullopt;
}
