// A streamed transpose's prefetch through upstream MLIR: teir_lane.prefetch prints
// as memref.prefetch of the index plus its elements ahead (custom and generic
// forms), which mlir-opt-19 parses, verifies and lowers, and mlir-translate-19
// makes llvm.prefetch of (a read, kept in every level, of data); one into the L2
// keeps its locality 2.

// REQUIRES: mlir-opt-19

// RUN: teir-opt %s -t mlir-upstream | filecheck %s --check-prefix=SCF
// RUN: teir-opt %s -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %s -t 'mlir-upstream{generic=true}' | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s

func.func @ahead(%m: memref<?xf32>, %i: index) -> vector<16xf32> {
  teir_lane.prefetch %m[%i] ahead 64 : memref<?xf32>
  teir_lane.prefetch %m[%i] ahead 96 locality 2 : memref<?xf32>
  %x = vector.load %m[%i] : memref<?xf32>, vector<16xf32>
  func.return %x : vector<16xf32>
}

// SCF:      %[[AHEAD:.*]] = arith.constant 64 : index
// SCF-NEXT: %[[AT:.*]] = arith.addi %i, %[[AHEAD]] : index
// SCF-NEXT: memref.prefetch %m[%[[AT]]], read, locality<3>, data : memref<?xf32>
// SCF:      %[[AHEAD2:.*]] = arith.constant 96 : index
// SCF-NEXT: %[[AT2:.*]] = arith.addi %i, %[[AHEAD2]] : index
// SCF-NEXT: memref.prefetch %m[%[[AT2]]], read, locality<2>, data : memref<?xf32>

// CHECK: call void @llvm.prefetch.p0(ptr %{{.*}}, i32 0, i32 3, i32 1)
// CHECK: call void @llvm.prefetch.p0(ptr %{{.*}}, i32 0, i32 2, i32 1)
