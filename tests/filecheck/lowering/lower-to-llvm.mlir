// RUN: teir-opt %s --split-input-file -p teir-lower-to-llvm-dialect | filecheck %s
// RUN: teir-opt %s --split-input-file -p teir-lower-to-llvm-dialect -t llvm | filecheck %s --check-prefix=IR

// The whole LLVM pipeline (teir_lowering.llvm.pipeline): memrefs become bare
// pointers (`void k(float *, double *, int64_t)`), elements are addressed with a
// getelementptr and accessed with the element's alignment, and only llvm ops remain,
// or the llvm-level lane ops, which xDSL's translation takes as vector compares and
// selects.

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

func.func @relu(%v: vector<8xf32>) -> vector<8xf32> {
  %z = arith.constant dense<0.0> : vector<8xf32>
  %neg = teir_lane.cmpf olt, %v, %z : vector<8xf32>
  %r = teir_lane.select %neg, %z, %v : vector<8xi1>, vector<8xf32>
  func.return %r : vector<8xf32>
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
// CHECK-NEXT:    llvm.func @relu(%v: vector<8xf32>) -> vector<8xf32> {
// CHECK-NEXT:      %z = llvm.mlir.constant(dense<0.000000e+00> : vector<8xf32>) : vector<8xf32>
// CHECK-NEXT:      %neg = teir_lane.llvm_fcmp olt, %v, %z : vector<8xf32>
// CHECK-NEXT:      %r = teir_lane.llvm_select %neg, %z, %v : vector<8xi1>, vector<8xf32>
// CHECK-NEXT:      llvm.return %r : vector<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// IR:      define void @"k"(ptr %{{.*}}, ptr %{{.*}}, i64 %{{.*}})
// IR:        getelementptr i8, ptr
// IR:        load float, ptr {{.*}}, align 4
// IR:        fpext float {{.*}} to double
// IR:        store double {{.*}}, align 8
// IR:        ret void
// IR:      define <8 x float> @"relu"(<8 x float> %[[V:[^)]*]])
// IR:        %[[NEG:.*]] = fcmp olt <8 x float> %[[V]], <float {{.*}}>
// IR-NEXT:   select <8 x i1> %[[NEG]], <8 x float> <float {{.*}}>, <8 x float> %[[V]]

// -----

// Memrefs cross function boundaries as base pointers (the element the layout's
// offset counts from; teir_lowering.llvm.base_pointers): an argument with offset
// 36 is its pointer + 36 elements from the entry on, a call passes its view's
// pointer - 36, and reinterpret_cast restarts from its source's base.

func.func @view(%A: memref<4x8xf32, strided<[16, 1], offset: 36>>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %A[%c0, %c0] : memref<4x8xf32, strided<[16, 1], offset: 36>>
  %flat = memref.reinterpret_cast %A to offset: [0], sizes: [128], strides: [1] : memref<4x8xf32, strided<[16, 1], offset: 36>> to memref<128xf32>
  %w = memref.load %flat[%c0] : memref<128xf32>
  %s = arith.addf %v, %w : f32
  func.return %s : f32
}

func.func @caller(%X: memref<8x16xf32>) -> f32 {
  %s = memref.subview %X[2, 4] [4, 8] [1, 1] : memref<8x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 36>>
  %r = func.call @view(%s) : (memref<4x8xf32, strided<[16, 1], offset: 36>>) -> f32
  func.return %r : f32
}

// CHECK-LABEL: llvm.func @view(%A: !llvm.ptr) -> f32 {
// CHECK:         %[[K:.*]] = llvm.mlir.constant(36) : i64
// CHECK:         %[[KB:.*]] = llvm.mul %[[K]], %{{.*}} : i64
// CHECK:         %[[FIRST:.*]] = llvm.getelementptr %A[%[[KB]]]
// CHECK:         %v = llvm.load
// CHECK:         %[[BACK:.*]] = llvm.mlir.constant(-36) : i64
// CHECK:         %[[BACKB:.*]] = llvm.mul %[[BACK]], %{{.*}} : i64
// CHECK:         llvm.getelementptr %[[FIRST]][%[[BACKB]]]
// CHECK:         %w = llvm.load
// CHECK-LABEL: llvm.func @caller(%X: !llvm.ptr) -> f32 {
// CHECK:         %[[VIEW:.*]] = llvm.getelementptr %X
// CHECK:         %[[MINUS:.*]] = llvm.mlir.constant(-36) : i64
// CHECK:         %[[MINUSB:.*]] = llvm.mul %[[MINUS]], %{{.*}} : i64
// CHECK:         %[[BASE:.*]] = llvm.getelementptr %[[VIEW]][%[[MINUSB]]]
// CHECK:         llvm.call @view(%[[BASE]])

// IR: define float @"view"
// IR: define float @"caller"
