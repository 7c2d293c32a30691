// RUN: teir-opt %s --split-input-file -p teir-convert-memref-access-to-llvm | filecheck %s

// Scalar loads and stores on 1-D memrefs: the byte offset, a getelementptr i8 and an
// access aligned to the element, in one step (what convert-memref-to-ptr and the ptr
// and arith conversions make of them).

func.func @copy(%a: memref<?xf32>, %b: memref<?xf64>, %i: index) {
  %x = memref.load %a[%i] : memref<?xf32>
  %y = arith.extf %x : f32 to f64
  memref.store %y, %b[%i] : memref<?xf64>
  func.return
}

// CHECK-LABEL: func.func @copy(%a: memref<?xf32>, %b: memref<?xf64>, %i: index) {
// CHECK-NEXT:    %[[A:.*]] = builtin.unrealized_conversion_cast %a : memref<?xf32> to !llvm.ptr
// CHECK-NEXT:    %[[I:.*]] = builtin.unrealized_conversion_cast %i : index to i64
// CHECK-NEXT:    %[[F32:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[AOFF:.*]] = llvm.mul %[[I]], %[[F32]] : i64
// CHECK-NEXT:    %[[APTR:.*]] = llvm.getelementptr %[[A]][%[[AOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %x = llvm.load %[[APTR]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %y = arith.extf %x : f32 to f64
// CHECK-NEXT:    %[[B:.*]] = builtin.unrealized_conversion_cast %b : memref<?xf64> to !llvm.ptr
// CHECK-NEXT:    %[[I2:.*]] = builtin.unrealized_conversion_cast %i : index to i64
// CHECK-NEXT:    %[[F64:.*]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT:    %[[BOFF:.*]] = llvm.mul %[[I2]], %[[F64]] : i64
// CHECK-NEXT:    %[[BPTR:.*]] = llvm.getelementptr %[[B]][%[[BOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    llvm.store %y, %[[BPTR]] {alignment = 8 : i64} : f64, !llvm.ptr
// CHECK-NEXT:    func.return

// -----

// An address that is a pointer cast to a memref (an llvm.alloca, a lowered
// argument) is used as that pointer.

func.func @from_pointer(%p: !llvm.ptr, %i: index) -> f16 {
  %m = builtin.unrealized_conversion_cast %p : !llvm.ptr to memref<8xf16>
  %x = memref.load %m[%i] : memref<8xf16>
  func.return %x : f16
}

// CHECK-LABEL: func.func @from_pointer(%p: !llvm.ptr, %i: index) -> f16 {
// CHECK:         %[[OFF:.*]] = llvm.mul %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[PTR:.*]] = llvm.getelementptr %p[%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %x = llvm.load %[[PTR]] {alignment = 2 : i64} : !llvm.ptr -> f16

// -----

// Other accesses are left to convert-memref-to-ptr: more than one dimension, a
// layout, elements that are not whole bytes of a fixed width.

func.func @others(%a: memref<4x4xf32>, %b: memref<?xf32, strided<[2]>>, %c: memref<?xindex>,
                  %i: index) -> (f32, f32, index) {
  %x = memref.load %a[%i, %i] : memref<4x4xf32>
  %y = memref.load %b[%i] : memref<?xf32, strided<[2]>>
  %z = memref.load %c[%i] : memref<?xindex>
  func.return %x, %y, %z : f32, f32, index
}

// CHECK-LABEL: func.func @others
// CHECK-NEXT:    %x = memref.load %a[%i, %i] : memref<4x4xf32>
// CHECK-NEXT:    %y = memref.load %b[%i] : memref<?xf32, strided<[2]>>
// CHECK-NEXT:    %z = memref.load %c[%i] : memref<?xindex>
// CHECK-NOT:     llvm.
