// Bank offsets of the memory plan (tile-to-hw{bank-offset}, on by default): a
// UB buffer a vector op uses together with buffers already placed moves, by up
// to one bank group row per group (512 bytes on ascend910b), to where the op's
// repeats lose the fewest cycles to bank conflicts (sim.cost.bank_access_cycles):
// two sources in different bank groups, a destination in other banks than its
// sources; when that cannot fit, the first-fit plan is kept.
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=ascend910b}' | filecheck %s --check-prefix=ON
// RUN: pypto-opt %s --split-input-file -p 'tile-to-hw{target=ascend910b bank-offset=false}' | filecheck %s --check-prefix=OFF
// RUN: not pypto-opt %s --split-input-file -p 'tile-to-hw{target=tiny}' 2>/dev/null | filecheck %s --check-prefix=TINY
// RUN: not pypto-opt %s --split-input-file -p 'tile-to-hw{target=tiny bank-offset=false}' 2>/dev/null | filecheck %s --check-prefix=TINY-OFF
// RUN: not pypto-opt %s --split-input-file -p 'tile-to-hw{target=tiny}' 2>&1 >/dev/null | filecheck %s --check-prefix=DIAG
// RUN: not pypto-opt %s --split-input-file -p 'tile-to-hw{target=tiny bank-offset=false}' 2>&1 >/dev/null | filecheck %s --check-prefix=DIAG

// Two sources of one vadd: first fit puts both at a multiple of 512 bytes, so
// every repeat reads two rows of bank groups 0-7 (a read/read conflict); 256
// bytes further, %b's repeats read groups 8-15. The add computes in place over %a.
// ON-LABEL:  func.func @sources
// ON-NEXT:     %[[A:.*]] = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
// ON-NEXT:     %[[B:.*]] = ascend_hw.alloc [2304, 4352) : !ascend_hw.buf<8x128xf16, ub>
// ON:          ascend_hw.vadd %[[A]], %[[B]] -> %[[A]] {repeat = 8 : i64}
// OFF-LABEL: func.func @sources
// OFF-NEXT:    ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
// OFF-NEXT:    ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
// tiny's 4 KiB hold the two tiles only without the offset: first fit.
// TINY-LABEL: func.func @sources
// TINY-NEXT:    ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
// TINY-NEXT:    ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
func.func @sources(%x: memref<8x128xf16>, %y: memref<8x128xf16>, %out: memref<8x128xf16>) {
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%c0, %c0] : memref<8x128xf16> -> !tile.tile<8x128xf16, ub>
  %b = tile.load %y[%c0, %c0] : memref<8x128xf16> -> !tile.tile<8x128xf16, ub>
  %s = tile.add %a, %b : !tile.tile<8x128xf16, ub>
  tile.store %s, %out[%c0, %c0] : !tile.tile<8x128xf16, ub> -> memref<8x128xf16>
  func.return
}

// -----

// The same on half the rows: on tiny the offset fits.
// ON-LABEL:  func.func @small
// ON-NEXT:     ascend_hw.alloc [0, 1024) : !ascend_hw.buf<4x128xf16, ub>
// ON-NEXT:     ascend_hw.alloc [1280, 2304) : !ascend_hw.buf<4x128xf16, ub>
// OFF-LABEL: func.func @small
// OFF-NEXT:    ascend_hw.alloc [0, 1024) : !ascend_hw.buf<4x128xf16, ub>
// OFF-NEXT:    ascend_hw.alloc [1024, 2048) : !ascend_hw.buf<4x128xf16, ub>
// TINY-LABEL: func.func @small
// TINY-NEXT:    ascend_hw.alloc [0, 1024) : !ascend_hw.buf<4x128xf16, ub>
// TINY-NEXT:    ascend_hw.alloc [1280, 2304) : !ascend_hw.buf<4x128xf16, ub>
// TINY-OFF-LABEL: func.func @small
// TINY-OFF-NEXT:    ascend_hw.alloc [0, 1024) : !ascend_hw.buf<4x128xf16, ub>
// TINY-OFF-NEXT:    ascend_hw.alloc [1024, 2048) : !ascend_hw.buf<4x128xf16, ub>
func.func @small(%x: memref<4x128xf16>, %y: memref<4x128xf16>, %out: memref<4x128xf16>) {
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%c0, %c0] : memref<4x128xf16> -> !tile.tile<4x128xf16, ub>
  %b = tile.load %y[%c0, %c0] : memref<4x128xf16> -> !tile.tile<4x128xf16, ub>
  %s = tile.add %a, %b : !tile.tile<4x128xf16, ub>
  tile.store %s, %out[%c0, %c0] : !tile.tile<4x128xf16, ub> -> memref<4x128xf16>
  func.return
}

// -----

// %a is stored after the exp, so the exp writes a buffer of its own; at 2048 its
// repeats would write the banks they read (a read/write conflict).
// ON-LABEL:  func.func @destination
// ON-NEXT:     %[[A:.*]] = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
// ON-NEXT:     %[[E:.*]] = ascend_hw.alloc [2304, 4352) : !ascend_hw.buf<8x128xf16, ub>
// ON:          ascend_hw.vexp %[[A]] -> %[[E]] {repeat = 8 : i64}
// OFF-LABEL: func.func @destination
// OFF-NEXT:    ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
// OFF-NEXT:    ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
func.func @destination(%x: memref<8x128xf16>, %out: memref<8x128xf16>, %out2: memref<8x128xf16>) {
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%c0, %c0] : memref<8x128xf16> -> !tile.tile<8x128xf16, ub>
  %e = tile.exp %a : !tile.tile<8x128xf16, ub>
  tile.store %e, %out[%c0, %c0] : !tile.tile<8x128xf16, ub> -> memref<8x128xf16>
  tile.store %a, %out2[%c0, %c0] : !tile.tile<8x128xf16, ub> -> memref<8x128xf16>
  func.return
}

// -----

// Both sources stay live, so the sum needs a third buffer. %a and %b read every
// bank group of the first 64 KiB slice (groups 0-7 and 8-15), so a destination
// there always shares a bank with a source; at 65536 (banks 16-31) it shares none.
// ON-LABEL:  func.func @slices
// ON-NEXT:     %[[A:.*]] = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
// ON-NEXT:     %[[B:.*]] = ascend_hw.alloc [2304, 4352) : !ascend_hw.buf<8x128xf16, ub>
// ON-NEXT:     %[[S:.*]] = ascend_hw.alloc [65536, 67584) : !ascend_hw.buf<8x128xf16, ub>
// ON:          ascend_hw.vadd %[[A]], %[[B]] -> %[[S]] {repeat = 8 : i64}
// OFF-LABEL: func.func @slices
// OFF-NEXT:    ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
// OFF-NEXT:    ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
// OFF-NEXT:    ascend_hw.alloc [4096, 6144) : !ascend_hw.buf<8x128xf16, ub>
// The capacity diagnostic is the same with and without bank offsets.
// DIAG: bank-offset.mlir:[[# @LINE + 5]]:3: error: the tiles live here need 6144 bytes of ub but target 'tiny' has 4096 bytes; use smaller tiles
func.func @slices(%x: memref<8x128xf16>, %y: memref<8x128xf16>, %out: memref<8x128xf16>, %o1: memref<8x128xf16>, %o2: memref<8x128xf16>) {
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%c0, %c0] : memref<8x128xf16> -> !tile.tile<8x128xf16, ub>
  %b = tile.load %y[%c0, %c0] : memref<8x128xf16> -> !tile.tile<8x128xf16, ub>
  %s = tile.add %a, %b : !tile.tile<8x128xf16, ub>
  tile.store %s, %out[%c0, %c0] : !tile.tile<8x128xf16, ub> -> memref<8x128xf16>
  tile.store %a, %o1[%c0, %c0] : !tile.tile<8x128xf16, ub> -> memref<8x128xf16>
  tile.store %b, %o2[%c0, %c0] : !tile.tile<8x128xf16, ub> -> memref<8x128xf16>
  func.return
}
