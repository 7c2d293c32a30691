// RUN: teir-opt %s -p teir-lower-to-llvm-dialect | filecheck %s

// A microkernel's scratch buffer (a packed panel) is allocated where it is used,
// inside the loop nest; it becomes an llvm.alloca of a constant size in the
// function's entry block (a fixed slot of the frame, not stack growth per
// iteration), behind a bitcast to an opaque pointer.

func.func @k(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %s = memref.alloca() {alignment = 64 : i64} : memref<96xf32>
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %s[%c1] : memref<96xf32>
    %y = memref.load %s[%c1] : memref<96xf32>
    memref.store %y, %a[%i] : memref<?xf32>
  }
  func.return
}

// CHECK:       llvm.func @k(%a: !llvm.ptr, %n: i64) {
// CHECK-NEXT:    %[[COUNT:.*]] = llvm.mlir.constant(96) : i64
// CHECK-NEXT:    %[[SLOT:.*]] = llvm.alloca %[[COUNT]] x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK:         llvm.br ^bb1
// CHECK:       ^bb2:
// CHECK-NOT:     llvm.alloca
// CHECK:         %[[OPAQUE:.*]] = llvm.bitcast %[[SLOT]] : !llvm.ptr to !llvm.ptr
// CHECK:         llvm.getelementptr %[[OPAQUE]]
// CHECK-NOT:     llvm.alloca
// CHECK:         llvm.return
