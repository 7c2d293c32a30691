// RUN: teir-opt %s --split-input-file -p teir-match-gemm,teir-to-scf | filecheck %s

// The segmented dot (lit pins the AVX2 description: 8 lanes of f32). b = 6 makes
// a period of lcm(6, 8) = 24 elements, three vectors; two periods at once give
// six accumulators, carried through the loop over whole steps of A's (j, b) run
// (29 x 6 = 174 elements: three steps of 48, then the rest unrolled, its last
// vector a part one). Each b's lanes are then shuffled out of the period's
// vectors, six at a time, and added to out's row (b at a stride of 11 floats).

func.func @segmented(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 6 strides [4, 4, 44] offsets [0, 0, 0]
    teir.axis i extent 11 strides [696, 0, 4] offsets [0, 0, 0]
    teir.axis j extent 29 strides [24, 24, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [b], K = [j]} {data_type = "FP32"}
    teir.schedule {
      teir.iter i over i {
        teir.invoke x -> c
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @segmented
// CHECK:         scf.for %i =
// CHECK:           %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK:           %[[STEP:.*]] = arith.constant 48 : index
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[STEP]] iter_args(%{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]]) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-6: vector.fma {{.*}} : vector<8xf32>
// CHECK:             scf.yield
// CHECK-NOT:       scf.for
// CHECK:           vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3, 4, 5] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:      vector.shuffle %{{.*}}, %{{.*}} [6, 7, 8, 9, 10, 11] : vector<8xf32>, vector<8xf32>
// CHECK-NEXT:      arith.addf %{{.*}}, %{{.*}} : vector<6xf32>
// CHECK:           arith.addf %{{.*}}, %{{.*}} : vector<6xf32>
// CHECK-COUNT-6:   memref.store %{{.*}}, %out[%{{.*}}] : memref<?xf32>
// CHECK-NOT:       scf.for

// -----

// FP64 at 4 lanes: b = 6 spans two vectors and a half, so each b's lanes are
// taken one by one (vector.extract) and added to out, then stored.

func.func @segmented_wide(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis b extent 6 strides [8, 8, 8] offsets [0, 0, 0]
    teir.axis i extent 3 strides [96, 0, 48] offsets [0, 0, 0]
    teir.axis j extent 2 strides [48, 48, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [i], N = [b], K = [j]} {data_type = "FP64"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @segmented_wide
// CHECK:         scf.for
// CHECK-NOT:       vector.shuffle
// CHECK:           vector.fma {{.*}} : vector<4xf64>
// CHECK:           vector.extract %{{.*}}[0] : f64 from vector<4xf64>
// CHECK:           arith.addf %{{.*}}, %{{.*}} : f64
// CHECK:           memref.store %{{.*}}, %out[%{{.*}}] : memref<?xf64>

// -----

// The periodic product at 4 lanes of f64 (AVX2): b = 7 makes a period of 28
// elements, seven vectors, held as accumulators for blocks of 28 elements of
// out's run (7 x 5 = 35: one whole block, then one vector and 3 lanes) across
// the loop over j; per j, the 7 elements of the vector are loaded once and
// shuffled into the period's seven patterns.

func.func @periodic(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis b extent 7 strides [8, 8, 8] offsets [0, 0, 0]
    teir.axis i extent 5 strides [56, 0, 56] offsets [0, 0, 0]
    teir.axis j extent 3 strides [280, 56, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [i], N = [b], K = [j]} {data_type = "FP64"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @periodic
// CHECK:         scf.for {{.*}} step %{{.*}} {
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>, vector<4xf64>)
// CHECK:             vector.load %in1[%{{.*}}] : memref<?xf64>, vector<7xf64>
// CHECK-NEXT:        vector.shuffle %{{.*}}, %{{.*}} [0, 1, 2, 3] : vector<7xf64>, vector<7xf64>
// CHECK-NEXT:        vector.shuffle %{{.*}}, %{{.*}} [4, 5, 6, 0] : vector<7xf64>, vector<7xf64>
// CHECK-COUNT-7:     vector.fma {{.*}} : vector<4xf64>
// CHECK-COUNT-7:   vector.store %{{.*}}, %out[%{{.*}}] : memref<?xf64>, vector<4xf64>
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (vector<4xf64>, vector<4xf64>)
// CHECK:         vector.store %{{.*}}, %out[%{{.*}}] : memref<?xf64>, vector<4xf64>
// CHECK:         vector.store %{{.*}}, %out[%{{.*}}] : memref<?xf64>, vector<3xf64>
