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
