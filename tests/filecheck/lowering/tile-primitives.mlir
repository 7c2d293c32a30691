// RUN: teir-opt %s --split-input-file -p teir-to-scf,canonicalize,cse | filecheck %s

// Zero/Copy/ReLU tiles become vector code (teir_lowering.codegen.tile_primitives).
// A transposing Copy (r has unit stride on out, c on in0) of 4 x 4 f32 in a
// parallel loop: four rows of in0 loaded as vectors, two stages of shuffles
// (interleave 32-bit lanes, then 64-bit pairs), four rows of out stored. Every
// host has 16-byte vectors, so this is the same everywhere.

func.func @transpose(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis t extent 3 strides [96, 112] offsets [0, 0]
    teir.axis r extent 4 strides [24, 4] offsets [0, 0]
    teir.axis c extent 4 strides [4, 28] offsets [0, 0]
    teir.primitive copy Copy {M = [c], N = [r]} {data_type = "FP32"}
    teir.schedule {
      teir.iter t over t parallel {
        teir.invoke x -> copy
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @transpose
// CHECK:         ^bb0(%t: index):
// CHECK:           %[[IN:.*]] = arith.muli %t, %{{.*}} : index
// CHECK:           %[[OUT:.*]] = arith.muli %t, %{{.*}} : index
// CHECK:           %[[R0:.*]] = vector.load %in0[%[[IN]]] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:      %[[R1:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:      %[[R2:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:      %[[R3:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:      %[[A:.*]] = vector.shuffle %[[R0]], %[[R1]] [0, 4, 1, 5] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:      %[[B:.*]] = vector.shuffle %[[R0]], %[[R1]] [2, 6, 3, 7] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:      %[[C:.*]] = vector.shuffle %[[R2]], %[[R3]] [0, 4, 1, 5] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:      %[[D:.*]] = vector.shuffle %[[R2]], %[[R3]] [2, 6, 3, 7] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:      %[[C0:.*]] = vector.shuffle %[[A]], %[[C]] [0, 1, 4, 5] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:      %[[C1:.*]] = vector.shuffle %[[A]], %[[C]] [2, 3, 6, 7] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:      %[[C2:.*]] = vector.shuffle %[[B]], %[[D]] [0, 1, 4, 5] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:      %[[C3:.*]] = vector.shuffle %[[B]], %[[D]] [2, 3, 6, 7] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:      vector.store %[[C0]], %out[%[[OUT]]] : memref<?xf32>, vector<4xf32>
// CHECK:           vector.store %[[C1]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK:           vector.store %[[C2]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK:           vector.store %[[C3]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:      scf.reduce

// -----

// A ReLU over 20 contiguous f32: full vectors of the host's width, then one
// vector of 4 (on hosts with 32- or 64-byte vectors); select(x < 0, 0, x) lane
// by lane (-0.0 and NaN pass unchanged).

func.func @relu(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 2 strides [80, 96] offsets [0, 0]
    teir.axis i extent 20 strides [4, 4] offsets [0, 0]
    teir.primitive relu ReLU {M = [i], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.invoke x -> relu
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @relu
// CHECK:         scf.for %k = {{.*}} {
// CHECK:           %[[X:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<[[L:[0-9]+]]xf32>
// CHECK-NEXT:      %[[NEG:.*]] = teir_lane.cmpf olt, %[[X]], %[[Z:.*]] : vector<[[L]]xf32>
// CHECK-NEXT:      %[[R:.*]] = teir_lane.select %[[NEG]], %[[Z]], %[[X]] : vector<[[L]]xi1>, vector<[[L]]xf32>
// CHECK-NEXT:      vector.store %[[R]], %out[%{{.*}}] : memref<?xf32>, vector<[[L]]xf32>
// CHECK:           %[[Y:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:      %[[NEG4:.*]] = teir_lane.cmpf olt, %[[Y]], %[[Z4:.*]] : vector<4xf32>
// CHECK-NEXT:      %[[R4:.*]] = teir_lane.select %[[NEG4]], %[[Z4]], %[[Y]] : vector<4xi1>, vector<4xf32>
// CHECK-NEXT:      vector.store %[[R4]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:    }

// -----

// A narrow transpose (`TileEmitter.deinterleave`): rows of 3 f32 back to back on
// in0 (pixels of 3 channels) to 3 rows of out. Four rows are one run of 12
// elements, loaded as 3 vectors; row c of out takes elements c, c + 3, c + 6,
// c + 9 of the run: what each takes from the first two vectors (one shuffle),
// then from the third (`select_lanes`). Four rows take 16-byte vectors on every
// host.

func.func @deinterleave(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis c extent 3 strides [4, 16] offsets [0, 0]
    teir.axis p extent 4 strides [12, 4] offsets [0, 0]
    teir.primitive copy Copy {M = [c], N = [p]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> copy
    }
  }
  func.return
}

// CHECK-LABEL: func.func @deinterleave
// CHECK:         %[[V0:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK:         %[[V1:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK:         %[[V2:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:    %[[A:.*]] = vector.shuffle %[[V0]], %[[V1]] [0, 3, 6, 0] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[B:.*]] = vector.shuffle %[[V0]], %[[V1]] [1, 4, 7, 0] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[C:.*]] = vector.shuffle %[[V0]], %[[V1]] [2, 5, 0, 0] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[C0:.*]] = vector.shuffle %[[A]], %[[V2]] [0, 1, 2, 5] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[C1:.*]] = vector.shuffle %[[B]], %[[V2]] [0, 1, 2, 6] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[C2:.*]] = vector.shuffle %[[C]], %[[V2]] [0, 1, 4, 7] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    vector.store %[[C0]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:    vector.store %[[C1]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:    vector.store %[[C2]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:    func.return

// -----

// The inverse (`TileEmitter.interleave`): 3 rows of in0 into rows of 3 f32 back to
// back on out; the 12 elements of out's run are lane e // 3 of row e % 3.

func.func @interleave(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis c extent 3 strides [16, 4] offsets [0, 0]
    teir.axis p extent 4 strides [4, 12] offsets [0, 0]
    teir.primitive copy Copy {M = [p], N = [c]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> copy
    }
  }
  func.return
}

// CHECK-LABEL: func.func @interleave
// CHECK:         %[[R0:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK:         %[[R1:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK:         %[[R2:.*]] = vector.load %in0[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:    %[[A:.*]] = vector.shuffle %[[R0]], %[[R1]] [0, 1, 4, 0] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[B:.*]] = vector.shuffle %[[R0]], %[[R1]] [2, 5, 6, 0] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[C:.*]] = vector.shuffle %[[R0]], %[[R1]] [3, 7, 0, 0] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[E0:.*]] = vector.shuffle %[[A]], %[[R2]] [0, 2, 4, 1] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[E1:.*]] = vector.shuffle %[[B]], %[[R2]] [1, 5, 0, 2] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    %[[E2:.*]] = vector.shuffle %[[C]], %[[R2]] [6, 0, 1, 7] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT:    vector.store %[[E0]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:    vector.store %[[E1]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:    vector.store %[[E2]], %out[%{{.*}}] : memref<?xf32>, vector<4xf32>
// CHECK-NEXT:    func.return

// -----

// A streamed transpose (`streamed_out`) on a run: k continues the tile's rows of
// out (16 rows of f32, one line each), so each tile's last line of out holds its
// own last rows and the next tile's first. Which rows depends on out's offset in
// its line, known at run time; where it is a multiple of 16 bytes, the code is
// compiled once per offset (16, 32, 48: the last without a test), each with the
// rows as constants: at 16 bytes the tile's rows 12..15 (12 x 16 = 192 elements
// into in0's tile), at 32 rows 8..15 (128); other offsets choose each row at run
// time (`arith.select`). A line of out starting at 0 is the tile's own (the
// first branch).

func.func @run_variants(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 64 strides [1024, 64] offsets [0, 0]
    teir.axis r extent 16 strides [64, 4] offsets [0, 0]
    teir.axis c extent 16 strides [4, 4096] offsets [0, 0]
    teir.primitive copy Copy {M = [c], N = [r]} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.invoke x -> copy
      }
    }
  } attributes {streamed_out}
  func.return
}

// CHECK-LABEL: func.func @run_variants
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[LINE:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK:         scf.for %k
// CHECK:           %[[TILE:.*]] = arith.muli %k, %{{.*}} : index
// CHECK:           %[[OFFSET:.*]] = arith.remui %{{.*}}, %[[LINE]] : index
// CHECK-NEXT:      %[[GRANULE:.*]] = arith.remui %[[OFFSET]], %[[C16]] : index
// CHECK-NEXT:      %[[ON_GRANULE:.*]] = arith.cmpi eq, %[[GRANULE]], %[[ZERO]] : index
// CHECK-NEXT:      %[[ON_LINE:.*]] = arith.cmpi eq, %[[OFFSET]], %[[ZERO]] : index
// CHECK-NEXT:      scf.if %[[ON_LINE]] {
// CHECK:           } else {
// CHECK:             scf.if %[[ON_GRANULE]] {
// CHECK-NEXT:          %[[AT16:.*]] = arith.cmpi eq, %[[OFFSET]], %[[C16]] : index
// CHECK-NEXT:          scf.if %[[AT16]] {
// CHECK-NEXT:            %[[ROW12:.*]] = arith.constant 192 : index
// CHECK-NEXT:            arith.addi %[[TILE]], %[[ROW12]] : index
// CHECK:                 %[[AT32:.*]] = arith.cmpi eq, %[[OFFSET]], %[[C32:.*]] : index
// CHECK-NEXT:            scf.if %[[AT32]] {
// CHECK-NEXT:              %[[ROW8:.*]] = arith.constant 128 : index
// CHECK-NEXT:              arith.addi %[[TILE]], %[[ROW8]] : index
// CHECK:             } else {
// CHECK-NOT:           arith.cmpi eq, %[[OFFSET]]
// CHECK:               arith.select
