// RUN: teir-opt %s -p teir-gomp-launch | filecheck %s
// RUN: teir-opt %s -p teir-gomp-launch | filecheck %s --check-prefix=PIN

// The launcher stores its arguments (pointers as integers) in a stack array
// and forks through GOMP_parallel_loop_dynamic over [0, total) in chunks of
// total / (8 x threads) (at least 1); the trampoline reads the arguments back
// and runs chunks while libgomp hands them out, so that a thread slowed by
// something else on its core takes fewer of them.
//
// Around the fork the caller pins itself to its CPU and gives the workers whose
// thread ids it knows (each writes its own into @__teir_team, an array the
// runtime defines) its mask without that CPU, before waking them; after the
// join it takes its mask back (__teir_pin_team, __teir_unpin_caller). Two more
// slots hold the CPU it pinned itself to (-1: not pinned) and the address of
// its saved mask: a worker not known yet that finds itself on that CPU takes the
// saved mask without it (__teir_place_worker), so the two threads do not share
// a core after an idle pause.

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
// CHECK:        %[[SAVED:.*]] = llvm.alloca %{{.*}} x i64
// CHECK:        %[[CPU:.*]] = llvm.call @__teir_pin_team(%[[SAVED]]) : (!llvm.ptr) -> i32
// CHECK:        %[[CPU64:.*]] = llvm.sext %[[CPU]] : i32 to i64
// CHECK:        %[[SAVED64:.*]] = llvm.ptrtoint %[[SAVED]] : !llvm.ptr to i64
// CHECK:        llvm.store %[[CPU64]]
// CHECK:        llvm.store %[[SAVED64]]
// CHECK-NOT:    llvm.store
// CHECK:        %[[THREADS:.*]] = llvm.call @omp_get_max_threads() : () -> i32
// CHECK:        %[[WIDE:.*]] = llvm.sext %[[THREADS]] : i32 to i64
// CHECK:        %[[EIGHT:.*]] = llvm.mlir.constant(8) : i64
// CHECK:        %[[PIECES:.*]] = llvm.mul %[[WIDE]], %[[EIGHT]] : i64
// CHECK:        %[[CHUNK:.*]] = llvm.sdiv %[[TOTAL]], %[[PIECES]] : i64
// CHECK:        %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK:        %[[SMALL:.*]] = llvm.icmp "slt" %[[CHUNK]], %[[ONE]] : i64
// CHECK:        %[[AT_LEAST_ONE:.*]] = llvm.select %[[SMALL]], %[[ONE]], %[[CHUNK]] : i1, i64
// CHECK:        %[[FN:.*]] = llvm.mlir.addressof @f__parallel0__omp : !llvm.ptr
// CHECK:        %[[ZERO32:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:        %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK:        llvm.call @GOMP_parallel_loop_dynamic(%[[FN]], %[[CTX]], %[[ZERO32]], %[[ZERO]], %[[TOTAL]], %[[ONE]], %[[AT_LEAST_ONE]], %[[ZERO32]]) : (!llvm.ptr, !llvm.ptr, i32, i64, i64, i64, i64, i32) -> ()
// CHECK:      llvm.func @GOMP_parallel_loop_dynamic(!llvm.ptr, !llvm.ptr, i32, i64, i64, i64, i64, i32)
// CHECK:      llvm.func @GOMP_loop_dynamic_next(!llvm.ptr, !llvm.ptr) -> i8
// CHECK:      llvm.func @GOMP_loop_end_nowait()
// CHECK:      llvm.func @omp_get_max_threads() -> i32
// CHECK:      llvm.func internal @__teir_place_worker(%[[CALLER:.*]]: i32, %[[CALLER_MASK:.*]]: !llvm.ptr) {
// CHECK:        llvm.call @omp_get_thread_num()
// CHECK:        llvm.icmp "ult" %[[CALLER]], %{{.*}} : i32
// CHECK:        llvm.cond_br %{{.*}}, ^[[CHECK:.*]], ^[[LEAVE:.*]]
// CHECK:      ^[[CHECK]]:
// CHECK:        %[[NOW:.*]] = llvm.call @sched_getcpu()
// CHECK:        llvm.icmp "eq" %[[NOW]], %[[CALLER]] : i32
// CHECK:        %[[MASK:.*]] = llvm.alloca
// CHECK:        llvm.getelementptr %[[CALLER_MASK]][0]
// CHECK:        llvm.xor
// CHECK:        llvm.call @sched_setaffinity(%{{.*}}, %{{.*}}, %[[MASK]]) : (i32, i64, !llvm.ptr) -> i32
// CHECK:      ^[[LEAVE]]:
// CHECK-NEXT:   llvm.return
// CHECK:      llvm.func internal @f__parallel0__omp(%{{.*}}: !llvm.ptr) {
// CHECK:        %[[OUT:.*]] = llvm.inttoptr
// CHECK:        %[[F:.*]] = llvm.trunc %{{.*}} : i64 to i1
// CHECK:        %[[C:.*]] = llvm.trunc %{{.*}} : i64 to i32
// CHECK:        %[[M:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK:        llvm.call @__teir_place_worker(%[[C]], %[[M]]) : (i32, !llvm.ptr) -> ()
// CHECK:        %[[START:.*]] = llvm.alloca %{{.*}} x i64
// CHECK:        %[[END:.*]] = llvm.alloca %{{.*}} x i64
// CHECK:        llvm.br ^[[CLAIM:.*]]
// CHECK:      ^[[CLAIM]]:
// CHECK:        %[[GOT:.*]] = llvm.call @GOMP_loop_dynamic_next(%[[START]], %[[END]]) : (!llvm.ptr, !llvm.ptr) -> i8
// CHECK:        %[[MORE:.*]] = llvm.icmp "ne" %[[GOT]], %{{.*}} : i8
// CHECK:        llvm.cond_br %[[MORE]], ^[[BODY:.*]], ^[[DONE:.*]]
// CHECK:      ^[[BODY]]:
// CHECK:        %[[LO:.*]] = llvm.load %[[START]] : !llvm.ptr -> i64
// CHECK:        %[[HI:.*]] = llvm.load %[[END]] : !llvm.ptr -> i64
// CHECK:        llvm.call @f__parallel0(%[[OUT]], %[[F]], %[[LO]], %[[HI]]) : (!llvm.ptr, i1, i64, i64) -> ()
// CHECK:        llvm.br ^[[CLAIM]]
// CHECK:      ^[[DONE]]:
// CHECK:        llvm.call @GOMP_loop_end_nowait() : () -> ()
// CHECK:        llvm.return

// PIN:      llvm.func internal @__teir_launch_f__parallel0(
// PIN:        %[[PINNED:.*]] = llvm.call @__teir_pin_team(%[[SAVED:.*]]) : (!llvm.ptr) -> i32
// PIN:        llvm.call @GOMP_parallel_loop_dynamic(
// PIN-NEXT:   llvm.call @__teir_unpin_caller(%[[SAVED]], %[[PINNED]]) : (!llvm.ptr, i32) -> ()
// PIN-NEXT:   llvm.return
// PIN:      llvm.mlir.global external @__teir_team() {{.*}} : !llvm.array<256 x i64>
// PIN:      llvm.func internal @__teir_place_worker(
// PIN:        %[[NUMBER:.*]] = llvm.call @omp_get_thread_num()
// PIN:        llvm.cond_br %{{.*}}, ^[[RECORD:.*]], ^[[PLACED:.*]]
// PIN:      ^[[RECORD]]:
// PIN:        %[[OWN:.*]] = llvm.call @gettid()
// PIN:        %[[TEAM:.*]] = llvm.mlir.addressof @__teir_team : !llvm.ptr
// PIN:        %[[SLOT:.*]] = llvm.getelementptr %[[TEAM]]
// PIN:        llvm.store %{{.*}}, %[[SLOT]]
// PIN:      llvm.func internal @__teir_pin_team(%[[MASK:.*]]: !llvm.ptr) -> i32 {
// PIN:        llvm.call @omp_get_max_threads()
// PIN:        %[[CPU:.*]] = llvm.call @sched_getcpu()
// PIN:        llvm.call @omp_get_proc_bind()
// PIN:        llvm.call @sched_getaffinity(%{{.*}}, %{{.*}}, %[[MASK]])
// PIN:        %[[OTHERS:.*]] = llvm.alloca
// PIN:        %[[ALONE:.*]] = llvm.alloca
// PIN:        llvm.call @sched_setaffinity(%{{.*}}, %{{.*}}, %[[ALONE]])
// PIN:      ^[[LOOP:.*]](%[[I:.*]]: i32):
// PIN:        llvm.mlir.addressof @__teir_team
// PIN:        llvm.call @tgkill(
// PIN:        llvm.call @sched_setaffinity(%{{.*}}, %{{.*}}, %[[OTHERS]])
// PIN:        llvm.br ^[[LOOP]](
// PIN:        llvm.return %[[CPU]] : i32
// PIN:        %[[NONE:.*]] = llvm.mlir.constant(-1 : i32) : i32
// PIN-NEXT:   llvm.return %[[NONE]] : i32
// PIN:      llvm.func internal @__teir_unpin_caller(%[[BACK:.*]]: !llvm.ptr, %[[WAS:.*]]: i32) {
// PIN:        llvm.icmp "sge" %[[WAS]]
// PIN:        llvm.call @sched_setaffinity(%{{.*}}, %{{.*}}, %[[BACK]])
