// The projections read %s = x[(T - 4) * 1000000 : +4, :], a view that is in
// bounds only when T >= 4, and both run only under that condition (two
// scf.ifs). tx-fusion hoists the merged projection above the first scf.if:
// with T = 2 it reads far outside %x and the fused program segfaults, while
// the unfused one returns %z twice.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @q_proj : 32 -> 8, f32
  tx.layer @k_proj : 32 -> 8, f32
  func.func @forward(%x: memref<?x32xf32>, %z: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %big = arith.constant 1000000 : index
    %t = memref.dim %x, %c0 : memref<?x32xf32>
    %tm = arith.subi %t, %c4 : index
    %off = arith.muli %tm, %big : index
    %ok = arith.cmpi sge, %t, %c4 : index
    %s = memref.subview %x[%off, 0] [4, 32] [1, 1] : memref<?x32xf32> to memref<4x32xf32, strided<[32, 1], offset: ?>>
    %q = scf.if %ok -> memref<4x8xf32> {
      %r = tx.linear @q_proj(%s) : memref<4x32xf32, strided<[32, 1], offset: ?>> -> memref<4x8xf32>
      scf.yield %r : memref<4x8xf32>
    } else {
      scf.yield %z : memref<4x8xf32>
    }
    %k = scf.if %ok -> memref<4x8xf32> {
      %r = tx.linear @k_proj(%s) : memref<4x32xf32, strided<[32, 1], offset: ?>> -> memref<4x8xf32>
      scf.yield %r : memref<4x8xf32>
    } else {
      scf.yield %z : memref<4x8xf32>
    }
    return %q, %k : memref<4x8xf32>, memref<4x8xf32>
  }
}
