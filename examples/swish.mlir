// swish(x) = x * sigmoid(x) on a 4096x1024 fp16 tensor in global memory, at the
// tensor_view level (whole tensors, value semantics).
//   pypto-opt examples/swish.mlir -p pypto-cleanup
func.func @swish(%x: !tv.tensor<4096x1024xf16>) -> !tv.tensor<4096x1024xf16> {
  %s = tv.sigmoid %x : !tv.tensor<4096x1024xf16>
  %y = tv.mul %x, %s : !tv.tensor<4096x1024xf16>
  func.return %y : !tv.tensor<4096x1024xf16>
}
