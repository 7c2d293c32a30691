// RUN: teir-opt %s --split-input-file -p teir-outline-parallel | filecheck %s

// The outermost scf.parallel moves into @f__parallel0 over a range [lo, hi) of
// its collapsed iteration space (delinearized innermost-fastest); the loop
// becomes a call of the declared launcher with the captured values and the
// iteration count; an inner scf.parallel runs sequentially.

func.func @f(%out: memref<?xf32>, %base: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.000000e+00 : f32
  "scf.parallel"(%c0, %c0, %c2, %c3, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %row = arith.muli %i, %c3 : index
    %ij = arith.addi %row, %j : index
    %at = arith.addi %ij, %base : index
    "scf.parallel"(%c0, %c2, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb1(%k: index):
      memref.store %zero, %out[%at] : memref<?xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func @f(%out: memref<?xf32>, %base: index) {
// CHECK:         %[[N0:.*]] = arith.divui %{{.*}}, %c1 : index
// CHECK:         %[[N1:.*]] = arith.divui %{{.*}}, %c1 : index
// CHECK-NEXT:    %[[TOTAL:.*]] = arith.muli %[[N0]], %[[N1]] : index
// CHECK-NEXT:    func.call @__teir_launch_f__parallel0(%out, %base, %[[TOTAL]]) : (memref<?xf32>, index, index) -> ()
// CHECK-NEXT:    func.return
// CHECK:       func.func private @f__parallel0(%out: memref<?xf32>, %base: index, %lo: index, %hi: index) {
// CHECK:         scf.for %linear = %lo to %hi step %{{.*}} {
// CHECK-NEXT:      %[[J:.*]] = arith.remui %linear, %c3 : index
// CHECK-NEXT:      %[[I:.*]] = arith.divui %linear, %c3 : index
// CHECK:           %row = arith.muli %{{.*}}, %c3 : index
// CHECK:           scf.for %k = %c0 to %c2 step %c1 {
// CHECK-NEXT:        memref.store %zero, %out[%at] : memref<?xf32>
// CHECK:       func.func private @__teir_launch_f__parallel0(memref<?xf32>, index, index) -> ()
// CHECK-NOT:   scf.parallel

// -----

// Ops of the body marked teir.chunk_prologue (state its iterations share, such as
// a widened operand's buffer and key) run once per chunk, before the chunk's
// loop, unmarked; the rest runs per iteration.

func.func @g(%out: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %slot = memref.alloca() {teir.chunk_prologue, alignment = 8 : i64} : memref<1xi64>
    %none = arith.constant {teir.chunk_prologue} -1 : i64
    %z = arith.constant {teir.chunk_prologue} 0 : index
    memref.store %none, %slot[%z] {teir.chunk_prologue} : memref<1xi64>
    %last = memref.load %slot[%z] : memref<1xi64>
    memref.store %last, %out[%i] : memref<?xi64>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// CHECK-LABEL: func.func private @g__parallel0(%out: memref<?xi64>, %lo: index, %hi: index) {
// CHECK:         %slot = memref.alloca() {alignment = 8 : i64} : memref<1xi64>
// CHECK-NEXT:    %none = arith.constant -1 : i64
// CHECK-NEXT:    %z = arith.constant 0 : index
// CHECK-NEXT:    memref.store %none, %slot[%z] : memref<1xi64>
// CHECK:         scf.for %linear = %lo to %hi step %{{.*}} {
// CHECK-NOT:       memref.alloca
// CHECK:           %last = memref.load %slot[%z] : memref<1xi64>
// CHECK-NEXT:      memref.store %last, %out[%{{.*}}] : memref<?xi64>
