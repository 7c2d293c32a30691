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
- **segmented** (TEIR's extension, a batched GEMV whose batch is the unit
  stride of the matrix: `bij,bj->bi` from an [i][j][b] array): |M| <= 1,
  |N| = |K| = 1, N = [b] at unit stride on in0 and in1, K = [j] at |b| elements
  on both (each (j, b) run of in0 and all of in1 contiguous), M = [i] (if any)
  at stride 0 on in1, K at stride 0 on out, out's (i, b) elements distinct. The
  kernel multiplies the runs lane by lane and adds each lane's products into
  the b its position gives (`teir_lowering.codegen.segmented`): one pass over
  in0, where a GEMM needs b copies of the vector or in0 copied. Parameters: m,
  n = |b|, k, lda = i's stride on in0, ldc = i's stride on out (both 0 without
  M), incc = b's stride on out.
- **periodic** (TEIR's extension, the same GEMV from a [j][i][b] array: the row
  index i next to b): |M| = |N| = |K| = 1, N = [b] at unit stride on all three
  tensors, M = [i] at |b| elements on in0 and out and 0 on in1, K = [j] at
  stride 0 on out. Each (i, b) run of in0 is multiplied by the vector's b
  elements repeated along it and summed over j into out's run, in j's order.
  Parameters: m, n = |b|, k, lda and ldb = j's strides on in0 and in1.
- **general**: everything else: other cardinalities, negative strides, a C
  whose elements the role axes do not keep apart, role axes addressing the
  operand they do not belong to.

TEIR's extension of the table (GETT's and BLIS's general strides): a GEMM or
BRGEMM operand may have no unit-stride role axis (a stepped view `a[:, ::2]`,
a stride-0 broadcast, a tensor whose unit-stride index is not a role axis).
Its two role axes are then an *increment* axis, the one of smaller stride
(inc = stride / w, 0 for a broadcast), and the leading-dimension axis (ld,
the larger stride); the orientation letter names the increment axis as it
names the unit axis otherwise. `inca`, `incb`, `incc` record the increments
(1 for every operand that fits the table's pattern, which is tried first);
the microkernel packs such an operand per panel from the tensor's layout,
never copying whole tensors. C must still reach each element once: inc >= 1
and ld >= inc x the increment axis's extent.

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


def strided_layout(
    tensor: str, first: Axis, second: Axis, width: int
) -> tuple[str, int, int] | None:
    """(trans, ld, inc) of a GEMM operand with general strides, or None.

    The table's layout (`operand_layout`, inc = 1) when it fits; else the axis
    of smaller stride is the increment axis ("N" when it is `first`, ties
    too), the other the leading dimension, both in elements. An extent-1 axis
    is never stepped and counts as stride 0. Strides must be non-negative
    multiples of `width`; on out the map (i, j) -> i * inc + j * ld must be
    injective over the tile (inc >= 1, ld >= inc x extent of the increment
    axis, unless that axis or the other has extent 1)."""
    if (table := operand_layout(tensor, first, second, width)) is not None:
        return table[0], table[1], 1
    strides = [0 if axis.size == 1 else axis.stride_on(tensor) for axis in (first, second)]
    if any(s < 0 or s % width for s in strides):
        return None
    trans = "N" if strides[0] <= strides[1] else "T"
    inc_axis, lead_axis = (first, second) if trans == "N" else (second, first)
    inc, ld = sorted(s // width for s in strides)
    if tensor == "out":
        if inc_axis.size > 1 and inc < 1:
            return None
        if lead_axis.size > 1 and ld < max(1, inc * inc_axis.size):
            return None
    return trans, ld, inc


def gemm_layout(
    m: Axis, n: Axis, k: Axis, width: int, *, strided: bool = False
) -> tuple[str, int, int, int] | None:
    """(trans, lda, ldb, ldc) when (m, n, k) fits the GEMM stride pattern.

    `strided`: TEIR's general strides (`strided_layout`); returns
    (trans, lda, ldb, ldc, inca, incb, incc) then."""
    if m.stride_on("in1") != 0 or n.stride_on("in0") != 0 or k.stride_on("out") != 0:
        return None
    if strided:
        layouts = [strided_layout(t, x, y, width)
                   for t, x, y in (("in0", m, k), ("in1", k, n), ("out", m, n))]
        if any(x is None for x in layouts):
            return None
        (ta, lda, inca), (tb, ldb, incb), (tc, ldc, incc) = layouts  # pyright: ignore
        return ta + tb + tc, lda, ldb, ldc, inca, incb, incc  # pyright: ignore
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
    if (segmented := match_segmented(prim) or match_periodic(prim)) is not None:
        return segmented
    if len(ms) != 1 or len(ns) != 1 or len(ks) not in (1, 2):
        return GENERAL
    width = prim.element_width
    m, n, k = ms[0], ns[0], ks[-1]
    layout = gemm_layout(m, n, k, width, strided=True)
    if layout is None:
        return GENERAL
    trans, lda, ldb, ldc, inca, incb, incc = layout
    params = {"m": m.size, "n": n.size, "k": k.size, "lda": lda, "ldb": ldb, "ldc": ldc}
    increments = {"inca": inca, "incb": incb, "incc": incc}
    # TEIR's general strides, given where not 1 (Table 10.6.2 has none)
    increments = {name: inc for name, inc in increments.items() if inc != 1}
    if len(ks) == 1:
        return KernelMatch(KernelKind.GEMM, trans, params | increments)
    batch = ks[0]
    stride_a, stride_b = batch.stride_on("in0"), batch.stride_on("in1")
    if batch.stride_on("out") != 0 or stride_a % width or stride_b % width:
        return GENERAL
    params |= {
        "br_size": batch.size,
        "br_stride_a": stride_a // width,
        "br_stride_b": stride_b // width,
    }
    return KernelMatch(KernelKind.BRGEMM, trans, params | increments)


def match_segmented(prim: Contraction) -> KernelMatch | None:
    """The segmented dot's match (see the module doc), or None."""
    ms, ns, ks = (prim.role_axes(role) for role in (Role.M, Role.N, Role.K))
    if len(ms) > 1 or len(ns) != 1 or len(ks) != 1:
        return None
    width = prim.element_width
    (b,), (j,) = ns, ks
    run = b.size * width
    if (b.size < 2 or any(b.stride_on(t) != width for t in ("in0", "in1"))
            or any(j.stride_on(t) != run for t in ("in0", "in1")) or j.stride_on("out")):
        return None
    m_stride, m_out = (ms[0].stride_on("in0"), ms[0].stride_on("out")) if ms else (0, 0)
    if ms and (ms[0].stride_on("in1") or m_stride < 0 or m_stride % width):
        return None
    if (m_out % width or b.stride_on("out") % width or m_out < 0
            or b.stride_on("out") < width or ms and strided_layout(
                "out", ms[0], b, width) is None):
        return None
    return KernelMatch(KernelKind.SEGMENTED, "", {
        "m": ms[0].size if ms else 1, "n": b.size, "k": j.size, "lda": m_stride // width,
        "ldc": m_out // width, "incc": b.stride_on("out") // width})


def match_periodic(prim: Contraction) -> KernelMatch | None:
    """The periodic product's match (see the module doc), or None."""
    ms, ns, ks = (prim.role_axes(role) for role in (Role.M, Role.N, Role.K))
    if len(ms) != 1 or len(ns) != 1 or len(ks) != 1:
        return None
    width = prim.element_width
    (i,), (b,), (j,) = ms, ns, ks
    if (b.size < 2 or any(b.stride_on(t) != width for t in ("in0", "in1", "out"))
            or any(i.stride_on(t) != b.size * width for t in ("in0", "out"))
            or i.stride_on("in1") or j.stride_on("out")
            or any(j.stride_on(t) < 0 or j.stride_on(t) % width for t in ("in0", "in1"))):
        return None
    return KernelMatch(KernelKind.PERIODIC, "", {
        "m": i.size, "n": b.size, "k": j.size, "lda": j.stride_on("in0") // width,
        "ldb": j.stride_on("in1") // width})
