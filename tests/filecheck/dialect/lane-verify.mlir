// RUN: teir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// One case per verifier and parser error of the teir_lane ops.
func.func @f(%x: f32) {
  %n = teir_lane.cmpf olt, %x, %x : f32
  func.return
}
// CHECK: expected a 1-D vector of floats, got f32

// -----

func.func @f(%x: vector<2x4xf32>) {
  %n = teir_lane.llvm_fcmp olt, %x, %x : vector<2x4xf32>
  func.return
}
// CHECK: expected a 1-D vector of floats, got vector<2x4xf32>

// -----

func.func @f(%x: vector<4xf32>) {
  %n = "teir_lane.cmpf"(%x, %x) <{predicate = 4 : i64}> : (vector<4xf32>, vector<4xf32>) -> vector<8xi1>
  func.return
}
// CHECK: expected result vector<4xi1>, got vector<8xi1>

// -----

func.func @f(%x: vector<4xf32>) {
  %n = "teir_lane.cmpf"(%x, %x) <{predicate = 16 : i64}> : (vector<4xf32>, vector<4xf32>) -> vector<4xi1>
  func.return
}
// CHECK: predicate 16 out of range

// -----

func.func @f(%c: i1, %x: vector<4xf32>) {
  %r = teir_lane.select %c, %x, %x : i1, vector<4xf32>
  func.return
}
// CHECK: expected condition vector<4xi1>, got i1

// -----

func.func @f(%c: vector<4xi1>, %x: f32) {
  %r = teir_lane.llvm_select %c, %x, %x : vector<4xi1>, f32
  func.return
}
// CHECK: expected 1-D vector operands, got f32

// -----

func.func @f(%x: vector<4xf32>) {
  %n = teir_lane.cmpf lt, %x, %x : vector<4xf32>
  func.return
}
// CHECK: unknown compare predicate 'lt'

// -----

func.func @f(%acc: vector<16xf32>, %p: vector<8xi32>) {
  %d = teir_lane.dot_bf16_pairs %acc, %p, %p : vector<16xf32>, vector<8xi32>
  func.return
}
// CHECK: expected pairs vector<16xi32>, got vector<8xi32>

// -----

func.func @f(%acc: vector<2xf32>, %p: vector<2xi32>) {
  %d = teir_lane.dot_bf16_pairs %acc, %p, %p : vector<2xf32>, vector<2xi32>
  func.return
}
// CHECK: expected vector<Nxf32> with N in (4, 8, 16), got vector<2xf32>

// -----

func.func @f(%m: memref<?xf32>, %i: index) {
  teir_lane.prefetch %m[%i] ahead 64 locality 4 : memref<?xf32>
  func.return
}
// CHECK: teir_lane.prefetch: locality 4 is not 0 to 3
