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
from teir_dialect.vocabulary import GuardKind, OperationKind

NumpyPeer = Callable[[Sequence[np.ndarray]], np.ndarray]


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
    """(description, function computing the result in place on out) or None."""
    invocations = [n for n in config.schedule.walk_nodes() if isinstance(n, InvokeOp)]
    kinds = sorted({p.kind for p in config.primitives})
    widths = {p.element_width for p in config.primitives}
    if len(widths) != 1:
        return None
    (width,) = widths
    axes = config.axes
    if len(axes) > len(string.ascii_letters):
        return None
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
    # Every element of out must be written once per full contraction: the out
    # view must not alias itself, which distinct strides on distinct axes give
    # for the dense layouts of the spec; we accept the views as they come.
    wrapped = _contraction_peer(config, invocations)
    if wrapped is not None:
        zero_first, relu_last = wrapped
        spec = (
            "".join(letter[a.axis_id] for a in touches["in0"])
            + ","
            + "".join(letter[a.axis_id] for a in touches["in1"])
            + "->"
            + "".join(letter[a.axis_id] for a in touches["out"])
        )

        def contract(arrays: Sequence[np.ndarray]) -> np.ndarray:
            in0, in1, out = arrays
            result = np.einsum(
                spec,
                _view(in0, touches["in0"], "in0", offsets["in0"], width),
                _view(in1, touches["in1"], "in1", offsets["in1"], width),
                optimize=True,
            )
            view = _view(out, touches["out"], "out", offsets["out"], width)
            if not zero_first:
                result = view + result
            view[...] = _relu(result) if relu_last else result
            return out

        einsum = f"np.einsum('{spec}', optimize=True)"
        return (f"relu({einsum})" if relu_last else einsum), contract
    if kinds in (["Copy"], ["ReLU"]) and config.tensor_count == 2:
        relu = kinds == ["ReLU"]
        spec = (
            "".join(letter[a.axis_id] for a in touches["in0"])
            + "->"
            + "".join(letter[a.axis_id] for a in touches["out"])
        )

        def copy(arrays: Sequence[np.ndarray]) -> np.ndarray:
            in0, out = arrays
            source = _view(in0, touches["in0"], "in0", offsets["in0"], width)
            order = [touches["in0"].index(a) for a in touches["out"]]
            values = np.transpose(source, order)
            view = _view(out, touches["out"], "out", offsets["out"], width)
            np.copyto(view, _relu(values) if relu else values)
            return out

        if sorted(a.axis_id for a in touches["in0"]) != sorted(
            a.axis_id for a in touches["out"]
        ):
            return None
        return f"np.copyto(out, np.transpose(in0)) ('{spec}')", copy
    return None
