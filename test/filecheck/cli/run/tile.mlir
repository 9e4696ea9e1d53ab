// A tile-level function (destination-passing: it writes its memref arguments)
// runs on the tile interpreter; arg<i> are the memrefs' final contents.
// RUN: pypto-run %s --random 2 --output %t.npz | filecheck %s
// RUN: python -c "import numpy as np; d = np.load('%t.npz'); x = d['arg0'].astype(np.float64); print(sorted(d.files), np.allclose(d['arg1'], x / (1 + np.exp(-x)), rtol=2**-10, atol=2**-24))" | filecheck %s --check-prefix=SILU

func.func @silu(%x: memref<20x64xf16>, %out: memref<20x64xf16>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c20 = arith.constant 20 : index
  scf.for %i = %c0 to %c20 step %c8 {
    %left = arith.subi %c20, %i : index
    %short = arith.cmpi slt, %left, %c8 : index
    %rows = arith.select %short, %left, %c8 : index
    %t = tile.load %x[%i, %c0] valid [%rows] : memref<20x64xf16> -> !tile.tile<8x64xf16, ub, valid = [?, 64]>
    %s = tile.silu %t : !tile.tile<8x64xf16, ub, valid = [?, 64]>
    tile.store %s, %out[%i, %c0] : !tile.tile<8x64xf16, ub, valid = [?, 64]> -> memref<20x64xf16>
  }
  func.return
}

// CHECK:      @silu: tile level, run by the tile interpreter
// CHECK-NEXT: inputs: random (seed 2)
// CHECK-NEXT: arg0  f16[20x64]  sum={{.*}}  (unchanged)
// CHECK-NEXT: arg1  f16[20x64]  sum={{.*}} crc32={{[0-9a-f]+}}{{$}}

// silu rounded once to f16: within one f16 ulp of the float64 value.
// SILU: ['arg0', 'arg1'] True
