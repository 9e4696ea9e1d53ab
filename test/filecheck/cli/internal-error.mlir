// A bug in a pass (an unexpected exception) is one line asking for a report, and
// exit status 1; --debug adds the Python traceback.
// RUN: bash -c 'pypto-opt %s -p pypto-test-diagnostics; echo "exit=$?"' 2>&1 | filecheck %s
// RUN: bash -c 'pypto-opt %s -p pypto-test-diagnostics --debug; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DEBUG

"test.op"() {test.diagnostic = "crash: something broke"} : () -> ()

// CHECK-NOT: Traceback
// CHECK: pypto-opt: internal error: RuntimeError: something broke (please report this; rerun with --debug for the traceback)
// CHECK-NEXT: exit=1

// DEBUG: Traceback (most recent call last):
// DEBUG: RuntimeError: something broke
// DEBUG-NEXT: pypto-opt: internal error: RuntimeError: something broke (please report this)
// DEBUG-NEXT: exit=1
