"""lit configuration for TEIR's FileCheck tests.

Macros (used in RUN lines):
  %roundtrip          custom syntax -> teir-opt -> teir-opt must print the same
  %roundtrip-generic  the same through the generic syntax
  %verify-diagnostics split the input and print each verifier diagnostic
  %examples           the repository's examples/ folder
"""

import os
import tempfile

import lit.formats

config.name = "teir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".json"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Inputs"]
config.environment["PYTHONUNBUFFERED"] = "1"
# Tuned schedules and compiled kernels of this run only, not the user's.
config.environment["TEIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="teir-lit-cache-")
# IR that follows the host (tile sizes, vector widths) is checked against one
# pinned description, so the suite is green on every CI host; RUN lines that
# check another host say `env TEIR_HOST=...`.
config.environment["TEIR_HOST"] = "avx2"
for name in ("PATH", "HOME", "VIRTUAL_ENV"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

examples = os.path.join(os.path.dirname(os.path.dirname(config.test_source_root)), "examples")
config.substitutions.extend(
    [
        ("%roundtrip-generic", "teir-opt %s --split-input-file --print-op-generic | teir-opt --split-input-file | filecheck %s"),
        ("%roundtrip", "teir-opt %s --split-input-file | teir-opt --split-input-file | filecheck %s"),
        ("%verify-diagnostics", "teir-opt %s --split-input-file --verify-diagnostics | filecheck %s"),
        ("%examples", examples),
    ]
)
