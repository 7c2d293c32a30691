// RUN: teir-opt %examples/spec/tree/10_7_4_scalar_batched_gemm_reordered.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// tree form example 10_7_4_scalar_batched_gemm_reordered, as imported from 10_7_4_scalar_batched_gemm_reordered.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
      teir.axis d extent 2 strides [60, 80, 48] offsets [0, 0, 0]
      teir.axis b extent 3 strides [20, 0, 16] offsets [0, 0, 0]
      teir.axis c extent 4 strides [0, 4, 4] offsets [0, 0, 0]
      teir.axis a extent 5 strides [4, 16, 0] offsets [0, 0, 0]
      teir.primitive zero_scalar Zero {M = [], N = []} {data_type = "FP32"}
      teir.primitive contraction_scalar Contraction {M = [], N = [], K = []} {data_type = "FP32"}
      teir.schedule {
        teir.iter b over b {
          teir.iter c over c {
            teir.iter d over d {
              teir.invoke zero -> zero_scalar
              teir.iter a over a {
                teir.invoke contraction -> contraction_scalar
              }
            }
          }
        }
      }
    }
    func.return
  }
}


// CHECK-LABEL: func.func @kernel(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:  teir.axis d extent 2 strides [60, 80, 48] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis b extent 3 strides [20, 0, 16] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis c extent 4 strides [0, 4, 4] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis a extent 5 strides [4, 16, 0] offsets [0, 0, 0]
// CHECK-NEXT:  teir.primitive zero_scalar Zero {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.primitive contraction_scalar Contraction {M = [], N = [], K = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.iter b over b {
// CHECK-NEXT:  teir.iter c over c {
// CHECK-NEXT:  teir.iter d over d {
// CHECK-NEXT:  teir.invoke zero -> zero_scalar
// CHECK-NEXT:  teir.iter a over a {
// CHECK-NEXT:  teir.invoke contraction -> contraction_scalar
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      b
// TREE-NEXT: └── c
// TREE-NEXT:     └── d
// TREE-NEXT:         ├── zero -> zero_scalar
// TREE-NEXT:         └── a
// TREE-NEXT:             └── contraction -> contraction_scalar
