// Container arguments (!tx.container) and an i1 argument, for
// containers.test and test/python/test_containers.py.
module {
  // read = 0: c[0] = x; read = 1: c[0] = c[0] + x. Returns c[0].
  func.func @step(%x: memref<?x8xf32>, %c: !tx.container, %read: i1) -> memref<?x8xf32> {
    %i = arith.constant 0 : index
    %r = scf.if %read -> (memref<?x8xf32>) {
      %old = tx.container_get %c[%i] : memref<?x8xf32>
      %s = tx.binary add %old, %x : memref<?x8xf32>, memref<?x8xf32> -> memref<?x8xf32>
      scf.yield %s : memref<?x8xf32>
    } else {
      scf.yield %x : memref<?x8xf32>
    }
    tx.container_set %c[%i] = %r : memref<?x8xf32>
    return %r : memref<?x8xf32>
  }

  // A strided view stored and read back: x[:, 2:6].
  func.func @strided(%x: memref<?x8xf32>, %c: !tx.container) -> memref<?x4xf32> {
    %i = arith.constant 1 : index
    %s = tx.slice %x dim 1 offset 2 size 4 : memref<?x8xf32> -> memref<?x4xf32, strided<[8, 1], offset: 2>>
    tx.container_set %c[%i] = %s : memref<?x4xf32, strided<[8, 1], offset: 2>>
    %g = tx.container_get %c[%i] : memref<?x4xf32>
    return %g : memref<?x4xf32>
  }

  // Entries read as what they are not.
  func.func @count(%x: memref<?x8xf32>, %c: !tx.container) -> memref<?x8xf32> {
    %i = arith.constant 0 : index
    tx.container_set %c[%i] = %x : memref<?x8xf32>
    %a, %b = tx.container_get %c[%i] : memref<?x8xf32>, memref<?x8xf32>
    return %a : memref<?x8xf32>
  }
  func.func @shape(%x: memref<?x8xf32>, %c: !tx.container) -> memref<?x4xf32> {
    %i = arith.constant 0 : index
    tx.container_set %c[%i] = %x : memref<?x8xf32>
    %a = tx.container_get %c[%i] : memref<?x4xf32>
    return %a : memref<?x4xf32>
  }
  func.func @dtype(%x: memref<?x8xf32>, %c: !tx.container) -> memref<?x8xf16> {
    %i = arith.constant 0 : index
    tx.container_set %c[%i] = %x : memref<?x8xf32>
    %a = tx.container_get %c[%i] : memref<?x8xf16>
    return %a : memref<?x8xf16>
  }
}
