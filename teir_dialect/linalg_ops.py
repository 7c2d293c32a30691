"""The linalg named contractions MLIR users write that xDSL 0.74 lacks,
`linalg.matmul` with MLIR's `indexing_maps = [...]` syntax, and `memref.copy`
in MLIR's custom form (`memref.copy %a, %b : T to T`, as one-shot bufferization
prints it; xDSL 0.74 reads only the generic form).

    linalg.batch_matmul ins(%a, %b : ...) outs(%c : ...)
    linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, ...] ins(...) outs(...)

Each named op here is MLIR's: fixed indexing maps and iterator types and the
body `out + a * b` (xDSL's `linalg.matmul` body), so whatever reads linalg
through `get_indexing_maps` (convert-linalg-to-teir, the numpy reference of
teir_lowering.frontends.linalg_run) takes them as it takes the generic form that
`mlir-opt --linalg-generalize-named-ops` prints. `linalg_dialect()` is xDSL's
linalg with them added and its matmul replaced; `teir_context` and teir-opt
register it under the name `linalg`.

xDSL's `linalg.matmul` parses a non-default `indexing_maps` only in the
attribute dictionary (`linalg.matmul {indexing_maps = [...]} ins(...)`), fails
with an IndexError on MLIR's keyword form, and prints neither, so a transposed
matmul printed and read back lost its transposition. The matmul here reads
both forms and prints MLIR's keyword form when the maps are not the default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    MemRefType,
    TensorType,
)
from xdsl.dialects.linalg import Linalg
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import MatmulOp as XdslMatmulOp
from xdsl.dialects.linalg.ops import YieldOp
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException


def _maps(*results: str) -> tuple[AffineMap, ...]:
    """Affine maps over the loop dimensions named by the letters of `results[-1]`
    and the reduction letters: `_maps("mk", "kn", "mn")` is matmul's."""
    dims = sorted({d for r in results for d in r}, key=lambda d: (d not in results[-1],
                                                                 results[-1].find(d), d))
    return tuple(
        AffineMap(len(dims), 0, tuple(AffineExpr.dimension(dims.index(d)) for d in r))
        for r in results
    )


def _check_operands(op: NamedOperation, maps: Sequence[AffineMap]) -> None:
    """ins for every map but the last, one out for the last, each of its map's rank."""
    operands = (*op.inputs, *op.outputs)
    if len(op.inputs) != len(maps) - 1 or len(op.outputs) != 1:
        raise VerifyException(
            f"{op.name} takes {len(maps) - 1} ins and 1 outs, got {len(op.inputs)} ins "
            f"and {len(op.outputs)} outs"
        )
    extents: dict[int, tuple[int, int]] = {}  # loop dimension -> (extent, operand)
    for number, (operand, map_) in enumerate(zip(operands, maps)):
        typ = operand.type
        shape = typ.get_shape() if isinstance(typ, MemRefType | TensorType) else ()
        if len(shape) != len(map_.results):
            raise VerifyException(
                f"{op.name}: an operand of type {typ} has rank {len(shape)}; its indexing "
                f"map {map_} expects rank {len(map_.results)}"
            )
        for extent, result in zip(shape, map_.results):
            if not isinstance(result, AffineDimExpr) or extent == DYNAMIC_INDEX:
                continue
            seen, first = extents.setdefault(result.position, (extent, number))
            if seen != extent:
                raise VerifyException(
                    f"{op.name}: loop dimension d{result.position} has extent {seen} in "
                    f"operand #{first} and {extent} in operand #{number} ({typ})"
                )


class _MulAdd(NamedOperation):
    """A named op whose body is `out + a * b` (xDSL's matmul body)."""

    @classmethod
    def get_hidden_region(
        cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]
    ) -> Region:
        types = cls.body_arg_types((*inputs, *outputs))
        if len(inputs) != 2 or len(outputs) != 1:  # verify_ names the operand counts
            return Region(Block([YieldOp()], arg_types=types))
        out = types[-1]
        if all(isinstance(t, AnyFloat) for t in types) and any(
                t != out and t.bitwidth != out.bitwidth for t in types[:2]):
            # mixed precision (f16 x f16 -> f32): each input cast to out's type first,
            # as MLIR's named ops do (convert-linalg-to-teir refuses it by name)
            block = Block(arg_types=types)
            ops: list[Operation] = []

            def cast(arg: SSAValue) -> SSAValue:
                if arg.type == out:
                    return arg
                wider = arg.type.bitwidth < out.bitwidth  # pyright: ignore
                ops.append(op := (arith.ExtFOp if wider else arith.TruncFOp)(arg, out))
                return op.result

            a, b = cast(block.args[0]), cast(block.args[1])
            ops.append(product := arith.MulfOp(a, b))
            ops.append(total := arith.AddfOp(product, block.args[2]))
            block.add_ops([*ops, YieldOp(total)])
            return Region(block)
        return XdslMatmulOp.get_hidden_region.__func__(cls, inputs, outputs)  # pyright: ignore


class _Contraction(_MulAdd):
    """A named contraction: fixed maps, `out + a * b`."""

    MAPS: ClassVar[tuple[AffineMap, ...]]

    @classmethod
    def parse(cls, parser: Parser) -> _Contraction:
        """MLIR's form; `indexing_maps = [...]` (MLIR 20) only with the op's own maps."""
        start = parser.pos
        if parser.parse_optional_characters("indexing_maps") is not None:
            parser.parse_punctuation("=")
            maps = parser.parse_attribute()
            if maps != ArrayAttr(AffineMapAttr(m) for m in cls.MAPS):
                parser.raise_error(
                    f"{cls.name}: TEIR reads this op with its default indexing_maps only; "
                    "write other maps as a linalg.generic (mlir-opt "
                    "--linalg-generalize-named-ops)", start, parser.pos,
                )
        return super().parse(parser)  # pyright: ignore[reportReturnType]

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        return self.MAPS

    def get_indexing_maps(self) -> ArrayAttr[AffineMapAttr]:
        return ArrayAttr(AffineMapAttr(m) for m in self.MAPS)

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        out = {r.position for r in self.MAPS[-1].results}  # pyright: ignore
        return ArrayAttr(
            IteratorTypeAttr.parallel() if d in out else IteratorTypeAttr.reduction()
            for d in range(self.MAPS[-1].num_dims)
        )

    def verify_(self) -> None:
        _check_operands(self, self.MAPS)


def _named(name: str, *operands: str) -> type[_Contraction]:
    cls = type(
        name.removeprefix("linalg.").title().replace("_", "") + "Op",
        (_Contraction,),
        {"name": name, "MAPS": _maps(*operands),
         "__annotations__": {"MAPS": ClassVar[tuple[AffineMap, ...]]},
         "__doc__": f"MLIR's `{name}`: {', '.join(operands[:-1])} -> {operands[-1]}."},
    )
    return irdl_op_definition(cls)


BatchMatmulOp = _named("linalg.batch_matmul", "bmk", "bkn", "bmn")
BatchMatmulTransposeAOp = _named("linalg.batch_matmul_transpose_a", "bkm", "bkn", "bmn")
BatchMatmulTransposeBOp = _named("linalg.batch_matmul_transpose_b", "bmk", "bnk", "bmn")
MatmulTransposeAOp = _named("linalg.matmul_transpose_a", "km", "kn", "mn")
MatmulTransposeBOp = _named("linalg.matmul_transpose_b", "mk", "nk", "mn")
MatvecOp = _named("linalg.matvec", "mk", "k", "m")
VecmatOp = _named("linalg.vecmat", "k", "kn", "n")
BatchMatvecOp = _named("linalg.batch_matvec", "bmk", "bk", "bm")
DotOp = _named("linalg.dot", "k", "k", "")

NAMED_CONTRACTIONS: tuple[type[_Contraction], ...] = (
    BatchMatmulOp, BatchMatmulTransposeAOp, BatchMatmulTransposeBOp, MatmulTransposeAOp,
    MatmulTransposeBOp, MatvecOp, VecmatOp, BatchMatvecOp, DotOp,
)


MATMUL = _maps("mk", "kn", "mn")


@irdl_op_definition
class MatmulOp(_MulAdd):
    """xDSL's `linalg.matmul`, with MLIR's `indexing_maps = [...]` keyword form
    read and printed (see the module docstring)."""

    name = "linalg.matmul"

    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True

    indexing_maps = prop_def(
        ArrayAttr[AffineMapAttr], default_value=ArrayAttr(AffineMapAttr(m) for m in MATMUL)
    )

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        return tuple(m.data for m in self.indexing_maps.data)

    def get_indexing_maps(self) -> ArrayAttr[AffineMapAttr]:
        return self.indexing_maps

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return XdslMatmulOp.get_iterator_types(self)  # pyright: ignore[reportArgumentType]

    @classmethod
    def parse(cls, parser: Parser) -> MatmulOp:
        start = parser.pos
        maps: Attribute | None = None
        if parser.parse_optional_characters("indexing_maps") is not None:
            parser.parse_punctuation("=")
            maps = parser.parse_attribute()
            if not (
                isinstance(maps, ArrayAttr)
                and len(maps.data) == 3
                and all(isinstance(m, AffineMapAttr) for m in maps.data)
            ):
                parser.raise_error(
                    "linalg.matmul: indexing_maps must be a list of three affine maps "
                    "(a, b, out)", start, parser.pos,
                )
        op = super().parse(parser)
        if maps is not None:
            op.properties["indexing_maps"] = maps
        return op  # pyright: ignore[reportReturnType]

    def print(self, printer: Printer) -> None:
        if tuple(m.data for m in self.indexing_maps.data) != MATMUL:
            printer.print_string(" indexing_maps = ")
            printer.print_attribute(self.indexing_maps)
        super().print(printer)

    def verify_(self) -> None:
        maps = [m.data for m in self.indexing_maps.data]
        if len(maps) != 3 or any(m.num_dims != 3 or m.num_symbols for m in maps):
            raise VerifyException(
                "linalg.matmul: indexing_maps must be three maps of three dimensions "
                f"(m, n, k), got {self.indexing_maps}"
            )
        _check_operands(self, maps)


@irdl_op_definition
class MemrefCopyOp(IRDLOperation):
    """`memref.copy` with MLIR's custom form; xDSL's op otherwise."""

    name = "memref.copy"

    source = operand_def(MemRefType)
    destination = operand_def(MemRefType)

    traits = traits_def(MemoryWriteEffect(), MemoryReadEffect())

    assembly_format = (
        "$source `,` $destination attr-dict `:` type($source) `to` type($destination)"
    )

    def __init__(self, source: SSAValue, destination: SSAValue):
        super().__init__(operands=[source, destination])

    verify_ = memref.CopyOp.verify_


def memref_dialect() -> Dialect:
    """xDSL's memref with MLIR's custom form of memref.copy."""
    ops = [op for op in memref.MemRef.operations if op.name != MemrefCopyOp.name]
    return Dialect("memref", [*ops, MemrefCopyOp], list(memref.MemRef.attributes))


def linalg_dialect() -> Dialect:
    """xDSL's linalg with the named contractions above and MLIR's matmul syntax."""
    ops = [op for op in Linalg.operations if op.name != MatmulOp.name]
    return Dialect("linalg", [*ops, MatmulOp, *NAMED_CONTRACTIONS], list(Linalg.attributes))


DIALECTS = {"linalg": linalg_dialect, "memref": memref_dialect}
"""The dialects TEIR's tools register in place of xDSL's of the same name."""
