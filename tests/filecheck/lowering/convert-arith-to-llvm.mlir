// RUN: teir-opt %s --split-input-file -p teir-convert-arith-to-llvm | filecheck %s

// arith (and one-intrinsic math ops) -> llvm; index is i64, with unrealized casts
// where a value changes type (reconcile-unrealized-casts removes them later).

func.func @constants() -> (i32, index, f32, f64, i1, vector<4xf32>, vector<2xindex>) {
  %i = arith.constant 42 : i32
  %x = arith.constant -7 : index
  %f = arith.constant 1.5 : f32
  %d = arith.constant 2.0 : f64
  %b = arith.constant true
  %v = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
  %vi = arith.constant dense<3> : vector<2xindex>
  func.return %i, %x, %f, %d, %b, %v, %vi : i32, index, f32, f64, i1, vector<4xf32>, vector<2xindex>
}

// CHECK-LABEL: func.func @constants()
// CHECK-NEXT:    %i = llvm.mlir.constant(42 : i32) : i32
// CHECK-NEXT:    %x = llvm.mlir.constant(-7) : i64
// CHECK-NEXT:    %[[X:.*]] = builtin.unrealized_conversion_cast %x : i64 to index
// CHECK-NEXT:    %f = llvm.mlir.constant(1.500000e+00 : f32) : f32
// CHECK-NEXT:    %d = llvm.mlir.constant(2.000000e+00 : f64) : f64
// CHECK-NEXT:    %b = llvm.mlir.constant(true) : i1
// CHECK-NEXT:    %v = llvm.mlir.constant(dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : vector<4xf32>) : vector<4xf32>
// CHECK-NEXT:    %vi = llvm.mlir.constant(dense<3> : vector<2xi64>) : vector<2xi64>
// CHECK-NEXT:    %[[VI:.*]] = builtin.unrealized_conversion_cast %vi : vector<2xi64> to vector<2xindex>
// CHECK-NEXT:    func.return %i, %[[X]], %f, %d, %b, %v, %[[VI]]

// -----

func.func @integer_binary(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) {
  %0 = arith.addi %a, %b : i32
  %1 = arith.subi %a, %b overflow<nsw> : i32
  %2 = arith.muli %a, %b overflow<nsw,nuw> : i32
  %3 = arith.divsi %a, %b : i32
  %4 = arith.divui %a, %b : i32
  %5 = arith.remsi %a, %b : i32
  %6 = arith.remui %a, %b : i32
  %7 = arith.andi %a, %b : i32
  %8 = arith.ori %a, %b : i32
  %9 = arith.xori %a, %b : i32
  %10 = arith.shli %a, %b : i32
  %11 = arith.shrsi %a, %b : i32
  %12 = arith.shrui %a, %b : i32
  %13 = arith.maxsi %a, %b : i32
  %14 = arith.minsi %a, %b : i32
  %15 = arith.maxui %a, %b : i32
  %16 = arith.minui %a, %b : i32
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16 : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32
}

// CHECK-LABEL: func.func @integer_binary(%a: i32, %b: i32)
// CHECK-NEXT:    %0 = llvm.add %a, %b : i32
// CHECK-NEXT:    %1 = llvm.sub %a, %b overflow<nsw> : i32
// CHECK-NEXT:    %2 = llvm.mul %a, %b overflow<nsw,nuw> : i32
// CHECK-NEXT:    %3 = llvm.sdiv %a, %b : i32
// CHECK-NEXT:    %4 = llvm.udiv %a, %b : i32
// CHECK-NEXT:    %5 = llvm.srem %a, %b : i32
// CHECK-NEXT:    %6 = llvm.urem %a, %b : i32
// CHECK-NEXT:    %7 = llvm.and %a, %b : i32
// CHECK-NEXT:    %8 = llvm.or %a, %b : i32
// CHECK-NEXT:    %9 = llvm.xor %a, %b : i32
// CHECK-NEXT:    %10 = llvm.shl %a, %b : i32
// CHECK-NEXT:    %11 = llvm.ashr %a, %b : i32
// CHECK-NEXT:    %12 = llvm.lshr %a, %b : i32
// CHECK-NEXT:    %[[MAXS:.*]] = llvm.icmp "sgt" %a, %b : i32
// CHECK-NEXT:    %{{.*}} = llvm.select %[[MAXS]], %a, %b : i1, i32
// CHECK-NEXT:    %[[MINS:.*]] = llvm.icmp "slt" %a, %b : i32
// CHECK-NEXT:    %{{.*}} = llvm.select %[[MINS]], %a, %b : i1, i32
// CHECK-NEXT:    %[[MAXU:.*]] = llvm.icmp "ugt" %a, %b : i32
// CHECK-NEXT:    %{{.*}} = llvm.select %[[MAXU]], %a, %b : i1, i32
// CHECK-NEXT:    %[[MINU:.*]] = llvm.icmp "ult" %a, %b : i32
// CHECK-NEXT:    %{{.*}} = llvm.select %[[MINU]], %a, %b : i1, i32
// CHECK-NEXT:    func.return
// CHECK-NOT:     arith.

// -----

func.func @float_binary(%a: f32, %b: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32) {
  %0 = arith.addf %a, %b : f32
  %1 = arith.subf %a, %b : f32
  %2 = arith.mulf %a, %b fastmath<fast> : f32
  %3 = arith.divf %a, %b fastmath<nnan,ninf> : f32
  %4 = arith.negf %a : f32
  %5 = arith.maximumf %a, %b : f32
  %6 = arith.minimumf %a, %b : f32
  %7 = arith.maxnumf %a, %b : f32
  %8 = arith.minnumf %a, %b : f32
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8 : f32, f32, f32, f32, f32, f32, f32, f32, f32
}

// CHECK-LABEL: func.func @float_binary(%a: f32, %b: f32)
// CHECK-NEXT:    %0 = llvm.fadd %a, %b : f32
// CHECK-NEXT:    %1 = llvm.fsub %a, %b : f32
// CHECK-NEXT:    %2 = llvm.fmul %a, %b {fastmathFlags = #llvm.fastmath<fast>} : f32
// CHECK-NEXT:    %3 = llvm.fdiv %a, %b {fastmathFlags = #llvm.fastmath<nnan,ninf>} : f32
// CHECK-NEXT:    %4 = llvm.fneg %a : f32
// CHECK-NEXT:    %5 = llvm.call_intrinsic "llvm.maximum.f32"(%a, %b) : (f32, f32) -> f32
// CHECK-NEXT:    %6 = llvm.call_intrinsic "llvm.minimum.f32"(%a, %b) : (f32, f32) -> f32
// CHECK-NEXT:    %7 = llvm.call_intrinsic "llvm.maxnum.f32"(%a, %b) : (f32, f32) -> f32
// CHECK-NEXT:    %8 = llvm.call_intrinsic "llvm.minnum.f32"(%a, %b) : (f32, f32) -> f32
// CHECK-NEXT:    func.return

// -----

func.func @compare_select(%a: i64, %b: i64, %x: f64, %y: f64) -> (i1, i1, i1, i1, i1, i1, i1, f64) {
  %0 = arith.cmpi eq, %a, %b : i64
  %1 = arith.cmpi ult, %a, %b : i64
  %2 = arith.cmpi sge, %a, %b : i64
  %3 = arith.cmpf olt, %x, %y : f64
  %4 = arith.cmpf une, %x, %y : f64
  %5 = arith.cmpf false, %x, %y : f64
  %6 = arith.cmpf true, %x, %y : f64
  %7 = arith.select %3, %x, %y : f64
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : i1, i1, i1, i1, i1, i1, i1, f64
}

// CHECK-LABEL: func.func @compare_select(%a: i64, %b: i64, %x: f64, %y: f64)
// CHECK-NEXT:    %0 = llvm.icmp "eq" %a, %b : i64
// CHECK-NEXT:    %1 = llvm.icmp "ult" %a, %b : i64
// CHECK-NEXT:    %2 = llvm.icmp "sge" %a, %b : i64
// CHECK-NEXT:    %3 = llvm.fcmp "olt" %x, %y : f64
// CHECK-NEXT:    %4 = llvm.fcmp "une" %x, %y : f64
// CHECK-NEXT:    %5 = llvm.mlir.constant(false) : i1
// CHECK-NEXT:    %6 = llvm.mlir.constant(true) : i1
// CHECK-NEXT:    %7 = llvm.select %3, %x, %y : i1, f64
// CHECK-NEXT:    func.return

// -----

func.func @casts(%i8: i8, %i32: i32, %i64: i64, %f32: f32, %f64: f64) -> (i32, i64, i8, f64, f32, f64, f32, i32, i64, f64, f32, i32) {
  %0 = arith.extsi %i8 : i8 to i32
  %1 = arith.extui %i32 : i32 to i64
  %2 = arith.trunci %i32 : i32 to i8
  %3 = arith.sitofp %i32 : i32 to f64
  %4 = arith.uitofp %i32 : i32 to f32
  %5 = arith.uitofp %i64 : i64 to f64
  %6 = arith.truncf %f64 : f64 to f32
  %7 = arith.fptosi %f32 : f32 to i32
  %8 = arith.fptoui %f64 : f64 to i64
  %9 = arith.extf %f32 : f32 to f64
  %10 = arith.bitcast %i32 : i32 to f32
  %11 = arith.bitcast %f32 : f32 to i32
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : i32, i64, i8, f64, f32, f64, f32, i32, i64, f64, f32, i32
}

// CHECK-LABEL: func.func @casts(%i8: i8, %i32: i32, %i64: i64, %f32: f32, %f64: f64)
// CHECK-NEXT:    %[[EXTSI:.*]] = llvm.sext %i8 : i8 to i32
// CHECK-NEXT:    %[[EXTUI:.*]] = llvm.zext %i32 : i32 to i64
// CHECK-NEXT:    %[[TRUNCI:.*]] = llvm.trunc %i32 : i32 to i8
// CHECK-NEXT:    %[[SITOFP:.*]] = llvm.sitofp %i32 : i32 to f64
// uitofp from i32: zero-extend, then a signed conversion is exact
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.zext %i32 : i32 to i64
// CHECK-NEXT:    %[[UITOFP32:.*]] = llvm.sitofp %[[WIDE]] : i64 to f32
// uitofp from i64: halve with a sticky bit when the top bit is set
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:    %[[NEG:.*]] = llvm.icmp "slt" %i64, %[[ZERO]] : i64
// CHECK-NEXT:    %[[HALF:.*]] = llvm.lshr %i64, %[[ONE]] : i64
// CHECK-NEXT:    %[[LOW:.*]] = llvm.and %i64, %[[ONE]] : i64
// CHECK-NEXT:    %[[STICKY:.*]] = llvm.or %[[HALF]], %[[LOW]] : i64
// CHECK-NEXT:    %[[FHALF:.*]] = llvm.sitofp %[[STICKY]] : i64 to f64
// CHECK-NEXT:    %[[TWICE:.*]] = llvm.fadd %[[FHALF]], %[[FHALF]] : f64
// CHECK-NEXT:    %[[DIRECT:.*]] = llvm.sitofp %i64 : i64 to f64
// CHECK-NEXT:    %[[UITOFP64:.*]] = llvm.select %[[NEG]], %[[TWICE]], %[[DIRECT]] : i1, f64
// CHECK-NEXT:    %[[TRUNCF:.*]] = llvm.fptrunc %f64 : f64 to f32
// CHECK-NEXT:    %[[FPTOSI:.*]] = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%f32) : (f32) -> i32
// CHECK-NEXT:    %[[FPTOUI:.*]] = llvm.call_intrinsic "llvm.fptoui.sat.i64.f64"(%f64) : (f64) -> i64
// CHECK-NEXT:    %[[EXTF:.*]] = llvm.fpext %f32 : f32 to f64
// CHECK-NEXT:    %[[BC1:.*]] = llvm.bitcast %i32 : i32 to f32
// CHECK-NEXT:    %[[BC2:.*]] = llvm.bitcast %f32 : f32 to i32
// CHECK-NEXT:    func.return %[[EXTSI]], %[[EXTUI]], %[[TRUNCI]], %[[SITOFP]], %[[UITOFP32]], %[[UITOFP64]], %[[TRUNCF]], %[[FPTOSI]], %[[FPTOUI]], %[[EXTF]], %[[BC1]], %[[BC2]] :

// -----

func.func @index_arith(%i: index, %n: i32) -> (index, i32, i64) {
  %c4 = arith.constant 4 : index
  %m = arith.muli %i, %c4 : index
  %ni = arith.index_cast %n : i32 to index
  %s = arith.addi %m, %ni : index
  %q = arith.divsi %s, %c4 : index
  %t = arith.index_cast %q : index to i32
  %u = arith.index_cast %q : index to i64
  func.return %q, %t, %u : index, i32, i64
}

// Index operands are cast to i64, index results cast back to index; an operand
// that is a converted result cast back is taken as the i64 value at once (no cast
// pair), and casts back that are left unused are erased.
// CHECK-LABEL: func.func @index_arith(%i: index, %n: i32)
// CHECK-NEXT:    %c4 = llvm.mlir.constant(4) : i64
// CHECK-NEXT:    %[[I:.*]] = builtin.unrealized_conversion_cast %i : index to i64
// CHECK-NEXT:    %m = llvm.mul %[[I]], %c4 : i64
// CHECK-NEXT:    %ni = llvm.sext %n : i32 to i64
// CHECK-NEXT:    %s = llvm.add %m, %ni : i64
// CHECK-NEXT:    %q = llvm.sdiv %s, %c4 : i64
// CHECK-NEXT:    %[[QI:.*]] = builtin.unrealized_conversion_cast %q : i64 to index
// CHECK-NEXT:    %t = llvm.trunc %q : i64 to i32
// index_cast to i64 is the i64 value itself
// CHECK-NEXT:    func.return %[[QI]], %t, %q : index, i32, i64

// -----

func.func @vectors(%a: vector<8xf32>, %b: vector<8xf32>, %i: vector<4xindex>, %j: vector<4xindex>) -> (vector<8xf32>, vector<8xf64>, vector<4xindex>) {
  %0 = arith.addf %a, %b : vector<8xf32>
  %1 = arith.mulf %0, %a : vector<8xf32>
  %2 = arith.maximumf %1, %b : vector<8xf32>
  %3 = arith.extf %2 : vector<8xf32> to vector<8xf64>
  %4 = arith.addi %i, %j : vector<4xindex>
  func.return %2, %3, %4 : vector<8xf32>, vector<8xf64>, vector<4xindex>
}

// CHECK-LABEL: func.func @vectors
// CHECK-NEXT:    %0 = llvm.fadd %a, %b : vector<8xf32>
// CHECK-NEXT:    %1 = llvm.fmul %0, %a : vector<8xf32>
// CHECK-NEXT:    %2 = llvm.call_intrinsic "llvm.maximum.v8f32"(%1, %b) : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT:    %3 = llvm.fpext %2 : vector<8xf32> to vector<8xf64>
// CHECK-NEXT:    %[[I:.*]] = builtin.unrealized_conversion_cast %i : vector<4xindex> to vector<4xi64>
// CHECK-NEXT:    %[[J:.*]] = builtin.unrealized_conversion_cast %j : vector<4xindex> to vector<4xi64>
// CHECK-NEXT:    %{{.*}} = llvm.add %[[I]], %[[J]] : vector<4xi64>

// -----

func.func @math(%a: f64, %b: f64, %c: f64, %v: vector<4xf32>) -> (f64, f64, vector<4xf32>) {
  %0 = math.fma %a, %b, %c : f64
  %1 = math.sqrt %0 : f64
  %2 = math.fma %v, %v, %v fastmath<fast> : vector<4xf32>
  func.return %0, %1, %2 : f64, f64, vector<4xf32>
}

// CHECK-LABEL: func.func @math
// CHECK-NEXT:    %0 = llvm.intr.fma(%a, %b, %c) : (f64, f64, f64) -> f64
// CHECK-NEXT:    %1 = llvm.call_intrinsic "llvm.sqrt.f64"(%0) : (f64) -> f64
// CHECK-NEXT:    %2 = llvm.intr.fma(%v, %v, %v) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK-NEXT:    func.return

// -----

// Ops with no LLVM counterpart in xDSL are left for the pipeline to report.
func.func @unsupported(%a: i32, %b: i32, %v: vector<4xf32>) -> (i32, i1) {
  %0 = arith.ceildivsi %a, %b : i32
  %1 = arith.cmpf olt, %v, %v : vector<4xf32>
  func.return %0, %1 : i32, i1
}

// CHECK-LABEL: func.func @unsupported
// CHECK-NEXT:    %0 = arith.ceildivsi %a, %b : i32
// CHECK-NEXT:    %1 = arith.cmpf olt, %v, %v : vector<4xf32>

// -----

// Lane-wise compare and select on vectors (teir_lane, as the vectorized ReLU
// makes them) -> their llvm-level forms, which xDSL's translation takes as
// llvm.fcmp and llvm.select with a vector of i1 per lane; a scalar i1
// condition still selects whole vectors. The false/true predicates, which the
// translation cannot spell, are left for the pipeline to report.
func.func @lane_compare_select(%x: vector<8xf32>, %z: vector<8xf32>, %last: i1) -> (vector<8xf32>, vector<8xi1>) {
  %neg = teir_lane.cmpf olt, %x, %z : vector<8xf32>
  %relu = teir_lane.select %neg, %z, %x : vector<8xi1>, vector<8xf32>
  %v = arith.select %last, %relu, %x : vector<8xf32>
  %t = teir_lane.cmpf true, %x, %x : vector<8xf32>
  func.return %v, %t : vector<8xf32>, vector<8xi1>
}

// CHECK-LABEL: func.func @lane_compare_select
// CHECK-NEXT:    %neg = teir_lane.llvm_fcmp olt, %x, %z : vector<8xf32>
// CHECK-NEXT:    %relu = teir_lane.llvm_select %neg, %z, %x : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:    %v = llvm.select %last, %relu, %x : i1, vector<8xf32>
// CHECK-NEXT:    %t = teir_lane.cmpf true, %x, %x : vector<8xf32>
// CHECK-NEXT:    func.return %v, %t

// -----

// The bf16 pair product -> the vdpbf16ps intrinsic of its width (LLVM takes the
// i32 form of the pairs and upgrades it to bfloat vectors).
func.func @pairs(%acc: vector<8xf32>, %a: vector<8xi32>, %b: vector<8xi32>) -> vector<8xf32> {
  %d = teir_lane.dot_bf16_pairs %acc, %a, %b : vector<8xf32>, vector<8xi32>
  func.return %d : vector<8xf32>
}

// CHECK-LABEL: func.func @pairs
// CHECK-NEXT:    %d = llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.256"(%acc, %a, %b) : (vector<8xf32>, vector<8xi32>, vector<8xi32>) -> vector<8xf32>
