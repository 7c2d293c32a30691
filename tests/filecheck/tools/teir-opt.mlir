// Bad input: one diagnostic line on stderr, exit code 1, no traceback.
// RUN: not teir-opt %S/Inputs/bad-guard.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY-NOT: Traceback
// VERIFY: teir-opt: error: guard rule: guard of invocation 'zero' names axis 't', which no ancestor of 'zero' iterates
// VERIFY-NOT: Traceback

// RUN: not teir-opt %S/Inputs/parse-error.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE-NOT: Traceback
// PARSE: teir-opt: error:
// PARSE: expected an id
// PARSE-NOT: Traceback

// RUN: not teir-opt %S/Inputs/bad-syntax.json 2>&1 | filecheck %s --check-prefix=JSON
// JSON-NOT: Traceback
// JSON: teir-opt: error: record form: invalid JSON at line 1 column 38: Expecting value
// JSON-NOT: Traceback

// RUN: not teir-opt %S/Inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING-NOT: Traceback
// MISSING: teir-opt: error: {{.*}}No such file or directory
// MISSING-NOT: Traceback

// RUN: not teir-opt -p no-such-pass %s 2>&1 | filecheck %s --check-prefix=PASS
// PASS-NOT: Traceback
// PASS: teir-opt: error: Unrecognized passes: ['no-such-pass']
// PASS-NOT: Traceback

// --verify-diagnostics prints the diagnostic and succeeds, as in xdsl-opt.
// RUN: teir-opt --verify-diagnostics %S/Inputs/bad-guard.mlir | filecheck %s --check-prefix=DIAG
// DIAG: Operation does not verify: guard rule: guard of invocation 'zero'

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
