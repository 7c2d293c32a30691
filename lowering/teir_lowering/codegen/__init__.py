"""scf-level code generation: the GEMM/BRGEMM planner (`gemm_plan`, a cost model of
the host: data in, plan out) and the emitter that turns a plan into
scf/arith/memref/vector (`gemm_emitter`)."""
