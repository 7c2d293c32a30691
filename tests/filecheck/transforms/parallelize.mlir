// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-parallelize{axis=p}' | filecheck %s
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-parallelize{axis=p},teir-sequentialize{axis=p}' | filecheck %s --check-prefix=SEQ
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-parallelize{axis=k}' | filecheck %s --check-prefix=RACE
// RUN: teir-opt %s --split-input-file --verify-diagnostics -p 'teir-sequentialize{axis=z}' | filecheck %s --check-prefix=NONE

// teir-parallelize / teir-sequentialize set the policy of every node over an
// axis; the verifier's exact race rule decides whether parallel is allowed.

func.func @gemm_rows(%in0: memref<?xf32>, %in1: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %in1, %out) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) {
    teir.axis p extent 4 strides [4, 0, 4] offsets [0, 0, 0]
    teir.axis k extent 8 strides [16, 4, 0] offsets [0, 0, 0]
    teir.axis z extent 1 strides [0, 0, 0] offsets [0, 0, 0]
    teir.primitive c Contraction {M = [], N = [], K = [k]} {data_type = "FP32"}
    teir.schedule {
      teir.iter p over p {
        teir.invoke mac -> c
      }
      teir.iter q over p {
        teir.iter k over k {
          teir.invoke mac2 -> c2
        }
      }
    }
    teir.primitive c2 Contraction {M = [], N = [], K = []} {data_type = "FP32"}
  }
  func.return
}
// CHECK-LABEL: func.func @gemm_rows
// CHECK: teir.iter p over p parallel {
// CHECK: teir.iter q over p parallel {
// SEQ-LABEL: func.func @gemm_rows
// SEQ:  teir.iter p over p {
// SEQ:  teir.iter q over p {
// RACE: teir-parallelize: making the loops over 'k' parallel: parallel race: iteration node 'k' runs axis 'k' in parallel, but its iterations k=0 and k=7 write overlapping bytes of out (invocation 'mac2' at 0, 'mac2' at 7); each index of a parallel axis must write its own bytes (axis 'k' has stride 0 on out
// NONE: teir-sequentialize: no iteration node iterates axis 'z'
