"""Table 10.6.1 and 10.6.2: which kernel a Contraction primitive lowers to, with what parameters.

`match_contraction` is the rule, plain arithmetic on the primitive's role
axes (anything with `size` and `stride_on(tensor)`), so that the dialect can
use it without an import cycle: `PrimitiveOp.matched_kernel()` turns its
`KernelMatch` into a `#teir.kernel<...>` attribute, `teir-match-gemm` records
that as the `kernel` attribute of each Contraction, the verifier checks that
a recorded attribute is what the rule gives (so the lowering, which reads it,
can trust it), and `teir-lift-gemm` uses the stride pattern (`gemm_layout`) to
find GEMM-shaped loops.

Rules (w is the element width of the data type, all
strides are the TEIR byte strides, parameters are in elements):

- **scalar**: M, N and K all empty.
- **gemm**: |M| = |N| = |K| = 1 with axes m, n, k and the GEMM stride pattern.
- **brgemm**: |M| = |N| = 1, |K| = 2, K = [b, k]: the GEMM stride pattern on
  (m, n, k) (k = K[1], the innermost K axis) and b = K[0] is the batch-reduce
  axis. b's strides on in0 and in1 are unconstrained (any multiple of w,
  including 0); b must have stride 0 on out, since a batch-reduce GEMM
  accumulates every batch into the same C.
- **general**: everything else, including GEMM/BRGEMM cardinalities whose
  strides do not fit.

The GEMM stride pattern, per operand: in0 over (m, k), in1 over (k, n), out
over (m, n). Of the two role axes of an operand, one is the *unit* axis (byte
stride == w) and the other the *leading-dimension* axis, whose stride in
elements, ld = stride / w, must be a whole number with ld >= extent of the
unit axis. That is BLAS's `ld >= rows` condition: the columns of the operand
(a column = the unit axis) do not overlap, so (i, j) -> address is
injective and C's elements are distinct. Either axis may be the unit axis
(the transposed orientations); if both orientations fit (only possible when
both axes have stride w and the would-be unit axis of the "N" orientation has
extent 1), the non-transposed one, "N", is chosen. In addition the role axes
must not address the operand they do not belong to: m has stride 0 on in1,
n stride 0 on in0 and every K axis stride 0 on out. Otherwise the
primitive is not C += A * B (e.g. a k-stride on out would spread the
reduction over several C elements), and it stays general. These rules are
strict: an extent-1 axis must also satisfy them literally (a stride 0 can
never carry a leading dimension), which keeps the recorded ld values exactly
the strides of the configuration.

Parameters (Table 10.6.2): m = |m|, n = |n|, k = |k| (K[0] for GEMM, K[1] for
BRGEMM); lda, ldb, ldc = the leading-dimension axis's stride / w on in0, in1,
out; br_size = |K[0]|, br_stride_a / br_stride_b = K[0]'s stride / w on in0 /
in1 (BRGEMM). Orientation in BLAS column-major terms, `trans = "ABC"`:
A is "N" when m is in0's unit axis (A is m x k column-major with lda) and "T"
when k is (A is stored k x m); B is "N" when k is in1's unit axis, "T" when n
is; C is "N" when m is out's unit axis, "T" when n is (C^T is stored n x m).
So with column-major buffers the kernel computes, for each batch i,

    op_C(C) += op_A(A + i * br_stride_a) * op_B(B + i * br_stride_b),

op_X(X) = X for "N" and X^T for "T", which is the Contraction summed over K[0]
outermost and K[1] innermost, as the loop nest of the primitive orders it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from teir_dialect.vocabulary import KernelKind, OperationKind, Role

KERNEL_ATTR = "kernel"
"""The discardable attribute of teir.primitive that holds the decision."""


class Axis(Protocol):
    """What the rule reads of an axis (teir_dialect.dialect.AxisOp has it)."""

    @property
    def size(self) -> int: ...

    def stride_on(self, tensor: str) -> int: ...


class Contraction(Protocol):
    """What the rule reads of a primitive (teir_dialect.dialect.PrimitiveOp has it)."""

    @property
    def kind(self) -> str: ...

    @property
    def element_width(self) -> int: ...

    def role_axes(self, role: str) -> Sequence[Axis]: ...


@dataclass(frozen=True)
class KernelMatch:
    """A row of Table 10.6.1 (`kind`: scalar, gemm, brgemm or general), the BLAS
    orientation `trans` ("ABC", N or T each) and Table 10.6.2's parameters."""

    kind: str
    trans: str = ""
    params: dict[str, int] = field(default_factory=dict)

    @property
    def microkernel(self) -> bool:
        return KernelKind(self.kind).microkernel


SCALAR = KernelMatch(KernelKind.SCALAR)
GENERAL = KernelMatch(KernelKind.GENERAL)


def operand_layout(
    tensor: str, first: Axis, second: Axis, width: int
) -> tuple[str, int] | None:
    """The orientation and leading dimension of a GEMM operand, or None.

    `first` is the axis whose unit stride means "N" (m for in0 and out, k for
    in1), `second` the other role axis. Returns ("N", ld) when `first` has unit
    stride and `second` carries the leading dimension, ("T", ld) the other way
    round; ld is in elements and at least the extent of the unit axis. An
    extent-1 `second` is never stepped, so its stride is free (a GEMV's N).
    """
    for trans, unit, lead in (("N", first, second), ("T", second, first)):
        lead_stride = lead.stride_on(tensor)
        if lead.size == 1:
            lead_stride = unit.size * width  # never stepped: any stride will do
        if unit.stride_on(tensor) != width or lead_stride % width:
            continue
        ld = lead_stride // width
        if ld >= unit.size:
            return trans, ld
    return None


def gemm_layout(
    m: Axis, n: Axis, k: Axis, width: int
) -> tuple[str, int, int, int] | None:
    """(trans, lda, ldb, ldc) when (m, n, k) fits the GEMM stride pattern."""
    if m.stride_on("in1") != 0 or n.stride_on("in0") != 0 or k.stride_on("out") != 0:
        return None
    a = operand_layout("in0", m, k, width)
    b = operand_layout("in1", k, n, width)
    c = operand_layout("out", m, n, width)
    if a is None or b is None or c is None:
        return None
    return a[0] + b[0] + c[0], a[1], b[1], c[1]


def match_contraction(prim: Contraction) -> KernelMatch:
    """The Table 10.6.1 kernel of a Contraction primitive, with Table 10.6.2's parameters."""
    if prim.kind != OperationKind.CONTRACTION:
        raise ValueError(f"match_contraction: the primitive is a {prim.kind}, not a Contraction")
    ms, ns, ks = (prim.role_axes(role) for role in (Role.M, Role.N, Role.K))
    if not ms and not ns and not ks:
        return SCALAR
    if len(ms) != 1 or len(ns) != 1 or len(ks) not in (1, 2):
        return GENERAL
    width = prim.element_width
    m, n, k = ms[0], ns[0], ks[-1]
    layout = gemm_layout(m, n, k, width)
    if layout is None:
        return GENERAL
    trans, lda, ldb, ldc = layout
    params = {"m": m.size, "n": n.size, "k": k.size, "lda": lda, "ldb": ldb, "ldc": ldc}
    if len(ks) == 1:
        return KernelMatch(KernelKind.GEMM, trans, params)
    batch = ks[0]
    stride_a, stride_b = batch.stride_on("in0"), batch.stride_on("in1")
    if batch.stride_on("out") != 0 or stride_a % width or stride_b % width:
        return GENERAL
    params |= {
        "br_size": batch.size,
        "br_stride_a": stride_a // width,
        "br_stride_b": stride_b // width,
    }
    return KernelMatch(KernelKind.BRGEMM, trans, params)
