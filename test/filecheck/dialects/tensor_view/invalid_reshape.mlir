// The tv.reshape verifier: same element type and count, static shapes, and a
// contiguous operand.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics

func.func @count(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{tv.reshape keeps the number of elements, but 4x8 has 32 and 5x7 has 35}}
  %0 = tv.reshape %x : !tv.tensor<4x8xf16> to !tv.tensor<5x7xf16>
  func.return
}

// -----

func.func @element_type(%x: !tv.tensor<4x8xf16>) {
  // expected-error @+1 {{tv.reshape keeps the element type, but it changes from f16 to f32}}
  %0 = tv.reshape %x : !tv.tensor<4x8xf16> to !tv.tensor<32xf32>
  func.return
}

// -----

func.func @dynamic(%x: !tv.tensor<?x8xf16>) {
  // expected-error @+1 {{tv.reshape needs static shapes, got ?x8 to 32}}
  %0 = tv.reshape %x : !tv.tensor<?x8xf16> to !tv.tensor<32xf16>
  func.return
}

// -----

func.func @strided(%x: !tv.tensor<8x40xf32>) {
  %w = tv.view %x[0, 0] [8, 20] [1, 1] : !tv.tensor<8x40xf32> to !tv.tensor<8x20xf32>
  // expected-error @+1 {{tv.reshape needs a contiguous operand, but it is a strided tv.view (a window that is not one run of its source)}}
  %0 = tv.reshape %w : !tv.tensor<8x20xf32> to !tv.tensor<160xf32>
  func.return
}
