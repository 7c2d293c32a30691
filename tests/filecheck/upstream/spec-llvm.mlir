// TEIR's llvm-dialect output through upstream MLIR: mlir-opt-19 parses and verifies
// it (-t mlir-upstream prints the lane ops as llvm's vector fcmp and select) and
// mlir-translate-19 makes LLVM IR of it.

// REQUIRES: mlir-opt-19
// Inputs: every spec example (tree form; the flat records_example, which has no tree twin).

// RUN: teir-opt %examples/spec/tree/10_2_1_minimal.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_2_2_guarded_reduction.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_2_3_branches.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_4_1_addressing.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_4_2_addressing_offset.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_6_3_gemm.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_1_scalar_permutation.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_2_tiled_permutation.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_3_scalar_batched_gemm.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_4_scalar_batched_gemm_reordered.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_5_scalar_contraction.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_6_contraction_gemm.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/tree/10_7_7_parallel_brgemm.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/flat/records_example.json -p teir-optimize,teir-to-llvm -t mlir-upstream | mlir-opt-19 | mlir-translate-19 --mlir-to-llvmir | filecheck %s

// CHECK-LABEL: define void @kernel(
// CHECK:       ret void
