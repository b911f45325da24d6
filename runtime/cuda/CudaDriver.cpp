//===- CudaDriver.cpp - libcuda opened at run time, errors ----------------===//

#include "CudaDriver.h"
#include "TxCudaRuntime.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

using namespace tx::cuda;
using namespace tx::cuda::detail;

namespace {

void defaultErrorHandler(const char *message) {
  std::fprintf(stderr, "tx cuda runtime: error: %s\n", message);
  std::fflush(stderr);
  std::exit(1);
}

std::atomic<ErrorHandler> errorHandler{&defaultErrorHandler};
std::atomic<int> defaultDevice{0};
thread_local std::string lastErrorMessage;

/// Loaded once; `reason` says why `driver` is unusable.
struct LoadedDriver {
  Driver driver;
  std::string reason;
  bool ok = false;
};

std::string errorText(const Driver &d, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(result, &name);
  if (d.cuGetErrorString)
    d.cuGetErrorString(result, &text);
  // The toolkit's stub libcuda (and a mismatched driver) cannot name its
  // own errors; name the ones that mean "no usable driver" here.
  if (!name)
    switch (result) {
    case CUDA_ERROR_STUB_LIBRARY:
      name = "CUDA_ERROR_STUB_LIBRARY";
      text = "libcuda is the CUDA Toolkit's stub, not an NVIDIA driver";
      break;
    case CUDA_ERROR_NO_DEVICE:
      name = "CUDA_ERROR_NO_DEVICE";
      break;
    case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
      name = "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
      text = "the NVIDIA driver is older than this call needs";
      break;
    default:
      break;
    }
  std::string s = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}

LoadedDriver load() {
  LoadedDriver loaded;
  Driver &d = loaded.driver;
  const char *path = std::getenv("TX_LIBCUDA");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = dlerror();
    loaded.reason = std::string("no CUDA driver: cannot load ") + path + ": " +
                    (err ? err : "unknown error") +
                    " (is the NVIDIA driver installed?)";
    return loaded;
  }
#define TX_CUDA_RESOLVE(fn, symbol)                                            \
  d.fn = reinterpret_cast<decltype(d.fn)>(dlsym(handle, symbol));              \
  if (!d.fn) {                                                                 \
    loaded.reason = std::string("CUDA driver ") + path + " has no " + symbol + \
                    " (driver older than the CUDA 12 API?)";                   \
    return loaded;                                                             \
  }
  TX_CUDA_DRIVER_FUNCTIONS(TX_CUDA_RESOLVE)
#undef TX_CUDA_RESOLVE
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    loaded.reason = "no CUDA device: cuInit failed: " + errorText(d, r);
    return loaded;
  }
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    loaded.reason = "cuDeviceGetCount failed: " + errorText(d, r);
    return loaded;
  }
  int ordinal = defaultDevice.load();
  if (count == 0 || ordinal >= count) {
    loaded.reason = "no CUDA device: " + std::to_string(count) +
                    " device(s), device " + std::to_string(ordinal) +
                    " requested";
    return loaded;
  }
  if (CUresult r = d.cuDeviceGet(&d.device, ordinal); r != CUDA_SUCCESS) {
    loaded.reason = "cuDeviceGet failed: " + errorText(d, r);
    return loaded;
  }
  if (CUresult r = d.cuDevicePrimaryCtxRetain(&d.context, d.device);
      r != CUDA_SUCCESS) {
    loaded.reason = "cuDevicePrimaryCtxRetain failed: " + errorText(d, r);
    return loaded;
  }
  loaded.ok = true;
  return loaded;
}

const LoadedDriver &loadedDriver() {
  static const LoadedDriver loaded = load();
  return loaded;
}

} // namespace

const Driver *detail::getDriver(const char *caller) {
  const LoadedDriver &loaded = loadedDriver();
  if (!loaded.ok) {
    reportError(caller, loaded.reason);
    return nullptr;
  }
  // Kernels, streams and memory all live in the primary context; make it
  // current on whichever thread the host code runs.
  thread_local bool current = false;
  if (!current) {
    if (!check(loaded.driver.cuCtxSetCurrent(loaded.driver.context), caller,
               "cuCtxSetCurrent"))
      return nullptr;
    current = true;
  }
  return &loaded.driver;
}

std::string detail::driverUnavailableReason() { return loadedDriver().reason; }

void detail::reportError(const char *caller, const std::string &message) {
  lastErrorMessage = std::string(caller) + ": " + message;
  errorHandler.load()(lastErrorMessage.c_str());
}

bool detail::check(CUresult result, const char *caller, const char *call) {
  if (result == CUDA_SUCCESS)
    return true;
  reportError(caller, std::string(call) + " failed: " +
                          errorText(loadedDriver().driver, result));
  return false;
}

bool tx::cuda::initialize(std::string *why) {
  const LoadedDriver &loaded = loadedDriver();
  if (!loaded.ok && why)
    *why = loaded.reason;
  return loaded.ok;
}

std::string tx::cuda::deviceDescription() {
  const LoadedDriver &loaded = loadedDriver();
  if (!loaded.ok)
    return "";
  const Driver &d = loaded.driver;
  char name[256] = {0};
  int major = 0, minor = 0;
  d.cuDeviceGetName(name, sizeof(name) - 1, d.device);
  d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                         d.device);
  d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                         d.device);
  return std::string(name) + " (sm_" + std::to_string(major * 10 + minor) +
         ")";
}

ErrorHandler tx::cuda::setErrorHandler(ErrorHandler handler) {
  return errorHandler.exchange(handler ? handler : &defaultErrorHandler);
}

std::string tx::cuda::lastError() { return lastErrorMessage; }
void tx::cuda::clearLastError() { lastErrorMessage.clear(); }

void tx::cuda::setDefaultDevice(int device) { defaultDevice.store(device); }
