// RUN: teir-opt %examples/spec/tree/10_2_1_minimal.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// tree form example 10_2_1_minimal, as imported from 10_2_1_minimal.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
      teir.axis x extent 6 strides [4, 4] offsets [0, 0]
      teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
      teir.schedule {
        teir.iter x over x {
          teir.invoke op -> p
        }
      }
    }
    func.return
  }
}


// CHECK-LABEL: func.func @kernel(%in0: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:  teir.axis x extent 6 strides [4, 4] offsets [0, 0]
// CHECK-NEXT:  teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.iter x over x {
// CHECK-NEXT:  teir.invoke op -> p
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      x
// TREE-NEXT: └── op -> p
