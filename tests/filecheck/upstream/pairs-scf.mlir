// BF16 paired products through upstream MLIR: the microkernel's scf-level output
// (teir_lane.dot_bf16_pairs printed as llvm.call_intrinsic of vdpbf16ps) parses,
// verifies and lowers in mlir-opt-19, and mlir-translate-19 keeps the call.

// REQUIRES: mlir-opt-19

// RUN: env TEIR_HOST=avx512 teir-opt %S/../lowering/teir-to-scf-bf16-pairs.mlir -p teir-match-gemm,teir-fuse-epilogues,teir-to-scf -t mlir-upstream | %mlir-lower | mlir-translate-19 --mlir-to-llvmir | filecheck %s

// CHECK: call <16 x float> @llvm.x86.avx512bf16.dpbf16ps.512(<16 x float> %{{.*}}, <32 x bfloat> %{{.*}}, <32 x bfloat> %{{.*}})
