// RUN: teir-opt %s --split-input-file -p teir-fence-nontemporal-stores | filecheck %s

// A function with streaming (nontemporal) stores gets one sfence before each
// return, so that other threads see the stores once it has returned.

llvm.func @streams(%v: vector<16xf32>, %p: !llvm.ptr, %c: i1) {
  llvm.cond_br %c, ^a, ^b
^a:
  llvm.store %v, %p {alignment = 64 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
  llvm.return
^b:
  llvm.return
}

// CHECK-LABEL: llvm.func @streams
// CHECK:         llvm.store %{{.*}} nontemporal
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// CHECK-NEXT:    llvm.return
// CHECK:       ^{{.*}}:
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// CHECK-NEXT:    llvm.return

// -----

// Ordinary stores need no fence.

llvm.func @plain(%v: vector<16xf32>, %p: !llvm.ptr) {
  llvm.store %v, %p {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
  llvm.return
}

// CHECK-LABEL: llvm.func @plain
// CHECK-NEXT:    llvm.store
// CHECK-NEXT:    llvm.return
