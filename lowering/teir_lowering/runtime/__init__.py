"""The runtime: JIT (llvmlite), compile_kernel and Kernel, the kernel cache, the ndarray entry point."""
