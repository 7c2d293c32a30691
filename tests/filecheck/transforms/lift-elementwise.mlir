// RUN: teir-opt %examples/spec/tree/10_7_1_scalar_permutation.json -p teir-lift-elementwise | filecheck %s --check-prefix=SPEC
// RUN: teir-opt %s --split-input-file -p teir-lift-elementwise | filecheck %s

// §10.7.1 becomes §10.7.2: d (unit stride on in0) and a (unit stride on out)
// move into the tile primitive copy_da (M = [d], N = [a]); b and c stay.

// SPEC:      teir.primitive copy_da Copy {M = [d], N = [a]} {data_type = "FP32"}
// SPEC-NEXT: teir.schedule {
// SPEC-NEXT:   teir.iter b over b {
// SPEC-NEXT:     teir.iter c over c {
// SPEC-NEXT:       teir.invoke copy -> copy_da
// SPEC-NEXT:     }
// SPEC-NEXT:   }
// SPEC-NEXT: }

// A Zero of out: the unit-stride loop and the loop that continues it.
func.func @zero(%out: memref<?xf32>, %in: memref<?xf32>) {
  teir.config(%in, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis i extent 4 strides [0, 64] offsets [0, 0]
    teir.axis j extent 8 strides [0, 4] offsets [0, 0]
    teir.axis k extent 2 strides [0, 32] offsets [0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter i over i {
        teir.iter k over k {
          teir.iter j over j {
            teir.invoke x -> z
          }
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @zero
// CHECK:      teir.primitive zero_jk Zero {M = [j], N = [k]} {data_type = "FP32"}
// CHECK:      teir.iter i over i {
// CHECK-NEXT:   teir.invoke x -> zero_jk
// CHECK-NEXT: }

// -----

// Nothing to lift: the loop over the unit-stride axis also holds another
// invocation, and a guard names the other loop's axis.
func.func @kept(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis i extent 4 strides [4, 4] offsets [0, 0]
    teir.axis j extent 3 strides [16, 16] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.primitive r ReLU {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter j over j {
        teir.iter i over i {
          teir.invoke x -> p
          teir.invoke y -> r [last(j)]
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @kept
// CHECK:      teir.iter j over j {
// CHECK-NEXT:   teir.iter i over i {
// CHECK-NEXT:     teir.invoke x -> p
// CHECK-NEXT:     teir.invoke y -> r [last(j)]

// -----

// A copy that writes elements more than once (stride 0 on out) keeps its order.
func.func @repeats(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis i extent 4 strides [4, 4] offsets [0, 0]
    teir.axis j extent 3 strides [16, 0] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter i over i {
        teir.iter j over j {
          teir.invoke x -> p
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @repeats
// CHECK:      teir.iter i over i {
// CHECK-NEXT:   teir.iter j over j {
// CHECK-NEXT:     teir.invoke x -> p
