//===- CPUPasses.td - passes of the tx CPU code generation -*- tablegen -*-===//
//
// The passes of lib/Codegen/CPU, run by the tx-to-cpu pipeline after
// tx-to-linalg: GEMM tiling and vectorisation, and the two passes that keep
// the lowering's compile time linear in the number of ops.
//
//===----------------------------------------------------------------------===//

#ifndef TX_CODEGEN_CPUPASSES
#define TX_CODEGEN_CPUPASSES

include "mlir/Pass/PassBase.td"

def TxCpuTileAndVectorize : Pass<"tx-cpu-tile-and-vectorize", "::mlir::ModuleOp"> {
  let summary = "Tile and vectorise linalg GEMMs and static linalg ops for CPU";
  let description = [{
    Blocks every `linalg.matmul` for the cache by `gemm-cache-tile` (N, K):
    loops over weight blocks of at most N x K (the largest that divide the
    weight, so every block is static), with every token row passing over a
    block while it is in cache; inside them, tiles it by `gemm-tile`
    (M, N, K) with scf.for loops, peels the token loop so the main tiles are
    static, then vectorises every linalg op with a static shape (GEMM tiles
    become `vector.contract`, lowered to outer products / FMAs). A call
    with at least `gemm-pack-min-tokens` rows packs the weight instead, in
    BLIS's order: per N block, the weight block transposed once into
    contiguous [K, n] panels of the packed tile's n columns; per block of
    `gemm-token-block` rows, per K block, per panel, the rows (read in
    place) multiplied by `gemm-packed-tile` tiles (the panel's K block stays
    in L1, the output rows in cache across the K blocks). A call with fewer rows multiplies them by the
    weight vectorised along K (`gemm-few-token-tile`: per tile of outputs,
    one vector accumulator each, summed by halves after the K loop), where
    K is a multiple of the lanes (where AliasAnalysis cannot prove the
    output disjoint from the operands, their address ranges decide at run
    time); else by the register tiles. With
    `parallel-blocks`, the N cache blocks are an `scf.forall` (tasks); a
    GEMM with fewer than 8 of them is split on its token count instead, its
    packed token blocks the `scf.forall` and, with too few tokens to pack,
    its N blocks. The
    sums are in the same order whatever N or the thread count. Linalg ops with
    dynamic shapes stay for `convert-linalg-to-loops`. Implemented as a
    transform-dialect script generated per class of GEMM shapes.
  }];
  let options = [
    ListOption<"gemmTile", "gemm-tile", "int64_t",
               "GEMM register tile sizes M,N,K (default 8,8,8)">,
    ListOption<"gemmCacheTile", "gemm-cache-tile", "int64_t",
               "GEMM cache block of the weight N,K (default 256,256; 0: "
               "that dimension is not blocked)">,
    ListOption<"gemmPackedTile", "gemm-packed-tile", "int64_t",
               "Register tile sizes M,N,K of packed GEMMs (default 8,32,8)">,
    Option<"parallelBlocks", "parallel-blocks", "bool", /*default=*/"false",
           "Make the loop over a GEMM's N cache blocks an scf.forall (run on "
           "threads by tx-to-cpu{threads=N}); with fewer than 8 N blocks, "
           "the loop over its packed token blocks instead">,
    Option<"gemmPackMinTokens", "gemm-pack-min-tokens", "int64_t",
           /*default=*/"112",
           "Pack the GEMM weight (each N block transposed once) when a "
           "call has at least this many tokens (0: never)">,
    Option<"gemmTokenBlock", "gemm-token-block", "int64_t",
           /*default=*/"128",
           "Token rows per block of a packed GEMM: the weight block is "
           "packed once, the token rows go over it in blocks of this many "
           "(0: all rows in one block)">,
    ListOption<"gemmFewTokenTile", "gemm-few-token-tile", "int64_t",
               "Tile rows,cols,lanes of the GEMMs of calls with fewer than "
               "gemm-pack-min-tokens rows, vectorised along K (default "
               "4,4,16; 0,0,0: the direct GEMM's register tiles instead)">,
    Option<"testUnsafeHoist", "test-unsafe-hoist", "bool", /*default=*/"false",
           "Testing only, UNSAFE: the accumulator hoisting ignores the own "
           "effects of ops with regions (a linalg op reading the buffer), so "
           "that the differential tests can show they catch it">
  ];
  let dependentDialects = [
    "::mlir::transform::TransformDialect", "::mlir::vector::VectorDialect",
    "::mlir::scf::SCFDialect", "::mlir::linalg::LinalgDialect"
  ];
}

def TxSplitDeallocs : Pass<"tx-split-deallocs", "::mlir::ModuleOp"> {
  let summary = "Split bufferization.dealloc ops of distinct allocations";
  let description = [{
    Every `bufferization.dealloc` splits into one op per memref that is the
    result of its own `memref.alloc` / `memref.alloca`, or of a `func.call`
    whose callee returns fresh `memref.alloc`s in that position (through
    views and the base buffer of `memref.extract_strided_metadata`; distinct
    allocations cannot alias each other), each with the same retained
    values, their updated conditions or-ed; the other memrefs stay together.
    `buffer-deallocation-simplification` does the same split, but with an
    alias query per pair of memrefs: the ownership-based deallocation frees a
    function's buffers in one op at its end, so that cost grew with the
    square of the op count (65 s of a 10k-op chain). Run it between
    `ownership-based-buffer-deallocation` and the simplification. A module
    pass: it reads the callees' bodies.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def TxCpuCollapseParallelLoops
    : Pass<"tx-cpu-collapse-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Collapse multi-dimensional scf.parallel loops to one dimension";
  let description = [{
    Every `scf.parallel` of several dimensions (the row loops over the
    leading dimensions of a `[tokens, heads, head_dim]` buffer) becomes one
    loop over the product of their trip counts (upstream's
    `collapseParallelLoops`). `async-parallel-for` then always takes its
    one-dimensional dispatch: for a loop with statically known inner trip
    counts, its block-aligned dispatch (LLVM 22) rounds the block size up to
    a multiple of them but keeps the block count of the unrounded size, and
    its compute function wraps the extra blocks' indices back onto the first
    iterations, which then run twice: an in-place op on such rows (`x.view(
    b, T, h, d).mul_(2)`) applied twice to some of them (tx-to-cpu{threads=2}
    at 17-31 tokens with 8 heads). tx-to-cpu runs it before
    async-parallel-for when threads > 1.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TxCpuSplitOddBf16Vectors
    : Pass<"tx-cpu-split-odd-bf16-vectors", "::mlir::func::FuncOp"> {
  let summary = "Move bf16 vectors of 8k+1 lanes as 8k lanes and one";
  let description = [{
    LLVM 22's X86 back end aborts ("Do not know how to soft promote this
    operator's operand") on a load or store of a vector of 8k+1 bf16 lanes
    (9, 17, 25, ...) when the CPU has avx512bf16: a bf16 row or static op
    whose last dimension is such a size crashed tx-run. Every 1-D
    `vector.load` / `vector.store` and in-bounds, unmasked
    `vector.transfer_read` / `vector.transfer_write` of such a vector becomes
    two, of its first 8k lanes and of its last one, joined by
    `vector.insert_strided_slice` (split by `vector.extract_strided_slice`).
    tx-to-cpu runs it before convert-vector-to-llvm.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def TxLowerStructuredControlFlow
    : Pass<"tx-lower-structured-control-flow", "::mlir::func::FuncOp"> {
  let summary = "Lower scf to cf, the last loop of a block first";
  let description = [{
    Applies upstream's SCF-to-ControlFlow patterns (as `convert-scf-to-cf`
    does), visiting ops from the end of each block to its start. Lowering a
    loop splits its block; visited first to last, each split moved every op
    after the loop, which made the lowering quadratic in the number of
    loops of a function (21 s for a 10k-op chain, linear now). An scf op
    the patterns do not lower is an error.
  }];
  let dependentDialects = ["::mlir::cf::ControlFlowDialect",
                           "::mlir::arith::ArithDialect"];
}

def TxCpuApproximateMath : Pass<"tx-cpu-approximate-math"> {
  let summary = "Vectorised polynomial exp, tanh and erf on f32 vectors";
  let description = [{
    `math.exp`, `math.tanh` and `math.erf` whose result is a vector of f32
    (silu, gelu, gelu_tanh and exp rows, vectorised softmax) become MLIR's
    polynomial approximations (upstream
    `populateMathPolynomialApproximationPatterns`), computed in vector
    registers: without this pass LLVM scalarises them into one libm call per
    lane. Scalar math keeps the libm path. The approximations flush results
    below 2^-126 to zero; their accuracy against the exactly rounded result
    is measured by test/Execution/approximate-math-ulp.test. tx-to-cpu runs
    it unless `math=libm`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def TxOutlineIdenticalLayers
    : Pass<"tx-outline-identical-layers", "::mlir::ModuleOp"> {
  let summary = "Compile identical layers once: outline them into one function";
  let description = [{
    Runs after tx-to-linalg. In every single-block function, constants and
    `memref.get_global` ops move to the entry (they are pure and have no
    operands); the period of the function's `get_global` types (one layer's
    weights) gives a segment length, and the longest run of top-level ops
    repeating with that length gives the segments. Each segment is proved
    identical to the first of its class with `OperationEquivalence`
    (locations ignored): values defined inside map to each other, values
    from outside map consistently (one function) to the segment's inputs,
    so weights (get_global results) match by type; constants from outside
    must be equal, except those only passed to calls (runtime-check
    numbers), which become arguments. A class of at least two segments is
    outlined into `func.func private @<function>_layer` (inputs and weights
    as arguments, the values used after the segment as results, which must
    be distinct fresh allocations) and every segment becomes a `func.call`.
    Segments that are not proved identical stay as they are.
  }];
  let options = [
    ListOption<"testDisableChecks", "test-disable-checks", "std::string",
               "Testing only, UNSAFE: checks to skip, to show that the tests "
               "catch what follows: `constants` (constants may differ, the "
               "first segment's are used), `same-operands` (an operand that "
               "is the same value in both segments is not mapped)">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // TX_CODEGEN_CPUPASSES
