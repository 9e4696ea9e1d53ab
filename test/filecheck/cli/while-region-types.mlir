// An scf.while whose region arguments disagree with its operands or results is
// a located verify error with MLIR's wording (xDSL 0.75's verifier raises a bare
// Exception or an IndexError there: an internal error found by the fuzzer).
// RUN: pypto-opt %s --split-input-file --verify-diagnostics

func.func @too_few_arguments(%n: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'scf.while' op  along control flow edge from parent operands to Region #0: source has 2 operands, but target successor needs 1}}
  "scf.while"(%c0, %c0) ({
  ^b(%a: index):
    %more = arith.cmpi ult, %a, %n : index
    "scf.condition"(%more) : (i1) -> ()
  }, {
    "scf.yield"() : () -> ()
  }) : (index, index) -> ()
  func.return
}

// -----

func.func @before_type(%n: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'scf.while' op  along control flow edge from parent operands to Region #0: source type #0 index should match input type #0 i32}}
  "scf.while"(%c0) ({
  ^b(%a: i32):
    %more = arith.cmpi ult, %c0, %n : index
    "scf.condition"(%more) : (i1) -> ()
  }, {
    "scf.yield"(%c0) : (index) -> ()
  }) : (index) -> ()
  func.return
}

// -----

func.func @after_type(%n: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'scf.while' op  along control flow edge from parent results to Region #1: source type #0 i4 should match input type #0 index}}
  %r = scf.while (%i = %c0) : (index) -> i4 {
    %more = arith.cmpi ult, %i, %n : index
    %k = arith.index_cast %i : index to i4
    scf.condition(%more) %k : i4
  } do {
  ^b(%j: index):
    scf.yield %j : index
  }
  func.return
}
