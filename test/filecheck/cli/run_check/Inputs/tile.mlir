func.func @g(%x: memref<4xf32>) {
  func.return
}
