// RUN: teir-opt %examples/spec/flat/records_example.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// flat form example records_example, as imported from records_example.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
      teir.axis p extent 4 strides [0, 512, 1536] offsets [0, 0, 0]
      teir.axis r extent 3 strides [512, 0, 64] offsets [0, 0, 0]
      teir.axis t extent 2 strides [1536, 32, 0] offsets [0, 0, 0]
      teir.axis s extent 16 strides [4, 0, 4] offsets [0, 0, 0]
      teir.axis q extent 8 strides [0, 64, 192] offsets [0, 0, 0]
      teir.axis u extent 8 strides [64, 4, 0] offsets [0, 0, 0]
      teir.primitive zero_sq Zero {M = [s], N = [q]} {data_type = "FP32"}
      teir.primitive brgemm_sqtu Contraction {M = [s], N = [q], K = [t, u]} {data_type = "FP32"}
      teir.schedule {
        teir.iter p over p parallel {
          teir.iter r over r parallel {
            teir.invoke zero -> zero_sq
            teir.invoke brgemm -> brgemm_sqtu
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
// CHECK-NEXT:  teir.axis r extent 3 strides [512, 0, 64] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis t extent 2 strides [1536, 32, 0] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis s extent 16 strides [4, 0, 4] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis q extent 8 strides [0, 64, 192] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis u extent 8 strides [64, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:  teir.primitive zero_sq Zero {M = [s], N = [q]} {data_type = "FP32"}
// CHECK-NEXT:  teir.primitive brgemm_sqtu Contraction {M = [s], N = [q], K = [t, u]} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.iter p over p parallel {
// CHECK-NEXT:  teir.iter r over r parallel {
// CHECK-NEXT:  teir.invoke zero -> zero_sq
// CHECK-NEXT:  teir.invoke brgemm -> brgemm_sqtu
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      p  (parallel)
// TREE-NEXT: └── r  (parallel)
// TREE-NEXT:     ├── zero -> zero_sq
// TREE-NEXT:     └── brgemm -> brgemm_sqtu
