"""`translate_to_llvm_ir`: a kernel's scf-level module straight to LLVM IR text.

What `compile_kernel` hands llvmlite. The pass pipeline to the llvm dialect
(`teir-lower-to-llvm-dialect`, then xDSL's translation to llvmlite objects and
their printing) builds two or three new ops for every op of the scf level,
each constructed, verified and rewritten by xDSL's pattern machinery, and was
most of a first call's compile time. This module writes the same IR in one
walk over the scf level instead: each op one line (or a few) of LLVM IR, in
the forms the pass pipeline gives LLVM (addresses as `getelementptr i8` by
the byte offset, accesses aligned to the element, loops as the phis of
`convert-scf-to-cf`'s blocks, allocas in the entry block, an sfence before
the returns of a function with non-temporal stores), so LLVM's optimizer sees
the same program. The pipeline stays what `teir-opt` shows and what the lit
tests check; `tests/test_translate.py` holds the two to the same results.

Input: func.func ops of scf/arith/math/memref/vector/teir_lane after
`teir-outline-parallel`, memrefs one-dimensional without layout (the kernels'
tensors and scratch buffers). bf16 values are written as i16, their constants
as their bits: what `teir-bf16-as-i16` makes of them in the pass pipeline,
without its rewriting of every op that holds one (the kernels only move bf16
values, which `check_bf16_moves_only` checks first when a function takes bf16
memory). An op outside that
set raises `TranslationError` naming it. Launchers (`__teir_launch_*`) stay
declarations here; `teir_lowering.runtime.jit` links their definitions
(teir-gomp-launch) in.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, func, math, memref, scf, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from teir_dialect.vocabulary import DataType
from teir_lowering.lane import (
    PREDICATES,
    PREFETCH_INTRINSIC,
    UNROLLED,
    LaneCmpfOp,
    LaneDotBF16PairsOp,
    LanePrefetchOp,
    LaneSelectOp,
    prefetch_arguments,
)
from teir_lowering.llvm.bf16 import check_bf16_moves_only, half_bits
from teir_lowering.llvm.retype import takes_memory_of

SFENCE = "llvm.x86.sse.sfence"


class TranslationError(DiagnosticException):
    """The module holds something the translation does not take."""


@lru_cache(maxsize=1024)
def llvm_type(typ: Attribute) -> str:
    """The LLVM IR spelling of an scf-level type (a memref is a bare pointer);
    remembered, as every value's type is spelled where it is used."""
    if isinstance(typ, IndexType):
        return "i64"
    if isinstance(typ, IntegerType):
        return f"i{typ.width.data}"
    if isinstance(typ, Float32Type):
        return "float"
    if isinstance(typ, Float64Type):
        return "double"
    if isinstance(typ, Float16Type):
        return "half"
    if isinstance(typ, BFloat16Type):
        return "i16"  # bits the kernels only move (as teir-bf16-as-i16 types them)
    if isinstance(typ, MemRefType):
        return "ptr"
    if isinstance(typ, VectorType) and typ.get_num_dims() == 1:
        return f"<{typ.get_shape()[0]} x {llvm_type(typ.element_type)}>"
    raise TranslationError(f"no LLVM type for {typ}")


def _float_literal(value: float, typ: Attribute) -> str:
    """LLVM's exact hexadecimal spelling of a float constant of `typ`."""
    if isinstance(typ, Float16Type):
        return f"0xH{struct.unpack('<H', struct.pack('<e', value))[0]:04X}"
    if isinstance(typ, BFloat16Type):  # an i16 (llvm_type): its bits, nearest even
        return str(half_bits([value], DataType.BF16)[0])
    if isinstance(typ, Float32Type):  # as a double holding the float's value exactly
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X}"


def _int_literal(value: int, typ: Attribute) -> str:
    width = 64 if isinstance(typ, IndexType) else typ.width.data  # pyright: ignore
    value &= (1 << width) - 1
    if width == 1:
        return "true" if value else "false"
    return str(value - (1 << width) if value >> (width - 1) else value)


def _scalar_literal(value: float, typ: Attribute) -> str:
    if isinstance(typ, IntegerType | IndexType):
        return _int_literal(int(value), typ)
    return _float_literal(float(value), typ)


def _constant(op: arith.ConstantOp) -> str:
    """The literal of an arith.constant (scalar, or a dense vector)."""
    value, typ = op.value, op.result.type
    if isinstance(value, IntegerAttr | FloatAttr):
        return _scalar_literal(value.value.data, typ)
    if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(typ, VectorType):
        element = typ.element_type
        values = value.get_values()
        if len(values) == 1:
            values = values * typ.get_shape()[0]
        element_type = llvm_type(element)
        return "<" + ", ".join(f"{element_type} {_scalar_literal(v, element)}"
                               for v in values) + ">"
    raise TranslationError(f"arith.constant of {value} is not translated")


_INTEGER_BINARY = {
    arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul",
    arith.DivUIOp: "udiv", arith.DivSIOp: "sdiv", arith.RemUIOp: "urem",
    arith.RemSIOp: "srem", arith.AndIOp: "and", arith.OrIOp: "or", arith.XOrIOp: "xor",
    arith.ShLIOp: "shl", arith.ShRUIOp: "lshr", arith.ShRSIOp: "ashr",
}
_FLOAT_BINARY = {
    arith.AddfOp: "fadd", arith.SubfOp: "fsub", arith.MulfOp: "fmul",
    arith.DivfOp: "fdiv",
}
_CASTS = {
    arith.ExtFOp: "fpext", arith.TruncFOp: "fptrunc", arith.ExtUIOp: "zext",
    arith.ExtSIOp: "sext", arith.TruncIOp: "trunc", arith.BitcastOp: "bitcast",
    arith.SIToFPOp: "sitofp", arith.UIToFPOp: "uitofp", arith.FPToSIOp: "fptosi",
    arith.FPToUIOp: "fptoui", vector.BitcastOp: "bitcast",
}


def _flags(op: Operation, name: str) -> str:
    """LLVM's spelling of an op's overflow or fast-math flags (with a trailing space):
    both attributes hold a set of enum flags named as LLVM names them."""
    flags = getattr(op.properties.get(name), "data", ())
    return "".join(f"{word} " for word in sorted(flag.value for flag in flags))


def _intrinsic_suffix(typ: Attribute) -> str:
    if isinstance(typ, VectorType):
        return f"v{typ.get_shape()[0]}{_intrinsic_suffix(typ.element_type)}"
    return {"float": "f32", "double": "f64", "half": "f16"}[llvm_type(typ)]


def _element_size(memory: SSAValue) -> int:
    """The size in bytes of the elements of a 1-D memref without layout."""
    typ = memory.type
    if not (isinstance(typ, MemRefType) and typ.get_num_dims() == 1
            and isinstance(typ.layout, NoneAttr)):
        raise TranslationError(f"an access to a {typ} is not translated (1-D memrefs only)")
    return typ.element_type.bitwidth // 8  # pyright: ignore


class _Function:
    """The LLVM IR of one func.func, built line by line."""

    def __init__(self, module: _Module, function: func.FuncOp):
        self.module = module
        self.names: dict[SSAValue, str] = {}
        self.lines: list[str] = []
        self.allocas: list[str] = []
        self.count = 0
        self.labels = 0
        self.block = "entry"  # the LLVM block being written
        self.streams = False
        self.function = function

    # -- names -----------------------------------------------------------------------

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def label(self) -> str:
        self.labels += 1
        return f"b{self.labels}"

    def ref(self, value: SSAValue) -> str:
        try:
            return self.names[value]
        except KeyError:
            raise TranslationError(f"a value of {value.type} is used before it is "
                                   "defined") from None

    def typed(self, value: SSAValue) -> str:
        return f"{llvm_type(value.type)} {self.ref(value)}"

    def define(self, result: SSAValue, text: str) -> None:
        """`result = text`."""
        name = self.fresh()
        self.names[result] = name
        self.lines.append(f"  {name} = {text}")

    def start(self, label: str) -> None:
        self.lines.append(f"{label}:")
        self.block = label

    # -- the function ----------------------------------------------------------------

    def translate(self) -> str:
        function = self.function
        block = function.body.block
        arguments = []
        attributes = function.arg_attrs.data if function.arg_attrs is not None else ()
        for index, arg in enumerate(block.args):
            name = f"%a{index}"
            self.names[arg] = name
            # (teir-to-scf marks the tensors: they do not overlap where a kernel writes)
            marked = index < len(attributes) and "llvm.noalias" in attributes[index].data
            arguments.append(f"{llvm_type(arg.type)}{' noalias' if marked else ''} {name}")
        self.emit(block.ops)
        group = " #0" if self.module.attributes else ""
        header = f'define void @"{function.sym_name.data}"({", ".join(arguments)}){group} {{'
        return "\n".join([header, "entry:", *self.allocas, *self.lines, "}"])

    def emit(self, ops: Iterable[Operation]) -> None:
        for op in ops:
            handler = _HANDLERS.get(type(op))
            if handler is None:
                raise TranslationError(f"{op.name} is not translated to LLVM IR")
            handler(self, op)

    def address(self, op: Operation, memory: SSAValue,
                indices: Sequence[SSAValue]) -> tuple[str, int]:
        """The address a load or store `op` of one index reads or writes (a byte offset
        and a getelementptr i8, as convert-memref-to-ptr computes it) and its
        alignment, the element's size."""
        if len(indices) != 1:
            raise TranslationError(f"{op.name} with {len(indices)} indices is not "
                                   "translated")
        size = _element_size(memory)
        offset = self.fresh()
        self.lines.append(f"  {offset} = mul i64 {self.ref(indices[0])}, {size}")
        address = self.fresh()
        self.lines.append(f"  {address} = getelementptr i8, ptr {self.ref(memory)}, "
                          f"i64 {offset}")
        return address, size


# -- op handlers -------------------------------------------------------------------------

Handler = Callable[[_Function, Operation], None]
_HANDLERS: dict[type[Operation], Handler] = {}


def _handles(*types: type[Operation]) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for typ in types:
            _HANDLERS[typ] = handler
        return handler
    return register


@_handles(arith.ConstantOp)
def _arith_constant(f: _Function, op: Operation) -> None:
    assert isinstance(op, arith.ConstantOp)
    f.names[op.result] = _constant(op)


@_handles(*_INTEGER_BINARY)
def _integer_binary(f: _Function, op: Operation) -> None:
    lhs, rhs = op.operands
    flags = _flags(op, "overflowFlags") if type(op) in (
        arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.ShLIOp) else ""
    f.define(op.results[0], f"{_INTEGER_BINARY[type(op)]} {flags}{f.typed(lhs)}, "
                            f"{f.ref(rhs)}")


@_handles(*_FLOAT_BINARY)
def _float_binary(f: _Function, op: Operation) -> None:
    lhs, rhs = op.operands
    f.define(op.results[0], f"{_FLOAT_BINARY[type(op)]} {_flags(op, 'fastmath')}"
                            f"{f.typed(lhs)}, {f.ref(rhs)}")


@_handles(arith.NegfOp)
def _negf(f: _Function, op: Operation) -> None:
    f.define(op.results[0], f"fneg {_flags(op, 'fastmath')}{f.typed(op.operands[0])}")


@_handles(*_CASTS)
def _cast(f: _Function, op: Operation) -> None:
    (source,) = op.operands
    f.define(op.results[0], f"{_CASTS[type(op)]} {f.typed(source)} to "
                            f"{llvm_type(op.results[0].type)}")


@_handles(arith.IndexCastOp)
def _index_cast(f: _Function, op: Operation) -> None:
    (source,) = op.operands
    wide, narrow = llvm_type(source.type), llvm_type(op.results[0].type)
    if wide == narrow:
        f.names[op.results[0]] = f.ref(source)
        return
    kind = "trunc" if int(wide[1:]) > int(narrow[1:]) else "sext"
    f.define(op.results[0], f"{kind} {f.typed(source)} to {narrow}")


_MIN_MAX = {arith.MinSIOp: "slt", arith.MaxSIOp: "sgt", arith.MinUIOp: "ult",
            arith.MaxUIOp: "ugt"}


@_handles(*_MIN_MAX)
def _integer_min_max(f: _Function, op: Operation) -> None:
    """icmp + select, as teir-convert-arith-to-llvm lowers them."""
    lhs, rhs = op.operands
    test = f.fresh()
    f.lines.append(f"  {test} = icmp {_MIN_MAX[type(op)]} {f.typed(lhs)}, {f.ref(rhs)}")
    f.define(op.results[0], f"select i1 {test}, {f.typed(lhs)}, {f.typed(rhs)}")


@_handles(arith.CmpiOp)
def _cmpi(f: _Function, op: Operation) -> None:
    assert isinstance(op, arith.CmpiOp)
    predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    f.define(op.result, f"icmp {predicate} {f.typed(op.lhs)}, {f.ref(op.rhs)}")


@_handles(arith.CmpfOp)
def _cmpf(f: _Function, op: Operation) -> None:
    assert isinstance(op, arith.CmpfOp)
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    f.define(op.result, f"fcmp {_flags(op, 'fastmath')}{predicate} {f.typed(op.lhs)}, "
                        f"{f.ref(op.rhs)}")


@_handles(LaneCmpfOp)
def _lane_cmpf(f: _Function, op: Operation) -> None:
    assert isinstance(op, LaneCmpfOp)
    predicate = PREDICATES[op.predicate.value.data]
    f.define(op.results[0], f"fcmp {predicate} {f.typed(op.lhs)}, {f.ref(op.rhs)}")


@_handles(arith.SelectOp, LaneSelectOp)
def _select(f: _Function, op: Operation) -> None:
    condition, lhs, rhs = op.operands
    f.define(op.results[0], f"select {f.typed(condition)}, {f.typed(lhs)}, "
                            f"{f.typed(rhs)}")


@_handles(LaneDotBF16PairsOp)
def _dot_bf16_pairs(f: _Function, op: Operation) -> None:
    assert isinstance(op, LaneDotBF16PairsOp)
    result, pairs = llvm_type(op.result.type), llvm_type(op.lhs.type)
    f.module.declare(f'declare {result} @"{op.intrinsic}"({result}, {pairs}, {pairs})')
    arguments = ", ".join(f.typed(v) for v in op.operands)
    f.define(op.result, f'call {result} @"{op.intrinsic}"({arguments})')


_INTRINSICS = {math.FmaOp: "llvm.fma", vector.FMAOp: "llvm.fma",
               arith.MaximumfOp: "llvm.maximum", arith.MinimumfOp: "llvm.minimum",
               arith.MaxnumfOp: "llvm.maxnum", arith.MinnumfOp: "llvm.minnum"}
"""Ops that are a call of an LLVM intrinsic on operands of the result's type."""


@_handles(*_INTRINSICS)
def _intrinsic(f: _Function, op: Operation) -> None:
    typ = op.results[0].type
    name = f"{_INTRINSICS[type(op)]}.{_intrinsic_suffix(typ)}"
    spelled = llvm_type(typ)
    f.module.declare(f'declare {spelled} @"{name}"({", ".join([spelled] * len(op.operands))})')
    arguments = ", ".join(f.typed(v) for v in op.operands)
    f.define(op.results[0], f'call {spelled} @"{name}"({arguments})')


@_handles(vector.BroadcastOp)
def _broadcast(f: _Function, op: Operation) -> None:
    assert isinstance(op, vector.BroadcastOp)
    typ = op.vector.type
    if isinstance(op.source.type, VectorType):
        raise TranslationError("vector.broadcast of a vector is not translated")
    spelled, lanes = llvm_type(typ), typ.get_shape()[0]
    single = f.fresh()
    f.lines.append(f"  {single} = insertelement {spelled} undef, {f.typed(op.source)}, "
                   "i64 0")
    f.define(op.vector, f"shufflevector {spelled} {single}, {spelled} undef, "
                        f"<{lanes} x i32> zeroinitializer")


def _static_lane(op: vector.ExtractOp | vector.InsertOp) -> int:
    positions = op.static_position.get_values()
    if op.dynamic_position or len(positions) != 1:
        raise TranslationError(f"{op.name} at a dynamic or nested position is not "
                               "translated")
    return positions[0]


@_handles(vector.ExtractOp)
def _extract(f: _Function, op: Operation) -> None:
    assert isinstance(op, vector.ExtractOp)
    f.define(op.result, f"extractelement {f.typed(op.vector)}, i64 {_static_lane(op)}")


@_handles(vector.InsertOp)
def _insert(f: _Function, op: Operation) -> None:
    assert isinstance(op, vector.InsertOp)
    f.define(op.result, f"insertelement {f.typed(op.dest)}, {f.typed(op.source)}, "
                        f"i64 {_static_lane(op)}")


@_handles(vector.ShuffleOp)
def _shuffle(f: _Function, op: Operation) -> None:
    assert isinstance(op, vector.ShuffleOp)
    lhs, rhs = op.operands
    mask = op.mask.get_values()
    lanes = ", ".join(f"i32 {lane}" for lane in mask)
    f.define(op.results[0], f"shufflevector {f.typed(lhs)}, {f.typed(rhs)}, "
                            f"<{len(mask)} x i32> <{lanes}>")


@_handles(memref.LoadOp, vector.LoadOp)
def _load(f: _Function, op: Operation) -> None:
    memory, *indices = op.operands
    address, size = f.address(op, memory, indices)
    result = op.results[0]
    f.define(result, f"load {llvm_type(result.type)}, ptr {address}, align {size}")


@_handles(LanePrefetchOp)
def _prefetch(f: _Function, op: Operation) -> None:
    assert isinstance(op, LanePrefetchOp)
    address, size = f.address(op, op.memref, [op.index])
    ahead = f.fresh()
    f.lines.append(f"  {ahead} = getelementptr i8, ptr {address}, i64 "
                   f"{op.ahead.value.data * size}")
    f.module.declare(f'declare void @"{PREFETCH_INTRINSIC}"(ptr, i32, i32, i32)')
    flags = ", ".join(f"i32 {value}" for value in prefetch_arguments(op))
    f.lines.append(f'  call void @"{PREFETCH_INTRINSIC}"(ptr {ahead}, {flags})')


@_handles(memref.StoreOp, vector.StoreOp)
def _store(f: _Function, op: Operation) -> None:
    value, memory, *indices = op.operands
    address, size = f.address(op, memory, indices)
    flag = op.properties.get("nontemporal")
    streams = isinstance(op, vector.StoreOp) and flag is not None and flag.value.data  # pyright: ignore
    if streams:
        # aligned to the whole vector, as the emitters place streaming stores: x86
        # streams aligned vectors only, and LLVM split a vector it could not prove
        # aligned into 8-byte `movntsd`s (`abcd->dcba` 64^4: no `vmovntps` at all)
        size *= value.type.get_shape()[0]  # pyright: ignore
    line = f"  store {f.typed(value)}, ptr {address}, align {size}"
    if streams:
        line += ", !nontemporal !0"
        f.streams = True
    f.lines.append(line)


@_handles(memref.ExtractAlignedPointerAsIndexOp)
def _pointer(f: _Function, op: Operation) -> None:
    assert isinstance(op, memref.ExtractAlignedPointerAsIndexOp)
    f.define(op.aligned_pointer, f"ptrtoint ptr {f.ref(op.source)} to i64")


@_handles(memref.AllocaOp)
def _alloca(f: _Function, op: Operation) -> None:
    """A constant-size buffer in the entry block: one slot of the frame, per thread
    once the chunk functions run on their own stacks (teir-hoist-allocas)."""
    assert isinstance(op, memref.AllocaOp)
    typ = op.memref.type
    if op.dynamic_sizes or not typ.has_static_shape():
        raise TranslationError("memref.alloca of a dynamic size is not translated")
    count = 1
    for extent in typ.get_shape():
        count *= extent
    alignment = op.alignment.value.data if op.alignment is not None else 16
    name = f.fresh()
    f.names[op.memref] = name
    f.allocas.append(f"  {name} = alloca {llvm_type(typ.element_type)}, i64 {count}, "
                     f"align {alignment}")


@_handles(scf.ForOp)
def _for(f: _Function, op: Operation) -> None:
    """convert-scf-to-cf's blocks: a header of phis testing iv < ub, the body, the
    increment at the end of the body's last block, the exit."""
    assert isinstance(op, scf.ForOp)
    header, body, exit_ = f.label(), f.label(), f.label()
    entry = f.block
    f.lines.append(f"  br label %{header}")
    f.start(header)
    body_block = op.body.block
    iv, *carried = body_block.args
    phis = [iv, *carried]
    starts = [op.lb, *op.iter_args]
    for value in phis:
        f.names[value] = f.fresh()
    slot = len(f.lines)
    f.lines.append("")  # the phis, once the back edge is known
    test = f.fresh()
    f.lines.append(f"  {test} = icmp slt i64 {f.names[iv]}, {f.ref(op.ub)}")
    f.lines.append(f"  br i1 {test}, label %{body}, label %{exit_}")
    f.start(body)
    yielded = _body(f, body_block)
    following = f.fresh()
    f.lines.append(f"  {following} = add i64 {f.names[iv]}, {f.ref(op.step)}")
    latch = f.block
    f.lines.append(f"  br label %{header}" + (f", !llvm.loop {f.module.no_unroll()}"
                                              if UNROLLED in op.attributes else ""))
    f.lines[slot] = "\n".join(
        f"  {f.names[value]} = phi {llvm_type(value.type)} [{f.ref(start)}, %{entry}], "
        f"[{again}, %{latch}]"
        for value, start, again in zip(phis, starts, [following, *yielded]))
    f.start(exit_)
    for result, value in zip(op.results, carried):
        f.names[result] = f.names[value]


def _body(f: _Function, block: Block) -> list[str]:
    """Translates a region's block up to its scf.yield; the yielded values."""
    *ops, last = block.ops
    if not isinstance(last, scf.YieldOp):
        raise TranslationError(f"a region ending in {last.name} is not translated")
    f.emit(ops)
    return [f.ref(value) for value in last.operands]


@_handles(scf.IfOp)
def _if(f: _Function, op: Operation) -> None:
    assert isinstance(op, scf.IfOp)
    then, otherwise, merge = f.label(), f.label(), f.label()
    f.lines.append(f"  br i1 {f.ref(op.cond)}, label %{then}, label %{otherwise}")
    incoming: list[tuple[list[str], str]] = []
    for label, region in ((then, op.true_region), (otherwise, op.false_region)):
        f.start(label)
        values = _body(f, region.block) if region.blocks else []
        incoming.append((values, f.block))
        f.lines.append(f"  br label %{merge}")
    f.start(merge)
    for index, result in enumerate(op.output):
        sources = ", ".join(f"[{values[index]}, %{block}]" for values, block in incoming)
        f.define(result, f"phi {llvm_type(result.type)} {sources}")


@_handles(func.CallOp)
def _call(f: _Function, op: Operation) -> None:
    assert isinstance(op, func.CallOp)
    if len(op.res) > 1:
        raise TranslationError("a func.call with several results is not translated")
    arguments = ", ".join(f.typed(v) for v in op.arguments)
    callee = op.callee.string_value()
    if op.res:
        (result,) = op.res
        f.define(result, f'call {llvm_type(result.type)} @"{callee}"({arguments})')
    else:
        f.lines.append(f'  call void @"{callee}"({arguments})')


@_handles(func.ReturnOp)
def _return(f: _Function, op: Operation) -> None:
    if op.operands:
        raise TranslationError("a func.return of values is not translated")
    if f.streams:  # the function's last op: its stores are all written by now
        f.module.declare(f'declare void @"{SFENCE}"()')
        f.lines.append(f'  call void @"{SFENCE}"()')  # (teir-fence-nontemporal-stores)
    f.lines.append("  ret void")


# -- the module --------------------------------------------------------------------------


class _Module:
    def __init__(self, attributes: Mapping[str, str]) -> None:
        self.declarations: dict[str, None] = {}
        self.attributes = attributes
        self.metadata: list[str] = ["!0 = !{i32 1}"]  # !nontemporal's

    def declare(self, line: str) -> None:
        self.declarations.setdefault(line, None)

    def no_unroll(self) -> str:
        """A loop's own `!llvm.loop` node (distinct, as LLVM wants one per loop)
        saying `llvm.loop.unroll.disable`."""
        if len(self.metadata) == 1:
            self.metadata.append('!1 = !{!"llvm.loop.unroll.disable"}')
        node = f"!{len(self.metadata)}"
        self.metadata.append(f"{node} = distinct !{{{node}, !1}}")
        return node


def translate_to_llvm_ir(module: ModuleOp, attributes: Mapping[str, str] | None = None,
                         ) -> str:
    """The LLVM IR of the scf-level `module` (see the module doc); `attributes` are
    the string attributes of every definition (`#0`), e.g. {"prefer-vector-width":
    "512"}."""
    if takes_memory_of(module, BFloat16Type):  # written as i16: they may only move
        check_bf16_moves_only(module)
    out = _Module(attributes or {})
    definitions: list[str] = []
    for op in module.ops:
        if not isinstance(op, func.FuncOp):
            raise TranslationError(f"{op.name} at the top of the module is not translated")
        if not op.body.blocks:
            inputs = ", ".join(llvm_type(t) for t in op.function_type.inputs)
            outputs = op.function_type.outputs.data
            if len(outputs) > 1:
                raise TranslationError(f"@{op.sym_name.data} returns several values")
            result = llvm_type(outputs[0]) if outputs else "void"
            out.declare(f'declare {result} @"{op.sym_name.data}"({inputs})')
            continue
        if op.function_type.outputs.data:
            raise TranslationError(f"@{op.sym_name.data} returns values: not translated")
        definitions.append(_Function(out, op).translate())
    pairs = " ".join(f'"{key}"="{value}"' for key, value in out.attributes.items())
    groups = [f"attributes #0 = {{ {pairs} }}"] if pairs else []
    return "\n".join([*definitions, *out.declarations, *groups, *out.metadata, ""])


@dataclass(frozen=True)
class LLVMIRTarget(Target):
    """`-t teir-llvm-ir`: an scf-level module (after teir-outline-parallel) as the LLVM
    IR `compile_kernel` hands LLVM, without the host's function attributes and the
    linked launchers."""

    name: ClassVar[str] = "teir-llvm-ir"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(translate_to_llvm_ir(module))


__all__ = ["SFENCE", "LLVMIRTarget", "TranslationError", "llvm_type",
           "translate_to_llvm_ir"]
