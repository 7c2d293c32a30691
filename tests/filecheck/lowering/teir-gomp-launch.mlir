// RUN: teir-opt %s -p teir-gomp-launch | filecheck %s

// The launcher stores its arguments (pointers as integers) in a stack array
// and forks through GOMP_parallel; the trampoline reads them back and runs
// the calling thread's static chunk [lo, hi) of [0, total).

builtin.module {
  llvm.func @f__parallel0(%out: !llvm.ptr, %flag: i1, %lo: i64, %hi: i64) {
    llvm.return
  }
  llvm.func @__teir_launch_f__parallel0(!llvm.ptr, i1, i64)
}

// CHECK:      llvm.func internal @__teir_launch_f__parallel0(%[[P:.*]]: !llvm.ptr, %[[FLAG:.*]]: i1, %[[TOTAL:.*]]: i64) {
// CHECK:        %[[CTX:.*]] = llvm.alloca %{{.*}} x i64
// CHECK:        %[[PI:.*]] = llvm.ptrtoint %[[P]] : !llvm.ptr to i64
// CHECK:        llvm.store %[[PI]]
// CHECK:        %[[FI:.*]] = llvm.zext %[[FLAG]] : i1 to i64
// CHECK:        llvm.store %[[FI]]
// CHECK:        llvm.store %[[TOTAL]]
// CHECK:        %[[FN:.*]] = llvm.mlir.addressof @f__parallel0__omp : !llvm.ptr
// CHECK:        llvm.call @GOMP_parallel(%[[FN]], %[[CTX]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
// CHECK:      llvm.func @GOMP_parallel(!llvm.ptr, !llvm.ptr, i32, i32)
// CHECK:      llvm.func @omp_get_thread_num() -> i32
// CHECK:      llvm.func @omp_get_num_threads() -> i32
// CHECK:      llvm.func internal @f__parallel0__omp(%{{.*}}: !llvm.ptr) {
// CHECK:        llvm.inttoptr
// CHECK:        llvm.trunc %{{.*}} : i64 to i1
// CHECK:        llvm.call @omp_get_thread_num() : () -> i32
// CHECK:        llvm.call @omp_get_num_threads() : () -> i32
// CHECK:        llvm.sdiv
// CHECK:        llvm.call @f__parallel0(%{{.*}}, %{{.*}}, %[[LO:.*]], %[[HI:.*]]) : (!llvm.ptr, i1, i64, i64) -> ()
