// RUN: teir-opt %s -p 'teir-bf16-as-i16,teir-convert-scf-to-cf,teir-convert-alloca-to-llvm,teir-convert-vector-to-llvm,convert-vector-to-ptr,convert-memref-to-ptr{lower_func=true},teir-convert-ptr-addressing-to-llvm,convert-ptr-type-offsets,teir-convert-ptr-to-llvm,teir-convert-arith-to-llvm,teir-convert-func-to-llvm,teir-convert-cf-to-llvm,reconcile-unrealized-casts,teir-hoist-allocas,teir-fence-nontemporal-stores' | filecheck %s
// RUN: teir-opt %s -p 'teir-bf16-as-i16,teir-convert-scf-to-cf,teir-convert-alloca-to-llvm,teir-convert-vector-to-llvm,convert-vector-to-ptr,convert-memref-to-ptr{lower_func=true},teir-convert-ptr-addressing-to-llvm,convert-ptr-type-offsets,teir-convert-ptr-to-llvm,teir-convert-arith-to-llvm,teir-convert-func-to-llvm,teir-convert-cf-to-llvm,reconcile-unrealized-casts,teir-hoist-allocas,teir-fence-nontemporal-stores' -t llvm | filecheck %s --check-prefix=IR

// The whole of teir_lowering.llvm_pipeline.LOWER_TO_LLVM_PASSES: memrefs become bare
// pointers (`void k(float *, double *, int64_t)`), elements are addressed with a
// getelementptr and accessed with the element's alignment, and only llvm ops remain.

func.func @k(%a: memref<?xf32>, %b: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.extf %x : f32 to f64
    memref.store %y, %b[%i] : memref<?xf64>
  }
  func.return
}

// CHECK:       builtin.module {
// CHECK-NEXT:    llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) {
// CHECK-NEXT:      %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:      %c1 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:      llvm.br ^bb1(%c0 : i64)
// CHECK-NEXT:    ^bb1(%i: i64):
// CHECK-NEXT:      %[[MORE:.*]] = llvm.icmp "slt" %i, %n : i64
// CHECK-NEXT:      llvm.cond_br %[[MORE]], ^bb2, ^bb3
// CHECK-NEXT:    ^bb2:
// CHECK-NEXT:      %[[F32_SIZE:.*]] = llvm.mlir.constant(4) : i64
// CHECK-NEXT:      %[[A_OFFSET:.*]] = llvm.mul %i, %[[F32_SIZE]] : i64
// CHECK-NEXT:      %[[A_PTR:.*]] = llvm.getelementptr %a[%[[A_OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:      %x = llvm.load %[[A_PTR]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:      %y = llvm.fpext %x : f32 to f64
// CHECK-NEXT:      %[[F64_SIZE:.*]] = llvm.mlir.constant(8) : i64
// CHECK-NEXT:      %[[B_OFFSET:.*]] = llvm.mul %i, %[[F64_SIZE]] : i64
// CHECK-NEXT:      %[[B_PTR:.*]] = llvm.getelementptr %b[%[[B_OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:      llvm.store %y, %[[B_PTR]] {alignment = 8 : i64} : f64, !llvm.ptr
// CHECK-NEXT:      %[[NEXT:.*]] = llvm.add %i, %c1 : i64
// CHECK-NEXT:      llvm.br ^bb1(%[[NEXT]] : i64)
// CHECK-NEXT:    ^bb3:
// CHECK-NEXT:      llvm.return
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// IR:      define void @"k"(ptr %{{.*}}, ptr %{{.*}}, i64 %{{.*}})
// IR:        getelementptr i8, ptr
// IR:        load float, ptr {{.*}}, align 4
// IR:        fpext float {{.*}} to double
// IR:        store double {{.*}}, align 8
// IR:        ret void
