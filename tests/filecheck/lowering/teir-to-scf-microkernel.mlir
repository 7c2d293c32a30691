// RUN: teir-opt %s -p teir-to-scf | filecheck %s

// A matched BRGEMM (column-major A and C) lowers to a register-blocked
// microkernel: C blocks in vector registers across the batch-reduce and K
// loops, vector loads of A, broadcasts of B, vector.fma. The Zero of the same
// tile just before it is fused: the accumulators start at 0 and C is not
// loaded. (The vector width follows the host, hence the regex.)

func.func @brgemm(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 64 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 8 strides [0, 64, 256] offsets [0, 0, 0]
    teir.axis k extent 16 strides [256, 4, 0] offsets [0, 0, 0]
    teir.axis b extent 2 strides [4096, 512, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke z -> zero
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK-LABEL: func.func @brgemm
// CHECK-NOT:     memref.store
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<{{[0-9]+}}xf32>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]
// CHECK:           scf.for {{.*}} iter_args(
// CHECK:             vector.load %in0[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK:             memref.load %in1[%{{.*}}] : memref<?xf32>
// CHECK-NEXT:        vector.broadcast %{{.*}} : f32 to vector<{{[0-9]+}}xf32>
// CHECK-NEXT:        vector.fma
// CHECK:         vector.store %{{.*}}, %out[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
