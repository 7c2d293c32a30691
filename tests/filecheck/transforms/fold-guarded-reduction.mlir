// RUN: teir-opt %s --split-input-file -p teir-fold-guarded-reduction | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_2_2_guarded_reduction.json -p teir-fold-guarded-reduction | filecheck %s --check-prefix=SPEC
// RUN: teir-opt %examples/spec/tree/10_7_6_contraction_gemm.json -p teir-fold-guarded-reduction,teir-match-gemm | filecheck %s --check-prefix=BRGEMM

// §10.2.2: k { zero [first(k)]; contraction; relu [last(k)] } is zero;
// contraction with K = [k]; relu.
// SPEC:      teir.primitive contraction_k Contraction {M = [], N = [], K = [k]}
// SPEC:      teir.schedule {
// SPEC-NEXT:   teir.invoke zero -> zero_prim
// SPEC-NEXT:   teir.invoke contraction -> contraction_k
// SPEC-NEXT:   teir.invoke relu -> relu_prim
// SPEC-NEXT: }

// §10.7.6's t loop around gemm_squ folds into a BRGEMM (§10.7.7).
// BRGEMM: teir.primitive brgemm_sqtu Contraction {M = [s], N = [q], K = [t, u]} {data_type = "FP32"} attributes {kernel = #teir.kernel<brgemm

// A rank-1 update tile under a guarded k loop becomes a GEMM tile; the loop's
// guard moves onto the three invocations.
func.func @tile(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis e extent 2 strides [0, 0, 0] offsets [0, 0, 0]
    teir.axis m extent 16 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 8 strides [0, 64, 64] offsets [0, 0, 0]
    teir.axis k extent 16 strides [64, 4, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive c Contraction {M = [m], N = [n], K = []} {data_type = "FP32"}
    teir.primitive r ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.iter e over e {
        teir.iter k over k [last(e)] {
          teir.invoke zero -> z [first(k)]
          teir.invoke mac -> c
          teir.invoke relu -> r [last(k)]
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @tile
// CHECK:      teir.primitive gemm_mnk Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
// CHECK:      teir.iter e over e {
// CHECK-NEXT:   teir.invoke zero -> z [last(e)]
// CHECK-NEXT:   teir.invoke mac -> gemm_mnk [last(e)]
// CHECK-NEXT:   teir.invoke relu -> r [last(e)]
// CHECK-NEXT: }

// -----

// Not folded: k moves out (it is not a reduction axis), the ReLU is not last(k).
func.func @kept(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 4 strides [4, 4, 4] offsets [0, 0, 0]
    teir.axis j extent 4 strides [16, 16, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.primitive r ReLU {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.invoke mac -> c
      }
      teir.iter j over j {
        teir.invoke mac2 -> c
        teir.invoke relu -> r [first(j)]
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @kept
// CHECK:      teir.iter k over k {
// CHECK-NEXT:   teir.invoke mac -> c
// CHECK:      teir.iter j over j {
// CHECK-NEXT:   teir.invoke mac2 -> c
// CHECK-NEXT:   teir.invoke relu -> r [first(j)]

// -----

// A loop around a BRGEMM stays: a third K axis would make it a general loop nest.
func.func @brgemm_kept(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 16 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 8 strides [0, 64, 64] offsets [0, 0, 0]
    teir.axis k extent 16 strides [64, 4, 0] offsets [0, 0, 0]
    teir.axis b extent 2 strides [1024, 512, 0] offsets [0, 0, 0]
    teir.axis c extent 3 strides [2048, 1024, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"}
    teir.schedule {
      teir.iter c over c {
        teir.invoke mac -> c
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @brgemm_kept
// CHECK:      teir.iter c over c {
// CHECK-NEXT:   teir.invoke mac -> c
