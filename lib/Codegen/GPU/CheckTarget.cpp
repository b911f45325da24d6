//===- CheckTarget.cpp - fail early on targets that cannot be produced ----===//
//
// Without this pass a bad chip or a missing ptxas surfaces as an error from
// deep inside gpu.module serialization ("`ptxas` invocation failed"); here it
// is one diagnostic that names the option and what is missing.
//
//===----------------------------------------------------------------------===//

#include "TxDialect/Codegen/GPUTarget.h"
#include "TxDialect/Diagnostics.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <optional>

namespace mlir::tx {
#define GEN_PASS_DECL_TXGPUCHECKTARGET
#define GEN_PASS_DECL_TXGPUCHECKLIBDEVICE
#define GEN_PASS_DEF_TXGPUCHECKLIBDEVICE
#define GEN_PASS_DEF_TXGPUCHECKTARGET
#include "TxDialect/Codegen/GPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {
/// A chip LLVM 22's NVPTX back end and CUDA 13's ptxas both support, with the
/// lowest PTX ISA version (times ten) LLVM accepts for it. CUDA 13 dropped
/// everything below sm_75.
struct ChipInfo {
  unsigned smVersion;
  unsigned minPTX;
  unsigned minPTXArchSpecific; // 0: no `a` variant
};
constexpr ChipInfo kChips[] = {
    {75, 63, 0},   {80, 70, 0},   {86, 71, 0},   {87, 74, 0},
    {89, 78, 0},   {90, 78, 80},  {100, 86, 86}, {103, 88, 88},
    {110, 90, 90}, {120, 87, 87}, {121, 88, 88},
};
/// The newest PTX ISA both LLVM 22 and CUDA 13.0's ptxas handle.
constexpr unsigned kMaxPTX = 90;

struct ParsedChip {
  const ChipInfo *info;
  bool archSpecific;
};

std::optional<ParsedChip> parseChip(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return std::nullopt;
  bool archSpecific = chip.consume_back("a");
  unsigned version;
  if (chip.getAsInteger(10, version))
    return std::nullopt;
  for (const ChipInfo &info : kChips)
    if (info.smVersion == version) {
      if (archSpecific && !info.minPTXArchSpecific)
        return std::nullopt;
      return ParsedChip{&info, archSpecific};
    }
  return std::nullopt;
}

std::optional<unsigned> parseFeature(StringRef feature) {
  unsigned version;
  if (!feature.consume_front("+ptx") || feature.getAsInteger(10, version))
    return std::nullopt;
  return version;
}

/// `tool` as serialization will run it: from PATH, else from the toolkit.
std::optional<std::string> findCUDATool(StringRef tool, StringRef toolkit) {
  if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName(tool))
    return *p;
  if (toolkit.empty())
    return std::nullopt;
  SmallString<128> path(toolkit);
  llvm::sys::path::append(path, "bin", tool);
  if (llvm::sys::fs::can_execute(path))
    return std::string(path);
  return std::nullopt;
}

std::string knownChips() {
  std::string list;
  for (const ChipInfo &info : kChips) {
    list += (list.empty() ? "sm_" : ", sm_") + std::to_string(info.smVersion);
    if (info.minPTXArchSpecific)
      list += ", sm_" + std::to_string(info.smVersion) + "a";
  }
  return list;
}

struct TxGPUCheckTargetPass
    : public tx::impl::TxGPUCheckTargetBase<TxGPUCheckTargetPass> {
  using Base::Base;

  /// What tx-to-nvvm needs that its upstream passes do not declare: the NVVM
  /// target attribute's serialization (gpu-module-to-binary) and the
  /// translations to LLVM IR of the kernels and of the host code's
  /// gpu.binary. With them the pipeline runs in a context that registered
  /// the CPU dialects only (tx::registerTxCPUDialects, the runner's).
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registry.insert<gpu::GPUDialect, LLVM::LLVMDialect, NVVM::NVVMDialect>();
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
    registerBuiltinDialectTranslation(registry);
    registerGPUDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<ParsedChip> chipInfo = parseChip(chip);
    if (!chipInfo) {
      tx::emitErrorAt(module) << "tx-to-nvvm: chip '" << chip
                              << "' cannot be produced by LLVM 22 and CUDA 13 "
                                 "(known: "
                              << knownChips() << ")";
      return signalPassFailure();
    }
    unsigned minPTX = chipInfo->archSpecific ? chipInfo->info->minPTXArchSpecific
                                             : chipInfo->info->minPTX;
    if (!features.empty()) {
      std::optional<unsigned> ptx = parseFeature(features);
      if (!ptx) {
        tx::emitErrorAt(module)
            << "tx-to-nvvm: features '" << features
            << "' is not a PTX ISA feature of the form +ptxNN";
        return signalPassFailure();
      }
      if (*ptx < minPTX || *ptx > kMaxPTX) {
        tx::emitErrorAt(module)
            << "tx-to-nvvm: " << chip << " needs PTX ISA +ptx" << minPTX
            << " .. +ptx" << kMaxPTX << ", got '" << features << "'";
        return signalPassFailure();
      }
    }
    // llvm: the kernels' NVVM LLVM IR as bitcode (after libdevice linking
    // and optimisation, before PTX), which the emulated device executes.
    if (format != "isa" && format != "bin" && format != "fatbin" &&
        format != "llvm") {
      tx::emitErrorAt(module) << "tx-to-nvvm: format '" << format
                              << "' is not one of isa, bin, fatbin, llvm";
      return signalPassFailure();
    }
    if (!toolkit.empty() && !llvm::sys::fs::is_directory(toolkit)) {
      tx::emitErrorAt(module)
          << "tx-to-nvvm: cuda-toolkit '" << toolkit << "' is not a directory";
      return signalPassFailure();
    }
    if (memory != "device" && memory != "host-mapped") {
      tx::emitErrorAt(module) << "tx-to-nvvm: memory '" << memory
                              << "' is not device or host-mapped";
      return signalPassFailure();
    }
    if (math != "auto" && math != "libdevice" && math != "polynomial") {
      tx::emitErrorAt(module) << "tx-to-nvvm: math '" << math
                              << "' is not one of auto, libdevice, polynomial";
      return signalPassFailure();
    }
    SmallVector<StringRef, 2> tools;
    if (format == "bin" || format == "fatbin")
      tools.push_back("ptxas");
    if (format == "fatbin")
      tools.push_back("fatbinary");
    for (StringRef tool : tools) {
      if (findCUDATool(tool, toolkit))
        continue;
      tx::emitErrorAt(module)
          << "tx-to-nvvm: format=" << format << " needs '" << tool
          << "' from the CUDA Toolkit, not found on PATH nor in the toolkit ("
          << (toolkit.empty() ? std::string("none found") : "'" + toolkit + "'")
          << "; set CUDA_HOME or cuda-toolkit=, or use format=isa)";
      return signalPassFailure();
    }
  }
};
struct TxGPUCheckLibdevicePass
    : public tx::impl::TxGPUCheckLibdeviceBase<TxGPUCheckLibdevicePass> {
  using Base::Base;

  void runOnOperation() override {
    if (!libdevice.empty())
      return;
    WalkResult result = getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (!func.isExternal() || !func.getName().starts_with("__nv_") ||
          !func->getParentOfType<gpu::GPUModuleOp>())
        return WalkResult::advance();
      tx::emitErrorAt(func)
          << "tx-to-nvvm: kernels call libdevice's " << func.getName()
          << " but libdevice (nvvm/libdevice/libdevice.10.bc) "
             "was not found in the CUDA Toolkit (set CUDA_HOME "
             "or cuda-toolkit=, or use math=polynomial)";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

std::string tx::findCUDAToolkit() {
  auto has = [](StringRef dir, StringRef a, StringRef b, StringRef c = "") {
    SmallString<128> path(dir);
    llvm::sys::path::append(path, a, b, c);
    return llvm::sys::fs::exists(path);
  };
  // In order of preference; the first with libdevice wins, else the first
  // with ptxas (a ptxas on PATH may be a wrapper script outside any toolkit,
  // e.g. /usr/local/bin/ptxas, whose parent has no nvvm/).
  SmallVector<std::string, 3> candidates;
  if (StringRef fromEnv = NVVM::getCUDAToolkitPath(); !fromEnv.empty())
    candidates.push_back(fromEnv.str());
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas"))
    candidates.push_back(llvm::sys::path::parent_path(
                             llvm::sys::path::parent_path(*ptxas))
                             .str());
  candidates.push_back("/usr/local/cuda");
  for (const std::string &dir : candidates)
    if (has(dir, "nvvm", "libdevice", "libdevice.10.bc"))
      return dir;
  for (const std::string &dir : candidates)
    if (has(dir, "bin", "ptxas"))
      return dir;
  return "";
}

std::string tx::findLibdevice(StringRef toolkit) {
  SmallVector<SmallString<128>, 2> candidates;
  if (!toolkit.empty()) {
    candidates.emplace_back(toolkit);
    llvm::sys::path::append(candidates.back(), "nvvm", "libdevice",
                            "libdevice.10.bc");
  }
  // Debian's nvidia-cuda-toolkit keeps it outside any toolkit directory.
  candidates.emplace_back("/usr/lib/nvidia-cuda-toolkit/libdevice/"
                          "libdevice.10.bc");
  for (const SmallString<128> &path : candidates)
    if (llvm::sys::fs::exists(path))
      return std::string(path);
  return "";
}

std::string tx::defaultPTXFeature(StringRef chip) {
  std::optional<ParsedChip> chipInfo = parseChip(chip);
  if (!chipInfo)
    return "";
  unsigned ptx = chipInfo->archSpecific ? chipInfo->info->minPTXArchSpecific
                                        : chipInfo->info->minPTX;
  return "+ptx" + std::to_string(ptx);
}
