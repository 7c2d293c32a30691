// RUN: teir-opt %examples/spec/tree/10_7_5_scalar_contraction.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// tree form example 10_7_5_scalar_contraction, as imported from 10_7_5_scalar_contraction.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
      teir.axis p extent 4 strides [0, 512, 1536] offsets [0, 0, 0]
      teir.axis q extent 8 strides [0, 64, 192] offsets [0, 0, 0]
      teir.axis r extent 3 strides [512, 0, 64] offsets [0, 0, 0]
      teir.axis s extent 16 strides [4, 0, 4] offsets [0, 0, 0]
      teir.axis t extent 2 strides [1536, 32, 0] offsets [0, 0, 0]
      teir.axis u extent 8 strides [64, 4, 0] offsets [0, 0, 0]
      teir.primitive zero_scalar Zero {M = [], N = []} {data_type = "FP32"}
      teir.primitive contraction_scalar Contraction {M = [], N = [], K = []} {data_type = "FP32"}
      teir.schedule {
        teir.iter p over p {
          teir.iter q over q {
            teir.iter r over r {
              teir.iter s over s {
                teir.invoke zero -> zero_scalar
                teir.iter t over t {
                  teir.iter u over u {
                    teir.invoke contraction -> contraction_scalar
                  }
                }
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
// CHECK-NEXT:  teir.axis p extent 4 strides [0, 512, 1536] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis q extent 8 strides [0, 64, 192] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis r extent 3 strides [512, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis s extent 16 strides [4, 0, 4] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis t extent 2 strides [1536, 32, 0] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis u extent 8 strides [64, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:  teir.primitive zero_scalar Zero {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.primitive contraction_scalar Contraction {M = [], N = [], K = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.iter p over p {
// CHECK-NEXT:  teir.iter q over q {
// CHECK-NEXT:  teir.iter r over r {
// CHECK-NEXT:  teir.iter s over s {
// CHECK-NEXT:  teir.invoke zero -> zero_scalar
// CHECK-NEXT:  teir.iter t over t {
// CHECK-NEXT:  teir.iter u over u {
// CHECK-NEXT:  teir.invoke contraction -> contraction_scalar
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      p
// TREE-NEXT: └── q
// TREE-NEXT:     └── r
// TREE-NEXT:         └── s
// TREE-NEXT:             ├── zero -> zero_scalar
// TREE-NEXT:             └── t
// TREE-NEXT:                 └── u
// TREE-NEXT:                     └── contraction -> contraction_scalar
