// RUN: teir-opt %s --split-input-file -p teir-canonicalize-guards | filecheck %s
// RUN: teir-opt %s --split-input-file -p teir-canonicalize-guards,teir-canonicalize-guards | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_3_scalar_batched_gemm.json -p teir-canonicalize-guards | filecheck %s --check-prefix=SPEC
// RUN: teir-opt %examples/spec/tree/10_7_3_scalar_batched_gemm.json -p teir-canonicalize-guards,teir-canonicalize-guards | filecheck %s --check-prefix=SPEC

// §10.7.3 becomes §10.7.4: the a loop sinks below the b -> c -> d chain (b, c,
// d address disjoint out elements; a is a reduction axis), and the Zero,
// guarded by first(a) and now the first child of a, is hoisted out unguarded.

// SPEC:      teir.axis d extent 2 strides [60, 80, 48] offsets [0, 0, 0]
// SPEC-NEXT: teir.axis b extent 3 strides [20, 0, 16] offsets [0, 0, 0]
// SPEC-NEXT: teir.axis c extent 4 strides [0, 4, 4] offsets [0, 0, 0]
// SPEC-NEXT: teir.axis a extent 5 strides [4, 16, 0] offsets [0, 0, 0]
// SPEC-NEXT: teir.primitive zero_scalar Zero {M = [], N = []} {data_type = "FP32"}
// SPEC-NEXT: teir.primitive contraction_scalar Contraction {M = [], N = [], K = []} {data_type = "FP32"}
// SPEC-NEXT: teir.schedule {
// SPEC-NEXT:   teir.iter b over b {
// SPEC-NEXT:     teir.iter c over c {
// SPEC-NEXT:       teir.iter d over d {
// SPEC-NEXT:         teir.invoke zero -> zero_scalar
// SPEC-NEXT:         teir.iter a over a {
// SPEC-NEXT:           teir.invoke contraction -> contraction_scalar
// SPEC-NEXT:         }
// SPEC-NEXT:       }
// SPEC-NEXT:     }
// SPEC-NEXT:   }
// SPEC-NEXT: }
// SPEC-NEXT: }
// SPEC-NEXT: func.return

// Rule 1: terms sorted by their axis's depth on the path (a outer, c inner;
// not the order of the axis records), first before last, duplicates dropped;
// on iteration nodes too.

func.func @order(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis c extent 2 strides [4, 4] offsets [0, 0]
    teir.axis b extent 3 strides [8, 8] offsets [0, 0]
    teir.axis a extent 4 strides [24, 24] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.iter c over c [last(b), first(a), last(b)] {
            teir.invoke x -> p [last(c), first(a), last(b), first(a), last(c)]
            teir.invoke y -> p [last(a), first(c)]
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @order
// CHECK:         teir.iter a over a {
// CHECK-NEXT:      teir.iter b over b {
// CHECK-NEXT:        teir.iter c over c [first(a), last(b)] {
// CHECK-NEXT:          teir.invoke x -> p [first(a), last(b), last(c)]
// CHECK-NEXT:          teir.invoke y -> p [last(a), first(c)]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// Rule 2: terms on an extent-1 axis always hold; a guard left empty goes.

func.func @unit(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 3 strides [4, 4] offsets [0, 0]
    teir.axis one extent 1 strides [12, 12] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter one over one {
        teir.iter a over a [last(one)] {
          teir.invoke x -> p [first(one), last(a), last(one)]
          teir.invoke y -> p [first(one), last(one)]
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @unit
// CHECK:         teir.iter one over one {
// CHECK-NEXT:      teir.iter a over a {
// CHECK-NEXT:        teir.invoke x -> p [last(a)]
// CHECK-NEXT:        teir.invoke y -> p{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// Rule 3: first(a) with last(a), |a| > 1, never holds: the node goes, and so
// do the iteration nodes that this leaves empty (b, then c), but not a.

func.func @dead(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 3 strides [4, 4] offsets [0, 0]
    teir.axis b extent 2 strides [12, 12] offsets [0, 0]
    teir.axis c extent 2 strides [24, 24] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke keep -> p
        teir.invoke gone -> p [last(a), first(a)]
        teir.iter c over c {
          teir.iter b over b {
            teir.invoke alsogone -> p [first(a), last(b), last(a)]
          }
        }
        teir.iter deadloop over b [first(a), last(a)] {
          teir.invoke inside -> p
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @dead
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.iter a over a {
// CHECK-NEXT:        teir.invoke keep -> p
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// Rule 3 up to the roots: the schedule becomes empty.

func.func @all_dead(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 3 strides [4, 4] offsets [0, 0]
    teir.axis b extent 2 strides [12, 12] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.invoke gone -> p [first(b), last(b)]
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @all_dead
// CHECK:         teir.schedule {
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return

// -----

// Rule 4, first: the Zero (k has stride 0 on out) is k's first child, so it
// runs once before the loop; its other terms (on m) stay.

func.func @hoist_first(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis k extent 3 strides [16, 4, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive g Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter m over m {
        teir.iter k over k {
          teir.invoke zero -> z [first(k), last(m)]
          teir.invoke acc -> g
        }
      }
      teir.iter k2 over k {
        teir.invoke only -> z [first(k)]
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @hoist_first
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.iter m over m {
// CHECK-NEXT:        teir.invoke zero -> z [last(m)]
// CHECK-NEXT:        teir.iter k over k {
// CHECK-NEXT:          teir.invoke acc -> g
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      teir.invoke only -> z
// CHECK-NEXT:    }

// -----

// Rule 4, last: a last(k) last child runs once after the loop.

func.func @hoist_last(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis k extent 3 strides [16, 4, 0] offsets [0, 0, 0]
    teir.primitive g Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.primitive r ReLU {M = [m], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.invoke acc -> g
        teir.invoke relu -> r [last(k)]
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @hoist_last
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.iter k over k {
// CHECK-NEXT:        teir.invoke acc -> g
// CHECK-NEXT:      }
// CHECK-NEXT:      teir.invoke relu -> r
// CHECK-NEXT:    }

// -----

// No hoist: the primitive varies with k (stride on in0; offset on out); the
// guarded invocation is not the first (last) child; the k node is guarded.

func.func @no_hoist(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 2 strides [0, 4] offsets [0, 0]
    teir.axis k extent 3 strides [4, 0] offsets [0, 0]
    teir.axis j extent 3 strides [0, 0] offsets [0, 8]
    teir.primitive c Copy {M = [], N = []} {data_type = "FP32"}
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter m over m {
        teir.iter k over k {
          teir.invoke varies -> c [first(k)]
          teir.invoke middle -> z [first(k)]
          teir.invoke body -> c
          teir.invoke notlast -> z [last(k)]
          teir.invoke end -> c
        }
        teir.iter j over j {
          teir.invoke offset -> z [first(j)]
        }
        teir.iter guarded over k [last(m)] {
          teir.invoke g -> z [first(k)]
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @no_hoist
// CHECK:         teir.iter m over m {
// CHECK-NEXT:      teir.iter k over k {
// CHECK-NEXT:        teir.invoke varies -> c [first(k)]
// CHECK-NEXT:        teir.invoke middle -> z [first(k)]
// CHECK-NEXT:        teir.invoke body -> c
// CHECK-NEXT:        teir.invoke notlast -> z [last(k)]
// CHECK-NEXT:        teir.invoke end -> c
// CHECK-NEXT:      }
// CHECK-NEXT:      teir.iter j over j {
// CHECK-NEXT:        teir.invoke offset -> z [first(j)]
// CHECK-NEXT:      }
// CHECK-NEXT:      teir.iter guarded over k [last(m)] {
// CHECK-NEXT:        teir.invoke g -> z [first(k)]
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// Rule 5 with a last(k) ReLU as well: k sinks below the m -> n chain, then
// both the Zero and the ReLU leave it.

func.func @sink(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 3 strides [4, 16, 0] offsets [0, 0, 0]
    teir.axis m extent 2 strides [12, 0, 16] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 4, 4] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive g Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.primitive r ReLU {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.iter m over m {
          teir.iter n over n {
            teir.invoke zero -> z [first(k)]
            teir.invoke acc -> g
            teir.invoke relu -> r [last(k)]
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @sink
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.iter m over m {
// CHECK-NEXT:        teir.iter n over n {
// CHECK-NEXT:          teir.invoke zero -> z
// CHECK-NEXT:          teir.iter k over k {
// CHECK-NEXT:            teir.invoke acc -> g
// CHECK-NEXT:          }
// CHECK-NEXT:          teir.invoke relu -> r
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// No sinking: chain iterations overlap on out (n has stride 0 on out, so
// every n iteration writes the same element), or the chain node is guarded.

func.func @no_sink(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 3 strides [4, 16, 0] offsets [0, 0, 0]
    teir.axis m extent 2 strides [12, 0, 16] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 4, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive g Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.iter n over n {
          teir.invoke zero -> z [first(k)]
          teir.invoke acc -> g
        }
      }
      teir.iter k2 over k {
        teir.iter m over m [last(k)] {
          teir.invoke zero2 -> z [first(k)]
          teir.invoke acc2 -> g
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @no_sink
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.iter k over k {
// CHECK-NEXT:        teir.iter n over n {
// CHECK-NEXT:          teir.invoke zero -> z [first(k)]
// CHECK-NEXT:          teir.invoke acc -> g
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      teir.iter k2 over k {
// CHECK-NEXT:        teir.iter m over m [last(k)] {
// CHECK-NEXT:          teir.invoke zero2 -> z [first(k)]
// CHECK-NEXT:          teir.invoke acc2 -> g
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
