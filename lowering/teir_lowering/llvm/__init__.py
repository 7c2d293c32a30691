"""The lowering to the llvm dialect: one module per converted dialect, the type
conversion they share (`common`), the `teir_lane` dialect of lane-wise compare and
select (`lane`), and the pipeline that runs them in order (`pipeline`,
`teir-lower-to-llvm-dialect`)."""
