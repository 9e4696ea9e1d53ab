// Bad command-line arguments are argparse's usage errors: a message, no
// traceback, exit status 2.
// RUN: bash -c 'pypto-opt %s --no-such-flag; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: bash -c 'pypto-opt %s -t no-such-target; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: pypto-opt --version | filecheck %s --check-prefix=VERSION

// FLAG: usage: pypto-opt
// FLAG: pypto-opt: error: unrecognized arguments: --no-such-flag
// FLAG-NEXT: exit=2

// TARGET: pypto-opt: error: argument -t/--target: invalid choice: 'no-such-target'
// TARGET-NEXT: exit=2

// VERSION: pypto-opt {{[0-9.]+}} built on xdsl version 0.75.0
