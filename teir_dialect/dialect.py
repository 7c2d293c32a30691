"""The `teir` dialect: TEIR configurations (axes, primitives, schedule) as xDSL IR.

A configuration is a `teir.config` op whose memref operands are the tensors
(`in0`, [`in1`,] `out`). Its body holds `teir.axis` and `teir.primitive`
records and one `teir.schedule`, whose region lists the schedule's roots in
order. A `teir.iter` region lists that iteration node's children in order, so
the tree shape of TEIR-Schedule is the nesting of the IR itself.

Ids are kept exactly as the user wrote them: a string or an integer. They are
compared by their text, so `0` and `"0"` name the same thing (and may not both
be defined). Every verifier message starts with the name of the rule it
enforces and quotes the offending ids.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, ParametrizedAttribute, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, NoTerminator
from xdsl.utils.exceptions import VerifyException

from teir_dialect.gemm import KERNEL_ATTR, KernelMatch, match_contraction
from teir_dialect.strided import (
    INDEX_LIMIT,
    Box,
    Undecided,
    index_range,
    parallel_overlap,
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

MAX_SCHEDULE_DEPTH = 128
"""Deepest nesting of iteration nodes the tools accept (xDSL's printer, parser and
verifier recurse per nesting level): the record importer and the verifier check it,
the teir.iter parser stops there, and `limits.recursion_room` gives xDSL's recursion
the stack it needs."""


# --------------------------------------------------------------------------
# Ids
# --------------------------------------------------------------------------

TeirId = StringAttr | IntegerAttr
"""A user id: string or integer, printed bare when it is an identifier."""


def make_id(value: str | int) -> StringAttr | IntegerAttr:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"an id is a string or an integer, got {value!r}")
    if isinstance(value, str) and not value.isascii() and not _is_unicode(value):
        raise ValueError(
            f"id rule: the id {value!a} holds a lone surrogate, which is not "
            "Unicode text; an id is a Unicode string or an integer"
        )
    return StringAttr(value) if isinstance(value, str) else IntegerAttr(value, i64)


def _is_unicode(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def id_text(attr: Attribute) -> str:
    """The text an id is compared and quoted by."""
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, IntegerAttr):
        return str(attr.value.data)
    raise VerifyException(f"an id must be a string or an integer, got {attr}")


def id_value(attr: Attribute) -> str | int:
    """The id as its JSON value."""
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    return id_text(attr)


def fresh_id(base: str, taken: set[str]) -> str:
    """`base`, or `base_1`, `base_2`, ...: the first not in `taken` (then taken)."""
    candidate, suffix = base, 1
    while candidate in taken:
        candidate, suffix = f"{base}_{suffix}", suffix + 1
    taken.add(candidate)
    return candidate


def print_id(printer: Printer, attr: Attribute) -> None:
    """An integer, a bare identifier, or a string literal (xDSL escapes every byte
    outside printable ASCII: `"\\C3\\A9"` for "é")."""
    if isinstance(attr, IntegerAttr):
        printer.print_string(str(attr.value.data))
    else:
        printer.print_identifier_or_string_literal(id_text(attr))


def parse_id(parser: AttrParser) -> StringAttr | IntegerAttr:
    """What print_id prints. xDSL's lexer reads a literal with escaped non-ASCII
    bytes as a bytes literal; an id takes it when it is UTF-8 text."""
    start = parser.pos
    if (number := parser.parse_optional_integer(allow_boolean=False)) is not None:
        _check_int64(parser, number, "an integer id", start)
        return IntegerAttr(number, i64)
    if (text := parser.parse_optional_identifier_or_str_literal()) is not None:
        return StringAttr(text)
    data = parser.expect(parser.parse_optional_bytes_literal, "expected an id")
    try:
        return StringAttr(data.decode())
    except UnicodeDecodeError:
        parser.raise_error(
            "id rule: an id is Unicode text, and this string literal's bytes are "
            "not UTF-8", start, parser.pos
        )


def _check_int64(parser: AttrParser, value: int, what: str, start: int) -> None:
    if not -(2**63) <= value < 2**63:
        parser.raise_error(
            f"integer range: {what} must fit in 64 bits", start, parser.pos
        )


def _parse_int64(parser: AttrParser, what: str) -> int:
    start = parser.pos
    value = parser.parse_integer(allow_boolean=False)
    _check_int64(parser, value, what, start)
    return value


def unescape_strings(attr: Attribute) -> Attribute:
    """`attr` with each BytesAttr that is UTF-8 text turned back into the StringAttr
    xDSL printed it from (its parser reads `"\\C3\\A9"` as bytes); `attr` itself
    when it holds none."""
    if isinstance(attr, BytesAttr):
        try:
            return StringAttr(attr.data.decode())
        except UnicodeDecodeError:
            return attr
    if isinstance(attr, ArrayAttr):
        items = [unescape_strings(item) for item in attr.data]
        changed = any(new is not old for new, old in zip(items, attr.data))
        return ArrayAttr(items) if changed else attr
    if isinstance(attr, DictionaryAttr):
        entries = {key: unescape_strings(value) for key, value in attr.data.items()}
        changed = any(entries[key] is not value for key, value in attr.data.items())
        return DictionaryAttr(entries) if changed else attr
    return attr


class StringPropertiesOp(IRDLOperation):
    """A teir op whose string properties (ids, metadata) may be non-ASCII. xDSL's
    generic parser reads the `"\\C3\\A9"` it prints for "é" as a BytesAttr;
    `create`, which that parser calls, turns such properties back into strings."""

    @classmethod
    def create(cls, *, properties: Mapping[str, Attribute] = {}, **kwargs: Any) -> Self:
        properties = {key: unescape_strings(value) for key, value in properties.items()}
        return super().create(properties=properties, **kwargs)


def parse_id_list(parser: AttrParser) -> list[StringAttr | IntegerAttr]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parse_id(parser)
    )


def print_id_list(printer: Printer, ids: Sequence[Attribute]) -> None:
    with printer.in_square_brackets():
        printer.print_list(ids, lambda attr: print_id(printer, attr))


# --------------------------------------------------------------------------
# Guards
# --------------------------------------------------------------------------


@irdl_attr_definition
class GuardTermAttr(ParametrizedAttribute):
    """`first(x)` or `last(x)`: the current index of axis x is 0 or |x|-1."""

    name = "teir.term"

    kind: StringAttr = param_def()
    axis: TeirId = param_def()

    def __init__(self, kind: str, axis: str | int | StringAttr | IntegerAttr):
        if not isinstance(axis, Attribute):
            axis = make_id(axis)
        super().__init__(StringAttr(kind), axis)

    def verify(self) -> None:
        if parse_enum(GuardKind, self.kind.data) is None:
            raise VerifyException(
                f"guard rule: a guard term is first(axis) or last(axis), "
                f"got '{self.kind.data}'"
            )

    @property
    def axis_text(self) -> str:
        return id_text(self.axis)

    def __str__(self) -> str:
        return f"{self.kind.data}({self.axis_text})"

    def print_term(self, printer: Printer) -> None:
        printer.print_string(self.kind.data)
        with printer.in_parens():
            print_id(printer, self.axis)

    @classmethod
    def parse_term(cls, parser: AttrParser) -> GuardTermAttr:
        kind = parser.parse_identifier()
        if parse_enum(GuardKind, kind) is None:
            parser.raise_error(
                f"guard rule: a guard term is first(axis) or last(axis), got '{kind}'"
            )
        parser.parse_punctuation("(")
        axis = parse_id(parser)
        parser.parse_punctuation(")")
        return GuardTermAttr(kind, axis)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            self.print_term(printer)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            term = cls.parse_term(parser)
        return [term.kind, term.axis]


@irdl_attr_definition
class GuardAttr(ParametrizedAttribute):
    """A conjunction of first/last terms, checked before a node is entered."""

    name = "teir.guard"

    terms: ArrayAttr[GuardTermAttr] = param_def()

    def __init__(self, terms: Sequence[GuardTermAttr]):
        super().__init__(ArrayAttr(terms))

    def verify(self) -> None:
        if not self.terms.data:
            raise VerifyException("guard rule: a guard has at least one term")

    def __str__(self) -> str:
        return ", ".join(str(term) for term in self.terms)

    def print_terms(self, printer: Printer) -> None:
        with printer.in_square_brackets():
            printer.print_list(self.terms, lambda term: term.print_term(printer))

    @classmethod
    def parse_terms(cls, parser: AttrParser) -> GuardAttr:
        return GuardAttr(
            parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: GuardTermAttr.parse_term(parser)
            )
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_list(self.terms, lambda term: term.print_term(printer))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        terms = parser.parse_comma_separated_list(
            parser.Delimiter.ANGLE, lambda: GuardTermAttr.parse_term(parser)
        )
        return [ArrayAttr(terms)]


def parse_optional_guard(parser: Parser) -> GuardAttr | None:
    if parser._current_token.text != "[":  # pyright: ignore[reportPrivateUsage]
        return None
    return GuardAttr.parse_terms(parser)


# --------------------------------------------------------------------------
# Kernel selection (teir-match-gemm)
# --------------------------------------------------------------------------

KERNEL_KINDS = ("scalar", "gemm", "brgemm", "general")
"""Lowering targets of a Contraction (Table 10.6.1); general is the loop nest."""

KERNEL_PARAMS: dict[str, tuple[str, ...]] = {
    "scalar": (),
    "general": (),
    "gemm": ("m", "n", "k", "lda", "ldb", "ldc"),
    "brgemm": ("m", "n", "k", "lda", "ldb", "ldc", "br_size", "br_stride_a", "br_stride_b"),
}
"""The integer parameters (Table 10.6.2, in elements) each kind carries."""

_ALL_KERNEL_PARAMS = KERNEL_PARAMS["brgemm"]


@irdl_attr_definition
class KernelAttr(ParametrizedAttribute):
    """The kernel `teir-match-gemm` selected for a Contraction primitive.

    Custom syntax: `#teir.kernel<scalar>`, `#teir.kernel<general>`,
    `#teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8,
    trans = "NNN">` and `#teir.kernel<brgemm ..., br_size = 2, br_stride_a =
    384, br_stride_b = 8, trans = "NNN">`. Parameters are Table 10.6.2's, in
    elements; `trans` is the BLAS (column-major) op of A, B and C in that order.
    Parameters a kind does not carry are stored as 0 (and trans as "").
    """

    name = "teir.kernel"

    kind: StringAttr = param_def()
    m: IntegerAttr = param_def()
    n: IntegerAttr = param_def()
    k: IntegerAttr = param_def()
    lda: IntegerAttr = param_def()
    ldb: IntegerAttr = param_def()
    ldc: IntegerAttr = param_def()
    br_size: IntegerAttr = param_def()
    br_stride_a: IntegerAttr = param_def()
    br_stride_b: IntegerAttr = param_def()
    trans: StringAttr = param_def()

    def __init__(self, kind: str, trans: str = "", **params: int):
        unknown = set(params) - set(_ALL_KERNEL_PARAMS)
        if unknown:
            raise TypeError(f"teir.kernel has no parameter {', '.join(sorted(unknown))}")
        super().__init__(
            StringAttr(kind),
            *(IntegerAttr(int(params.get(p, 0)), i64) for p in _ALL_KERNEL_PARAMS),
            StringAttr(trans),
        )

    @staticmethod
    def from_match(match: KernelMatch) -> KernelAttr:
        """The attribute recording a decision of `teir_dialect.gemm.match_contraction`."""
        return KernelAttr(match.kind, match.trans, **match.params)

    def get(self, param: str) -> int:
        """An integer parameter as a Python int (0 when the kind does not carry it)."""
        return getattr(self, param).value.data

    @property
    def kind_name(self) -> str:
        return self.kind.data

    @property
    def params(self) -> dict[str, int]:
        """The parameters this kind carries, in syntax order."""
        return {p: self.get(p) for p in KERNEL_PARAMS.get(self.kind.data, ())}

    @property
    def is_gemm(self) -> bool:
        """A GEMM or BRGEMM: the kinds that get a register-blocked microkernel."""
        return self.kind.data in ("gemm", "brgemm")

    @property
    def trans_a(self) -> str:
        return self.trans.data[0]

    @property
    def trans_b(self) -> str:
        return self.trans.data[1]

    @property
    def trans_c(self) -> str:
        return self.trans.data[2]

    def verify(self) -> None:
        kind = self.kind.data
        if kind not in KERNEL_KINDS:
            raise VerifyException(
                f"kernel rule: teir.kernel kind is one of {', '.join(KERNEL_KINDS)}, "
                f"got '{kind}'"
            )
        carried = KERNEL_PARAMS[kind]
        for param in _ALL_KERNEL_PARAMS:
            attr = getattr(self, param)
            if attr.type != i64:
                raise VerifyException(f"kernel rule: teir.kernel {param} must be i64")
            value = attr.value.data
            if param not in carried:
                if value != 0:
                    raise VerifyException(
                        f"kernel rule: a {kind} teir.kernel has no {param} (got {value})"
                    )
            elif value < (0 if param.startswith("br_stride") else 1):
                raise VerifyException(
                    f"kernel rule: teir.kernel {param} = {value} is out of range"
                )
        trans = self.trans.data
        if carried:
            if len(trans) != 3 or any(c not in "NT" for c in trans):
                raise VerifyException(
                    f'kernel rule: teir.kernel trans is three of N/T (A, B, C), got "{trans}"'
                )
        elif trans:
            raise VerifyException(f"kernel rule: a {kind} teir.kernel has no trans")

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(self.kind.data)
            if not KERNEL_PARAMS.get(self.kind.data):
                return
            printer.print_string(" ")
            items = [f"{p} = {v}" for p, v in self.params.items()]
            printer.print_string(", ".join(items) + ", trans = ")
            printer.print_string_literal(self.trans.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_identifier("expected a kernel kind")
            if kind not in KERNEL_KINDS:
                parser.raise_error(
                    f"kernel rule: teir.kernel kind is one of {', '.join(KERNEL_KINDS)}, "
                    f"got '{kind}'"
                )
            values: dict[str, int] = {}
            trans = ""
            if KERNEL_PARAMS[kind]:
                expected = (*KERNEL_PARAMS[kind], "trans")
                seen: list[str] = []

                def parse_item() -> None:
                    nonlocal trans
                    key = parser.parse_identifier("expected a kernel parameter")
                    if key not in expected or key in seen:
                        parser.raise_error(
                            f"kernel rule: unexpected or repeated parameter '{key}' "
                            f"in a {kind} teir.kernel"
                        )
                    seen.append(key)
                    parser.parse_punctuation("=")
                    if key == "trans":
                        trans = parser.parse_str_literal("expected trans as a string")
                    else:
                        values[key] = parser.parse_integer(allow_boolean=False)

                parser.parse_comma_separated_list(parser.Delimiter.NONE, parse_item)
                if missing := [key for key in expected if key not in seen]:
                    parser.raise_error(
                        f"kernel rule: a {kind} teir.kernel needs {', '.join(missing)}"
                    )
        attr = KernelAttr(kind, trans, **values)
        return list(attr.parameters)


# --------------------------------------------------------------------------
# Epilogue fusion (teir-fuse-epilogues)
# --------------------------------------------------------------------------

EPILOGUE_ATTR = "epilogue"
"""The discardable attribute of a Contraction's teir.invoke that holds the decision."""


@irdl_attr_definition
class EpilogueAttr(ParametrizedAttribute):
    """The Zero and ReLU invocations that a Contraction invocation's kernel performs.

    `#teir.epilogue<zero = z, relu = r>`: the Zero invocation z just before and the
    ReLU invocation r just after run inside the kernel, each under its own guard:
    the kernel starts from 0 instead of loading out, and applies relu to each final
    value before storing it. `zero = z at [first(w)]`: z sits just before the
    sequential loop w whose first node is this invocation and runs in the kernel
    of w's first iteration; `relu = r at [last(w)]` likewise after w's last. The
    terms name the loops outermost first. The rule is `InvokeOp.fused_epilogue`.
    """

    name = "teir.epilogue"

    zero: StringAttr | IntegerAttr | NoneAttr = param_def()
    zero_at: ArrayAttr[GuardTermAttr] = param_def()
    relu: StringAttr | IntegerAttr | NoneAttr = param_def()
    relu_at: ArrayAttr[GuardTermAttr] = param_def()

    def __init__(
        self,
        zero: Attribute | None = None,
        zero_at: Sequence[GuardTermAttr] = (),
        relu: Attribute | None = None,
        relu_at: Sequence[GuardTermAttr] = (),
    ):
        super().__init__(
            NoneAttr() if zero is None else zero,
            ArrayAttr(zero_at),
            NoneAttr() if relu is None else relu,
            ArrayAttr(relu_at),
        )

    @property
    def zero_id(self) -> str | None:
        return None if isinstance(self.zero, NoneAttr) else id_text(self.zero)

    @property
    def relu_id(self) -> str | None:
        return None if isinstance(self.relu, NoneAttr) else id_text(self.relu)

    @property
    def parts(self) -> tuple[tuple[str, Attribute, ArrayAttr[GuardTermAttr], GuardKind], ...]:
        """(keyword, invocation id, terms, kind of the terms) of zero and relu."""
        return (
            ("zero", self.zero, self.zero_at, GuardKind.FIRST),
            ("relu", self.relu, self.relu_at, GuardKind.LAST),
        )

    def verify(self) -> None:
        if self.zero_id is None and self.relu_id is None:
            raise VerifyException("epilogue rule: a teir.epilogue fuses a zero, a relu or both")
        for keyword, fused, terms, kind in self.parts:
            if isinstance(fused, NoneAttr) and terms.data:
                raise VerifyException(
                    f"epilogue rule: a teir.epilogue without {keyword} has no {keyword} terms"
                )
            for term in terms:
                if term.kind.data != kind:
                    raise VerifyException(
                        f"epilogue rule: the {keyword} of a teir.epilogue runs at the "
                        f"{kind} iteration of its loops, got {term}"
                    )

    def print_parameters(self, printer: Printer) -> None:
        def print_part(part: tuple[str, Attribute, ArrayAttr[GuardTermAttr], GuardKind]) -> None:
            keyword, fused, terms, _ = part
            printer.print_string(f"{keyword} = ")
            print_id(printer, fused)
            if terms.data:
                printer.print_string(" at ")
                with printer.in_square_brackets():
                    printer.print_list(terms, lambda term: term.print_term(printer))

        with printer.in_angle_brackets():
            present = [part for part in self.parts if not isinstance(part[1], NoneAttr)]
            printer.print_list(present, print_part)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        parts: dict[str, tuple[Attribute, list[GuardTermAttr]]] = {}

        def parse_part() -> None:
            keyword = parser.parse_identifier("expected zero or relu")
            if keyword not in ("zero", "relu") or keyword in parts or "relu" in parts:
                parser.raise_error(
                    f"epilogue rule: unexpected or repeated '{keyword}' in a "
                    "teir.epilogue (zero, then relu, each at most once)"
                )
            parser.parse_punctuation("=")
            fused = parse_id(parser)
            terms: list[GuardTermAttr] = []
            if parser.parse_optional_keyword("at") is not None:
                terms = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, lambda: GuardTermAttr.parse_term(parser)
                )
            parts[keyword] = (fused, terms)

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, parse_part)
        zero, zero_at = parts.get("zero", (None, []))
        relu, relu_at = parts.get("relu", (None, []))
        return list(EpilogueAttr(zero, zero_at, relu, relu_at).parameters)


# --------------------------------------------------------------------------
# Records: axes and primitives
# --------------------------------------------------------------------------


def _parse_int_list(parser: Parser, what: str) -> list[int]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: _parse_int64(parser, what)
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
        extent = _parse_int64(parser, "an extent")
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
    policy = prop_def(StringAttr)
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
                "policy": StringAttr(policy),
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
        if parse_enum(Policy, self.policy.data) is None:
            raise VerifyException(
                f"iteration node rule: iteration node '{node}' has policy "
                f"'{self.policy.data}'; expected {spelled(Policy)}"
            )
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
        if self.policy.data != "sequential":
            printer.print_string(" ")
            printer.print_identifier_or_string_literal(self.policy.data)
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
        policy = parser.parse_optional_identifier_or_str_literal() or "sequential"
        guard = parse_optional_guard(parser)
        entered = _PARSE_DEPTH.set(depth)
        try:
            region = _parse_body(parser)
        finally:
            _PARSE_DEPTH.reset(entered)
        properties: dict[str, Attribute] = {
            "id": node_id,
            "axis": axis,
            "policy": StringAttr(policy),
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
        _ConfigVerifier(self).verify()

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


def _byte_width(element_type: Attribute) -> int:
    width = getattr(element_type, "bitwidth", 8)
    return max(1, int(width) // 8)


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


def _id_kind(attr: Attribute) -> str:
    return "number" if isinstance(attr, IntegerAttr) else "string"


@dataclass(frozen=True)
class _AxisFacts:
    """An axis record's numbers, read once per verification."""

    id: str
    size: int
    strides: tuple[int, ...]
    offsets: tuple[int, ...]


@dataclass(frozen=True)
class _PrimitiveFacts:
    """What an invocation of a primitive needs: role axes, element width, and the
    indices of the tensors it touches."""

    roles: tuple[_AxisFacts, ...]
    width: int
    tensors: tuple[int, ...]


class _ConfigVerifier:
    """The rules that relate records to each other (references, paths, bounds,
    races), checked in one walk over the configuration with lookup tables, so
    that verifying takes time linear in its size (times the schedule depth)."""

    def __init__(self, config: ConfigOp):
        self.config = config
        self.names = config.tensor_names
        self.axes: dict[str, AxisOp] = {}
        self.primitives: dict[str, PrimitiveOp] = {}
        self.nodes: set[str] = set()
        self.boxes: dict[int, list[Box]] = {}
        self.parallel: list[IterOp] = []
        self.facts: dict[str, _AxisFacts] = {}
        self.uses: dict[str, _PrimitiveFacts] = {}
        self.epilogues: list[InvokeOp] = []
        self.sizes: list[int | None] = []  # bytes of each tensor's static memref
        for name in self.names:
            memref = config.tensor_type(name)
            self.sizes.append(
                memref.element_count() * _byte_width(memref.element_type)
                if memref.has_static_shape()
                else None
            )

    # -- references -----------------------------------------------------------

    def define(self, table: dict, what: str, rule: str, op: AxisOp | PrimitiveOp) -> None:
        text = id_text(op.id)
        if text in table:
            raise VerifyException(f"{rule}: {what} id '{text}' is defined twice")
        table[text] = op

    def resolve(self, table: dict, what: str, ref: Attribute, user: str) -> AxisOp | PrimitiveOp | None:
        """The record `ref` names, None when there is none; an id written once as a
        number and once as a string (7 and "7") is an error, not the same id."""
        found = table.get(id_text(ref))
        if found is not None and type(found.id) is not type(ref):
            raise VerifyException(
                f"id rule: {user} names {what} '{id_text(ref)}' as a {_id_kind(ref)}, but "
                f"the {what} is defined with a {_id_kind(found.id)} id; an id keeps its "
                "JSON type (7 and \"7\" are different ids)"
            )
        return found

    # -- the whole configuration ---------------------------------------------

    def verify(self) -> None:
        config = self.config
        for axis in config.axes:
            self.define(self.axes, "axis", "axis rule", axis)
            self.facts[axis.axis_id] = _AxisFacts(
                axis.axis_id, axis.size, axis.stride_values, axis.offset_values
            )
        for prim in config.primitives:
            self.define(self.primitives, "primitive", "primitive rule", prim)
        for prim in config.primitives:
            self.verify_primitive(prim)
        self.walk_schedule(config.schedule)
        for node in self.parallel:
            self.verify_race(node)
        for node in self.epilogues:
            self.verify_epilogue(node)

    def verify_primitive(self, prim: PrimitiveOp) -> None:
        name, kind = prim.primitive_id, prim.kind
        for role in kind.roles:
            for ref in prim.role_ids(role):
                if self.resolve(self.axes, "axis", ref, f"primitive '{name}'") is None:
                    raise VerifyException(
                        f"primitive rule: primitive '{name}' names axis '{id_text(ref)}' "
                        f"in role {role}, which is not an axis"
                    )
        width, data_type = prim.element_width, prim.data_type
        accessed = prim.accessed_tensors
        for axis in prim.all_role_axes:
            for tensor in accessed:
                stride = axis.stride_on(tensor)
                if stride % width:
                    raise VerifyException(
                        f"stride alignment: axis '{axis.axis_id}' of primitive "
                        f"'{name}' has stride {stride} on {tensor}, not a multiple of "
                        f"the {width}-byte element width of {data_type}"
                    )
        expected = data_type.storage_type
        for tensor in accessed:
            element = self.config.tensor_type(tensor).element_type
            if element != expected and element != IntegerType(8):
                raise VerifyException(
                    f"operation constraint: primitive '{name}' works on "
                    f"{data_type} but tensor {tensor} holds {element} elements "
                    f"(expected {expected}, or i8 for raw bytes)"
                )
        self.uses[name] = _PrimitiveFacts(
            tuple(self.facts[axis.axis_id] for axis in prim.all_role_axes),
            width,
            tuple(self.names.index(tensor) for tensor in accessed),
        )
        recorded = prim.attributes.get(KERNEL_ATTR)
        if recorded is not None and recorded != (matched := prim.matched_kernel()):
            raise VerifyException(
                f"kernel rule: primitive '{name}' records {recorded} but its axes make "
                f"it {matched}; the lowering trusts this attribute, so drop it or record "
                "the rule's result (teir-match-gemm)"
            )

    # -- the schedule -----------------------------------------------------------

    def walk_schedule(self, schedule: ScheduleOp) -> None:
        """Depth-first over the forest without recursion, keeping the path (the
        iteration nodes above) and the guard terms on it up to date."""
        path: list[IterOp] = []
        path_axes: list[_AxisFacts] = []
        iterated: dict[str, IterOp] = {}
        terms: dict[str, list[str]] = {}
        work: list[tuple[bool, ScheduleNode]] = [(True, n) for n in reversed(schedule.roots)]
        while work:
            entering, node = work.pop()
            if not entering:  # leaving an iteration node
                path.pop()
                path_axes.pop()
                del iterated[node.axis_id]  # pyright: ignore[reportAttributeAccessIssue]
                self.drop_terms(node, terms)
                continue
            self.verify_node_id(node)
            self.verify_guard(node, iterated)
            self.add_terms(node, terms)
            if isinstance(node, InvokeOp):
                self.verify_invocation(node, path, path_axes, iterated, terms)
                if EPILOGUE_ATTR in node.attributes:
                    self.epilogues.append(node)
                self.drop_terms(node, terms)
                continue
            assert isinstance(node, IterOp)
            axis = self.verify_iteration(node, path, iterated)
            path.append(node)
            path_axes.append(axis)
            iterated[node.axis_id] = node
            work.append((False, node))
            work.extend((True, child) for child in reversed(node.children))

    def verify_node_id(self, node: ScheduleNode) -> None:
        if node.node_id in self.nodes:
            raise VerifyException(
                f"schedule rule: schedule node id '{node.node_id}' is defined twice"
            )
        self.nodes.add(node.node_id)

    @staticmethod
    def add_terms(node: ScheduleNode, terms: dict[str, list[str]]) -> None:
        if node.guard is not None:
            for term in node.guard.terms:
                terms.setdefault(term.axis_text, []).append(term.kind.data)

    @staticmethod
    def drop_terms(node: ScheduleNode, terms: dict[str, list[str]]) -> None:
        if node.guard is not None:
            for term in node.guard.terms:
                terms[term.axis_text].pop()

    def verify_guard(self, node: ScheduleNode, iterated: dict[str, IterOp]) -> None:
        if node.guard is None:
            return
        for term in node.guard.terms:
            if term.axis_text not in iterated:
                raise VerifyException(
                    f"guard rule: guard of {node.NODE_KIND} '{node.node_id}' names "
                    f"axis '{term.axis_text}', which no ancestor of "
                    f"'{node.node_id}' iterates"
                )

    def verify_iteration(self, node: IterOp, path: list[IterOp],
                         iterated: dict[str, IterOp]) -> _AxisFacts:
        name = node.node_id
        if len(path) >= MAX_SCHEDULE_DEPTH:
            raise VerifyException(
                f"schedule depth: iteration node '{name}' is nested {len(path) + 1} "
                f"iteration nodes deep; TEIR accepts at most {MAX_SCHEDULE_DEPTH}"
            )
        axis = self.resolve(self.axes, "axis", node.axis, f"iteration node '{name}'")
        if axis is None:
            raise VerifyException(
                f"iteration node rule: iteration node '{name}' iterates axis "
                f"'{node.axis_id}', which is not an axis"
            )
        assert isinstance(axis, AxisOp)
        if (ancestor := iterated.get(node.axis_id)) is not None:
            raise VerifyException(
                f"axis reuse: iteration node '{name}' iterates axis "
                f"'{node.axis_id}', which its ancestor '{ancestor.node_id}' "
                "already iterates"
            )
        if node.parallel and axis.size > 1:
            self.parallel.append(node)
            self.boxes[id(node)] = []
        return self.facts[node.axis_id]

    def verify_invocation(self, node: InvokeOp, path: list[IterOp], path_axes: list[_AxisFacts],
                          iterated: dict[str, IterOp], terms: dict[str, list[str]]) -> None:
        name = node.node_id
        prim = self.resolve(self.primitives, "primitive", node.primitive, f"invocation '{name}'")
        if prim is None:
            raise VerifyException(
                f"invocation node rule: invocation '{name}' invokes primitive "
                f"'{node.primitive_id}', which is not a primitive"
            )
        use = self.uses[id_text(prim.id)]
        for axis in use.roles:
            if (ancestor := iterated.get(axis.id)) is not None:
                raise VerifyException(
                    f"axis reuse: invocation '{name}' runs primitive "
                    f"'{id_text(prim.id)}' over axis '{axis.id}', which "
                    f"its ancestor '{ancestor.node_id}' already iterates"
                )
        spans: list[tuple[int, int]] = []
        for axis in path_axes:
            span = index_range(axis.size, terms.get(axis.id, ()))
            if span is None:
                return  # contradicting guards: the invocation never runs
            spans.append(span)
        for index in use.tensors:
            low = high = magnitude = 0
            for axis, (first, last) in zip(path_axes, spans):
                stride, offset = axis.strides[index], axis.offsets[index]
                low += offset + stride * first
                high += offset + stride * last
                magnitude += abs(offset) + stride * (axis.size - 1)
            for axis in use.roles:
                stride, offset = axis.strides[index], axis.offsets[index]
                low += offset
                high += offset + stride * (axis.size - 1)
                magnitude += abs(offset) + stride * (axis.size - 1)
            self.verify_bounds(name, index, low, high + use.width, magnitude + use.width)
        self.collect_boxes(node, use, path, path_axes, spans)

    def verify_bounds(self, name: str, index: int, start: int, stop: int, magnitude: int) -> None:
        """No byte before a tensor's start nor past a static memref; every address
        on the way fits a signed 64-bit index."""
        tensor = self.names[index]
        if magnitude >= INDEX_LIMIT:
            raise VerifyException(
                f"index range: invocation '{name}' addresses {tensor} with byte "
                f"offsets up to {magnitude}, which do not fit a signed 64-bit index"
            )
        if start < 0:
            raise VerifyException(
                f"bounds: invocation '{name}' touches byte {start} of {tensor}, "
                "before the start of the tensor"
            )
        size = self.sizes[index]
        if size is not None and stop > size:
            raise VerifyException(
                f"bounds: invocation '{name}' touches {tensor} up to byte {stop}, "
                f"past the end of its {size}-byte memref"
            )

    @staticmethod
    def verify_epilogue(node: InvokeOp) -> None:
        """A recorded epilogue is what the rule gives: teir-to-scf trusts it, and
        leaves out the Zero and ReLU invocations it names."""
        recorded = node.attributes[EPILOGUE_ATTR]
        name = node.node_id
        if not isinstance(recorded, EpilogueAttr):
            raise VerifyException(
                f"epilogue rule: invocation '{name}' carries an '{EPILOGUE_ATTR}' "
                f"attribute that is not a #teir.epilogue: {recorded}"
            )
        if node.primitive_op().kind is not OperationKind.CONTRACTION:
            raise VerifyException(
                f"epilogue rule: invocation '{name}' of primitive '{node.primitive_id}' "
                f"carries an '{EPILOGUE_ATTR}' attribute; only the invocation of a "
                "Contraction carries one"
            )
        if recorded != (fused := node.fused_epilogue()):
            raise VerifyException(
                f"epilogue rule: invocation '{name}' records {recorded} but the "
                f"schedule around it fuses {fused or 'nothing'}; the lowering trusts "
                "this attribute, so drop it or record the rule's result "
                "(teir-fuse-epilogues)"
            )

    # -- races ------------------------------------------------------------------

    def collect_boxes(self, node: InvokeOp, use: _PrimitiveFacts, path: list[IterOp],
                      path_axes: list[_AxisFacts], spans: list[tuple[int, int]]) -> None:
        """The bytes of out this invocation writes, as seen from each parallel node
        above it: what one index of that node's axis writes through this leaf, and
        the indices its guards pin the loops around that node to."""
        out = len(self.names) - 1
        when: list[tuple[str, int]] = []
        for depth, parallel in enumerate(path):
            if depth:
                outer, (first, last) = path_axes[depth - 1], spans[depth - 1]
                if first == last and outer.size > 1:
                    when.append((outer.id, first))
            boxes = self.boxes.get(id(parallel))
            if boxes is None:
                continue
            base = 0
            axes: list[tuple[int, int]] = []
            for axis, (first, last) in zip(path_axes[depth + 1 :], spans[depth + 1 :]):
                stride = axis.strides[out]
                base += axis.offsets[out] + stride * first
                if first != last:
                    axes.append((axis.size, stride))
            for axis in use.roles:
                base += axis.offsets[out]
                axes.append((axis.size, axis.strides[out]))
            low, high = spans[depth]
            at = None if low != high else low
            boxes.append(Box(base, tuple(axes), use.width, at, tuple(when), node.node_id))

    def verify_race(self, node: IterOp) -> None:
        """Two different indices of a parallel node's axis never write a common byte
        of out (a data race, and results that change from run to run)."""
        axis = self.axes[node.axis_id]
        boxes = self.boxes[id(node)]
        try:
            found = parallel_overlap(boxes, axis.size, axis.stride_on("out"))
        except Undecided as undecided:
            raise VerifyException(
                f"parallel race: cannot prove that the iterations of parallel node "
                f"'{node.node_id}' (axis '{node.axis_id}') write disjoint bytes of out: "
                f"the exact check would enumerate {undecided.combinations} index "
                "combinations; make the node sequential"
            ) from None
        if found is not None:
            i, j, x, y = found
            hint = (
                f" (axis '{node.axis_id}' has stride 0 on out: only writes that a "
                "first/last guard pins to one of its indices can run in parallel)"
                if axis.stride_on("out") == 0
                else ""
            )
            raise VerifyException(
                f"parallel race: iteration node '{node.node_id}' runs axis "
                f"'{node.axis_id}' in parallel, but its iterations {node.axis_id}={i} "
                f"and {node.axis_id}={j} write overlapping bytes of out (invocation "
                f"'{x.label}' at {i}, '{y.label}' at {j}); each index of a parallel "
                f"axis must write its own bytes{hint}"
            )


TEIR = Dialect(
    "teir",
    [ConfigOp, AxisOp, PrimitiveOp, ScheduleOp, IterOp, InvokeOp],
    [GuardAttr, GuardTermAttr, KernelAttr, EpilogueAttr],
)
