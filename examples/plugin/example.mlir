func.func @triple(%x: i32) -> i32 {
  %y = scale.by %x, 3 : i32
  func.return %y : i32
}
