// RUN: teir-opt %s --split-input-file -p 'teir-mark-streamed-out{min-bytes=16384}' | filecheck %s
// RUN: teir-opt %s --split-input-file -p 'teir-mark-streamed-out{min-bytes=16384},teir-mark-streamed-out{min-bytes=16384}' | filecheck %s
// RUN: teir-opt %s --split-input-file -p 'teir-mark-streamed-out{min-bytes=16384}' --print-op-generic | teir-opt --split-input-file | filecheck %s
// RUN: env TEIR_HOST=avx512 teir-opt %s --split-input-file -p teir-mark-streamed-out | filecheck %s --check-prefix=HOST
// RUN: not teir-opt %s --split-input-file -p 'teir-mark-streamed-out{min-bytes=-5}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// NEGATIVE: teir-opt: error: bad options for pass 'teir-mark-streamed-out': min_bytes is a byte count (>= 0), got -5

// teir-mark-streamed-out records on each teir.config whether its out reaches the
// threshold (min-bytes; by default the host's streamed_bytes, half its last-level
// cache: 16 MiB for the pinned avx512 host) as the unit attribute `streamed_out`,
// which the auto-scheduler and teir-to-scf read, and whether its inputs span 3/8
// of the last-level cache or more (12 MiB there) as `streamed_in`, which the GEMM
// planner reads. The second RUN line checks
// idempotence, the third that the attribute round-trips through the generic syntax.

// out spans 64 x 64 x 4 bytes = 16 KiB: streamed at min-bytes=16384, not on the host.
func.func @at_the_threshold(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 64 strides [256, 4] offsets [0, 0]
    teir.axis b extent 64 strides [4, 256] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.invoke copy -> copy_scalar
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @at_the_threshold
// CHECK:       } attributes {streamed_out}
// HOST-LABEL:  func.func @at_the_threshold
// HOST-NOT:    streamed_out
// HOST:        func.return

// -----

// Below it (out ends at byte 16128): not streamed.
func.func @below_the_threshold(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 63 strides [256, 4] offsets [0, 0]
    teir.axis b extent 64 strides [4, 252] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.iter b over b {
          teir.invoke copy -> copy_scalar
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @below_the_threshold
// CHECK-NOT:   streamed_out
// CHECK:       func.return

// -----

// A stale mark (the configuration written with it, out small) is removed.
func.func @stale(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 8 strides [4, 4] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke copy -> copy_scalar
      }
    }
  } attributes {streamed_out}
  func.return
}
// CHECK-LABEL: func.func @stale
// CHECK-NOT:   streamed_out
// CHECK:       func.return
// HOST-LABEL:  func.func @stale
// HOST-NOT:    streamed_out
// HOST:        func.return

// -----

// The 64^4 permutation: out 64 MiB, streamed on the host as at the threshold.
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
// CHECK-LABEL: func.func @large_permutation
// CHECK:       } attributes {streamed_out, streamed_in}
// HOST-LABEL:  func.func @large_permutation
// HOST:        } attributes {streamed_out, streamed_in}

// -----

// Inputs of 12 MiB (a 1536 x 1024 FP64 matrix and a vector), out 12 KiB: the
// inputs come from memory at every call on the host, out stays in the caches.
func.func @large_inputs(%in0: memref<?xf64>, %in1: memref<?xf64>, %out: memref<?xf64>) {
  teir.config(%in0, %in1, %out) : (memref<?xf64>, memref<?xf64>, memref<?xf64>) {
    teir.axis i extent 1536 strides [8192, 0, 8] offsets [0, 0, 0]
    teir.axis j extent 1024 strides [8, 8, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = []} {data_type = "FP64"}
    teir.schedule {
      teir.iter i over i {
        teir.iter j over j {
          teir.invoke x -> c
        }
      }
    }
  }
  func.return
}
// CHECK-LABEL: func.func @large_inputs
// CHECK:       } attributes {streamed_in}
// HOST-LABEL:  func.func @large_inputs
// HOST:        } attributes {streamed_in}
