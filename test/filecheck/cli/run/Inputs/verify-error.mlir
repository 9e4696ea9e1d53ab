func.func @f(%x: !tv.tensor<4xf32>) -> !tv.tensor<4xf32> {
  %s = tv.reduce_sum %x [1] : !tv.tensor<4xf32> -> !tv.tensor<f32>
  func.return %x : !tv.tensor<4xf32>
}
