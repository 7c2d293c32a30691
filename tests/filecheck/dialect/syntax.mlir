// RUN: %roundtrip
// RUN: %roundtrip-generic
// RUN: xdsl-opt %s --split-input-file | filecheck %s

// The custom syntax: ids print bare when they are identifiers, quoted when
// not, and as integers when they are numeric; guards print as [terms].

func.func @guarded_reduction(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 7 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive zero_prim Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive contraction_prim Contraction {M = [], N = [], K = []} {data_type = "FP32", note = [1, 2.5, "x", true]}
    teir.primitive relu_prim ReLU {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.invoke zero -> zero_prim [first(k)]
        teir.invoke contraction -> contraction_prim
        teir.invoke relu -> relu_prim [last(k)]
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @guarded_reduction
// CHECK-NEXT:    teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:      teir.axis k extent 7 strides [4, 4, 0] offsets [0, 0, 0]
// CHECK-NEXT:      teir.primitive zero_prim Zero {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:      teir.primitive contraction_prim Contraction {M = [], N = [], K = []} {data_type = "FP32", note = [1 : i64, 2.500000e+00 : f64, "x", true]}
// CHECK-NEXT:      teir.primitive relu_prim ReLU {M = [], N = []} {data_type = "FP32"}
// CHECK-NEXT:      teir.schedule {
// CHECK-NEXT:        teir.iter k over k {
// CHECK-NEXT:          teir.invoke zero -> zero_prim [first(k)]
// CHECK-NEXT:          teir.invoke contraction -> contraction_prim
// CHECK-NEXT:          teir.invoke relu -> relu_prim [last(k)]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// Numeric and quoted ids, an iteration node named apart from its axis,
// parallel policy, guards on iteration nodes, several roots, raw-byte memrefs.

func.func @ids(%a: memref<?xi8>, %b: memref<256xf32>) {
  teir.config(%a, %b) : (memref<?xi8>, memref<256xf32>) {
    teir.axis 0 extent 4 strides [64, 64] offsets [0, 0]
    teir.axis "row axis" extent 4 strides [16, 16] offsets [0, 0]
    teir.axis c extent 4 strides [4, 4] offsets [0, 4]
    teir.primitive 12 Copy {M = [c], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter outer over 0 parallel {
        teir.iter "1" over "row axis" [last(0)] {
          teir.invoke 2 -> 12
        }
      }
      teir.invoke tail -> 12
    }
  }
  func.return
}

// CHECK-LABEL: func.func @ids
// CHECK:         teir.axis 0 extent 4 strides [64, 64] offsets [0, 0]
// CHECK-NEXT:    teir.axis "row axis" extent 4 strides [16, 16] offsets [0, 0]
// CHECK-NEXT:    teir.axis c extent 4 strides [4, 4] offsets [0, 4]
// CHECK-NEXT:    teir.primitive 12 Copy {M = [c], N = []} {data_type = "FP32"}
// CHECK-NEXT:    teir.schedule {
// CHECK-NEXT:      teir.iter outer over 0 parallel {
// CHECK-NEXT:        teir.iter "1" over "row axis" [last(0)] {
// CHECK-NEXT:          teir.invoke 2 -> 12
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      teir.invoke tail -> 12
// CHECK-NEXT:    }

// -----

// An empty schedule is a configuration that does nothing.

func.func @empty(%a: memref<?xf32>, %b: memref<?xf32>) {
  teir.config(%a, %b) : (memref<?xf32>, memref<?xf32>) {
    teir.schedule {
    }
  }
  func.return
}

// CHECK-LABEL: func.func @empty
// CHECK-NEXT:    teir.config(%a, %b) : (memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:      teir.schedule {
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// Ids are any Unicode text. xDSL prints each byte outside printable ASCII
// escaped, and the escaped and the raw spellings read back as the same id
// (metadata strings too), in the custom and the generic form.

func.func @unicode(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis "é" extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive "\F0\9F\99\82" Copy {M = [], N = []} {data_type = "FP32", note = "naïve"}
    teir.schedule {
      teir.iter "\C3\A9" over "é" {
        teir.invoke "x\22y" -> "🙂" [last("\C3\A9")]
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @unicode
// CHECK-NEXT:    teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
// CHECK-NEXT:      teir.axis "\C3\A9" extent 2 strides [4, 4] offsets [0, 0]
// CHECK-NEXT:      teir.primitive "\F0\9F\99\82" Copy {M = [], N = []} {data_type = "FP32", note = "na\C3\AFve"}
// CHECK-NEXT:      teir.schedule {
// CHECK-NEXT:        teir.iter "\C3\A9" over "\C3\A9" {
// CHECK-NEXT:          teir.invoke "x\22y" -> "\F0\9F\99\82" [last("\C3\A9")]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// The decisions of teir-match-gemm and teir-fuse-epilogues: #teir.kernel on a
// Contraction, #teir.epilogue on its invocation, naming invocations by id.

func.func @epilogue(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis w extent 3 strides [512, 256, 0] offsets [0, 0, 0]
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">}
    teir.primitive relu ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke "zero tile" -> zero
      teir.iter w over w {
        teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = "zero tile" at [first(w)], relu = 7 at [last(w)]>}
      }
      teir.invoke 7 -> relu
      teir.invoke c2 -> mm attributes {epilogue = #teir.epilogue<relu = r2>}
      teir.invoke r2 -> relu
    }
  }
  func.return
}

// CHECK-LABEL: func.func @epilogue
// CHECK:           teir.invoke "zero tile" -> zero
// CHECK-NEXT:      teir.iter w over w {
// CHECK-NEXT:        teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = "zero tile" at [first(w)], relu = 7 at [last(w)]>}
// CHECK-NEXT:      }
// CHECK-NEXT:      teir.invoke 7 -> relu
// CHECK-NEXT:      teir.invoke c2 -> mm attributes {epilogue = #teir.epilogue<relu = r2>}
// CHECK-NEXT:      teir.invoke r2 -> relu
