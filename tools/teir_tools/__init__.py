"""Command-line tools: `teir-opt`."""
