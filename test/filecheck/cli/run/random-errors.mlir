// --random draws floats in [-1, 1) and small integers; it cannot choose '?'
// sizes or index arguments: those need --inputs.
// RUN: bash -c 'pypto-run %s --entry dynamic; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DYNAMIC
// RUN: bash -c 'pypto-run %s --entry offset; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=INDEX
// RUN: pypto-run %s --entry ints --random 5 --output %t.npz
// RUN: python -c "import numpy as np; d = np.load('%t.npz')['result0']; print(d.dtype, d.min() >= -4, d.max() <= 4, len(set(d.tolist())) > 4)" | filecheck %s --check-prefix=INTS
// RUN: pypto-run %s --entry floats --random 5 --output %t.floats.npz
// RUN: python -c "import numpy as np; d = np.load('%t.floats.npz')['result0']; print(d.dtype, d.min() >= -1, d.max() <= 1, d.std() > 0.4)" | filecheck %s --check-prefix=FLOATS

func.func @dynamic(%x: !tv.tensor<?x4xf32>) -> !tv.tensor<?x4xf32> {
  func.return %x : !tv.tensor<?x4xf32>
}
func.func @offset(%x: !tv.tensor<8xf32>, %i: index) -> !tv.tensor<2xf32> {
  %v = tv.view %x[%i][2][1] : !tv.tensor<8xf32> to !tv.tensor<2xf32>
  func.return %v : !tv.tensor<2xf32>
}
func.func @ints(%x: !tv.tensor<64xi8>) -> !tv.tensor<64xi8> {
  func.return %x : !tv.tensor<64xi8>
}
func.func @floats(%x: !tv.tensor<256xbf16>) -> !tv.tensor<256xbf16> {
  func.return %x : !tv.tensor<256xbf16>
}

// DYNAMIC:      random-errors.mlir:10:1: error: --random cannot choose the '?' sizes of argument 0 (!tv.tensor<?x4xf32>); give it with --inputs
// DYNAMIC-NEXT: func.func @dynamic
// DYNAMIC:      exit=1

// INDEX: random-errors.mlir:{{[0-9]+}}:1: error: --random cannot choose index argument 1 (a size or an offset); give it with --inputs
// INDEX: exit=1

// INTS: int8 True True True
// bf16 values live in float32 arrays.
// FLOATS: float32 True True True
