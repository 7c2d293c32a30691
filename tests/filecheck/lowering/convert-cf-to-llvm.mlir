// RUN: teir-opt %s --split-input-file -p teir-convert-cf-to-llvm | filecheck %s

// cf -> llvm branches; successor arguments are retyped (index -> i64) with casts
// (none for a value that is a cast from i64: that value is taken).

func.func @loop(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  cf.br ^header(%c0, %x : index, f32)
^header(%i: index, %acc: f32):
  %more = arith.cmpi slt, %i, %n : index
  cf.cond_br %more, ^body(%acc : f32), ^exit(%acc, %i : f32, index)
^body(%v: f32):
  %c1 = arith.constant 1 : index
  %next = arith.addi %i, %c1 : index
  %w = arith.addf %v, %v : f32
  cf.br ^header(%next, %w : index, f32)
^exit(%r: f32, %k: index):
  func.return %r : f32
}

// CHECK-LABEL: func.func @loop(%n: index, %x: f32) -> f32 {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %[[C0:.*]] = builtin.unrealized_conversion_cast %c0 : index to i64
// CHECK-NEXT:    llvm.br ^header(%[[C0]], %x : i64, f32)
// CHECK-NEXT:  ^header(%i: i64, %acc: f32):
// CHECK-NEXT:    %[[I:.*]] = builtin.unrealized_conversion_cast %i : i64 to index
// CHECK-NEXT:    %more = arith.cmpi slt, %[[I]], %n : index
// CHECK-NEXT:    llvm.cond_br %more, ^body(%acc : f32), ^exit(%acc, %i : f32, i64)
// CHECK-NEXT:  ^body(%v: f32):
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %next = arith.addi %[[I]], %c1 : index
// CHECK-NEXT:    %w = arith.addf %v, %v : f32
// CHECK-NEXT:    %[[NEXT:.*]] = builtin.unrealized_conversion_cast %next : index to i64
// CHECK-NEXT:    llvm.br ^header(%[[NEXT]], %w : i64, f32)
// CHECK-NEXT:  ^exit(%r: f32, %k: i64):
// CHECK-NEXT:    func.return %r : f32
// CHECK-NOT:   cf.

// -----

func.func @switch(%flag: i32, %a: f32, %b: f32) -> f32 {
  cf.switch %flag : i32, [
    default: ^default(%a : f32),
    0: ^zero,
    7: ^seven(%b : f32)
  ]
^default(%d: f32):
  func.return %d : f32
^zero:
  func.return %a : f32
^seven(%s: f32):
  func.return %s : f32
}

// xDSL's llvm dialect has no switch: one compare and branch per case, in order.
// CHECK-LABEL: func.func @switch(%flag: i32, %a: f32, %b: f32) -> f32 {
// CHECK-NEXT:    %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[IS_ZERO:.*]] = llvm.icmp "eq" %flag, %[[ZERO]] : i32
// CHECK-NEXT:    llvm.cond_br %[[IS_ZERO]], ^zero, ^[[NEXT:.*]]
// CHECK-NEXT:  ^[[NEXT]]:
// CHECK-NEXT:    %[[SEVEN:.*]] = llvm.mlir.constant(7 : i32) : i32
// CHECK-NEXT:    %[[IS_SEVEN:.*]] = llvm.icmp "eq" %flag, %[[SEVEN]] : i32
// CHECK-NEXT:    llvm.cond_br %[[IS_SEVEN]], ^seven(%b : f32), ^default(%a : f32)
// CHECK-NEXT:  ^default(%d: f32):
// CHECK-NOT:   cf.switch

// -----

func.func @switch_default_only(%flag: index, %a: f32) -> f32 {
  cf.switch %flag : index, [
    default: ^default(%a : f32)
  ]
^default(%d: f32):
  func.return %d : f32
}

// CHECK-LABEL: func.func @switch_default_only
// CHECK-NEXT:    llvm.br ^default(%a : f32)

// -----

func.func @assert(%ok: i1, %x: f32) -> f32 {
  cf.assert %ok, "must hold"
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}

// CHECK-LABEL: func.func @assert(%ok: i1, %x: f32) -> f32 {
// CHECK-NEXT:    llvm.cond_br %ok, ^[[CONTINUE:.*]], ^[[FAIL:.*]]
// CHECK-NEXT:  ^[[FAIL]]:
// CHECK-NEXT:    llvm.call_intrinsic "llvm.trap"() : () -> ()
// CHECK-NEXT:    llvm.unreachable
// CHECK-NEXT:  ^[[CONTINUE]]:
// CHECK-NEXT:    %y = arith.addf %x, %x : f32
// CHECK-NEXT:    func.return %y : f32
