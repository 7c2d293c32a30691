// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-split{axis=a factor=4}' | filecheck %s
// RUN: teir-opt %s --split-input-file -p 'teir-split{axis=a factor=4}' --print-op-generic | teir-opt --split-input-file | filecheck %s
// RUN: teir-opt %s --split-input-file -p 'teir-split{axis=u factor=2}' --verify-diagnostics | filecheck %s --check-prefix=ERR
// RUN: teir-opt %s --split-input-file -p 'teir-split{axis=nope factor=2}' --verify-diagnostics | filecheck %s --check-prefix=UNKNOWN
// RUN: teir-opt %s --split-input-file -p 'teir-split{axis=u factor=0}' --verify-diagnostics | filecheck %s --check-prefix=ZERO
// RUN: teir-opt %s --split-input-file -p 'teir-split{axis=u factor=99}' --verify-diagnostics | filecheck %s --check-prefix=LARGE
// RUN: teir-opt %s --split-input-file -p 'teir-split{axis=u factor=2 inner=a}' --verify-diagnostics | filecheck %s --check-prefix=TAKEN

// teir-split: axis a (extent 10) becomes a (extent 2, strides x4), a_in (extent
// 4) nested directly inside, and a remainder axis a_rem (extent 2, offsets at
// the tail) iterated by a sibling branch; guards follow the indices.

func.func @iterated(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 10 strides [4, 8] offsets [0, 4]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke x -> p
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @iterated
// CHECK:      teir.axis a extent 2 strides [16, 32] offsets [0, 4]
// CHECK-NEXT: teir.axis a_in extent 4 strides [4, 8] offsets [0, 0]
// CHECK-NEXT: teir.axis a_rem extent 2 strides [4, 8] offsets [32, 68]
// CHECK:      teir.schedule {
// CHECK-NEXT:   teir.iter a over a {
// CHECK-NEXT:     teir.iter a_in over a_in {
// CHECK-NEXT:       teir.invoke x -> p
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   teir.iter a_rem over a_rem {
// CHECK-NEXT:     teir.invoke x_rem -> p
// CHECK-NEXT:   }
// CHECK-NEXT: }

// -----

// first(a) holds only in the main branch (at a = 0, a_in = 0); last(a) only in
// the remainder branch, at its last index.
func.func @guards(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 6 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.primitive r ReLU {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke zero -> z [first(a)]
        teir.invoke mac -> c
        teir.invoke relu -> r [last(a)]
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @guards
// CHECK:      teir.iter a over a {
// CHECK-NEXT:   teir.iter a_in over a_in {
// CHECK-NEXT:     teir.invoke zero -> z [first(a), first(a_in)]
// CHECK-NEXT:     teir.invoke mac -> c
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: teir.iter a_rem over a_rem {
// CHECK-NEXT:   teir.invoke mac_rem -> c
// CHECK-NEXT:   teir.invoke relu_rem -> r [last(a_rem)]
// CHECK-NEXT: }

// -----

// Without a remainder, last(a) becomes last(a), last(a_in); policies stay; every
// node over a is split.
func.func @divides(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 8 strides [4, 4] offsets [0, 0]
    teir.primitive c Copy {M = [], N = []} {data_type = "FP32"}
    teir.primitive r ReLU {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a parallel {
        teir.invoke relu -> r [last(a)]
      }
      teir.iter b over a {
        teir.invoke copy -> c
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @divides
// CHECK:      teir.axis a extent 2 strides [16, 16] offsets [0, 0]
// CHECK-NEXT: teir.axis a_in extent 4 strides [4, 4] offsets [0, 0]
// CHECK-NOT:  a_rem
// CHECK:      teir.iter a over a parallel {
// CHECK-NEXT:   teir.iter a_in over a_in parallel {
// CHECK-NEXT:     teir.invoke relu -> r [last(a), last(a_in)]
// CHECK:      teir.iter b over a {
// CHECK-NEXT:   teir.iter a_in_1 over a_in {
// CHECK-NEXT:     teir.invoke copy -> c

// -----

// A role axis: the outer part leaves the tile as a loop around each
// invocation, the remainder is a second primitive invoked after it.
func.func @role(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 9 strides [4, 4] offsets [0, 0]
    teir.axis b extent 3 strides [36, 36] offsets [0, 0]
    teir.primitive p ReLU {M = [a], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.invoke x -> p
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @role
// CHECK:      teir.primitive p ReLU {M = [a_in], N = []} {data_type = "FP32"}
// CHECK-NEXT: teir.primitive p_rem ReLU {M = [a_rem], N = []} {data_type = "FP32"}
// CHECK:      teir.iter b over b {
// CHECK-NEXT:   teir.iter a over a {
// CHECK-NEXT:     teir.invoke x -> p
// CHECK-NEXT:   }
// CHECK-NEXT:   teir.invoke x_rem -> p_rem
// CHECK-NEXT: }

// -----

// The outermost K axis of a Contraction may be split (its sum keeps its order).
func.func @k_role(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 8 strides [4, 4, 0] offsets [0, 0, 0]
    teir.axis u extent 3 strides [32, 32, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = [a, u]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke mac -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @k_role
// CHECK:      teir.primitive c Contraction {M = [], N = [], K = [a_in, u]} {data_type = "FP32"}
// CHECK:      teir.iter a over a {
// CHECK-NEXT:   teir.invoke mac -> c
// CHECK-NEXT: }

// -----

// Refusals of teir-split, each naming the axis and the reason.

// u is the inner K axis: moving its outer part out of the primitive would
// reorder the sum over (a, u).
func.func @k_role(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 8 strides [4, 4, 0] offsets [0, 0, 0]
    teir.axis u extent 4 strides [32, 32, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = [a, u]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke mac -> c
    }
  }
  func.return
}
// ERR: teir-split: cannot split axis 'u': 'u' is not the outermost K axis of 'c' (K axes before it have extent > 1), so the order of its sum would change
// UNKNOWN: teir-split: no configuration has an axis 'nope'
// ZERO: teir-split: factor must be a positive integer, got 0
// LARGE: teir-split: factor 99 exceeds the extent 4 of axis 'u'
// TAKEN: teir-split: inner axis id 'a' is already an axis

// -----

// A Copy whose out tile repeats elements (stride 0 on out) keeps its last
// write; moving u out of it would change which write is last.
func.func @repeats(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 8 strides [4, 0] offsets [0, 0]
    teir.axis u extent 4 strides [32, 4] offsets [0, 0]
    teir.primitive c Copy {M = [a], N = [u]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// ERR: teir-split: cannot split axis 'u': primitive 'c' writes some out elements more than once and 'u' is not its outermost role axis
