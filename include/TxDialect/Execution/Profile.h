//===- Profile.h - per-op times of code lowered with profile=true -*- C++ -*-===//
//
// Code lowered with tx-to-cpu{profile=true} calls tx_rt_profile_begin/end
// around every tx op and function body (TxDialect/Conversion/ProfileOps.h).
// The runner provides them and accumulates, per entry of the module's
// tx.profile_ops table, how often and how long it ran (CpuRunner::profile).
//
//===----------------------------------------------------------------------===//

#ifndef TXDIALECT_EXECUTION_PROFILE_H
#define TXDIALECT_EXECUTION_PROFILE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::tx {

/// One row of a profile: a tx op (or a whole function), how many times it
/// ran and the seconds spent between its begin and end calls.
struct OpProfile {
  bool wholeFunction = false;
  std::string op;       // "tx.linear @q_proj", or "@forward"
  std::string location; // "file:line:col"
  std::string function; // the enclosing function
  int64_t calls = 0;
  double seconds = 0;
};

/// Prints `rows` as a table sorted by time, one line per op with its share
/// of its function's time, then per function its total and the time spent
/// outside tx ops (function entry and exit, deallocations between ops).
void printProfile(llvm::raw_ostream &os, const std::vector<OpProfile> &rows);

namespace detail {
/// The counters of one runner, indexed like its tx.profile_ops table.
class ProfileCounters {
public:
  explicit ProfileCounters(ArrayAttr table);
  void begin(int64_t id);
  void end(int64_t id);
  void reset();
  std::vector<OpProfile> rows() const;

private:
  std::vector<OpProfile> entries;
  std::vector<std::chrono::steady_clock::time_point> started;
};

/// Makes `counters` the target of the profiling calls on this thread while
/// it lives (the calls are made by the thread that calls the function).
class ActiveProfile {
public:
  explicit ActiveProfile(ProfileCounters *counters);
  ~ActiveProfile();

private:
  ProfileCounters *previous;
};

/// The runtime functions, registered with the ExecutionEngine.
void *profileBeginAddress();
void *profileEndAddress();
} // namespace detail
} // namespace mlir::tx

#endif // TXDIALECT_EXECUTION_PROFILE_H
