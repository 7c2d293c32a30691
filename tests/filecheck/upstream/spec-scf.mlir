// TEIR's scf-level output through upstream MLIR: mlir-opt-19 parses and verifies it
// (-t mlir-upstream prints the lane ops as arith's vector compare and select),
// lowers it with its own passes, and mlir-translate-19 makes LLVM IR of it.
// tests/test_upstream_mlir.py runs that LLVM IR against TEIR's own kernel.

// REQUIRES: mlir-opt-19
// Inputs: two spec examples through teir-opt; tests/test_upstream_mlir.py
// takes every spec example and einsum record of every data type the same way
// in process (and runs the default tier's against TEIR's own kernel).

// RUN: teir-opt %examples/spec/tree/10_7_7_parallel_brgemm.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s
// RUN: teir-opt %examples/spec/flat/records_example.json -p teir-optimize,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s

// CHECK-LABEL: define void @kernel(
// CHECK:       ret void
