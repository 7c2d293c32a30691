// A linalg matmul + ReLU into TEIR and out as LLVM IR, through teir-opt and
// through plain xdsl-opt (the dialect and passes come from the xdsl.universe
// entry point). teir-optimize lifts the plain schedule to one GEMM with the
// fill fused as Zero and the ReLU as its epilogue.

// RUN: teir-opt %s -p convert-linalg-to-teir,teir-optimize | filecheck %s --check-prefix=TEIR
// RUN: teir-opt %s -p convert-linalg-to-teir,teir-optimize,teir-to-llvm | filecheck %s
// RUN: xdsl-opt %s -p convert-linalg-to-teir,teir-optimize,teir-to-llvm | filecheck %s

func.func @matmul_relu(%A: memref<16x8xf32>, %B: memref<8x32xf32>, %C: memref<16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%C : memref<16x32xf32>)
  linalg.matmul ins(%A, %B : memref<16x8xf32>, memref<8x32xf32>) outs(%C : memref<16x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%C : memref<16x32xf32>) outs(%C : memref<16x32xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }
  func.return
}

// TEIR:      teir.primitive zero_d0_d1 Zero {M = [d0], N = [d1]} {data_type = "FP32"}
// TEIR-NEXT: teir.primitive gemm_d0_d1_d2 Contraction {M = [d0], N = [d1], K = [d2]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 16, n = 32, k = 8, lda = 8, ldb = 32, ldc = 32, trans = "TTT">}
// TEIR-NEXT: teir.primitive relu_d0_d1 ReLU {M = [d0], N = [d1]} {data_type = "FP32"}
// TEIR-NEXT: teir.schedule {
// TEIR-NEXT:   teir.invoke zero -> zero_d0_d1
// TEIR-NEXT:   teir.invoke contraction -> gemm_d0_d1_d2
// TEIR-NEXT:   teir.invoke relu -> relu_d0_d1
// TEIR-NEXT: }

// CHECK:     llvm.func @matmul_relu(%A: !llvm.ptr, %B: !llvm.ptr, %C: !llvm.ptr) {
// CHECK-NOT: linalg.
// CHECK-NOT: teir.
// CHECK-NOT: memref.
// CHECK:     llvm.intr.fma
// CHECK:     llvm.return
