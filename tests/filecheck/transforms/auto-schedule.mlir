// RUN: teir-opt %examples/spec/tree/10_7_5_scalar_contraction.json -p 'teir-auto-schedule{threads=2}' --emit=script | filecheck %s --check-prefix=SCRIPT
// RUN: teir-opt %examples/spec/tree/10_7_5_scalar_contraction.json -p 'teir-auto-schedule{threads=2}' --emit=script > %t.json
// RUN: teir-opt %examples/spec/tree/10_7_5_scalar_contraction.json -p 'teir-apply-schedule{script="%t.json"}' --emit=tree | filecheck %s --check-prefix=REPLAY
// RUN: teir-opt %examples/spec/tree/10_7_5_scalar_contraction.json -p 'teir-auto-schedule{threads=2}' --emit=tree | filecheck %s --check-prefix=REPLAY
// Each host and thread count's schedule is made once and checked by several prefixes.
// RUN: env TEIR_HOST=avx2 teir-opt %s -p 'teir-auto-schedule{threads=2}' > %t.avx2-2
// RUN: env TEIR_HOST=avx2 teir-opt %s -p 'teir-auto-schedule{threads=1}' > %t.avx2-1
// RUN: env TEIR_HOST=avx512 teir-opt %s -p 'teir-auto-schedule{threads=2}' > %t.avx512-2
// RUN: env TEIR_HOST=avx512 teir-opt %s -p 'teir-auto-schedule{threads=1}' > %t.avx512-1
// RUN: filecheck %s --check-prefixes=CHECK,AVX2 < %t.avx2-2
// RUN: filecheck %s --check-prefixes=CHECK,AVX512 < %t.avx512-2
// RUN: filecheck %s --check-prefix=ONE < %t.avx2-1
// RUN: teir-opt %s --verify-diagnostics -p 'teir-auto-schedule{threads=-1}' | filecheck %s --check-prefix=BAD
// RUN: filecheck %s --check-prefix=FORK < %t.avx2-2
// RUN: filecheck %s --check-prefix=PERM < %t.avx2-1
// RUN: filecheck %s --check-prefix=PERM2 < %t.avx2-2
// RUN: filecheck %s --check-prefix=KBLOCKS < %t.avx512-2
// RUN: filecheck %s --check-prefix=ROWREM < %t.avx512-2
// RUN: filecheck %s --check-prefix=HALF < %t.avx2-2
// RUN: filecheck %s --check-prefix=HALF < %t.avx512-2
// RUN: env TEIR_HOST=avx2-small teir-opt %s -p 'teir-auto-schedule{threads=2}' | filecheck %s --check-prefix=SMALL
// RUN: filecheck %s --check-prefix=UNIT < %t.avx2-1
// RUN: filecheck %s --check-prefix=BRSPLIT < %t.avx512-1
// RUN: env TEIR_HOST=avx512-intel teir-opt %s -p 'teir-auto-schedule{threads=1}' | filecheck %s --check-prefix=BRSPLIT-INTEL
// RUN: filecheck %s --check-prefix=WIDEN < %t.avx2-1
// RUN: filecheck %s --check-prefix=RUNS < %t.avx2-1

// The scalar §10.7.5 nest: p and q are contiguous on in1 and out, so they fuse;
// the GEMM-shaped loops lift, the t loop folds into a BRGEMM. The script the
// scheduler records replays to the same schedule.
// SCRIPT:      {"op": "fuse-axes", "outer": "p", "inner": "q"}
// SCRIPT-NEXT: {"op": "teir-lift-gemm"}
// SCRIPT-NEXT: {"op": "fold-guarded-reduction"}
// REPLAY:      r
// REPLAY-NEXT: ├── zero -> zero_s_pq
// REPLAY-NEXT: └── contraction -> brgemm_s_pq_t_u

// A large plain GEMM nest (512^2 x 512): lifted to a GEMM, the loop the threads
// share made first and outermost (one fork a call), the cache blocking inside
// each thread's block. The cut follows the host (its caches and vector width),
// so the decisions are checked under two pinned host descriptions (the lit
// suite runs with TEIR_HOST=avx2 unless a RUN line says otherwise): column
// panels of 64 on both (8 parallel iterations), on the AVX2 description each
// cut into rows of 128 inside (A's block in half the L2), the Zero and the GEMM
// in one loop.
func.func @gemm(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis i extent 512 strides [2048, 0, 2048] offsets [0, 0, 0]
    teir.axis j extent 512 strides [0, 4, 4] offsets [0, 0, 0]
    teir.axis k extent 512 strides [4, 2048, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter i over i {
        teir.iter j over j {
          teir.invoke zero -> z
          teir.iter k over k {
            teir.invoke mac -> c
          }
        }
      }
    }
  }
  func.return
}
// AVX2:       teir.axis i_in extent 128
// AVX2:       teir.primitive {{.*}} Contraction {M = [i_in], N = [j_in], K = [k]}
// AVX2:       teir.iter j over j parallel
// AVX2-NEXT:  teir.iter i over i {
// AVX2-NEXT:  teir.invoke zero
// AVX2-NEXT:  teir.invoke mac
// AVX2:       script = "[{\22op\22: \22teir-lift-gemm\22}
// AVX2-SAME:  {\22op\22: \22split\22, \22axis\22: \22j\22, \22factor\22: 64}
// AVX2-SAME:  {\22op\22: \22parallelize\22, \22axis\22: \22j\22}
// AVX2-SAME:  {\22op\22: \22split\22, \22axis\22: \22i\22, \22factor\22: 128}]"
// AVX512:     teir.axis j_in extent 64
// AVX512:     teir.primitive {{.*}} Contraction {M = [i], N = [j_in], K = [k]}
// AVX512:     teir.iter {{j.*}} over j parallel
// AVX512:     script = "[{\22op\22: \22teir-lift-gemm\22}
// AVX512-SAME: {\22op\22: \22split\22, \22axis\22: \22j\22, \22factor\22: 64}
// AVX512-SAME: {\22op\22: \22parallelize\22, \22axis\22: \22j\22}]"
// ONE-NOT:   parallel {
// BAD: teir-auto-schedule: threads must be 0 or more, got -1

// A GEMM whose K is cut into blocks (504 x 441 x 503 FP64 on the AVX-512
// description: blocks of 192, B's panel in half the L1, and a remainder of 119,
// as no block from 96 to 192 divides 503):
// the K loop and the remainder's call run inside the loop the threads share,
// so a call forks once, not once per K block and again for the remainder and
// the Zero (after an idle pause each fork waits for the other core to wake).
func.func @gemm_k_blocks(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis i extent 504 strides [4024, 0, 3528] offsets [0, 0, 0]
    teir.axis j extent 441 strides [0, 8, 8] offsets [0, 0, 0]
    teir.axis k extent 503 strides [8, 3528, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP64"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter i over i {
        teir.iter j over j {
          teir.invoke zero -> z
          teir.iter k over k {
            teir.invoke mac -> c
          }
        }
      }
    }
  }
  func.return
}
// KBLOCKS-LABEL: func.func @gemm_k_blocks
// KBLOCKS:       teir.axis k_in extent 192
// KBLOCKS:       teir.axis k_rem extent 119
// KBLOCKS:       teir.schedule {
// KBLOCKS-NEXT:  teir.iter i over i parallel {
// KBLOCKS-NEXT:  teir.invoke zero -> zero_ij
// KBLOCKS-NEXT:  teir.iter k over k {
// KBLOCKS-NEXT:  teir.invoke mac -> gemm_ijk
// KBLOCKS-NEXT:  }
// KBLOCKS-NEXT:  teir.invoke mac_rem -> gemm_ijk_rem
// KBLOCKS-NEXT:  }
// KBLOCKS-NEXT:  }

// A GEMM whose rows, cut for the threads, leave one (257 x 129 x 255 FP64): the
// one-row remainder is a GEMV whose K the scheduler would cut into blocks of 8,
// but K is the GEMM's too, and 129 needs no blocks for it. The larger primitive
// decides the shared axis: K stays whole (cut in 8 it made 16 calls of 8 plus a
// remainder's, 0.74x the neighbouring shapes' speed and 5x their compile time).
func.func @gemm_row_remainder(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis i extent 257 strides [1032, 0, 2040] offsets [0, 0, 0]
    teir.axis j extent 255 strides [0, 8, 8] offsets [0, 0, 0]
    teir.axis k extent 129 strides [8, 2040, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP64"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter i over i {
        teir.iter j over j {
          teir.invoke zero -> z
          teir.iter k over k {
            teir.invoke mac -> c
          }
        }
      }
    }
  }
  func.return
}
// ROWREM-LABEL: func.func @gemm_row_remainder
// ROWREM:       teir.axis i_rem extent 1
// ROWREM-NOT:   teir.axis k_in
// ROWREM:       teir.primitive gemm_ijk Contraction {M = [i_in], N = [j], K = [k]}
// ROWREM-NEXT:  teir.primitive gemm_ijk_rem Contraction {M = [i_rem], N = [j], K = [k]}

// §10.7.3 with N = 10^6: the loops a, b, c cannot move (their tiles overlap) and
// d, innermost, has two scalar iterations. A parallel d would fork and join once
// per iteration of a, b and c, for a few flops each: every loop stays sequential.
func.func @tiny_inner(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis d extent 2 strides [60, 80, 48] offsets [0, 0, 0]
    teir.axis b extent 3 strides [20, 0, 16] offsets [0, 0, 0]
    teir.axis c extent 1000000 strides [0, 4, 4] offsets [0, 0, 0]
    teir.axis a extent 5 strides [4, 16, 0] offsets [0, 0, 0]
    teir.primitive zero_scalar Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive contraction_scalar Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.iter c over c {
            teir.iter d over d {
              teir.invoke zero -> zero_scalar [first(a)]
              teir.invoke contraction -> contraction_scalar
            }
          }
        }
      }
    }
  }
  func.return
}
// FORK-LABEL: func.func @tiny_inner
// FORK:       teir.iter d over d {
// FORK-NOT:   parallel
// FORK:       func.return

// abcd->dcba (§10.7.1's permutation) lifts to §10.7.2's d x a tile under loops b
// and c. Over 64^4 FP32 (64 MiB, beyond the host's 32 MiB last-level cache) the
// tile's out is streamed past the caches, so the schedule serves the reads: the
// tile's 64 rows of in0 lie 1 MiB apart (one L1 set), so a is cut into blocks of
// 32 (two lines of out per row), the loop over the blocks outermost, and the loops
// follow in0's memory order, b outside c, so that consecutive tiles read
// neighbouring bytes of in0. Over 63 x 62 x 61 x 60 the rows are not a multiple of
// 4 KiB apart: only the order changes. Over 32^4 (4 MiB) the loops keep out's
// order, c outside b, as teir-auto-schedule ordered the plain nest.
func.func @large_permutation(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 64 strides [1048576, 4] offsets [0, 0]
    teir.axis b extent 64 strides [16384, 256] offsets [0, 0]
    teir.axis c extent 64 strides [256, 16384] offsets [0, 0]
    teir.axis d extent 64 strides [4, 1048576] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.iter c over c {
            teir.iter d over d {
              teir.invoke copy -> copy_scalar
            }
          }
        }
      }
    }
  }
  func.return
}
// PERM-LABEL: func.func @large_permutation
// PERM:       teir.axis a extent 2 strides [33554432, 128]
// PERM:       teir.axis a_in extent 32 strides [1048576, 4]
// PERM:       teir.primitive copy_da Copy {M = [d], N = [a_in]}
// PERM:       teir.iter a over a {
// PERM-NEXT:    teir.iter b over b {
// PERM-NEXT:      teir.iter c over c {
// PERM-NEXT:        teir.invoke copy -> copy_da
// PERM:       {\22op\22: \22lift-elementwise\22}
// PERM-SAME:  {\22op\22: \22split\22, \22axis\22: \22a\22, \22factor\22: 32}
// PERM-SAME:  {\22op\22: \22reorder\22, \22order\22: [\22a\22, \22b\22, \22c\22]}]"

func.func @unaligned_permutation(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 63 strides [907680, 4] offsets [0, 0]
    teir.axis b extent 62 strides [14640, 252] offsets [0, 0]
    teir.axis c extent 61 strides [240, 15624] offsets [0, 0]
    teir.axis d extent 60 strides [4, 953064] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.iter c over c {
            teir.iter d over d {
              teir.invoke copy -> copy_scalar
            }
          }
        }
      }
    }
  }
  func.return
}
// PERM-LABEL: func.func @unaligned_permutation
// PERM:       teir.primitive copy_da Copy {M = [d], N = [a]}
// PERM:       teir.iter b over b {
// PERM-NEXT:    teir.iter c over c {
// PERM-NEXT:      teir.invoke copy -> copy_da
// PERM-NOT:   split
// PERM:       {\22op\22: \22reorder\22, \22order\22: [\22b\22, \22c\22]}]"

// HPTT's abcde->edcba 38 x 22 x 22 x 22 x 38 (59 MiB): the e x a tile's rows of out,
// 152 bytes 1618496 bytes apart, are stored plainly (not streamed: neither a
// whole number of lines long nor back to back), so the loops take out's order,
// c outside b, with d, which continues in0's rows, innermost (in0's order would
// be b, c, d): each partial line of out a tile writes is finished by b's next
// tile, after one sweep of d.
func.func @plain_rows_permutation(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 38 strides [1618496, 4] offsets [0, 0]
    teir.axis b extent 22 strides [73568, 152] offsets [0, 0]
    teir.axis c extent 22 strides [3344, 3344] offsets [0, 0]
    teir.axis d extent 22 strides [152, 73568] offsets [0, 0]
    teir.axis e extent 38 strides [4, 1618496] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.iter c over c {
            teir.iter d over d {
              teir.iter e over e {
                teir.invoke copy -> copy_scalar
              }
            }
          }
        }
      }
    }
  }
  func.return
}
// PERM-LABEL: func.func @plain_rows_permutation
// PERM:       teir.primitive copy_ea Copy {M = [e], N = [a]}
// PERM:       teir.iter c over c {
// PERM-NEXT:    teir.iter b over b {
// PERM-NEXT:      teir.iter d over d {
// PERM-NEXT:        teir.invoke copy -> copy_ea
// PERM:       {\22op\22: \22reorder\22, \22order\22: [\22c\22, \22b\22, \22d\22]}]"

// §10.7.2's schedule written parallel (b, c) over 64^4: the loop of the row cut
// joins the parallel nest, which keeps in0's order (one parallel loop of
// 2 x 64 x 64 iterations); on one thread the nest runs sequentially.
func.func @parallel_permutation(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 64 strides [16384, 256] offsets [0, 0]
    teir.axis c extent 64 strides [256, 16384] offsets [0, 0]
    teir.axis d extent 64 strides [4, 1048576] offsets [0, 0]
    teir.axis a extent 64 strides [1048576, 4] offsets [0, 0]
    teir.primitive copy_da Copy {M = [d], N = [a]} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b parallel {
        teir.iter c over c parallel {
          teir.invoke copy -> copy_da
        }
      }
    }
  }
  func.return
}
// PERM-LABEL:  func.func @parallel_permutation
// PERM:        teir.iter a over a {
// PERM-NEXT:     teir.iter b over b {
// PERM-NEXT:       teir.iter c over c {
// PERM-NEXT:         teir.invoke copy -> copy_da
// PERM2-LABEL: func.func @parallel_permutation
// PERM2:       teir.primitive copy_da Copy {M = [d], N = [a_in]}
// PERM2:       teir.iter a over a parallel {
// PERM2-NEXT:    teir.iter b over b parallel {
// PERM2-NEXT:      teir.iter c over c parallel {
// PERM2-NEXT:        teir.invoke copy -> copy_da
// PERM2:       script = "[{\22op\22: \22split\22, \22axis\22: \22a\22, \22factor\22: 32}
// PERM2-SAME:  {\22op\22: \22parallelize\22, \22axis\22: \22a\22}
// PERM2-SAME:  {\22op\22: \22reorder\22, \22order\22: [\22a\22, \22b\22, \22c\22]}]"

func.func @small_permutation(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 32 strides [131072, 4] offsets [0, 0]
    teir.axis b extent 32 strides [4096, 128] offsets [0, 0]
    teir.axis c extent 32 strides [128, 4096] offsets [0, 0]
    teir.axis d extent 32 strides [4, 131072] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.iter c over c {
            teir.iter d over d {
              teir.invoke copy -> copy_scalar
            }
          }
        }
      }
    }
  }
  func.return
}
// PERM-LABEL: func.func @small_permutation
// PERM:       teir.primitive copy_da Copy {M = [d], N = [a]}
// PERM:       teir.iter c over c {
// PERM-NEXT:    teir.iter b over b {
// PERM-NEXT:      teir.invoke copy -> copy_da
// PERM-NOT:   \22order\22: [\22b\22, \22c\22]
// PERM:       func.return


// -----

// The batch of a BRGEMM is cut into blocks that keep B's panel (K x the register
// columns) in half the L1, unless the C that each block reads and writes again
// exceeds half the L2: the spec contraction in FP64 (p32 q64 r32 s64 t8 u64 on
// the AVX-512 description: C of a call 64 x 2048 doubles, 1 MiB) keeps its 8 t
// steps in one call; with p4 q8 (C 16 KiB) t is cut into blocks of 2 (blocks of 3,
// 192 k steps of 64, are the aim; 2 divides 8, and no remainder BRGEMM is
// compiled: `dividing_block`). On the Intel description, whose L3 serves
// like memory, C must fit a quarter of the L2 (512 KiB of 2 MiB): the spec's C
// of 1 MiB and one of 768 KiB (p24) keep their t steps whole, the 16 KiB C is cut.
func.func @spec_fp64(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis p extent 32 strides [0, 262144, 1048576] offsets [0, 0, 0]
    teir.axis q extent 64 strides [0, 4096, 16384] offsets [0, 0, 0]
    teir.axis r extent 32 strides [32768, 0, 512] offsets [0, 0, 0]
    teir.axis s extent 64 strides [8, 0, 8] offsets [0, 0, 0]
    teir.axis t extent 8 strides [1048576, 512, 0] offsets [0, 0, 0]
    teir.axis u extent 64 strides [512, 8, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP64"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter p over p {
        teir.iter q over q {
          teir.iter r over r {
            teir.iter s over s {
              teir.invoke zero -> z
              teir.iter t over t {
                teir.iter u over u {
                  teir.invoke mac -> c
                }
              }
            }
          }
        }
      }
    }
  }
  func.return
}
// BRSPLIT-LABEL: func.func @spec_fp64
// BRSPLIT:       teir.axis t extent 8
// BRSPLIT:       Contraction {M = [s], N = [pq], K = [t, u]}
// BRSPLIT-NOT:   split
// BRSPLIT:       script = "[{\22op\22: \22fuse-axes\22, \22outer\22: \22p\22, \22inner\22: \22q\22}, {\22op\22: \22teir-lift-gemm\22}, {\22op\22: \22fold-guarded-reduction\22}]"
// BRSPLIT-INTEL-LABEL: func.func @spec_fp64
// BRSPLIT-INTEL:       Contraction {M = [s], N = [pq], K = [t, u]}
// BRSPLIT-INTEL-NOT:   split

func.func @mid_c_fp64(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis p extent 24 strides [0, 262144, 1048576] offsets [0, 0, 0]
    teir.axis q extent 64 strides [0, 4096, 16384] offsets [0, 0, 0]
    teir.axis r extent 32 strides [32768, 0, 512] offsets [0, 0, 0]
    teir.axis s extent 64 strides [8, 0, 8] offsets [0, 0, 0]
    teir.axis t extent 8 strides [1048576, 512, 0] offsets [0, 0, 0]
    teir.axis u extent 64 strides [512, 8, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP64"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter p over p {
        teir.iter q over q {
          teir.iter r over r {
            teir.iter s over s {
              teir.invoke zero -> z
              teir.iter t over t {
                teir.iter u over u {
                  teir.invoke mac -> c
                }
              }
            }
          }
        }
      }
    }
  }
  func.return
}
// BRSPLIT-LABEL: func.func @mid_c_fp64
// BRSPLIT:       Contraction {M = [s], N = [pq], K = [t, u]}
// BRSPLIT-NOT:   split
// BRSPLIT-INTEL-LABEL: func.func @mid_c_fp64
// BRSPLIT-INTEL:       Contraction {M = [s], N = [pq], K = [t, u]}
// BRSPLIT-INTEL-NOT:   split

func.func @small_c_fp64(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis p extent 4 strides [0, 32768, 131072] offsets [0, 0, 0]
    teir.axis q extent 8 strides [0, 4096, 16384] offsets [0, 0, 0]
    teir.axis r extent 32 strides [32768, 0, 512] offsets [0, 0, 0]
    teir.axis s extent 64 strides [8, 0, 8] offsets [0, 0, 0]
    teir.axis t extent 8 strides [1048576, 512, 0] offsets [0, 0, 0]
    teir.axis u extent 64 strides [512, 8, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP64"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter p over p {
        teir.iter q over q {
          teir.iter r over r {
            teir.iter s over s {
              teir.invoke zero -> z
              teir.iter t over t {
                teir.iter u over u {
                  teir.invoke mac -> c
                }
              }
            }
          }
        }
      }
    }
  }
  func.return
}
// BRSPLIT-LABEL: func.func @small_c_fp64
// BRSPLIT:       teir.axis t_in extent 2
// BRSPLIT-NOT:   teir.axis t_rem
// BRSPLIT:       Contraction {M = [s], N = [pq], K = [t_in, u]}
// BRSPLIT:       {\22op\22: \22split\22, \22axis\22: \22t\22, \22factor\22: 2}
// BRSPLIT-INTEL-LABEL: func.func @small_c_fp64
// BRSPLIT-INTEL:       teir.axis t_in extent 2
// BRSPLIT-INTEL:       {\22op\22: \22split\22, \22axis\22: \22t\22, \22factor\22: 2}

// -----

// The §10.7.5 contraction in FP16 as einsum writes it (K in the Contraction: one
// rounding per stored element): the
// microkernel widens its broadcast operand B to f32, whole when that fits half
// its scratch (128 KiB on both pinned hosts) and then once for every r. Fused,
// p and q would make B's tile 2048 x 512 (4 MiB widened, again at every r);
// q alone is 64 x 512 (128 KiB): they stay apart and p is shared by the
// threads. With 256 KiB of L2 (64 KiB to widen into) q alone does not fit
// either, and p and q fuse as in FP32.
func.func @half_brgemm(%in0: memref<?xf16>, %in1: memref<?xf16>, %out: memref<?xf16>) {
  teir.config(%in0, %in1, %out) : (memref<?xf16>, memref<?xf16>, memref<?xf16>) {
    teir.axis p extent 32 strides [0, 65536, 262144] offsets [0, 0, 0]
    teir.axis q extent 64 strides [0, 1024, 4096] offsets [0, 0, 0]
    teir.axis r extent 32 strides [8192, 0, 128] offsets [0, 0, 0]
    teir.axis s extent 64 strides [2, 0, 2] offsets [0, 0, 0]
    teir.axis t extent 8 strides [262144, 128, 0] offsets [0, 0, 0]
    teir.axis u extent 64 strides [128, 2, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP16"}
    teir.primitive c Contraction {M = [], N = [], K = [t, u]} {data_type = "FP16"}
    teir.schedule {
      teir.iter p over p {
        teir.iter q over q {
          teir.iter r over r {
            teir.iter s over s {
              teir.invoke zero -> z
              teir.invoke dot -> c
            }
          }
        }
      }
    }
  }
  func.return
}

// HALF-LABEL: func.func @half_brgemm
// HALF:         teir.primitive {{.*}} Contraction {M = [s], N = [q], K = [t, u]}
// HALF:         teir.iter p over p parallel {
// HALF-NEXT:      teir.iter r over r {
// HALF-NOT:     fuse-axes

// SMALL-LABEL: func.func @half_brgemm
// SMALL:         teir.primitive {{.*}} Contraction {M = [s], N = [pq], K = [t, u]}
// SMALL:         {\22op\22: \22fuse-axes\22, \22outer\22: \22p\22, \22inner\22: \22q\22}

// -----

// Sums down columns (einsum's `ij,ij->j`, out zeroed first): the loop over j has
// unit stride on every tensor and is innermost, inside the sum over i, as
// written: an element-wise multiply-add along contiguous memory. The plain
// nest keeps that order (in memory order j would go outside and i fold into a
// K role: a strided sum per element).
func.func @column_sums(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis j extent 45 strides [4, 4, 4] offsets [0, 0, 0]
    teir.axis i extent 37 strides [180, 180, 0] offsets [0, 0, 0]
    teir.primitive z Zero {M = [], N = []} {data_type = "FP32"}
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter zero_j over j {
        teir.invoke zero -> z
      }
      teir.iter loop_i over i {
        teir.iter loop_j over j {
          teir.invoke mac -> c
        }
      }
    }
  }
  func.return
}

// UNIT-LABEL: func.func @column_sums
// UNIT:         teir.primitive c Contraction {M = [], N = [], K = []}
// UNIT:         teir.iter loop_i over i {
// UNIT-NEXT:      teir.iter loop_j over j {
// UNIT-NEXT:        teir.invoke mac -> c
// UNIT-NOT:     reorder
// UNIT:         func.return

// A transposing tile whose rows of in0 (a) and of out (d) lie 132 KiB apart, all
// in one L1 set, with rows of out of 132 bytes (not whole lines): the loop over b,
// which continues the rows of out, is cut into blocks of 4 (528 bytes a row) and
// the blocks, and the remainder's 2, go into the tile (teir-widen-tile), which
// the lowering runs through buffers in the L1. With rows of out of whole lines
// (a of 32) the tile streams and keeps its loops.
func.func @crowded_permutation(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis d extent 33 strides [4, 135168] offsets [0, 0]
    teir.axis c extent 4 strides [132, 1320] offsets [0, 0]
    teir.axis b extent 10 strides [528, 132] offsets [0, 0]
    teir.axis a extent 33 strides [135168, 4] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter d over d {
        teir.iter c over c {
          teir.iter b over b {
            teir.iter a over a {
              teir.invoke copy -> copy_scalar
            }
          }
        }
      }
    }
  }
  func.return
}
// WIDEN-LABEL: func.func @crowded_permutation
// WIDEN:       teir.axis b extent 2 strides [2112, 528]
// WIDEN-NEXT:  teir.axis b_in extent 4 strides [528, 132]
// WIDEN-NEXT:  teir.axis b_rem extent 2 strides [528, 132] offsets [4224, 1056]
// WIDEN:       teir.primitive copy_d_b_rem_a Copy {M = [d], N = [b_rem, a]}
// WIDEN-NEXT:  teir.primitive copy_d_b_in_a Copy {M = [d], N = [b_in, a]}
// WIDEN:       teir.iter c over c {
// WIDEN-NEXT:    teir.iter b over b {
// WIDEN-NEXT:      teir.invoke copy -> copy_d_b_in_a
// WIDEN-NEXT:    }
// WIDEN-NEXT:    teir.invoke copy_rem -> copy_d_b_rem_a
// WIDEN-NEXT:  }
// WIDEN:       \22op\22: \22widen-tile\22, \22axis\22: \22b_in\22}, {\22op\22: \22widen-tile\22, \22axis\22: \22b_rem\22}

func.func @streamed_rows(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis d extent 33 strides [4, 131072] offsets [0, 0]
    teir.axis c extent 4 strides [132, 1024] offsets [0, 0]
    teir.axis b extent 8 strides [528, 128] offsets [0, 0]
    teir.axis a extent 32 strides [131072, 4] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter d over d {
        teir.iter c over c {
          teir.iter b over b {
            teir.iter a over a {
              teir.invoke copy -> copy_scalar
            }
          }
        }
      }
    }
  }
  func.return
}
// WIDEN-LABEL: func.func @streamed_rows
// WIDEN:       teir.primitive copy_da Copy {M = [d], N = [a]}
// WIDEN-NOT:   widen-tile
// WIDEN:       func.return

// abc->bac 64 x 128 x 16 FP32: the tile copies runs of c (64 bytes); the loop
// over a, innermost, steps in0 by 8 KiB (its rows in one L1 set) and the loop
// over b above it continues the run on in0: both are tiled, b by 8 (512 bytes
// of in0 a row) and a by 8 rows. Runs of 512 bytes are left as they are.
func.func @short_runs(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 128 strides [64, 4096] offsets [0, 0]
    teir.axis a extent 64 strides [8192, 64] offsets [0, 0]
    teir.axis c extent 16 strides [4, 4] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.iter a over a {
          teir.iter c over c {
            teir.invoke copy -> copy_scalar
          }
        }
      }
    }
  }
  func.return
}
// RUNS-LABEL: func.func @short_runs
// RUNS:       teir.primitive copy_c Copy {M = [c], N = []}
// RUNS:       teir.iter b over b {
// RUNS-NEXT:    teir.iter a over a {
// RUNS-NEXT:      teir.iter b_in over b_in {
// RUNS-NEXT:        teir.iter a_in over a_in {
// RUNS-NEXT:          teir.invoke copy -> copy_c
// RUNS:       \22op\22: \22tile\22, \22axes\22: [\22b\22, \22a\22], \22sizes\22: [8, 8]

func.func @long_runs(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 16 strides [512, 8192] offsets [0, 0]
    teir.axis a extent 64 strides [8192, 512] offsets [0, 0]
    teir.axis c extent 128 strides [4, 4] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.iter a over a {
          teir.iter c over c {
            teir.invoke copy -> copy_scalar
          }
        }
      }
    }
  }
  func.return
}
// RUNS-LABEL: func.func @long_runs
// RUNS-NOT:   \22tile\22
// RUNS:       func.return

// abc->bac 4 x 6 x 9 FP32: runs of c of 36 bytes, shorter than a line, and the
// loop continuing them on in0 (b, stride 36) is not the innermost: in out's
// order the runs that share a line of in0 are read far apart. b is split by
// the divisor of 6 nearest the runs of two lines (3) and b_in goes innermost;
// runs of a line or more, and a continuation already innermost, stay.
func.func @gathered_runs(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 6 strides [36, 144] offsets [0, 0]
    teir.axis a extent 4 strides [216, 36] offsets [0, 0]
    teir.axis c extent 9 strides [4, 4] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.iter a over a {
          teir.iter c over c {
            teir.invoke copy -> copy_scalar
          }
        }
      }
    }
  }
  func.return
}
// RUNS-LABEL: func.func @gathered_runs
// RUNS:       teir.axis b_in extent 3 strides [36, 144]
// RUNS:       teir.iter b over b {
// RUNS-NEXT:    teir.iter a over a {
// RUNS-NEXT:      teir.iter b_in over b_in {
// RUNS-NEXT:        teir.invoke copy -> copy_c
// RUNS:       \22op\22: \22split\22, \22axis\22: \22b\22, \22factor\22: 3}, {\22op\22: \22reorder\22, \22order\22: [\22b\22, \22a\22, \22b_in\22]}

func.func @gathered_runs_of_a_line(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis b extent 6 strides [64, 256] offsets [0, 0]
    teir.axis a extent 4 strides [384, 64] offsets [0, 0]
    teir.axis c extent 16 strides [4, 4] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter b over b {
        teir.iter a over a {
          teir.iter c over c {
            teir.invoke copy -> copy_scalar
          }
        }
      }
    }
  }
  func.return
}
// RUNS-LABEL: func.func @gathered_runs_of_a_line
// RUNS-NOT:   b_in
// RUNS:       func.return
