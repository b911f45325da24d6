//===- tx-cuda-runtime-test.cpp - checks of the tx CUDA runtime -----------===//
//
// One mode per check, printing what the runtime reports so that lit and
// FileCheck pin the messages:
//   no-driver  every entry point reports the missing driver, none crashes
//   args       arguments rejected before the driver is touched
//   fatal      the default error handler: message and exit status 1
//   device     on a GPU machine: allocate, fill, copy back, compare
//
//===----------------------------------------------------------------------===//

#include "TxCudaMgpu.h"
#include "TxCudaRuntime.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

void recordOnly(const char * /*message*/) {}

/// Runs `step`, then prints the error it left (or "ok").
template <typename Fn> void report(const char *name, Fn step) {
  tx::cuda::clearLastError();
  step();
  std::string error = tx::cuda::lastError();
  std::printf("%s: %s\n", name, error.empty() ? "ok" : error.c_str());
}

int noDriver() {
  std::string why;
  bool ok = tx::cuda::initialize(&why);
  std::printf("initialize: %s\n", ok ? "ok" : why.c_str());
  tx::cuda::setErrorHandler(&recordOnly);
  report("stream", [] {
    if (mgpuStreamCreate())
      std::printf("unexpected stream\n");
  });
  report("alloc", [] {
    if (mgpuMemAlloc(64, nullptr, false))
      std::printf("unexpected allocation\n");
  });
  char image[] = "not a cubin";
  report("load", [&] {
    if (mgpuModuleLoad(image, sizeof(image)))
      std::printf("unexpected module\n");
  });
  report("sync", [] { mgpuStreamSynchronize(nullptr); });
  return 0;
}

int args() {
  tx::cuda::setErrorHandler(&recordOnly);
  int fake = 0;
  void *fn = &fake;
  void *params[1] = {&fake};
  report("launch-null-function", [&] {
    mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr, 1);
  });
  report("launch-zero-grid", [&] {
    mgpuLaunchKernel(fn, 0, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr, 1);
  });
  report("launch-big-block", [&] {
    mgpuLaunchKernel(fn, 1, 1, 1, 64, 32, 1, 0, nullptr, params, nullptr, 1);
  });
  report("launch-negative-smem", [&] {
    mgpuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, -4, nullptr, params, nullptr, 1);
  });
  report("launch-null-params", [&] {
    mgpuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr, 3);
  });
  report("load-null", [] { mgpuModuleLoad(nullptr, 0); });
  report("jit-null", [] { mgpuModuleLoadJIT(nullptr, 2); });
  report("get-function-null-module",
         [] { mgpuModuleGetFunction(nullptr, "k"); });
  report("alloc-zero", [] {
    if (mgpuMemAlloc(0, nullptr, false))
      std::printf("unexpected allocation\n");
  });
  report("free-null", [] { mgpuMemFree(nullptr, nullptr); });
  report("memcpy-zero", [] { mgpuMemcpy(nullptr, nullptr, 0, nullptr); });
  report("memcpy-null-dst", [&] { mgpuMemcpy(nullptr, &fake, 4, nullptr); });
  report("memset-null", [] { mgpuMemset32(nullptr, 0, 4, nullptr); });
  report("device-negative", [] { mgpuSetDefaultDevice(-1); });
  return 0;
}

int fatal() {
  mgpuStreamCreate();
  std::printf("not reached\n");
  return 0;
}

int device() {
  std::string why;
  if (!tx::cuda::initialize(&why)) {
    std::fprintf(stderr, "device: %s\n", why.c_str());
    return 1;
  }
  std::printf("device: %s\n", tx::cuda::deviceDescription().c_str());
  const size_t n = 1 << 20;
  void *stream = mgpuStreamCreate();
  void *buffer = mgpuMemAlloc(n * 4, stream, false);
  mgpuMemset32(buffer, 0x3f800000u, n, stream); // 1.0f
  std::vector<float> host(n, 0.0f);
  mgpuMemcpy(host.data(), buffer, n * 4, stream);
  mgpuStreamSynchronize(stream);
  mgpuMemFree(buffer, stream);
  mgpuStreamDestroy(stream);
  for (float v : host)
    if (v != 1.0f) {
      std::printf("device: memset/memcpy round trip FAILED\n");
      return 1;
    }
  std::printf("device: memset/memcpy round trip ok\n");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "no-driver")
    return noDriver();
  if (mode == "args")
    return args();
  if (mode == "fatal")
    return fatal();
  if (mode == "device")
    return device();
  std::fprintf(stderr, "usage: %s no-driver|args|fatal|device\n", argv[0]);
  return 2;
}
