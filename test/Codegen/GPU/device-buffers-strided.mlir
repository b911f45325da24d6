// Strided buffers cannot be copied to and from the device as one block:
// tx-gpu-device-buffers runs such a function host-mapped, with a warning at
// the function or the copy (the function is not printed as a note).
// RUN: tx-opt %s --tx-gpu-device-buffers -split-input-file -verify-diagnostics | FileCheck %s

// A strided argument.
// CHECK-LABEL: func.func @strided_argument
// CHECK: gpu.host_register
// expected-warning @+1 {{tx-gpu-device-buffers: function 'strided_argument' runs host-mapped (argument #0: it is strided)}}
func.func @strided_argument(
    %a: memref<16xf32, strided<[2]>>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<16xf32, strided<[2]>>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%tx] : memref<16xf32, strided<[2]>>
    gpu.terminator
  }
  return
}

// -----

// A copy between strided views of buffers.
// CHECK-LABEL: func.func @strided_copy
// CHECK: gpu.host_register
func.func @strided_copy(%a: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %t = memref.alloc() : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<32xf32>
    memref.store %v, %t[%tx] : memref<32xf32>
    gpu.terminator
  }
  %src = memref.subview %t[0] [16] [2] : memref<32xf32> to memref<16xf32, strided<[2]>>
  %dst = memref.subview %a[1] [16] [2] : memref<32xf32> to memref<16xf32, strided<[2], offset: 1>>
  // expected-warning @+1 {{tx-gpu-device-buffers: function 'strided_copy' runs host-mapped (argument #0: it is copied strided)}}
  memref.copy %src, %dst : memref<16xf32, strided<[2]>> to memref<16xf32, strided<[2], offset: 1>>
  memref.dealloc %t : memref<32xf32>
  return
}
