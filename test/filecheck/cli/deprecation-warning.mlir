// DeprecationWarnings of xDSL and of plugin passes are shown on stderr, as
// xdsl-opt shows them (Python hides them by default); the run still succeeds.
// RUN: pypto-opt %s -p test-deprecation 2>&1 | filecheck %s

builtin.module {}

// CHECK: DeprecationWarning: hello
// CHECK: builtin.module {
