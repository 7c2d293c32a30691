// RUN: teir-opt %examples/spec/tree/10_7_1_scalar_permutation.json -p 'teir-apply-schedule{script="%S/Inputs/permute-script.json"}' --emit=tree | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_1_scalar_permutation.json --verify-diagnostics -p 'teir-apply-schedule{script="%S/Inputs/bad-step.json"}' | filecheck %s --check-prefix=BAD
// RUN: teir-opt %examples/spec/tree/10_7_1_scalar_permutation.json --verify-diagnostics -p 'teir-apply-schedule{script="%S/Inputs/not-a-list.json"}' | filecheck %s --check-prefix=LIST
// RUN: teir-opt %examples/spec/tree/10_7_1_scalar_permutation.json --verify-diagnostics -p 'teir-apply-schedule{script="%S/Inputs/missing.json"}' | filecheck %s --check-prefix=MISSING

// teir-apply-schedule applies a JSON list of steps in order.
// CHECK:      c  (parallel)
// CHECK-NEXT: └── b
// CHECK-NEXT:     └── d
// CHECK-NEXT:         └── copy -> copy_d_in_a

// BAD: teir-apply-schedule: step 1 (reorder): teir-reorder{order="a","b" extra=1}: Provided arguments ["extra"] not found in expected arguments ["order"]
// LIST: {{^}}teir-apply-schedule: a script is a JSON list of steps, got dict
// MISSING: teir-apply-schedule: cannot read {{.*}}missing.json: No such file or directory
