"""`teir-lift-gemm`: loops around a scalar Contraction become a GEMM primitive.

§10.7.5 runs a scalar multiply-add under p, q, r, s, t, u; §10.7.6 invokes
`gemm_squ` (M=[s], N=[q], K=[u]) under p, r, t, with the scalar Zero lifted to
a tile Zero `zero_sq` (M=[s], N=[q]). This pass finds, on the path of an
invocation X of a scalar Contraction, three iteration nodes whose axes m, n,
k fit Table 10.6.1's GEMM stride pattern (in0 over {m, k}, in1 over {k, n},
out over {m, n}: one unit-stride axis and one leading-dimension axis each,
the leading dimension at least the unit axis's extent), removes the three
nodes (their children take their place) and moves the axes into primitives:
X invokes Contraction {M=[m], N=[n], K=[k]}; every other invocation below
the m (n) node gets m (n) added to its M (N) role.

Why results do not change: only `out` is written, and every invocation
touches just the out elements of its own tile, so what happens to one out
element is the same sequence of operations in the same order before and
after, provided the removed loops only interleaved work on distinct elements (the GEMM
pattern makes (m, n) -> out address injective within a tile). Hence the conditions:

- the three nodes are sequential and unguarded, and no guard below them names m, n or k;
- k has stride 0 on out, m stride 0 on in1, n stride 0 on in0;
- below the k node there is no invocation but X and no other reduction loop
  (an out-stride-0 loop of extent > 1, which would end up outside the GEMM's
  k and change the order of the sum);
- every other invocation below the m or n node is a Zero or a three-tensor
  ReLU (they act on out elements in place) whose roles do not use m or n;
- bodies at different indices of the loops that move out below the outermost
  of the three nodes write disjoint out bytes (`legality.sink_problem`): the
  lift runs m, n and k inside every other loop there, and where the tiles of
  two indices overlap, that would change which write comes last.

Candidates that fit Table 10.6.1's pattern are tried first (innermost loops
first); then those that are GEMMs only with TEIR's general strides (an operand
without a unit-stride role axis, `teir_dialect.gemm`), most unit-stride
operands first (C counted twice).

A Contraction that already has some of its roles lifts the same way with a
node for each role it lacks: FP16/BF16 from the builders have their K role
(their K loops may not move; the primitive keeps its K axes, so one rounding
per store as before), a GEMV from the einsum front end an extent-1 N axis. It
becomes a GEMM or BRGEMM when Table 10.6.1 says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import permutations

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from teir_dialect.dialect import (
    AxisOp,
    ConfigOp,
    InvokeOp,
    IterOp,
    PrimitiveOp,
    ScheduleNode,
    id_text,
)
from teir_dialect.gemm import match_contraction
from teir_dialect.vocabulary import OperationKind, Role
from teir_passes.legality import k_move_problem, sink_problem
from teir_passes.primitives import Primitives, PrimitiveTables


def _invocations(node: IterOp) -> list[InvokeOp]:
    return [op for op in node.body.walk() if isinstance(op, InvokeOp)]


def _names_axis(node: IterOp, axes: set[str]) -> bool:
    return any(
        isinstance(op, ScheduleNode)
        and op.guard is not None
        and any(term.axis_text in axes for term in op.guard.terms)
        for op in node.body.walk()
    )


def _in_place(prim: PrimitiveOp, config: ConfigOp) -> bool:
    """A Zero or a three-tensor ReLU: acts on out elements in place."""
    return prim.kind == OperationKind.ZERO or (
        prim.kind == OperationKind.RELU and config.tensor_count == 3
    )


def _element_local(invoke: InvokeOp, config: ConfigOp, used: set[str]) -> bool:
    prim = invoke.primitive_op()
    if _in_place(prim, config):
        roles = prim.role_ids(Role.M) + prim.role_ids(Role.N)
        return not ({id_text(a) for a in roles} & used)
    return False


def _census(config: ConfigOp) -> dict[IterOp, tuple[int, int]]:
    """Per iteration node, the invocations below it and how many of them are not
    in place (`_in_place`). Lifting removes loops and gives invocations primitives
    of the same operation, so the counts of the loops left stay true."""
    counts: dict[IterOp, tuple[int, int]] = {}
    for node in config.schedule.walk_nodes():
        if isinstance(node, InvokeOp):
            other = int(not _in_place(node.primitive_op(), config))
            for loop in node.ancestors():
                invocations, others = counts.get(loop, (0, 0))
                counts[loop] = (invocations + 1, others + other)
    return counts


def _reduction_inside(k_node: IterOp, op: InvokeOp) -> bool:
    """Whether a loop between `k_node` and `op` revisits out elements (a reduction)."""
    inside = list(op.ancestors())
    inside = inside[inside.index(k_node) + 1:] if k_node in inside else []
    return any(node.axis_op().stride_on("out") == 0 and node.axis_op().size > 1
               for node in inside)


class LiftGemm(RewritePattern):
    """Three loops m, n, k around an invocation of a scalar Contraction -> an
    invocation of a GEMM primitive (see the module docstring for the conditions)."""

    def __init__(self) -> None:
        self.primitives = PrimitiveTables()
        self.censuses: dict[ConfigOp, dict[IterOp, tuple[int, int]]] = {}

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: InvokeOp, rewriter: PatternRewriter) -> None:
        prim = op.primitive_op()
        if prim.kind != OperationKind.CONTRACTION:
            return
        partial = bool(prim.all_role_axes)
        if partial and all(prim.role_axes(r) for r in (Role.M, Role.N, Role.K)):
            return
        if not partial and k_move_problem(prim):
            return
        config = op.config
        if (census := self.censuses.get(config)) is None:
            census = self.censuses[config] = _census(config)
        if partial:
            self.lift_missing(op, prim, census, rewriter)
            return
        # Innermost candidates first: they give the smallest leading dimensions.
        path = [n for n in reversed(op.ancestors()) if not n.parallel and n.guard is None]
        for m_node, n_node, k_node in _preferred(permutations(path, 3), prim, full=True):
            # Below k only X; below m and n nothing but X that is not in place
            # (counted, so that a wide subtree is walked only when it may lift).
            if census[k_node][0] != 1 or census[m_node][1] != 1 or census[n_node][1] != 1:
                continue
            m, n, k = (x.axis_op() for x in (m_node, n_node, k_node))
            if _reduction_inside(k_node, op):
                continue
            axes = {m.axis_id, n.axis_id, k.axis_id}
            if any(_names_axis(node, axes) for node in (m_node, n_node, k_node)):
                continue
            others = list(
                {id(inv): inv for node in (m_node, n_node) for inv in _invocations(node)
                 if inv is not op}.values()
            )
            if not all(_element_local(inv, config, axes) for inv in others):
                continue
            top = next(node for node in op.ancestors() if node in (m_node, n_node, k_node))
            if sink_problem(top) is None:
                self.rewrite(self.primitives[config], op, prim, (m_node, n_node, k_node),
                             others, rewriter)
                return

    def lift_missing(self, op: InvokeOp, prim: PrimitiveOp,
                     census: dict[IterOp, tuple[int, int]], rewriter: PatternRewriter) -> None:
        """Loops around a Contraction that has some of its roles -> the roles it lacks
        (one axis each), when that makes it a GEMM or BRGEMM; its own axes stay."""
        config = op.config
        missing = [r for r in (Role.M, Role.N, Role.K) if not prim.role_axes(r)]
        if Role.K in missing and k_move_problem(prim):
            return
        path = [n for n in reversed(op.ancestors()) if not n.parallel and n.guard is None]
        for nodes in _preferred(permutations(path, len(missing)), prim, missing=missing):
            chosen = dict(zip(missing, nodes))
            if any(census[node][1] != 1 for role, node in chosen.items() if role != Role.K):
                continue
            if (k_node := chosen.get(Role.K)) is not None and (
                census[k_node][0] != 1 or _reduction_inside(k_node, op)
            ):
                continue
            roles = {role: [node.axis_op()] for role, node in chosen.items()}
            axes = {axis[0].axis_id for axis in roles.values()}
            if any(_names_axis(node, axes) for node in nodes):
                continue
            others = list(
                {id(inv): inv for role, node in chosen.items() if role != Role.K
                 for inv in _invocations(node) if inv is not op}.values()
            )
            if not all(_element_local(inv, config, axes) for inv in others):
                continue
            top = next(node for node in op.ancestors() if node in nodes)
            if sink_problem(top) is None:
                self.rewrite(self.primitives[config], op, prim,
                             (chosen.get(Role.M), chosen.get(Role.N), chosen.get(Role.K)),
                             others, rewriter)
                return

    @staticmethod
    def rewrite(
        table: Primitives,
        op: InvokeOp,
        prim: PrimitiveOp,
        nodes: tuple[IterOp | None, IterOp | None, IterOp | None],
        others: list[InvokeOp],
        rewriter: PatternRewriter,
    ) -> None:
        """X invokes the GEMM, the other invocations get m / n into their roles, and
        the nodes (None: the primitive has that role already) give way to their
        children."""
        m_node, n_node, k_node = nodes
        old = [prim]
        roles = {role: [node.axis] for role, node in zip((Role.M, Role.N, Role.K), nodes)
                 if node is not None}
        full = not prim.all_role_axes
        gemm = table.with_roles(prim, roles, "gemm" if full else None)
        _retarget(table, op, gemm, rewriter)
        for inv in others:
            extra: dict[str, list[Attribute]] = {Role.M: [], Role.N: []}
            below = {a.node_id for a in inv.ancestors()}
            if m_node is not None and m_node.node_id in below:
                extra[Role.M].append(m_node.axis)
            if n_node is not None and n_node.node_id in below:
                extra[Role.N].append(n_node.axis)
            source = inv.primitive_op()
            old.append(source)
            _retarget(table, inv, table.with_roles(source, extra, source.kind.lower()), rewriter)
        for node in (k_node, n_node, m_node):
            if node is None:
                continue
            children = node.children
            for child in children:
                child.detach()
            rewriter.replace(node, children, [])
        table.erase_unused(old)


def _unit_operands(params: dict[str, int]) -> int:
    """How many of A, B, C a GEMM reads along a unit-stride role axis (C counted
    twice: it is read and written, and lane by lane when strided)."""
    return sum((2 if name == "incc" else 1) * (params.get(name, 1) == 1)
               for name in ("inca", "incb", "incc"))


def _preferred(candidates: Iterable[tuple[IterOp, ...]], prim: PrimitiveOp, *,
               full: bool = False, missing: Sequence[str] = ()) -> list[tuple[IterOp, ...]]:
    """The node tuples (m, n, k for a `full` lift, else one per `missing` role)
    that make `prim` a GEMM/BRGEMM, best first: those that fit Table 10.6.1 in
    the order given, then those with general strides (`teir_dialect.gemm`), most
    unit-stride operands first (a stable sort: the order given breaks ties)."""
    table: list[tuple[IterOp, ...]] = []
    strided: list[tuple[int, tuple[IterOp, ...]]] = []
    for nodes in candidates:
        roles = dict(zip((Role.M, Role.N, Role.K) if full else missing,
                         ([node.axis_op()] for node in nodes)))
        match = match_contraction(_Roles(prim, roles))
        if not match.microkernel:
            continue
        if _unit_operands(match.params) == 4:
            table.append(nodes)
        else:
            strided.append((-_unit_operands(match.params), nodes))
    return table + [nodes for _, nodes in sorted(strided, key=lambda item: item[0])]


@dataclass(frozen=True)
class _Roles:
    """`prim` as it would be with `roles` added (for `match_contraction`)."""

    prim: PrimitiveOp
    roles: dict[str, list[AxisOp]]

    @property
    def kind(self) -> str:
        return self.prim.kind

    @property
    def element_width(self) -> int:
        return self.prim.element_width

    def role_axes(self, role: str) -> Sequence[AxisOp]:
        return self.roles.get(role) or self.prim.role_axes(role)


def _retarget(table: Primitives, invoke: InvokeOp, prim: PrimitiveOp,
              rewriter: PatternRewriter) -> None:
    table.retarget(invoke, prim)
    rewriter.notify_op_modified(invoke)


@dataclass(frozen=True)
class LiftGemmPass(ModulePass):
    """Turns scalar Contractions with GEMM-shaped loops around them into GEMM primitives."""

    name = "teir-lift-gemm"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        self.rewrite(op)

    def rewrite(self, op: builtin.ModuleOp) -> bool:
        """Applies the pass; whether it changed anything."""
        return PatternRewriteWalker(LiftGemm()).rewrite_module(op)
