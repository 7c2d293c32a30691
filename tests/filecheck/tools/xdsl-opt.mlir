// Plain xdsl-opt sees TEIR through the xdsl.universe entry point
// (teir_tools.universe): the dialect, the teir- passes and the targets.
// RUN: xdsl-opt %s -p teir-drop-unit-iterations | filecheck %s
// RUN: xdsl-opt %s -p teir-to-scf | filecheck %s --check-prefix=SCF
// RUN: xdsl-opt %s -t teir-tree | filecheck %s --check-prefix=TREE
// xDSL 0.74's universe has no frontends, so xdsl-opt reads no JSON record;
// teir-opt turns one into MLIR for it.
// RUN: teir-opt %examples/spec/tree/10_2_1_minimal.json | xdsl-opt -p teir-optimize -t teir-tree | filecheck %s --check-prefix=JSON
// JSON: op -> copy_x

// CHECK:      teir.schedule {
// CHECK-NEXT:   teir.invoke copy -> copy_scalar
// CHECK-NEXT: }
// SCF-NOT: teir.config
// SCF:     scf.for
// TREE:      one
// TREE-NEXT: └── copy -> copy_scalar

func.func @copy(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 1 strides [4, 4] offsets [0, 0]
    teir.axis b extent 3 strides [4, 4] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [b], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter one over a {
        teir.invoke copy -> copy_scalar
      }
    }
  }
  func.return
}
