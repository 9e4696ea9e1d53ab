// tv.select (compare fused into select, numpy where) prints in its custom form
// with every predicate, broadcast operands and different compared and selected
// types, and survives a round trip through the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s

// CHECK-LABEL: func.func @select
func.func @select(%a: !tv.tensor<4x8xf32>, %b: !tv.tensor<4x1xf32>, %t: !tv.tensor<4x8xi32>, %f: !tv.tensor<8xi32>, %h: !tv.tensor<4x8xf16>, %g: !tv.tensor<4x8xbf16>) {
  // CHECK: tv.select lt %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : !tv.tensor<4x8xf32>, !tv.tensor<4x1xf32>, !tv.tensor<4x8xi32>, !tv.tensor<8xi32> -> !tv.tensor<4x8xi32>
  %0 = tv.select lt %a, %b, %t, %f : !tv.tensor<4x8xf32>, !tv.tensor<4x1xf32>, !tv.tensor<4x8xi32>, !tv.tensor<8xi32> -> !tv.tensor<4x8xi32>
  // CHECK: tv.select le
  %1 = tv.select le %h, %h, %h, %h : !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16>, !tv.tensor<4x8xf16> -> !tv.tensor<4x8xf16>
  // CHECK: tv.select gt
  %2 = tv.select gt %g, %g, %a, %a : !tv.tensor<4x8xbf16>, !tv.tensor<4x8xbf16>, !tv.tensor<4x8xf32>, !tv.tensor<4x8xf32> -> !tv.tensor<4x8xf32>
  // CHECK: tv.select ge
  %3 = tv.select ge %t, %f, %g, %g : !tv.tensor<4x8xi32>, !tv.tensor<8xi32>, !tv.tensor<4x8xbf16>, !tv.tensor<4x8xbf16> -> !tv.tensor<4x8xbf16>
  // CHECK: tv.select eq
  %4 = tv.select eq %a, %a, %a, %b : !tv.tensor<4x8xf32>, !tv.tensor<4x8xf32>, !tv.tensor<4x8xf32>, !tv.tensor<4x1xf32> -> !tv.tensor<4x8xf32>
  // CHECK: tv.select ne
  %5 = tv.select ne %b, %b, %b, %b : !tv.tensor<4x1xf32>, !tv.tensor<4x1xf32>, !tv.tensor<4x1xf32>, !tv.tensor<4x1xf32> -> !tv.tensor<4x1xf32>
  func.return
}
