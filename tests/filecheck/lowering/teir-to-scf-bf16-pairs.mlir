// RUN: env TEIR_HOST=avx512 teir-opt %s --split-input-file -p teir-match-gemm,teir-fuse-epilogues,teir-to-scf | filecheck %s
// RUN: env TEIR_HOST=avx2 teir-opt %s --split-input-file --verify-diagnostics -p teir-match-gemm,teir-to-scf | filecheck %s --check-prefix=AVX2

// A BF16 GEMM whose metadata opts into paired products (bf16_products =
// "pairs"): on an AVX512-BF16 host the microkernel takes two k steps at once,
// X's two rows interleaved into 32 bf16 and each column of Y broadcast as one
// 32-bit pair, one teir_lane.dot_bf16_pairs (vdpbf16ps) per vector and column;
// K = 7 is odd, so the last k step is an ordinary widened multiply-add. A host
// without AVX512-BF16 refuses the key by name.

func.func @gemm_pairs(%in0: memref<?xbf16>, %in1: memref<?xbf16>, %out: memref<?xbf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xbf16>, memref<?xbf16>, memref<?xbf16>) {
    teir.axis m extent 32 strides [2, 0, 2] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 14, 64] offsets [0, 0, 0]
    teir.axis k extent 7 strides [64, 2, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "BF16", bf16_products = "pairs"}
    teir.schedule {
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK-LABEL: func.func @gemm_pairs
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK:           %[[X0:.*]] = vector.load %in0[%{{.*}}] : memref<?xbf16>, vector<16xbf16>
// CHECK:           %[[X1:.*]] = vector.load %in0[%{{.*}}] : memref<?xbf16>, vector<16xbf16>
// CHECK:           %[[XX:.*]] = vector.shuffle %[[X0]], %[[X1]] [0, 16, 1, 17, 2, 18
// CHECK:           %[[XP:.*]] = vector.bitcast %[[XX]] : vector<32xbf16> to vector<16xi32>
// CHECK:           %[[Y:.*]] = vector.load %in1[%{{.*}}] : memref<?xbf16>, vector<2xbf16>
// CHECK:           %[[YY:.*]] = vector.shuffle %[[Y]], %[[Y]] [0, 1, 0, 1
// CHECK:           %[[YP:.*]] = vector.bitcast %[[YY]] : vector<32xbf16> to vector<16xi32>
// CHECK:           teir_lane.dot_bf16_pairs %{{.*}}, %[[XP]], %[[YP]] : vector<16xf32>, vector<16xi32>
// CHECK:         scf.for
// CHECK:           vector.fma
// CHECK-NOT:     teir_lane.dot_bf16_pairs
// CHECK:         func.return

// AVX2: lowering: primitive 'mm' has metadata bf16_products = pairs, which needs AVX512-BF16 (vdpbf16ps); this host (pinned avx2 (Zen 3-like)) has none: drop the key for sequential products

// -----

// X contiguous along k (A's rows, or B's columns when the planner puts the
// vectors along n): packed by register transposes of the pairs, 2L k steps of L
// rows as one L x L transpose of 32-bit pairs stored as f32 slots, the k steps
// past them singly; the pair loop reads the slots back.

func.func @gemm_packed_pairs(%in0: memref<?xbf16>, %in1: memref<?xbf16>, %out: memref<?xbf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xbf16>, memref<?xbf16>, memref<?xbf16>) {
    teir.axis m extent 32 strides [80, 0, 2] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 80, 64] offsets [0, 0, 0]
    teir.axis k extent 40 strides [2, 2, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "BF16", bf16_products = "pairs"}
    teir.schedule {
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK-LABEL: func.func @gemm_packed_pairs
// CHECK:         %[[ROW:.*]] = vector.load %in{{[01]}}[%{{.*}}] : memref<?xbf16>, vector<[[W:[0-9]+]]xbf16>
// CHECK-NEXT:    vector.bitcast %[[ROW]] : vector<[[W]]xbf16> to vector<[[L:[0-9]+]]xf32>
// CHECK:         %[[SLOTS:.*]] = vector.load %{{.*}}[%{{.*}}] : memref<{{[0-9]+}}xf32>, vector<[[L]]xf32>
// CHECK-NEXT:    %[[PAIRS:.*]] = vector.bitcast %[[SLOTS]] : vector<[[L]]xf32> to vector<[[L]]xi32>
// CHECK:         teir_lane.dot_bf16_pairs %{{.*}}, %[[PAIRS]], %{{.*}} : vector<[[L]]xf32>, vector<[[L]]xi32>
