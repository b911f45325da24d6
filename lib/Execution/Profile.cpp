//===- Profile.cpp - the runner's tx_rt_profile_begin/end ------------------===//

#include "TxDialect/Execution/Profile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tx;
using namespace mlir::tx::detail;

namespace {
/// The counters the calls on this thread go to (none outside a runner call:
/// the calls then do nothing).
thread_local ProfileCounters *active = nullptr;
} // namespace

static void profileBegin(int64_t id) {
  if (active)
    active->begin(id);
}
static void profileEnd(int64_t id) {
  if (active)
    active->end(id);
}

void *mlir::tx::detail::profileBeginAddress() {
  return reinterpret_cast<void *>(&profileBegin);
}
void *mlir::tx::detail::profileEndAddress() {
  return reinterpret_cast<void *>(&profileEnd);
}

ActiveProfile::ActiveProfile(ProfileCounters *counters) : previous(active) {
  active = counters;
}
ActiveProfile::~ActiveProfile() { active = previous; }

ProfileCounters::ProfileCounters(ArrayAttr table) {
  for (Attribute a : table) {
    OpProfile row;
    auto fields = dyn_cast<ArrayAttr>(a);
    auto field = [&](unsigned i) -> std::string {
      if (!fields || fields.size() <= i)
        return "?";
      auto s = dyn_cast<StringAttr>(fields[i]);
      return s ? s.str() : "?";
    };
    row.wholeFunction = field(0) == "function";
    row.op = field(1);
    row.location = field(2);
    row.function = field(3);
    entries.push_back(row);
  }
  started.resize(entries.size());
}

void ProfileCounters::begin(int64_t id) {
  if (id >= 0 && static_cast<size_t>(id) < started.size())
    started[id] = std::chrono::steady_clock::now();
}

void ProfileCounters::end(int64_t id) {
  if (id < 0 || static_cast<size_t>(id) >= started.size())
    return;
  entries[id].seconds += std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - started[id])
                             .count();
  ++entries[id].calls;
}

void ProfileCounters::reset() {
  for (OpProfile &row : entries) {
    row.calls = 0;
    row.seconds = 0;
  }
}

std::vector<OpProfile> ProfileCounters::rows() const { return entries; }

void tx::printProfile(llvm::raw_ostream &os,
                      const std::vector<OpProfile> &rows) {
  // Per function: its total and the sum over its ops.
  llvm::StringMap<double> total, inOps;
  llvm::StringMap<int64_t> calls;
  for (const OpProfile &r : rows) {
    if (r.wholeFunction) {
      total[r.function] += r.seconds;
      calls[r.function] += r.calls;
    } else {
      inOps[r.function] += r.seconds;
    }
  }
  std::vector<const OpProfile *> ops;
  for (const OpProfile &r : rows)
    if (!r.wholeFunction && r.calls > 0)
      ops.push_back(&r);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpProfile *a, const OpProfile *b) {
                     return a->seconds > b->seconds;
                   });
  os << "profile: time per call of each tx op (sorted by time)\n";
  os << llvm::format("  %10s %7s %6s  %-28s %s\n", "ms/call", "%", "calls",
                     "op", "location");
  for (const OpProfile *r : ops) {
    double fn = total.lookup(r->function);
    os << llvm::format("  %10.4f %6.1f%% %6lld  %-28s %s\n",
                       1e3 * r->seconds / r->calls,
                       fn > 0 ? 100 * r->seconds / fn : 0.0,
                       static_cast<long long>(r->calls), r->op.c_str(),
                       r->location.c_str());
  }
  for (const OpProfile &r : rows) {
    if (!r.wholeFunction || r.calls == 0)
      continue;
    double fn = total.lookup(r.function);
    double outside = fn - inOps.lookup(r.function);
    os << llvm::format("  %10.4f %6.1f%% %6lld  %-28s %s\n",
                       1e3 * outside / r.calls,
                       fn > 0 ? 100 * outside / fn : 0.0,
                       static_cast<long long>(r.calls),
                       ("(" + r.op + " outside tx ops)").c_str(),
                       r.location.c_str());
    os << llvm::format("  %10.4f %6.1f%% %6lld  %-28s %s\n",
                       1e3 * fn / r.calls, 100.0,
                       static_cast<long long>(r.calls),
                       ("(" + r.op + " whole call)").c_str(),
                       r.location.c_str());
  }
}
