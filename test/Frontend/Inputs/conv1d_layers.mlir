// Three projections of one input: @a and @b store their checkpoint weights
// transposed (GPT-2's Conv1D, [in, out]), @c as nn.Linear ([out, in]).
module {
  tx.layer @a : 16 -> 8, f32 bias {checkpoint = "a", tx.checkpoint_transposed}
  tx.layer @b : 16 -> 8, f32 bias {checkpoint = "b", tx.checkpoint_transposed}
  tx.layer @c : 16 -> 8, f32 bias {checkpoint = "c"}

  func.func @forward(%x: memref<?x16xf32>) -> (memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>) {
    %a = tx.linear @a(%x) : memref<?x16xf32> -> memref<?x8xf32>
    %b = tx.linear @b(%x) : memref<?x16xf32> -> memref<?x8xf32>
    %c = tx.linear @c(%x) : memref<?x16xf32> -> memref<?x8xf32>
    return %a, %b, %c : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>
  }
}
