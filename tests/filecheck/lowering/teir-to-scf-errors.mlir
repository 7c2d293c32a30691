// RUN: teir-opt %s --split-input-file --verify-diagnostics -p teir-to-scf | filecheck %s

// Data types and layouts the lowering does not compile yet are reported.

func.func @half(%in0: memref<?xf16>, %out: memref<?xf16>) {
  teir.config(%in0, %out) : (memref<?xf16>, memref<?xf16>) {
    teir.primitive c Copy {M = [], N = []} {data_type = "FP16"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK: lowering: tensor in0 holds f16; only f32 and f64 tensors are supported yet

// -----

func.func @misaligned(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [4, 4] offsets [2, 0]
    teir.primitive c Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a {
        teir.invoke x -> c
      }
    }
  }
  func.return
}
// CHECK: lowering: the offset of axis 'a' is 2 bytes on in0, not a multiple of its 4-byte elements; byte-misaligned tiles are not supported yet
