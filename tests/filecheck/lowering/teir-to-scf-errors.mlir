// RUN: teir-opt %s --split-input-file --verify-diagnostics -p teir-to-scf | filecheck %s

// Tensors and layouts the lowering does not compile yet are reported.

// Raw bytes (i8: primitives of several data types on one tensor).
func.func @bytes(%in0: memref<?xi8>, %out: memref<?xi8>) {
  teir.config(%in0, %out) : (memref<?xi8>, memref<?xi8>) {
    teir.primitive c Copy {M = [], N = []} {data_type = "FP16"}
    teir.schedule {
      teir.invoke x -> c
    }
  }
  func.return
}
// CHECK: lowering: tensor in0 holds i8; only f32, f64, f16, bf16 tensors are supported yet

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
