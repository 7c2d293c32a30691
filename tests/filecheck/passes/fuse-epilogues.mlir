// RUN: teir-opt %s --split-input-file -p teir-match-gemm,teir-fuse-epilogues | filecheck %s
// RUN: teir-opt %s --split-input-file -p teir-match-gemm,teir-fuse-epilogues,teir-fuse-epilogues | filecheck %s
// RUN: teir-opt %s --split-input-file -p teir-match-gemm,teir-fuse-epilogues --print-op-generic | teir-opt --split-input-file | filecheck %s
// RUN: teir-opt %s --split-input-file -p teir-fuse-epilogues | filecheck %s --check-prefix=NOKERNEL

// teir-fuse-epilogues records on a Contraction's invocation the Zero and ReLU
// invocations its GEMM/BRGEMM kernel performs, as #teir.epilogue. The schedule
// keeps every invocation and guard. The second RUN line checks idempotence, the
// third the generic syntax, the fourth that only a Contraction whose `kernel`
// (teir-match-gemm) is a GEMM/BRGEMM takes an epilogue.
// NOKERNEL-NOT: epilogue

// Zero just before and ReLU just after, of the same tile: both fuse.
func.func @siblings(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive relu ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke z -> zero
      teir.invoke c -> mm
      teir.invoke r -> relu
    }
  }
  func.return
}
// CHECK-LABEL: func.func @siblings
// CHECK:       teir.schedule {
// CHECK-NEXT:    teir.invoke z -> zero{{$}}
// CHECK-NEXT:    teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = z, relu = r>}
// CHECK-NEXT:    teir.invoke r -> relu{{$}}
// CHECK-NEXT:  }

// -----

// Either alone fuses too.
func.func @zero_only(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive relu ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke z -> zero
      teir.invoke c -> mm
      teir.invoke z2 -> zero
      teir.invoke c2 -> mm
      teir.invoke r2 -> relu
      teir.invoke c3 -> mm
      teir.invoke r3 -> relu
    }
  }
  func.return
}
// CHECK-LABEL: func.func @zero_only
// CHECK:       teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = z>}
// CHECK:       teir.invoke c2 -> mm attributes {epilogue = #teir.epilogue<zero = z2, relu = r2>}
// CHECK:       teir.invoke c3 -> mm attributes {epilogue = #teir.epilogue<relu = r3>}

// -----

// Guards stay on the Zero and the ReLU: the kernel zeroes / applies relu under
// them, at the same loop indices. Any guard fuses (relu after the first partial
// sum, here). A guarded Contraction takes nothing.
func.func @guards(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis w extent 3 strides [512, 256, 0] offsets [0, 0, 0]
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive relu ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.iter w over w {
        teir.invoke z -> zero [first(w)]
        teir.invoke c -> mm
        teir.invoke r -> relu [first(w)]
      }
      teir.iter w2 over w {
        teir.invoke z2 -> zero
        teir.invoke c2 -> mm [last(w)]
        teir.invoke r2 -> relu
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @guards
// CHECK:         teir.iter w over w {
// CHECK-NEXT:      teir.invoke z -> zero [first(w)]{{$}}
// CHECK-NEXT:      teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = z, relu = r>}
// CHECK-NEXT:      teir.invoke r -> relu [first(w)]{{$}}
// CHECK:         teir.iter w2 over w {
// CHECK-NEXT:      teir.invoke z2 -> zero{{$}}
// CHECK-NEXT:      teir.invoke c2 -> mm [last(w)]{{$}}
// CHECK-NEXT:      teir.invoke r2 -> relu{{$}}

// -----

// A Zero before / ReLU after sequential K loops (no stride or offset on out)
// whose first / last node is the Contraction sinks into their first / last
// iteration: the inverse of teir-canonicalize-guards' hoisting. The `at` terms
// name the loops outermost first; the Zero's / ReLU's own guard (p) still holds.
func.func @sunk(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis p extent 2 strides [0, 2048, 128] offsets [0, 0, 0]
    teir.axis w extent 3 strides [512, 256, 0] offsets [0, 0, 0]
    teir.axis v extent 2 strides [1536, 768, 0] offsets [0, 0, 0]
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive relu ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.iter p over p {
        teir.invoke z -> zero [first(p)]
        teir.iter w over w {
          teir.iter v over v {
            teir.invoke c -> mm
          }
        }
        teir.invoke r -> relu [last(p)]
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @sunk
// CHECK:         teir.iter p over p {
// CHECK-NEXT:      teir.invoke z -> zero [first(p)]{{$}}
// CHECK-NEXT:      teir.iter w over w {
// CHECK-NEXT:        teir.iter v over v {
// CHECK-NEXT:          teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = z at [first(w), first(v)], relu = r at [last(w), last(v)]>}
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      teir.invoke r -> relu [last(p)]{{$}}

// -----

// Sinking needs the Contraction to be the loop's first (Zero) / last (ReLU)
// node; a sibling Zero inside the loop fuses as a sibling beside a sunk ReLU.
func.func @sunk_one_side(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis w extent 3 strides [512, 256, 0] offsets [0, 0, 0]
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive relu ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke z -> zero
      teir.iter w over w {
        teir.invoke c -> mm
        teir.invoke z2 -> zero
      }
      teir.invoke r -> relu
      teir.iter w2 over w {
        teir.invoke z3 -> zero
        teir.invoke c3 -> mm
      }
      teir.invoke r3 -> relu
    }
  }
  func.return
}
// CHECK-LABEL: func.func @sunk_one_side
// CHECK:       teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = z at [first(w)]>}
// CHECK:       teir.invoke c3 -> mm attributes {epilogue = #teir.epilogue<zero = z3, relu = r3 at [last(w)]>}

// -----

// Loops nothing sinks into: parallel, guarded, moving out by a stride (another
// tile per iteration) or by an offset.
func.func @loops_without_sinking(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis one extent 1 strides [0, 0, 0] offsets [0, 0, 0]
    teir.axis w extent 3 strides [512, 256, 0] offsets [0, 0, 0]
    teir.axis o extent 2 strides [0, 0, 4] offsets [0, 0, 0]
    teir.axis x extent 2 strides [0, 0, 0] offsets [0, 0, 4]
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive relu ReLU {M = [m], N = [n]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke z1 -> zero
      teir.iter one over one parallel {
        teir.invoke c1 -> mm
      }
      teir.invoke r1 -> relu
      teir.iter w over w {
        teir.invoke z2 -> zero
        teir.iter one2 over one [first(w)] {
          teir.invoke c2 -> mm
        }
        teir.invoke r2 -> relu
      }
      teir.invoke z3 -> zero
      teir.iter o over o {
        teir.invoke c3 -> mm
      }
      teir.invoke r3 -> relu
      teir.invoke z4 -> zero
      teir.iter x over x {
        teir.invoke c4 -> mm
      }
      teir.invoke r4 -> relu
    }
  }
  func.return
}
// CHECK-LABEL: func.func @loops_without_sinking
// CHECK-NOT:   epilogue

// -----

// Tiles that differ: a ReLU over M only, a K axis that shifts out by an offset
// (the Contraction's C is not the Zero's tile), a Zero of another data type
// (TF32 computes on FP32 storage); a Contraction without a GEMM/BRGEMM kernel
// (no microkernel takes the epilogue); a Zero (z5) not just before (c6).
func.func @no_fusion(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.axis ks extent 16 strides [32, 4, 0] offsets [0, 0, 4]
    teir.axis kk extent 16 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive relu_m ReLU {M = [m], N = []} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.primitive shifted Contraction {M = [m], N = [n], K = [ks]} {data_type = "FP32"}
    teir.primitive tf32 Contraction {M = [m], N = [n], K = [k]} {data_type = "TF32"}
    teir.primitive zero_s Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive dot Contraction {M = [], N = [], K = [kk]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke c1 -> mm
      teir.invoke r1 -> relu_m
      teir.invoke z2 -> zero
      teir.invoke c2 -> shifted
      teir.invoke z3 -> zero
      teir.invoke c3 -> tf32
      teir.invoke z4 -> zero_s
      teir.invoke c4 -> dot
      teir.invoke z5 -> zero
      teir.invoke c5 -> dot
      teir.invoke c6 -> mm
    }
  }
  func.return
}
// CHECK-LABEL: func.func @no_fusion
// CHECK-NOT:   epilogue
