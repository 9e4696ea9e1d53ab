// The CSR and block-CSR encodings and every sparse tv op print in their custom
// form and survive a round trip through the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s

// CHECK-LABEL: func.func @encodings
// CHECK-SAME: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>
// CHECK-SAME: !tv.tensor<64x128xf16, #tv.csr<rows = 64, cols = 128, nnz = 4, index = i32, block = [16, 16]>>
// CHECK-SAME: !tv.tensor<?x4096xbf16, #tv.csr<rows = ?, cols = 4096, nnz = ?, index = i16, block = [64, 64]>>
func.func @encodings(%a: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>,
                     %b: !tv.tensor<64x128xf16, #tv.csr<rows = 64, cols = 128, nnz = 4, index = i32, block = [16, 16]>>,
                     %c: !tv.tensor<?x4096xbf16, #tv.csr<rows = ?, cols = 4096, nnz = ?, index = i16, block = [64, 64]>>) {
  func.return
}

// CHECK-LABEL: func.func @csr_ops
// CHECK-NEXT: %[[A:.*]] = tv.assemble %{{.*}}, %{{.*}}, %{{.*}} : !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = tv.disassemble %[[A]] : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>> -> !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16>
// CHECK-NEXT: tv.spmm %[[A]], %{{.*}} : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x32xf16> -> !tv.tensor<8x32xf16>
// CHECK-NEXT: tv.spmv %[[A]], %{{.*}} : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16xf16> -> !tv.tensor<8xf16>
// CHECK-NEXT: %[[S:.*]] = tv.sddmm %[[A]], %{{.*}}, %{{.*}} transpose_b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<8x32xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
// CHECK-NEXT: tv.sddmm %[[A]], %{{.*}}, %{{.*}} : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<8x32xf16>, !tv.tensor<32x16xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
// CHECK-NEXT: %[[P:.*]] = tv.sparse_softmax %[[S]] : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
// CHECK-NEXT: tv.to_dense %[[P]] : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>> -> !tv.tensor<8x16xf16>
// CHECK-NEXT: tv.gather %{{.*}}[%{{.*}}] : !tv.tensor<16x32xf16>, !tv.tensor<8x4xi32> -> !tv.tensor<8x4x32xf16>
func.func @csr_ops(%offsets: !tv.tensor<9xi32>, %indices: !tv.tensor<?xi32>, %values: !tv.tensor<?xf16>,
                   %b: !tv.tensor<16x32xf16>, %x: !tv.tensor<16xf16>, %q: !tv.tensor<8x32xf16>,
                   %kt: !tv.tensor<32x16xf16>, %idx: !tv.tensor<8x4xi32>) {
  %a = tv.assemble %offsets, %indices, %values : !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  %o, %i, %v = tv.disassemble %a : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>> -> !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16>
  %mm = tv.spmm %a, %b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x32xf16> -> !tv.tensor<8x32xf16>
  %mv = tv.spmv %a, %x : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16xf16> -> !tv.tensor<8xf16>
  %s = tv.sddmm %a, %q, %b transpose_b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<8x32xf16>, !tv.tensor<16x32xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  %s2 = tv.sddmm %a, %q, %kt : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<8x32xf16>, !tv.tensor<32x16xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  %p = tv.sparse_softmax %s : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
  %d = tv.to_dense %p : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>> -> !tv.tensor<8x16xf16>
  %g = tv.gather %b[%idx] : !tv.tensor<16x32xf16>, !tv.tensor<8x4xi32> -> !tv.tensor<8x4x32xf16>
  func.return
}

// CHECK-LABEL: func.func @bsr_ops
// CHECK-NEXT: %[[A:.*]] = tv.assemble %{{.*}}, %{{.*}}, %{{.*}} : !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?x16x16xf16> -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
// CHECK-NEXT: tv.disassemble %[[A]] : {{.*}} -> !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?x16x16xf16>
// CHECK-NEXT: tv.spmm %[[A]], %{{.*}} : {{.*}}, !tv.tensor<64x128xf16> -> !tv.tensor<64x128xf16>
// CHECK-NEXT: %[[S:.*]] = tv.sddmm %[[A]], %{{.*}}, %{{.*}} transpose_b : {{.*}} -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
// CHECK-NEXT: tv.sparse_softmax %[[S]] : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
func.func @bsr_ops(%offsets: !tv.tensor<5xi32>, %indices: !tv.tensor<?xi32>, %values: !tv.tensor<?x16x16xf16>,
                   %q: !tv.tensor<64x128xf16>) {
  %a = tv.assemble %offsets, %indices, %values : !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?x16x16xf16> -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
  %o, %i, %v = tv.disassemble %a : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>> -> !tv.tensor<5xi32>, !tv.tensor<?xi32>, !tv.tensor<?x16x16xf16>
  %mm = tv.spmm %a, %q : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, !tv.tensor<64x128xf16> -> !tv.tensor<64x128xf16>
  %s = tv.sddmm %a, %q, %q transpose_b : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>, !tv.tensor<64x128xf16>, !tv.tensor<64x128xf16> -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
  %p = tv.sparse_softmax %s : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32, block = [16, 16]>>
  func.return
}
