// tv-to-tile makes no copy for a reshape: a reshape of a tensor that is strided
// in GM is refused at the reshape.
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' --verify-diagnostics

// A contiguous window of a strided view is strided in GM: refused.
func.func @strided(%x: !tv.tensor<8x40xf32>) -> !tv.tensor<80xf32> {
  %w = tv.view %x[0, 0] [8, 20] [1, 2] : !tv.tensor<8x40xf32> to !tv.tensor<8x20xf32>
  %c = tv.view %w[2, 0] [4, 20] [1, 1] : !tv.tensor<8x20xf32> to !tv.tensor<4x20xf32>
  // expected-error @+1 {{tv-to-tile reshapes only tensors contiguous in GM (no copy), but the operand is the strided memref<4x20xf32, strided<[40, 2], offset: 80>>}}
  %r = tv.reshape %c : !tv.tensor<4x20xf32> to !tv.tensor<80xf32>
  func.return %r : !tv.tensor<80xf32>
}
