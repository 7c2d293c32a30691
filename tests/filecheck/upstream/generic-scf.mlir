// TEIR's scf-level output in MLIR's generic form (-t 'mlir-upstream{generic=true}')
// parses and verifies upstream and lowers as the custom form does. The llvm level
// does not: xDSL 0.74 prints llvm.mul's overflowFlags as `0 : i32` where MLIR wants
// #llvm.overflow<none> (lowering/teir_lowering/llvm/upstream.py); the custom form is the one
// to give upstream tools there.

// REQUIRES: mlir-opt-19
// RUN: teir-opt %examples/spec/tree/10_7_7_parallel_brgemm.json -p teir-optimize,teir-to-scf -t 'mlir-upstream{generic=true}' | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_relu_fp32.json -p teir-optimize,teir-to-scf -t 'mlir-upstream{generic=true}' | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_gemm_tf32.json -p teir-optimize,teir-to-scf -t 'mlir-upstream{generic=true}' | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_gemm_bf16.json -p teir-optimize,teir-to-scf -t 'mlir-upstream{generic=true}' | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %S/Inputs/einsum_gemm_fp32.json -p teir-optimize,teir-to-llvm -t 'mlir-upstream{generic=true}' | not mlir-opt-19 2>&1 | filecheck %s --check-prefix=LLVM

// CHECK-LABEL: define void @kernel(
// CHECK:       ret void

// LLVM: error: invalid properties {overflowFlags = 0 : i32} for op llvm.mul
