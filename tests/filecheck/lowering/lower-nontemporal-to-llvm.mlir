// RUN: teir-opt %s --split-input-file -p teir-lower-to-llvm-dialect | filecheck %s

// What the streaming transposes of teir_lowering.codegen.tile_primitives need from the
// llvm pipeline: a non-temporal vector.store stays non-temporal down to llvm.store,
// aligned to the whole vector (x86 streams aligned vectors only; the emitter
// checks the address first), ordinary stores keep the element's alignment, and
// memref.extract_aligned_pointer_as_index (that check) becomes a ptrtoint; the
// function fences its streaming stores before it returns. The JIT
// (teir_lowering.runtime.jit) turns the flag into LLVM's !nontemporal, which xDSL's
// llvmlite translation (and so `-t llvm`) leaves out.

func.func @k(%v: vector<16xf32>, %m: memref<?xf32>, %i: index) -> index {
  vector.store %v, %m[%i] {nontemporal = true} : memref<?xf32>, vector<16xf32>
  vector.store %v, %m[%i] : memref<?xf32>, vector<16xf32>
  %p = "memref.extract_aligned_pointer_as_index"(%m) : (memref<?xf32>) -> index
  func.return %p : index
}

// CHECK-LABEL: llvm.func @k
// CHECK:         llvm.store %v, %{{.*}} {alignment = 64 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
// CHECK:         llvm.store %v, %{{.*}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// CHECK-NEXT:    %[[I:.*]] = llvm.ptrtoint %m : !llvm.ptr to i64
// CHECK-NEXT:    llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// CHECK-NEXT:    llvm.return %[[I]] : i64

// -----

// The prefetch of a streamed transpose's rows: the element's address, the bytes
// ahead as a getelementptr, and llvm.prefetch's call (read, locality 3, data).

func.func @ahead(%m: memref<?xf16>, %i: index) {
  teir_lane.prefetch %m[%i] ahead 128 : memref<?xf16>
  func.return
}

// CHECK-LABEL: llvm.func @ahead
// CHECK:         %[[BYTES:.*]] = llvm.mlir.constant(256) : i64
// CHECK-NEXT:    %[[AHEAD:.*]] = llvm.getelementptr %{{.*}}[%[[BYTES]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK:         llvm.call_intrinsic "llvm.prefetch.p0"(%[[AHEAD]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, i32, i32) -> ()
