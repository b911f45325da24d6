//===- KernelModule.cpp - NVVM LLVM IR to host code -----------------------===//
//
// mgpuModuleLoad gets what tx-to-nvvm{format=llvm} embeds: the kernel
// module's LLVM IR as bitcode, linked and optimised for NVPTX (the IR the
// NVPTX back end would turn into PTX). It is executed as it is, retargeted
// to the host:
//  - calls of NVVM intrinsics become calls into this runtime: special
//    registers read the emulated thread's context, bar.sync waits for the
//    block, mma.sync and ldmatrix collect their operands in 16-byte slots
//    and run once the warp is complete; any other llvm.nvvm.* call (or an
//    external function the process lacks) is an error naming it and the
//    function using it;
//  - every load, store, atomic and memory intrinsic whose address is not the
//    thread's own stack gets a bounds check (Memory.cpp);
//  - PTX calling conventions and target attributes are dropped; each kernel
//    gets an entry `<kernel>.txemu(void **params)` unpacking the launch's
//    parameter array;
// and the module is compiled with ORC's LLJIT for the host.
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include <cstring>
#include <deque>
#include <map>
#include <mutex>

using namespace llvm;
using namespace tx::emulator;

extern "C" {
int32_t __txemu_sreg(int32_t code);
void __txemu_barrier(int32_t site);
void __txemu_intrinsic(int32_t kind, int32_t site, char *args, char *results);
void __txemu_check(const void *address, int64_t bytes, int32_t kind,
                   const char *function);
}

namespace tx::emulator {
struct KernelModule {
  /// Why the module cannot run, reported when one of its kernels is looked
  /// up (the host code loads every module before the first launch).
  std::string loadError;
  std::unique_ptr<orc::LLJIT> jit;
  std::map<std::string, std::unique_ptr<Kernel>> kernels;
  std::vector<std::pair<char *, uint64_t>> shared;
  std::vector<const void *> regions;
};
} // namespace tx::emulator

namespace {
/// The names of functions with checked accesses in every loaded module,
/// passed to the checks as constant pointers (never freed: one per
/// function).
std::mutex namesMutex;
std::deque<std::string> functionNames;

const char *keepFunctionName(StringRef function) {
  std::lock_guard<std::mutex> lock(namesMutex);
  functionNames.push_back(function.str());
  return functionNames.back().c_str();
}

std::optional<int32_t> specialRegister(StringRef name) {
  return StringSwitch<std::optional<int32_t>>(name)
      .Case("tid.x", kTidX).Case("tid.y", kTidY).Case("tid.z", kTidZ)
      .Case("ntid.x", kNtidX).Case("ntid.y", kNtidY).Case("ntid.z", kNtidZ)
      .Case("ctaid.x", kCtaidX).Case("ctaid.y", kCtaidY)
      .Case("ctaid.z", kCtaidZ).Case("nctaid.x", kNctaidX)
      .Case("nctaid.y", kNctaidY).Case("nctaid.z", kNctaidZ)
      .Case("laneid", kLaneId).Case("warpsize", kWarpSize)
      .Case("warpid", kWarpId)
      .Default(std::nullopt);
}

/// The slot intrinsic for an llvm.nvvm.* callee, if the emulator has one.
std::optional<IntrinsicKind> slotIntrinsic(Function *callee) {
  StringRef name = callee->getName();
  FunctionType *type = callee->getFunctionType();
  auto isF32x4 = [&](Type *t) {
    auto *s = dyn_cast<StructType>(t);
    return s && s->getNumElements() == 4 &&
           llvm::all_of(s->elements(), [](Type *e) { return e->isFloatTy(); });
  };
  if (name == "llvm.nvvm.mma.m16n8k16.row.col.f32.f32" &&
      type->getNumParams() == 10 && isF32x4(type->getReturnType()))
    return kMmaM16N8K16F16;
  if (name == "llvm.nvvm.mma.m16n8k16.row.col.bf16" &&
      type->getNumParams() == 10 && isF32x4(type->getReturnType()))
    return kMmaM16N8K16BF16;
  if (name == "llvm.nvvm.mma.m16n8k8.row.col.tf32" &&
      type->getNumParams() == 10 && isF32x4(type->getReturnType()))
    return kMmaM16N8K8TF32;
  if (name.consume_front("llvm.nvvm.ldmatrix.sync.aligned.m8n8.")) {
    // The overload suffix names the address space of the row addresses.
    if (!name.consume_back(".p3"))
      name.consume_back(".p0");
    return StringSwitch<std::optional<IntrinsicKind>>(name)
        .Case("x1.b16", kLdMatrixX1).Case("x2.b16", kLdMatrixX2)
        .Case("x4.b16", kLdMatrixX4).Case("x1.trans.b16", kLdMatrixX1Trans)
        .Case("x2.trans.b16", kLdMatrixX2Trans)
        .Case("x4.trans.b16", kLdMatrixX4Trans)
        .Default(std::nullopt);
  }
  if (name == "llvm.nvvm.f2tf32.rna")
    return kCvtRnaTF32;
  return std::nullopt;
}

bool isBarrier(Function *callee) {
  StringRef n = callee->getName();
  return n == "llvm.nvvm.barrier0" ||
         n == "llvm.nvvm.barrier.cta.sync.aligned.all" ||
         n == "llvm.nvvm.barrier.cta.sync.all";
}

class Rewriter {
public:
  Rewriter(Module &m, std::string &error) : m(m), error(error), ctx(m.getContext()) {}

  bool run();
  std::vector<std::pair<std::string, size_t>> kernels; // name, #params
  std::map<std::string, std::vector<size_t>> paramBytes; // by kernel
  std::vector<std::pair<std::string, uint64_t>> sharedGlobals;
  std::vector<std::pair<std::string, uint64_t>> otherGlobals;
  std::set<std::string> fiberKernels;

private:
  bool fail(const Twine &msg) {
    error = msg.str();
    return false;
  }
  bool rewriteCall(CallInst *call, Function *callee);
  void addChecks(Function &f);
  void addEntry(Function &kernel);
  std::pair<Value *, Value *> slotBuffers(Function &f);

  Module &m;
  std::string &error;
  LLVMContext &ctx;
  int32_t nextSite = 0;
  DenseMap<Function *, std::pair<Value *, Value *>> buffers;
  DenseSet<Function *> yields; // functions that reach a barrier/collective
};

std::pair<Value *, Value *> Rewriter::slotBuffers(Function &f) {
  auto it = buffers.find(&f);
  if (it != buffers.end())
    return it->second;
  IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
  auto *type = ArrayType::get(Type::getInt8Ty(ctx), kSlotBytes * kMaxSlots);
  AllocaInst *args = b.CreateAlloca(type, nullptr, "txemu.args");
  AllocaInst *results = b.CreateAlloca(type, nullptr, "txemu.results");
  args->setAlignment(Align(16));
  results->setAlignment(Align(16));
  return buffers[&f] = {args, results};
}

bool Rewriter::rewriteCall(CallInst *call, Function *callee) {
  StringRef name = callee->getName();
  Function &f = *call->getFunction();
  IRBuilder<> b(call);
  Type *i32 = b.getInt32Ty();
  Type *ptr = b.getPtrTy();
  if (StringRef reg = name; reg.consume_front("llvm.nvvm.read.ptx.sreg.")) {
    std::optional<int32_t> code = specialRegister(reg);
    if (!code)
      return fail("'" + f.getName() + "' reads the special register '%" +
                  reg + "', which the emulated device does not implement");
    FunctionCallee fn = m.getOrInsertFunction("__txemu_sreg", i32, i32);
    Value *v = b.CreateCall(fn, {b.getInt32(*code)});
    call->replaceAllUsesWith(b.CreateZExtOrTrunc(v, call->getType()));
    call->eraseFromParent();
    return true;
  }
  if (isBarrier(callee)) {
    if (call->arg_size() == 1) {
      auto *id = dyn_cast<ConstantInt>(call->getArgOperand(0));
      if (!id || !id->isZero())
        return fail("'" + f.getName() + "' uses '" + name +
                    "' with a barrier other than 0, which the emulated "
                    "device does not implement");
    }
    FunctionCallee fn =
        m.getOrInsertFunction("__txemu_barrier", b.getVoidTy(), i32);
    b.CreateCall(fn, {b.getInt32(nextSite++)});
    call->eraseFromParent();
    yields.insert(&f);
    return true;
  }
  std::optional<IntrinsicKind> kind = slotIntrinsic(callee);
  if (!kind)
    return fail("'" + f.getName() + "' calls '" + name +
                "', which the emulated device does not implement");
  if (call->arg_size() > kMaxSlots)
    return fail("internal error: too many operands for '" + name + "'");
  auto [args, results] = slotBuffers(f);
  const DataLayout &dl = m.getDataLayout();
  for (auto [i, arg] : llvm::enumerate(call->args())) {
    if (dl.getTypeStoreSize(arg->getType()) > kSlotBytes)
      return fail("internal error: an operand of '" + name +
                  "' does not fit a slot");
    b.CreateStore(arg, b.CreateConstGEP1_64(b.getInt8Ty(), args,
                                            i * kSlotBytes));
  }
  FunctionCallee fn = m.getOrInsertFunction(
      "__txemu_intrinsic", b.getVoidTy(), i32, i32, ptr, ptr);
  b.CreateCall(fn, {b.getInt32(*kind), b.getInt32(nextSite++), args, results});
  Type *type = call->getType();
  Value *value = nullptr;
  auto loadSlot = [&](Type *t, unsigned i) {
    return b.CreateLoad(t, b.CreateConstGEP1_64(b.getInt8Ty(), results,
                                                i * kSlotBytes));
  };
  if (auto *st = dyn_cast<StructType>(type)) {
    value = PoisonValue::get(st);
    for (unsigned i = 0; i < st->getNumElements(); ++i)
      value = b.CreateInsertValue(value, loadSlot(st->getElementType(i), i), i);
  } else if (!type->isVoidTy()) {
    value = loadSlot(type, 0);
  }
  if (value)
    call->replaceAllUsesWith(value);
  call->eraseFromParent();
  if (isWarpCollective(*kind))
    yields.insert(&f);
  return true;
}

void Rewriter::addChecks(Function &f) {
  const DataLayout &dl = m.getDataLayout();
  FunctionCallee check = m.getOrInsertFunction(
      "__txemu_check", Type::getVoidTy(ctx), PointerType::get(ctx, 0),
      Type::getInt64Ty(ctx), Type::getInt32Ty(ctx), PointerType::get(ctx, 0));
  SmallVector<std::tuple<Instruction *, Value *, Value *, AccessKind>> todo;
  auto bytes = [&](Type *t) {
    return ConstantInt::get(Type::getInt64Ty(ctx), dl.getTypeStoreSize(t));
  };
  for (Instruction &inst : instructions(f)) {
    if (auto *load = dyn_cast<LoadInst>(&inst))
      todo.push_back({load, load->getPointerOperand(), bytes(load->getType()),
                      AccessKind::Load});
    else if (auto *store = dyn_cast<StoreInst>(&inst))
      todo.push_back({store, store->getPointerOperand(),
                      bytes(store->getValueOperand()->getType()),
                      AccessKind::Store});
    else if (auto *rmw = dyn_cast<AtomicRMWInst>(&inst))
      todo.push_back({rmw, rmw->getPointerOperand(),
                      bytes(rmw->getValOperand()->getType()),
                      AccessKind::Atomic});
    else if (auto *cas = dyn_cast<AtomicCmpXchgInst>(&inst))
      todo.push_back({cas, cas->getPointerOperand(),
                      bytes(cas->getNewValOperand()->getType()),
                      AccessKind::Atomic});
    else if (auto *mem = dyn_cast<MemIntrinsic>(&inst)) {
      todo.push_back({mem, mem->getRawDest(), mem->getLength(),
                      AccessKind::Store});
      if (auto *transfer = dyn_cast<MemTransferInst>(mem))
        todo.push_back({mem, transfer->getRawSource(), mem->getLength(),
                        AccessKind::Load});
    }
  }
  if (todo.empty())
    return;
  Constant *name = ConstantExpr::getIntToPtr(
      ConstantInt::get(Type::getInt64Ty(ctx),
                       reinterpret_cast<uintptr_t>(
                           keepFunctionName(f.getName()))),
      PointerType::get(ctx, 0));
  for (auto [inst, pointer, size, kind] : todo) {
    if (isa<AllocaInst>(getUnderlyingObject(pointer, 0)))
      continue; // the thread's own stack
    IRBuilder<> b(inst);
    Value *address = b.CreateAddrSpaceCast(pointer, PointerType::get(ctx, 0));
    Value *length = b.CreateZExtOrTrunc(size, b.getInt64Ty());
    b.CreateCall(check, {address, length,
                         b.getInt32(static_cast<int32_t>(kind)), name});
  }
}

void Rewriter::addEntry(Function &kernel) {
  auto *type = FunctionType::get(Type::getVoidTy(ctx),
                                 {PointerType::get(ctx, 0)}, false);
  Function *entry = Function::Create(type, GlobalValue::ExternalLinkage,
                                     kernel.getName() + ".txemu", m);
  IRBuilder<> b(BasicBlock::Create(ctx, "entry", entry));
  SmallVector<Value *> args;
  for (auto [i, arg] : llvm::enumerate(kernel.args())) {
    Value *slot = b.CreateConstGEP1_64(b.getPtrTy(), entry->getArg(0), i);
    Value *address = b.CreateLoad(b.getPtrTy(), slot);
    args.push_back(b.CreateLoad(arg.getType(), address));
  }
  b.CreateCall(&kernel, args);
  b.CreateRetVoid();
}

bool Rewriter::run() {
  std::vector<Function *> kernelFns;
  for (Function &f : m) {
    if (f.getCallingConv() == CallingConv::PTX_Kernel)
      kernelFns.push_back(&f);
    f.setCallingConv(CallingConv::C);
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    f.removeFnAttr("tune-cpu");
  }
  // Intrinsic calls, then checks, so that the checks see the final IR.
  for (Function &f : llvm::make_early_inc_range(m)) {
    if (!f.isDeclaration() || f.use_empty())
      continue;
    StringRef name = f.getName();
    if (!name.starts_with("llvm.nvvm.")) {
      if (name.starts_with("llvm.") || name.starts_with("__txemu_"))
        continue;
      if (!sys::DynamicLibrary::SearchForAddressOfSymbol(name.str()))
        return fail("the kernel module calls the external function '" + name +
                    "', which the emulated device does not provide (compile "
                    "with math=polynomial for math functions)");
      continue;
    }
    for (User *user : llvm::make_early_inc_range(f.users())) {
      auto *call = dyn_cast<CallInst>(user);
      if (!call || call->getCalledFunction() != &f)
        return fail("'" + name + "' is used other than by a direct call");
      if (!rewriteCall(call, &f))
        return false;
    }
  }
  for (Function &f : m)
    for (Instruction &inst : instructions(f))
      if (auto *call = dyn_cast<CallBase>(&inst))
        call->setCallingConv(CallingConv::C);
  for (Function &f : m)
    if (!f.isDeclaration())
      addChecks(f);
  // Functions that may yield: those calling one that does.
  for (bool changed = true; changed;) {
    changed = false;
    for (Function &f : m) {
      if (f.isDeclaration() || yields.contains(&f))
        continue;
      for (Instruction &inst : instructions(f))
        if (auto *call = dyn_cast<CallBase>(&inst))
          if (Function *callee = call->getCalledFunction();
              callee && yields.contains(callee)) {
            yields.insert(&f);
            changed = true;
            break;
          }
    }
  }
  for (Function *k : kernelFns) {
    addEntry(*k);
    kernels.push_back({k->getName().str(), k->arg_size()});
    // The bytes of each parameter, which a graph capture copies.
    std::vector<size_t> &bytes = paramBytes[k->getName().str()];
    for (Argument &arg : k->args())
      bytes.push_back(m.getDataLayout().getTypeAllocSize(arg.getType()));
    if (yields.contains(k))
      fiberKernels.insert(k->getName().str());
  }
  // Globals become external so that the JIT finds them (their addresses are
  // regions the kernels may access).
  const DataLayout &dl = m.getDataLayout();
  for (GlobalVariable &g : m.globals()) {
    if (g.getName().starts_with("llvm."))
      continue;
    if (g.isDeclaration()) {
      if (g.getAddressSpace() == 3)
        return fail("the kernel module uses dynamic shared memory ('" +
                    g.getName() + "'), which the emulated device does not "
                    "implement");
      return fail("the kernel module uses the external global '" +
                  g.getName() + "'");
    }
    if (!g.hasName())
      g.setName("txemu.global");
    g.setLinkage(GlobalValue::ExternalLinkage);
    g.setVisibility(GlobalValue::DefaultVisibility);
    uint64_t size = dl.getTypeAllocSize(g.getValueType());
    (g.getAddressSpace() == 3 ? sharedGlobals : otherGlobals)
        .push_back({g.getName().str(), size});
  }
  return true;
}

std::once_flag initTargets;
} // namespace

KernelModule *tx::emulator::loadModule(const void *data, size_t size) {
  // Load errors are kept in the module and reported when one of its kernels
  // is looked up: the host code loads every module in its constructors,
  // before any call a host could return an error from.
  auto failed = [](const std::string &why) { return failedModule(why); };
  std::call_once(initTargets, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  });
  StringRef bytes(static_cast<const char *>(data), size);
  if (!bytes.starts_with("BC\xC0\xDE")) {
    return failed("the emulated device runs the kernel modules of "
                  "tx-to-nvvm{format=llvm} (NVVM LLVM IR bitcode); this image "
                  "is not bitcode (PTX or a cubin: format=isa/bin/fatbin is "
                  "for real GPUs)");
  }
  auto context = std::make_unique<LLVMContext>();
  Expected<std::unique_ptr<Module>> parsed =
      parseBitcodeFile(MemoryBufferRef(bytes, "kernels"), *context);
  if (!parsed) {
    return failed("cannot read the kernel bitcode: " +
                  toString(parsed.takeError()));
  }
  std::unique_ptr<Module> module = std::move(*parsed);
  auto builder = orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    return failed(toString(builder.takeError()));
  }
  auto layout = builder->getDefaultDataLayoutForTarget();
  if (!layout) {
    return failed(toString(layout.takeError()));
  }
  module->setDataLayout(*layout);
  module->setTargetTriple(builder->getTargetTriple());

  std::string error;
  Rewriter rewriter(*module, error);
  if (!rewriter.run())
    return failed(error);

  auto jit = orc::LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
  if (!jit) {
    return failed(toString(jit.takeError()));
  }
  orc::JITDylib &dylib = (*jit)->getMainJITDylib();
  orc::SymbolMap runtime;
  auto add = [&](const char *name, void *address) {
    runtime[(*jit)->mangleAndIntern(name)] = {
        orc::ExecutorAddr::fromPtr(address), JITSymbolFlags::Exported};
  };
  add("__txemu_sreg", reinterpret_cast<void *>(&__txemu_sreg));
  add("__txemu_barrier", reinterpret_cast<void *>(&__txemu_barrier));
  add("__txemu_intrinsic", reinterpret_cast<void *>(&__txemu_intrinsic));
  add("__txemu_check", reinterpret_cast<void *>(&__txemu_check));
  if (Error e = dylib.define(orc::absoluteSymbols(std::move(runtime)))) {
    return failed(toString(std::move(e)));
  }
  auto process = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      layout->getGlobalPrefix());
  if (!process) {
    return failed(toString(process.takeError()));
  }
  dylib.addGenerator(std::move(*process));
  if (Error e = (*jit)->addIRModule(
          orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    return failed(toString(std::move(e)));
  }

  auto result = std::make_unique<KernelModule>();
  result->jit = std::move(*jit);
  auto lookup = [&](const std::string &name) -> void * {
    auto address = result->jit->lookup(name);
    if (!address) {
      return failed(toString(address.takeError()));
    }
    return address->toPtr<void *>();
  };
  for (auto &[name, size] : rewriter.sharedGlobals) {
    char *address = static_cast<char *>(lookup(name));
    if (!address)
      return result.release();
    result->shared.push_back({address, size});
    addRegion(address, size, RegionKind::Shared, name);
    result->regions.push_back(address);
  }
  for (auto &[name, size] : rewriter.otherGlobals) {
    void *address = lookup(name);
    if (!address)
      return result.release();
    addRegion(address, size, RegionKind::ModuleGlobal, name);
    result->regions.push_back(address);
  }
  for (auto &[name, numParams] : rewriter.kernels) {
    void *entry = lookup(name + ".txemu");
    if (!entry)
      return result.release();
    auto kernel = std::make_unique<Kernel>();
    kernel->name = name;
    kernel->entry = reinterpret_cast<void (*)(void **)>(entry);
    kernel->numParams = numParams;
    kernel->paramBytes = rewriter.paramBytes[name];
    kernel->needsFibers = rewriter.fiberKernels.count(name);
    kernel->module = result.get();
    result->kernels[name] = std::move(kernel);
  }
  return result.release();
}

KernelModule *tx::emulator::failedModule(const std::string &why) {
  auto module = std::make_unique<KernelModule>();
  module->loadError = why;
  return module.release();
}

void tx::emulator::unloadModule(KernelModule *module) {
  if (!module)
    return;
  for (const void *r : module->regions)
    removeRegion(r);
  delete module;
}

Kernel *tx::emulator::getFunction(KernelModule *module, const char *name) {
  if (!module->loadError.empty()) {
    reportError(std::string("kernel '") + name + "': cannot load its module: " +
                module->loadError);
    return nullptr;
  }
  auto it = module->kernels.find(name);
  if (it == module->kernels.end()) {
    reportError(std::string("mgpuModuleGetFunction: the kernel module has no "
                            "kernel '") +
                name + "'");
    return nullptr;
  }
  return it->second.get();
}

void tx::emulator::resetSharedMemory(KernelModule *module) {
  for (auto [address, size] : module->shared)
    std::memset(address, 0xff, size);
}

extern "C" __attribute__((visibility("default"))) void
__txemu_check(const void *address, int64_t bytes, int32_t kind,
              const char *function) {
  checkAccess(address, static_cast<uint64_t>(bytes),
              static_cast<AccessKind>(kind), function);
}
