// RUN: %roundtrip
// RUN: %roundtrip-generic
// RUN: xdsl-opt %s --split-input-file | filecheck %s

// The teir_lane ops (teir_lowering.llvm.lane) print and parse back, at both
// levels: the vectorized ReLU's compare and select as teir-to-scf emits them,
// and their llvm-level forms as teir-convert-arith-to-llvm leaves them.

func.func @relu(%x: vector<8xf32>, %z: vector<8xf32>) -> vector<8xf32> {
  %neg = teir_lane.cmpf olt, %x, %z : vector<8xf32>
  %r = teir_lane.select %neg, %z, %x : vector<8xi1>, vector<8xf32>
  func.return %r : vector<8xf32>
}

// CHECK-LABEL: func.func @relu
// CHECK-NEXT:    %neg = teir_lane.cmpf olt, %x, %z : vector<8xf32>
// CHECK-NEXT:    %r = teir_lane.select %neg, %z, %x : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    func.return %r : vector<8xf32>

// -----

func.func @quiet_nan(%x: vector<4xf64>, %q: vector<4xi64>, %b: vector<4xi64>) -> vector<4xi64> {
  %nan = teir_lane.llvm_fcmp uno, %x, %x : vector<4xf64>
  %r = teir_lane.llvm_select %nan, %q, %b : vector<4xi1>, vector<4xi64>
  func.return %r : vector<4xi64>
}

// CHECK-LABEL: func.func @quiet_nan
// CHECK-NEXT:    %nan = teir_lane.llvm_fcmp uno, %x, %x : vector<4xf64>
// CHECK-NEXT:    %r = teir_lane.llvm_select %nan, %q, %b : vector<4xi1>, vector<4xi64>
// CHECK-NEXT:    func.return %r : vector<4xi64>

// -----

// The bf16 pair product of AVX512-BF16 (vdpbf16ps), at the arith level.

func.func @pairs(%acc: vector<16xf32>, %a: vector<16xi32>, %b: vector<16xi32>) -> vector<16xf32> {
  %d = teir_lane.dot_bf16_pairs %acc, %a, %b : vector<16xf32>, vector<16xi32>
  func.return %d : vector<16xf32>
}

// CHECK-LABEL: func.func @pairs
// CHECK-NEXT:    %d = teir_lane.dot_bf16_pairs %acc, %a, %b : vector<16xf32>, vector<16xi32>
// CHECK-NEXT:    func.return %d : vector<16xf32>

// -----

// A prefetch names its locality only when it is not every level's 3 (the
// streamed tiles' prefetches into the L2 take 2).

func.func @prefetch(%m: memref<?xf32>, %i: index) {
  teir_lane.prefetch %m[%i] ahead 64 : memref<?xf32>
  teir_lane.prefetch %m[%i] ahead 6938 locality 2 : memref<?xf32>
  func.return
}

// CHECK-LABEL: func.func @prefetch
// CHECK-NEXT:    teir_lane.prefetch %m[%i] ahead 64 : memref<?xf32>
// CHECK-NEXT:    teir_lane.prefetch %m[%i] ahead 6938 locality 2 : memref<?xf32>
