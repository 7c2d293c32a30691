"""lit configuration for TEIR's FileCheck tests.

Macros (used in RUN lines):
  %roundtrip          custom syntax -> teir-opt -> teir-opt must print the same
  %roundtrip-generic  the same through the generic syntax
  %verify-diagnostics split the input and print each verifier diagnostic
  %examples           the repository's examples/ folder
  %mlir-lower         upstream mlir-opt's own lowering of scf/vector/memref/arith/func
                      to the llvm dialect (before mlir-translate-19 --mlir-to-llvmir)

Features:
  mlir-opt-19         upstream MLIR 19's mlir-opt-19 and mlir-translate-19 are on PATH
                      (Debian's mlir-19-tools, which .ci/run installs); the tests of
                      upstream/ require it
"""

import os
import shutil
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

if all(shutil.which(tool, path=config.environment.get("PATH"))
       for tool in ("mlir-opt-19", "mlir-translate-19")):
    config.available_features.add("mlir-opt-19")
else:
    lit_config.note(
        "mlir-opt-19 and mlir-translate-19 not found: the upstream MLIR tests "
        "(tests/filecheck/upstream) are UNSUPPORTED here; apt-get install mlir-19-tools"
    )

mlir_lower = (
    "mlir-opt-19 --convert-scf-to-cf --convert-vector-to-llvm --finalize-memref-to-llvm "
    "--convert-arith-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts"
)
examples = os.path.join(os.path.dirname(os.path.dirname(config.test_source_root)), "examples")
config.substitutions.extend(
    [
        ("%roundtrip-generic", "teir-opt %s --split-input-file --print-op-generic | teir-opt --split-input-file | filecheck %s"),
        ("%roundtrip", "teir-opt %s --split-input-file | teir-opt --split-input-file | filecheck %s"),
        ("%verify-diagnostics", "teir-opt %s --split-input-file --verify-diagnostics | filecheck %s"),
        ("%examples", examples),
        ("%mlir-lower", mlir_lower),
    ]
)
