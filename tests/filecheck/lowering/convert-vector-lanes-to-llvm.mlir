// RUN: teir-opt %s -p teir-convert-vector-to-llvm | filecheck %s

// The lanes of the microkernels' strided accesses: vector.insert of a scalar at a
// constant lane -> llvm.insertelement; vector.extract of one -> a one-lane
// llvm.shufflevector bitcast to the scalar (xDSL's llvmlite translation has no
// extractelement). Sub-vector and dynamic positions stay for the pipeline to report.

func.func @lanes(%v: vector<4xf32>, %x: f32, %d: vector<8xf64>, %i: index) -> (f32, f64, f32) {
  %0 = vector.insert %x, %v [2] : f32 into vector<4xf32>
  %1 = vector.extract %0[2] : f32 from vector<4xf32>
  %2 = vector.extract %d[7] : f64 from vector<8xf64>
  %3 = vector.extract %v[%i] : f32 from vector<4xf32>
  func.return %1, %2, %3 : f32, f64, f32
}

// CHECK-LABEL: func.func @lanes
// CHECK-NEXT:    %[[TWO:.*]] = llvm.mlir.constant(2) : i64
// CHECK-NEXT:    %[[INS:.*]] = llvm.insertelement %x, %v[%[[TWO]] : i64] : vector<4xf32>
// CHECK-NEXT:    %[[ONE:.*]] = llvm.shufflevector %[[INS]], %[[INS]] [2] : vector<4xf32>
// CHECK-NEXT:    %[[X:.*]] = llvm.bitcast %[[ONE]] : vector<1xf32> to f32
// CHECK-NEXT:    %[[ONED:.*]] = llvm.shufflevector %d, %d [7] : vector<8xf64>
// CHECK-NEXT:    %[[Y:.*]] = llvm.bitcast %[[ONED]] : vector<1xf64> to f64
// CHECK-NEXT:    %[[Z:.*]] = vector.extract %v[%i] : f32 from vector<4xf32>
// CHECK-NEXT:    func.return %[[X]], %[[Y]], %[[Z]]

