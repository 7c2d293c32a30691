"""
Compiles an llvm-dialect module to native code in this process (llvmlite MCJIT).

`JitModule(module)` translates with xDSL's `convert_module`, optimizes at O3 for the
host CPU and features with LLVM's new pass manager, and JIT-compiles. Functions are
then called through ctypes; with TEIR's calling convention a memref is a bare pointer:

    jit = JitModule(module)                    # module: after teir-lower-to-llvm-dialect
    kernel = jit.function("k", None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    kernel(a.ctypes.data, out.ctypes.data, a.size)

The JitModule owns the execution engine: keep it alive while its code may run.
"""

from __future__ import annotations

import ctypes
import os
import re
import threading
from collections.abc import Callable
from typing import Any, ClassVar

import llvmlite.binding as llvm
from llvmlite import ir
from llvmlite.ir.values import FunctionAttributes
from xdsl.dialects.builtin import ModuleOp

from teir_lowering.codegen.team import TEAM, TEAM_SLOTS

_initialized = False


_DEFINED = re.compile(r'^define\b[^@\n]*@("[^"]+"|[\w.$-]+)', re.MULTILINE)
"""The name of each function an LLVM IR text defines."""


class JitCompilationError(Exception):
    """The module could not be translated to LLVM IR or compiled."""


def _initialize_llvm() -> None:
    """Initializes the native target and asm printer once (llvmlite needs no more)."""
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _initialized = True


class _FunctionAttributes(FunctionAttributes):
    """
    llvmlite's function attributes also taking `"key"="value"` string attributes,
    which it does not know; LLVM's IR parser reads them after the signature.
    """

    def add(self, name: str) -> None:
        if name.startswith('"'):
            set.add(self, name)
        else:
            super().add(name)


def _set_string_attribute(function: ir.Function, key: str, value: str) -> None:
    attributes = _FunctionAttributes(function.attributes)
    attributes.add(f'"{key}"="{value}"')
    function.attributes = attributes


def _mark_nontemporal_stores(module: ModuleOp, ir_module: ir.Module) -> None:
    """
    Gives LLVM's `!nontemporal` to the stores whose `llvm.store` has `nontemporal`.

    xDSL's translation drops the flag. It emits one `store` per `llvm.store` and
    nothing else as a store, function by function and in block order, so the k-th
    store of a function is its k-th `llvm.store`.
    """
    from xdsl.dialects import llvm as llvm_dialect

    marks: dict[str, list[bool]] = {}
    for function in module.ops:
        if isinstance(function, llvm_dialect.FuncOp):
            stores = [op.nontemporal is not None for op in function.walk()
                      if isinstance(op, llvm_dialect.StoreOp)]
            if any(stores):
                marks[function.sym_name.data] = stores
    if not marks:
        return
    node = ir_module.add_metadata([ir.Constant(ir.IntType(32), 1)])
    for function in ir_module.functions:
        if (flags := marks.get(function.name)) is None:
            continue
        stores = [instruction for block in function.blocks
                  for instruction in block.instructions
                  if isinstance(instruction, ir.StoreInstr)]
        if len(stores) != len(flags):
            raise JitCompilationError(
                f"@{function.name}: {len(stores)} stores translated from {len(flags)} "
                "llvm.store ops; cannot place !nontemporal"
            )
        for store, flag in zip(stores, flags):
            if flag:
                store.set_metadata("nontemporal", node)


def _host_features() -> llvm.FeatureMap:
    try:
        return llvm.get_host_cpu_features()
    except RuntimeError:  # LLVM cannot read the features of this host
        return llvm.FeatureMap()


def function_attributes() -> dict[str, str]:
    """The string attributes of every function TEIR defines: on AVX-512 hosts
    `prefer-vector-width` 512, so that the vectorizers use zmm registers (some
    host CPUs default to 256 bits)."""
    if _host_features().get("avx512f", False):
        return {"prefer-vector-width": "512"}
    return {}


def host_target_machine(opt_level: int = 3) -> llvm.TargetMachine:
    """A target machine for the host triple, CPU and CPU features."""
    _initialize_llvm()
    target = llvm.Target.from_triple(llvm.get_default_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=_host_features().flatten(),
        opt=opt_level,
        codemodel="jitdefault",
    )


class JitModule:
    """
    An llvm-dialect module compiled to native code in this process.

    `address(name)` gives a function's entry point, `function(...)` a ctypes callable,
    `llvm_ir` the optimized LLVM IR and `assembly()` the host assembly.
    """

    def __init__(self, module: ModuleOp, *, opt_level: int = 3):
        """`module`: an llvm-dialect module, translated by xDSL's `convert_module`."""
        _initialize_llvm()
        self._target_machine = host_target_machine(opt_level)
        triple = llvm.get_default_triple()

        # Translation only: a kernel loaded from the cache (`from_machine_code`)
        # does without xDSL's LLVM backend.
        from xdsl.backend.llvm.convert import convert_module
        from xdsl.utils.exceptions import LLVMTranslationException

        import teir_lowering.llvm.lane  # noqa: F401  (the lane ops xDSL translates)
        from teir_lowering.stages import stage

        try:
            with stage("translate to llvmlite"):
                ir_module = convert_module(module, fallback_target_triple=triple)
        except (NotImplementedError, LLVMTranslationException) as error:
            raise JitCompilationError(
                f"cannot translate the module to LLVM IR: {error} "
                "(lower it with teir-lower-to-llvm-dialect)"
            ) from error
        _mark_nontemporal_stores(module, ir_module)
        for key, value in function_attributes().items():
            for function in ir_module.functions:
                if not function.is_declaration:
                    _set_string_attribute(function, key, value)

        try:
            with stage("print LLVM IR"):
                text = str(ir_module)
            with stage("parse + verify LLVM IR"):
                llvm_module = llvm.parse_assembly(text)
                llvm_module.verify()
        except RuntimeError as error:
            raise JitCompilationError(
                f"LLVM rejects the translated module: {error}"
            ) from error
        self._optimize_and_finish(llvm_module, opt_level)

    @classmethod
    def from_llvm_ir(cls, text: str, *, linked: tuple[str, ...] = (),
                     opt_level: int = 3) -> JitModule:
        """A module given as LLVM IR text (teir_lowering.llvm.translate), with the
        modules of `linked` (LLVM IR texts defining what it declares) linked in,
        optimized and compiled like the translated llvm-dialect modules."""
        from teir_lowering.stages import stage

        _initialize_llvm()
        self = cls.__new__(cls)
        self._target_machine = host_target_machine(opt_level)
        try:
            with stage("parse + verify LLVM IR"):
                llvm_module = llvm.parse_assembly(text)
                for part in linked:
                    llvm_module.link_in(llvm.parse_assembly(part))
                llvm_module.verify()
        except RuntimeError as error:
            raise JitCompilationError(f"LLVM rejects the module: {error}") from error
        self._optimize_and_finish(llvm_module, opt_level)
        return self

    def _optimize_and_finish(self, llvm_module: llvm.ModuleRef, opt_level: int) -> None:
        """The host's triple and data layout, LLVM's O`opt_level` pipeline, MCJIT."""
        from teir_lowering.stages import stage

        llvm_module.triple = llvm.get_default_triple()
        llvm_module.data_layout = str(self._target_machine.target_data)
        tuning = llvm.PipelineTuningOptions(speed_level=opt_level)
        tuning.loop_vectorization = opt_level >= 2
        tuning.slp_vectorization = opt_level >= 2
        self._pass_builder = llvm.create_pass_builder(self._target_machine, tuning)
        self._tuning = tuning
        with stage("LLVM O3"):
            self._pass_builder.getModulePassManager().run(llvm_module, self._pass_builder)
        with stage("MCJIT codegen"):
            self._finish(llvm_module, None)

    @classmethod
    def from_machine_code(cls, llvm_ir: str, object_code: bytes) -> JitModule:
        """A module compiled before (`llvm_ir` and `object_code` as an earlier
        JitModule had them on this host): MCJIT loads the object code, whose
        symbols it resolves, for an empty module; the IR is kept as text (its
        functions named, parsed only for `assembly()`): parsing a large kernel's IR
        was most of a warm first call."""
        _initialize_llvm()
        self = cls.__new__(cls)
        self._target_machine = host_target_machine(3)
        self._finish(llvm.parse_assembly(""), object_code, llvm_ir)
        return self

    def _finish(self, llvm_module: llvm.ModuleRef, object_code: bytes | None,
                llvm_ir: str | None = None) -> None:
        """MCJIT over the optimized module; `object_code` (from an earlier run) is
        loaded rather than generated, else the generated code is kept in
        `object_code` for a cache. `llvm_ir`: the module's text, when known."""
        self.llvm_ir: str = str(llvm_module) if llvm_ir is None else llvm_ir
        """The optimized LLVM IR."""
        self.defined_functions: tuple[str, ...] = tuple(
            name.strip('"') for name in _DEFINED.findall(self.llvm_ir))
        self.object_code: bytes | None = object_code
        """The machine code as a relocatable object (what MCJIT loaded)."""

        def generated(_module: llvm.ModuleRef, buffer: bytes) -> None:
            self.object_code = bytes(buffer)

        # The engine owns llvm_module from here on; both live as long as self.
        self._engine = llvm.create_mcjit_compiler(llvm_module, self._target_machine)
        self._engine.set_object_cache(generated, lambda _module: object_code)
        self._engine.finalize_object()
        self._llvm_module = llvm_module
        self._assembly: str | None = None

    _loaded_libraries: ClassVar[set[str]] = set()

    @staticmethod
    def load_library(name: str) -> None:
        """
        Makes the symbols of the shared library `name` (e.g. `libgomp.so.1`, found
        like dlopen finds it) available to code compiled from now on, for the life
        of the process: calls to functions only declared in a module bind to them.
        """
        if name in JitModule._loaded_libraries:
            return
        _initialize_llvm()
        try:
            llvm.load_library_permanently(name)
        except RuntimeError as error:
            raise JitCompilationError(f"cannot load {name}: {error}") from error
        JitModule._loaded_libraries.add(name)

    def address(self, name: str) -> int:
        """The address of the compiled function `name` (the func.func's sym_name)."""
        address = self._engine.get_function_address(name)
        if not address:
            raise KeyError(
                f"no compiled function @{name}; the module defines "
                + (", ".join(f"@{f}" for f in self.defined_functions) or "none")
            )
        return address

    def function(self, name: str, restype: Any, *argtypes: Any) -> Callable[..., Any]:
        """
        A ctypes callable for `name` with the given C result and argument types
        (`None` for void; `ctypes.c_void_p` for a memref, passed `array.ctypes.data`).
        It keeps this JitModule alive.
        """
        prototype = ctypes.CFUNCTYPE(restype, *argtypes)
        callable_ = prototype(self.address(name))
        callable_._jit_module = self  # pyright: ignore[reportAttributeAccessIssue]
        return callable_

    def assembly(self) -> str:
        """The host assembly of the optimized module (compiled again, for reading)."""
        if self._assembly is None:
            copy = llvm.parse_assembly(self.llvm_ir)
            self._assembly = self._target_machine.emit_assembly(copy)
        return self._assembly


LIBGOMP = "libgomp.so.1"

WAIT_POLICY = "passive"
"""libgomp's wait policy when TEIR loads it and the environment names none
(OMP_WAIT_POLICY, GOMP_SPINCOUNT). By default a libgomp thread spins for
300,000 pauses (milliseconds) before it sleeps, at the join and between
regions. When every core is busy (another pool still spinning after its call,
other jobs), the woken worker lands on the core where the calling thread spins
at the join waiting for it, and each call of a 2-thread kernel waited
milliseconds (benchmarks/mixed_pools.py). Passive threads sleep at once."""

_LOAD_LOCK = threading.Lock()


def load_libgomp() -> None:
    """Loads libgomp for the JIT (once per process), with WAIT_POLICY unless the
    environment chose one. libgomp reads its environment when it is loaded, so the
    variable is set around the load only; a libgomp another library loaded first
    keeps its settings."""
    with _LOAD_LOCK:
        chosen = any(name in os.environ for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"))
        if not chosen:
            os.environ["OMP_WAIT_POLICY"] = WAIT_POLICY
        try:
            JitModule.load_library(LIBGOMP)
        finally:
            if not chosen:
                os.environ.pop("OMP_WAIT_POLICY", None)
        if not _TEAM:
            _TEAM.append((ctypes.c_int64 * TEAM_SLOTS)())
            llvm.add_symbol(TEAM, ctypes.addressof(_TEAM[0]))


_TEAM: list[ctypes.Array] = []
"""The process's `codegen.team.TEAM` array (the workers' thread ids, written and
read by every kernel's launcher), kept alive for the JIT code."""
