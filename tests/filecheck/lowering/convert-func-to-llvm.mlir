// RUN: teir-opt %s --split-input-file -p teir-convert-func-to-llvm | filecheck %s

// func -> llvm: index is i64 and a memref is one bare !llvm.ptr (its first element).

func.func @kernel(%a: memref<?xf32>, %b: memref<16xf64>, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %x = memref.load %b[%c0] : memref<16xf64>
  func.return %x : f64
}

// Uses of a memref argument see it through a cast (convert-memref-to-ptr, run first
// in the pipeline, leaves pointers here instead).
// CHECK-LABEL: llvm.func @kernel(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) -> f64 {
// CHECK-NEXT:    %[[B:.*]] = builtin.unrealized_conversion_cast %b : !llvm.ptr to memref<16xf64>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x = memref.load %[[B]][%c0] : memref<16xf64>
// CHECK-NEXT:    llvm.return %x : f64
// CHECK-NEXT:  }
// CHECK-NOT:   func.

// -----

func.func @indices(%i: index, %x: f32) -> index {
  func.return %i : index
}

// CHECK-LABEL: llvm.func @indices(%i: i64, %x: f32) -> i64 {
// CHECK-NEXT:    %[[I:.*]] = builtin.unrealized_conversion_cast %i : i64 to index
// CHECK-NEXT:    llvm.return %i : i64

// -----

func.func private @external(f64, index) -> f64

func.func @caller(%x: f64 {llvm.noalias}, %i: index) -> f64 {
  %y = func.call @external(%x, %i) : (f64, index) -> f64
  func.call @nothing() : () -> ()
  func.return %y : f64
}

func.func @nothing() {
  func.return
}

// A declaration stays a declaration; argument attributes are kept.
// CHECK:       llvm.func @external(f64, i64) -> f64
// CHECK-NEXT:  llvm.func @caller(%x: f64 {llvm.noalias}, %i: i64) -> f64 {
// CHECK-NEXT:    %[[I:.*]] = builtin.unrealized_conversion_cast %i : i64 to index
// CHECK-NEXT:    %y = llvm.call @external(%x, %i) : (f64, i64) -> f64
// CHECK-NEXT:    llvm.call @nothing() : () -> ()
// CHECK-NEXT:    llvm.return %y : f64
// CHECK-NEXT:  }
// CHECK-NEXT:  llvm.func @nothing() {
// CHECK-NEXT:    llvm.return
// CHECK-NEXT:  }

// -----

func.func @blocks(%i: index) -> index {
  cf.br ^bb1(%i : index)
^bb1(%j: index):
  func.return %j : index
}

// All blocks' arguments take their LLVM types; branches are the cf pass's.
// CHECK-LABEL: llvm.func @blocks(%i: i64) -> i64 {
// CHECK-NEXT:    %[[I:.*]] = builtin.unrealized_conversion_cast %i : i64 to index
// CHECK-NEXT:    cf.br ^bb1(%[[I]] : index)
// CHECK-NEXT:  ^bb1(%j: i64):
// CHECK-NEXT:    %[[J:.*]] = builtin.unrealized_conversion_cast %j : i64 to index
// CHECK-NEXT:    llvm.return %j : i64
