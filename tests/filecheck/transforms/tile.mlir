// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-tile{axes=a,b sizes=2,4}' | filecheck %s
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-tile{axes="a,b" sizes="2,4"}' | filecheck %s
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-tile{axes=a,b sizes=3,4}' | filecheck %s --check-prefix=REM
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-tile{axes=a,b sizes=3,2}' | filecheck %s --check-prefix=TAIL
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

// A size that does not divide the extent of a (4 by 3) leaves a remainder
// branch, which gets the order of the axes it has: a_rem in a_in's place.
// REM-LABEL: func.func @chain
// REM:      teir.axis a_rem extent 1 strides [128, 4] offsets [384, 12]
// REM:      teir.schedule {
// REM-NEXT:   teir.iter a over a {
// REM-NEXT:     teir.iter b over b {
// REM-NEXT:       teir.iter c over c {
// REM-NEXT:         teir.iter a_in over a_in {
// REM-NEXT:           teir.iter b_in over b_in {
// REM-NEXT:             teir.invoke x -> p
// REM-NEXT:           }
// REM-NEXT:         }
// REM-NEXT:       }
// REM-NEXT:     }
// REM-NEXT:   }
// REM-NEXT:   teir.iter b_rem over b {
// REM-NEXT:     teir.iter c_rem over c {
// REM-NEXT:       teir.iter a_rem over a_rem {
// REM-NEXT:         teir.iter b_in_1 over b_in {
// REM-NEXT:           teir.invoke x_rem -> p
// REM-NEXT:         }
// REM-NEXT:       }
// REM-NEXT:     }
// REM-NEXT:   }
// REM-NEXT: }

// -----

// Remainders on both axes (5 by 3 and 5 by 2), over a guarded reduction: the
// full tiles in the order a, b, a_in, b_in; the b tail of each a tile (a_in
// distributed over the b tiles and the b tail: they write other columns);
// the a tail, tiled over b; the corner. first(b) holds only in the full b
// tiles, last(b) only in the b tail, at last(b_rem).
func.func @two(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 5 strides [0, 4, 4] offsets [0, 0, 0]
    teir.axis b extent 5 strides [4, 20, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.primitive r ReLU {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.invoke zero -> z [first(b)]
          teir.invoke mac -> c
          teir.invoke relu -> r [last(b)]
        }
      }
    }
  }
  func.return
}
// TAIL-LABEL: func.func @two
// TAIL:      teir.axis a_rem extent 2 strides [0, 4, 4] offsets [0, 12, 12]
// TAIL:      teir.axis b_rem extent 1 strides [4, 20, 0] offsets [16, 80, 0]
// TAIL:      teir.schedule {
// TAIL-NEXT:   teir.iter a over a {
// TAIL-NEXT:     teir.iter b over b {
// TAIL-NEXT:       teir.iter a_in over a_in {
// TAIL-NEXT:         teir.iter b_in over b_in {
// TAIL-NEXT:           teir.invoke zero -> z [first(b), first(b_in)]
// TAIL-NEXT:           teir.invoke mac -> c
// TAIL-NEXT:         }
// TAIL-NEXT:       }
// TAIL-NEXT:     }
// TAIL-NEXT:     teir.iter a_in_1 over a_in {
// TAIL-NEXT:       teir.iter b_rem_1 over b_rem {
// TAIL-NEXT:         teir.invoke mac_rem_1 -> c
// TAIL-NEXT:         teir.invoke relu_rem_1 -> r [last(b_rem)]
// TAIL-NEXT:       }
// TAIL-NEXT:     }
// TAIL-NEXT:   }
// TAIL-NEXT:   teir.iter b_rem over b {
// TAIL-NEXT:     teir.iter a_rem over a_rem {
// TAIL-NEXT:       teir.iter b_in_1 over b_in {
// TAIL-NEXT:         teir.invoke zero_rem -> z [first(b), first(b_in)]
// TAIL-NEXT:         teir.invoke mac_rem -> c
// TAIL-NEXT:       }
// TAIL-NEXT:     }
// TAIL-NEXT:   }
// TAIL-NEXT:   teir.iter a_rem_1 over a_rem {
// TAIL-NEXT:     teir.iter b_rem_2 over b_rem {
// TAIL-NEXT:       teir.invoke mac_rem_rem -> c
// TAIL-NEXT:       teir.invoke relu_rem_rem -> r [last(b_rem)]
// TAIL-NEXT:     }
// TAIL-NEXT:   }
// TAIL-NEXT: }

// -----

// A role axis a (5 by 3): its outer part joins the order as a loop, its inner
// part stays in the primitive, and its remainder is a second primitive p_rem.
func.func @role(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 5 strides [4, 4] offsets [0, 0]
    teir.axis b extent 3 strides [20, 20] offsets [0, 0]
    teir.primitive p ReLU {M = [a], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.invoke x -> p
      }
    }
  }
  func.return
}
// TAIL-LABEL: func.func @role
// TAIL:      teir.primitive p ReLU {M = [a_in], N = []} {data_type = "FP32"}
// TAIL-NEXT: teir.primitive p_rem ReLU {M = [a_rem], N = []} {data_type = "FP32"}
// TAIL:      teir.schedule {
// TAIL-NEXT:   teir.iter a over a {
// TAIL-NEXT:     teir.iter b over b {
// TAIL-NEXT:       teir.iter b_in over b_in {
// TAIL-NEXT:         teir.invoke x -> p
// TAIL-NEXT:       }
// TAIL-NEXT:     }
// TAIL-NEXT:   }
// TAIL-NEXT:   teir.iter b_1 over b {
// TAIL-NEXT:     teir.iter b_in_1 over b_in {
// TAIL-NEXT:       teir.invoke x_rem -> p_rem
// TAIL-NEXT:     }
// TAIL-NEXT:   }
// TAIL-NEXT:   teir.iter a_rem over a {
// TAIL-NEXT:     teir.iter b_rem over b_rem {
// TAIL-NEXT:       teir.invoke x_rem_1 -> p
// TAIL-NEXT:     }
// TAIL-NEXT:   }
// TAIL-NEXT:   teir.iter b_rem_1 over b_rem {
// TAIL-NEXT:     teir.invoke x_rem_rem -> p_rem
// TAIL-NEXT:   }
// TAIL-NEXT: }

// -----

// Both axes sum into one out element: the a tiles of each b index would have
// to run apart from the a tail, so the sum would be reordered.
func.func @refused(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 2 strides [20, 4, 0] offsets [0, 0, 0]
    teir.axis a extent 5 strides [4, 8, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.iter a over a {
          teir.invoke mac -> c
        }
      }
    }
  }
  func.return
}
// TAIL: teir-tile: cannot distribute the loop 'b_in' over its branches (a; a_rem): 'a' and 'a_rem' write common out bytes at different indices of it, so they would run in another order
