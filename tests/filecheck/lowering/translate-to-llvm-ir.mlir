// RUN: teir-opt %s --split-input-file -t teir-llvm-ir | filecheck %s
// RUN: not teir-opt %S/Inputs/not-translated.mlir -t teir-llvm-ir 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not teir-opt %S/Inputs/bf16-arithmetic.mlir -t teir-llvm-ir 2>&1 | filecheck %s --check-prefix=BF16

// The scf level straight to LLVM IR (what compile_kernel compiles): a loop with
// a carried value is a header of phis testing iv < ub, the body, the increment,
// the exit; addresses are byte offsets through getelementptr i8, accesses
// aligned to the element.

func.func @sum(%x: memref<?xf32>, %out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant -0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<?xf32>
    %t = arith.addf %acc, %v : f32
    scf.yield %t : f32
  }
  memref.store %s, %out[%c0] : memref<?xf32>
  func.return
}

// CHECK-LABEL: define void @"sum"(ptr %a0, ptr %a1, i64 %a2) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    br label %[[HEAD:b[0-9]+]]
// CHECK-NEXT:  [[HEAD]]:
// CHECK-NEXT:    %[[I:v[0-9]+]] = phi i64 [0, %entry], [%[[NEXT:v[0-9]+]], %[[BODY:b[0-9]+]]]
// CHECK-NEXT:    %[[ACC:v[0-9]+]] = phi float [0x8000000000000000, %entry], [%[[T:v[0-9]+]], %[[BODY]]]
// CHECK-NEXT:    %[[TEST:v[0-9]+]] = icmp slt i64 %[[I]], %a2
// CHECK-NEXT:    br i1 %[[TEST]], label %[[BODY]], label %[[EXIT:b[0-9]+]]
// CHECK-NEXT:  [[BODY]]:
// CHECK-NEXT:    %[[OFF:v[0-9]+]] = mul i64 %[[I]], 4
// CHECK-NEXT:    %[[AT:v[0-9]+]] = getelementptr i8, ptr %a0, i64 %[[OFF]]
// CHECK-NEXT:    %[[V:v[0-9]+]] = load float, ptr %[[AT]], align 4
// CHECK-NEXT:    %[[T]] = fadd float %[[ACC]], %[[V]]
// CHECK-NEXT:    %[[NEXT]] = add i64 %[[I]], 1
// CHECK-NEXT:    br label %[[HEAD]]
// CHECK-NEXT:  [[EXIT]]:
// CHECK:         store float %[[ACC]], ptr %{{v[0-9]+}}, align 4
// CHECK-NEXT:    ret void
// CHECK-NEXT:  }

// -----

// Vectors: a broadcast is insertelement + a zero-mask shuffle; fma the intrinsic,
// declared once; a non-temporal store keeps its flag and the function gets an
// sfence before its return; a scratch buffer is one alloca in the entry block.

func.func @vectors(%a: memref<?xf32>, %out: memref<?xf32>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %k step %c1 {
    %buffer = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
    %x = vector.load %a[%i] : memref<?xf32>, vector<8xf32>
    %s = memref.load %a[%c0] : memref<?xf32>
    %b = vector.broadcast %s : f32 to vector<8xf32>
    %f = vector.fma %x, %b, %x : vector<8xf32>
    %g = vector.fma %f, %b, %x : vector<8xf32>
    %h = vector.shuffle %f, %g [0, 8, 1, 9] : vector<8xf32>, vector<8xf32>
    %e = vector.extract %h[3] : f32 from vector<4xf32>
    %w = vector.insert %e, %g [7] : f32 into vector<8xf32>
    vector.store %w, %buffer[%c0] : memref<16xf32>, vector<8xf32>
    vector.store %w, %out[%i] {nontemporal = true} : memref<?xf32>, vector<8xf32>
  }
  func.return
}

// CHECK-LABEL: define void @"vectors"(ptr %a0, ptr %a1, i64 %a2) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    %[[BUF:v[0-9]+]] = alloca float, i64 16, align 64
// CHECK-NEXT:    br label
// CHECK:         load <8 x float>, ptr %{{v[0-9]+}}, align 4
// CHECK:         %[[ONE:v[0-9]+]] = insertelement <8 x float> undef, float %{{v[0-9]+}}, i64 0
// CHECK-NEXT:    %[[B:v[0-9]+]] = shufflevector <8 x float> %[[ONE]], <8 x float> undef, <8 x i32> zeroinitializer
// CHECK-NEXT:    %[[F:v[0-9]+]] = call <8 x float> @"llvm.fma.v8f32"(<8 x float> %{{v[0-9]+}}, <8 x float> %[[B]], <8 x float> %{{v[0-9]+}})
// CHECK-NEXT:    %[[G:v[0-9]+]] = call <8 x float> @"llvm.fma.v8f32"
// CHECK-NEXT:    %[[H:v[0-9]+]] = shufflevector <8 x float> %[[F]], <8 x float> %[[G]], <4 x i32> <i32 0, i32 8, i32 1, i32 9>
// CHECK-NEXT:    %[[E:v[0-9]+]] = extractelement <4 x float> %[[H]], i64 3
// CHECK-NEXT:    %[[W:v[0-9]+]] = insertelement <8 x float> %[[G]], float %[[E]], i64 7
// CHECK-NEXT:    %{{v[0-9]+}} = mul i64 0, 4
// CHECK-NEXT:    %[[AT:v[0-9]+]] = getelementptr i8, ptr %[[BUF]]
// CHECK-NEXT:    store <8 x float> %[[W]], ptr %[[AT]], align 4{{$}}
// CHECK:         store <8 x float> %[[W]], ptr %{{v[0-9]+}}, align 32, !nontemporal !0
// CHECK:         call void @"llvm.x86.sse.sfence"()
// CHECK-NEXT:    ret void
// CHECK-NEXT:  }
// CHECK:       declare <8 x float> @"llvm.fma.v8f32"(<8 x float>, <8 x float>, <8 x float>)
// CHECK-NOT:   declare <8 x float> @"llvm.fma.v8f32"
// CHECK:       declare void @"llvm.x86.sse.sfence"()
// CHECK:       !0 = !{i32 1}

// -----

// Constants are written exactly (half and float in LLVM's hexadecimal forms),
// lanes compare and select as vectors, an scf.if with a result is a phi of the
// blocks that branch to its end, a launcher stays a declaration.

func.func private @__teir_launch_body(memref<?xf16>, index)

func.func @constants(%p: memref<?xf16>, %c: i1, %v: vector<4xf32>) {
  %h = arith.constant 1.5 : f16
  %m = arith.constant -3 : i32
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %n = teir_lane.cmpf olt, %v, %zero : vector<4xf32>
  %r = teir_lane.select %n, %zero, %v : vector<4xi1>, vector<4xf32>
  %x = scf.if %c -> (f16) {
    scf.yield %h : f16
  } else {
    %w = arith.negf %h : f16
    scf.yield %w : f16
  }
  %c0 = arith.constant 0 : index
  memref.store %x, %p[%c0] : memref<?xf16>
  %b = arith.bitcast %m : i32 to f32
  %c4 = arith.constant 4 : index
  func.call @__teir_launch_body(%p, %c4) : (memref<?xf16>, index) -> ()
  func.return
}

// CHECK-LABEL: define void @"constants"(ptr %a0, i1 %a1, <4 x float> %a2) {
// CHECK:         %[[N:v[0-9]+]] = fcmp olt <4 x float> %a2, <float 0x0000000000000000, float 0x0000000000000000, float 0x0000000000000000, float 0x0000000000000000>
// CHECK-NEXT:    %{{v[0-9]+}} = select <4 x i1> %[[N]], <4 x float> <float 0x0000000000000000, {{.*}}>, <4 x float> %a2
// CHECK-NEXT:    br i1 %a1, label %[[THEN:b[0-9]+]], label %[[ELSE:b[0-9]+]]
// CHECK-NEXT:  [[THEN]]:
// CHECK-NEXT:    br label %[[END:b[0-9]+]]
// CHECK-NEXT:  [[ELSE]]:
// CHECK-NEXT:    %[[W:v[0-9]+]] = fneg half 0xH3E00
// CHECK-NEXT:    br label %[[END]]
// CHECK-NEXT:  [[END]]:
// CHECK-NEXT:    %[[X:v[0-9]+]] = phi half [0xH3E00, %[[THEN]]], [%[[W]], %[[ELSE]]]
// CHECK:         store half %[[X]], ptr %{{v[0-9]+}}, align 2
// CHECK-NEXT:    %{{v[0-9]+}} = bitcast i32 -3 to float
// CHECK-NEXT:    call void @"__teir_launch_body"(ptr %a0, i64 4)
// CHECK-NEXT:    ret void
// CHECK:       declare void @"__teir_launch_body"(ptr, i64)



// -----

// Overflow and fast-math flags keep LLVM's names.

func.func @flags(%a: f32, %i: i64) {
  %b = arith.addf %a, %a fastmath<nnan,contract> : f32
  %j = arith.addi %i, %i overflow<nsw,nuw> : i64
  func.return
}

// CHECK-LABEL: define void @"flags"(float %a0, i64 %a1) {
// CHECK:         fadd contract nnan float %a0, %a0
// CHECK-NEXT:    add nsw nuw i64 %a1, %a1

// ERR: arith.ceildivsi is not translated to LLVM IR

// -----

// The bf16 pair product: a call of the vdpbf16ps intrinsic, declared once.

func.func @pairs(%m: memref<?xf32>, %p: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %acc = vector.load %m[%c0] : memref<?xf32>, vector<16xf32>
  %a = vector.load %p[%c0] : memref<?xi32>, vector<16xi32>
  %d = teir_lane.dot_bf16_pairs %acc, %a, %a : vector<16xf32>, vector<16xi32>
  %e = teir_lane.dot_bf16_pairs %d, %a, %a : vector<16xf32>, vector<16xi32>
  vector.store %e, %m[%c0] : memref<?xf32>, vector<16xf32>
  func.return
}

// CHECK-LABEL: define void @"pairs"(ptr %a0, ptr %a1) {
// CHECK:         %[[D:.*]] = call <16 x float> @"llvm.x86.avx512bf16.dpbf16ps.512"(<16 x float> %{{.*}}, <16 x i32> %[[A:.*]], <16 x i32> %[[A]])
// CHECK:         call <16 x float> @"llvm.x86.avx512bf16.dpbf16ps.512"(<16 x float> %[[D]], <16 x i32> %[[A]], <16 x i32> %[[A]])
// CHECK:       declare <16 x float> @"llvm.x86.avx512bf16.dpbf16ps.512"(<16 x float>, <16 x i32>, <16 x i32>)
// CHECK-NOT:   declare

// -----

// Loops marked `teir_lane.unrolled` (the tile emitter's own unrolled vector code)
// ask LLVM's unroller to leave them: each its own distinct !llvm.loop node on
// the back edge; an unmarked loop has none.

func.func @unrolled(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %n step %c8 {
    %x = vector.load %a[%i] : memref<?xf32>, vector<8xf32>
    vector.store %x, %a[%i] : memref<?xf32>, vector<8xf32>
  } {teir_lane.unrolled}
  scf.for %i = %c0 to %n step %c8 {
    %x = vector.load %a[%i] : memref<?xf32>, vector<8xf32>
    vector.store %x, %a[%i] : memref<?xf32>, vector<8xf32>
  } {teir_lane.unrolled}
  scf.for %i = %c0 to %n step %c8 {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %a[%i] : memref<?xf32>
  }
  func.return
}

// CHECK-LABEL: define void @"unrolled"(ptr %a0, i64 %a1) {
// CHECK:         br label %[[HEAD1:b[0-9]+]], !llvm.loop ![[LOOP1:[0-9]+]]
// CHECK:         br label %[[HEAD2:b[0-9]+]], !llvm.loop ![[LOOP2:[0-9]+]]
// CHECK:         br label %{{b[0-9]+}}{{$}}
// CHECK:       !0 = !{i32 1}
// CHECK-NEXT:  ![[OFF:1]] = !{!"llvm.loop.unroll.disable"}
// CHECK-NEXT:  ![[LOOP1]] = distinct !{![[LOOP1]], ![[OFF]]}
// CHECK-NEXT:  ![[LOOP2]] = distinct !{![[LOOP2]], ![[OFF]]}

// -----

// bf16 values are written as i16 (the kernels only move them; teir-bf16-as-i16
// types them so in the pass pipeline): loads, stores, selects, bitcasts from and
// to i16 (a no-op LLVM drops), constants as their bits rounded to nearest even.

func.func @halves(%m: memref<?xbf16>, %c: i1) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : bf16
  %third = arith.constant dense<0.333333343> : vector<8xbf16>
  %x = memref.load %m[%c0] : memref<?xbf16>
  %s = arith.select %c, %x, %one : bf16
  %i = arith.bitcast %s : bf16 to i16
  %b = arith.bitcast %i : i16 to bf16
  memref.store %b, %m[%c0] : memref<?xbf16>
  vector.store %third, %m[%c0] : memref<?xbf16>, vector<8xbf16>
  func.return
}

// CHECK-LABEL: define void @"halves"(ptr %a0, i1 %a1) {
// CHECK:         %[[X:v[0-9]+]] = load i16, ptr %{{v[0-9]+}}, align 2
// CHECK-NEXT:    %[[S:v[0-9]+]] = select i1 %a1, i16 %[[X]], i16 16256
// CHECK-NEXT:    %[[I:v[0-9]+]] = bitcast i16 %[[S]] to i16
// CHECK-NEXT:    %[[B:v[0-9]+]] = bitcast i16 %[[I]] to i16
// CHECK:         store i16 %[[B]], ptr %{{v[0-9]+}}, align 2
// CHECK:         store <8 x i16> <i16 16043, i16 16043, i16 16043, i16 16043, i16 16043, i16 16043, i16 16043, i16 16043>

// BF16: teir-opt: error: teir-bf16-as-i16: arith.addf computes on bf16 values; widen them to f32 first

// -----

// A prefetch (the streamed transposes' rows of in0, `ahead` elements past a load):
// the load's address plus the bytes ahead as a constant displacement, and
// `llvm.prefetch` of a read kept in every level, declared once; on a bf16 memref
// it moves nothing, so the module is still typed as i16.

func.func @ahead(%m: memref<?xbf16>, %i: index) {
  teir_lane.prefetch %m[%i] ahead 128 : memref<?xbf16>
  %x = vector.load %m[%i] : memref<?xbf16>, vector<32xbf16>
  vector.store %x, %m[%i] : memref<?xbf16>, vector<32xbf16>
  teir_lane.prefetch %m[%i] ahead 64 : memref<?xbf16>
  func.return
}

// CHECK-LABEL: define void @"ahead"(ptr %a0, i64 %a1) {
// CHECK-NEXT:  entry:
// CHECK-NEXT:    %[[OFF:v[0-9]+]] = mul i64 %a1, 2
// CHECK-NEXT:    %[[AT:v[0-9]+]] = getelementptr i8, ptr %a0, i64 %[[OFF]]
// CHECK-NEXT:    %[[AHEAD:v[0-9]+]] = getelementptr i8, ptr %[[AT]], i64 256
// CHECK-NEXT:    call void @"llvm.prefetch.p0"(ptr %[[AHEAD]], i32 0, i32 3, i32 1)
// CHECK:         load <32 x i16>
// CHECK:         getelementptr i8, ptr %{{v[0-9]+}}, i64 128
// CHECK-NEXT:    call void @"llvm.prefetch.p0"
// CHECK:         declare void @"llvm.prefetch.p0"(ptr, i32, i32, i32)
// CHECK-NOT:     declare void @"llvm.prefetch.p0"

// -----

// A prefetch into the L2 (locality 2: the streamed tiles' next tile) passes its
// locality to `llvm.prefetch`.

func.func @to_l2(%m: memref<?xf32>, %i: index) {
  teir_lane.prefetch %m[%i] ahead 6938 locality 2 : memref<?xf32>
  func.return
}

// CHECK-LABEL: define void @"to_l2"(ptr %a0, i64 %a1) {
// CHECK:         %[[AHEAD:v[0-9]+]] = getelementptr i8, ptr %{{v[0-9]+}}, i64 27752
// CHECK-NEXT:    call void @"llvm.prefetch.p0"(ptr %[[AHEAD]], i32 0, i32 2, i32 1)
