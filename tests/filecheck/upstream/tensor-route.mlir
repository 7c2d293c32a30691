// linalg on tensors through upstream MLIR into TEIR: mlir-opt-19 bufferizes
// (one-shot, results as out-parameters; generalizing the named ops too in the
// second RUN), convert-linalg-to-teir takes the fill and the matmul into one
// GEMM of the temporary and the memref.copy into a Copy to the out-parameter.
// tests/test_upstream_mlir.py runs this route against numpy.

// REQUIRES: mlir-opt-19
// RUN: mlir-opt-19 %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --buffer-results-to-out-params | teir-opt -p convert-linalg-to-teir,teir-optimize | filecheck %s
// RUN: mlir-opt-19 %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --buffer-results-to-out-params --linalg-generalize-named-ops | teir-opt -p convert-linalg-to-teir,teir-optimize | filecheck %s

func.func @mm(%A: tensor<16x8xf32>, %B: tensor<8x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x32xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
  %C = linalg.matmul ins(%A, %B : tensor<16x8xf32>, tensor<8x32xf32>) outs(%filled : tensor<16x32xf32>) -> tensor<16x32xf32>
  func.return %C : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @mm(
// CHECK-SAME:    %{{.*}}: memref<16x8xf32>, %{{.*}}: memref<8x32xf32>, %[[OUT:[a-z0-9]*]]: memref<16x32xf32>)
// CHECK:         %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK:         teir.primitive zero_{{.*}} Zero
// CHECK-NEXT:    teir.primitive gemm_{{.*}} Contraction {{.*}}kernel = #teir.kernel<gemm m = 16, n = 32, k = 8
// CHECK:         memref.reinterpret_cast %[[OUT]]
// CHECK:         teir.primitive {{.*}} Copy
// CHECK-NOT:   linalg.
// CHECK-NOT:   memref.copy
