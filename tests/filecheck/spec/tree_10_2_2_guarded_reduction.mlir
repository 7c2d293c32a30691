// RUN: teir-opt %examples/spec/tree/10_2_2_guarded_reduction.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// tree form example 10_2_2_guarded_reduction, as imported from 10_2_2_guarded_reduction.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
      teir.axis k extent 7 strides [4, 4, 0] offsets [0, 0, 0]
      teir.primitive zero_prim Zero {M = [], N = []} {data_type = "FP32"}
      teir.primitive contraction_prim Contraction {M = [], N = [], K = []} {data_type = "FP32"}
      teir.primitive relu_prim ReLU {M = [], N = []} {data_type = "FP32"}
      teir.schedule {
        teir.iter k over k {
          teir.invoke zero -> zero_prim [first(k)]
          teir.invoke contraction -> contraction_prim
          teir.invoke relu -> relu_prim [last(k)]
        }
      }
    }
    func.return
  }
}


// CHECK-LABEL: func.func @kernel(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:  teir.axis k extent 7 strides [4, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:  teir.primitive zero_prim Zero {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.primitive contraction_prim Contraction {M = [], N = [], K = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.primitive relu_prim ReLU {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.iter k over k {
// CHECK-NEXT:  teir.invoke zero -> zero_prim [first(k)]
// CHECK-NEXT:  teir.invoke contraction -> contraction_prim
// CHECK-NEXT:  teir.invoke relu -> relu_prim [last(k)]
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      k
// TREE-NEXT: ├── zero -> zero_prim  [first(k)]
// TREE-NEXT: ├── contraction -> contraction_prim
// TREE-NEXT: └── relu -> relu_prim  [last(k)]
