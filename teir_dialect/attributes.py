"""The teir attributes: guards (`first(i)`/`last(i)` terms), the kernel a pass
matched for a primitive (`#teir.kernel`), and the epilogue teir-fuse-epilogues
recorded on a Contraction's invocation (`#teir.epilogue`)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerAttr,
    NoneAttr,
    StringAttr,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
)
from xdsl.irdl import (
    irdl_attr_definition,
    param_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from teir_dialect.gemm import KernelMatch
from teir_dialect.ids import TeirId, id_text, make_id, parse_id, print_id
from teir_dialect.vocabulary import GuardKind, KernelKind, Policy, parse_enum

# --------------------------------------------------------------------------
# Policies
# --------------------------------------------------------------------------


@irdl_attr_definition
class PolicyAttr(EnumAttribute[Policy], SpacedOpaqueSyntaxAttribute):
    """An iteration node's policy, `#teir<policy parallel>` in generic form; the
    custom form of `teir.iter` writes the bare word."""

    name = "teir.policy"


# --------------------------------------------------------------------------
# Guards
# --------------------------------------------------------------------------


@irdl_attr_definition
class GuardKindAttr(EnumAttribute[GuardKind], SpacedOpaqueSyntaxAttribute):
    """`first` or `last`, `#teir<guard_kind first>` in generic form."""

    name = "teir.guard_kind"


@irdl_attr_definition
class GuardTermAttr(ParametrizedAttribute):
    """`first(x)` or `last(x)`: the current index of axis x is 0 or |x|-1."""

    name = "teir.term"

    kind: GuardKindAttr = param_def()
    axis: TeirId = param_def()

    def __init__(self, kind: str, axis: str | int | StringAttr | IntegerAttr):
        if not isinstance(axis, Attribute):
            axis = make_id(axis)
        if (member := parse_enum(GuardKind, kind)) is None:
            raise VerifyException(
                f"guard rule: a guard term is first(axis) or last(axis), got '{kind}'"
            )
        super().__init__(GuardKindAttr(member), axis)

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
    terms = parser.parse_optional_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: GuardTermAttr.parse_term(parser)
    )
    return None if terms is None else GuardAttr(terms)


# --------------------------------------------------------------------------
# Kernel selection (teir-match-gemm)
# --------------------------------------------------------------------------

KERNEL_KINDS = tuple(KernelKind)
"""Lowering targets of a Contraction (Table 10.6.1); general is the loop nest."""

INCREMENTS = ("inca", "incb", "incc")
"""TEIR's general-stride parameters of a GEMM/BRGEMM (`teir_dialect.gemm`): the
increment of each operand's increment axis, 1 where the operand fits Table
10.6.1's unit-stride pattern. Written only when not 1."""

KERNEL_PARAMS: dict[str, tuple[str, ...]] = {
    KernelKind.SCALAR: (),
    KernelKind.GENERAL: (),
    KernelKind.GEMM: ("m", "n", "k", "lda", "ldb", "ldc", *INCREMENTS),
    KernelKind.BRGEMM: ("m", "n", "k", "lda", "ldb", "ldc", "br_size", "br_stride_a",
                        "br_stride_b", *INCREMENTS),
    KernelKind.SEGMENTED: ("m", "n", "k", "lda", "ldc", "incc"),
    KernelKind.PERIODIC: ("m", "n", "k", "lda", "ldb"),
}
"""The integer parameters (Table 10.6.2, in elements) each kind carries."""

_ALL_KERNEL_PARAMS = KERNEL_PARAMS[KernelKind.BRGEMM]


@irdl_attr_definition
class KernelKindAttr(EnumAttribute[KernelKind], SpacedOpaqueSyntaxAttribute):
    """A row of Table 10.6.1, `#teir<kernel_kind gemm>` in generic form."""

    name = "teir.kernel_kind"


@irdl_attr_definition
class KernelAttr(ParametrizedAttribute):
    """The kernel `teir-match-gemm` selected for a Contraction primitive.

    Custom syntax: `#teir.kernel<scalar>`, `#teir.kernel<general>`,
    `#teir.kernel<gemm m = 8, n = 4, k = 16, lda = 8, ldb = 16, ldc = 8,
    trans = "NNN">` and `#teir.kernel<brgemm ..., br_size = 2, br_stride_a =
    384, br_stride_b = 8, trans = "NNN">`. Parameters are Table 10.6.2's, in
    elements; `trans` is the BLAS (column-major) op of A, B and C in that order.
    `inca`, `incb`, `incc` (TEIR's general strides, `INCREMENTS`) follow the
    others when not 1 (`..., ldc = 8, inca = 2, trans = "NNN"`) and are 1 when
    omitted. `#teir.kernel<segmented m = 1, n = 6, k = 118, lda = 0, ldc = 0,
    incc = 176>` and `#teir.kernel<periodic m = 121, n = 7, k = 71, lda = 847,
    ldb = 7>` have no `trans` (`teir_dialect.gemm`). Parameters a kind does not
    carry are stored as 0 (and trans as "").
    """

    name = "teir.kernel"

    kind: KernelKindAttr = param_def()
    m: IntegerAttr = param_def()
    n: IntegerAttr = param_def()
    k: IntegerAttr = param_def()
    lda: IntegerAttr = param_def()
    ldb: IntegerAttr = param_def()
    ldc: IntegerAttr = param_def()
    br_size: IntegerAttr = param_def()
    br_stride_a: IntegerAttr = param_def()
    br_stride_b: IntegerAttr = param_def()
    inca: IntegerAttr = param_def()
    incb: IntegerAttr = param_def()
    incc: IntegerAttr = param_def()
    trans: StringAttr = param_def()

    def __init__(self, kind: str, trans: str = "", **params: int):
        unknown = set(params) - set(_ALL_KERNEL_PARAMS)
        if unknown:
            raise TypeError(f"teir.kernel has no parameter {', '.join(sorted(unknown))}")
        if (member := parse_enum(KernelKind, kind)) is None:
            raise VerifyException(
                f"kernel rule: teir.kernel kind is one of {', '.join(KERNEL_KINDS)}, "
                f"got '{kind}'"
            )
        params = {**{p: 1 for p in INCREMENTS if p in KERNEL_PARAMS[member]}, **params}
        super().__init__(
            KernelKindAttr(member),
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
        """The parameters this kind carries, in syntax order (increments of 1 left out,
        as in the syntax)."""
        return {p: v for p in KERNEL_PARAMS.get(self.kind.data, ())
                if (v := self.get(p)) != 1 or p not in INCREMENTS}

    @property
    def is_gemm(self) -> bool:
        """A GEMM or BRGEMM: the kinds that get a register-blocked microkernel."""
        return self.kind.data.microkernel

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
        kind = self.kind.data  # a KernelKind: its attribute holds no other word
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
            elif value < (0 if param.startswith(("br_stride", "inc", "ld")) else 1):
                raise VerifyException(
                    f"kernel rule: teir.kernel {param} = {value} is out of range"
                )
        trans = self.trans.data
        if kind.transposes:
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
            printer.print_string(", ".join(items))
            if self.kind.data.transposes:
                printer.print_string(", trans = ")
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
                expected = (*KERNEL_PARAMS[kind],
                            *(("trans",) if KernelKind(kind).transposes else ()))
                optional = INCREMENTS
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
                if missing := [key for key in expected
                               if key not in seen and key not in optional]:
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
