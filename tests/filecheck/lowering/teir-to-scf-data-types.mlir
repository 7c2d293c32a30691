// RUN: teir-opt %s -p teir-match-gemm,teir-fuse-epilogues,teir-to-scf | filecheck %s

// FP16, BF16 and TF32: stored values are widened where they are loaded, arithmetic
// runs in f32 and results are rounded to the stored type where they are stored;
// element-wise primitives move stored values unconverted. (The vector width
// follows the host, hence the regex.)

// A matched GEMM in FP16: B (the broadcast operand) widened to f32 once, into a
// stack buffer, so that each broadcast is a plain f32 load (GemmPlan.widen_y);
// vector loads of A widened by arith.extf (vcvtph2ps), f32 accumulators and
// FMAs, C narrowed by arith.truncf (vcvtps2ph, nearest even) before its store.
func.func @gemm_fp16(%in0: memref<?xf16>, %in1: memref<?xf16>, %out: memref<?xf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xf16>, memref<?xf16>, memref<?xf16>) {
    teir.axis m extent 16 strides [2, 0, 2] offsets [0, 0, 0]
    teir.axis n extent 2 strides [0, 4, 32] offsets [0, 0, 0]
    teir.axis k extent 2 strides [32, 2, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP16"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP16"}
    teir.schedule {
      teir.invoke z -> zero
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK-LABEL: func.func @gemm_fp16
// CHECK:         %[[WIDE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK:         %[[Y:.*]] = memref.load %in1[%{{.*}}] : memref<?xf16>
// CHECK-NEXT:    %[[WY:.*]] = arith.extf %[[Y]] : f16 to f32
// CHECK-NEXT:    %[[AT:.*]] = arith.addi
// CHECK-NEXT:    memref.store %[[WY]], %[[WIDE]][%[[AT]]] : memref<4xf32>
// CHECK:         arith.constant dense<0.000000e+00> : vector<[[L:[0-9]+]]xf32>
// CHECK:         %[[A:.*]] = vector.load %in0[%{{.*}}] : memref<?xf16>, vector<[[L]]xf16>
// CHECK-NEXT:    %[[WA:.*]] = arith.extf %[[A]] : vector<[[L]]xf16> to vector<[[L]]xf32>
// CHECK-NOT:     %in1
// CHECK:         %[[B:.*]] = memref.load %[[WIDE]][%{{.*}}] : memref<4xf32>
// CHECK-NEXT:    %[[SB:.*]] = vector.broadcast %[[B]] : f32 to vector<[[L]]xf32>
// CHECK-NEXT:    vector.fma %[[WA]], %[[SB]], %{{.*}} : vector<[[L]]xf32>
// CHECK:         %[[C:.*]] = arith.truncf %{{.*}} : vector<[[L]]xf32> to vector<[[L]]xf16>
// CHECK-NEXT:    vector.store %[[C]], %out[%{{.*}}] : memref<?xf16>, vector<[[L]]xf16>

// Inside a parallel loop the widened B is kept in the loop body's prologue (ops
// marked teir.chunk_prologue, which teir-outline-parallel runs once per chunk):
// the buffer and a slot holding the element index of the B it was widened from
// (-1 at first). Each tile widens again only when its B starts elsewhere: here
// every r of one p reads the same B.
func.func @gemm_fp16_per_chunk(%in0: memref<?xf16>, %in1: memref<?xf16>, %out: memref<?xf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xf16>, memref<?xf16>, memref<?xf16>) {
    teir.axis p extent 3 strides [0, 16, 128] offsets [0, 0, 0]
    teir.axis r extent 2 strides [64, 0, 384] offsets [0, 0, 0]
    teir.axis m extent 16 strides [2, 0, 2] offsets [0, 0, 0]
    teir.axis n extent 2 strides [0, 8, 32] offsets [0, 0, 0]
    teir.axis k extent 2 strides [32, 2, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP16"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP16"}
    teir.schedule {
      teir.iter p over p parallel {
        teir.iter r over r {
          teir.invoke z -> zero
          teir.invoke c -> mm
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @gemm_fp16_per_chunk
// CHECK:         ^bb0(%p: index):
// CHECK-NEXT:      %[[WIDE:.*]] = memref.alloca() {teir.chunk_prologue, alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT:      %[[SLOT:.*]] = memref.alloca() {teir.chunk_prologue, alignment = 8 : i64} : memref<1xi64>
// CHECK-NEXT:      %[[NONE:.*]] = arith.constant {teir.chunk_prologue} -1 : i64
// CHECK-NEXT:      %[[C0:.*]] = arith.constant {teir.chunk_prologue} 0 : index
// CHECK-NEXT:      memref.store %[[NONE]], %[[SLOT]][%[[C0]]] {teir.chunk_prologue} : memref<1xi64>
// CHECK:           scf.for %r = 
// CHECK:             %[[LAST:.*]] = memref.load %[[SLOT]][%{{.*}}] : memref<1xi64>
// CHECK-NEXT:        %[[KEY:.*]] = arith.index_cast %[[B:.*]] : index to i64
// CHECK-NEXT:        %[[STALE:.*]] = arith.cmpi ne, %[[LAST]], %[[KEY]] : i64
// CHECK-NEXT:        scf.if %[[STALE]] {
// CHECK:               memref.load %in1[%{{.*}}] : memref<?xf16>
// CHECK:               memref.store %{{.*}}, %[[WIDE]][%{{.*}}] : memref<4xf32>
// CHECK:             memref.store %[[KEY]], %[[SLOT]][%{{.*}}] : memref<1xi64>
// CHECK-NEXT:        }
// CHECK-NOT:         %in1
// CHECK:             memref.load %[[WIDE]]

// A scalar BF16 dot product: each bf16 is the upper half of an f32 (a 16-bit shift
// widens it); the f32 sum is rounded to nearest even with integer ops (add 0x7FFF
// plus the lowest kept bit, shift), a NaN kept quiet instead.
func.func @dot_bf16(%in0: memref<?xbf16>, %in1: memref<?xbf16>, %out: memref<?xbf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xbf16>, memref<?xbf16>, memref<?xbf16>) {
    teir.axis k extent 3 strides [2, 2, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [], N = [], K = [k]} {data_type = "BF16"}
    teir.schedule {
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK-LABEL: func.func @dot_bf16
// CHECK:         %[[C:.*]] = memref.load %out[%{{.*}}] : memref<?xbf16>
// CHECK-NEXT:    %[[CB:.*]] = arith.bitcast %[[C]] : bf16 to i16
// CHECK-NEXT:    %[[CW:.*]] = arith.extui %[[CB]] : i16 to i32
// CHECK-NEXT:    %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK-NEXT:    %[[CS:.*]] = arith.shli %[[CW]], %[[SIXTEEN]] : i32
// CHECK-NEXT:    %[[CF:.*]] = arith.bitcast %[[CS]] : i32 to f32
// CHECK:         %[[SUM:.*]] = scf.for {{.*}} iter_args(%acc = %[[CF]]) -> (f32) {
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[SUM]] : f32 to i32
// CHECK:         %[[UPPER:.*]] = arith.shrui %[[BITS]], %{{.*}} : i32
// CHECK:         %[[LOWEST:.*]] = arith.andi %[[UPPER]], %{{.*}} : i32
// CHECK:         arith.constant 32767 : i32
// CHECK:         %[[BIASED:.*]] = arith.addi %{{.*}}, %[[LOWEST]] : i32
// CHECK:         %[[ROUNDED:.*]] = arith.shrui %[[BIASED]], %{{.*}} : i32
// CHECK:         arith.constant 64 : i32
// CHECK:         %[[QUIET:.*]] = arith.ori %[[UPPER]], %{{.*}} : i32
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[SUM]], %[[SUM]] : f32
// CHECK-NEXT:    %[[CHOSEN:.*]] = arith.select %[[NAN]], %[[QUIET]], %[[ROUNDED]] : i32
// CHECK-NEXT:    %[[HALF:.*]] = arith.trunci %[[CHOSEN]] : i32 to i16
// CHECK-NEXT:    %[[RESULT:.*]] = arith.bitcast %[[HALF]] : i16 to bf16
// CHECK-NEXT:    memref.store %[[RESULT]], %out[%{{.*}}] : memref<?xbf16>

// TF32: tensors are f32; a Contraction rounds each input to TF32 as it loads it
// (nearest even to 10 mantissa bits, the low 13 bits cleared, NaN kept) and
// accumulates in f32, stored without another rounding.
func.func @dot_tf32(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 3 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive mm Contraction {M = [], N = [], K = [k]} {data_type = "TF32"}
    teir.schedule {
      teir.invoke c -> mm
    }
  }
  func.return
}

// CHECK-LABEL: func.func @dot_tf32
// CHECK:         scf.for
// CHECK:           %[[A:.*]] = memref.load %in0[%k] : memref<?xf32>
// CHECK-NEXT:      %[[BITS:.*]] = arith.bitcast %[[A]] : f32 to i32
// CHECK:           arith.constant 4095 : i32
// CHECK:           arith.constant -8192 : i32
// CHECK-NEXT:      %[[CLEARED:.*]] = arith.andi %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:      %[[ROUNDED:.*]] = arith.bitcast %[[CLEARED]] : i32 to f32
// CHECK-NEXT:      %[[NAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : f32
// CHECK-NEXT:      %[[TF32:.*]] = arith.select %[[NAN]], %[[A]], %[[ROUNDED]] : f32
// CHECK:           arith.mulf %[[TF32]], %{{.*}} : f32
// CHECK:         memref.store %{{.*}}, %out[%{{.*}}] : memref<?xf32>

// Copy moves f16 vectors as they are: no conversion.
func.func @copy_fp16(%in0: memref<?xf16>, %out: memref<?xf16>) {
  teir.config(%in0, %out) : (memref<?xf16>, memref<?xf16>) {
    teir.axis x extent 32 strides [2, 2] offsets [0, 0]
    teir.primitive copy Copy {M = [x], N = []} {data_type = "FP16"}
    teir.schedule {
      teir.invoke c -> copy
    }
  }
  func.return
}

// CHECK-LABEL: func.func @copy_fp16
// CHECK-NOT:     arith.extf
// CHECK:         %[[V:.*]] = vector.load %in0[%{{.*}}] : memref<?xf16>, vector<{{[0-9]+}}xf16>
// CHECK-NEXT:    vector.store %[[V]], %out[%{{.*}}] : memref<?xf16>, vector<{{[0-9]+}}xf16>
// CHECK-NOT:     arith.truncf
// CHECK:         func.return
