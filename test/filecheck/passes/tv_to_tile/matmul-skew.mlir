// An f32 matmul with a cast epilogue fits tiny only single-buffered. When its L1
// chunks feed more than one cube step, the steps are skewed (the moves of step
// s + 1 before the matmuls of step s) and L0A/L0B hold two steps' tiles even
// with one buffer: the model keeps that room, so the lowering fits (the memory
// plan refused 4096 bytes of l0a when the model counted one step).
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny}' 2>&1 | filecheck %s

// CHECK: single-buffered
// CHECK-NOT: error
// CHECK: ascend_hw.mmad
func.func @f(%a: !tv.tensor<63x64xf32>, %b: !tv.tensor<64x16xf32>) -> !tv.tensor<63x16xf16> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<63x64xf32>, !tv.tensor<64x16xf32> -> !tv.tensor<63x16xf32>
  %d = tv.cast %c : !tv.tensor<63x16xf32> to !tv.tensor<63x16xf16>
  func.return %d : !tv.tensor<63x16xf16>
}
