// TEIR's scf-level output through upstream MLIR: mlir-opt-19 parses and verifies it
// (-t mlir-upstream prints the lane ops as arith's vector compare and select),
// lowers it with its own passes, and mlir-translate-19 makes LLVM IR of it.
// tests/test_upstream_mlir.py runs that LLVM IR against TEIR's own kernel.

// REQUIRES: mlir-opt-19
// Inputs: einsum records of every data type (Inputs/, made by teir_dialect.einsum_config).

// RUN: teir-opt %S/Inputs/einsum_batched_fp32.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_contraction_fp16.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_contraction_fp64.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_gemm_bf16.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_gemm_fp16.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_gemm_fp32.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_gemm_fp64.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_gemm_tf32.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_relu_bf16.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_relu_fp32.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_transpose_fp32.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s

// CHECK-LABEL: define void @kernel(
// CHECK:       ret void
