// tv.sin, tv.cos and tv.erf print in their custom form, survive a round trip
// through the generic form, and refuse integer tensors.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: pypto-opt %s --print-op-generic | pypto-opt | filecheck %s

// CHECK-LABEL: func.func @math
func.func @math(%x: !tv.tensor<4x8xf16>, %y: !tv.tensor<?x8xf32>, %z: !tv.tensor<16xbf16>) {
  // CHECK: tv.sin %{{.*}} : !tv.tensor<4x8xf16>
  %0 = tv.sin %x : !tv.tensor<4x8xf16>
  // CHECK: tv.cos %{{.*}} : !tv.tensor<?x8xf32>
  %1 = tv.cos %y : !tv.tensor<?x8xf32>
  // CHECK: tv.erf %{{.*}} : !tv.tensor<16xbf16>
  %2 = tv.erf %z : !tv.tensor<16xbf16>
  func.return
}
