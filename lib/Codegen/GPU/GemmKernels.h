//===- GemmKernels.h - the GEMM kernel generators of tx-to-nvvm --*- C++ -*-===//
//
// Private to the TxToGPU library. A linalg contraction on buffers becomes one
// gpu.launch built by one of two generators that share the matching and the
// cooperative shared-memory staging below:
//
//  * the SIMT kernel (TileContractions.cpp): any element types, each thread
//    accumulates an RM x RN register tile with the op's own body (FMAs);
//  * the tensor-core kernel (MmaGemmKernel.cpp): f16/bf16 operands (or f32
//    as TF32 when asked) with an f32 accumulator, each warp accumulates a
//    WM x WN tile with `mma.sync` (m16n8k16, or m16n8k8 for TF32), 16-bit
//    fragments loaded with `ldmatrix`.
//
//===----------------------------------------------------------------------===//

#ifndef TX_LIB_CONVERSION_TXTOGPU_GEMMKERNELS_H
#define TX_LIB_CONVERSION_TXTOGPU_GEMMKERNELS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::tx::gpu_gemm {

/// The loop dimensions of a contraction the generators handle.
struct GemmDims {
  std::optional<unsigned> batch;
  unsigned m, n, k;
};

/// The dimensions of `op` when it is a contraction on buffers with one M, N
/// and K dimension (and at most one batch dimension) and projected-permutation
/// indexing maps; failure for every other op.
FailureOr<GemmDims> matchGemm(linalg::LinalgOp op);

/// The tensor-core instruction a contraction maps to.
enum class MmaKind {
  F16,  ///< mma.sync m16n8k16, f16 x f16 + f32
  BF16, ///< mma.sync m16n8k16, bf16 x bf16 + f32
  TF32, ///< mma.sync m16n8k8, f32 operands rounded to tf32, + f32
};

/// Whether `op`'s body is exactly `acc + widen(a) * widen(b)` (floats; the
/// widening extf optional): what mma.sync computes, and what can be split
/// over K into partial sums added together.
bool isMultiplyAccumulate(linalg::LinalgOp op);

/// The tensor-core kind for `op`: A and B both f16 or both bf16 (or both f32
/// when `allowTF32`), C f32, and a body that is exactly `acc + a * b` after
/// widening the operands. std::nullopt (with `why` set) otherwise.
std::optional<MmaKind> matchMma(linalg::LinalgOp op, bool allowTF32,
                                std::string &why);

/// Testing only: deliberately wrong kernels, to show that executing them
/// (the emulated device) catches such bugs.
enum class TestBreak {
  None,
  DropBarrier,    // no barrier between staging the shared tiles and reading
  FragmentOffset, // tensor cores: accumulators stored one column off
};

struct SimtTiling {
  int64_t bm = 64, bn = 64, bk = 16, rm = 4, rn = 4;
  TestBreak testBreak = TestBreak::None;
  int64_t threadsM() const { return bm / rm; }
  int64_t threadsN() const { return bn / rn; }
  int64_t threads() const { return threadsM() * threadsN(); }
};

struct MmaTiling {
  int64_t bm = 64, bn = 64, bk = 32, wm = 32, wn = 32;
  TestBreak testBreak = TestBreak::None;
  int64_t warpsM() const { return bm / wm; }
  int64_t warpsN() const { return bn / wn; }
  int64_t threads() const { return 32 * warpsM() * warpsN(); }
};

/// Builders (`op` is replaced by the caller after the kernel is built).
/// `splitKBlocks` > 0 enables split-K towards that many blocks (see
/// KernelBuilderBase::SplitK); the caller checks that `op` allows it.
void buildSimtGemm(linalg::LinalgOp op, GemmDims dims, SimtTiling tiling,
                   int64_t splitKBlocks, RewriterBase &rewriter);
void buildMmaGemm(linalg::LinalgOp op, GemmDims dims, MmaKind kind,
                  MmaTiling tiling, int64_t splitKBlocks,
                  RewriterBase &rewriter);

/// Index arithmetic and the memory accesses both kernels share.
class KernelBuilderBase {
public:
  KernelBuilderBase(linalg::LinalgOp op, GemmDims dims, RewriterBase &rewriter)
      : op(op), dims(dims), b(rewriter), loc(op.getLoc()) {}

protected:
  Value cst(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, x, cst(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, cst(y));
  }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }

  /// Indices into `operand` for the loop point `loopValues` (one value per
  /// loop dimension, null where the operand does not depend on it).
  SmallVector<Value> indicesOf(OpOperand &operand, ArrayRef<Value> loopValues);

  /// `if (inBounds) load operand[loopValues] else 0`.
  Value guardedLoad(OpOperand &operand, Value inBounds,
                    ArrayRef<Value> loopValues);

  /// `if (inBounds) load memref[indices] else 0`.
  Value guardedLoadAt(Value memref, Value inBounds, ValueRange indices);

  /// `if (inBounds) load() else 0` for a value of `type` (scalar or vector).
  Value guarded(Value inBounds, Type type,
                function_ref<Value(OpBuilder &, Location)> load);

  /// The zero of `type` (scalar or vector).
  static Value zero(OpBuilder &builder, Location loc, Type type) {
    return arith::ConstantOp::create(
        builder, loc, cast<TypedAttr>(builder.getZeroAttr(type)));
  }

  /// A subview of `operand` at loop point `start` (a value for every loop
  /// dimension the operand uses) that is `count` long, with stride `step`,
  /// along the memref dimension of loop dimension `stepDim` (returned in
  /// `viewDim`) and 1 long elsewhere.
  Value steppedView(OpOperand &operand, ArrayRef<Value> start,
                    unsigned stepDim, int64_t step, int64_t count,
                    unsigned &viewDim);

  /// `if (inBounds) store value into operand[loopValues]`.
  void guardedStore(Value value, OpOperand &operand, Value inBounds,
                    ArrayRef<Value> loopValues);

  /// The loop point of output element (row, col) of batch `batchId`.
  SmallVector<Value> outputPoint(Value row, Value col, Value batchId);

  /// Split-K: when the output tiles alone would give few blocks (decode:
  /// one token row, a few N tiles), each output tile's K tiles are spread
  /// over `splits` blocks (grid z = batch x splits) of `perSplit` K tiles;
  /// every block adds its partial sums into C with atomics and C is not
  /// read (so C + the sum of the partials is what linalg's accumulation
  /// asks for). Off (`enabled` false): one block per output tile, C read
  /// into the accumulators and stored back.
  struct SplitK {
    bool enabled = false;
    Value splits, perSplit; // host values, captured by the launch
  };
  /// Host side: fills `s` for about `targetBlocks` blocks and returns the
  /// grid's z size.
  Value planSplitK(SplitK &s, int64_t targetBlocks, Value gridX, Value gridY,
                   Value batchSize, Value kTiles);

  /// The problem and the grid of a kernel with `bm` x `bn` output tiles and
  /// `bk`-deep K slices, computed on the host before `op`.
  struct Launch {
    Value mSize, nSize, kSize, kTiles;
    Value gridX, gridY, gridZ; // N tiles, M tiles, batch x K splits
    SplitK splitK;
  };
  Launch planLaunch(int64_t bm, int64_t bn, int64_t bk, int64_t splitKBlocks);
  /// Kernel side: the batch and the K tiles [kBegin, kEnd) of block z.
  void decodeGridZ(const SplitK &s, Value z, Value kTiles, Value &batchId,
                   Value &kBegin, Value &kEnd);

  /// A GEMM kernel's gpu.launch (see launchKernel).
  struct Kernel : Launch {
    Value one; // host constant 1, also captured by the kernel
    gpu::LaunchOp launch;
    Value aShared, bShared;      // the A and B tiles in workgroup memory
    Value batchId, kBegin, kEnd; // of the block (decodeGridZ)
    Value m0, n0;                // the block's first output row and column
  };
  /// The launch both kernels make before `op`: the grid of
  /// planLaunch(bm, bn, bk, splitKBlocks), blocks of `threadsX` x
  /// `threadsY` threads, and two workgroup buffers of `aTile`/`bTile`
  /// shapes and `aElement`/`bElement` types. Leaves the insertion point at
  /// the start of the kernel, after the block's batch, K range and output
  /// corner.
  Kernel launchKernel(int64_t bm, int64_t bn, int64_t bk, int64_t splitKBlocks,
                      int64_t threadsX, int64_t threadsY,
                      ArrayRef<int64_t> aTile, Type aElement,
                      ArrayRef<int64_t> bTile, Type bElement);
  /// The accumulator's initial value for output point `point`: C's value
  /// (zero out of bounds), or zero under split-K.
  Value initialAccumulator(const SplitK &s, OpOperand &c, Value inBounds,
                           ArrayRef<Value> point);
  /// Writes the accumulator: a store, or an atomic add under split-K.
  void writeAccumulator(const SplitK &s, Value value, OpOperand &c,
                        Value inBounds, ArrayRef<Value> point);

  /// How a staged tile is laid out in shared memory.
  enum class SharedLayout { KMajor, RowMajor }; // [kk][row] or [row][kk]

  /// Copies the tile of `operand` (rows along loop dim `rowDim`, `tileRows`
  /// of them from `rowBase`, bounded by `rowSize`; `tileK` of the K slice
  /// from `k0`) into `shared`, every thread (`tid` of `threads`) taking
  /// `tileRows * tileK / threads` elements. Consecutive threads take
  /// consecutive elements of whichever of the two dimensions is innermost in
  /// the operand, so the global loads coalesce; out-of-bounds elements are
  /// zero. `convert`, when given, maps each value before it is stored.
  void stageTile(OpOperand &operand, Value shared, SharedLayout layout,
                 unsigned rowDim, int64_t tileRows, int64_t tileK,
                 int64_t threads, Value rowBase, Value rowSize, Value k0,
                 Value kSize, Value tid, Value batchId,
                 function_ref<Value(Value)> convert = nullptr);

  linalg::LinalgOp op;
  GemmDims dims;
  RewriterBase &b;
  Location loc;
};

} // namespace mlir::tx::gpu_gemm

#endif // TX_LIB_CONVERSION_TXTOGPU_GEMMKERNELS_H
