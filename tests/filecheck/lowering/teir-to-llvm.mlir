// RUN: teir-opt %s -p teir-to-llvm -t llvm > %t.direct
// RUN: teir-opt %s -p teir-match-gemm,teir-fuse-epilogues,teir-to-scf,canonicalize,cse,teir-outline-parallel | teir-opt -p teir-lower-to-llvm-dialect,teir-gomp-launch -t llvm > %t.staged
// RUN: diff %t.direct %t.staged
// RUN: filecheck %s < %t.direct

// teir-to-llvm is teir-to-scf, teir-outline-parallel, teir-lower-to-llvm-dialect
// and teir-gomp-launch: the same LLVM IR when the stages print their IR and the
// next parses it back, lane-wise ReLU (teir_lane) included.

func.func @gemm_relu(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 32 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 32, 128] offsets [0, 0, 0]
    teir.axis k extent 8 strides [128, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive act ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke z -> zero
      teir.invoke c -> mm
      teir.invoke r -> act
    }
  }
  func.return
}

// CHECK:       define void @"gemm_relu"(ptr noalias %{{.*}}, ptr noalias %{{.*}}, ptr noalias %{{.*}})
// CHECK:         %[[NEG:.*]] = fcmp olt <8 x float> %[[ACC:[^,]*]], <float {{.*}}>
// CHECK-NEXT:    select <8 x i1> %[[NEG]], <8 x float> <float {{.*}}>, <8 x float> %[[ACC]]
