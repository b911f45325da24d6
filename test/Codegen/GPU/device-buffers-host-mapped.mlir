// tx-gpu-device-buffers never falls back to host-mapped memory silently: a
// function whose host code needs a buffer on the host gets a warning naming
// the buffer and why, one that manages device memory itself a remark; both
// then run host-mapped (gpu.host_register). memory=host-mapped (the pass
// tx-gpu-host-register) is the explicit choice and says nothing.
// RUN: tx-opt %s --tx-gpu-device-buffers -split-input-file -verify-diagnostics | FileCheck %s
// RUN: sed 's#// expected-.*##' %s | tx-opt --tx-gpu-host-register -split-input-file 2>&1 | FileCheck %s --check-prefix=EXPLICIT
// EXPLICIT-NOT: {{warning|remark}}
// EXPLICIT: gpu.host_register
// EXPLICIT-NOT: {{warning|remark}}

// CHECK-LABEL: func.func @reads_argument_on_host
// CHECK: gpu.host_register
func.func @reads_argument_on_host(%a: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<16xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%tx] : memref<16xf32>
    gpu.terminator
  }
  // expected-warning @+1 {{tx-gpu-device-buffers: function 'reads_argument_on_host' runs host-mapped (argument #0: host code reads or writes it ('memref.load')): its host buffers are registered with the driver and its kernels read them over the bus at every call; memory=host-mapped makes that the explicit choice}}
  %x = memref.load %a[%c0] : memref<16xf32>
  return %x : f32
}

// -----

// CHECK-LABEL: func.func @reads_activation_on_host
// CHECK: gpu.host_register
func.func @reads_activation_on_host(%a: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  // expected-note @+1 {{the buffer}}
  %t = memref.alloc() : memref<16xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<16xf32>
    memref.store %v, %t[%tx] : memref<16xf32>
    gpu.terminator
  }
  // expected-warning @+1 {{function 'reads_activation_on_host' runs host-mapped (a buffer it allocates (note): host code reads or writes it ('memref.load'))}}
  %x = memref.load %t[%c0] : memref<16xf32>
  memref.dealloc %t : memref<16xf32>
  return %x : f32
}

// -----

// A weight read on the host keeps its host copy: the warning names it.
memref.global @w : memref<16xf32> = uninitialized {tx.checkpoint = "w"}
// CHECK-LABEL: func.func @reads_weight_on_host
// CHECK: gpu.host_register
func.func @reads_weight_on_host(%a: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  // expected-note @+1 {{the buffer}}
  %w = memref.get_global @w : memref<16xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %w[%tx] : memref<16xf32>
    memref.store %v, %a[%tx] : memref<16xf32>
    gpu.terminator
  }
  // expected-warning @+1 {{function 'reads_weight_on_host' runs host-mapped (weight 'w': host code reads or writes it ('memref.load'))}}
  %x = memref.load %w[%c0] : memref<16xf32>
  return %x : f32
}

// -----

// CHECK-LABEL: func.func @manages_device_memory
// CHECK: gpu.host_register
func.func @manages_device_memory(%a: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  // expected-remark @+1 {{tx-gpu-device-buffers: function 'manages_device_memory' runs host-mapped (it manages device memory itself ('gpu.alloc')): its host buffers (argument #0, ...) are registered with the driver}}
  %d = gpu.alloc () : memref<16xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<16xf32>
    memref.store %v, %d[%tx] : memref<16xf32>
    gpu.terminator
  }
  gpu.dealloc %d : memref<16xf32>
  return
}

// -----

// Kernels that read only buffers the host code leaves alone: on the device,
// nothing registered, nothing said.
// CHECK-LABEL: func.func @on_device
// CHECK-NOT: gpu.host_register
// CHECK: gpu.alloc async
func.func @on_device(%a: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<16xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %a[%tx] : memref<16xf32>
    gpu.terminator
  }
  return
}
