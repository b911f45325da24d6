//===- Containers.cpp - the container runtime of lowered code ------------===//
//
// The tx_rt_container_* functions that tx-to-linalg's container lowering
// calls (TxToLinalg.h). A write copies the buffer (strided views element by
// element); a read checks the entry against the type the op reads and
// copies it out. A failed check ends the call like tx_rt_check_failed, with
// a message saying what the entry holds (RuntimeChecks.h).
//
//===----------------------------------------------------------------------===//

#include "Containers.h"
#include "RuntimeChecks.h"

#include <cstring>

using namespace mlir::tx::detail;

static const char *dtypeName(int64_t dtype) {
  return dtype == 0 ? "f32" : dtype == 1 ? "f16" : dtype == 2 ? "bf16" : "?";
}
static size_t dtypeBytes(int64_t dtype) { return dtype == 0 ? 4 : 2; }

static std::string typeText(const std::vector<int64_t> &shape,
                            int64_t dtype) {
  std::string s;
  for (int64_t d : shape)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + dtypeName(dtype);
}

static void tx_rt_container_set(void *c, int64_t check, int64_t index,
                                int64_t slot, int64_t count, int64_t dtype,
                                int64_t rank, int64_t data, int64_t meta) {
  if (!c) {
    setRuntimeCheckDetail("no container was passed");
    raiseRuntimeCheck(check, index);
  }
  auto &entry = static_cast<Container *>(c)->entries[index];
  // `container[index] = (a, b)` replaces the whole tuple.
  if (slot == 0)
    entry.assign(count, std::nullopt);
  const int64_t *m = reinterpret_cast<const int64_t *>(meta);
  StoredValue value;
  value.dtype = dtype;
  value.shape.assign(m + 1, m + 1 + rank);
  const int64_t *strides = m + 1 + rank;
  size_t bytes = dtypeBytes(dtype);
  int64_t n = 1;
  for (int64_t d : value.shape)
    n *= d;
  value.bytes.resize(n * bytes);
  const char *base = reinterpret_cast<const char *>(data) + m[0] * bytes;
  // Row-major strides: one copy; otherwise element by element.
  bool contiguous = true;
  for (int64_t k = rank - 1, expect = 1; k >= 0; --k) {
    if (value.shape[k] != 1 && strides[k] != expect)
      contiguous = false;
    expect *= value.shape[k];
  }
  if (contiguous) {
    if (n)
      std::memcpy(value.bytes.data(), base, n * bytes);
  } else {
    std::vector<int64_t> idx(rank, 0);
    for (int64_t e = 0; e < n; ++e) {
      int64_t off = 0;
      for (int64_t k = 0; k < rank; ++k)
        off += idx[k] * strides[k];
      std::memcpy(value.bytes.data() + e * bytes, base + off * bytes, bytes);
      for (int64_t k = rank - 1; k >= 0; --k) {
        if (++idx[k] < value.shape[k])
          break;
        idx[k] = 0;
      }
    }
  }
  entry[slot] = std::move(value);
}

/// The problem with reading value `slot` of `container[index]` as
/// `dtype`/`expected` (-1: any size), or "" when there is none; fills
/// `sizes` with the stored sizes.
static std::string checkGet(Container *c, int64_t index, int64_t slot,
                            int64_t count, int64_t dtype,
                            const std::vector<int64_t> &expected,
                            int64_t *sizes) {
  if (!c)
    return "no container was passed";
  auto it = c->entries.find(index);
  if (it == c->entries.end()) {
    std::string held;
    for (const auto &[k, v] : c->entries)
      held += (held.empty() ? "" : ", ") + std::to_string(k);
    return "was never set (" +
           (held.empty() ? std::string("the container is empty")
                         : "the container holds " + held) +
           ")";
  }
  if (static_cast<int64_t>(it->second.size()) != count)
    return "holds " + std::to_string(it->second.size()) +
           " values, the op reads " + std::to_string(count);
  const std::optional<StoredValue> &value = it->second[slot];
  if (!value)
    return "value #" + std::to_string(slot) + " was never stored";
  bool ok = value->dtype == dtype && value->shape.size() == expected.size();
  for (size_t d = 0; ok && d < expected.size(); ++d)
    ok = expected[d] < 0 || expected[d] == value->shape[d];
  if (!ok)
    return "value #" + std::to_string(slot) + " is " +
           typeText(value->shape, value->dtype) + ", the op reads " +
           typeText(expected, dtype);
  for (size_t d = 0; d < expected.size(); ++d)
    sizes[d] = value->shape[d];
  return "";
}

static void tx_rt_container_get(void *c, int64_t check, int64_t index,
                                int64_t slot, int64_t count, int64_t dtype,
                                int64_t rank, int64_t meta) {
  int64_t *m = reinterpret_cast<int64_t *>(meta);
  // The message is stored before the jump: nothing with a destructor is
  // alive in this frame when raiseRuntimeCheck leaves it.
  if (setRuntimeCheckDetail(checkGet(static_cast<Container *>(c), index, slot,
                                     count, dtype,
                                     std::vector<int64_t>(m, m + rank), m)))
    raiseRuntimeCheck(check, index);
}

static void tx_rt_container_read(void *c, int64_t index, int64_t slot,
                                 int64_t data) {
  // tx_rt_container_get checked the entry.
  const StoredValue &value =
      *static_cast<Container *>(c)->entries.at(index).at(slot);
  if (!value.bytes.empty())
    std::memcpy(reinterpret_cast<void *>(data), value.bytes.data(),
                value.bytes.size());
}

std::vector<std::pair<const char *, void *>>
mlir::tx::detail::containerRuntimeSymbols() {
  return {
      {"tx_rt_container_set", reinterpret_cast<void *>(&tx_rt_container_set)},
      {"tx_rt_container_get", reinterpret_cast<void *>(&tx_rt_container_get)},
      {"tx_rt_container_read",
       reinterpret_cast<void *>(&tx_rt_container_read)},
  };
}
