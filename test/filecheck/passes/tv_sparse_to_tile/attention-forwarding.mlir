// The options of attention.mlir forwarded by pypto-lower: each RUN lowers the
// whole file to ascend_hw (about 25 s), so this file runs in `make test-all`
// (lit-all); attention.mlir checks the same options on tv-sparse-to-tile and
// the default pipeline through pypto-lower.
// REQUIRES: slow
// RUN: pypto-opt %S/attention.mlir -p 'pypto-lower{target=ascend910b sparse-fuse-attention=false}' 2>&1 | filecheck %S/attention.mlir --check-prefix=OFF-REMARK
// RUN: pypto-opt %S/attention.mlir -p 'pypto-lower{target=ascend910b sparse-attention-defer-update=false}' 2>&1 | filecheck %S/attention.mlir --check-prefix=NOW
// RUN: pypto-opt %S/attention.mlir -p 'pypto-lower{target=ascend910b sparse-attention-balance=false sparse-attention-block-split=false}' 2>&1 | filecheck %S/attention.mlir --check-prefix=COUNT
// RUN: pypto-opt %S/attention.mlir -p 'pypto-lower{target=ascend910b sparse-attention-sum-column=false}' 2>&1 | filecheck %S/attention.mlir --check-prefix=NO-COLUMN-REMARK
