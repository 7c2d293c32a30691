// RUN: teir-opt %s -p teir-match-gemm,teir-fuse-epilogues,teir-to-scf | filecheck %s
// RUN: teir-opt %s -p teir-match-gemm,teir-to-scf | filecheck %s --check-prefix=UNFUSED

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

// "TTT" (A k-contiguous, B and C n-contiguous): C^T = B^T A^T, so the same
// kernel runs with the roles of (A, m) and (B, n) swapped: vector loads of B
// along n, broadcasts of A, vector.fma, vector stores of C along n.

func.func @gemm_ttt(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [16, 0, 128] offsets [0, 0, 0]
    teir.axis n extent 32 strides [0, 4, 4] offsets [0, 0, 0]
    teir.axis k extent 4 strides [4, 128, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK-LABEL: func.func @gemm_ttt
// CHECK:         vector.load %out[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK:         scf.for {{.*}} iter_args(
// CHECK:           vector.load %in1[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           memref.load %in0[%{{.*}}] : memref<?xf32>
// CHECK-NEXT:      vector.broadcast %{{.*}} : f32 to vector<{{[0-9]+}}xf32>
// CHECK-NEXT:      vector.fma
// CHECK:         vector.store %{{.*}}, %out[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK-LABEL: func.func @gemm_nnt

// "NNT" (C n-contiguous, A m-contiguous, B k-contiguous): the planner's cost
// model (teir_lowering.codegen.gemm_plan.plan_gemm) puts the vectors along n,
// where C is contiguous, and packs B into a scratch buffer laid out along n (k = 4
// is shorter than a vector, and B's n steps, 8 elements, too long to load as
// contiguous vectors: gathered lane by lane), rather than transposing L x L
// blocks of accumulators into rows of C. The fused Zero: no load of C.

func.func @gemm_nnt(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 16 strides [4, 0, 64] offsets [0, 0, 0]
    teir.axis n extent 16 strides [0, 32, 4] offsets [0, 0, 0]
    teir.axis k extent 4 strides [64, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke z -> zero
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK-NOT:     load %out
// CHECK:         %[[B:.*]] = memref.alloca() {alignment = 64 : i64} : memref<64xf32>
// CHECK-NOT:     load %out
// CHECK:         memref.load %in1
// CHECK:         vector.insert
// CHECK:         vector.store %{{.*}}, %[[B]][%{{.*}}] : memref<64xf32>, vector<{{[0-9]+}}xf32>
// CHECK-NOT:     load %out
// CHECK:         scf.for {{.*}} iter_args(
// CHECK:           vector.load %[[B]][%{{.*}}] : memref<64xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           vector.broadcast
// CHECK-NEXT:      vector.fma
// CHECK-NOT:     vector.shuffle
// CHECK:         vector.store %{{.*}}, %out[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK-LABEL: func.func @gemm_tnn

// "TNN" (A and B k-contiguous; k long and m, n short, where the cost model
// prefers it to gathered or packed outer products): the dot kernel. Vector
// accumulators along k, vector loads of A rows and B columns, then the
// accumulators are reduced together by shuffles and adds and each sum is added
// to its element of C.

func.func @gemm_tnn(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 3 strides [1024, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 1024, 12] offsets [0, 0, 0]
    teir.axis k extent 256 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK:         %[[NEG0:.*]] = arith.constant dense<-0.000000e+00> : vector<{{[0-9]+}}xf32>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[NEG0]]
// CHECK:           vector.load %in0[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK:           vector.load %in1[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK-NEXT:      vector.fma
// CHECK:         vector.shuffle
// CHECK:         arith.addf %{{.*}}, %{{.*}} : vector<{{[0-9]+}}xf32>
// CHECK:         %[[SUM:.*]] = vector.extract %{{.*}}[0] : f32 from vector<{{[0-9]+}}xf32>
// CHECK:         %[[C:.*]] = memref.load %out[%{{.*}}] : memref<?xf32>
// CHECK-NEXT:    %[[NEW:.*]] = arith.addf %[[C]], %[[SUM]] : f32
// CHECK-NEXT:    memref.store %[[NEW]], %out[%{{.*}}] : memref<?xf32>
// CHECK-LABEL: func.func @gemm_relu

// Zero, GEMM and ReLU of the same tile: one kernel. The accumulators start at 0,
// and select(x < 0, 0, x) (lane-wise) applies to each before its one store; no
// second pass reads C.

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

// CHECK-NOT:     load %out
// CHECK:         %[[ACC:[0-9]+]], %{{.*}} = scf.for
// CHECK:           vector.fma
// CHECK:         %[[NEG:.*]] = teir_lane.cmpf olt, %[[ACC]], %[[Z:.*]] : vector<{{[0-9]+}}xf32>
// CHECK-NEXT:    %[[R:.*]] = teir_lane.select %[[NEG]], %[[Z]], %[[ACC]] : vector<{{[0-9]+}}xi1>, vector<{{[0-9]+}}xf32>
// CHECK:         vector.store %[[R]], %out[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK-NOT:     load %out

// Without teir-fuse-epilogues nothing records the fusion: the Zero, the kernel
// (loading C) and the ReLU (loading C again) run one after the other.
// UNFUSED-LABEL: func.func @gemm_relu
// UNFUSED:         vector.store %{{.*}}, %out
// UNFUSED:         vector.load %out
// UNFUSED:         vector.fma
// UNFUSED:         vector.store %{{.*}}, %out
// UNFUSED:         %[[C:.*]] = vector.load %out
// UNFUSED-NEXT:    %[[Z:.*]] = arith.constant dense<0.000000e+00>
// UNFUSED-NEXT:    teir_lane.cmpf olt, %[[C]], %[[Z]]
// UNFUSED-LABEL: func.func @recorded

// teir-to-scf reads the decision from the IR: a recorded epilogue fuses without
// teir-fuse-epilogues in the pipeline (UNFUSED), and the Zero, the first node
// of the function, emits no code of its own.

func.func @recorded(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 32 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 32, 128] offsets [0, 0, 0]
    teir.axis k extent 8 strides [128, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 32, n = 4, k = 8, lda = 32, ldb = 8, ldc = 32, trans = "NNN">}
    teir.primitive act ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke z -> zero
      teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = z, relu = r>}
      teir.invoke r -> act
    }
  }
  func.return
}

// UNFUSED-NOT:     {{load|store}} %out
// UNFUSED:         %[[ACC:[0-9]+]], %{{.*}} = scf.for
// UNFUSED:           vector.fma
// UNFUSED:         %[[NEG:.*]] = teir_lane.cmpf olt, %[[ACC]], %{{.*}} : vector<{{[0-9]+}}xf32>
// UNFUSED-NOT:     load %out
// UNFUSED:         func.return
// CHECK-LABEL: func.func @recorded
// CHECK-NOT:     load %out
// CHECK:         teir_lane.cmpf olt
// CHECK-NOT:     load %out
// CHECK-LABEL: func.func @relu_after_k_loop

// A ReLU after a sequential K loop (w: no stride on out) whose last child is the
// GEMM of its tile runs in the loop's last iteration: applied to the values
// stored when w is at its last index, selected by that condition.

func.func @relu_after_k_loop(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis w extent 3 strides [1024, 1024, 0] offsets [0, 0, 0]
    teir.axis m extent 32 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 32, 128] offsets [0, 0, 0]
    teir.axis k extent 8 strides [128, 4, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive act ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.iter w over w {
        teir.invoke c -> mm
      }
      teir.invoke r -> act
    }
  }
  func.return
}

// CHECK:         scf.for %w = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %[[LAST:.*]] = arith.cmpi eq, %w, %{{.*}} : index
// CHECK:           %[[ACC:[0-9]+]], %{{.*}} = scf.for
// CHECK:           %[[NEG:.*]] = teir_lane.cmpf olt, %[[ACC]], %[[Z:.*]] : vector<{{[0-9]+}}xf32>
// CHECK-NEXT:      %[[R:.*]] = teir_lane.select %[[NEG]], %[[Z]], %[[ACC]] : vector<{{[0-9]+}}xi1>, vector<{{[0-9]+}}xf32>
// CHECK-NEXT:      %[[V:.*]] = arith.select %[[LAST]], %[[R]], %[[ACC]] : vector<{{[0-9]+}}xf32>
// CHECK:           vector.store %[[V]], %out[%{{.*}}] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK-NOT:     load %out
// CHECK:         func.return
// CHECK-LABEL: func.func @gemm_far_rows

// B's K steps (rows of 4096 floats) a page or more apart, read by two column
// panels, and the inputs read from memory at every call (`streamed_in`, as
// teir-mark-streamed-out marks inputs of 12 MB and more): B is copied into the
// packed X, each K step's run a stream of its own, and the copy prefetches the
// run two K steps ahead (2 x 4096 = 8192 elements past each load), ahead of the
// hardware prefetchers.

func.func @gemm_far_rows(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis i extent 32 strides [4096, 0, 16384] offsets [0, 0, 0]
    teir.axis j extent 256 strides [0, 4, 4] offsets [0, 0, 0]
    teir.axis p extent 128 strides [4, 16384, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [i], N = [j], K = [p]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke c -> mm
    }
  } attributes {streamed_in}
  func.return
}

// CHECK:         %[[X:.*]] = memref.alloca() {alignment = 64 : i64} : memref<{{[0-9]+}}xf32>
// CHECK:         teir_lane.prefetch %in1[%[[AT:.*]]] ahead 8192 : memref<?xf32>
// CHECK-NEXT:    %[[V:.*]] = vector.load %in1[%[[AT]]] : memref<?xf32>, vector<{{[0-9]+}}xf32>
// CHECK-NEXT:    vector.store %[[V]], %[[X]][%{{.*}}] : memref<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>
// CHECK:         scf.for {{.*}} iter_args(
// CHECK:           vector.load %[[X]][%{{.*}}]
// CHECK-LABEL: func.func @gemm_near_rows

// The same with B's rows 1020 floats apart: B is copied too, but its K steps
// share pages and the hardware prefetchers follow them: nothing is prefetched;
// nor is a B the caches hold (the first without `streamed_in`, below).

func.func @gemm_near_rows(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis i extent 32 strides [4096, 0, 16384] offsets [0, 0, 0]
    teir.axis j extent 256 strides [0, 4, 4] offsets [0, 0, 0]
    teir.axis p extent 128 strides [4, 4080, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [i], N = [j], K = [p]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke c -> mm
    }
  } attributes {streamed_in}
  func.return
}

func.func @gemm_far_rows_cached(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis i extent 32 strides [4096, 0, 16384] offsets [0, 0, 0]
    teir.axis j extent 256 strides [0, 4, 4] offsets [0, 0, 0]
    teir.axis p extent 128 strides [4, 16384, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [i], N = [j], K = [p]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK:         memref.alloca
// CHECK-NOT:     teir_lane.prefetch
// CHECK:         func.return
// CHECK-LABEL: func.func @gemm_far_rows_cached
// CHECK:         memref.alloca
// CHECK-NOT:     teir_lane.prefetch
// CHECK:         func.return
