//===- DeviceBuffers.cpp - weights and activations kept on the device -----===//
//
// tx-gpu-device-buffers: the memory model of tx-to-nvvm (see GPUPasses.td).
// Runs on the host functions after convert-parallel-loops-to-gpu, while the
// kernels are still gpu.launch regions reading host values directly: every
// buffer a kernel reads becomes a device buffer (weights uploaded once,
// activations gpu.alloc'd, arguments copied in, results copied out), and the
// function's device work is enqueued on one stream.
//
//===----------------------------------------------------------------------===//

#include "HostBuffers.h"
#include "TxDialect/Codegen/GPUTarget.h"
#include "TxDialect/Diagnostics.h"
#include "TxDialect/TxDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tx {
#define GEN_PASS_DECL_TXGPUDEVICEBUFFERS
#define GEN_PASS_DEF_TXGPUDEVICEBUFFERS
#include "TxDialect/Codegen/GPUPasses.h.inc"
} // namespace mlir::tx

using namespace mlir;

namespace {

constexpr StringLiteral kLoadWeights = "__tx_gpu_load_weights";
constexpr StringLiteral kReleaseWeights = "__tx_gpu_release_weights";
constexpr StringLiteral kUpload = "__tx_gpu_upload_weights";
constexpr StringLiteral kFree = "__tx_gpu_free_weights";
constexpr StringLiteral kState = "__tx_gpu_state"; // 0 none, 1 loaded, 2 released
constexpr StringLiteral kGraphBegin = "txGpuGraphBegin";
constexpr StringLiteral kGraphEnd = "txGpuGraphEnd";
constexpr StringLiteral kGraphRelease = "txGpuGraphRelease";
constexpr StringLiteral kWeightsReleased = "txGpuWeightsReleased";
constexpr StringLiteral kWriteWeight = "__tx_gpu_write_weight_";
constexpr StringLiteral kOnStream = "_on_stream";
// tx-to-linalg's tag of the globals checkpoint tensors fill
// (TxToLinalg.h's kCheckpointAttrName).
constexpr StringLiteral kCheckpoint = "tx.checkpoint";

/// A call of the collectives runtime (tx-lower-collectives-to-runtime's
/// `tx_rt_<all_reduce|reduce_scatter|all_gather>_<type>`).
bool isCollectiveCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  StringRef callee = call.getCallee();
  return !callee.ends_with(kOnStream) &&
         (callee.starts_with("tx_rt_all_reduce_") ||
          callee.starts_with("tx_rt_reduce_scatter_") ||
          callee.starts_with("tx_rt_all_gather_"));
}

bool isBuffer(Type t) {
  auto type = dyn_cast<MemRefType>(t);
  return type && type.getElementType().isIntOrFloat() &&
         !type.getMemorySpace();
}

bool launchesKernels(func::FuncOp func) {
  bool launches = false;
  func.walk([&](gpu::LaunchOp) {
    launches = true;
    return WalkResult::interrupt();
  });
  return launches;
}

/// A function that manages device memory itself (gpu.alloc, gpu.wait, ...)
/// is left to the host-mapped model.
bool managesDeviceMemory(func::FuncOp func) {
  bool manages = false;
  func.walk([&](Operation *op) {
    if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::WaitOp, gpu::MemcpyOp,
            gpu::MemsetOp, gpu::HostRegisterOp>(op) ||
        (isa<gpu::LaunchOp>(op) &&
         !cast<gpu::LaunchOp>(op).getAsyncDependencies().empty())) {
      manages = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return manages;
}

bool insideKernel(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() != nullptr;
}

/// The memref result of an op that makes a view of `v` (same buffer).
SmallVector<Value> viewsOf(Operation *op, Value v) {
  SmallVector<Value> views;
  if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
    if (view.getViewSource() == v)
      for (Value r : op->getResults())
        if (isa<BaseMemRefType>(r.getType()))
          views.push_back(r);
  } else if (isa<memref::CastOp, memref::ExtractStridedMetadataOp>(op)) {
    views.push_back(op->getResult(0));
  } else if (isMemoryEffectFree(op) && op->getNumRegions() == 0) {
    // Other views (memref.transpose, ...): effect-free ops making memrefs.
    for (Value r : op->getResults())
      if (isa<BaseMemRefType>(r.getType()))
        views.push_back(r);
  }
  return views;
}

Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      v = cast.getSource();
    else if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(def))
      v = meta.getSource();
    else if (isMemoryEffectFree(def) && def->getNumOperands() &&
             isa<BaseMemRefType>(def->getOperand(0).getType()))
      v = def->getOperand(0);
    else
      break;
  }
  return v;
}

/// `v` and the views of it, on the host and inside kernels.
llvm::SetVector<Value> aliasesOf(Value v) {
  llvm::SetVector<Value> all;
  all.insert(v);
  for (size_t i = 0; i < all.size(); ++i)
    for (OpOperand &use : all[i].getUses())
      for (Value view : viewsOf(use.getOwner(), all[i]))
        all.insert(view);
  return all;
}

/// True when a kernel may write `v` (or a view of it): an op inside a
/// gpu.launch with a write effect on it, or with unknown effects.
bool mayBeWrittenByKernels(Value v) {
  for (Value alias : aliasesOf(v))
    for (OpOperand &use : alias.getUses()) {
      Operation *op = use.getOwner();
      if (!insideKernel(op) || !viewsOf(op, alias).empty())
        continue;
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects)
        return true;
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffectsOnValue(alias, instances);
      for (auto &e : instances)
        if (isa<MemoryEffects::Write>(e.getEffect()))
          return true;
    }
  return false;
}

//===-- LLVM-level globals holding device pointers -------------------------===//

LLVM::LLVMPointerType ptrType(MLIRContext *ctx) {
  return LLVM::LLVMPointerType::get(ctx);
}

void createPointerGlobal(OpBuilder &b, Location loc, StringRef name) {
  auto global = LLVM::GlobalOp::create(b, loc, ptrType(b.getContext()),
                                       /*isConstant=*/false,
                                       LLVM::Linkage::Internal, name,
                                       Attribute());
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&global.getInitializerRegion());
  Value zero = LLVM::ZeroOp::create(b, loc, ptrType(b.getContext()));
  LLVM::ReturnOp::create(b, loc, zero);
}

Value addressOf(OpBuilder &b, Location loc, StringRef global) {
  return LLVM::AddressOfOp::create(b, loc, ptrType(b.getContext()), global);
}

Value loadState(OpBuilder &b, Location loc) {
  return LLVM::LoadOp::create(b, loc, b.getI32Type(),
                              addressOf(b, loc, kState));
}

void storeState(OpBuilder &b, Location loc, int32_t value) {
  Value v = arith::ConstantIntOp::create(b, loc, value, 32);
  LLVM::StoreOp::create(b, loc, v, addressOf(b, loc, kState));
}

/// The memref of static shape `type` (identity layout) at device pointer
/// `ptr`: its descriptor built in the LLVM dialect, cast to the memref (the
/// cast folds away when the memref is lowered).
Value memrefAt(OpBuilder &b, Location loc, MemRefType type, Value ptr) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  int64_t rank = type.getRank();
  SmallVector<Type> fields{ptrType(ctx), ptrType(ctx), i64};
  if (rank > 0) {
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
  }
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value d = LLVM::PoisonOp::create(b, loc, structType);
  d = LLVM::InsertValueOp::create(b, loc, d, ptr, ArrayRef<int64_t>{0});
  d = LLVM::InsertValueOp::create(b, loc, d, ptr, ArrayRef<int64_t>{1});
  auto constant = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  d = LLVM::InsertValueOp::create(b, loc, d, constant(0), ArrayRef<int64_t>{2});
  int64_t stride = 1;
  for (int64_t k = rank - 1; k >= 0; --k) {
    d = LLVM::InsertValueOp::create(b, loc, d, constant(type.getDimSize(k)),
                                    ArrayRef<int64_t>{3, k});
    d = LLVM::InsertValueOp::create(b, loc, d, constant(stride),
                                    ArrayRef<int64_t>{4, k});
    stride *= type.getDimSize(k);
  }
  return UnrealizedConversionCastOp::create(b, loc, type, d).getResult(0);
}

/// The memref<?xi8> of `bytes` (i64) bytes at `ptr`.
Value bytesAt(OpBuilder &b, Location loc, Value ptr, Value bytes) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto array = LLVM::LLVMArrayType::get(i64, 1);
  auto structType = LLVM::LLVMStructType::getLiteral(
      ctx, {ptrType(ctx), ptrType(ctx), i64, array, array});
  auto constant = [&](int64_t v) {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  Value d = LLVM::PoisonOp::create(b, loc, structType);
  d = LLVM::InsertValueOp::create(b, loc, d, ptr, ArrayRef<int64_t>{0});
  d = LLVM::InsertValueOp::create(b, loc, d, ptr, ArrayRef<int64_t>{1});
  d = LLVM::InsertValueOp::create(b, loc, d, constant(0), ArrayRef<int64_t>{2});
  d = LLVM::InsertValueOp::create(b, loc, d, bytes, ArrayRef<int64_t>{3, 0});
  d = LLVM::InsertValueOp::create(b, loc, d, constant(1), ArrayRef<int64_t>{4, 0});
  auto type = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
  return UnrealizedConversionCastOp::create(b, loc, type, d).getResult(0);
}

Value pointerOf(OpBuilder &b, Location loc, Value memref) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(b, loc, ptrType(b.getContext()), i64);
}

/// Dynamic sizes of `type` read from `like` (same shape).
SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc, Value like) {
  SmallVector<Value> sizes;
  auto type = cast<MemRefType>(like.getType());
  for (int64_t k = 0; k < type.getRank(); ++k)
    if (type.isDynamicDim(k))
      sizes.push_back(memref::DimOp::create(b, loc, like, k));
  return sizes;
}

/// Why a function cannot keep its buffers on the device: what, where, and
/// the buffer concerned (when one is).
struct HostMappedReason {
  std::string why;
  Operation *at = nullptr;
  Value buffer;
  explicit operator bool() const { return !why.empty(); }
};
HostMappedReason whyNotOnDevice(func::FuncOp func);

/// One weight global and the LLVM global holding its device pointer.
/// `deviceOnly`: a checkpoint weight (uninitialized, tagged tx.checkpoint)
/// that no host-mapped function reads: it has no host copy in the lowered
/// module; the runner writes it, piece by piece, through
/// `__tx_gpu_write_weight_<global>` (stacked weights slice by slice).
struct Weight {
  memref::GlobalOp global;
  std::string devicePointer;
  bool deviceOnly = false;
};

struct TxGPUDeviceBuffersPass
    : public tx::impl::TxGPUDeviceBuffersBase<TxGPUDeviceBuffersPass> {
  using Base::Base;

  ModuleOp module;
  llvm::MapVector<StringRef, Weight> weights;
  SmallVector<std::string> graphSlots;
  bool graphs = false;
  SmallVector<int64_t> captureSizes;
  bool allSizesCaptured = true;

  void runOnOperation() override;
  LogicalResult convert(func::FuncOp func);
  void createWeightFunctions(OpBuilder &b, Location loc);
  void createWriteWeight(OpBuilder &b, Location loc, StringRef name,
                         const Weight &w);
  func::FuncOp declare(OpBuilder &b, StringRef name, TypeRange inputs);
  void runHostMapped(func::FuncOp func, bool warn);
};

/// The buffer `v` as a user reads it in a message.
std::string describeBuffer(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return "argument #" + std::to_string(arg.getArgNumber());
  if (auto get = v.getDefiningOp<memref::GetGlobalOp>())
    return ("weight '" + get.getName() + "'").str();
  return "a buffer it allocates (note)";
}

void TxGPUDeviceBuffersPass::runHostMapped(func::FuncOp func, bool warn) {
  HostMappedReason reason;
  Operation *manager = nullptr;
  if (warn) {
    reason = whyNotOnDevice(func);
  } else {
    // gpu.alloc, gpu.memcpy ...: the function manages device memory itself.
    func.walk([&](Operation *op) {
      if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::WaitOp, gpu::MemcpyOp,
              gpu::MemsetOp, gpu::HostRegisterOp, gpu::LaunchOp>(op) &&
          !insideKernel(op) &&
          (!isa<gpu::LaunchOp>(op) ||
           !cast<gpu::LaunchOp>(op).getAsyncDependencies().empty())) {
        manager = op;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
  }
  Value first;
  if (!tx::registerHostBuffers(func, &first))
    return; // nothing on the host for its kernels
  Operation *at = reason.at ? reason.at
                  : manager ? manager
                            : func.getOperation();
  InFlightDiagnostic d =
      warn ? tx::emitWarningAt(at) : mlir::emitRemark(at->getLoc());
  d << "tx-gpu-device-buffers: function '" << func.getSymName()
    << "' runs host-mapped (";
  if (!warn)
    d << "it manages device memory itself ('" << manager->getName() << "')";
  else if (reason.buffer)
    d << describeBuffer(reason.buffer) << ": " << reason.why;
  else
    d << reason.why;
  d << "): its host buffers";
  if (!reason.buffer)
    d << " (" << describeBuffer(first) << ", ...)";
  d << " are registered with the driver and its kernels read them "
       "over the bus at every call; memory=host-mapped makes that the "
       "explicit choice";
  if (!reason.buffer)
    reason.buffer = first;
  if (!isa<BlockArgument>(reason.buffer))
    d.attachNote(reason.buffer.getLoc()) << "the buffer";
}

func::FuncOp TxGPUDeviceBuffersPass::declare(OpBuilder &b, StringRef name,
                                             TypeRange inputs) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, {}));
  f.setPrivate();
  return f;
}

void TxGPUDeviceBuffersPass::runOnOperation() {
  module = getOperation();
  // Functions that manage device memory themselves, or whose host code
  // needs its buffers on the host, run host-mapped.
  // Neither is silent: a warning names the buffer and why, a remark the op
  // that manages device memory.
  SmallVector<std::pair<func::FuncOp, bool>> hostMapped;
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !launchesKernels(func))
      continue;
    if (managesDeviceMemory(func))
      hostMapped.push_back({func, false});
    else if (whyNotOnDevice(func))
      hostMapped.push_back({func, true});
    else
      funcs.push_back(func);
  }
  if (funcs.empty()) {
    for (auto [func, warn] : hostMapped)
      runHostMapped(func, warn);
    return;
  }

  if (auto config = module->getAttrOfType<tx::CompileConfigAttr>("tx.config")) {
    graphs = config.getCudagraphMode() == tx::CUDAGraphMode::full;
    if (ArrayAttr sizes = config.getCaptureSizes()) {
      allSizesCaptured = false;
      for (Attribute a : sizes)
        if (auto i = dyn_cast<IntegerAttr>(a))
          captureSizes.push_back(i.getInt());
    }
  }

  // The weights the functions read.
  for (func::FuncOp func : funcs)
    func.walk([&](memref::GetGlobalOp get) {
      if (insideKernel(get) || !isBuffer(get.getType()))
        return;
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          get, get.getNameAttr());
      if (!global || weights.count(global.getSymName()))
        return;
      weights[global.getSymName()] = {
          global, ("__tx_gpu_dev_" + global.getSymName()).str()};
    });
  // Checkpoint weights no host code reads have no host copy.
  llvm::DenseSet<StringRef> readOnHost;
  for (auto [func, warn] : hostMapped)
    func.walk([&](memref::GetGlobalOp get) { readOnHost.insert(get.getName()); });
  for (auto &[name, w] : weights)
    w.deviceOnly = !testUploadWeightsPerCall && w.global.isUninitialized() &&
                   w.global->hasAttr(kCheckpoint) &&
                   !readOnHost.count(name);

  OpBuilder b(module.getContext());
  Location loc = module.getLoc();
  b.setInsertionPointToEnd(module.getBody());
  for (auto &[name, w] : weights)
    createPointerGlobal(b, loc, w.devicePointer);
  {
    auto state = LLVM::GlobalOp::create(
        b, loc, b.getI32Type(), /*isConstant=*/false, LLVM::Linkage::Internal,
        kState, b.getI32IntegerAttr(0));
    (void)state;
  }
  if (graphs)
    for (func::FuncOp func : funcs) {
      graphSlots.push_back(("__tx_gpu_graph_" + func.getSymName()).str());
      createPointerGlobal(b, loc, graphSlots.back());
    }
  createWeightFunctions(b, loc);

  for (func::FuncOp func : funcs)
    if (failed(convert(func)))
      return signalPassFailure();
  for (auto [func, warn] : hostMapped)
    runHostMapped(func, warn);
  // The device-only weights' host globals are gone from the host code.
  for (auto &[name, w] : weights)
    if (w.deviceOnly &&
        SymbolTable::symbolKnownUseEmpty(w.global.getOperation(), module))
      w.global.erase();
}

void TxGPUDeviceBuffersPass::createWeightFunctions(OpBuilder &b,
                                                   Location loc) {
  MLIRContext *ctx = b.getContext();
  auto tokenType = gpu::AsyncTokenType::get(ctx);
  auto makeFunc = [&](StringRef name, bool isPublic) {
    b.setInsertionPointToEnd(module.getBody());
    auto f = func::FuncOp::create(b, loc, name, b.getFunctionType({}, {}));
    if (!isPublic)
      f.setPrivate();
    b.setInsertionPointToStart(f.addEntryBlock());
    return f;
  };

  // Unconditional upload and free.
  makeFunc(kUpload, false);
  {
    Value t = gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
    for (auto &[name, w] : weights) {
      MemRefType type = w.global.getType();
      auto alloc = gpu::AllocOp::create(b, loc, type, tokenType, ValueRange{t},
                                        ValueRange{}, ValueRange{});
      t = alloc.getAsyncToken();
      if (!w.deviceOnly) {
        Value host = memref::GetGlobalOp::create(b, loc, type, name);
        t = gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{t},
                                  alloc.getMemref(), host)
                .getAsyncToken();
      }
      LLVM::StoreOp::create(b, loc, pointerOf(b, loc, alloc.getMemref()),
                            addressOf(b, loc, w.devicePointer));
    }
    gpu::WaitOp::create(b, loc, Type(), ValueRange{t});
    storeState(b, loc, 1);
    func::ReturnOp::create(b, loc);
  }
  makeFunc(kFree, false);
  {
    Value t = gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
    for (auto &[name, w] : weights) {
      Value ptr = LLVM::LoadOp::create(b, loc, ptrType(ctx),
                                       addressOf(b, loc, w.devicePointer));
      Value device = memrefAt(b, loc, w.global.getType(), ptr);
      t = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{t}, device)
              .getAsyncToken();
      LLVM::StoreOp::create(b, loc, LLVM::ZeroOp::create(b, loc, ptrType(ctx)),
                            addressOf(b, loc, w.devicePointer));
    }
    gpu::WaitOp::create(b, loc, Type(), ValueRange{t});
    storeState(b, loc, 0);
    func::ReturnOp::create(b, loc);
  }

  // Load: once; after a release, an error of the device runtime.
  auto released = declare(b, kWeightsReleased, {});
  makeFunc(kLoadWeights, true);
  {
    Value state = loadState(b, loc);
    auto is = [&](int32_t v) {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, state,
                                   arith::ConstantIntOp::create(b, loc, v, 32));
    };
    scf::IfOp::create(b, loc, is(2), [&](OpBuilder &nb, Location l) {
      func::CallOp::create(nb, l, released, ValueRange{});
      scf::YieldOp::create(nb, l);
    });
    Value none = is(0);
    scf::IfOp::create(b, loc, none, [&](OpBuilder &nb, Location l) {
      func::CallOp::create(nb, l, kUpload, TypeRange{}, ValueRange{});
      scf::YieldOp::create(nb, l);
    });
    func::ReturnOp::create(b, loc);
  }
  // Release: the weights and the captured graphs.
  auto graphRelease = graphs ? declare(b, kGraphRelease, {ptrType(ctx)})
                             : func::FuncOp();
  makeFunc(kReleaseWeights, true);
  {
    Value state = loadState(b, loc);
    Value loaded = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, state,
        arith::ConstantIntOp::create(b, loc, 1, 32));
    scf::IfOp::create(b, loc, loaded, [&](OpBuilder &nb, Location l) {
      func::CallOp::create(nb, l, kFree, TypeRange{}, ValueRange{});
      scf::YieldOp::create(nb, l);
    });
    for (const std::string &slot : graphSlots)
      func::CallOp::create(b, loc, graphRelease,
                           ValueRange{addressOf(b, loc, slot)});
    storeState(b, loc, 2);
    func::ReturnOp::create(b, loc);
  }
  for (auto &[name, w] : weights)
    if (w.deviceOnly)
      createWriteWeight(b, loc, name, w);
}

/// `__tx_gpu_write_weight_<global>(host, offset, bytes)`: copies `bytes`
/// bytes at `host` to byte `offset` of the weight's device buffer (loading
/// the weights first if needed), synchronously: the caller may free `host`
/// when it returns. The runner writes each checkpoint tensor of a stacked
/// weight into its slice, so no merged host copy exists.
void TxGPUDeviceBuffersPass::createWriteWeight(OpBuilder &b, Location loc,
                                               StringRef name,
                                               const Weight &w) {
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  b.setInsertionPointToEnd(module.getBody());
  auto f = func::FuncOp::create(
      b, loc, (kWriteWeight + name).str(),
      b.getFunctionType({ptrType(ctx), i64, i64}, {}));
  Block *body = f.addEntryBlock();
  b.setInsertionPointToStart(body);
  func::CallOp::create(b, loc, kLoadWeights, TypeRange{}, ValueRange{});
  Value base = LLVM::LoadOp::create(b, loc, ptrType(ctx),
                                    addressOf(b, loc, w.devicePointer));
  Value dst = LLVM::GEPOp::create(b, loc, ptrType(ctx), b.getI8Type(), base,
                                  ValueRange{body->getArgument(1)});
  Value bytes = body->getArgument(2);
  auto tokenType = gpu::AsyncTokenType::get(ctx);
  Value t = gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  t = gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{t},
                            bytesAt(b, loc, dst, bytes),
                            bytesAt(b, loc, body->getArgument(0), bytes))
          .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{t});
  func::ReturnOp::create(b, loc);
}

/// Why `func` cannot keep its buffers on the device (it then runs
/// host-mapped), or nothing: host code that touches a buffer itself (a
/// load, a call other than a collective, a buffer yielded from control
/// flow), kernels or buffers inside host control flow, strided arguments,
/// results or copies.
HostMappedReason whyNotOnDevice(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return {"its host code has several blocks", func, {}};
  Block &entry = func.getBody().front();
  SmallVector<Value> roots;
  for (BlockArgument arg : func.getArguments())
    if (isBuffer(arg.getType())) {
      if (!cast<MemRefType>(arg.getType()).getLayout().isIdentity())
        return {"it is strided", func, arg};
      roots.push_back(arg);
    }
  for (Operation &op : entry) {
    if (isa<memref::AllocOp, memref::GetGlobalOp>(op) &&
        isBuffer(op.getResult(0).getType()))
      roots.push_back(op.getResult(0));
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      for (Value v : ret.getOperands())
        if (isBuffer(v.getType()) &&
            !cast<MemRefType>(v.getType()).getLayout().isIdentity())
          return {"it is returned strided", ret, rootOf(v)};
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      if (!cast<MemRefType>(copy.getSource().getType()).getLayout().isIdentity() ||
          !cast<MemRefType>(copy.getTarget().getType()).getLayout().isIdentity())
        return {"it is copied strided", copy, rootOf(copy.getTarget())};
    if (op.getNumRegions() && !isa<gpu::LaunchOp>(op)) {
      Operation *nested = nullptr;
      op.walk([&](Operation *inner) {
        if (!nested && !insideKernel(inner) &&
            isa<gpu::LaunchOp, memref::AllocOp, memref::DeallocOp,
                memref::CopyOp>(inner))
          nested = inner;
      });
      if (nested)
        return {"kernels or buffers inside host control flow ('" +
                    nested->getName().getStringRef().str() + "')",
                nested, {}};
    }
  }
  for (Value root : roots)
    for (Value alias : aliasesOf(root))
      for (Operation *user : alias.getUsers()) {
        if (insideKernel(user) || !viewsOf(user, alias).empty())
          continue;
        if (isa<memref::DimOp, memref::DeallocOp>(user) ||
            (isa<func::ReturnOp, memref::CopyOp>(user) &&
             user->getBlock() == &entry) ||
            (isCollectiveCall(user) && user->getBlock() == &entry))
          continue;
        return {("host code reads or writes it ('" +
                 user->getName().getStringRef() + "')")
                    .str(),
                user, root};
      }
  return {};
}

LogicalResult TxGPUDeviceBuffersPass::convert(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  Location loc = func.getLoc();
  auto tokenType = gpu::AsyncTokenType::get(ctx);
  Block &entry = func.getBody().front();

  SmallVector<Operation *> original;
  for (Operation &op : entry)
    original.push_back(&op);

  OpBuilder b(ctx);
  b.setInsertionPointToStart(&entry);
  if (testUploadWeightsPerCall)
    func::CallOp::create(b, loc, kUpload, TypeRange{}, ValueRange{});
  else
    func::CallOp::create(b, loc, kLoadWeights, TypeRange{}, ValueRange{});
  // CUDA graphs: the call's device work between Begin and End (the
  // runtime keeps the copies of the inputs before the first kernel out of
  // the graph, and the buffers allocated in the call for the graph).
  Value slot;
  if (graphs) {
    slot = addressOf(b, loc, "__tx_gpu_graph_" + func.getSymName().str());
    Value key = arith::ConstantIntOp::create(b, loc, 0, 64);
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || !type.getNumDynamicDims())
        continue;
      int64_t dim = 0;
      while (!type.isDynamicDim(dim))
        ++dim;
      Value size = memref::DimOp::create(b, loc, arg, dim);
      key = arith::IndexCastOp::create(b, loc, b.getI64Type(), size);
      break;
    }
    Value captured = arith::ConstantIntOp::create(b, loc, allSizesCaptured, 1);
    for (int64_t s : captureSizes)
      captured = arith::OrIOp::create(
          b, loc, captured,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, key,
                                arith::ConstantIntOp::create(b, loc, s, 64)));
    Value flag = arith::ExtUIOp::create(b, loc, b.getI32Type(), captured);
    func::CallOp::create(
        b, loc,
        declare(b, kGraphBegin, {ptrType(ctx), b.getI64Type(), b.getI32Type()}),
        ValueRange{slot, key, flag});
  }

  Value token =
      gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
  // What reads the host arguments before their copies exist.
  llvm::SmallPtrSet<Operation *, 16> prologue;
  for (Operation &op : entry) {
    if (llvm::is_contained(original, &op))
      break;
    prologue.insert(&op);
  }

  // Arguments: copied in.
  SmallVector<Value> roots;
  struct ArgCopy {
    BlockArgument arg;
    Value device;
    bool copyBack;
  };
  SmallVector<ArgCopy> argCopies;
  for (BlockArgument arg : func.getArguments()) {
    if (!isBuffer(arg.getType()))
      continue;
    auto type = cast<MemRefType>(arg.getType());
    if (!type.getLayout().isIdentity())
      return mlir::emitError(arg.getLoc())
             << "tx-gpu-device-buffers: argument #" << arg.getArgNumber()
             << " of '" << func.getSymName() << "' has type " << type
             << "; buffers passed to the GPU are contiguous";
    SmallVector<Value> sizes = dynamicSizes(b, loc, arg);
    auto alloc = gpu::AllocOp::create(b, loc, type, tokenType,
                                      ValueRange{token}, sizes, ValueRange{});
    token = gpu::MemcpyOp::create(b, loc, tokenType,
                                  ValueRange{alloc.getAsyncToken()},
                                  alloc.getMemref(), arg)
                .getAsyncToken();
    // Everything but the copy and its sizes now uses the device buffer.
    llvm::SmallPtrSet<Operation *, 16> keep = prologue;
    keep.insert(token.getDefiningOp());
    for (Value size : sizes)
      keep.insert(size.getDefiningOp());
    arg.replaceAllUsesExcept(alloc.getMemref(), keep);
    argCopies.push_back({arg, alloc.getMemref(), false});
    roots.push_back(alloc.getMemref());
  }
  for (ArgCopy &a : argCopies)
    a.copyBack = mayBeWrittenByKernels(a.device);

  // Weights: the device copies.
  llvm::DenseMap<StringRef, Value> deviceWeights;
  SmallVector<memref::GetGlobalOp> replacedGets;
  for (Operation *op : original) {
    op->walk([&](memref::GetGlobalOp get) {
      if (insideKernel(get) || !weights.count(get.getName()))
        return;
      Value &device = deviceWeights[get.getName()];
      if (!device) {
        OpBuilder::InsertionGuard guard(b);
        Value ptr = LLVM::LoadOp::create(
            b, loc, ptrType(ctx),
            addressOf(b, loc, weights[get.getName()].devicePointer));
        device = memrefAt(b, loc, get.getType(), ptr);
        roots.push_back(device);
      }
      get.replaceAllUsesWith(device);
      replacedGets.push_back(get);
    });
  }
  // `original` must not keep the erased ops (the loop below reads each).
  llvm::SmallPtrSet<Operation *, 16> erased;
  for (memref::GetGlobalOp get : replacedGets)
    erased.insert(get);
  llvm::erase_if(original, [&](Operation *op) { return erased.contains(op); });
  for (memref::GetGlobalOp get : replacedGets)
    get.erase();

  // Activations: device allocations; thread the token through every device
  // operation of the function.
  llvm::DenseSet<Value> deallocated;
  for (Operation *op : original) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (!isBuffer(alloc.getType()))
        continue;
      b.setInsertionPoint(alloc);
      auto device = gpu::AllocOp::create(
          b, alloc.getLoc(), alloc.getType(), tokenType, ValueRange{token},
          alloc.getDynamicSizes(), alloc.getSymbolOperands());
      token = device.getAsyncToken();
      alloc.replaceAllUsesWith(device.getMemref());
      alloc.erase();
      roots.push_back(device.getMemref());
    } else if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
      b.setInsertionPoint(launch);
      SmallVector<Type> workgroup, privates;
      for (BlockArgument a : launch.getWorkgroupAttributions())
        workgroup.push_back(a.getType());
      for (BlockArgument a : launch.getPrivateAttributions())
        privates.push_back(a.getType());
      std::optional<gpu::KernelDim3> cluster = launch.getClusterSize();
      auto async = gpu::LaunchOp::create(
          b, launch.getLoc(), launch.getGridSizeX(), launch.getGridSizeY(),
          launch.getGridSizeZ(), launch.getBlockSizeX(),
          launch.getBlockSizeY(), launch.getBlockSizeZ(),
          launch.getDynamicSharedMemorySize(), tokenType, ValueRange{token},
          workgroup, privates, cluster ? cluster->x : Value(),
          cluster ? cluster->y : Value(), cluster ? cluster->z : Value(),
          launch.getModuleAttr(), launch.getFunctionAttr());
      async.getBody().takeBody(launch.getBody());
      for (NamedAttribute attr : launch->getDiscardableAttrs())
        async->setDiscardableAttr(attr.getName(), attr.getValue());
      token = async.getAsyncToken();
      launch.erase();
    }
  }
  // Deallocations and copies, now on device buffers.
  // Rebuild the chain in program order: every async op of the function
  // after the entry's waits depends on the previous one.
  token = Value();
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (auto wait = dyn_cast<gpu::WaitOp>(op)) {
      if (wait.getAsyncToken())
        token = wait.getAsyncToken();
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      b.setInsertionPoint(dealloc);
      token = gpu::DeallocOp::create(b, dealloc.getLoc(), tokenType,
                                     ValueRange{token}, dealloc.getMemref())
                  .getAsyncToken();
      deallocated.insert(rootOf(dealloc.getMemref()));
      dealloc.erase();
      continue;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      auto src = cast<MemRefType>(copy.getSource().getType());
      auto dst = cast<MemRefType>(copy.getTarget().getType());
      if (!src.getLayout().isIdentity() || !dst.getLayout().isIdentity())
        return copy.emitError("tx-gpu-device-buffers: a copy between strided "
                              "device buffers; the host-mapped memory model "
                              "(memory=host-mapped) supports it");
      b.setInsertionPoint(copy);
      token = gpu::MemcpyOp::create(b, copy.getLoc(), tokenType,
                                    ValueRange{token}, copy.getTarget(),
                                    copy.getSource())
                  .getAsyncToken();
      copy.erase();
      continue;
    }
    if (isCollectiveCall(&op)) {
      // Enqueued on the call's stream (the token's, once gpu-to-llvm has
      // made tokens streams), after what precedes it and before what follows.
      auto call = cast<func::CallOp>(op);
      b.setInsertionPoint(call);
      Value stream =
          UnrealizedConversionCastOp::create(b, call.getLoc(), ptrType(ctx), token)
              .getResult(0);
      SmallVector<Type> inputs(call.getOperandTypes());
      inputs.push_back(ptrType(ctx));
      std::string name = (call.getCallee() + kOnStream).str();
      func::FuncOp callee = declare(b, name, inputs);
      callee->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                      UnitAttr::get(ctx));
      SmallVector<Value> operands(call.getOperands());
      operands.push_back(stream);
      func::CallOp::create(b, call.getLoc(), callee, operands);
      StringAttr host = call.getCalleeAttr().getAttr();
      call.erase();
      if (auto old = module.lookupSymbol<func::FuncOp>(host))
        if (old.isExternal() &&
            SymbolTable::symbolKnownUseEmpty(old.getOperation(), module))
          old.erase();
      continue;
    }
    if (auto async = dyn_cast<gpu::AsyncOpInterface>(op)) {
      if (!token || !op.getNumResults())
        continue;
      // Each converted op depends on the op before it.
      auto deps = async.getAsyncDependencies();
      if (deps.size() == 1 && deps[0] != token) {
        op.setOperand(async.getAsyncDependencies().getBeginOperandIndex(),
                      token);
      }
      token = async.getAsyncToken();
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      b.setInsertionPoint(ret);
      if (graphs)
        func::CallOp::create(b, loc, declare(b, kGraphEnd, {ptrType(ctx)}),
                             ValueRange{slot});
      SmallVector<Value> results, resultRoots;
      for (Value v : ret.getOperands()) {
        auto type = dyn_cast<MemRefType>(v.getType());
        if (!type || !isBuffer(type)) {
          results.push_back(v);
          continue;
        }
        if (!type.getLayout().isIdentity())
          return ret.emitError()
                 << "tx-gpu-device-buffers: result of type " << type
                 << " is not contiguous (tx-return-contiguous makes results "
                    "contiguous)";
        auto host = memref::AllocOp::create(b, ret.getLoc(), type,
                                            dynamicSizes(b, ret.getLoc(), v));
        token = gpu::MemcpyOp::create(b, ret.getLoc(), tokenType,
                                      ValueRange{token}, host, v)
                    .getAsyncToken();
        results.push_back(host);
        Value root = rootOf(v);
        if (root.getDefiningOp<gpu::AllocOp>() && !deallocated.count(root) &&
            !llvm::any_of(argCopies,
                          [&](ArgCopy &a) { return a.device == root; })) {
          deallocated.insert(root);
          resultRoots.push_back(root);
        }
      }
      // Freed once every result is copied out: two results may be one
      // buffer, or views of one.
      for (Value root : resultRoots)
        token = gpu::DeallocOp::create(b, ret.getLoc(), tokenType,
                                       ValueRange{token}, root)
                    .getAsyncToken();
      for (ArgCopy &a : argCopies) {
        if (a.copyBack)
          token = gpu::MemcpyOp::create(b, ret.getLoc(), tokenType,
                                        ValueRange{token}, a.arg, a.device)
                      .getAsyncToken();
        token = gpu::DeallocOp::create(b, ret.getLoc(), tokenType,
                                       ValueRange{token}, a.device)
                    .getAsyncToken();
      }
      gpu::WaitOp::create(b, ret.getLoc(), Type(), ValueRange{token});
      if (testUploadWeightsPerCall)
        func::CallOp::create(b, ret.getLoc(), kFree, TypeRange{},
                             ValueRange{});
      ret.getOperandsMutable().assign(results);
    }
  }
  return success();
}

} // namespace
