// z = x + y on 256x1024 f16, single-buffered: every 16-row tile is loaded (MTE2),
// added (V) and stored (MTE3) before the next one is loaded, so the three pipes
// take turns and never overlap.
//
// Multi-core: the kernel declares ascend_hw.block_dim = 2; core `block_idx` takes
// rows [block_idx * 256 / block_dim, ...) (block_dim must divide 16 tiles).
//
//   pypto-run examples/hw/vadd_single.mlir --random 0
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @vadd(%x: memref<256x1024xf16>, %y: memref<256x1024xf16>, %z: memref<256x1024xf16>)
      attributes {ascend_hw.block_dim = 2 : i64} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c256 = arith.constant 256 : index
    %core = ascend_hw.block_idx
    %cores = ascend_hw.block_dim
    %rows = arith.divui %c256, %cores : index
    %first = arith.muli %core, %rows : index
    %last = arith.addi %first, %rows : index
    // One 16x1024 f16 tile (32 KiB) of x and one of y; the sum overwrites x's.
    %xt = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    %yt = ascend_hw.alloc [32768, 65536) : !ascend_hw.buf<16x1024xf16, ub>
    // The store of tile i must have read %xt before tile i+1 is loaded into it.
    ascend_hw.set_flag mte3 -> mte2, 0
    scf.for %row = %first to %last step %c16 {
      ascend_hw.wait_flag mte3 -> mte2, 0
      ascend_hw.dma_load %x[%row, %c0] -> %xt {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_load %y[%row, %c0] -> %yt {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.set_flag mte2 -> v, 0
      ascend_hw.wait_flag mte2 -> v, 0
      // 16384 lanes = 128 repeats of 128 f16 lanes.
      ascend_hw.vadd %xt, %yt -> %xt {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub>, !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.set_flag v -> mte3, 0
      ascend_hw.wait_flag v -> mte3, 0
      ascend_hw.dma_store %xt -> %z[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
      ascend_hw.set_flag mte3 -> mte2, 0
    }
    ascend_hw.wait_flag mte3 -> mte2, 0
    func.return
  }
}
