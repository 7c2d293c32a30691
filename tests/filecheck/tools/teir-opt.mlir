// Error paths: teir-opt-errors.mlir.

// --verify-diagnostics prints the diagnostic and succeeds, as in xdsl-opt.
// RUN: teir-opt --verify-diagnostics %S/Inputs/bad-guard.mlir | filecheck %s --check-prefix=DIAG
// DIAG: Operation does not verify: guard rule: guard of invocation 'zero'

// The installed console scripts themselves (lit's other calls go through
// warm_tool.py's server): without a socket its client runs them.
// RUN: env TEIR_WARM_SOCKET= teir-opt %s --emit=tree | env TEIR_WARM_SOCKET= filecheck %s --check-prefix=INSTALLED
// INSTALLED: copy_scalar

// -o writes the output file; --emit=json and --emit=tree print records and listings.
// RUN: teir-opt %s -o %t.mlir && filecheck %s --check-prefix=OUT < %t.mlir
// OUT: teir.invoke copy -> copy_scalar
// RUN: teir-opt %s --emit=json | filecheck %s --check-prefix=EMITJSON
// EMITJSON:      "tensors": ["in0", "out"],
// EMITJSON:      "invocations": [{"id": "copy", "primitive": "copy_scalar", "guard": ["last(a)"]}]
// RUN: teir-opt %s --emit=tree | filecheck %s --check-prefix=EMITTREE
// EMITTREE:      a  (parallel)
// EMITTREE-NEXT: └── b  (axis bb)
// EMITTREE-NEXT:     └── copy -> copy_scalar  [last(a)]

// Plain xdsl-opt knows the dialect and the targets through the xdsl.universe entry point.
// RUN: xdsl-opt %s -t teir-tree | filecheck %s --check-prefix=EMITTREE
// RUN: xdsl-opt %s -t teir-json | filecheck %s --check-prefix=EMITJSON

func.func @perm(%in0: memref<?xf32>, %out: memref<?xf32>) {
  teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
    teir.axis a extent 2 strides [12, 4] offsets [0, 0]
    teir.axis bb extent 3 strides [4, 8] offsets [0, 0]
    teir.primitive copy_scalar Copy {M = [], N = []} {data_type = "FP32"}
    teir.schedule {
      teir.iter a over a parallel {
        teir.iter b over bb {
          teir.invoke copy -> copy_scalar [last(a)]
        }
      }
    }
  }
  func.return
}
