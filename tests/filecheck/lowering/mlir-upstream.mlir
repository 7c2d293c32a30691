// RUN: teir-opt %s --split-input-file -t mlir-upstream | filecheck %s
// RUN: teir-opt %s --split-input-file --emit=upstream | filecheck %s

// The mlir-upstream target prints the teir_lane ops as the upstream MLIR ops
// they stand for (arith.cmpf/select and llvm.fcmp/select on vectors), in MLIR's
// custom syntax, and everything else as the mlir target does.

func.func @relu(%x: vector<8xf32>, %z: vector<8xf32>) -> vector<8xf32> {
  %neg = teir_lane.cmpf olt, %x, %z : vector<8xf32>
  %r = teir_lane.select %neg, %z, %x : vector<8xi1>, vector<8xf32>
  func.return %r : vector<8xf32>
}

// CHECK-LABEL: func.func @relu
// CHECK-NEXT:    %neg = arith.cmpf olt, %x, %z : vector<8xf32>
// CHECK-NEXT:    %r = arith.select %neg, %z, %x : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    func.return %r : vector<8xf32>

// -----

func.func @quiet_nan(%x: vector<4xf64>, %q: vector<4xi64>, %b: vector<4xi64>) -> vector<4xi64> {
  %nan = teir_lane.llvm_fcmp uno, %x, %x : vector<4xf64>
  %r = teir_lane.llvm_select %nan, %q, %b : vector<4xi1>, vector<4xi64>
  func.return %r : vector<4xi64>
}

// CHECK-LABEL: func.func @quiet_nan
// CHECK-NEXT:    %nan = llvm.fcmp "uno" %x, %x : vector<4xf64>
// CHECK-NEXT:    %r = llvm.select %nan, %q, %b : vector<4xi1>, vector<4xi64>
// CHECK-NEXT:    func.return %r : vector<4xi64>

// -----

// The bf16 pair product (BF16 paired products' vdpbf16ps) as the call of its
// intrinsic, which MLIR 19 reads at this level, in both forms; its pairs as the
// bf16 vectors MLIR's translation checks the intrinsic's operands against.
func.func @pairs(%acc: vector<16xf32>, %a: vector<16xi32>, %b: vector<16xi32>) -> vector<16xf32> {
  %d = teir_lane.dot_bf16_pairs %acc, %a, %b : vector<16xf32>, vector<16xi32>
  func.return %d : vector<16xf32>
}

// CHECK-LABEL: func.func @pairs
// CHECK-NEXT:    %[[A:.*]] = llvm.bitcast %a : vector<16xi32> to vector<32xbf16>
// CHECK-NEXT:    %[[B:.*]] = llvm.bitcast %b : vector<16xi32> to vector<32xbf16>
// CHECK-NEXT:    %d = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%acc, %[[A]], %[[B]]) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>

// The generic form names the MLIR ops with their properties.
// RUN: teir-opt %s --split-input-file -t 'mlir-upstream{generic=true}' | filecheck %s --check-prefix=GENERIC
// GENERIC: %neg = "arith.cmpf"(%x, %z) <{predicate = 4 : i64}> : (vector<8xf32>, vector<8xf32>) -> vector<8xi1>
// GENERIC: %r = "arith.select"(%neg, %z, %x) : (vector<8xi1>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// GENERIC: %nan = "llvm.fcmp"(%x, %x) <{predicate = 14 : i64}> : (vector<4xf64>, vector<4xf64>) -> vector<4xi1>
// GENERIC: %r = "llvm.select"(%nan, %q, %b) : (vector<4xi1>, vector<4xi64>, vector<4xi64>) -> vector<4xi64>
// GENERIC: %d = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"(%acc, %{{.*}}, %{{.*}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
