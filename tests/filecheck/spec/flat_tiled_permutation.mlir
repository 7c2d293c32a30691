// RUN: teir-opt %examples/spec/flat/tiled_permutation.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// flat form example tiled_permutation, as imported from tiled_permutation.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
      teir.axis a extent 2 strides [240, 12] offsets [0, 0]
      teir.axis c extent 4 strides [20, 120] offsets [0, 0]
      teir.axis d extent 5 strides [4, 24] offsets [0, 0]
      teir.axis b extent 3 strides [80, 4] offsets [0, 0]
      teir.primitive copy_db Copy {M = [d], N = [b]} {data_type = "FP32"}
      teir.schedule {
        teir.iter a over a {
          teir.iter c over c {
            teir.invoke copy -> copy_db
          }
        }
      }
    }
    func.return
  }
}


// CHECK-LABEL: func.func @kernel(%in0: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:  teir.axis a extent 2 strides [240, 12] offsets [0, 0]
// CHECK-NEXT:  teir.axis c extent 4 strides [20, 120] offsets [0, 0]
// CHECK-NEXT:  teir.axis d extent 5 strides [4, 24] offsets [0, 0]
// CHECK-NEXT:  teir.axis b extent 3 strides [80, 4] offsets [0, 0]
// CHECK-NEXT:  teir.primitive copy_db Copy {M = [d], N = [b]} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.iter a over a {
// CHECK-NEXT:  teir.iter c over c {
// CHECK-NEXT:  teir.invoke copy -> copy_db
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      a
// TREE-NEXT: └── c
// TREE-NEXT:     └── copy -> copy_db
