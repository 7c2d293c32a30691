// RUN: teir-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// One case per verifier error of the teir dialect; each names its rule and ids.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 0 strides [4, 4] offsets [0, 0]
    teir.schedule {}
  }
  func.return
}
// CHECK: axis rule: axis 'a' has extent 0; an extent is a positive integer

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4, 4] offsets [0, 0]
    teir.schedule {}
  }
  func.return
}
// CHECK: axis rule: axis 'a' has 3 strides but the configuration has 2 tensors; give one per tensor

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0]
    teir.schedule {}
  }
  func.return
}
// CHECK: axis rule: axis 'a' has 1 offsets but the configuration has 2 tensors; give one per tensor

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, -4] offsets [0, 0]
    teir.schedule {}
  }
  func.return
}
// CHECK: axis rule: axis 'a' has stride -4 on out; strides are non-negative byte counts

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.axis a extent 3 strides [4, 4] offsets [0, 0]
    teir.schedule {}
  }
  func.return
}
// CHECK: axis rule: axis id 'a' is defined twice

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis 7 extent 2 strides [4, 4] offsets [0, 0]
    teir.axis "7" extent 3 strides [4, 4] offsets [0, 0]
    teir.schedule {}
  }
  func.return
}
// CHECK: axis rule: axis id '7' is defined twice

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Add {M = [], N = []} {data_type = "FP32"}
    teir.schedule {}
  }
  func.return
}
// CHECK: primitive rule: primitive 'p' has operation 'Add'; expected Zero, Copy, ReLU or Contraction

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Zero {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {}
  }
  func.return
}
// CHECK: operation constraint: primitive 'p' (Zero) has role 'K'; the roles of Zero are M, N

// -----

func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.primitive p Contraction {M = [], N = []} {data_type = "FP32"}
    teir.schedule {}
  }
  func.return
}
// CHECK: primitive rule: primitive 'p' (Contraction) defines no role list for K; give one, possibly empty

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Copy {M = [z], N = []} {data_type = "FP32"}
    teir.schedule {}
  }
  func.return
}
// CHECK: primitive rule: primitive 'p' names axis 'z' in role M, which is not an axis

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [a], N = [a]} {data_type = "FP32"}
    teir.schedule {}
  }
  func.return
}
// CHECK: axis reuse: primitive 'p' names axis 'a' twice (in roles M and N)

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Copy {M = [], N = []} {}
    teir.schedule {}
  }
  func.return
}
// CHECK: primitive rule: primitive 'p' needs metadata data_type, one of FP16, BF16, TF32, FP32 or FP64; got none

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Copy {M = [], N = []} {data_type = "FP8"}
    teir.schedule {}
  }
  func.return
}
// CHECK: primitive rule: primitive 'p' needs metadata data_type, one of FP16, BF16, TF32, FP32 or FP64; got "FP8"

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.primitive p Zero {M = [], N = []} {data_type = "FP32"}
    teir.schedule {}
  }
  func.return
}
// CHECK: primitive rule: primitive id 'p' is defined twice

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {}
  }
  func.return
}
// CHECK: operation constraint: primitive 'p' is a Contraction, which needs three tensors (in0, in1, out); the configuration has 2

// -----

func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {}
  }
  func.return
}
// CHECK: operation constraint: primitive 'p' is a Copy, a unary operation, which needs two tensors (in0, out); the configuration has 3

// -----

func.func @k(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %d: memref<?xf32>) {
  teir.config(%a, %b, %c, %d) : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.schedule {}
  }
  func.return
}
// CHECK: operation constraint: a configuration has 2 tensors (in0, out) or 3 tensors (in0, in1, out), got 4

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Copy {M = [], N = []} {data_type = "FP64"}
    teir.schedule {}
  }
  func.return
}
// CHECK: operation constraint: primitive 'p' works on FP64 but tensor in0 holds f32 elements (expected f64, or i8 for raw bytes)

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [6, 4] offsets [0, 0]
    teir.primitive p Copy {M = [a], N = []} {data_type = "FP32"}
    teir.schedule {}
  }
  func.return
}
// CHECK: stride alignment: axis 'a' of primitive 'p' has stride 6 on in0, not a multiple of the 4-byte element width of FP32

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter x over a {
        teir.invoke x -> p
      }
    }
  }
  func.return
}
// CHECK: schedule rule: schedule node id 'x' is defined twice

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
  }
  func.return
}
// CHECK: schedule rule: teir.config holds exactly one teir.schedule, found 0

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.schedule {}
    teir.schedule {}
  }
  func.return
}
// CHECK: schedule rule: teir.config holds exactly one teir.schedule, found 2

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    "test.op"() : () -> ()
    teir.schedule {}
  }
  func.return
}
// CHECK: structure: teir.config holds teir.axis, teir.primitive and one teir.schedule, found test.op

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.schedule {
      "test.op"() : () -> ()
    }
  }
  func.return
}
// CHECK: schedule rule: the roots of teir.schedule are teir.iter and teir.invoke nodes, found test.op

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.schedule {
      teir.iter x over a {
        "test.op"() : () -> ()
      }
    }
  }
  func.return
}
// CHECK: schedule rule: iteration node 'x' may hold only teir.iter and teir.invoke nodes, found test.op

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter x over a diagonal {
        teir.invoke c -> p
      }
    }
  }
  func.return
}
// CHECK: iteration node rule: iteration node 'x' has policy 'diagonal'; expected sequential or parallel

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter x over b {
        teir.invoke c -> p
      }
    }
  }
  func.return
}
// CHECK: iteration node rule: iteration node 'x' iterates axis 'b', which is not an axis

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.schedule {
      teir.iter x over a {
      }
    }
  }
  func.return
}
// CHECK: iteration node rule: iteration node 'x' has no children; an iteration node has at least one child

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter x over a {
        teir.invoke c -> q
      }
    }
  }
  func.return
}
// CHECK: invocation node rule: invocation 'c' invokes primitive 'q', which is not a primitive

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 2 strides [4, 4] offsets [0, 0]
    teir.axis t extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Zero {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.invoke zero -> p [first(t)]
      }
    }
  }
  func.return
}
// CHECK: guard rule: guard of invocation 'zero' names axis 't', which no ancestor of 'zero' iterates

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Zero {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k [last(k)] {
        teir.invoke zero -> p
      }
    }
  }
  func.return
}
// CHECK: guard rule: guard of iteration node 'k' names axis 'k', which no ancestor of 'k' iterates

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 2 strides [4, 4] offsets [0, 0]
    teir.axis t extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Zero {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter t over t {
        teir.invoke copy -> p
      }
      teir.iter k over k {
        teir.invoke zero -> p [first(k), last(t)]
      }
    }
  }
  func.return
}
// CHECK: guard rule: guard of invocation 'zero' names axis 't', which no ancestor of 'zero' iterates

// -----

func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis k extent 8 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive p Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k parallel {
        teir.invoke c -> p
      }
    }
  }
  func.return
}
// CHECK: parallel race: iteration node 'k' runs axis 'k' in parallel, but its iterations k=0 and k=7 write overlapping bytes of out (invocation 'c' at 0, 'c' at 7); each index of a parallel axis must write its own bytes (axis 'k' has stride 0 on out: only writes that a first/last guard pins to one of its indices can run in parallel)

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter outer over a {
        teir.iter inner over a {
          teir.invoke c -> p
        }
      }
    }
  }
  func.return
}
// CHECK: axis reuse: iteration node 'inner' iterates axis 'a', which its ancestor 'outer' already iterates

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [a], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter x over a {
        teir.invoke c -> p
      }
    }
  }
  func.return
}
// CHECK: axis reuse: invocation 'c' runs primitive 'p' over axis 'a', which its ancestor 'x' already iterates

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 4 strides [4, 4] offsets [0, -8]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke c -> p
      }
    }
  }
  func.return
}
// CHECK: bounds: invocation 'c' touches byte -8 of out, before the start of the tensor

// -----

func.func @k(%in0: memref<4xf32>, %out: memref<3xf32>) {
  teir.config(%in0, %out) : (memref<4xf32>, memref<3xf32>) {
    teir.axis a extent 4 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke c -> p
      }
    }
  }
  func.return
}
// CHECK: bounds: invocation 'c' touches out up to byte 16, past the end of its 12-byte memref

// -----

// A guard pins the index: last(a) only touches the last element.
func.func @k(%in0: memref<4xf32>, %out: memref<1xf32>) {
  teir.config(%in0, %out) : (memref<4xf32>, memref<1xf32>) {
    teir.axis a extent 4 strides [4, 4] offsets [0, -12]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke c -> p [last(a)]
      }
    }
  }
  func.return
}
// CHECK: {{//[ ]-----}}
// CHECK-NOT: bounds
// CHECK: teir.invoke c -> p [last(a)]

// -----

// A recorded kernel must be what Table 10.6.1's rule gives (the lowering trusts it).
func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<general>}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK: kernel rule: primitive 'c' records #teir.kernel<general> but its axes make it #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">

// -----

// A stale increment (A was stepped by two floats when the kernel was recorded):
// the recorded general strides must be the axes' too.
func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, inca = 2, trans = "NNN">}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK: kernel rule: primitive 'c' records #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, inca = 2, trans = "NNN"> but its axes make it #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">

// -----

// An increment is a count of elements, never negative.
func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, incb = -1, trans = "NNN">}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK: kernel rule: teir.kernel incb = -1 is out of range

// -----

// Only a Contraction carries a kernel.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"} attributes {kernel = #teir.kernel<scalar>}
    teir.schedule {
      teir.invoke c -> p
    }
  }
  func.return
}
// CHECK: kernel rule: primitive 'p' (Copy) carries a 'kernel' attribute; only a Contraction carries one

// -----

// An id keeps its JSON type: the axis 7 is not the axis "7".
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis 7 extent 4 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over "7" {
        teir.invoke c -> p
      }
    }
  }
  func.return
}
// CHECK: id rule: iteration node 'a' names axis '7' as a string, but the axis is defined with a number id; an id keeps its JSON type (7 and "7" are different ids)

// -----

// Parallel iterations whose out tiles overlap: p steps 4 bytes, each tile is 16 elements.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis p extent 8 strides [64, 4] offsets [0, 0]
    teir.axis m extent 16 strides [4, 4] offsets [0, 0]
    teir.primitive c Copy {M = [m], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter p over p parallel {
        teir.invoke x -> c
      }
    }
  }
  func.return
}
// CHECK: parallel race: iteration node 'p' runs axis 'p' in parallel, but its iterations p=0 and p=7 write overlapping bytes of out (invocation 'x' at 0, 'x' at 7); each index of a parallel axis must write its own bytes

// -----

// Two parallel axes whose out tiles alias (q's stride equals p's).
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis p extent 4 strides [16, 16] offsets [0, 0]
    teir.axis q extent 4 strides [64, 16] offsets [0, 0]
    teir.axis m extent 4 strides [4, 4] offsets [0, 0]
    teir.primitive c Copy {M = [m], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter p over p parallel {
        teir.iter q over q parallel {
          teir.invoke x -> c
        }
      }
    }
  }
  func.return
}
// CHECK: parallel race: iteration node 'p' runs axis 'p' in parallel, but its iterations p=0 and p=3 write overlapping bytes of out

// -----

// A last(p) epilogue that reaches back over the tiles of the other iterations
// (the offset of m moves it to the start of out) races with them.
func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis p extent 4 strides [4, 4, 4] offsets [0, 0, 0]
    teir.axis m extent 4 strides [0, 0, 4] offsets [0, 0, -12]
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.primitive r ReLU {M = [m], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter p over p parallel {
        teir.invoke x -> c
        teir.invoke y -> r [last(p)]
      }
    }
  }
  func.return
}
// CHECK: parallel race: iteration node 'p' runs axis 'p' in parallel, but its iterations p=0 and p=3 write overlapping bytes of out (invocation 'x' at 0, 'y' at 3)

// -----

// Interleaved but disjoint: a parallel unit-stride axis with column tiles is race-free.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis s extent 16 strides [4, 4] offsets [0, 0]
    teir.axis q extent 8 strides [64, 64] offsets [0, 0]
    teir.primitive c Copy {M = [q], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter s over s parallel {
        teir.invoke x -> c
      }
    }
  }
  func.return
}
// CHECK: {{//[ ]-----}}
// CHECK-NOT: parallel race
// CHECK: teir.iter s over s parallel

// -----

// A parallel axis with stride 0 on out: first(p) and last(p) pin the writes to
// one index each, but two different ones, and both write the same bytes.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis p extent 4 strides [4, 0] offsets [0, 0]
    teir.primitive c Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter p over p parallel {
        teir.invoke x -> c [first(p)]
        teir.invoke y -> c [last(p)]
      }
    }
  }
  func.return
}
// CHECK: parallel race: iteration node 'p' runs axis 'p' in parallel, but its iterations p=0 and p=3 write overlapping bytes of out (invocation 'x' at 0, 'y' at 3); each index of a parallel axis must write its own bytes (axis 'p' has stride 0 on out: only writes that a first/last guard pins to one of its indices can run in parallel)

// -----

// Stride 0 on out, but only p=0 writes the head of out and only p=3 its tail;
// the other writes sit under contradicting guards and never run: race-free.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis p extent 4 strides [32, 0] offsets [0, 0]
    teir.axis m extent 8 strides [4, 4] offsets [0, 0]
    teir.axis n extent 8 strides [4, 4] offsets [0, 32]
    teir.axis q extent 2 strides [0, 4] offsets [0, 0]
    teir.primitive z Zero {M = [m], N = []} {data_type = "FP32"}
    teir.primitive head Copy {M = [m], N = []} {data_type = "FP32"}
    teir.primitive tail Copy {M = [n], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter p over p parallel {
        teir.invoke zero_head -> z [first(p)]
        teir.invoke copy_head -> head [first(p)]
        teir.invoke copy_tail -> tail [last(p)]
        teir.invoke never -> tail [first(p), last(p)]
        teir.iter q over q [last(p), first(p)] {
          teir.invoke never_either -> head
        }
        teir.iter r over q {
          teir.invoke nor_this -> head [first(q), last(q)]
        }
      }
    }
  }
  func.return
}
// CHECK: {{//[ ]-----}}
// CHECK-NOT: parallel race
// CHECK: teir.invoke zero_head -> z [first(p)]

// -----

// Guards on a loop around the parallel one: x runs in the first run of p, y in
// the last; x at p=1 and y at p=0 would overlap, but never in one run: race-free.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis s extent 2 strides [128, 0] offsets [0, 0]
    teir.axis p extent 4 strides [32, 8] offsets [0, 0]
    teir.axis m extent 2 strides [4, 4] offsets [0, 0]
    teir.axis n extent 2 strides [4, 4] offsets [0, 4]
    teir.primitive even Copy {M = [m], N = []} {data_type = "FP32"}
    teir.primitive odd Copy {M = [n], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter s over s {
        teir.iter p over p parallel {
          teir.invoke x -> even [first(s)]
          teir.invoke y -> odd [last(s)]
        }
      }
    }
  }
  func.return
}
// CHECK: {{//[ ]-----}}
// CHECK-NOT: parallel race
// CHECK: teir.invoke y -> odd [last(s)]

// -----

// The same with both in the first run of p: they race there.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis s extent 2 strides [128, 0] offsets [0, 0]
    teir.axis p extent 4 strides [32, 8] offsets [0, 0]
    teir.axis m extent 2 strides [4, 4] offsets [0, 0]
    teir.axis n extent 2 strides [4, 4] offsets [0, 4]
    teir.primitive even Copy {M = [m], N = []} {data_type = "FP32"}
    teir.primitive odd Copy {M = [n], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter s over s {
        teir.iter p over p parallel {
          teir.invoke x -> even [first(s)]
          teir.invoke y -> odd [first(s)]
        }
      }
    }
  }
  func.return
}
// CHECK: parallel race: iteration node 'p' runs axis 'p' in parallel, but its iterations p=1 and p=0 write overlapping bytes of out (invocation 'x' at 1, 'y' at 0); each index of a parallel axis must write its own bytes

// -----

// Byte offsets near 2**62: the exact search works past int64 sums rather than
// refusing; x and y interleave 8 bytes apart at every index of p: race-free.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis p extent 2 strides [4, 16] offsets [0, 0]
    teir.axis m extent 3 strides [4, 2305843009213693952] offsets [0, 0]
    teir.axis n extent 3 strides [4, 2305843009213693952] offsets [0, 8]
    teir.primitive z Zero {M = [m], N = []} {data_type = "FP32"}
    teir.primitive c Copy {M = [n], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter p over p parallel {
        teir.invoke x_huge -> z
        teir.invoke y_huge -> c
      }
    }
  }
  func.return
}
// CHECK: {{//[ ]-----}}
// CHECK-NOT: parallel race
// CHECK: teir.invoke y_huge -> c

// -----

// Byte offsets must fit a signed 64-bit index.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 4611686018427387904 strides [4, 4] offsets [0, 0]
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke c -> p
      }
    }
  }
  func.return
}
// CHECK: index range: invocation 'c' addresses in0 with byte offsets up to 18446744073709551616, which do not fit a signed 64-bit index

// -----

// A recorded epilogue must be what the rule gives (the lowering trusts it and
// leaves out the Zero it names): here the Zero is not just before the GEMM.
func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis w extent 3 strides [512, 256, 0] offsets [0, 0, 0]
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">}
    teir.schedule {
      teir.iter w over w {
        teir.invoke z -> zero [first(w)]
      }
      teir.iter w2 over w {
        teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = z at [first(w)]>}
      }
    }
  }
  func.return
}
// CHECK: epilogue rule: invocation 'c' records #teir.epilogue<zero = z at [first(w)]> but the schedule around it fuses nothing; the lowering trusts this attribute, so drop it or record the rule's result (teir-fuse-epilogues)

// -----

// The `at` terms must be the loops the Zero sank through (w and v, not w alone).
func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis w extent 3 strides [512, 256, 0] offsets [0, 0, 0]
    teir.axis v extent 2 strides [1536, 768, 0] offsets [0, 0, 0]
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive zero Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive mm Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">}
    teir.schedule {
      teir.invoke z -> zero
      teir.iter w over w {
        teir.iter v over v {
          teir.invoke c -> mm attributes {epilogue = #teir.epilogue<zero = z at [first(w)]>}
        }
      }
    }
  }
  func.return
}
// CHECK: epilogue rule: invocation 'c' records #teir.epilogue<zero = z at [first(w)]> but the schedule around it fuses #teir.epilogue<zero = z at [first(w), first(v)]>

// -----

// Only the invocation of a Contraction carries an epilogue.
func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.primitive zero Zero {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.invoke z -> zero
      teir.invoke c -> p attributes {epilogue = #teir.epilogue<zero = z>}
    }
  }
  func.return
}
// CHECK: epilogue rule: invocation 'c' of primitive 'p' carries an 'epilogue' attribute; only the invocation of a Contraction carries one

// -----

func.func @k(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.primitive p Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.invoke c -> p attributes {epilogue = "zero"}
    }
  }
  func.return
}
// CHECK: epilogue rule: invocation 'c' carries an 'epilogue' attribute that is not a #teir.epilogue: "zero"

// -----

// The attribute's own rules: something fused, first terms for the zero, last
// terms for the relu; zero before relu, each once.
"test.op"() {e = #teir.epilogue<>} : () -> ()
// CHECK: epilogue rule: a teir.epilogue fuses a zero, a relu or both

// -----

"test.op"() {e = #teir.epilogue<zero = z at [last(w)]>} : () -> ()
// CHECK: epilogue rule: the zero of a teir.epilogue runs at the first iteration of its loops, got last(w)

// -----

"test.op"() {e = #teir.epilogue<relu = r at [last(w), first(v)]>} : () -> ()
// CHECK: epilogue rule: the relu of a teir.epilogue runs at the last iteration of its loops, got first(v)

// -----

"test.op"() {e = #teir.epilogue<relu = r, zero = z>} : () -> ()
// CHECK: epilogue rule: unexpected or repeated 'zero' in a teir.epilogue (zero, then relu, each at most once)

// -----

"test.op"() {e = #teir.epilogue<zero = z, zero = z>} : () -> ()
// CHECK: epilogue rule: unexpected or repeated 'zero' in a teir.epilogue (zero, then relu, each at most once)

// -----

"test.op"() {e = #teir.epilogue<scale = s>} : () -> ()
// CHECK: epilogue rule: unexpected or repeated 'scale' in a teir.epilogue (zero, then relu, each at most once)

// -----

func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.primitive p Contraction {M = [], N = [], K = []} {data_type = "FP32", bf16_products = "pairs"}
    teir.schedule {}
  }
  func.return
}
// CHECK: primitive rule: primitive 'p' (Contraction, FP32) has metadata bf16_products; only a BF16 Contraction has one

// -----

func.func @k(%in0: memref<?xbf16>, %in1: memref<?xbf16>, %out: memref<?xbf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xbf16>, memref<?xbf16>, memref<?xbf16>) {
    teir.primitive p Contraction {M = [], N = [], K = []} {data_type = "BF16", bf16_products = "fused"}
    teir.schedule {}
  }
  func.return
}
// CHECK: primitive rule: primitive 'p' has metadata bf16_products = "fused"; it is one of sequential, pairs

// -----

// A segmented dot recorded for other extents: the rule gives k = 118, not 100.
func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 6 strides [4, 4, 704] offsets [0, 0, 0]
    teir.axis j extent 118 strides [24, 24, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [b], K = [j]} {data_type = "FP32"} attributes {kernel = #teir.kernel<segmented m = 1, n = 6, k = 100, lda = 0, ldc = 0, incc = 176>}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK: kernel rule: primitive 'c' records #teir.kernel<segmented m = 1, n = 6, k = 100, lda = 0, ldc = 0, incc = 176> but its axes make it #teir.kernel<segmented m = 1, n = 6, k = 118, lda = 0, ldc = 0, incc = 176>

// -----

// A segmented dot has no BLAS orientation.
func.func @k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 6 strides [4, 4, 704] offsets [0, 0, 0]
    teir.axis j extent 118 strides [24, 24, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [b], K = [j]} {data_type = "FP32"} attributes {kernel = #teir.kernel<segmented m = 1, n = 6, k = 118, lda = 0, ldc = 0, incc = 176, trans = "NNN">}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK: kernel rule: unexpected or repeated parameter 'trans' in a segmented teir.kernel

// -----

// A periodic product recorded with the strides of another vector (ldb 8, not 7).
func.func @k(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis b extent 7 strides [8, 8, 8] offsets [0, 0, 0]
    teir.axis i extent 121 strides [56, 0, 56] offsets [0, 0, 0]
    teir.axis j extent 71 strides [6776, 56, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [i], N = [b], K = [j]} {data_type = "FP64"} attributes {kernel = #teir.kernel<periodic m = 121, n = 7, k = 71, lda = 847, ldb = 8>}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK: kernel rule: primitive 'c' records #teir.kernel<periodic m = 121, n = 7, k = 71, lda = 847, ldb = 8> but its axes make it #teir.kernel<periodic m = 121, n = 7, k = 71, lda = 847, ldb = 7>
