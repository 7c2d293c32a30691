"""`compile_kernel`: a TEIR configuration as a native function on numpy arrays.

The pipeline (also `teir-opt -p` pass names):

    teir-optimize                         teir -> teir (teir_passes.pipeline)
    teir-match-gemm, teir-fuse-epilogues  record the microkernel decisions (also
                                          with optimize=False)
    teir-to-scf, canonicalize, cse        teir -> scf/arith/memref
    teir-outline-parallel                 scf.parallel -> chunk functions
    teir-lower-to-llvm-dialect            -> llvm dialect (teir_lowering.llvm.pipeline)
    teir-gomp-launch                      fork/join through libgomp
    llvmlite: O3 for the host CPU, MCJIT

A `Kernel` checks every call before it enters native code: the number of
arrays, their type, C-contiguity, element type, a writeable `out`, and that
each array covers the bytes the configuration touches on it (its footprint,
offsets and guards included; teir_dialect.arrays). The check and the call
read a plain ndarray view of each array (`plain_array`), never attributes an
ndarray subclass can override. So a call cannot reach memory outside the
arrays. Thread counts are checked where they come in
(`compile_kernel`, a call, TEIR_NUM_THREADS): an int >= 1.
"""

from __future__ import annotations

import copy
import ctypes
import gc
import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from llvmlite import ir
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float16Type, ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from teir_dialect import teir_context
from teir_dialect.arrays import TensorSpec, check_arrays, tensor_specs
from teir_dialect.dialect import ConfigOp
from teir_dialect.host import host
from teir_dialect.records import TeirError, Unsupported, find_configs, load_module
from teir_dialect.vocabulary import DataType
from teir_lowering.codegen.storage import element_count, stored_data_type
from teir_lowering.runtime.ndarray_entry import (
    ENTRY_SUFFIX,
    add_ndarray_entry,
    data_offset,
)
from teir_lowering.stages import stage
from teir_passes import schedule_cache

if TYPE_CHECKING:
    from teir_lowering.runtime.jit import JitModule

@cache
def scf_pipeline(clean: bool = True) -> tuple[ModulePass, ...]:
    """teir -> scf/arith/memref, cleaned up by canonicalize and cse when `clean`.
    teir-to-scf reads teir-match-gemm's `kernel`, teir-fuse-epilogues'
    `epilogue` and teir-mark-streamed-out's `streamed_out` and `streamed_in`
    attributes, so the pipeline records them first (they are refreshed,
    idempotent passes, when teir-optimize ran before). Imported when first needed:
    a kernel loaded from the disk cache needs none of it."""
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )

    from teir_lowering.codegen.convert_teir_to_scf import TeirToScfPass
    from teir_lowering.llvm.rewriting import OneWalkCanonicalizePass
    from teir_passes.fuse_epilogues import FuseEpiloguesPass
    from teir_passes.mark_streamed_out import MarkStreamedOutPass
    from teir_passes.match_gemm import MatchGemmPass

    cleanup = (OneWalkCanonicalizePass(), CommonSubexpressionElimination()) if clean else ()
    return (MatchGemmPass(), FuseEpiloguesPass(), MarkStreamedOutPass(), TeirToScfPass(),
            *cleanup)


def lower_to_scf(module: ModuleOp, ctx: Context, stages: dict[str, str] | None = None,
                 *, clean: bool = True) -> None:
    """teir -> scf/arith/memref/vector with the parallel loops outlined: the level
    both the pass pipeline and the translation to LLVM IR start from; the scf IR
    in `stages` if given. `compile_kernel` leaves out the clean-up (`clean`):
    LLVM's O3 folds the same constants and finds the same common subexpressions,
    for the same results and kernels as fast in less time (README, Compile time)."""
    from teir_lowering.codegen.outline_parallel import OutlineParallelPass

    for pipeline_pass in scf_pipeline(clean):
        with stage(pipeline_pass.name, module):
            pipeline_pass.apply(ctx, module)
    if stages is not None:
        with stage("print scf"):
            stages["scf"] = str(module)
    with stage("teir-outline-parallel", module):
        OutlineParallelPass().apply(ctx, module)


def translate(module: ModuleOp, ctx: Context) -> tuple[str, tuple[str, ...]]:
    """The scf-level `module` (after `lower_to_scf`) as LLVM IR text, in one walk
    (teir_lowering.llvm.translate), and the texts to link in: the libgomp launchers
    of its parallel loops. What `compile_kernel` compiles; `teir-to-llvm` is the
    same program through the pass pipeline."""
    from teir_lowering.codegen.outline_parallel import launcher_signatures
    from teir_lowering.llvm.f16_moves import F16MovesAsI16Pass
    from teir_lowering.llvm.retype import takes_memory_of
    from teir_lowering.llvm.translate import translate_to_llvm_ir
    from teir_lowering.runtime.jit import function_attributes

    if takes_memory_of(module, Float16Type):
        with stage("teir-f16-moves-as-i16", module):
            F16MovesAsI16Pass().apply(ctx, module)
    with stage("translate to LLVM IR"):
        text = translate_to_llvm_ir(module, function_attributes())
        signatures = launcher_signatures(module)
        linked = () if signatures is None else (_launchers_ir(signatures),)
    return text, linked


@cache
def _launchers_ir(signatures: tuple) -> str:
    """`gomp_launch.launchers_ir`, kept in the kernel cache: building the launchers
    takes xDSL's llvm dialect, whose import and the build were a third of a new
    process's first compile of a parallel kernel."""
    from teir_lowering.runtime import kernel_cache

    question = "launchers " + json.dumps(
        [[symbol, [str(t) for t in inputs]] for symbol, inputs in signatures])
    if isinstance(text := kernel_cache.recall(question), str):
        return text
    from teir_lowering.codegen.gomp_launch import launchers_ir

    text = launchers_ir(signatures)
    kernel_cache.remember(question, text)
    return text


def lower_to_llvm(module: ModuleOp, ctx: Context) -> None:
    """The whole default pipeline through the passes, teir -> llvm dialect, verified op
    by op: what `teir-opt -p teir-to-llvm` shows (`compile_kernel` translates the
    scf level instead, `translate`)."""
    from teir_lowering.codegen.gomp_launch import GompLaunchPass
    from teir_lowering.llvm.pipeline import LowerToLLVMDialectPass

    lower_to_scf(module, ctx)
    LowerToLLVMDialectPass().apply(ctx, module)
    with stage("teir-gomp-launch", module):
        GompLaunchPass().apply(ctx, module)


@dataclass(frozen=True)
class TeirToLLVMPass(ModulePass):
    """The default pipeline as one pass: `teir-opt -p teir-to-llvm` shows, through the
    pass pipeline, the program the JIT gets (tests/test_translate.py)."""

    name = "teir-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_to_llvm(op, ctx)


MAX_THREADS = 2**31 - 1
"""The largest thread count libgomp's omp_set_num_threads takes (a C int)."""


def check_threads(threads: object, what: str = "threads") -> int:
    """`threads` as a thread count: an int >= 1; else a TypeError (not an int, or a
    bool) or ValueError (< 1, or beyond a C int) naming the value."""
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(
            f"{what} must be an int >= 1, got {threads!r} of type {type(threads).__name__}"
        )
    if threads < 1:
        raise ValueError(f"{what} must be an int >= 1, got {threads}")
    if threads > MAX_THREADS:
        raise ValueError(f"{what} must be at most {MAX_THREADS}, got {threads}")
    return int(threads)


def default_threads() -> int:
    """TEIR_NUM_THREADS if set (an int >= 1, else a ValueError), else every core this
    process may run on."""
    if value := os.environ.get("TEIR_NUM_THREADS"):
        try:
            count = int(value)
        except ValueError:
            raise ValueError(
                f"TEIR_NUM_THREADS must be an int >= 1, got {value!r}"
            ) from None
        return check_threads(count, "TEIR_NUM_THREADS")
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class Kernel:
    """A compiled configuration: `kernel(in0, [in1,] out)` runs it in place on out.

    `threads` is the default thread count of calls (`kernel(..., threads=N)` per
    call); it is not part of the machine code, so kernels that differ only in it
    share their code (`with_threads`).
    """

    def __init__(
        self,
        name: str,
        tensors: Sequence[TensorSpec],
        address: int,
        engine: object,
        entry_address: int | None,
        parallel: bool,
        threads: int,
        stages: dict[str, str],
    ):
        self.name = name
        self.tensors = tuple(tensors)
        self.parallel = parallel
        self.threads = check_threads(threads)
        self.stages = stages
        self._who = f"kernel '{name}'"
        self._engine = engine  # keeps the machine code alive
        prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * len(tensors)))
        self._function = prototype(address)  # ctypes releases the GIL during calls
        self._entry = None
        if entry_address is not None:
            # Arrays go in as id(array), which is the object's address in CPython.
            entry_prototype = ctypes.CFUNCTYPE(
                ctypes.c_int32, *([ctypes.c_void_p] * len(tensors))
            )
            self._entry = entry_prototype(entry_address)
        self._set_threads = _omp_set_num_threads() if parallel else None

    def with_threads(self, threads: int) -> Kernel:
        """This kernel, the same machine code, with another default thread count."""
        kernel = copy.copy(self)
        kernel.threads = check_threads(threads)
        return kernel

    def check(self, arrays: Sequence[object]) -> list[int]:
        """The arrays' data addresses if a call with them is safe, else a ValueError/TypeError."""
        plain = self.check_arrays(arrays)
        addresses = [array.ctypes.data for array in plain]
        out, out_start = self.tensors[-1], addresses[-1]
        for spec, start in zip(self.tensors[:-1], addresses[:-1]):
            if _overlap(start, spec.needed_bytes, out_start, out.needed_bytes):
                raise self._overlap_error(spec)
        return addresses

    def check_arrays(self, arrays: Sequence[object]) -> list[np.ndarray]:
        """The arrays as plain ndarrays, or TypeError/ValueError unless each fits its
        tensor (all but overlap; teir_dialect.arrays, each tensor's exact dtype)."""
        return check_arrays(self._who, self.tensors, arrays)

    def _overlap_error(self, spec: TensorSpec) -> ValueError:
        return ValueError(
            f"out overlaps {spec.name} in memory where the kernel works (their first "
            f"{self.tensors[-1].needed_bytes} and {spec.needed_bytes} bytes); it reads "
            "its inputs while it writes out, so they must be separate buffers"
        )

    def __call__(self, *arrays: np.ndarray, threads: int | None = None) -> np.ndarray:
        if threads is not None and (type(threads) is not int or not 0 < threads <= MAX_THREADS):
            threads = check_threads(threads)  # a numpy integer, or an error
        if self._set_threads is not None:
            # set on every call: another library (threadpoolctl, an OpenMP
            # extension) may have changed libgomp's count for this OS thread since
            self._set_threads(self.threads if threads is None else threads)
        if self._entry is None:
            self._function(*self.check(arrays))
            return arrays[-1]
        plain = check_arrays(self._who, self.tensors, arrays)
        if self._entry(*map(id, plain)):
            self.check(plain)  # raises the overlap error
        return arrays[-1]

    def call_planned(self, arrays: Sequence[np.ndarray], threads: int | None = None) -> None:
        """A call with plain ndarrays of the layouts this kernel's configuration was
        made from (einsum's plans, whose key is every array's shape, strides and
        dtype, and whose arrays `plain_array` gave or that the plan allocated):
        their footprints fit by construction, so only the data addresses are read
        (the native entry, overlap still refused) and `check_arrays`, which wants
        1-D views over each footprint, is not run. Anything else: `__call__`."""
        if threads is not None and (type(threads) is not int or not 0 < threads <= MAX_THREADS):
            threads = check_threads(threads)
        if self._set_threads is not None:
            self._set_threads(self.threads if threads is None else threads)
        if self._entry is None:
            self._function(*(array.ctypes.data for array in arrays))
        elif self._entry(*map(id, arrays)):
            raise ValueError(f"{self._who}: out overlaps an input in memory where the "
                             "kernel works; they must be separate buffers")

    def __repr__(self) -> str:
        args = ", ".join(
            f"{t.name}: {t.describe_dtype()}[>={t.needed_bytes}B]" for t in self.tensors
        )
        return f"<teir Kernel {self.name}({args}) threads={self.threads}>"


def _overlap(start: int, size: int, out_start: int, out_size: int) -> bool:
    return bool(size and out_size and start < out_start + out_size and out_start < start + size)


@cache
def _omp_set_num_threads():
    function = ctypes.CDLL("libgomp.so.1").omp_set_num_threads
    function.argtypes = [ctypes.c_int]
    function.restype = None
    return function


_CACHE: dict[tuple[str, bool], Kernel] = {}
"""Compiled kernels by (the function's IR, optimize); the thread count is not part
of the key: it changes no code."""
_CACHE_LOCK = threading.Lock()


def _entry(module: ModuleOp, name: str | None) -> tuple[func.FuncOp, ConfigOp]:
    configs = find_configs(module)
    if name is not None:
        configs = [
            c for c in configs
            if isinstance(f := c.parent_op(), func.FuncOp) and f.sym_name.data == name
        ]
    if len(configs) != 1:
        raise TeirError(
            f"compile_kernel needs exactly one teir.config"
            f"{' in @' + name if name else ''}, found {len(configs)}; choose one with "
            "name= (teir-run --name)"
        )
    config = configs[0]
    function = config.parent_op()
    if not isinstance(function, func.FuncOp) or list(function.body.block.args) != list(
        config.tensors
    ):
        raise TeirError(
            "compile_kernel compiles a func.func whose arguments are exactly the "
            "configuration's tensors"
        )
    return function, config


def compile_kernel(
    config: object,
    *,
    name: str | None = None,
    threads: int | None = None,
    optimize: bool = True,
    keep_ir: bool = False,
) -> Kernel:
    """A callable kernel for `config` (module, record, JSON text, or path).

    With `optimize` (the default) the teir-optimize pipeline runs first, or, when
    `teir-tune` has stored a schedule for this configuration, CPU and thread
    count (teir_passes.schedule_cache), that script instead of the
    auto-scheduler; teir-match-gemm, which decides the microkernels, runs in
    any case. `threads` (an int >= 1; default `default_threads()`) is the
    default thread count of the kernel's calls; the code is compiled once for
    every thread count.

    `Kernel.stages` holds the IR of the configuration ("teir") and, when it
    was compiled here, of the scheduled one ("optimized"). With `keep_ir` the
    kernel is compiled afresh, caches not consulted, and the scf and llvm
    dialect stages are kept too ("scf", "llvm"): printing a large kernel
    takes longer than several of its lowering passes.
    """
    threads = default_threads() if threads is None else check_threads(threads)
    with stage("record -> module (verified)"):
        module = load_module(config)
    function, config_op = _entry(module, name)
    with stage("key"):
        function_ir = str(function)
        tuned = schedule_cache.lookup(function_ir, threads) if optimize else None
        # host(): plans follow the description, which a test may pin
        # the script itself, not only the entry's name: a re-tune stores another
        # script under the same name, and its kernel must be compiled again
        key = (function_ir, optimize,
               (tuned.key, json.dumps(tuned.script, sort_keys=True)) if tuned else None,
               host().fingerprint())
    with _CACHE_LOCK:
        cached = None if keep_ir else _CACHE.get(key)
    if cached is not None:
        return cached if cached.threads == threads else cached.with_threads(threads)
    tensors = tensor_specs(config_op, _stored_types(config_op))
    kernel_name = function.sym_name.data
    from teir_lowering.runtime import kernel_cache
    from teir_lowering.runtime.jit import JitModule, load_libgomp

    with stage("key"):
        disk_key = kernel_cache.kernel_key(*key)
    with stage("cache load"):
        stored = None if keep_ir else kernel_cache.load(disk_key)
    if stored is not None:
        if stored.parallel:
            load_libgomp()
        with stage("cache MCJIT"):
            engine = JitModule.from_machine_code(stored.llvm_ir, stored.object_code)
        parallel = stored.parallel
        stages = {"teir": function_ir, "cached": str(kernel_cache.kernel_dir() / disk_key)}
    else:
        with _collector_paused():
            engine, parallel, stages = _compile(module, function, tensors, tuned, optimize,
                                                keep_ir)
        assert engine.object_code is not None
        with stage("cache store"):
            kernel_cache.store(disk_key, kernel_cache.CachedKernel(
                kernel_name, parallel, engine.llvm_ir, engine.object_code))
    offset = data_offset()
    kernel = Kernel(
        kernel_name,
        tensors,
        engine.address(kernel_name),
        engine,
        None if offset is None else engine.address(kernel_name + ENTRY_SUFFIX),
        parallel,
        threads,
        stages,
    )
    with _CACHE_LOCK:
        _CACHE[key] = kernel
    return kernel


def _stored_types(config: ConfigOp) -> dict[str, DataType]:
    """What each tensor's memref stores; a tensor that primitives of several data
    types access (its memref then holds bytes) is refused naming them, and so is
    an axis whose stride or offset splits an element."""
    types = {}
    for tensor, value in zip(config.tensor_names, config.tensors):
        users = sorted((p.primitive_id, str(p.data_type)) for p in config.primitives
                       if tensor in p.kind.tensors_accessed(len(config.tensor_names)))
        if len({data_type for _, data_type in users}) > 1:
            listing = ", ".join(f"'{name}' ({data_type})" for name, data_type in users)
            raise Unsupported(
                f"lowering: tensor {tensor} is accessed by primitives of several data "
                f"types, {listing}; a kernel's tensor holds one type")
        types[tensor] = stored_data_type(tensor, value.type)
    for axis in config.axes:  # here, where the ids are the record's own (teir-to-scf
        for tensor, data_type in types.items():  # would name a scheduled axis)
            for what, size in (("stride", axis.stride_on(tensor)),
                               ("offset", axis.offset_on(tensor))):
                element_count(tensor, data_type.width, size,
                              f"the {what} of axis '{axis.axis_id}'")
    return types


_PAUSES = 0
_PAUSES_LOCK = threading.Lock()
_RESUME = False


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while kernels compile (in any thread). The
    lowering builds and drops tens of thousands of ops, each in reference cycles
    with its block; the collector ran over the whole growing IR again and again
    (a fifth of the compile time). What the lowering dropped is collected when
    the last compilation ends."""
    global _PAUSES, _RESUME
    with _PAUSES_LOCK:
        if _PAUSES == 0:
            _RESUME = gc.isenabled()
            gc.disable()
        _PAUSES += 1
    try:
        yield
    finally:
        with _PAUSES_LOCK:
            _PAUSES -= 1
            if _PAUSES == 0 and _RESUME:
                gc.enable()


def _compile(module: ModuleOp, function: func.FuncOp, tensors: Sequence[TensorSpec],
             tuned: schedule_cache.Entry | None, optimize: bool, keep_ir: bool,
             ) -> tuple[JitModule, bool, dict[str, str]]:
    """The kernel's function lowered and JIT-compiled: the engine, whether it launches
    threads, and the IR of the stages (scf and llvm with `keep_ir`)."""
    from teir_lowering.codegen.outline_parallel import launches_threads
    from teir_lowering.runtime.jit import JitModule, load_libgomp
    from teir_passes.pipeline import OptimizePass, default_passes
    from teir_passes.pipeline import optimize as schedule
    from teir_passes.script import apply_schedule

    kernel_name = function.sym_name.data
    # Keep only the kernel's function.
    for op in list(module.ops):
        if op is not function:
            op.detach()
    with stage("print teir"):
        stages: dict[str, str] = {"teir": str(module)}
    ctx = teir_context()
    try:
        if tuned is not None:
            with stage("teir-optimize", module):
                apply_schedule(module, tuned.script, ctx)
                for after_scheduling in default_passes()[1:]:
                    after_scheduling.apply(ctx, module)
        elif optimize:
            with stage("teir-optimize", module):
                if keep_ir:  # compiled afresh: no schedule remembered either
                    OptimizePass().apply(ctx, module)
                else:
                    schedule(module, ctx)
        if tuned is not None or optimize:
            with stage("verify teir"):
                module.verify()
            with stage("print teir"):
                stages["optimized"] = str(module)
        lower_to_scf(module, ctx, stages if keep_ir else None, clean=False)
        text, linked = translate(module, ctx)
    except Unsupported:
        raise  # its own kind: it names what TEIR does not compile
    except DiagnosticException as err:
        raise TeirError(f"lowering failed: {err}") from None
    parallel = launches_threads(module)
    if parallel:
        load_libgomp()
    offset = data_offset()
    if offset is not None:
        entry = ir.Module()
        add_ndarray_entry(entry, kernel_name, [t.needed_bytes for t in tensors], offset)
        linked = (*linked, str(entry))
    if keep_ir:
        stages["llvm"] = "\n".join([text, *linked])
    return JitModule.from_llvm_ir(text, linked=linked), parallel, stages


__all__ = ["Kernel", "check_threads", "compile_kernel", "default_threads", "load_module"]
