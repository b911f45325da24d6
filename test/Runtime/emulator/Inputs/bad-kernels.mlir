// Kernels that are wrong on purpose: the emulated device must report each
// (kernel, block, thread and what happened), never hang or return garbage.
module {
  // Threads 32-63 skip the barrier and exit while threads 0-31 wait at it.
  func.func @divergent_barrier(%buf: memref<64xf32>) -> memref<64xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
      %low = arith.cmpi ult, %tx, %c32 : index
      scf.if %low {
        gpu.barrier
      }
      %v = memref.load %buf[%tx] : memref<64xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %buf[%tx] : memref<64xf32>
      gpu.terminator
    }
    return %buf : memref<64xf32>
  }

  // 32 threads write a 16-element buffer: thread 16 is the first out of
  // bounds.
  func.func @out_of_bounds(%buf: memref<16xf32>) -> memref<16xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %one = arith.constant 1.0 : f32
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
      %p = memref.reinterpret_cast %buf to offset: [0], sizes: [32], strides: [1]
          : memref<16xf32> to memref<32xf32, strided<[1]>>
      memref.store %one, %p[%tx] : memref<32xf32, strided<[1]>>
      gpu.terminator
    }
    return %buf : memref<16xf32>
  }

  // A warp shuffle: not an instruction the emulated device implements.
  func.func @unsupported(%buf: memref<32xf32>) -> memref<32xf32> {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c1i = arith.constant 1 : i32
    %c32i = arith.constant 32 : i32
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
      %v = memref.load %buf[%tx] : memref<32xf32>
      %s, %ok = gpu.shuffle xor %v, %c1i, %c32i : f32
      memref.store %s, %buf[%tx] : memref<32xf32>
      gpu.terminator
    }
    return %buf : memref<32xf32>
  }

  // Host code that uses device memory after freeing it, or past its end:
  // freed device memory is held back (and filled with NaN bytes) for a
  // while, so each is reported, never a read of whatever is there.
  func.func @copy_after_free(%buf: memref<16xf32>) -> memref<16xf32> {
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %t2 = gpu.memcpy async [%t1] %d, %buf : memref<16xf32>, memref<16xf32>
    %t3 = gpu.dealloc async [%t2] %d : memref<16xf32>
    %t4 = gpu.memcpy async [%t3] %buf, %d : memref<16xf32>, memref<16xf32>
    gpu.wait [%t4]
    return %buf : memref<16xf32>
  }

  func.func @copy_past_end(%buf: memref<32xf32>) -> memref<32xf32> {
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %w = memref.reinterpret_cast %d to offset: [0], sizes: [32], strides: [1]
        : memref<16xf32> to memref<32xf32>
    %t2 = gpu.memcpy async [%t1] %buf, %w : memref<32xf32>, memref<32xf32>
    %t3 = gpu.dealloc async [%t2] %d : memref<16xf32>
    gpu.wait [%t3]
    return %buf : memref<32xf32>
  }

  func.func @memset_after_free(%buf: memref<16xf32>) -> memref<16xf32> {
    %z = arith.constant 0.0 : f32
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %t2 = gpu.dealloc async [%t1] %d : memref<16xf32>
    %t3 = gpu.memset async [%t2] %d, %z : memref<16xf32>, f32
    gpu.wait [%t3]
    return %buf : memref<16xf32>
  }

  func.func @kernel_after_free(%buf: memref<16xf32>) -> memref<16xf32> {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %t2 = gpu.dealloc async [%t1] %d : memref<16xf32>
    gpu.wait [%t2]
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
      %v = memref.load %d[%tx] : memref<16xf32>
      memref.store %v, %buf[%tx] : memref<16xf32>
      gpu.terminator
    }
    return %buf : memref<16xf32>
  }

  // Host code loading a device buffer: on a GPU the address is not
  // host-accessible (a crash or garbage); the emulated device keeps device
  // memory inaccessible outside its own work, so the load faults and is
  // reported.
  func.func @host_reads_device(%buf: memref<16xf32>) -> memref<16xf32> {
    %c0 = arith.constant 0 : index
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %t2 = gpu.memcpy async [%t1] %d, %buf : memref<16xf32>, memref<16xf32>
    gpu.wait [%t2]
    %v = memref.load %d[%c0] : memref<16xf32>
    memref.store %v, %buf[%c0] : memref<16xf32>
    %t3 = gpu.wait async
    %t4 = gpu.dealloc async [%t3] %d : memref<16xf32>
    gpu.wait [%t4]
    return %buf : memref<16xf32>
  }

  // Host code that reads a copy's destination (registered host memory)
  // before it synchronises: on a GPU the copy may not have run yet. The
  // emulated device runs the stream's work at the synchronisation, so the
  // read sees the memory before the copy (0), not the copied 7; the result
  // is filled with what was read.
  func.func @read_before_sync(%buf: memref<16xf32>) -> memref<16xf32> {
    %c0 = arith.constant 0 : index
    %seven = arith.constant 7.0 : f32
    %zero = arith.constant 0.0 : f32
    %h = memref.alloca() : memref<16xf32>
    memref.store %zero, %h[%c0] : memref<16xf32>
    %cast = memref.cast %h : memref<16xf32> to memref<*xf32>
    gpu.host_register %cast : memref<*xf32>
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %t2 = gpu.memset async [%t1] %d, %seven : memref<16xf32>, f32
    %t3 = gpu.memcpy async [%t2] %h, %d : memref<16xf32>, memref<16xf32>
    %v = memref.load %h[%c0] : memref<16xf32>
    gpu.wait [%t3]
    %t4 = gpu.wait async
    %r, %t5 = gpu.alloc async [%t4] () : memref<16xf32>
    %t6 = gpu.memset async [%t5] %r, %v : memref<16xf32>, f32
    %t7 = gpu.memcpy async [%t6] %buf, %r : memref<16xf32>, memref<16xf32>
    gpu.wait [%t7]
    return %buf : memref<16xf32>
  }
}
