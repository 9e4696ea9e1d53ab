// z = x + y on 256x1024 f16, double-buffered: two sets of UB tiles (ping and
// pong, event ids 0 and 1) so that loading one tile (MTE2) overlaps adding (V)
// and storing (MTE3) the other. The loop body handles a ping and a pong tile;
// the prologue sets and epilogue waits balance the loop-carried flags.
//
// Multi-core: ascend_hw.block_dim = 2; core `block_idx` takes rows
// [block_idx * 256 / block_dim, ...) (block_dim must divide 8 tile pairs).
//
//   pypto-run examples/hw/vadd_double.mlir --random 0 --timeline vadd.png
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @vadd(%x: memref<256x1024xf16>, %y: memref<256x1024xf16>, %z: memref<256x1024xf16>)
      attributes {ascend_hw.block_dim = 2 : i64} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c256 = arith.constant 256 : index
    %core = ascend_hw.block_idx
    %cores = ascend_hw.block_dim
    %rows = arith.divui %c256, %cores : index
    %first = arith.muli %core, %rows : index
    %last = arith.addi %first, %rows : index
    // Ping tiles, then pong tiles: 16x1024 f16 (32 KiB) each.
    %xa = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<16x1024xf16, ub>
    %ya = ascend_hw.alloc [32768, 65536) : !ascend_hw.buf<16x1024xf16, ub>
    %xb = ascend_hw.alloc [65536, 98304) : !ascend_hw.buf<16x1024xf16, ub>
    %yb = ascend_hw.alloc [98304, 131072) : !ascend_hw.buf<16x1024xf16, ub>
    ascend_hw.set_flag mte3 -> mte2, 0
    ascend_hw.set_flag mte3 -> mte2, 1
    scf.for %row = %first to %last step %c32 {
      // Ping: rows [row, row + 16).
      ascend_hw.wait_flag mte3 -> mte2, 0
      ascend_hw.dma_load %x[%row, %c0] -> %xa {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_load %y[%row, %c0] -> %ya {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.set_flag mte2 -> v, 0
      ascend_hw.wait_flag mte2 -> v, 0
      ascend_hw.vadd %xa, %ya -> %xa {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub>, !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.set_flag v -> mte3, 0
      ascend_hw.wait_flag v -> mte3, 0
      ascend_hw.dma_store %xa -> %z[%row, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
      ascend_hw.set_flag mte3 -> mte2, 0
      // Pong: rows [row + 16, row + 32).
      %next = arith.addi %row, %c16 : index
      ascend_hw.wait_flag mte3 -> mte2, 1
      ascend_hw.dma_load %x[%next, %c0] -> %xb {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.dma_load %y[%next, %c0] -> %yb {bursts = 1, burst_bytes = 32768} : memref<256x1024xf16> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.set_flag mte2 -> v, 1
      ascend_hw.wait_flag mte2 -> v, 1
      ascend_hw.vadd %xb, %yb -> %xb {repeat = 128} : !ascend_hw.buf<16x1024xf16, ub>, !ascend_hw.buf<16x1024xf16, ub> -> !ascend_hw.buf<16x1024xf16, ub>
      ascend_hw.set_flag v -> mte3, 1
      ascend_hw.wait_flag v -> mte3, 1
      ascend_hw.dma_store %xb -> %z[%next, %c0] {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<16x1024xf16, ub> -> memref<256x1024xf16>
      ascend_hw.set_flag mte3 -> mte2, 1
    }
    ascend_hw.wait_flag mte3 -> mte2, 0
    ascend_hw.wait_flag mte3 -> mte2, 1
    func.return
  }
}
