// The multi-core split's granule in the cost model: a core's share of the
// output starts on a 32-byte GM block, so tiles of 50 rows of 333 f16
// (33300 bytes, 4 past a block) go to the cores in shares of 8 tiles: the
// largest tiles (balance-cores=false) run 20 tiles on 3 cores. The model
// counts the granule and picks 48 rows (31968 bytes, a multiple of 32): 21
// tiles split one per core over 21 cores.
// RUN: pypto-opt %s -p 'tv-schedule{target=ascend910b},tv-to-tile' 2>&1 >/dev/null | filecheck %s
// RUN: pypto-opt %s -p 'tv-schedule{target=ascend910b balance-cores=false},tv-to-tile' 2>&1 >/dev/null | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b}' | filecheck %s --check-prefix=HW

// CHECK: remark: tiled tv.sigmoid, tv.mul as one loop nest over 1000x333: ub tiles 48x336 (step 48x333); {{.*}}, sized for 24 cores by cost
// OFF:   remark: tiled tv.sigmoid, tv.mul as one loop nest over 1000x333: ub tiles 50x336 (step 50x333);
// OFF-NOT: sized for
// HW:    block_dim = 21 : i64
func.func @swish(%x: !tv.tensor<1000x333xf16>) -> !tv.tensor<1000x333xf16> {
  %s = tv.sigmoid %x : !tv.tensor<1000x333xf16>
  %y = tv.mul %x, %s : !tv.tensor<1000x333xf16>, !tv.tensor<1000x333xf16> -> !tv.tensor<1000x333xf16>
  func.return %y : !tv.tensor<1000x333xf16>
}
