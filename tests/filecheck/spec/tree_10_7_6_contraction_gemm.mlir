// RUN: teir-opt %examples/spec/tree/10_7_6_contraction_gemm.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// tree form example 10_7_6_contraction_gemm, as imported from 10_7_6_contraction_gemm.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
      teir.axis p extent 4 strides [0, 512, 1536] offsets [0, 0, 0]
      teir.axis q extent 8 strides [0, 64, 192] offsets [0, 0, 0]
      teir.axis r extent 3 strides [512, 0, 64] offsets [0, 0, 0]
      teir.axis s extent 16 strides [4, 0, 4] offsets [0, 0, 0]
      teir.axis t extent 2 strides [1536, 32, 0] offsets [0, 0, 0]
      teir.axis u extent 8 strides [64, 4, 0] offsets [0, 0, 0]
      teir.primitive zero_sq Zero {M = [s], N = [q]} {data_type = "FP32"}
      teir.primitive gemm_squ Contraction {M = [s], N = [q], K = [u]} {data_type = "FP32"}
      teir.schedule {
        teir.iter p over p {
          teir.iter r over r {
            teir.invoke zero -> zero_sq
            teir.iter t over t {
              teir.invoke gemm -> gemm_squ
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
// CHECK-NEXT:  teir.axis p extent 4 strides [0, 512, 1536] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis q extent 8 strides [0, 64, 192] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis r extent 3 strides [512, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis s extent 16 strides [4, 0, 4] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis t extent 2 strides [1536, 32, 0] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis u extent 8 strides [64, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:  teir.primitive zero_sq Zero {M = [s], N = [q]} {data_type = "FP32"}
// CHECK-NEXT:  teir.primitive gemm_squ Contraction {M = [s], N = [q], K = [u]} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.iter p over p {
// CHECK-NEXT:  teir.iter r over r {
// CHECK-NEXT:  teir.invoke zero -> zero_sq
// CHECK-NEXT:  teir.iter t over t {
// CHECK-NEXT:  teir.invoke gemm -> gemm_squ
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      p
// TREE-NEXT: └── r
// TREE-NEXT:     ├── zero -> zero_sq
// TREE-NEXT:     └── t
// TREE-NEXT:         └── gemm -> gemm_squ
