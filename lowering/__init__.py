"""Lowering of teir to scf/arith/memref and on to LLVM (see the execution issue)."""
