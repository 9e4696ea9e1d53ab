// tv.sin, tv.cos and tv.erf are defined on float tensors only.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics

func.func @sin_of_integers(%x: !tv.tensor<4xi32>) {
  // expected-error @+1 {{tv.sin expects a float tensor (f16, bf16, f32), got !tv.tensor<4xi32>}}
  %0 = tv.sin %x : !tv.tensor<4xi32>
  func.return
}

// -----

func.func @cos_of_integers(%x: !tv.tensor<4xi16>) {
  // expected-error @+1 {{tv.cos expects a float tensor (f16, bf16, f32), got !tv.tensor<4xi16>}}
  %0 = tv.cos %x : !tv.tensor<4xi16>
  func.return
}

// -----

func.func @erf_of_integers(%x: !tv.tensor<4xi8>) {
  // expected-error @+1 {{tv.erf expects a float tensor (f16, bf16, f32), got !tv.tensor<4xi8>}}
  %0 = tv.erf %x : !tv.tensor<4xi8>
  func.return
}
