// Types the runner cannot pass: an f64 layer, an i32 argument.
module {
  tx.layer @d : 8 -> 8, f64 {checkpoint = "d"}
  func.func @linear_f64(%x: memref<?x8xf64>) -> memref<?x8xf64> {
    %y = tx.linear @d(%x) : memref<?x8xf64> -> memref<?x8xf64>
    return %y : memref<?x8xf64>
  }
}
