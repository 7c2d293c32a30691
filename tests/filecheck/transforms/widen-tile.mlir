// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-widen-tile{axis=b}' | filecheck %s

// teir-widen-tile: the loop over b, which holds only an invocation of the
// transposing tile copy_da, goes into the tile as another N axis (the tiles of
// its indices continue each other's rows of out: a and b are contiguous on out).
func.func @widened(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis d extent 3 strides [4, 96] offsets [0, 0]
    teir.axis c extent 2 strides [12, 48] offsets [0, 0]
    teir.axis b extent 4 strides [24, 12] offsets [0, 0]
    teir.axis a extent 3 strides [96, 4] offsets [0, 0]
    teir.primitive copy_da Copy {M = [d], N = [a]} {data_type = "FP32"}
    teir.schedule {
      teir.iter c over c {
        teir.iter b over b {
          teir.invoke copy -> copy_da
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @widened
// CHECK:      teir.primitive copy_dba Copy {M = [d], N = [b, a]} {data_type = "FP32"}
// CHECK-NOT:  teir.primitive copy_da
// CHECK:      teir.schedule {
// CHECK-NEXT:   teir.iter c over c {
// CHECK-NEXT:     teir.invoke copy -> copy_dba
// CHECK-NEXT:   }
// CHECK-NEXT: }

// -----

// The loop holds two invocations.
func.func @two(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis d extent 3 strides [4, 96] offsets [0, 0]
    teir.axis b extent 4 strides [24, 12] offsets [0, 0]
    teir.axis a extent 3 strides [96, 4] offsets [0, 0]
    teir.primitive copy_da Copy {M = [d], N = [a]} {data_type = "FP32"}
    teir.primitive relu_da ReLU {M = [d], N = [a]} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.invoke copy -> copy_da
        teir.invoke relu -> relu_da
      }
    }
  }
  func.return
}
// CHECK: teir-widen-tile: the loop 'b' over 'b' holds more than one invocation

// -----

// A scalar Copy is not a tile (teir-lift-elementwise makes one).
func.func @scalar(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 4 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.invoke copy -> p
      }
    }
  }
  func.return
}
// CHECK: teir-widen-tile: 'copy' invokes 'p', not a Zero, Copy or ReLU tile

// -----

// A parallel loop stays a loop.
func.func @parallel(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis d extent 3 strides [4, 48] offsets [0, 0]
    teir.axis b extent 4 strides [12, 12] offsets [0, 0]
    teir.axis a extent 3 strides [48, 4] offsets [0, 0]
    teir.primitive copy_da Copy {M = [d], N = [a]} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b parallel {
        teir.invoke copy -> copy_da
      }
    }
  }
  func.return
}
// CHECK: teir-widen-tile: the loop 'b' is parallel or guarded, or a guard below it names 'b'

// -----

// Every index of b writes the same out elements (b has no stride on out): the
// widened tile would write them more than once.
func.func @overlap(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis d extent 3 strides [4, 12] offsets [0, 0]
    teir.axis b extent 4 strides [36, 0] offsets [0, 0]
    teir.axis a extent 3 strides [12, 4] offsets [0, 0]
    teir.primitive copy_da Copy {M = [d], N = [a]} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.invoke copy -> copy_da
      }
    }
  }
  func.return
}
// CHECK: teir-widen-tile: the tile of 'copy_da' widened by 'b' writes some out elements more than once

// -----

// No node iterates b (a role axis only).
func.func @none(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 4 strides [4, 4] offsets [0, 0]
    teir.primitive copy_b Copy {M = [b], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.invoke copy -> copy_b
    }
  }
  func.return
}
// CHECK: teir-widen-tile: no iteration node iterates axis 'b'
