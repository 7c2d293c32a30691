// RUN: teir-opt %examples/spec/tree/10_7_6_contraction_gemm.json -p teir-lift-brgemm | filecheck %s --check-prefix=SPEC
// RUN: teir-opt %examples/spec/tree/10_7_6_contraction_gemm.json -p teir-lift-brgemm,teir-lift-brgemm | filecheck %s --check-prefix=SPEC
// RUN: teir-opt %s --split-input-file -p teir-lift-brgemm | filecheck %s

// §10.7.6 becomes §10.7.7's shape: the t loop around gemm_squ turns into one
// invocation of brgemm_sqtu with K = [t, u] (t the batch-reduce axis); the
// GEMM primitive, no longer invoked, is dropped. Idempotent.

// SPEC:      teir.primitive zero_sq Zero {M = [s], N = [q]} {data_type = "FP32"}
// SPEC-NEXT: teir.primitive brgemm_sqtu Contraction {M = [s], N = [q], K = [t, u]} {data_type = "FP32"}
// SPEC-NEXT: teir.schedule {
// SPEC-NEXT:   teir.iter p over p {
// SPEC-NEXT:     teir.iter r over r {
// SPEC-NEXT:       teir.invoke zero -> zero_sq
// SPEC-NEXT:       teir.invoke gemm -> brgemm_sqtu
// SPEC-NEXT:     }
// SPEC-NEXT:   }
// SPEC-NEXT: }

func.func @not_a_reduction_axis(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 2 strides [64, 64, 64] offsets [0, 0, 0]
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 16, 16] offsets [0, 0, 0]
    teir.axis k extent 4 strides [16, 4, 0] offsets [0, 0, 0]
    teir.primitive g Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.invoke call -> g
      }
    }
  }
  func.return
}

// A batch axis (stride on out) is not a reduction: nothing changes.
// CHECK-LABEL: func.func @not_a_reduction_axis
// CHECK:         teir.iter b over b {
// CHECK-NEXT:      teir.invoke call -> g

// -----

func.func @guarded_or_shared(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis t extent 2 strides [64, 64, 0] offsets [0, 0, 0]
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 16, 16] offsets [0, 0, 0]
    teir.axis k extent 4 strides [16, 4, 0] offsets [0, 0, 0]
    teir.primitive g Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive z Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.iter t over t {
        teir.invoke zero -> z [first(t)]
        teir.invoke call -> g
      }
      teir.iter t2 over t {
        teir.invoke again -> g
      }
    }
  }
  func.return
}

// The first t loop has two children: unchanged. The second lifts, and the
// GEMM primitive stays because the first loop still invokes it.
// CHECK-LABEL: func.func @guarded_or_shared
// CHECK:         teir.primitive g Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
// CHECK-NEXT:    teir.primitive brgemm_mntk Contraction {M = [m], N = [n], K = [t, k]} {data_type = "FP32"}
// CHECK:         teir.iter t over t {
// CHECK-NEXT:      teir.invoke zero -> z [first(t)]
// CHECK-NEXT:      teir.invoke call -> g
// CHECK-NEXT:    }
// CHECK-NEXT:    teir.invoke again -> brgemm_mntk
