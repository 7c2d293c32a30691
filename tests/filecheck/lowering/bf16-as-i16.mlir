// RUN: teir-opt %s -p teir-bf16-as-i16 --split-input-file --verify-diagnostics | filecheck %s

// No bf16 reaches llvmlite: bf16 becomes i16 everywhere (memrefs, vectors, function
// types), constants become their bit patterns (rounded to nearest even), and the
// bitcasts between bf16 and i16 disappear.

func.func @bits(%m: memref<?xbf16>, %i: index) -> vector<4xbf16> {
  %x = memref.load %m[%i] : memref<?xbf16>
  %b = arith.bitcast %x : bf16 to i16
  %y = arith.bitcast %b : i16 to bf16
  memref.store %y, %m[%i] : memref<?xbf16>
  %z = arith.constant -0.0 : bf16
  memref.store %z, %m[%i] : memref<?xbf16>
  %v = arith.constant dense<[1.0, -2.0, 0.1, 3.0e38]> : vector<4xbf16>
  func.return %v : vector<4xbf16>
}

// CHECK:      func.func @bits(%m: memref<?xi16>, %i: index) -> vector<4xi16> {
// CHECK-NEXT:   %x = memref.load %m[%i] : memref<?xi16>
// CHECK-NEXT:   memref.store %x, %m[%i] : memref<?xi16>
// CHECK-NEXT:   %z = arith.constant -32768 : i16
// CHECK-NEXT:   memref.store %z, %m[%i] : memref<?xi16>
// CHECK-NEXT:   %v = arith.constant dense<[16256, -16384, 15821, 32610]> : vector<4xi16>
// CHECK-NEXT:   func.return %v : vector<4xi16>

// -----

// Arithmetic on bf16 would be meaningless on i16: refused.
func.func @arithmetic(%a: bf16) -> bf16 {
  %s = arith.addf %a, %a : bf16
  func.return %s : bf16
}

// CHECK: teir-bf16-as-i16: arith.addf computes on bf16 values; widen them to f32 first
