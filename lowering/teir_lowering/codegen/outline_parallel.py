"""`teir-outline-parallel`: parallel loops become chunk functions and launch calls.

Each outermost `scf.parallel` becomes a function `@F__parallelN(captured...,
%lo, %hi)` that runs linear iterations [lo, hi) of the loop's (collapsed)
iteration space, and the loop itself becomes a call of the declared
`@__teir_launch_F__parallelN(captured..., %total)`; the body's ops marked
`emit.CHUNK_PROLOGUE` (scratch that its iterations share) run once per chunk,
before its loop. Nested `scf.parallel` loops inside run sequentially.
`teir-gomp-launch` (teir_lowering.codegen.gomp_launch) defines the launchers
with libgomp at the llvm level; this pass, at the scf level, needs no llvm
dialect.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from teir_lowering.codegen.emit import CHUNK_PROLOGUE, for_loop

LAUNCH_PREFIX = "__teir_launch_"

def launches_threads(module: builtin.ModuleOp) -> bool:
    """Whether teir-outline-parallel left a launcher in `module` (declared at the scf
    level, defined by teir-gomp-launch): then the code forks through libgomp."""
    return any(
        op.name in ("func.func", "llvm.func")
        and op.properties["sym_name"].data.startswith(LAUNCH_PREFIX)  # pyright: ignore
        for op in module.ops
    )


def _within(op: Operation | None, ancestor: Operation) -> bool:
    while op is not None:
        if op is ancestor:
            return True
        op = op.parent_op()
    return False


def _inside(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    return _within(owner if isinstance(owner, Operation) else owner.parent_op(), op)


def _captured(loop: scf.ParallelOp) -> list[SSAValue]:
    """Values the loop uses but does not define, in first-use order."""
    seen: list[SSAValue] = []
    for value in [*loop.upperBound, *loop.lowerBound, *loop.step]:
        if value not in seen:
            seen.append(value)
    for op in loop.body.walk():
        for operand in op.operands:
            if not _inside(operand, loop) and operand not in seen:
                seen.append(operand)
    return seen


def outline_parallel(loop: scf.ParallelOp, parent: func.FuncOp, name: str) -> func.FuncOp:
    """Moves `loop` into its own function and replaces it by a launch call."""
    captured = _captured(loop)
    constants = [v for v in captured if isinstance(v.owner, arith.ConstantOp)]
    parameters = list(parent.body.block.args)
    arguments = [v for v in parameters if v in captured] + [
        v for v in captured if v not in constants and v not in parameters
    ]

    body = Block(arg_types=[*(v.type for v in arguments), IndexType(), IndexType()])
    mapping: dict[SSAValue, SSAValue] = dict(zip(arguments, body.args))
    for value, arg in zip(arguments, body.args):
        arg.name_hint = value.name_hint
    builder = Builder(InsertPoint.at_end(body))
    for value in constants:
        mapping[value] = builder.insert(value.owner.clone()).results[0]  # pyright: ignore
    lo, hi = body.args[-2], body.args[-1]
    lo.name_hint, hi.name_hint = "lo", "hi"

    def chunk(inner: Builder, linear: SSAValue, _: list[SSAValue]) -> None:
        """One iteration of the loop at a linear index: its indices, then its body."""
        linear.name_hint = "linear"
        remaining = linear
        ivs: list[SSAValue] = [remaining] * len(loop.upperBound)
        for dim in reversed(range(len(loop.upperBound))):
            extent = mapping[loop.upperBound[dim]]
            position = remaining if dim == 0 else inner.insert(
                arith.RemUIOp(remaining, extent)).result
            if dim:
                remaining = inner.insert(arith.DivUIOp(remaining, extent)).result
            lower = mapping[loop.lowerBound[dim]]
            stride = mapping[loop.step[dim]]
            scaled = inner.insert(arith.MuliOp(position, stride)).result
            ivs[dim] = inner.insert(arith.AddiOp(lower, scaled)).result
        for arg, iv in zip(loop.body.block.args, ivs):
            arg.replace_all_uses_with(iv)
        # The body's ops move (a copy of a large body cost a tenth of a compile).
        for op in list(loop.body.block.ops):
            op.detach()
            if isinstance(op, scf.ReduceOp):
                op.erase()
            else:
                inner.insert(op)

    # State the iterations share (scratch and its key, `emit.Prologue`): once per chunk.
    for op in [o for o in loop.body.block.ops if CHUNK_PROLOGUE in o.attributes]:
        op.detach()
        del op.attributes[CHUNK_PROLOGUE]
        builder.insert(op)
    for_loop(builder, lo, hi, 1, chunk)
    builder.insert(func.ReturnOp())
    outlined = func.FuncOp(
        name, ([v.type for v in body.args], []), Region(body), visibility="private"
    )
    for value in captured:  # the moved ops read the function's arguments and constants
        if value in mapping:
            value.replace_uses_with_if(
                mapping[value], lambda use: _within(use.operation, outlined))

    # The launch: total = product of the extents, then the declared launcher.
    call_builder = Builder(InsertPoint.before(loop))
    total: SSAValue | None = None
    for lower, upper, stride in zip(loop.lowerBound, loop.upperBound, loop.step):
        span = call_builder.insert(arith.SubiOp(upper, lower)).result
        one = call_builder.insert(arith.ConstantOp(IntegerAttr(1, IndexType()))).result
        rounded = call_builder.insert(
            arith.SubiOp(call_builder.insert(arith.AddiOp(span, stride)).result, one)
        ).result
        count = call_builder.insert(arith.DivUIOp(rounded, stride)).result
        total = count if total is None else call_builder.insert(arith.MuliOp(total, count)).result
    assert total is not None
    launcher = LAUNCH_PREFIX + name
    call_builder.insert(func.CallOp(launcher, [*arguments, total], []))
    declaration = func.FuncOp.external(
        launcher, [*(v.type for v in arguments), IndexType()], []
    )
    Rewriter.erase_op(loop)
    module_block = parent.parent_block()
    assert module_block is not None
    module_block.insert_op_after(outlined, parent)
    module_block.insert_op_after(declaration, outlined)
    return outlined


@dataclass(frozen=True)
class OutlineParallelPass(ModulePass):
    """Outlines every outermost scf.parallel into a chunk function + launch call."""

    name = "teir-outline-parallel"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for function in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            if function.sym_name.data.startswith(LAUNCH_PREFIX):
                continue
            count = 0
            while True:
                loop = next(
                    (
                        o for o in function.walk()
                        if isinstance(o, scf.ParallelOp)
                        and not any(isinstance(p, scf.ParallelOp) for p in _parents(o, function))
                    ),
                    None,
                )
                if loop is None:
                    break
                outline_parallel(loop, function, f"{function.sym_name.data}__parallel{count}")
                count += 1
        # Inner parallel loops run sequentially inside a chunk.
        for loop in [o for o in op.walk() if isinstance(o, scf.ParallelOp)]:
            _sequentialize(loop)


def _parents(op: Operation, stop: Operation) -> list[Operation]:
    chain: list[Operation] = []
    parent = op.parent_op()
    while parent is not None and parent is not stop:
        chain.append(parent)
        parent = parent.parent_op()
    return chain


def _sequentialize(loop: scf.ParallelOp) -> None:
    """scf.parallel -> nested scf.for, for loops already inside a parallel chunk."""
    bounds = list(zip(loop.lowerBound, loop.upperBound, loop.step))
    block = loop.body.block

    def nest(builder: Builder, ivs: list[SSAValue]) -> None:
        if len(ivs) < len(bounds):
            lower, upper, stride = bounds[len(ivs)]
            for_loop(builder, lower, upper, stride,
                     lambda inner, iv, _: nest(inner, [*ivs, iv]))
            return
        for arg, iv in zip(block.args, ivs):
            arg.replace_all_uses_with(iv)
        for op in list(block.ops):
            op.detach()
            if isinstance(op, scf.ReduceOp):
                op.erase()
            else:
                builder.insert(op)

    nest(Builder(InsertPoint.before(loop)), [])
    Rewriter.erase_op(loop)


POINTER = "ptr"
"""`launcher_signatures`' word for a memref argument: a bare `!llvm.ptr` at the llvm
level (teir_lowering.codegen.gomp_launch), whatever the memref's shape."""


def _llvm_argument(typ: Attribute) -> Attribute | str:
    if isinstance(typ, builtin.MemRefType):
        return POINTER
    return i64 if isinstance(typ, IndexType) else typ


def launcher_signatures(module: builtin.ModuleOp) -> tuple | None:
    """What the launchers `module` declares (scf level, after teir-outline-parallel)
    depend on: each launcher's and its chunk function's name and llvm argument
    types (None: no parallel loop). Kernels name their parallel loops alike
    (`kernel__parallel0`), so that many share one launcher module (`gomp_launch.launchers_ir`)."""
    declared = [f for f in module.ops if isinstance(f, func.FuncOp)
                and f.sym_name.data.startswith(LAUNCH_PREFIX) and not f.body.blocks]
    if not declared:
        return None
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    return tuple(
        (symbol, tuple(_llvm_argument(t) for t in functions[symbol].function_type.inputs))
        for launcher in declared
        for symbol in (launcher.sym_name.data[len(LAUNCH_PREFIX):], launcher.sym_name.data))
