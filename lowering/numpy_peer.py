"""The same operation in numpy, for checks and speed comparisons.

A configuration whose primitives are one Contraction (with Zero on the same
output, optionally) computes `out = [out +] einsum(in0, in1)` over strided
views of the buffers; one whose primitives are Copy (or a unary ReLU) is a
strided assignment, i.e. a transpose. The views come straight from the axes:
each tensor's view has one dimension per axis with a non-zero stride on it.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from teir_dialect.dialect import AxisOp, ConfigOp

NumpyPeer = Callable[[Sequence[np.ndarray]], np.ndarray]


def _view(
    array: np.ndarray, axes: Sequence[AxisOp], tensor: str, offset_bytes: int
) -> np.ndarray:
    flat = array.reshape(-1)
    offset = offset_bytes // array.itemsize
    return as_strided(
        flat[offset:],
        shape=[axis.size for axis in axes],
        strides=[axis.stride_on(tensor) for axis in axes],
        writeable=tensor == "out",
    )


def numpy_peer(config: ConfigOp) -> tuple[str, NumpyPeer] | None:
    """(description, function computing the result in place on out) or None."""
    kinds = sorted({p.kind for p in config.primitives})
    axes = config.axes
    if len(axes) > len(string.ascii_letters):
        return None
    ids = [axis.axis_id for axis in axes]
    if all(len(i) == 1 and i in string.ascii_letters for i in ids):
        letter = {i: i for i in ids}  # the user's names: 'trus,pqtu->pqrs'
    else:
        letter = {i: string.ascii_letters[n] for n, i in enumerate(ids)}
    offsets = {
        tensor: sum(axis.offset_on(tensor) for axis in axes) for tensor in config.tensor_names
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
    if kinds in (["Contraction"], ["Contraction", "Zero"]):
        spec = (
            "".join(letter[a.axis_id] for a in touches["in0"])
            + ","
            + "".join(letter[a.axis_id] for a in touches["in1"])
            + "->"
            + "".join(letter[a.axis_id] for a in touches["out"])
        )
        zero_first = "Zero" in kinds

        def contract(arrays: Sequence[np.ndarray]) -> np.ndarray:
            in0, in1, out = arrays
            result = np.einsum(
                spec,
                _view(in0, touches["in0"], "in0", offsets["in0"]),
                _view(in1, touches["in1"], "in1", offsets["in1"]),
                optimize=True,
            )
            view = _view(out, touches["out"], "out", offsets["out"])
            if zero_first:
                view[...] = result
            else:
                view += result
            return out

        return f"np.einsum('{spec}', optimize=True)", contract
    if kinds in (["Copy"], ["ReLU"]) and config.tensor_count == 2:
        relu = kinds == ["ReLU"]
        spec = (
            "".join(letter[a.axis_id] for a in touches["in0"])
            + "->"
            + "".join(letter[a.axis_id] for a in touches["out"])
        )

        def copy(arrays: Sequence[np.ndarray]) -> np.ndarray:
            in0, out = arrays
            source = _view(in0, touches["in0"], "in0", offsets["in0"])
            order = [touches["in0"].index(a) for a in touches["out"]]
            values = np.transpose(source, order)
            view = _view(out, touches["out"], "out", offsets["out"])
            if relu:
                np.copyto(view, np.where(values < 0, 0, values))
            else:
                np.copyto(view, values)
            return out

        if sorted(a.axis_id for a in touches["in0"]) != sorted(a.axis_id for a in touches["out"]):
            return None
        return f"np.copyto(out, np.transpose(in0)) ('{spec}')", copy
    return None
