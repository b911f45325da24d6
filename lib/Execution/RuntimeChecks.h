//===- RuntimeChecks.h - the runner's tx_rt_check_failed --------*- C++ -*-===//

#ifndef TX_LIB_EXECUTION_RUNTIMECHECKS_H
#define TX_LIB_EXECUTION_RUNTIMECHECKS_H

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::tx::detail {

/// The arguments of a failed tx_rt_check_failed call.
struct RuntimeCheckFailure {
  int64_t check = -1, lhs = 0, rhs = 0;
  /// Set instead when a device runtime reported an error (check is -1).
  std::string deviceError;
  /// What a runtime function (the containers') adds to the check's message.
  std::string detail;
};

/// For a runtime function that fails a check itself (the container
/// runtime): records `detail` for the next raiseRuntimeCheck on this thread
/// and returns whether it is non-empty (a failure).
bool setRuntimeCheckDetail(std::string detail);
/// Ends the call in progress like a failed tx_rt_check_failed(check, lhs, 0),
/// with the recorded detail. Nothing with a destructor may be alive in the
/// frames it leaves.
[[noreturn]] void raiseRuntimeCheck(int64_t check, int64_t lhs);

/// The handler the runner gives a device runtime that takes one (the
/// emulator's txEmulatorSetErrorHandler): inside a runner call, the error
/// ends the call and is returned; outside, it is printed and the process
/// exits with status 1.
void deviceErrorHandler(const char *message);

/// The runner's tx_rt_check_failed (registered with the ExecutionEngine).
void *runtimeCheckFailedAddress();

/// Calls a packed JIT entry point; a failed runtime check inside it ends the
/// call and is returned.
std::optional<RuntimeCheckFailure>
invokeWithRuntimeChecks(void (*function)(void **), void **arguments);

} // namespace mlir::tx::detail

#endif // TX_LIB_EXECUTION_RUNTIMECHECKS_H
