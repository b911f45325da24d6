//===- Execution.cpp - CPU compilation and invocation in the C API --------===//
//
// Over tx::CpuRunner (TxDialect/Execution/CpuRunner.h): its llvm::Error
// messages become TX_ERROR_* statuses with the same text.
//
//===----------------------------------------------------------------------===//

#include "TxDialect-c/Engine.h"
#include "TxDialect/Execution/CpuRunner.h"
#include "TxDialect/Execution/Devices.h"

#include "EngineInternal.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>

#include <cstring>

using namespace mlir;

struct TxExecutable {
  std::unique_ptr<tx::CpuRunner> runner;
  std::vector<tx::Tensor> results;
};

static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32";
}

/// Checks a caller's buffer and copies it into a tensor.
static TxStatus toTensor(const TxBuffer &buffer, size_t index,
                         tx::Tensor &tensor) {
  if (buffer.rank < 0 || (buffer.rank > 0 && !buffer.shape))
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txExecutableInvoke: input " + llvm::Twine(index) +
                              " has a negative rank or a NULL shape");
  std::vector<int64_t> shape(buffer.shape, buffer.shape + buffer.rank);
  for (int64_t d : shape)
    if (d < 0)
      return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                            "txExecutableInvoke: input " + llvm::Twine(index) +
                                " has a negative dimension");
  std::optional<int64_t> count = tx::Tensor::checkedNumElements(shape);
  if (!count)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txExecutableInvoke: input " + llvm::Twine(index) +
                              " has more than " +
                              llvm::Twine(tx::Tensor::kMaxElements) +
                              " elements");
  int64_t n = *count;
  if (n > 0 && !buffer.data)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txExecutableInvoke: input " + llvm::Twine(index) +
                              " has NULL data");
  tensor = tx::Tensor(shape, std::vector<float>(buffer.data, buffer.data + n));
  return TX_OK;
}

/// The directory of the library that holds this code (libTxCompiler.so
/// for C API users), where the device runtimes are installed too.
static std::string thisLibraryDir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&thisLibraryDir), &info) ||
      !info.dli_fname)
    return ".";
  return std::string(llvm::sys::path::parent_path(info.dli_fname));
}

static TxStatus compileOn(llvm::StringRef caller, TxModule *module,
                          const char *device, const char *pipeline,
                          uint64_t seed, const char *weightsPath,
                          TxExecutable **outExecutable) {
  if (outExecutable)
    *outExecutable = nullptr;
  if (!module)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": module is NULL");
  if (!outExecutable)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": outExecutable is NULL");
  if (!device)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": device is NULL");
  auto selected = tx::selectDevice(device, thisLibraryDir());
  if (!selected)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": " + llvm::toString(selected.takeError()));
  module->context->beginCall();
  // The caller's pipeline text, or the device's lowering.
  tx::CpuRunnerOptions options;
  if (pipeline) {
    options.pipelineName = pipeline;
    options.pipeline = [text = std::string(pipeline)](OpPassManager &pm) {
      return tx::capi::addPipelineText(pm, text);
    };
  } else {
    options.pipelineName = selected->defaultPipelineName;
    options.pipeline = [build =
                            selected->buildDefaultPipeline](OpPassManager &pm) {
      build(pm);
      return llvm::Error::success();
    };
  }
  if (!selected->runtimeLibrary.empty())
    options.sharedLibs.push_back(selected->runtimeLibrary);
  options.weights.seed = seed;
  if (weightsPath)
    options.weights.path = weightsPath;
  // A missing or malformed checkpoint is the caller's argument.
  if (llvm::Error e = tx::openWeightSource(options.weights))
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": " + llvm::toString(std::move(e)));
  auto runner = tx::CpuRunner::compile(*module->module, options);
  if (!runner) {
    std::string message = llvm::toString(runner.takeError());
    if (!module->context->errors.empty())
      message += "\n" + module->context->errors;
    return tx::capi::fail(TX_ERROR_EXECUTION, caller + ": " + message);
  }
  *outExecutable = new TxExecutable{std::move(*runner), {}};
  return TX_OK;
}

TxStatus txModuleCompileCpu(TxModule *module, const char *pipeline,
                            uint64_t seed, const char *weightsPath,
                            TxExecutable **outExecutable) {
  tx::capi::clearLastError();
  return compileOn("txModuleCompileCpu", module, "cpu", pipeline, seed,
                   weightsPath, outExecutable);
}

TxStatus txModuleCompileForDevice(TxModule *module, const char *device,
                                  const char *pipeline, uint64_t seed,
                                  const char *weightsPath,
                                  TxExecutable **outExecutable) {
  tx::capi::clearLastError();
  return compileOn("txModuleCompileForDevice", module, device, pipeline, seed,
                   weightsPath, outExecutable);
}

void txExecutableDestroy(TxExecutable *executable) { delete executable; }

TxStatus txExecutableInvoke(TxExecutable *executable, const char *function,
                            const TxBuffer *inputs, size_t numInputs,
                            TxBuffer *outputs, size_t numOutputs) {
  tx::capi::clearLastError();
  llvm::StringRef caller = "txExecutableInvoke";
  if (!executable)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": executable is NULL");
  if (!function)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": function is NULL");
  if (numInputs && !inputs)
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": inputs is NULL");
  std::vector<tx::Tensor> tensors(numInputs);
  for (size_t i = 0; i < numInputs; ++i)
    if (TxStatus status = toTensor(inputs[i], i, tensors[i]))
      return status;

  // Into the previous call's result tensors: a call of the same shapes
  // allocates no result memory.
  if (llvm::Error error = executable->runner->callInto(function, tensors,
                                                       executable->results)) {
    executable->results.clear();
    // Wrong count/shape of inputs and unknown functions are the caller's
    // mistakes; the runner says which.
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": " + llvm::toString(std::move(error)));
  }

  if (!outputs)
    return TX_OK;
  if (numOutputs != executable->results.size())
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          caller + ": '" + function + "' has " +
                              llvm::Twine(executable->results.size()) +
                              " results, " + llvm::Twine(numOutputs) +
                              " output buffers were given");
  for (size_t i = 0; i < numOutputs; ++i) {
    const tx::Tensor &result = executable->results[i];
    TxBuffer &out = outputs[i];
    bool ok = out.rank == static_cast<int64_t>(result.shape.size()) &&
              (out.rank == 0 || out.shape) && out.data;
    for (int64_t d = 0; ok && d < out.rank; ++d)
      ok = out.shape[d] == result.shape[d];
    if (!ok) {
      std::string given =
          out.rank < 0 || (out.rank > 0 && !out.shape)
              ? std::string("invalid")
              : shapeString(llvm::ArrayRef<int64_t>(out.shape, out.rank));
      return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                            caller + ": result " + llvm::Twine(i) + " is " +
                                shapeString(result.shape) +
                                ", output buffer is " + given +
                                (out.data ? "" : " with NULL data"));
    }
    std::memcpy(out.data, result.data.data(),
                result.data.size() * sizeof(float));
  }
  return TX_OK;
}

TxStatus txExecutableGetNumResults(TxExecutable *executable,
                                   size_t *outNumResults) {
  tx::capi::clearLastError();
  if (!executable || !outNumResults)
    return tx::capi::fail(
        TX_ERROR_INVALID_ARGUMENT,
        "txExecutableGetNumResults: executable or outNumResults is NULL");
  *outNumResults = executable->results.size();
  return TX_OK;
}

TxStatus txExecutableGetResult(TxExecutable *executable, size_t index,
                               TxBuffer *outResult) {
  tx::capi::clearLastError();
  if (!executable || !outResult)
    return tx::capi::fail(
        TX_ERROR_INVALID_ARGUMENT,
        "txExecutableGetResult: executable or outResult is NULL");
  if (index >= executable->results.size())
    return tx::capi::fail(TX_ERROR_INVALID_ARGUMENT,
                          "txExecutableGetResult: index " + llvm::Twine(index) +
                              " out of range (" +
                              llvm::Twine(executable->results.size()) +
                              " results)");
  tx::Tensor &result = executable->results[index];
  outResult->data = result.data.data();
  outResult->shape = result.shape.data();
  outResult->rank = static_cast<int64_t>(result.shape.size());
  return TX_OK;
}
