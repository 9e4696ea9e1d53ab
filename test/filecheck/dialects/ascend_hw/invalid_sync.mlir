// Flags name two different pipes and an event id the target has.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'ascend_hw.set_flag' op a flag is between two pipes, not all
func.func @f() {
  ascend_hw.set_flag all -> v, 0
  func.return
}

// -----

// CHECK: 'ascend_hw.wait_flag' op v -> v orders a pipe with itself; use pipe_barrier
func.func @f() {
  ascend_hw.wait_flag v -> v, 0
  func.return
}

// -----

// CHECK: 'ascend_hw.set_flag' op event id must be in 0..7 (sync.event_ids of target ascend910b), got 8
func.func @f() {
  ascend_hw.set_flag mte2 -> v, 8
  func.return
}

// -----

// CHECK: 'ascend_hw.wait_flag' op event id must be in 0..7 (sync.event_ids of target ascend910b), got -1
func.func @f() {
  ascend_hw.wait_flag mte2 -> v, -1
  func.return
}

// -----

// CHECK: Expected `s`, `mte1`, `mte2`, `mte3`, `m`, `v`, `fix`, or `all`.
func.func @f() {
  ascend_hw.pipe_barrier mte4
  func.return
}

// -----

// Every core must reach a sync_all equally often.
// CHECK: 'ascend_hw.sync_all' op every core must reach it equally often, but it is inside an scf.if whose condition depends on ascend_hw.block_idx
func.func @f() {
  %i = ascend_hw.block_idx
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %i, %c0 : index
  scf.if %first {
    ascend_hw.sync_all
  }
  func.return
}

// -----

// CHECK: 'ascend_hw.sync_all' op every core must reach it equally often, but it is inside an scf.for whose bounds depend on ascend_hw.block_idx
func.func @f(%n: index) {
  %i = ascend_hw.block_idx
  %c1 = arith.constant 1 : index
  %end = arith.addi %i, %c1 : index
  scf.for %k = %i to %end step %c1 {
    scf.for %l = %k to %n step %c1 {
      ascend_hw.sync_all
    }
  }
  func.return
}
