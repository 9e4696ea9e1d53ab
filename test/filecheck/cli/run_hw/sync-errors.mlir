// The examples with synchronisation removed (by deleting lines with sed) are
// diagnostics at the kernel's ops, with exit status 1: a race (at the later
// access, with a note at the earlier), a deadlock (a wait_flag whose set_flag is
// gone), an event misuse (a set_flag repeated with no wait_flag between).
// RUN: sed '/mte2 -> v, 0/d' %examples/vadd_single.mlir > %t.race.mlir
// RUN: bash -c 'pypto-run %t.race.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=RACE
// RUN: sed '/^      ascend_hw.set_flag mte3 -> mte2, 0/d' %examples/vadd_single.mlir > %t.deadlock.mlir
// RUN: bash -c 'pypto-run %t.deadlock.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DEADLOCK
// RUN: sed '/^      ascend_hw.wait_flag fix -> m, 0/d; /^    ascend_hw.wait_flag fix -> m, 0/d' %examples/matmul.mlir > %t.event.mlir
// RUN: bash -c 'pypto-run %t.event.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EVENT
// RUN: sed '/ascend_hw.*m -> fix/d' %examples/matmul.mlir > %t.l0c.mlir
// RUN: bash -c 'pypto-run %t.l0c.mlir; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=L0C

// RACE:      race.mlir:30:7: error: race on ub bytes [0, 32768) (core 0): write by 'dma_load' (core 0, MTE2) at {{.*}}race.mlir:27:7 and read by 'vadd' (core 0, V) at {{.*}}race.mlir:30:7; they are not ordered by set_flag/wait_flag or pipe_barrier
// RACE-NEXT:       ascend_hw.vadd %xt, %yt -> %xt
// RACE-NEXT:       ^
// RACE-NEXT: race.mlir:27:7: note: the earlier access
// RACE-NEXT:       ascend_hw.dma_load %x[%row, %c0] -> %xt
// RACE-NEXT:       ^
// RACE-NEXT: exit=1

// DEADLOCK:      deadlock.mlir:26:7: error: {{.*}}deadlock on core 0: wait_flag(MTE3 -> MTE2, event 0) can never be satisfied
// DEADLOCK-NEXT:       ascend_hw.wait_flag mte3 -> mte2, 0
// DEADLOCK:      exit=1

// EVENT:      event.mlir:54:7: error: {{.*}}set_flag(FIX -> M, event 0) follows the set at {{.*}}event.mlir:{{[0-9]+}}:{{[0-9]+}} with no wait_flag between
// EVENT:      event.mlir:30:5: note: involved here
// EVENT:      exit=1

// L0C:      l0c.mlir:52:7: error: race on l0c bytes [0, 16384) (core 0): write by 'mmad' (core 0, M) at {{.*}}l0c.mlir:50:7 and read by 'fixpipe' (core 0, FIX) at {{.*}}l0c.mlir:52:7
// L0C:      l0c.mlir:50:7: note: the earlier access
// L0C:      exit=1
