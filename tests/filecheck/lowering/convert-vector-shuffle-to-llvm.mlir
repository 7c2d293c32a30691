// RUN: teir-opt %s --split-input-file -p teir-convert-vector-to-llvm | filecheck %s

// 1-D vector.shuffle -> llvm.shufflevector with the same mask (the stages of the
// register transposes of teir_lowering.codegen.tile_primitives, and lane extraction).

func.func @shuffle(%a: vector<4xf32>, %b: vector<4xf32>, %c: vector<8xf64>, %d: vector<8xf64>) -> (vector<4xf32>, vector<8xf64>, vector<2xf64>) {
  %0 = vector.shuffle %a, %b [0, 4, 1, 5] : vector<4xf32>, vector<4xf32>
  %1 = vector.shuffle %c, %d [0, 1, 2, 3, 8, 9, 10, 11] : vector<8xf64>, vector<8xf64>
  %2 = vector.shuffle %c, %c [6, 7] : vector<8xf64>, vector<8xf64>
  func.return %0, %1, %2 : vector<4xf32>, vector<8xf64>, vector<2xf64>
}

// CHECK-LABEL: func.func @shuffle
// CHECK-NEXT:    %[[S0:.*]] = llvm.shufflevector %a, %b [0, 4, 1, 5] : vector<4xf32>
// CHECK-NEXT:    %[[S1:.*]] = llvm.shufflevector %c, %d [0, 1, 2, 3, 8, 9, 10, 11] : vector<8xf64>
// CHECK-NEXT:    %[[S2:.*]] = llvm.shufflevector %c, %c [6, 7] : vector<8xf64>
// CHECK-NEXT:    func.return %[[S0]], %[[S1]], %[[S2]]

// -----

// A non-temporal vector.store becomes a ptr_xdsl.store marked `nontemporal` (xDSL's
// convert-vector-to-ptr, which takes the others, would drop the flag).

func.func @stores(%v: vector<16xf32>, %m: memref<?xf32>, %i: index) {
  vector.store %v, %m[%i] {nontemporal = true} : memref<?xf32>, vector<16xf32>
  vector.store %v, %m[%i] : memref<?xf32>, vector<16xf32>
  func.return
}

// CHECK-LABEL: func.func @stores
// CHECK:         %[[P:.*]] = ptr_xdsl.ptradd
// CHECK-NEXT:    ptr_xdsl.store %v, %[[P]] {nontemporal} : vector<16xf32>, !ptr_xdsl.ptr
// CHECK-NEXT:    vector.store %v, %m[%i] : memref<?xf32>, vector<16xf32>
