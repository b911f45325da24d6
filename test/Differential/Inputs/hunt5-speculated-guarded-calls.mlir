// q_proj and k_proj are called only under `if x.shape[-1] == 32` (two scf.ifs
// on the same condition); %x has a dynamic last dimension. tx-fusion puts
// the merged projection at the nearest common dominator, before the first
// scf.if, where it runs unconditionally: with 4 features its in_features
// runtime check fails although the original never calls a layer.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @q_proj : 32 -> 8, f32
  tx.layer @k_proj : 32 -> 8, f32
  func.func @forward(%x: memref<?x?xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %t = memref.dim %x, %c0 : memref<?x?xf32>
    %d = memref.dim %x, %c1 : memref<?x?xf32>
    %ok = arith.cmpi eq, %d, %c32 : index
    %q = scf.if %ok -> memref<?x8xf32> {
      %r = tx.linear @q_proj(%x) : memref<?x?xf32> -> memref<?x8xf32>
      scf.yield %r : memref<?x8xf32>
    } else {
      %z = memref.alloc(%t) : memref<?x8xf32>
      %zero = arith.constant 0.0 : f32
      linalg.fill ins(%zero : f32) outs(%z : memref<?x8xf32>)
      scf.yield %z : memref<?x8xf32>
    }
    %k = scf.if %ok -> memref<?x8xf32> {
      %r = tx.linear @k_proj(%x) : memref<?x?xf32> -> memref<?x8xf32>
      scf.yield %r : memref<?x8xf32>
    } else {
      %z = memref.alloc(%t) : memref<?x8xf32>
      %one = arith.constant 1.0 : f32
      linalg.fill ins(%one : f32) outs(%z : memref<?x8xf32>)
      scf.yield %z : memref<?x8xf32>
    }
    return %q, %k : memref<?x8xf32>, memref<?x8xf32>
  }
}
