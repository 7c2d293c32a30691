// RUN: teir-opt %s -p teir-f16-moves-as-i16 --split-input-file | filecheck %s

// A kernel that only moves f16 values (a Copy, a Zero) moves them as i16: LLVM
// would keep each scalar half in a vector register, loaded by vpinsrw into its
// low word (each load waiting for the one before). Constants become their bit
// patterns (nearest even), vectors and memrefs i16 too.

func.func @moves(%m: memref<?xf16>, %o: memref<?xf16>, %i: index) {
  %x = memref.load %m[%i] : memref<?xf16>
  memref.store %x, %o[%i] : memref<?xf16>
  %v = vector.load %m[%i] : memref<?xf16>, vector<8xf16>
  %s = vector.shuffle %v, %v [1, 0, 3, 2, 5, 4, 7, 6] : vector<8xf16>, vector<8xf16>
  vector.store %s, %o[%i] : memref<?xf16>, vector<8xf16>
  %z = arith.constant -0.0 : f16
  memref.store %z, %o[%i] : memref<?xf16>
  %w = arith.constant dense<[1.0, 0.1]> : vector<2xf16>
  vector.store %w, %o[%i] : memref<?xf16>, vector<2xf16>
  func.return
}

// CHECK:      func.func @moves(%m: memref<?xi16>, %o: memref<?xi16>, %i: index) {
// CHECK-NEXT:   %x = memref.load %m[%i] : memref<?xi16>
// CHECK-NEXT:   memref.store %x, %o[%i] : memref<?xi16>
// CHECK-NEXT:   %v = vector.load %m[%i] : memref<?xi16>, vector<8xi16>
// CHECK-NEXT:   %s = vector.shuffle %v, %v [1, 0, 3, 2, 5, 4, 7, 6] : vector<8xi16>, vector<8xi16>
// CHECK-NEXT:   vector.store %s, %o[%i] : memref<?xi16>, vector<8xi16>
// CHECK-NEXT:   %z = arith.constant -32768 : i16
// CHECK-NEXT:   memref.store %z, %o[%i] : memref<?xi16>
// CHECK-NEXT:   %w = arith.constant dense<[15360, 11878]> : vector<2xi16>
// CHECK-NEXT:   vector.store %w, %o[%i] : memref<?xi16>, vector<2xi16>

// -----

// A kernel that computes on f16 (widens it, compares it) keeps it: arithmetic
// on i16 would mean something else.

func.func @computes(%m: memref<?xf16>, %o: memref<?xf32>, %i: index) {
  %x = memref.load %m[%i] : memref<?xf16>
  %y = arith.extf %x : f16 to f32
  memref.store %y, %o[%i] : memref<?xf32>
  func.return
}

// CHECK:      func.func @computes(%m: memref<?xf16>, %o: memref<?xf32>, %i: index) {
// CHECK-NEXT:   %x = memref.load %m[%i] : memref<?xf16>
// CHECK-NEXT:   %y = arith.extf %x : f16 to f32

// -----

func.func @relu(%m: memref<?xf16>, %i: index) {
  %x = memref.load %m[%i] : memref<?xf16>
  %z = arith.constant 0.0 : f16
  %n = arith.cmpf olt, %x, %z : f16
  %y = arith.select %n, %z, %x : f16
  memref.store %y, %m[%i] : memref<?xf16>
  func.return
}

// CHECK:      func.func @relu(%m: memref<?xf16>, %i: index) {
// CHECK:        arith.cmpf olt, %x, %z : f16
