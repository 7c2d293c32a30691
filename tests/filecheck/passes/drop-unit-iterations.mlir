// RUN: teir-opt %s --split-input-file -p teir-drop-unit-iterations | filecheck %s
// RUN: teir-opt %s --split-input-file -p teir-drop-unit-iterations,teir-drop-unit-iterations | filecheck %s

// An iteration node over an extent-1 axis without offsets is replaced by its
// children; its guard moves onto each child; terms on the dropped axis vanish.

func.func @unit(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 3 strides [4, 4] offsets [0, 0]
    teir.axis one extent 1 strides [12, 12] offsets [0, 0]
    teir.axis shifted extent 1 strides [0, 0] offsets [4, 4]
    teir.primitive c Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter u over one [last(a)] {
          teir.invoke x -> c [first(one)]
          teir.invoke y -> c [first(a), last(one)]
        }
      }
      teir.iter s over shifted {
        teir.invoke z -> c
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @unit
// CHECK:         teir.iter a over a {
// CHECK-NEXT:      teir.invoke x -> c [last(a)]
// CHECK-NEXT:      teir.invoke y -> c [last(a), first(a)]
// CHECK-NEXT:    }
// CHECK-NEXT:    teir.iter s over shifted {
// CHECK-NEXT:      teir.invoke z -> c
