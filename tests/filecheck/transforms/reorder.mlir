// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-reorder{order=b,c,d,a}' | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_3_scalar_batched_gemm.json -p 'teir-reorder{order=b,c,d,a},teir-canonicalize-guards' --emit=tree | filecheck %s --check-prefix=SPEC
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-reorder{order="a,c"}' | filecheck %s --check-prefix=ERR
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-reorder{order=a}' | filecheck %s --check-prefix=ONE

// teir-reorder permutes a chain of nested iteration nodes; §10.7.3 becomes
// §10.7.4 (after teir-canonicalize-guards hoists the zero out of the a loop).

// SPEC:      b
// SPEC-NEXT: └── c
// SPEC-NEXT:     └── d
// SPEC-NEXT:         ├── zero -> zero_scalar
// SPEC-NEXT:         └── a
// SPEC-NEXT:             └── contraction -> contraction_scalar

// dba,dac->dbc with the reduction axis a outermost, policies and guards kept:
// the top node's guard names no chain axis and moves to the new top.
func.func @batched(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis e extent 2 strides [0, 0, 0] offsets [0, 0, 0]
    teir.axis d extent 2 strides [96, 128, 96] offsets [0, 0, 0]
    teir.axis b extent 3 strides [32, 0, 32] offsets [0, 0, 0]
    teir.axis c extent 4 strides [0, 8, 8] offsets [0, 0, 0]
    teir.axis a extent 4 strides [8, 32, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP64"}
    teir.primitive m Contraction {M = [], N = [], K = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter e over e {
        teir.iter a over a [first(e)] {
          teir.iter b over b parallel {
            teir.iter c over c {
              teir.iter d over d {
                teir.invoke zero -> z [first(a)]
                teir.invoke mac -> m
              }
            }
          }
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @batched
// CHECK:      teir.iter e over e {
// CHECK-NEXT:   teir.iter b over b parallel [first(e)] {
// CHECK-NEXT:     teir.iter c over c {
// CHECK-NEXT:       teir.iter d over d {
// CHECK-NEXT:         teir.iter a over a {
// CHECK-NEXT:           teir.invoke zero -> z [first(a)]
// CHECK-NEXT:           teir.invoke mac -> m
// ONE: teir-reorder: order must name two or more distinct axes, got a

// -----

// Two reduction loops keep their relative order: reordering them would
// reorder the sum.
func.func @reductions(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis a extent 4 strides [8, 8, 0] offsets [0, 0, 0]
    teir.axis c extent 3 strides [32, 32, 0] offsets [0, 0, 0]
    teir.primitive m Contraction {M = [], N = [], K = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter c over c {
        teir.iter a over a {
          teir.invoke mac -> m
        }
      }
    }
  }
  func.return
}
// ERR: teir-reorder: cannot reorder the loops c, a to a, c: it changes the order of the reduction loops c, a (stride 0 on out), and with it the order of the sums

// -----

// Loops whose bodies write overlapping bytes of out at different indices.
func.func @overlap(%in0: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %out) : (memref<?xf64>, memref<?xf64>) {
    teir.axis a extent 4 strides [8, 8] offsets [0, 0]
    teir.axis c extent 3 strides [32, 16] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter c over c {
        teir.iter a over a {
          teir.invoke x -> p
        }
      }
    }
  }
  func.return
}
// ERR: teir-reorder: cannot reorder the loops c, a to a, c: bodies at different indices of its loops that move out write common out bytes, so they would run in another order

// -----

// A guard inside the chain.
func.func @guarded(%in0: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %out) : (memref<?xf64>, memref<?xf64>) {
    teir.axis a extent 4 strides [8, 8] offsets [0, 0]
    teir.axis c extent 3 strides [32, 32] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter c over c {
        teir.iter a over a [first(c)] {
          teir.invoke x -> p
        }
      }
    }
  }
  func.return
}
// ERR: teir-reorder: iteration node 'a' inside the chain has a guard (first(c)); only the top of the chain may have one

// -----

// Not a chain: the a node has two children.
func.func @branch(%in0: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %out) : (memref<?xf64>, memref<?xf64>) {
    teir.axis a extent 4 strides [8, 8] offsets [0, 0]
    teir.axis c extent 3 strides [32, 32] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke y -> p
        teir.iter c over c {
          teir.invoke x -> p
        }
      }
    }
  }
  func.return
}
// ERR: teir-reorder: no chain of nested iteration nodes over exactly a, c (each node the only child of the one above)
