// tx.copy between overlapping row views of one buffer (x[1:] = x[:-1]).
// tx-to-linalg lowers every tx.copy in its row form (buildCopy, RowLoops.cpp:
// no overlap check, unlike the _into ops' rowsCannotOverlap), and
// tx-to-cpu{threads=N} runs those rows in parallel blocks: on one thread
// each row copies the row just written (every row ends up row 0), on two
// threads each block starts again from the original row before it (at 2000
// tokens 251 of the 2000 rows equal row 0), a race between the blocks
// besides.
module {
  func.func @copyrows(%x: memref<?x64xf32>) -> memref<?x64xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = memref.dim %x, %c0 : memref<?x64xf32>
    %n = arith.subi %t, %c1 : index
    %a = memref.subview %x[0, 0] [%n, 64] [1, 1] : memref<?x64xf32> to memref<?x64xf32, strided<[64, 1]>>
    %b = memref.subview %x[1, 0] [%n, 64] [1, 1] : memref<?x64xf32> to memref<?x64xf32, strided<[64, 1], offset: 64>>
    tx.copy %a into %b : memref<?x64xf32, strided<[64, 1]>>, memref<?x64xf32, strided<[64, 1], offset: 64>>
    %r = tx.unary neg %x : memref<?x64xf32> -> memref<?x64xf32>
    return %r : memref<?x64xf32>
  }
}
