// RUN: teir-opt %examples/spec/tree/10_7_5_scalar_contraction.json -p teir-lift-gemm | filecheck %s --check-prefix=SPEC
// RUN: teir-opt %examples/spec/tree/10_7_5_scalar_contraction.json -p teir-lift-gemm,teir-lift-gemm | filecheck %s --check-prefix=SPEC
// RUN: teir-opt %examples/spec/tree/10_7_5_scalar_contraction.json -p teir-lift-gemm,teir-lift-brgemm | filecheck %s --check-prefix=BRGEMM
// RUN: teir-opt %s --split-input-file -p teir-lift-gemm | filecheck %s

// §10.7.5 (scalar loops) becomes §10.7.6: the s, q, u loops move into
// gemm_squ (M=[s], N=[q], K=[u]) and the scalar Zero becomes the tile Zero
// zero_sq; with teir-lift-brgemm after it, §10.7.7's BRGEMM shape.

// SPEC:      teir.primitive zero_sq Zero {M = [s], N = [q]} {data_type = "FP32"}
// SPEC-NEXT: teir.primitive gemm_squ Contraction {M = [s], N = [q], K = [u]} {data_type = "FP32"}
// SPEC-NEXT: teir.schedule {
// SPEC-NEXT:   teir.iter p over p {
// SPEC-NEXT:     teir.iter r over r {
// SPEC-NEXT:       teir.invoke zero -> zero_sq
// SPEC-NEXT:       teir.iter t over t {
// SPEC-NEXT:         teir.invoke contraction -> gemm_squ
// SPEC-NEXT:       }
// SPEC-NEXT:     }
// SPEC-NEXT:   }
// SPEC-NEXT: }

// BRGEMM:      teir.primitive brgemm_sqtu Contraction {M = [s], N = [q], K = [t, u]} {data_type = "FP32"}
// BRGEMM:      teir.iter p over p {
// BRGEMM-NEXT:   teir.iter r over r {
// BRGEMM-NEXT:     teir.invoke zero -> zero_sq
// BRGEMM-NEXT:     teir.invoke contraction -> brgemm_sqtu
// BRGEMM-NEXT:   }
// BRGEMM-NEXT: }

func.func @guard_on_k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 16, 16] offsets [0, 0, 0]
    teir.axis k extent 4 strides [16, 4, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter k over k {
        teir.iter n over n {
          teir.iter m over m {
            teir.invoke zero -> z [first(k)]
            teir.invoke fma -> c
          }
        }
      }
    }
  }
  func.return
}

// The Zero under the k loop would run once per k: the k node holds another
// invocation than the Contraction, so nothing is lifted.
// CHECK-LABEL: func.func @guard_on_k
// CHECK:         teir.iter k over k {
// CHECK-NEXT:      teir.iter n over n {
// CHECK-NEXT:        teir.iter m over m {
// CHECK-NEXT:          teir.invoke zero -> z [first(k)]
// CHECK-NEXT:          teir.invoke fma -> c

// -----

func.func @no_unit_stride(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [8, 0, 8] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 32, 32] offsets [0, 0, 0]
    teir.axis k extent 4 strides [32, 8, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter n over n {
        teir.iter m over m {
          teir.iter k over k {
            teir.invoke fma -> c
          }
        }
      }
    }
  }
  func.return
}

// Strides of two floats: not Table 10.6.1's pattern, but a GEMM with general
// strides (increments of 2 on every operand, teir-match-gemm records them).
// CHECK-LABEL: func.func @no_unit_stride
// CHECK:         teir.primitive gemm_mnk Contraction {M = [m], N = [n], K = [k]}
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.invoke fma -> gemm_mnk

// -----

// Two GEMMs fit: (p, n, k) with general strides (A does not depend on p: a
// broadcast, increment 0) and (m, n, k) in Table 10.6.1's pattern. p is the
// inner loop, tried first, but the table's pattern wins and p stays a loop.
func.func @table_pattern_first(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [16, 0, 16] offsets [0, 0, 0]
    teir.axis p extent 4 strides [0, 0, 64] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 16, 4] offsets [0, 0, 0]
    teir.axis k extent 4 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter m over m {
        teir.iter p over p {
          teir.iter n over n {
            teir.iter k over k {
              teir.invoke fma -> c
            }
          }
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @table_pattern_first
// CHECK:         teir.primitive gemm_mnk Contraction {M = [m], N = [n], K = [k]}
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.iter p over p {
// CHECK-NEXT:        teir.invoke fma -> gemm_mnk

// -----

func.func @transposed_out(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis m extent 3 strides [8, 0, 40] offsets [0, 0, 0]
    teir.axis n extent 5 strides [0, 16, 8] offsets [0, 0, 0]
    teir.axis k extent 2 strides [24, 8, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter m over m {
        teir.iter n over n {
          teir.iter k over k {
            teir.invoke fma -> c
          }
        }
      }
    }
  }
  func.return
}

// out has unit stride on n (a transposed C): still a GEMM.
// CHECK-LABEL: func.func @transposed_out
// CHECK:         teir.primitive gemm_mnk Contraction {M = [m], N = [n], K = [k]} {data_type = "FP64"}
// CHECK-NEXT:    teir.schedule {
// CHECK-NEXT:      teir.invoke fma -> gemm_mnk
// CHECK-NEXT:    }

// -----

// FP16 with its K already in the primitive (as einsum_config builds it): the
// m and n loops join its roles, K stays (one rounding per store, as before);
// the Zero under both loops gets them too.
func.func @k_role_fp16(%in0: memref<?xf16>, %in1: memref<?xf16>, %out: memref<?xf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xf16>, memref<?xf16>, memref<?xf16>) {
    teir.axis m extent 4 strides [16, 0, 32] offsets [0, 0, 0]
    teir.axis n extent 16 strides [0, 2, 2] offsets [0, 0, 0]
    teir.axis k extent 8 strides [2, 32, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP16"}
    teir.primitive c Contraction {M = [], N = [], K = [k]} {data_type = "FP16"}
    teir.schedule {
      teir.iter m over m {
        teir.iter n over n {
          teir.invoke zero -> z
          teir.invoke fma -> c
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @k_role_fp16
// CHECK:         teir.primitive gemm_mnk Contraction {M = [m], N = [n], K = [k]} {data_type = "FP16"}
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.invoke zero -> zero_mn
// CHECK-NEXT:      teir.invoke fma -> gemm_mnk
// CHECK-NEXT:    }

// -----

// Two K axes of the primitive, the outer one a batch-reduce axis: a BRGEMM.
func.func @k_role_brgemm(%in0: memref<?xbf16>, %in1: memref<?xbf16>, %out: memref<?xbf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xbf16>, memref<?xbf16>, memref<?xbf16>) {
    teir.axis m extent 4 strides [16, 0, 32] offsets [0, 0, 0]
    teir.axis n extent 16 strides [0, 2, 2] offsets [0, 0, 0]
    teir.axis b extent 3 strides [64, 256, 0] offsets [0, 0, 0]
    teir.axis k extent 8 strides [2, 32, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = [b, k]} {data_type = "BF16"}
    teir.schedule {
      teir.iter n over n {
        teir.iter m over m {
          teir.invoke fma -> c
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @k_role_brgemm
// CHECK:         teir.primitive brgemm_mnbk Contraction {M = [m], N = [n], K = [b, k]} {data_type = "BF16"}
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.invoke fma -> brgemm_mnbk
// CHECK-NEXT:    }

// -----

// Strides of two halves on every tensor, and out's rows (m, 4 halves apart)
// interleave its columns (n, 2 halves apart, 16 of them): no C the microkernel
// may write, even with general strides; the loops stay.
func.func @k_role_no_gemm(%in0: memref<?xf16>, %in1: memref<?xf16>, %out: memref<?xf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xf16>, memref<?xf16>, memref<?xf16>) {
    teir.axis m extent 4 strides [32, 0, 8] offsets [0, 0, 0]
    teir.axis n extent 16 strides [0, 4, 4] offsets [0, 0, 0]
    teir.axis k extent 8 strides [4, 64, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = [k]} {data_type = "FP16"}
    teir.schedule {
      teir.iter m over m {
        teir.iter n over n {
          teir.invoke fma -> c
        }
      }
    }
  }
  func.return
}

// CHECK-LABEL: func.func @k_role_no_gemm
// CHECK:         teir.schedule {
// CHECK-NEXT:      teir.iter m over m {
// CHECK-NEXT:        teir.iter n over n {
// CHECK-NEXT:          teir.invoke fma -> c
