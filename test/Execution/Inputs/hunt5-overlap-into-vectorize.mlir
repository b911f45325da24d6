// tx.unary_into whose input and target are overlapping views of one buffer
// (rows 0..5 written into rows 1..6: x[1:7] = -x[0:6], out= a partly
// overlapping view). tx-to-linalg keeps such an op in its sequential linalg
// form (rowsCannotOverlap, ElementwisePatterns.cpp); the static 6x200 shape
// is then tiled and vectorised (TileAndVectorize), which reads the input
// rows before writing the target rows (numpy's x[1:7] = -x[0:6].copy()),
// while tx-to-cpu{vectorize=false} runs the loops element by element (each
// row reads the row just written: x[i+1] = -x[i] in turn). The two
// lowerings give different numbers.
module {
  func.func @rows(%x: memref<?x200xf32>) -> memref<?x200xf32> {
    %a = tx.slice %x dim 0 offset 0 size 6 : memref<?x200xf32> -> memref<6x200xf32, strided<[200, 1]>>
    %b = tx.slice %x dim 0 offset 1 size 6 : memref<?x200xf32> -> memref<6x200xf32, strided<[200, 1], offset: 200>>
    tx.unary_into neg %a into %b : memref<6x200xf32, strided<[200, 1]>>, memref<6x200xf32, strided<[200, 1], offset: 200>>
    %r = tx.unary neg %x : memref<?x200xf32> -> memref<?x200xf32>
    return %r : memref<?x200xf32>
  }
}
