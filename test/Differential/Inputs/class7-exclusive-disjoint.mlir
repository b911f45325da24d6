// Class 7 (false refusals; the fusion must stay correct when it takes
// them): a write after k in the branch that excludes v, and a write to a
// static slice of %y disjoint from the slice q and o read. Wrong with
// test-disable-checks=input-stability only where a write really is between.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @k : 32 -> 8, f32
  tx.layer @v : 32 -> 8, f32
  tx.layer @q : 32 -> 8, f32
  tx.layer @o : 32 -> 8, f32
  tx.layer @w : 32 -> 8, f32
  func.func @forward(%x: memref<?x32xf32>, %fs: f32, %y: memref<?x64xf32>) -> (memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>) {
    %zero = arith.constant 0.0 : f32
    %h = arith.constant -1.0 : f32
    %flag = arith.cmpf ogt, %fs, %zero : f32
    %r:2 = scf.if %flag -> (memref<?x8xf32>, memref<?x8xf32>) {
      %a = tx.linear @k(%x) : memref<?x32xf32> -> memref<?x8xf32>
      tx.binary_into mul %x, %h into %x : memref<?x32xf32>, f32, memref<?x32xf32>
      scf.yield %a, %a : memref<?x8xf32>, memref<?x8xf32>
    } else {
      %b = tx.linear @v(%x) : memref<?x32xf32> -> memref<?x8xf32>
      scf.yield %b, %b : memref<?x8xf32>, memref<?x8xf32>
    }
    %lo = tx.slice %y dim 1 offset 0 size 32 : memref<?x64xf32> -> memref<?x32xf32, strided<[64, 1]>>
    %hi = tx.slice %y dim 1 offset 32 size 32 : memref<?x64xf32> -> memref<?x32xf32, strided<[64, 1], offset: 32>>
    %mid = tx.slice %y dim 1 offset 16 size 32 : memref<?x64xf32> -> memref<?x32xf32, strided<[64, 1], offset: 16>>
    %c = tx.linear @q(%lo) : memref<?x32xf32, strided<[64, 1]>> -> memref<?x8xf32>
    tx.unary_into neg %hi into %hi : memref<?x32xf32, strided<[64, 1], offset: 32>>, memref<?x32xf32, strided<[64, 1], offset: 32>>
    %d = tx.linear @o(%lo) : memref<?x32xf32, strided<[64, 1]>> -> memref<?x8xf32>
    tx.unary_into neg %mid into %mid : memref<?x32xf32, strided<[64, 1], offset: 16>>, memref<?x32xf32, strided<[64, 1], offset: 16>>
    %e = tx.linear @w(%lo) : memref<?x32xf32, strided<[64, 1]>> -> memref<?x8xf32>
    return %r#0, %r#1, %c, %d, %e : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>
  }
}
