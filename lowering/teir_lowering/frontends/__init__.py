"""What users call from numpy and MLIR: einsum (numpy semantics, trees), tensordot, dask registration, linalg runs, the tuner, numpy peers."""
