// What tile-to-hw refuses, each with a diagnostic at the op concerned.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics -p 'tile-to-hw{target=tiny}'

// Two 64x16 f32 tiles (4096 bytes each) are live at the add: tiny's UB has 4096.
func.func @too_big(%x: memref<64x16xf32>, %out: memref<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %a = tile.load %x[%c0, %c0] : memref<64x16xf32> -> !tile.tile<64x16xf32, ub>
  // expected-error @+1 {{the tiles live here need 8192 bytes of ub but target 'tiny' has 4096 bytes; use smaller tiles}}
  %b = tile.exp %a : !tile.tile<64x16xf32, ub>
  %c = tile.add %a, %b : !tile.tile<64x16xf32, ub>
  tile.store %c, %out[%c0, %c0] : !tile.tile<64x16xf32, ub> -> memref<64x16xf32>
  func.return
}

// -----

// A tail extent only known at run time (tile-peel-tails was not run, and the
// loop bound is an argument).
func.func @dynamic(%x: memref<100x16xf32>, %out: memref<100x16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %n step %c8 {
    %left = arith.subi %n, %i : index
    %lt = arith.cmpi slt, %left, %c8 : index
    %rows = arith.select %lt, %left, %c8 : index
    // expected-error @+1 {{the valid extent of dim 0 of !tile.tile<8x16xf32, ub, valid = [?, 16]> is only known at run time; ascend_hw counts are static (run tile-peel-tails first)}}
    %t = tile.load %x[%i, %c0] valid [%rows] : memref<100x16xf32> -> !tile.tile<8x16xf32, ub, valid = [?, 16]>
    tile.store %t, %out[%i, %c0] : !tile.tile<8x16xf32, ub, valid = [?, 16]> -> memref<100x16xf32>
  }
  func.return
}

// -----

// Tiles must fit the target: rows of 48 bytes are not 32-byte aligned.
func.func @misaligned(%x: memref<8x24xf16>, %out: memref<8x24xf16>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{!tile.tile<8x24xf16, ub> has rows of 48 bytes, not a multiple of the 32-byte alignment of ub on target 'tiny'; pad the physical shape and use a valid shape}}
  %t = tile.load %x[%c0, %c0] : memref<8x24xf16> -> !tile.tile<8x24xf16, ub>
  tile.store %t, %out[%c0, %c0] : !tile.tile<8x24xf16, ub> -> memref<8x24xf16>
  func.return
}

// -----

// expected-error @+1 {{tile-to-hw lowers kernels whose arguments and results are GM memrefs and scalars, not tiles}}
func.func @tile_argument(%t: !tile.tile<8x16xf32, ub>) {
  func.return
}

// -----

// The cube accumulates in place: the first product cannot be stored after the
// second matmul accumulated into it.
func.func @accumulator_still_used(%x: memref<16x16xf16>, %out: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %a1 = tile.load %x[%c0, %c0] : memref<16x16xf16> -> !tile.tile<16x16xf16, l1, layout = nz>
  %a = tile.move %a1 : !tile.tile<16x16xf16, l1, layout = nz> -> !tile.tile<16x16xf16, l0a>
  %b = tile.move %a1 : !tile.tile<16x16xf16, l1, layout = nz> -> !tile.tile<16x16xf16, l0b>
  %first = tile.matmul %a, %b : !tile.tile<16x16xf16, l0a>, !tile.tile<16x16xf16, l0b> -> !tile.tile<16x16xf32, l0c>
  // expected-error @+1 {{the accumulator is still used after tile.matmul accumulates into it (the cube accumulates in place)}}
  %second = tile.matmul %a, %b, %first : !tile.tile<16x16xf16, l0a>, !tile.tile<16x16xf16, l0b> -> !tile.tile<16x16xf32, l0c>
  tile.store %first, %out[%c0, %c0] : !tile.tile<16x16xf32, l0c> -> memref<16x16xf32>
  tile.store %second, %out[%c0, %c0] : !tile.tile<16x16xf32, l0c> -> memref<16x16xf32>
  func.return
}

// -----

// A store into a view whose innermost stride is not 1 would scatter: refused
// (loads from such views are gathered).
func.func @strided_store(%x: memref<8x16xf32>, %out: memref<8x16xf32, strided<[32, 2]>>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<8x16xf32> -> !tile.tile<8x16xf32, ub>
  // expected-error @+1 {{a DMA moves contiguous rows: the innermost stride of memref<8x16xf32, strided<[32, 2]>> must be 1}}
  tile.store %t, %out[%c0, %c0] : !tile.tile<8x16xf32, ub> -> memref<8x16xf32, strided<[32, 2]>>
  func.return
}

// -----

// An unknown target is a diagnostic, not a traceback.
// RUN: not pypto-opt %s -p 'tile-to-hw{target=no_such_chip}' 2>&1 | filecheck %s --check-prefix=TARGET
// TARGET: error: cannot load target 'no_such_chip': no_such_chip: no such target file (builtin targets: ascend910b, tiny)

// -----

// Tiles flow only through tile ops and scf.for.
func.func @if_yields_a_tile(%x: memref<8x16xf32>, %out: memref<8x16xf32>, %c: i1) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<8x16xf32> -> !tile.tile<8x16xf32, ub>
  // expected-error @+1 {{tile-to-hw does not lower scf.if on tiles}}
  %u = scf.if %c -> (!tile.tile<8x16xf32, ub>) {
    %e = tile.exp %t : !tile.tile<8x16xf32, ub>
    scf.yield %e : !tile.tile<8x16xf32, ub>
  } else {
    scf.yield %t : !tile.tile<8x16xf32, ub>
  }
  tile.store %u, %out[%c0, %c0] : !tile.tile<8x16xf32, ub> -> memref<8x16xf32>
  func.return
}

// -----

// A scalar read of a type the scalar unit does not load (8-bit).
func.func @scalar_i8(%x: memref<64xi8>, %t: memref<8x8xf32>, %out: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{tile-to-hw reads scalars of index, i16, i32, f16, f32, not i8 from memref<64xi8>}}
  %v = memref.load %x[%c0] : memref<64xi8>
  %i = arith.index_cast %v : i8 to index
  %a = tile.load %t[%i, %c0] : memref<8x8xf32> -> !tile.tile<1x8xf32, ub>
  tile.store %a, %out[%c0, %c0] : !tile.tile<1x8xf32, ub> -> memref<8x8xf32>
  func.return
}
