// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-fuse-axes{outer=a inner=b}' | filecheck %s
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-fuse-axes{outer=a inner=b},teir-split{axis=ab factor=3}' | filecheck %s --check-prefix=INVERSE

// teir-fuse-axes: a (stride = |b| x stride(b) on every tensor) and b nested
// directly inside become one axis ab with b's strides and both offsets.

func.func @contiguous(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 24] offsets [4, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 8]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a parallel {
        teir.iter b over b parallel {
          teir.invoke x -> p
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @contiguous
// CHECK:      teir.axis ab extent 6 strides [4, 8] offsets [4, 8]
// CHECK-NOT:  teir.axis a
// CHECK:      teir.iter a over ab parallel {
// CHECK-NEXT:   teir.invoke x -> p
// INVERSE:      teir.axis ab extent 2 strides [12, 24] offsets [4, 8]
// INVERSE-NEXT: teir.axis ab_in extent 3 strides [4, 8] offsets [0, 0]

// -----

func.func @not_contiguous(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 4] offsets [0, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.invoke x -> p
        }
      }
    }
  }
  func.return
}
// CHECK: teir-fuse-axes: axes 'a' and 'b' are not contiguous on out: stride 4 of 'a' is not extent 3 x stride 8 of 'b'

// -----

func.func @guard_names_inner(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 24] offsets [0, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.invoke x -> p [first(b)]
        }
      }
    }
  }
  func.return
}
// CHECK: teir-fuse-axes: a guard below 'b' names 'a' or 'b', which the fused axis cannot express

// -----

func.func @not_nested(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 24] offsets [0, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.iter a over a {
          teir.invoke x -> p
        }
      }
    }
  }
  func.return
}
// CHECK: teir-fuse-axes: no iteration node over 'a' has a node over 'b' as its only child

// -----

// b may be a role axis no node iterates: the node over a goes into the calls,
// the fused axis ab taking b's place in the roles of the primitives below.

func.func @into_role(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 24] offsets [4, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 8]
    teir.axis c extent 5 strides [24, 48] offsets [0, 0]
    teir.primitive z Zero {M = [b], N = []} {data_type = "FP32"}
    teir.primitive p Copy {M = [b], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a parallel {
        teir.iter c over c {
          teir.invoke zero -> z
          teir.invoke x -> p
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @into_role
// CHECK:         teir.axis ab extent 6 strides [4, 8] offsets [4, 8]
// CHECK-NEXT:    teir.axis c extent 5
// CHECK-NEXT:    teir.primitive z Zero {M = [ab], N = []}
// CHECK-NEXT:    teir.primitive p Copy {M = [ab], N = []}
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.iter c over c {
// CHECK-NEXT:        teir.invoke zero -> z
// CHECK-NEXT:        teir.invoke x -> p
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

func.func @into_role_not_everywhere_below(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 24] offsets [0, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 0]
    teir.axis c extent 3 strides [4, 8] offsets [0, 0]
    teir.primitive p Copy {M = [b], N = []} {data_type = "FP32"}
    teir.primitive q Copy {M = [c], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke x -> p
        teir.invoke y -> q
      }
    }
  }
  func.return
}
// CHECK: teir-fuse-axes: 'y' below 'a' invokes 'q', which has no role axis 'b'

// -----

func.func @into_role_invoked_elsewhere(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 24] offsets [0, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 0]
    teir.primitive p Copy {M = [b], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke x -> p
      }
      teir.invoke y -> p
    }
  }
  func.return
}
// CHECK: teir-fuse-axes: 'y' invokes a primitive over 'b' outside the nodes over 'a'

// -----

func.func @into_role_guarded(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 24] offsets [0, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 0]
    teir.axis c extent 2 strides [0, 0] offsets [0, 0]
    teir.primitive p Copy {M = [b], N = []} {data_type = "FP32"}
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
// CHECK: teir-fuse-axes: iteration node 'a' has a guard (first(c))

// -----

func.func @into_role_not_contiguous(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [16, 24] offsets [0, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 0]
    teir.primitive p Copy {M = [b], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke x -> p
      }
    }
  }
  func.return
}
// CHECK: teir-fuse-axes: axes 'a' and 'b' are not contiguous on in0: stride 16 of 'a' is not extent 3 x stride 4 of 'b'


// -----

func.func @into_role_overlapping(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 24] offsets [0, 0]
    teir.axis b extent 3 strides [4, 8] offsets [0, 0]
    teir.axis c extent 5 strides [0, 8] offsets [0, 0]
    teir.primitive p Copy {M = [b], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter c over c {
          teir.invoke x -> p
        }
      }
    }
  }
  func.return
}
// CHECK: teir-fuse-axes: 'a' cannot run inside the calls: 'x' and 'x' write common out bytes at different indices of the loops a, c, so moving those loops would change which write comes last

// -----

// a does not move on out: each of its iterations overwrites the same element (the
// last one's stays). Fused into the M axis b (extent 1, stride 0 on out) its two
// rows would be one call's rows on that element: refused.
func.func @into_role_not_moving_out(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 0] offsets [0, 0]
    teir.axis b extent 1 strides [4, 0] offsets [0, 0]
    teir.primitive p Copy {M = [b], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke x -> p
      }
    }
  }
  func.return
}
// CHECK: teir-fuse-axes: 'a' does not move on out (stride 0): its iterations overwrite the same elements, which the M role axis 'b' cannot express

// -----

// No axis b beside a: the pass names both (the verifier's 'axis rule: no axis'
// came out of the pass without its name).
func.func @no_inner_axis(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke x -> p
      }
    }
  }
  func.return
}
// CHECK: teir-fuse-axes: the configuration with axis 'a' has no axis 'b'
