// C = A @ B for 128x128x128 f16 inputs and an f32 result, through the cube's
// memory hierarchy: GM -> L1 with nd2nz (MTE2), L1 -> L0A/L0B with load_l0 (MTE1),
// mmad (M) into L0C, fixpipe (FIX) to GM.
//
// B is loaded once per core. C is computed in 32-row tiles; core `block_idx`
// takes tiles block_idx, block_idx + block_dim, ... (ascend_hw.block_dim = 2).
// Flags order each tile's stages (mte2 -> mte1 -> m -> fix) and keep the next
// tile from overwriting a buffer an earlier stage still reads
// (mte1 -> mte2, m -> mte1, fix -> m: set in the prologue, waited in the epilogue).
//
//   pypto-run examples/hw/matmul.mlir --random 0 --report json
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @matmul(%a: memref<128x128xf16>, %b: memref<128x128xf16>, %c: memref<128x128xf32>)
      attributes {ascend_hw.block_dim = 2 : i64} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %core = ascend_hw.block_idx
    %cores = ascend_hw.block_dim
    %first = arith.muli %core, %c32 : index
    %stride = arith.muli %cores, %c32 : index
    %b1 = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<128x128xf16, l1, nz>
    %a1 = ascend_hw.alloc [32768, 40960) : !ascend_hw.buf<32x128xf16, l1, nz>
    %b0 = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<128x128xf16, l0b, nz>
    %a0 = ascend_hw.alloc [0, 8192) : !ascend_hw.buf<32x128xf16, l0a, nz>
    %acc = ascend_hw.alloc [0, 16384) : !ascend_hw.buf<32x128xf32, l0c, nz>
    // Nothing to wait for before the first tile.
    ascend_hw.set_flag mte1 -> mte2, 0
    ascend_hw.set_flag m -> mte1, 0
    ascend_hw.set_flag fix -> m, 0
    // B: GM -> L1 (fractal) -> L0B, once.
    ascend_hw.nd2nz %b[%c0, %c0] -> %b1[%c0, %c0] {rows = 128, cols = 128} : memref<128x128xf16> -> !ascend_hw.buf<128x128xf16, l1, nz>
    ascend_hw.set_flag mte2 -> mte1, 1
    ascend_hw.wait_flag mte2 -> mte1, 1
    ascend_hw.load_l0 %b1[%c0, %c0] -> %b0[%c0, %c0] {rows = 128, cols = 128} : !ascend_hw.buf<128x128xf16, l1, nz> -> !ascend_hw.buf<128x128xf16, l0b, nz>
    scf.for %row = %first to %c128 step %stride {
      // A rows [row, row + 32): GM -> L1 once load_l0 has read the previous tile.
      ascend_hw.wait_flag mte1 -> mte2, 0
      ascend_hw.nd2nz %a[%row, %c0] -> %a1[%c0, %c0] {rows = 32, cols = 128} : memref<128x128xf16> -> !ascend_hw.buf<32x128xf16, l1, nz>
      ascend_hw.set_flag mte2 -> mte1, 0
      ascend_hw.wait_flag mte2 -> mte1, 0
      // L1 -> L0A once mmad has read the previous tile.
      ascend_hw.wait_flag m -> mte1, 0
      ascend_hw.load_l0 %a1[%c0, %c0] -> %a0[%c0, %c0] {rows = 32, cols = 128} : !ascend_hw.buf<32x128xf16, l1, nz> -> !ascend_hw.buf<32x128xf16, l0a, nz>
      ascend_hw.set_flag mte1 -> mte2, 0
      ascend_hw.set_flag mte1 -> m, 0
      ascend_hw.wait_flag mte1 -> m, 0
      // The cube, once fixpipe has read the previous accumulator.
      ascend_hw.wait_flag fix -> m, 0
      ascend_hw.mmad %a0, %b0 -> %acc {m = 32, n = 128, k = 128} : !ascend_hw.buf<32x128xf16, l0a, nz>, !ascend_hw.buf<128x128xf16, l0b, nz> -> !ascend_hw.buf<32x128xf32, l0c, nz>
      ascend_hw.set_flag m -> mte1, 0
      ascend_hw.set_flag m -> fix, 0
      ascend_hw.wait_flag m -> fix, 0
      ascend_hw.fixpipe %acc[%c0, %c0] -> %c[%row, %c0] {rows = 32, cols = 128} : !ascend_hw.buf<32x128xf32, l0c, nz> -> memref<128x128xf32>
      ascend_hw.set_flag fix -> m, 0
    }
    ascend_hw.wait_flag mte1 -> mte2, 0
    ascend_hw.wait_flag m -> mte1, 0
    ascend_hw.wait_flag fix -> m, 0
    func.return
  }
}
