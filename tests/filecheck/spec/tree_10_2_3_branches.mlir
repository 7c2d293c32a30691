// RUN: teir-opt %examples/spec/tree/10_2_3_branches.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// tree form example 10_2_3_branches, as imported from 10_2_3_branches.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
      teir.axis r extent 3 strides [24, 24] offsets [0, 0]
      teir.axis s extent 4 strides [4, 4] offsets [0, 0]
      teir.axis t extent 2 strides [4, 4] offsets [16, 16]
      teir.primitive p_s Copy {M = [], N = []} {data_type = "FP32"}
      teir.primitive p_t ReLU {M = [], N = []} {data_type = "FP32"}
      teir.schedule {
        teir.iter r over r {
          teir.iter s over s {
            teir.invoke op_s -> p_s
          }
          teir.iter t over t {
            teir.invoke op_t -> p_t
          }
        }
      }
    }
    func.return
  }
}


// CHECK-LABEL: func.func @kernel(%in0: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:  teir.axis r extent 3 strides [24, 24] offsets [0, 0]
// CHECK-NEXT:  teir.axis s extent 4 strides [4, 4] offsets [0, 0]
// CHECK-NEXT:  teir.axis t extent 2 strides [4, 4] offsets [16, 16]
// CHECK-NEXT:  teir.primitive p_s Copy {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.primitive p_t ReLU {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.iter r over r {
// CHECK-NEXT:  teir.iter s over s {
// CHECK-NEXT:  teir.invoke op_s -> p_s
// CHECK-NEXT:  }
// CHECK-NEXT:  teir.iter t over t {
// CHECK-NEXT:  teir.invoke op_t -> p_t
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      r
// TREE-NEXT: ├── s
// TREE-NEXT: │   └── op_s -> p_s
// TREE-NEXT: └── t
// TREE-NEXT:     └── op_t -> p_t
