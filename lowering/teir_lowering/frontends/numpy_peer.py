"""The same operation in numpy, for checks and speed comparisons.

A configuration whose invocations are one Contraction, optionally with a Zero
of its out tile before it and a ReLU of that tile after it, computes
`out = [relu]([out +] einsum(in0, in1))` over strided views of the buffers;
one whose primitives are Copy (or a unary ReLU) is a strided assignment, i.e.
a transpose. The views come straight from the axes: each tensor's view has
one dimension per axis with a non-zero stride on it.

The Zero and the ReLU count only where they act as the spec's reduction
initialization and finalization (§10.2.1): run on the same out elements as the
Contraction, before / after it, and under the reduction loops they share with
it only at the first / last iteration (`first(k)` / `last(k)`, or no guard when
no shared loop reduces). Anything else has no numpy peer (None).

The views address elements (byte strides and offsets divided by the data
type's width), so a peer runs on arrays of any dtype that hold the same
elements: the kernel's own, or float64 copies for an exact reference.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from teir_dialect.dialect import AxisOp, ConfigOp, InvokeOp, IterOp
from teir_dialect.strided import disjoint_windows
from teir_dialect.vocabulary import GuardKind, OperationKind

Call = Callable[[], np.ndarray]


class NumpyPeer:
    """A numpy formulation of a configuration. `bind(arrays)` makes the views of the
    arrays once and gives the computation on them, returning out (what a speed
    comparison times: a numpy user holds such arrays already, and making strided
    views costs more than a small einsum); `peer(arrays)` does both."""

    def __init__(self, bind: Callable[[Sequence[np.ndarray]], Call]) -> None:
        self.bind = bind

    def __call__(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        return self.bind(arrays)()


BRUTE_FORCE_LIMIT = 1 << 20
"""Index tuples of out enumerated, at most, to decide that its view does not alias itself."""


def out_aliases_itself(config: ConfigOp) -> bool:
    """Whether two index tuples of out's non-reduction axes address the same element
    (strides like m=1, n=1): the kernel and the interpreter then update that element
    once per tuple, while numpy's view of it is written as one element, so numpy is no
    peer. A view the mixed-radix test cannot clear is enumerated up to
    BRUTE_FORCE_LIMIT tuples; beyond that it counts as aliasing (no peer)."""
    width = config.primitives[0].element_width if config.primitives else 1
    axes = [(a.size, abs(a.stride_on("out"))) for a in config.axes
            if a.stride_on("out") != 0 and a.size > 1]
    if disjoint_windows(axes, width):
        return False
    if int(np.prod([size for size, _ in axes])) > BRUTE_FORCE_LIMIT:
        return True
    offsets = np.zeros(1, dtype=np.int64)
    for size, stride in axes:
        offsets = (offsets[:, None] + stride * np.arange(size, dtype=np.int64)).reshape(-1)
    return bool(np.any(np.diff(np.sort(offsets)) < width))


def _view(
    array: np.ndarray, axes: Sequence[AxisOp], tensor: str, offset_bytes: int, width: int
) -> np.ndarray:
    """The elements of `array` the axes address (bytes of `width`-byte elements)."""
    flat = array.reshape(-1)
    return as_strided(
        flat[offset_bytes // width :],
        shape=[axis.size for axis in axes],
        strides=[axis.stride_on(tensor) // width * array.itemsize for axis in axes],
        writeable=tensor == "out",
    )


def _relu(values: np.ndarray) -> np.ndarray:
    """relu as the interpreter defines it: 0 where x < 0, else x."""
    return np.where(values < 0, 0, values)


def _out_axes(invocation: InvokeOp, below: int) -> set[str]:
    """Axes with a stride on out that the invocation covers inside its first
    `below` ancestors: its own loops below them and its primitive's role axes."""
    axes = [ancestor.axis_op() for ancestor in invocation.ancestors()[below:]]
    axes += invocation.primitive_op().all_role_axes
    return {axis.axis_id for axis in axes if axis.stride_on("out") != 0}


def _unguarded(nodes: Sequence[IterOp | InvokeOp]) -> bool:
    return all(node.guard is None for node in nodes)


def _wraps(contraction: InvokeOp, other: InvokeOp, kind: GuardKind) -> bool:
    """Whether `other` initializes (FIRST: runs before) or finalizes (LAST: runs
    after) every out element of the contraction, once its reduction is complete."""
    outer, inner = contraction.ancestors(), other.ancestors()
    shared = 0
    while shared < min(len(outer), len(inner)) and outer[shared] is inner[shared]:
        shared += 1
    # The two branches of the deepest shared loop (or of the schedule) they sit in.
    branch = (outer + [contraction])[shared]
    other_branch = (inner + [other])[shared]
    parent = branch.parent_block()
    assert parent is not None  # a schedule node sits in a loop's or the schedule's block
    siblings = list(parent.ops)
    before = siblings.index(other_branch) < siblings.index(branch)
    if before != (kind is GuardKind.FIRST) or not _unguarded(inner[shared:]):
        return False
    reductions = {
        loop.axis_id for loop in outer[:shared] if loop.axis_op().stride_on("out") == 0
    }
    terms = [] if other.guard is None else list(other.guard.terms)
    if any(t.kind.data != kind or t.axis_text not in reductions for t in terms):
        return False
    guarded = {t.axis_text for t in terms}
    shared_loops = {loop.axis_id: loop.axis_op() for loop in outer[:shared]}
    if any(shared_loops[axis].size > 1 for axis in reductions - guarded):
        return False
    return _out_axes(other, shared) == _out_axes(contraction, shared)


def _contraction_peer(
    config: ConfigOp, invocations: Sequence[InvokeOp]
) -> tuple[bool, bool] | None:
    """(zero first, relu last) when the invocations are a plain contraction with
    an optional initializing Zero and finalizing ReLU; else None."""
    by_kind: dict[str, list[InvokeOp]] = {}
    for invocation in invocations:
        by_kind.setdefault(invocation.primitive_op().kind, []).append(invocation)
    if (
        config.tensor_count != 3
        or set(by_kind) - {OperationKind.CONTRACTION, OperationKind.ZERO, OperationKind.RELU}
        or any(len(nodes) != 1 for nodes in by_kind.values())
    ):
        return None
    contraction = by_kind.get(OperationKind.CONTRACTION, [None])[0]
    if contraction is None or not _unguarded([*contraction.ancestors(), contraction]):
        return None
    zero = by_kind.get(OperationKind.ZERO, [None])[0]
    relu = by_kind.get(OperationKind.RELU, [None])[0]
    if zero is not None and not _wraps(contraction, zero, GuardKind.FIRST):
        return None
    if relu is not None and not _wraps(contraction, relu, GuardKind.LAST):
        return None
    return zero is not None, relu is not None


def numpy_peer(config: ConfigOp) -> tuple[str, NumpyPeer] | None:
    """(description, function computing the result in place on out) or None: the
    reference formulation, the first of `numpy_peers`."""
    peers = numpy_peers(config)
    return peers[0] if peers else None


def numpy_peers(config: ConfigOp) -> list[tuple[str, NumpyPeer]]:
    """Every numpy formulation of the configuration (none without a peer), as
    (description, function computing the result in place on out), the reference
    first. A contraction has `np.einsum` with optimize=True (which plans a path
    on every call), with optimize=False (numpy's own loops, no BLAS), with a
    path `np.einsum_path` planned once, and `np.tensordot` where no axis is
    shared by both inputs and out (a batch axis) nor summed in one input only;
    a speed comparison times them all and reports the fastest, so that
    einsum's planning is not counted as the kernel's speed."""
    invocations = [n for n in config.schedule.walk_nodes() if isinstance(n, InvokeOp)]
    kinds = sorted({p.kind for p in config.primitives})
    widths = {p.element_width for p in config.primitives}
    if len(widths) != 1:
        return []
    (width,) = widths
    axes = config.axes
    if len(axes) > len(string.ascii_letters):
        return []
    ids = [axis.axis_id for axis in axes]
    if all(len(i) == 1 and i in string.ascii_letters for i in ids):
        letter = {i: i for i in ids}  # the user's names: 'trus,pqtu->pqrs'
    else:
        letter = {i: string.ascii_letters[n] for n, i in enumerate(ids)}
    offsets = {
        tensor: sum(axis.offset_on(tensor) for axis in axes)
        for tensor in config.tensor_names
    }
    touches = {  # each tensor's axes, outermost (largest stride) first
        tensor: sorted(
            (axis for axis in axes if axis.stride_on(tensor) != 0),
            key=lambda axis, tensor=tensor: -axis.stride_on(tensor),
        )
        for tensor in config.tensor_names
    }

    def view(array: np.ndarray, tensor: str) -> np.ndarray:
        return _view(array, touches[tensor], tensor, offsets[tensor], width)

    def letters(tensor: str) -> str:
        return "".join(letter[a.axis_id] for a in touches[tensor])

    if out_aliases_itself(config):
        return []  # numpy writes such a view once per element, the kernel once per index
    wrapped = _contraction_peer(config, invocations)
    if wrapped is not None:
        tensors = ("in0", "in1", "out")
        return _contraction_peers(
            *wrapped, view, [letters(t) for t in tensors],
            [[axis.size for axis in touches[t]] for t in tensors],
        )
    if kinds in (["Copy"], ["ReLU"]) and config.tensor_count == 2:
        relu = kinds == ["ReLU"]
        spec = letters("in0") + "->" + letters("out")

        def copy(arrays: Sequence[np.ndarray]) -> Call:
            in0, out = arrays
            order = [touches["in0"].index(a) for a in touches["out"]]
            values = np.transpose(view(in0, "in0"), order)
            target = view(out, "out")

            def call() -> np.ndarray:
                np.copyto(target, _relu(values) if relu else values)
                return out

            return call

        if sorted(a.axis_id for a in touches["in0"]) != sorted(
            a.axis_id for a in touches["out"]
        ):
            return []
        return [(f"np.copyto(out, np.transpose(in0)) ('{spec}')", NumpyPeer(copy))]
    return []


def _contraction_peers(
    zero_first: bool,
    relu_last: bool,
    view: Callable[[np.ndarray, str], np.ndarray],
    terms: Sequence[str],
    shapes: Sequence[Sequence[int]],
) -> list[tuple[str, NumpyPeer]]:
    """`numpy_peers` of `out = [relu]([out +] in0 * in1)` whose views have the
    einsum subscripts `terms` and the shapes `shapes` (in0, in1, out)."""
    names = ("in0", "in1", "out")
    spec = f"{terms[0]},{terms[1]}->{terms[2]}"
    direct = zero_first and not relu_last  # numpy can write straight into out

    def finish(result: np.ndarray, target: np.ndarray) -> None:
        if not zero_first:
            result = target + result
        target[...] = _relu(result) if relu_last else result

    def einsum(optimize: bool | list) -> NumpyPeer:
        def bind(arrays: Sequence[np.ndarray]) -> Call:
            x, y, target = (view(a, t) for a, t in zip(arrays, names))

            def call() -> np.ndarray:
                if direct:
                    np.einsum(spec, x, y, optimize=optimize, out=target)
                else:
                    finish(np.einsum(spec, x, y, optimize=optimize), target)
                return arrays[2]

            return call

        return NumpyPeer(bind)

    def described(text: str) -> str:
        return f"relu({text})" if relu_last else text

    # The path depends on the shapes only: planned on broadcast views of one element.
    path = np.einsum_path(
        spec, *(np.broadcast_to(np.zeros(()), shape) for shape in shapes[:2]),
        optimize=True,
    )[0]
    peers = [
        (described(f"np.einsum('{spec}', optimize=True)"), einsum(True)),
        (described(f"np.einsum('{spec}', optimize=False)"), einsum(False)),
        (described(f"np.einsum('{spec}', optimize={path}) (planned once by "
                   "np.einsum_path)"), einsum(path)),
    ]
    out = terms[2]
    summed = [c for c in terms[0] if c in terms[1] and c not in out]
    batch = [c for c in out if c in terms[0] and c in terms[1]]

    def produced(pair: tuple[int, int]) -> list[str]:
        """The result's axes when the inputs come in this order: batch, the first's
        free axes, the second's."""
        return batch + [c for i in pair for c in terms[i] if c not in summed + batch]

    # The input order that leaves out's axes in place, when one does: no transposing copy.
    pair = next((p for p in ((0, 1), (1, 0)) if produced(p) == list(out)), (0, 1))
    first, second = (terms[i] for i in pair)
    result = produced(pair)
    order = [result.index(c) for c in out]
    transposed = "" if order == sorted(order) else f".transpose({order})"
    if (sorted(result) != sorted(out) or sorted(first + second) != sorted(
            result + batch + 2 * summed)):
        return peers  # an axis summed in one input only, or missing from both
    if not batch:
        axes = ([first.index(c) for c in summed], [second.index(c) for c in summed])

        def tensordot(arrays: Sequence[np.ndarray]) -> Call:
            views = [view(a, t) for a, t in zip(arrays, names)]
            x, y, target = views[pair[0]], views[pair[1]], views[2]

            def call() -> np.ndarray:
                finish(np.tensordot(x, y, axes=axes).transpose(order), target)
                return arrays[2]

            return call

        peers.append((described(
            f"np.tensordot({names[pair[0]]}, {names[pair[1]]}, axes={axes}){transposed}"
            f" ('{spec}')"
        ), NumpyPeer(tensordot)))
        return peers
    # Batch axes (in both inputs and out): np.matmul on (batch, m, k) x (batch, k, n).
    size = dict(zip(terms[0] + terms[1], [*shapes[0], *shapes[1]]))

    def flat(letters: Sequence[str]) -> int:
        return int(np.prod([size[c] for c in letters], dtype=np.int64))

    rows = [c for c in first if c not in summed + batch]
    columns = [c for c in second if c not in summed + batch]
    left = ([first.index(c) for c in batch + rows + summed],
            [size[c] for c in batch] + [flat(rows), flat(summed)])
    right = ([second.index(c) for c in batch + summed + columns],
             [size[c] for c in batch] + [flat(summed), flat(columns)])
    shape = [size[c] for c in result]

    def matmul(arrays: Sequence[np.ndarray]) -> Call:
        views = [view(a, t) for a, t in zip(arrays, names)]
        x = views[pair[0]].transpose(left[0])
        y = views[pair[1]].transpose(right[0])
        target = views[2]

        def call() -> np.ndarray:
            product = np.matmul(x.reshape(left[1]), y.reshape(right[1]))
            finish(product.reshape(shape).transpose(order), target)
            return arrays[2]

        return call

    peers.append((described(
        f"np.matmul({names[pair[0]]}, {names[pair[1]]}) over batch '{''.join(batch)}'"
        f"{transposed} ('{spec}')"
    ), NumpyPeer(matmul)))
    return peers
