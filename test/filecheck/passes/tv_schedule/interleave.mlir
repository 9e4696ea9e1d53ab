// Independent groups of one phase: with interleave (the default) each nest is
// split over all the cores on its own (each loop gets its own chunk bounds, no
// barrier between them); with interleave=false the second nest is the first's
// tail and runs on the last core only (scf.if block_idx == last). A group that
// reads another's result keeps its sync_all.
// (balance-cores=false: the largest tiles, so no nest has a peeled tail.)
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b balance-cores=false}' 2>/dev/null | filecheck %s
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b interleave=false balance-cores=false}' 2>/dev/null | filecheck %s --check-prefix=SERIAL

// CHECK-LABEL: func.func @independent
// CHECK-NOT:   pypto.interleave_groups
// CHECK:       ascend_hw.block_idx
// CHECK:       scf.for
// CHECK-NOT:   scf.if
// CHECK:       arith.minui
// CHECK:       scf.for
// CHECK-NOT:   ascend_hw.sync_all
// CHECK-NOT:   scf.if
// CHECK:       func.return
// SERIAL-LABEL: func.func @independent
// SERIAL:       ascend_hw.block_idx
// SERIAL-NOT:   ascend_hw.block_idx
// SERIAL:       arith.cmpi eq
// SERIAL:       scf.if
func.func @independent(%a: !tv.tensor<512x512xf16>, %c: !tv.tensor<256x128xf16>) -> (!tv.tensor<512x512xf16>, !tv.tensor<256x128xf16>) {
  %e = tv.exp %a : !tv.tensor<512x512xf16>
  %f = tv.exp %c : !tv.tensor<256x128xf16>
  func.return %e, %f : !tv.tensor<512x512xf16>, !tv.tensor<256x128xf16>
}

// CHECK-LABEL: func.func @dependent
// CHECK:       scf.for
// CHECK:       ascend_hw.sync_all
// CHECK:       scf.for
func.func @dependent(%a: !tv.tensor<256x256xf16>, %b: !tv.tensor<256x256xf16>) -> !tv.tensor<256x256xf16> {
  %t = tv.transpose %a [1, 0] : !tv.tensor<256x256xf16> -> !tv.tensor<256x256xf16>
  %m = tv.matmul %t, %b acc(f32) : !tv.tensor<256x256xf16>, !tv.tensor<256x256xf16> -> !tv.tensor<256x256xf16>
  %s = tv.exp %m : !tv.tensor<256x256xf16>
  %r = tv.matmul %s, %b acc(f32) : !tv.tensor<256x256xf16>, !tv.tensor<256x256xf16> -> !tv.tensor<256x256xf16>
  func.return %r : !tv.tensor<256x256xf16>
}
