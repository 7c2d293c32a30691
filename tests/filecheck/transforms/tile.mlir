// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-tile{axes=a,b sizes=2,4}' | filecheck %s
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-tile{axes="a,b" sizes="2,4"}' | filecheck %s
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-tile{axes=a,b sizes=3,4}' | filecheck %s --check-prefix=REM
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-tile{axes=a,b sizes=2}' | filecheck %s --check-prefix=LENGTH
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-tile{axes=a,b sizes=2,x}' | filecheck %s --check-prefix=NOTINT

// teir-tile: each axis split by its size, then outer parts before inner parts,
// with loops that sat between them (c) in the middle.

func.func @chain(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 4 strides [128, 4] offsets [0, 0]
    teir.axis c extent 2 strides [64, 16] offsets [0, 0]
    teir.axis b extent 8 strides [4, 32] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter c over c {
          teir.iter b over b {
            teir.invoke x -> p
          }
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @chain
// CHECK:      teir.iter a over a {
// CHECK-NEXT:   teir.iter b over b {
// CHECK-NEXT:     teir.iter c over c {
// CHECK-NEXT:       teir.iter a_in over a_in {
// CHECK-NEXT:         teir.iter b_in over b_in {
// CHECK-NEXT:           teir.invoke x -> p
// LENGTH: teir-tile: axes and sizes must be lists of the same length with distinct axes, got axes=a,b sizes=2
// NOTINT: teir-tile: sizes must be integers, got 'x'

// A size that does not divide an outer axis leaves a remainder branch between
// the loops: not a chain any more.
// REM: teir-tile: after splitting, the loops over a, b, a_in, b_in are not one chain
