// RUN: teir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// The diagnostics of linalg's named contractions (teir_dialect.linalg_ops).

func.func @matmul_two_maps(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>] ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  func.return
}

// CHECK: linalg.matmul: indexing_maps must be a list of three affine maps (a, b, out)

// -----

func.func @batch_matmul_rank(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
  linalg.batch_matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  func.return
}
// CHECK: linalg.batch_matmul: an operand of type memref<4x8xf32> has rank 2; its indexing map (d0, d1, d2, d3) -> (d0, d1, d3) expects rank 3

// -----

func.func @dot_operands(%x: memref<8xf32>, %s: memref<f32>) {
  linalg.dot ins(%x : memref<8xf32>) outs(%s : memref<f32>)
  func.return
}
// CHECK: linalg.dot takes 2 ins and 1 outs, got 1 ins and 1 outs

// -----

func.func @batch_matmul_maps(%A: memref<2x4x8xf32>, %B: memref<2x16x8xf32>, %C: memref<2x4x16xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%A, %B : memref<2x4x8xf32>, memref<2x16x8xf32>) outs(%C : memref<2x4x16xf32>)
  func.return
}
// CHECK: linalg.batch_matmul: TEIR reads this op with its default indexing_maps only; write other maps as a linalg.generic (mlir-opt --linalg-generalize-named-ops)

// -----

// A loop dimension's extents must agree across the operands (MLIR's verifier:
// "inferred input/output operand #2 has shape's dimension #0 to be 4, but found 16").
func.func @matmul_extents(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<16x16xf32>) {
  linalg.matmul ins(%A, %B : memref<4x8xf32>, memref<8x16xf32>) outs(%C : memref<16x16xf32>)
  func.return
}
// CHECK: linalg.matmul: loop dimension d0 has extent 4 in operand #0 and 16 in operand #2 (memref<16x16xf32>)

// -----

func.func @matvec_extents(%A: memref<4x8xf32>, %x: memref<6xf32>, %y: memref<4xf32>) {
  linalg.matvec ins(%A, %x : memref<4x8xf32>, memref<6xf32>) outs(%y : memref<4xf32>)
  func.return
}
// CHECK: linalg.matvec: loop dimension d1 has extent 8 in operand #0 and 6 in operand #1 (memref<6xf32>)
