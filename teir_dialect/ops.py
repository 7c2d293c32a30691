"""The teir ops: `teir.config` and its records (`teir.axis`, `teir.primitive`) and
schedule (`teir.schedule`, `teir.iter`, `teir.invoke`). Each op checks what it can
alone; the rules relating records to each other are in `teir_dialect.verifier`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, NoTerminator
from xdsl.utils.exceptions import VerifyException

from teir_dialect.attributes import (
    EpilogueAttr,
    GuardAttr,
    GuardTermAttr,
    KernelAttr,
    PolicyAttr,
    parse_optional_guard,
)
from teir_dialect.gemm import KERNEL_ATTR, match_contraction
from teir_dialect.ids import (
    StringPropertiesOp,
    TeirId,
    id_text,
    make_id,
    parse_id,
    parse_id_list,
    parse_int64,
    print_id,
    print_id_list,
    unescape_strings,
)
from teir_dialect.vocabulary import (
    TENSOR_NAMES,
    DataType,
    GuardKind,
    OperationKind,
    Policy,
    Role,
    parse_enum,
    spelled,
)

BF16_PRODUCTS = "bf16_products"
"""A BF16 Contraction's metadata key: how its products reach the f32 sums.
"sequential" (the default): one fused multiply-add per product in k order, as the
reference; "pairs": an opt-in for AVX512-BF16 hosts, two k steps per `vdpbf16ps`,
whose two products are summed before they are added (a different rounding, and
bf16 subnormals read as zero); the spec lets metadata carry more keys."""

BF16_PRODUCT_MODES = ("sequential", "pairs")

MAX_SCHEDULE_DEPTH = 128
"""Deepest nesting of iteration nodes the tools accept (xDSL's printer, parser and
verifier recurse per nesting level): the record importer and the verifier check it,
the teir.iter parser stops there, and `limits.recursion_room` gives xDSL's recursion
the stack it needs."""

RECORD_RULES: list[Callable[[ConfigOp], None]] = []
"""The rules relating a configuration's records to each other, which
`teir.config` checks after its own: `teir_dialect.verifier` registers them on
import (it reads these ops, so this module cannot import it), and
`teir_dialect.dialect`, which every user of the ops loads through the package,
imports that module."""



# --------------------------------------------------------------------------
# Records: axes and primitives
# --------------------------------------------------------------------------


def _parse_int_list(parser: Parser, what: str) -> list[int]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parse_int64(parser, what)
    )


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    with printer.in_square_brackets():
        printer.print_list(values, lambda v: printer.print_string(str(v)))


@irdl_op_definition
class AxisOp(StringPropertiesOp):
    """A TEIR-Axes entry: extent and per-tensor byte strides and offsets."""

    name = "teir.axis"

    id = prop_def(TeirId)
    extent = prop_def(IntegerAttr[IntegerType])
    strides = prop_def(DenseArrayBase)
    offsets = prop_def(DenseArrayBase)

    traits = lazy_traits_def(lambda: (HasParent(ConfigOp),))

    def __init__(
        self,
        id: str | int,
        extent: int,
        strides: Sequence[int],
        offsets: Sequence[int],
    ):
        super().__init__(
            properties={
                "id": make_id(id),
                "extent": IntegerAttr(extent, i64),
                "strides": DenseArrayBase.from_list(i64, list(strides)),
                "offsets": DenseArrayBase.from_list(i64, list(offsets)),
            }
        )

    @property
    def axis_id(self) -> str:
        return id_text(self.id)

    @property
    def size(self) -> int:
        return self.extent.value.data

    @property
    def stride_values(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.strides.get_values())

    @property
    def offset_values(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.offsets.get_values())

    def stride_on(self, tensor: str) -> int:
        return self._value_on("strides", self.stride_values, tensor)

    def offset_on(self, tensor: str) -> int:
        return self._value_on("offsets", self.offset_values, tensor)

    def _value_on(self, field: str, values: tuple[int, ...], tensor: str) -> int:
        index = self.config.tensor_index(tensor)
        if index >= len(values):
            raise VerifyException(
                f"axis rule: axis '{self.axis_id}' has no {field[:-1]} for {tensor}; "
                "give one per tensor"
            )
        return values[index]

    @property
    def config(self) -> ConfigOp:
        return enclosing_config(self)

    def verify_(self) -> None:
        """The rules of one axis record (its references are the config's to check)."""
        axis = self.axis_id
        if self.size <= 0:
            raise VerifyException(
                f"axis rule: axis '{axis}' has extent {self.size}; "
                "an extent is a positive integer"
            )
        tensors = self.config.tensor_count
        for field, values in (
            ("strides", self.stride_values),
            ("offsets", self.offset_values),
        ):
            if len(values) != tensors:
                raise VerifyException(
                    f"axis rule: axis '{axis}' has {len(values)} {field} but the "
                    f"configuration has {tensors} tensors; give one per tensor"
                )
        for index, stride in enumerate(self.stride_values):
            if stride < 0:
                raise VerifyException(
                    f"axis rule: axis '{axis}' has stride {stride} on "
                    f"{_tensor_name(tensors, index)}; strides are non-negative byte counts"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_id(printer, self.id)
        printer.print_string(f" extent {self.size} strides ")
        _print_int_list(printer, self.stride_values)
        printer.print_string(" offsets ")
        _print_int_list(printer, self.offset_values)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> AxisOp:
        axis_id = parse_id(parser)
        parser.parse_keyword("extent")
        extent = parse_int64(parser, "an extent")
        parser.parse_keyword("strides")
        strides = _parse_int_list(parser, "a stride")
        parser.parse_keyword("offsets")
        offsets = _parse_int_list(parser, "an offset")
        op = AxisOp(0, extent, strides, offsets)
        op.properties["id"] = axis_id
        if attrs := parser.parse_optional_attr_dict_with_keyword():
            op.attributes |= attrs.data
        return op


@irdl_op_definition
class PrimitiveOp(StringPropertiesOp):
    """A TEIR-Primitives entry: an operation over role axes, with metadata."""

    name = "teir.primitive"

    id = prop_def(TeirId)
    operation = prop_def(StringAttr)
    roles = prop_def(DictionaryAttr)
    metadata = prop_def(DictionaryAttr)

    traits = lazy_traits_def(lambda: (HasParent(ConfigOp),))

    def __init__(
        self,
        id: str | int,
        operation: str,
        roles: dict[str, Sequence[str | int | StringAttr | IntegerAttr]],
        metadata: DictionaryAttr | dict[str, Attribute],
    ):
        if not isinstance(metadata, DictionaryAttr):
            metadata = DictionaryAttr(metadata)
        super().__init__(
            properties={
                "id": make_id(id),
                "operation": StringAttr(operation),
                "roles": DictionaryAttr(
                    {
                        role: ArrayAttr(
                            [a if isinstance(a, Attribute) else make_id(a) for a in axes]
                        )
                        for role, axes in roles.items()
                    }
                ),
                "metadata": metadata,
            }
        )

    @property
    def primitive_id(self) -> str:
        return id_text(self.id)

    @property
    def kind(self) -> OperationKind:
        """The operation (a VerifyException for one the spec does not name)."""
        if (kind := parse_enum(OperationKind, self.operation.data)) is None:
            raise VerifyException(
                f"primitive rule: primitive '{self.primitive_id}' has operation "
                f"'{self.operation.data}'; expected {spelled(OperationKind)}"
            )
        return kind

    def role_ids(self, role: str) -> tuple[Attribute, ...]:
        """The axis ids of a role in order (empty when the role is absent)."""
        axes = self.roles.data.get(role)
        return tuple(axes.data) if isinstance(axes, ArrayAttr) else ()

    def role_axes(self, role: str) -> tuple[AxisOp, ...]:
        config = self.config
        return tuple(config.axis(id_text(a)) for a in self.role_ids(role))

    @property
    def all_role_axes(self) -> tuple[AxisOp, ...]:
        """Role axes in loop order: M..., N..., K... (outermost first)."""
        return tuple(axis for role in self.kind.roles for axis in self.role_axes(role))

    @property
    def data_type(self) -> DataType:
        """The metadata's data type (a VerifyException when it names none)."""
        value = self.metadata.data.get("data_type")
        data_type = parse_enum(DataType, value.data) if isinstance(value, StringAttr) else None
        if data_type is None:
            raise VerifyException(
                f"primitive rule: primitive '{self.primitive_id}' needs metadata "
                f"data_type, one of {spelled(DataType)}; got {value or 'none'}"
            )
        return data_type

    @property
    def element_width(self) -> int:
        return self.data_type.width

    @property
    def pairs_bf16_products(self) -> bool:
        """Whether the metadata opts into `vdpbf16ps` (BF16_PRODUCTS = "pairs")."""
        return self.metadata.data.get(BF16_PRODUCTS) == StringAttr("pairs")

    @property
    def accessed_tensors(self) -> tuple[str, ...]:
        return self.kind.tensors_accessed(self.config.tensor_count)

    def matched_kernel(self) -> KernelAttr:
        """Table 10.6.1's kernel for this Contraction, as `teir-match-gemm` records it."""
        return KernelAttr.from_match(match_contraction(self))

    @property
    def config(self) -> ConfigOp:
        return enclosing_config(self)

    def verify_(self) -> None:
        """The rules of one primitive record; its axis references, stride alignment
        and element types are checked with the configuration's tables (ConfigOp)."""
        prim = self.primitive_id
        kind = self.kind
        for role in self.roles.data:
            if role not in kind.roles:
                raise VerifyException(
                    f"operation constraint: primitive '{prim}' ({kind}) has role "
                    f"'{role}'; the roles of {kind} are {', '.join(kind.roles)}"
                )
        seen: dict[str, str] = {}
        for role in kind.roles:
            axes = self.roles.data.get(role)
            if axes is None:
                raise VerifyException(
                    f"primitive rule: primitive '{prim}' ({kind}) defines no role "
                    f"list for {role}; give one, possibly empty"
                )
            if not isinstance(axes, ArrayAttr):
                raise VerifyException(
                    f"primitive rule: role {role} of primitive '{prim}' must be a list "
                    "of axis ids"
                )
            for ref in axes.data:
                axis = id_text(ref)
                if axis in seen:
                    raise VerifyException(
                        f"axis reuse: primitive '{prim}' names axis '{axis}' twice "
                        f"(in roles {seen[axis]} and {role})"
                    )
                seen[axis] = role
        _ = self.data_type  # raises for a missing or unknown data type
        tensors = self.config.tensor_count
        if kind is OperationKind.CONTRACTION and tensors != 3:
            raise VerifyException(
                f"operation constraint: primitive '{prim}' is a Contraction, which "
                f"needs three tensors (in0, in1, out); the configuration has {tensors}"
            )
        if kind is OperationKind.COPY and tensors != 2:
            raise VerifyException(
                f"operation constraint: primitive '{prim}' is a Copy, a unary "
                f"operation, which needs two tensors (in0, out); the configuration "
                f"has {tensors}"
            )
        products = self.metadata.data.get(BF16_PRODUCTS)
        if products is not None:
            if not isinstance(products, StringAttr) or products.data not in BF16_PRODUCT_MODES:
                raise VerifyException(
                    f"primitive rule: primitive '{prim}' has metadata {BF16_PRODUCTS} = "
                    f"{products}; it is one of {', '.join(BF16_PRODUCT_MODES)}"
                )
            if kind is not OperationKind.CONTRACTION or self.data_type is not DataType.BF16:
                raise VerifyException(
                    f"primitive rule: primitive '{prim}' ({kind}, {self.data_type}) has "
                    f"metadata {BF16_PRODUCTS}; only a BF16 Contraction has one"
                )
        kernel = self.attributes.get(KERNEL_ATTR)
        if kernel is not None and (
            kind is not OperationKind.CONTRACTION or not isinstance(kernel, KernelAttr)
        ):
            raise VerifyException(
                f"kernel rule: primitive '{prim}' ({kind}) carries a '{KERNEL_ATTR}' "
                "attribute; only a Contraction carries one, a #teir.kernel"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_id(printer, self.id)
        printer.print_string(f" {self.kind} ")
        with printer.in_braces():
            printer.print_list(
                self.roles.data.items(),
                lambda item: (
                    printer.print_string(f"{item[0]} = "),
                    print_id_list(printer, item[1].data),  # pyright: ignore
                ),
            )
        printer.print_string(" ")
        printer.print_attribute(self.metadata)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> PrimitiveOp:
        prim_id = parse_id(parser)
        operation = parser.parse_identifier()

        def parse_role() -> tuple[str, list[StringAttr | IntegerAttr]]:
            role = parser.parse_identifier()
            parser.parse_punctuation("=")
            return role, parse_id_list(parser)

        roles = dict(parser.parse_comma_separated_list(parser.Delimiter.BRACES, parse_role))
        metadata = unescape_strings(parser.parse_attribute())
        if not isinstance(metadata, DictionaryAttr):
            parser.raise_error("expected the primitive's metadata dictionary")
        op = PrimitiveOp(0, operation, roles, metadata)
        op.properties["id"] = prim_id
        if attrs := parser.parse_optional_attr_dict_with_keyword():
            op.attributes |= attrs.data
        return op


# --------------------------------------------------------------------------
# Schedule
# --------------------------------------------------------------------------


_PARSE_DEPTH: ContextVar[int] = ContextVar("teir_iter_parse_depth", default=0)
"""How many teir.iter regions the parser is inside: it stops at MAX_SCHEDULE_DEPTH,
before xDSL's recursive parser runs out of Python's stack (plain xdsl-opt too)."""


def _single_block(region: Region) -> Block:
    if not region.blocks:
        region.add_block(Block())
    return region.blocks[0]


def _parse_body(parser: Parser) -> Region:
    region = parser.parse_region()
    _single_block(region)
    return region


def _print_body(printer: Printer, region: Region) -> None:
    printer.print_string(" ")
    printer.print_region(region, print_entry_block_args=False, print_empty_block=False)


class ScheduleNode(StringPropertiesOp):
    """Shared behaviour of iteration and invocation nodes."""

    id = prop_def(TeirId)
    guard = opt_prop_def(GuardAttr)

    @property
    def node_id(self) -> str:
        return id_text(self.id)

    NODE_KIND: ClassVar[str] = "schedule node"

    def ancestors(self) -> list[IterOp]:
        """Iteration nodes from the root down to (not including) this node."""
        chain: list[IterOp] = []
        op = self.parent_op()
        while isinstance(op, IterOp):
            chain.append(op)
            op = op.parent_op()
        chain.reverse()
        return chain

    @property
    def config(self) -> ConfigOp:
        return enclosing_config(self)

    def verify_children(self, block: Block, owner: str) -> None:
        for child in block.ops:
            if not isinstance(child, ScheduleNode):
                raise VerifyException(
                    f"schedule rule: {owner} may hold only teir.iter and teir.invoke "
                    f"nodes, found {child.name}"
                )


@irdl_op_definition
class ScheduleOp(IRDLOperation):
    """TEIR-Schedule: its region lists the roots of the forest in order."""

    name = "teir.schedule"

    body = region_def("single_block")

    traits = lazy_traits_def(lambda: (NoTerminator(), HasParent(ConfigOp)))

    def __init__(self, roots: Sequence[Operation] = ()):
        super().__init__(regions=[Region(Block(roots))])

    @property
    def roots(self) -> list[ScheduleNode]:
        return [op for op in self.body.block.ops if isinstance(op, ScheduleNode)]

    def walk_nodes(self) -> Iterator[ScheduleNode]:
        """All nodes in depth-first pre-order."""
        for op in self.body.walk():
            if isinstance(op, ScheduleNode):
                yield op

    def verify_(self) -> None:
        for child in self.body.block.ops:
            if not isinstance(child, ScheduleNode):
                raise VerifyException(
                    "schedule rule: the roots of teir.schedule are teir.iter and "
                    f"teir.invoke nodes, found {child.name}"
                )

    def print(self, printer: Printer) -> None:
        _print_body(printer, self.body)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> ScheduleOp:
        region = _parse_body(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        return ScheduleOp.create(
            regions=[region], attributes=attrs.data if attrs else {}
        )


@irdl_op_definition
class IterOp(ScheduleNode):
    """An iteration node: iterates one axis, entering its children in order."""

    name = "teir.iter"

    axis = prop_def(TeirId)
    policy = prop_def(PolicyAttr)
    body = region_def("single_block")

    traits = lazy_traits_def(lambda: (NoTerminator(), HasParent(IterOp, ScheduleOp)))

    NODE_KIND: ClassVar[str] = "iteration node"

    def __init__(
        self,
        id: str | int,
        axis: str | int,
        children: Sequence[Operation] = (),
        *,
        policy: str = "sequential",
        guard: GuardAttr | None = None,
    ):
        super().__init__(
            properties={
                "id": make_id(id),
                "axis": make_id(axis),
                "policy": PolicyAttr(Policy(policy)),
                "guard": guard,
            },
            regions=[Region(Block(children))],
        )

    @property
    def axis_id(self) -> str:
        return id_text(self.axis)

    @property
    def parallel(self) -> bool:
        return self.policy.data == Policy.PARALLEL

    @property
    def children(self) -> list[ScheduleNode]:
        return [op for op in self.body.block.ops if isinstance(op, ScheduleNode)]

    # The children's ends in O(1): `children` lists them all, which a check made
    # for every node of a wide schedule must not do.

    @property
    def first_child(self) -> ScheduleNode | None:
        return self.body.block.first_op  # pyright: ignore[reportReturnType]

    @property
    def last_child(self) -> ScheduleNode | None:
        return self.body.block.last_op  # pyright: ignore[reportReturnType]

    @property
    def only_child(self) -> ScheduleNode | None:
        """The child when there is exactly one, else None."""
        block = self.body.block
        first = block.first_op
        return first if first is not None and first is block.last_op else None  # pyright: ignore

    def axis_op(self) -> AxisOp:
        return self.config.axis(self.axis_id)

    def verify_(self) -> None:
        """The rules of one iteration node; its axis, guard and path are checked
        with the configuration's tables (ConfigOp)."""
        node = self.node_id
        self.verify_children(self.body.block, f"iteration node '{node}'")
        if self.body.block.first_op is None:
            raise VerifyException(
                f"iteration node rule: iteration node '{node}' has no children; "
                "an iteration node has at least one child"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_id(printer, self.id)
        printer.print_string(" over ")
        print_id(printer, self.axis)
        if self.policy.data is not Policy.SEQUENTIAL:
            printer.print_string(" ")
            printer.print_string(self.policy.data)
        if self.guard is not None:
            printer.print_string(" ")
            self.guard.print_terms(printer)
        _print_body(printer, self.body)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> IterOp:
        depth = _PARSE_DEPTH.get() + 1
        if depth > MAX_SCHEDULE_DEPTH:
            parser.raise_error(
                f"schedule depth: this teir.iter is nested {depth} iteration nodes "
                f"deep; TEIR accepts at most {MAX_SCHEDULE_DEPTH}"
            )
        node_id = parse_id(parser)
        parser.parse_keyword("over")
        axis = parse_id(parser)
        at = parser.pos
        word = parser.parse_optional_identifier_or_str_literal() or Policy.SEQUENTIAL
        if (policy := parse_enum(Policy, word)) is None:
            parser.raise_error(
                f"iteration node rule: iteration node '{id_text(node_id)}' has policy "
                f"'{word}'; expected {spelled(Policy)}", at, parser.pos
            )
        guard = parse_optional_guard(parser)
        entered = _PARSE_DEPTH.set(depth)
        try:
            region = _parse_body(parser)
        finally:
            _PARSE_DEPTH.reset(entered)
        properties: dict[str, Attribute] = {
            "id": node_id,
            "axis": axis,
            "policy": PolicyAttr(policy),
        }
        if guard is not None:
            properties["guard"] = guard
        attrs = parser.parse_optional_attr_dict_with_keyword()
        return IterOp.create(
            properties=properties,
            regions=[region],
            attributes=attrs.data if attrs else {},
        )


@irdl_op_definition
class InvokeOp(ScheduleNode):
    """An invocation node: a leaf that invokes a primitive on the current tiles."""

    name = "teir.invoke"

    primitive = prop_def(TeirId)

    traits = lazy_traits_def(lambda: (HasParent(IterOp, ScheduleOp),))

    NODE_KIND: ClassVar[str] = "invocation"

    def __init__(
        self, id: str | int, primitive: str | int, *, guard: GuardAttr | None = None
    ):
        super().__init__(
            properties={
                "id": make_id(id),
                "primitive": make_id(primitive),
                "guard": guard,
            }
        )

    @property
    def primitive_id(self) -> str:
        return id_text(self.primitive)

    def primitive_op(self) -> PrimitiveOp:
        return self.config.primitive(self.primitive_id)

    def fused_epilogue(self) -> EpilogueAttr | None:
        """The Zero and ReLU this Contraction invocation's kernel can perform, as
        `teir-fuse-epilogues` records them (None: none, or no GEMM/BRGEMM kernel).

        The Zero is the node just before the invocation, the ReLU the node just
        after it; or just before / after the sequential loops whose first / last
        node the invocation is (`_takes_epilogue`), and the fused code runs in their
        first / last iteration: the inverse of teir-canonicalize-guards' hoisting.
        Either way nothing runs between the two, both cover exactly the same out
        elements (`_same_tile`), and the kernel writes each of them once, after its
        final accumulation (the matched GEMM/BRGEMM has distinct C addresses). So
        starting from 0 is the Zero before it, and relu applied to each final value
        before its store is the ReLU after it, under the Zero's / ReLU's own guard,
        which holds at the same loop indices.
        """
        if self.guard is not None:
            return None
        prim = self.primitive_op()
        kernel = prim.attributes.get(KERNEL_ATTR)
        if not (prim.kind is OperationKind.CONTRACTION and isinstance(kernel, KernelAttr)
                and kernel.is_gemm):
            return None
        zero = self._neighbour(GuardKind.FIRST, OperationKind.ZERO)
        relu = self._neighbour(GuardKind.LAST, OperationKind.RELU)
        if zero is None and relu is None:
            return None
        return EpilogueAttr(*(zero or (None, ())), *(relu or (None, ())))

    def _neighbour(
        self, kind: GuardKind, operation: OperationKind
    ) -> tuple[Attribute, tuple[GuardTermAttr, ...]] | None:
        """The id of the `operation` invocation just before (FIRST) / after (LAST)
        this one or the loops it is the first / last node of, of this tile, and
        those loops' first / last terms, outermost first."""
        node: Operation = self
        loops: list[IterOp] = []
        while (neighbour := node.prev_op if kind is GuardKind.FIRST else node.next_op) is None:
            parent = node.parent_op()
            if not (isinstance(parent, IterOp) and _takes_epilogue(parent)):
                return None
            loops.append(parent)
            node = parent
        if not isinstance(neighbour, InvokeOp):
            return None
        fused = neighbour.primitive_op()
        if fused.kind is not operation or not _same_tile(fused, self.primitive_op()):
            return None
        return neighbour.id, tuple(GuardTermAttr(kind, loop.axis) for loop in reversed(loops))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_id(printer, self.id)
        printer.print_string(" -> ")
        print_id(printer, self.primitive)
        if self.guard is not None:
            printer.print_string(" ")
            self.guard.print_terms(printer)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> InvokeOp:
        node_id = parse_id(parser)
        parser.parse_punctuation("->")
        primitive = parse_id(parser)
        guard = parse_optional_guard(parser)
        properties: dict[str, Attribute] = {"id": node_id, "primitive": primitive}
        if guard is not None:
            properties["guard"] = guard
        attrs = parser.parse_optional_attr_dict_with_keyword()
        return InvokeOp.create(
            properties=properties, attributes=attrs.data if attrs else {}
        )


def _takes_epilogue(loop: IterOp) -> bool:
    """A loop a Zero before / ReLU after it may sink into: unguarded, sequential, over
    an axis that moves out by neither stride nor offset (the same out tile in every
    iteration)."""
    if loop.parallel or loop.guard is not None:
        return False
    axis = loop.axis_op()
    return not axis.stride_on("out") and not axis.offset_on("out")


def _same_tile(elementwise: PrimitiveOp, contraction: PrimitiveOp) -> bool:
    """A Zero/ReLU covers exactly the out elements of a Contraction's tile: the same
    data type, the same M and N axes (so the same out addresses, role-axis offsets
    included), and no K axis of the Contraction shifts out by an offset."""
    return (
        elementwise.data_type == contraction.data_type
        and all(
            [id_text(a) for a in elementwise.role_ids(role)]
            == [id_text(a) for a in contraction.role_ids(role)]
            for role in (Role.M, Role.N)
        )
        and all(axis.offset_on("out") == 0 for axis in contraction.role_axes(Role.K))
    )


# --------------------------------------------------------------------------
# The configuration
# --------------------------------------------------------------------------


@irdl_op_definition
class ConfigOp(IRDLOperation):
    """A whole TEIR configuration over its tensors (memref operands, in order).

    Byte strides and offsets are relative to the start of each memref's data.
    """

    name = "teir.config"

    tensors = var_operand_def(MemRefType)
    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    def __init__(self, tensors: Sequence[Operation | object], body: Sequence[Operation]):
        super().__init__(operands=[tensors], regions=[Region(Block(body))])

    # -- lookups used by the verifiers, passes and lowering ---------------

    @property
    def tensor_count(self) -> int:
        return len(self.tensors)

    @property
    def tensor_names(self) -> tuple[str, ...]:
        if self.tensor_count not in TENSOR_NAMES:
            raise VerifyException(
                f"operation constraint: a configuration has 2 tensors (in0, out) or "
                f"3 tensors (in0, in1, out), got {self.tensor_count}"
            )
        return TENSOR_NAMES[self.tensor_count]

    def tensor_index(self, tensor: str) -> int:
        return self.tensor_names.index(tensor)

    def tensor_type(self, tensor: str) -> MemRefType:
        tensor_type = self.tensors[self.tensor_index(tensor)].type
        if not isinstance(tensor_type, MemRefType):
            raise VerifyException(
                f"operation constraint: tensor {tensor} must be a memref, got {tensor_type}"
            )
        return tensor_type

    @property
    def axes(self) -> list[AxisOp]:
        return [op for op in self.body.block.ops if isinstance(op, AxisOp)]

    @property
    def primitives(self) -> list[PrimitiveOp]:
        return [op for op in self.body.block.ops if isinstance(op, PrimitiveOp)]

    @property
    def schedule(self) -> ScheduleOp:
        for op in self.body.block.ops:
            if isinstance(op, ScheduleOp):
                return op
        raise VerifyException("schedule rule: teir.config has no teir.schedule")

    def find_axis(self, axis_id: str) -> AxisOp | None:
        return self._record(AxisOp, axis_id)  # pyright: ignore[reportReturnType]

    def axis(self, axis_id: str) -> AxisOp:
        if (axis := self.find_axis(axis_id)) is None:
            raise VerifyException(f"axis rule: no axis '{axis_id}'")
        return axis

    def find_primitive(self, primitive_id: str) -> PrimitiveOp | None:
        return self._record(PrimitiveOp, primitive_id)  # pyright: ignore[reportReturnType]

    def primitive(self, primitive_id: str) -> PrimitiveOp:
        if (prim := self.find_primitive(primitive_id)) is None:
            raise VerifyException(f"primitive rule: no primitive '{primitive_id}'")
        return prim

    def _record(self, kind: type, ident: str) -> AxisOp | PrimitiveOp | None:
        """The axis or primitive record with this id, in O(1): a table kept on the op
        and rebuilt when a lookup finds it stale (passes add, remove and rename
        records; a hit is checked to still be this config's record with this id)."""
        table = self.__dict__.get("_records")
        if table is not None:
            found = table.get((kind, ident))
            if (
                found is not None
                and found.parent is self.body.block
                and id_text(found.id) == ident
            ):
                return found
        table = {}
        for op in self.body.block.ops:
            if isinstance(op, (AxisOp, PrimitiveOp)):
                table.setdefault((type(op), id_text(op.id)), op)
        self.__dict__["_records"] = table
        return table.get((kind, ident))

    def forget_records(self) -> None:
        """Drops the lookup table: for a pass that replaces the body wholesale (a
        stale table would still be rebuilt on the first miss, but not freed)."""
        self.__dict__.pop("_records", None)

    def register(self, op: AxisOp | PrimitiveOp) -> None:
        """Puts a record just inserted (or renamed) into the lookup table, so that
        a pass adding records one at a time does not rebuild it per record."""
        table = self.__dict__.get("_records")
        if table is None:
            return
        key = (type(op), id_text(op.id))
        known = table.get(key)
        if known is None or known.parent is not self.body.block or id_text(known.id) != key[1]:
            table[key] = op

    # -- verification -------------------------------------------------------

    def verify_(self) -> None:
        names = self.tensor_names  # raises for a wrong tensor count
        for name in names:
            self.tensor_type(name)
        schedules = 0
        for op in self.body.block.ops:
            if isinstance(op, ScheduleOp):
                schedules += 1
            elif not isinstance(op, (AxisOp, PrimitiveOp)):
                raise VerifyException(
                    "structure: teir.config holds teir.axis, teir.primitive and one "
                    f"teir.schedule, found {op.name}"
                )
        if schedules != 1:
            raise VerifyException(
                f"schedule rule: teir.config holds exactly one teir.schedule, "
                f"found {schedules}"
            )
        if not RECORD_RULES:
            raise VerifyException("teir.config: the record rules (teir_dialect.verifier) "
                                  "are not loaded")
        for rules in RECORD_RULES:
            rules(self)

    def print(self, printer: Printer) -> None:
        with printer.in_parens():
            printer.print_list(self.tensors, printer.print_operand)
        printer.print_string(" : ")
        with printer.in_parens():
            printer.print_list((t.type for t in self.tensors), printer.print_attribute)
        _print_body(printer, self.body)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> ConfigOp:
        pos = parser.pos
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        tensors = parser.resolve_operands(operands, types, pos)
        region = _parse_body(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        return ConfigOp.create(
            operands=tensors, regions=[region], attributes=attrs.data if attrs else {}
        )



def enclosing_config(op: Operation) -> ConfigOp:
    """The teir.config around a record or schedule node."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ConfigOp):
        parent = parent.parent_op()
    if parent is None:
        raise VerifyException(f"{op.name} must be inside a teir.config")
    return parent


def _tensor_name(tensor_count: int, index: int) -> str:
    names = TENSOR_NAMES.get(tensor_count)
    return names[index] if names is not None and index < len(names) else f"tensor {index}"
