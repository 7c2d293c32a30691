// RUN: %roundtrip
// RUN: %roundtrip-generic
// RUN: teir-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// linalg's named contractions that xDSL 0.74 lacks (teir_dialect.linalg_ops)
// and memref.copy's custom form parse and print as MLIR writes them; linalg.matmul reads MLIR's
// `indexing_maps = [...]` keyword form and prints it when the maps are not
// the default ones (xDSL's printer dropped them, losing the transposition).

func.func @named(%A: memref<4x8xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>, %x: memref<8xf32>, %y: memref<4xf32>, %s: memref<f32>, %bA: memref<2x4x8xf32>, %bB: memref<2x8x16xf32>, %bC: memref<2x4x16xf32>) {
  linalg.batch_matmul ins(%bA, %bB : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%bC : memref<2x4x16xf32>)
  linalg.matvec ins(%A, %x : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4xf32>)
  linalg.dot ins(%x, %x : memref<8xf32>, memref<8xf32>) outs(%s : memref<f32>)
  func.return
}

// CHECK-LABEL: func.func @named
// CHECK-NEXT:    linalg.batch_matmul ins(%bA, %bB : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%bC : memref<2x4x16xf32>)
// CHECK-NEXT:    linalg.matvec ins(%A, %x : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4xf32>)
// CHECK-NEXT:    linalg.dot ins(%x, %x : memref<8xf32>, memref<8xf32>) outs(%s : memref<f32>)

// -----

func.func @matmul_maps(%At: memref<8x4xf32>, %B: memref<8x16xf32>, %C: memref<4x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%At, %B : memref<8x4xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  linalg.matmul {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]} ins(%At, %B : memref<8x4xf32>, memref<8x16xf32>) outs(%C : memref<4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @matmul_maps
// CHECK-NEXT:    linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%At, %B
// CHECK-NEXT:    linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%At, %B

// -----

// memref.copy in MLIR's custom form (one-shot bufferization prints it).
func.func @copy(%a: memref<4x16xf32>, %b: memref<4x16xf32>) {
  memref.copy %a, %b : memref<4x16xf32> to memref<4x16xf32>
  func.return
}

// CHECK-LABEL: func.func @copy
// CHECK-NEXT:    memref.copy %a, %b : memref<4x16xf32> to memref<4x16xf32>

// -----

// A named op's own maps written out (MLIR 20's form) read as the op.
func.func @batch_matmul_maps(%A: memref<2x4x8xf32>, %B: memref<2x8x16xf32>, %C: memref<2x4x16xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%A, %B : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%C : memref<2x4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @batch_matmul_maps
// CHECK-NEXT:    linalg.batch_matmul ins(%A, %B : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%C : memref<2x4x16xf32>)

// -----

// Mixed precision (f16 x f16 -> f32): the body casts each input to out's type
// first, as MLIR's named ops do (convert-linalg-to-teir then refuses it by name).
func.func @mixed(%A: memref<4x8xf16>, %B: memref<8x16xf16>, %C: memref<4x16xf32>) {
  linalg.matmul ins(%A, %B : memref<4x8xf16>, memref<8x16xf16>) outs(%C : memref<4x16xf32>)
  func.return
}

// CHECK-LABEL: func.func @mixed
// CHECK-NEXT:    linalg.matmul ins(%A, %B : memref<4x8xf16>, memref<8x16xf16>) outs(%C : memref<4x16xf32>)
// GENERIC-LABEL: sym_name = "mixed"
// GENERIC:       ^{{.*}}(%[[A:.*]]: f16, %[[B:.*]]: f16, %[[C:.*]]: f32):
// GENERIC-NEXT:    %[[WA:.*]] = "arith.extf"(%[[A]]) : (f16) -> f32
// GENERIC-NEXT:    %[[WB:.*]] = "arith.extf"(%[[B]]) : (f16) -> f32
// GENERIC-NEXT:    %[[P:.*]] = "arith.mulf"(%[[WA]], %[[WB]])
// GENERIC-NEXT:    %[[S:.*]] = "arith.addf"(%[[P]], %[[C]])
// GENERIC-NEXT:    "linalg.yield"(%[[S]]) : (f32) -> ()
