// RUN: teir-opt %examples/spec/tree/10_4_1_addressing.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// tree form example 10_4_1_addressing, as imported from 10_4_1_addressing.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
      teir.axis a extent 4 strides [32, 64] offsets [0, 0]
      teir.axis b extent 8 strides [4, 8] offsets [0, 0]
      teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
      teir.schedule {
        teir.iter a over a {
          teir.iter b over b {
            teir.invoke copy -> copy_scalar
          }
        }
      }
    }
    func.return
  }
}


// CHECK-LABEL: func.func @kernel(%in0: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:  teir.axis a extent 4 strides [32, 64] offsets [0, 0]
// CHECK-NEXT:  teir.axis b extent 8 strides [4, 8] offsets [0, 0]
// CHECK-NEXT:  teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.iter a over a {
// CHECK-NEXT:  teir.iter b over b {
// CHECK-NEXT:  teir.invoke copy -> copy_scalar
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      a
// TREE-NEXT: └── b
// TREE-NEXT:     └── copy -> copy_scalar
