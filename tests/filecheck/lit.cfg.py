"""lit configuration for TEIR's FileCheck tests.

Macros (used in RUN lines):
  %roundtrip          custom syntax -> teir-opt -> teir-opt must print the same
  %roundtrip-generic  the same through the generic syntax
  %verify-diagnostics split the input and print each verifier diagnostic
  %examples           the repository's examples/ folder
  %mlir-lower         upstream mlir-opt's own lowering of scf/vector/memref/arith/func
                      to the llvm dialect (before mlir-translate-19 --mlir-to-llvmir)

teir-opt and filecheck in a RUN line run through tests/filecheck/warm_tool.py: a
server started here imports them once and forks a process per call, which takes
over the call's argv, directory, environment and streams (their start-up was most
of the suite's time); `TEIR_WARM=0 lit ...` runs the installed tools instead.

Features:
  mlir-opt-19         upstream MLIR 19's mlir-opt-19 and mlir-translate-19 are on PATH
                      (Debian's mlir-19-tools, which .ci/run installs); the tests of
                      upstream/ require it
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time

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

# teir-opt and filecheck through the warm server (warm_tool.py), when it starts:
# the last substitutions, so that the macros' calls are served too; the pattern
# leaves paths that contain the words alone.
warm_tool = os.path.join(config.test_source_root, "warm_tool.py")
if os.environ.get("TEIR_WARM", "1") != "0":
    socket_path = os.path.join(tempfile.mkdtemp(prefix="teir-lit-warm-"), "socket")
    server = subprocess.Popen(
        [sys.executable, warm_tool, "serve", socket_path],
        env={**os.environ, **config.environment, "OPENBLAS_NUM_THREADS": "1"},
        stdin=subprocess.DEVNULL,
    )
    atexit.register(shutil.rmtree, os.path.dirname(socket_path), ignore_errors=True)
    atexit.register(server.terminate)
    deadline = time.monotonic() + 60
    while not os.path.exists(socket_path) and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if os.path.exists(socket_path):
        config.environment["TEIR_WARM_SOCKET"] = socket_path
        config.substitutions.extend(
            (rf"(?<![\w./-]){tool}(?![\w./-])", f"{sys.executable} -S {warm_tool} {tool}")
            for tool in ("teir-opt", "filecheck"))
    else:
        server.terminate()
        lit_config.note("the warm server (warm_tool.py) did not start: RUN lines run the "
                        "installed teir-opt and filecheck")
