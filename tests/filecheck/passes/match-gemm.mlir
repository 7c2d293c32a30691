// RUN: teir-opt %s --split-input-file -p teir-match-gemm | filecheck %s
// RUN: teir-opt %s --split-input-file -p teir-match-gemm,teir-match-gemm | filecheck %s
// RUN: teir-opt %s --split-input-file -p teir-match-gemm --print-op-generic | teir-opt --split-input-file | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_6_3_gemm.json -p teir-match-gemm | filecheck %s --check-prefix=SPEC63
// RUN: teir-opt %examples/spec/tree/10_7_6_contraction_gemm.json -p teir-match-gemm | filecheck %s --check-prefix=SPEC76
// RUN: teir-opt %examples/spec/tree/10_7_7_parallel_brgemm.json -p teir-match-gemm | filecheck %s --check-prefix=SPEC77
// RUN: teir-opt %examples/spec/tree/10_7_7_parallel_brgemm.json -p teir-match-gemm,teir-match-gemm | filecheck %s --check-prefix=SPEC77

// teir-match-gemm records the Table 10.6.1 kernel of every Contraction as the
// attribute `kernel`, with Table 10.6.2's parameters in elements and the BLAS
// (column-major) orientations trans = "<A><B><C>". Other primitives are left
// alone. The second RUN line checks idempotence, the third that the annotated
// IR round-trips through the generic syntax.

// §10.6.3: m = 8, n = 4, k = 16, lda = 32/4, ldb = 64/4, ldc = 32/4.
// SPEC63:      teir.primitive zero_mn Zero {M = [m], N = [n]} {data_type = "FP32"}{{$}}
// SPEC63-NEXT: teir.primitive gemm_mnk Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">}

// §10.7.6: M = |s| = 16, N = |q| = 8, K = |u| = 8, lda = |s|, ldb = |t|*|u|, ldc = |r|*|s|.
// SPEC76:      teir.primitive zero_sq Zero {M = [s], N = [q]} {data_type = "FP32"}{{$}}
// SPEC76-NEXT: teir.primitive gemm_squ Contraction {M = [s], N = [q], K = [u]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 16, n = 8, k = 8, lda = 16, ldb = 16, ldc = 48, trans = "NNN">}

// §10.7.7: as §10.7.6 plus brSize = |t| = 2, brStrA = |r|*|u|*|s| = 384, brStrB = |u| = 8.
// SPEC77:      teir.primitive zero_sq Zero {M = [s], N = [q]} {data_type = "FP32"}{{$}}
// SPEC77-NEXT: teir.primitive brgemm_sqtu Contraction {M = [s], N = [q], K = [t, u]} {data_type = "FP32"} attributes {kernel = #teir.kernel<brgemm m = 16, n = 8, k = 8, lda = 16, ldb = 16, ldc = 48, br_size = 2, br_stride_a = 384, br_stride_b = 8, trans = "NNN">}

// M, N, K all empty: a scalar multiply-add.
func.func @scalar(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @scalar
// CHECK: teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"} attributes {kernel = #teir.kernel<scalar>}

// -----

// Table 10.6.3, with the Zero of the example left unannotated.
func.func @gemm_10_6_3(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [m], N = [n]} {data_type = "FP32"}
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @gemm_10_6_3
// CHECK: teir.primitive z Zero {M = [m], N = [n]} {data_type = "FP32"}{{$}}
// CHECK-NEXT: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">}

// -----

// in0 has k at unit stride and m carrying the leading dimension:
// A is stored k x m (lda = 64/4 = 16 >= |k|), op(A) = A^T.
func.func @transposed_a(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [64, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @transposed_a
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 16, ldb = 16, ldc = 8, trans = "TNN">}

// -----

// in1 has n at unit stride and k carrying the leading dimension (ldb = 16/4 = 4 = |n|).
func.func @transposed_b(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 4, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 16, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @transposed_b
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 4, ldc = 8, trans = "NTN">}

// -----

// out has n at unit stride and m carrying the leading dimension (ldc = 24/4 = 6 >= |n|).
func.func @transposed_c(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 24] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 4] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @transposed_c
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 6, trans = "NNT">}

// -----

// Every operand transposed, with padded leading dimensions.
func.func @transposed_all(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [80, 0, 20] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 4, 4] offsets [0, 0, 0]
    teir.axis k extent 16 strides [4, 32, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @transposed_all
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 20, ldb = 8, ldc = 5, trans = "TTT">}

// -----

// |m| = 1 and both in0 axes at unit stride: both orientations fit,
// the non-transposed one is chosen (lda = 1 >= |m|).
func.func @degenerate_m(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 1 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 4] offsets [0, 0, 0]
    teir.axis k extent 16 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @degenerate_m
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 1, n = 4, k = 16, lda = 1, ldb = 16, ldc = 1, trans = "NNN">}

// -----

// No role axis of in0 has unit stride (m every other element, a view like
// a[::2]): a GEMM with general strides, m is A's increment axis (inca = 2).
func.func @non_unit_strides(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [8, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [64, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @non_unit_strides
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 16, ldb = 16, ldc = 8, inca = 2, trans = "NNN">}

// -----

// B broadcast along n (stride 0, as np.broadcast_to gives) and k three
// elements apart on A: n is B's increment axis (incb = 0, "T"), k A's ("T").
func.func @broadcast_operand(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [256, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 0, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [12, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @broadcast_operand
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 64, ldb = 1, ldc = 8, inca = 3, incb = 0, trans = "TTN">}

// -----

// C stepped along both role axes (n every third element, m 48 apart):
// its elements stay apart (ldc = 12 >= 3 |n|), a GEMM with incc = 3, "T".
func.func @strided_c(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis m extent 2 strides [8, 0, 96] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 40, 24] offsets [0, 0, 0]
    teir.axis k extent 5 strides [16, 8, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP64"}
    teir.axis b extent 3 strides [80, 160, 0] offsets [0, 0, 0]
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @strided_c
// CHECK: attributes {kernel = #teir.kernel<brgemm m = 2, n = 4, k = 5, lda = 2, ldb = 5, ldc = 12, br_size = 3, br_stride_a = 10, br_stride_b = 20, incc = 3, trans = "NNT">}

// -----

// ldc = 16/4 = 4 < |m| = 8: the columns of C overlap, general.
func.func @overlapping_columns(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 16] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @overlapping_columns
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<general>}

// -----

// n has stride 0 on out (every column is the same): general.
func.func @zero_leading_dimension(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 0] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @zero_leading_dimension
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<general>}

// -----

// k has a stride on out, so the sum is spread over several C elements: general.
func.func @k_strides_out(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 128] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @k_strides_out
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<general>}

// -----

// n has a stride on in0 (A depends on n): general.
func.func @n_strides_in0(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 8 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [512, 64, 32] offsets [0, 0, 0]
    teir.axis k extent 16 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @n_strides_in0
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<general>}

// -----

// §10.7.7's primitive (b = t, k = u, m = s, n = q) on its own.
func.func @brgemm_10_7_7(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 16 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 8 strides [0, 64, 192] offsets [0, 0, 0]
    teir.axis b extent 2 strides [1536, 32, 0] offsets [0, 0, 0]
    teir.axis k extent 8 strides [64, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @brgemm_10_7_7
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<brgemm m = 16, n = 8, k = 8, lda = 16, ldb = 16, ldc = 48, br_size = 2, br_stride_a = 384, br_stride_b = 8, trans = "NNN">}

// -----

// K[0]'s strides on in0 and in1 are unconstrained: batches of A overlap
// (3 elements apart) and B is the same matrix for every batch.
func.func @brgemm_any_batch_stride(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 16, 16] offsets [0, 0, 0]
    teir.axis b extent 5 strides [12, 0, 0] offsets [0, 0, 0]
    teir.axis k extent 4 strides [16, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @brgemm_any_batch_stride
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<brgemm m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, br_size = 5, br_stride_a = 3, br_stride_b = 0, trans = "NNN">}

// -----

// BRGEMM with transposed A and C.
func.func @brgemm_transposed(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [32, 0, 16] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 32, 4] offsets [0, 0, 0]
    teir.axis b extent 3 strides [4096, 256, 0] offsets [0, 0, 0]
    teir.axis k extent 8 strides [4, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @brgemm_transposed
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<brgemm m = 4, n = 4, k = 8, lda = 8, ldb = 8, ldc = 4, br_size = 3, br_stride_a = 1024, br_stride_b = 64, trans = "TNT">}

// -----

// K[0] has a stride on out: not a batch reduction, general.
func.func @brgemm_batch_strides_out(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 16, 16] offsets [0, 0, 0]
    teir.axis b extent 2 strides [64, 64, 64] offsets [0, 0, 0]
    teir.axis k extent 4 strides [16, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @brgemm_batch_strides_out
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [b, k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<general>}

// -----

// The GEMM K is the innermost K axis: with K = [k, b] it is b, stride 0 on in1
// (B broadcast along the GEMM's k): not Table 10.6.1's pattern, a BRGEMM with
// general strides (incb = 0) over the batches of k.
func.func @brgemm_inner_k_only(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 16, 16] offsets [0, 0, 0]
    teir.axis b extent 5 strides [12, 0, 0] offsets [0, 0, 0]
    teir.axis k extent 4 strides [16, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k, b]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @brgemm_inner_k_only
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k, b]} {data_type = "FP32"} attributes {kernel = #teir.kernel<brgemm m = 4, n = 4, k = 5, lda = 3, ldb = 4, ldc = 4, br_size = 4, br_stride_a = 4, br_stride_b = 1, incb = 0, trans = "NNN">}

// -----

// Two M axes: general, whatever the strides.
func.func @two_m_axes(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis m2 extent 2 strides [16, 0, 16] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 16, 32] offsets [0, 0, 0]
    teir.axis k extent 4 strides [32, 4, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m, m2], N = [n], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @two_m_axes
// CHECK: teir.primitive c Contraction {M = [m, m2], N = [n], K = [k]} {data_type = "FP32"} attributes {kernel = #teir.kernel<general>}

// -----

// M and N but no K (an outer product): general.
func.func @gemm_without_k(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis m extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 4, 16] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @gemm_without_k
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = []} {data_type = "FP32"} attributes {kernel = #teir.kernel<general>}

// -----

// FP64: unit stride is 8 bytes and leading dimensions are strides / 8.
func.func @fp64(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis m extent 8 strides [8, 0, 8] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 128, 64] offsets [0, 0, 0]
    teir.axis k extent 16 strides [64, 8, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP64"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @fp64
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP64"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8, trans = "NNN">}

// -----

// FP64: in0's m at 16 bytes is two elements apart, not unit stride: the
// increment counts elements of 8 bytes (inca = 2).
func.func @fp64_non_unit(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis m extent 8 strides [16, 0, 8] offsets [0, 0, 0]
    teir.axis n extent 4 strides [0, 128, 64] offsets [0, 0, 0]
    teir.axis k extent 16 strides [128, 8, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP64"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @fp64_non_unit
// CHECK: teir.primitive c Contraction {M = [m], N = [n], K = [k]} {data_type = "FP64"} attributes {kernel = #teir.kernel<gemm m = 8, n = 4, k = 16, lda = 16, ldb = 16, ldc = 8, inca = 2, trans = "NNN">}

// -----

// The segmented dot (a batched GEMV from an [i][j][b] array, `bij,bj->bi`): N = [b]
// at unit stride on in0 and in1, K = [j] at |b| elements on both, the row i a
// schedule loop; out's b stride is incc (176 floats: out in `bi` order).
func.func @segmented_row(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 6 strides [4, 4, 704] offsets [0, 0, 0]
    teir.axis i extent 176 strides [2832, 0, 4] offsets [0, 0, 0]
    teir.axis j extent 118 strides [24, 24, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [b], K = [j]} {data_type = "FP32"}
    teir.schedule {
      teir.iter i over i {
        teir.invoke x -> c
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @segmented_row
// CHECK: teir.primitive c Contraction {M = [], N = [b], K = [j]} {data_type = "FP32"} attributes {kernel = #teir.kernel<segmented m = 1, n = 6, k = 118, lda = 0, ldc = 0, incc = 176>}

// -----

// With the rows in the primitive (M = [i]): lda and ldc are i's strides.
func.func @segmented_rows(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis b extent 5 strides [8, 8, 8] offsets [0, 0, 0]
    teir.axis i extent 9 strides [280, 0, 40] offsets [0, 0, 0]
    teir.axis j extent 7 strides [40, 40, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [i], N = [b], K = [j]} {data_type = "FP64"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @segmented_rows
// CHECK: attributes {kernel = #teir.kernel<segmented m = 9, n = 5, k = 7, lda = 35, ldc = 5>}

// -----

// Not segmented: j steps 7 floats where b holds 6 (the runs of in0 have gaps);
// rows i that reach into the vector (a stride on in1); an out whose rows overlap
// (ldc 2 < 6 elements of b). Each is the general loop nest.
func.func @segmented_near_misses(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 6 strides [4, 4, 4] offsets [0, 0, 0]
    teir.axis i extent 4 strides [2832, 4, 24] offsets [0, 0, 0]
    teir.axis o extent 4 strides [2832, 0, 8] offsets [0, 0, 0]
    teir.axis j extent 118 strides [28, 24, 0] offsets [0, 0, 0]
    teir.axis k extent 118 strides [24, 24, 0] offsets [0, 0, 0]
    teir.primitive gaps Contraction {M = [], N = [b], K = [j]} {data_type = "FP32"}
    teir.primitive reach Contraction {M = [i], N = [b], K = [k]} {data_type = "FP32"}
    teir.primitive overlap Contraction {M = [o], N = [b], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.invoke x -> gaps
    }
  }
  func.return
}
// CHECK-LABEL: func.func @segmented_near_misses
// CHECK: teir.primitive gaps {{.*}} attributes {kernel = #teir.kernel<general>}
// CHECK: teir.primitive reach {{.*}} attributes {kernel = #teir.kernel<general>}
// CHECK: teir.primitive overlap {{.*}} attributes {kernel = #teir.kernel<general>}

// -----

// The periodic product (the same GEMV from a [j][i][b] array, `bij,bj->ib`): N = [b]
// at unit stride on all three, M = [i] at |b| elements on in0 and out, K = [j]
// at stride 0 on out; lda and ldb are j's strides.
func.func @periodic(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis b extent 7 strides [8, 8, 8] offsets [0, 0, 0]
    teir.axis i extent 121 strides [56, 0, 56] offsets [0, 0, 0]
    teir.axis j extent 71 strides [6776, 56, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [i], N = [b], K = [j]} {data_type = "FP64"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @periodic
// CHECK: attributes {kernel = #teir.kernel<periodic m = 121, n = 7, k = 71, lda = 847, ldb = 7>}

// -----

// Not periodic: out's rows 8 elements apart where b holds 7 (gaps in its run).
func.func @periodic_gaps(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis b extent 7 strides [8, 8, 8] offsets [0, 0, 0]
    teir.axis i extent 121 strides [56, 0, 64] offsets [0, 0, 0]
    teir.axis j extent 71 strides [6776, 56, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [i], N = [b], K = [j]} {data_type = "FP64"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK-LABEL: func.func @periodic_gaps
// CHECK: attributes {kernel = #teir.kernel<general>}
