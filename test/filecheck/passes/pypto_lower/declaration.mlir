// A function declaration (no body) passes through pypto-lower untouched; it used to
// be an internal error in tile-to-hw ("Function declarations don't have BlockArguments").
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny}' | filecheck %s

// CHECK: func.func private @external(i32, f16) -> f16
// CHECK: func.func @caller
func.func private @external(i32, f16) -> f16
func.func @caller(%a: i32, %b: f16) -> f16 {
  %r = func.call @external(%a, %b) : (i32, f16) -> f16
  func.return %r : f16
}
