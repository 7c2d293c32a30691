"""scf-level code generation: teir-to-scf, the emitter toolkit, tile primitives,
the GEMM/BRGEMM planner (`gemm_plan`, a cost model of the host: data in, plan
out) and its emitter, parallel outlining."""
