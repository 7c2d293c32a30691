"""Measuring on this host: interleaved timing rounds, FMA peak and copy bandwidth, numpy's BLAS."""
