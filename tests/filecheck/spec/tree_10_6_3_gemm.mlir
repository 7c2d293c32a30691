// RUN: teir-opt %examples/spec/tree/10_6_3_gemm.json | filecheck %s
// RUN: %roundtrip
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=TREE

// tree form example 10_6_3_gemm, as imported from 10_6_3_gemm.json.

builtin.module {
  func.func @kernel(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
    teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
      teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
      teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
      teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
      teir.primitive zero_mn Zero {M = [m], N = [n]} {data_type = "FP32"}
      teir.primitive gemm_mnk Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
      teir.schedule {
        teir.invoke zero -> zero_mn
        teir.invoke gemm -> gemm_mnk
      }
    }
    func.return
  }
}


// CHECK-LABEL: func.func @kernel(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
// CHECK-NEXT:  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:  teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
// CHECK-NEXT:  teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:  teir.primitive zero_mn Zero {M = [m], N = [n]} {data_type = "FP32"}
// CHECK-NEXT:  teir.primitive gemm_mnk Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
// CHECK-NEXT:  teir.schedule {
// CHECK-NEXT:  teir.invoke zero -> zero_mn
// CHECK-NEXT:  teir.invoke gemm -> gemm_mnk
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
// CHECK-NEXT:  }

// TREE:      zero -> zero_mn
// TREE-NEXT: gemm -> gemm_mnk
