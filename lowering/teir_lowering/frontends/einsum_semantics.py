"""`teir_lowering.einsum`: `np.einsum`'s signature and semantics on TEIR kernels.

    teir_lowering.einsum("ij,jk", a, b)                 # implicit output: 'ik'
    teir_lowering.einsum("...ij,...jk->...ik", a, b)    # broadcast batch
    teir_lowering.einsum(a, [0, 1], b, [1, 2], [0, 2])  # sublist form
    teir_lowering.einsum("ii->i", a[::-1])              # a diagonal of a view

The subscripts are parsed by opt_einsum's parser (after numpy's own checks
of the characters, the sublists and the ellipses it does not make), then
everything is reduced to what `einsum_frontend` runs, one TEIR kernel per
step, with no numpy arithmetic:

- an operand becomes a view with one axis per distinct index: a repeated index
  is one axis whose stride is the sum of its strides (a diagonal), a size-1
  dimension broadcast against a longer one is a stride-0 axis of that extent;
- an index whose strides are negative in every tensor that has it is walked
  the other way (the view starts at its far end, strides negated: the same
  elements, paired the same way); an operand left with a negative stride is
  copied (numpy's copy: TEIR's strides are non-negative, so no TEIR Copy can
  reverse an axis), an `out` so left is written through a temporary;
- an index of one operand only that the output lacks is summed first, as a
  Contraction of the operand with a stride-0 operand holding 1.0 (x * 1 is
  exact; the sum is then a GEMV-shaped reduction TEIR's scheduler handles);
  a lone operand without such indices is a permutation (Copy);
- an operand of another element type than the result's is converted by
  numpy's astype (TEIR's Copy copies within one data type, spec §10.3);
  an `out` of another type receives the result through a temporary.

The result type is numpy's (`np.result_type` of the operands, and of `out`
when given, or `dtype=`), checked against `casting=` like numpy; float16,
bfloat16, float32 and float64 are TEIR data types, any other element type is a
TypeError naming it. Plans are cached per subscripts, layouts, dtypes, out
layout and options, so a repeated call costs a dictionary lookup, the views
and the kernel's own checks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from opt_einsum.parser import parse_einsum_input

from teir_dialect.arrays import plain_array, result_array
from teir_dialect.ops import BF16_PRODUCT_MODES
from teir_dialect.vocabulary import DataType, parse_enum

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SUBLIST_LETTERS = _LETTERS[26:] + _LETTERS[:26]
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_TEIR_TYPES = {"float16": "FP16", "bfloat16": "BF16", "float32": "FP32", "float64": "FP64"}

Run = Callable[[Sequence[np.ndarray], "np.ndarray | None", "int | None"], Any]
_PLANS: dict[tuple, Run] = {}
_LOCK = threading.Lock()


def einsum(subscripts: object, *operands: object, out: object = None,
           dtype: object = None, order: str = "K", casting: str = "safe",
           optimize: object = False, relu: bool = False, threads: int | None = None,
           tune: bool = False, bf16_products: str | None = None) -> Any:
    """`np.einsum(subscripts, *operands, out=, dtype=, order=, casting=)`, and with
    `relu` relu of it, computed by compiled TEIR kernels.

    `dtype` is a numpy dtype or a TEIR data type spelled "FP16", "BF16",
    "TF32", "FP32", "FP64" (TF32: float32 storage, TF32 products). `order`
    lays out a new result ('K' gives C order). `optimize` is numpy's (a path
    finder or a path); it matters from three operands on. `tune=True`
    searches a schedule first (teir-tune) for kernels that have none stored.
    `bf16_products="pairs"` (BF16 only; AVX512-BF16 hosts, else an error) lets
    the contractions' microkernels pair products with `vdpbf16ps` (README,
    Data types: another rounding order, bf16 subnormals read as zero).
    """
    if bf16_products is not None and bf16_products not in BF16_PRODUCT_MODES:
        raise ValueError(f"einsum: bf16_products is one of {', '.join(BF16_PRODUCT_MODES)}, "
                         f"got {bf16_products!r}")
    if type(subscripts) is str:
        spec, given = subscripts, operands
    elif isinstance(subscripts, str | bytes):  # np.str_, a str subclass, b"ij,jk"
        spec, given = (subscripts.decode("ascii", "replace") if isinstance(
            subscripts, bytes) else str(subscripts)), operands
    else:
        spec, given = _interleaved(subscripts, operands)
    # (comprehensions and loops, not generators: this runs on every call)
    arrays = tuple([a if type(a) is np.ndarray else _as_array(a, f"einsum: operand {i}")
                    for i, a in enumerate(given)])
    target = None
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"einsum: out must be a numpy array, got {type(out).__name__}")
        target = plain_array(out, "einsum: out")
        if not target.flags.writeable:
            raise ValueError("einsum: out is read-only")
        # arrays that allocated their memory share none of it (base None alone is
        # not enough: an extension may wrap memory it does not own without a base)
        owned = target.flags.owndata
        if True in [a is target or not (owned and a.flags.owndata)
                    and np.may_share_memory(target, a) for a in arrays]:
            # TEIR zeroes out before it accumulates: an out that overlaps an
            # operand receives the result through a temporary.
            scratch = np.empty(target.shape, target.dtype)
            einsum(spec, *arrays, out=scratch, dtype=dtype, order=order, casting=casting,
                   optimize=optimize, relu=relu, threads=threads, tune=tune,
                   bf16_products=bf16_products)
            np.copyto(target, scratch)
            return out
    key = (spec, tuple([(a.shape, a.strides, a.dtype) for a in arrays]),
           None if target is None else (target.shape, target.strides, target.dtype),
           dtype, order, casting, relu,
           None if len(arrays) <= 2 else
           optimize if isinstance(optimize, (bool, str)) else repr(optimize), bf16_products)
    run = _PLANS.get(key)  # one dict read: atomic, no lock (writes take it)
    if bf16_products is None:  # the records' default: no context to set
        result = run(arrays, target, threads) if run is not None else _planned(
            key, run, spec, arrays, target, dtype, order, casting, optimize, relu, threads,
            tune)
    else:
        from teir_lowering.frontends.einsum_frontend import (
            bf16_products as paired_products,
        )

        # kernels may be planned on a plan's first run too (its scratch copies' plans)
        with paired_products(bf16_products):
            result = _planned(key, run, spec, arrays, target, dtype, order, casting,
                              optimize, relu, threads, tune)
    if target is not None:
        return out
    return result[()] if result.ndim == 0 else result


def tensordot(a: np.ndarray, b: np.ndarray, axes: object = 2, *,
              threads: int | None = None) -> np.ndarray:
    """`np.tensordot(a, b, axes)` as the einsum it is (one TEIR contraction, numpy's
    result type): `axes` is N (the last N axes of a with the first N of b) or a
    pair of axis lists (or single axes)."""
    a_array, b_array = (np.asarray(x) if not isinstance(x, np.ndarray) else x
                        for x in (a, b))
    if isinstance(axes, (int, np.integer)):
        count = int(axes)
        if count < 0 or count > min(a_array.ndim, b_array.ndim):
            raise ValueError(f"tensordot: axes={count} for operands of {a_array.ndim} "
                             f"and {b_array.ndim} dimensions")
        a_axes, b_axes = list(range(a_array.ndim - count, a_array.ndim)), list(range(count))
    else:
        try:
            a_axes, b_axes = axes  # pyright: ignore[reportGeneralTypeIssues]
        except (TypeError, ValueError):
            raise ValueError(f"tensordot: axes must be an int or a pair, got {axes!r}")
        a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError("tensordot: shape-mismatch for sum (axes of different lengths)")
    a_axes = [_axis(x, a_array.ndim) for x in a_axes]
    b_axes = [_axis(x, b_array.ndim) for x in b_axes]
    if len(set(a_axes)) != len(a_axes) or len(set(b_axes)) != len(b_axes):
        raise ValueError("tensordot: an axis is summed twice")
    if a_array.ndim + b_array.ndim > len(_LETTERS):
        raise ValueError(f"tensordot: more than {len(_LETTERS)} dimensions")
    letters = iter(_LETTERS)
    a_term = [next(letters) for _ in range(a_array.ndim)]
    b_term = [next(letters) for _ in range(b_array.ndim)]
    for x, y in zip(a_axes, b_axes):
        if a_array.shape[x] != b_array.shape[y]:
            raise ValueError(f"tensordot: shape-mismatch for sum: axis {x} of a has "
                             f"{a_array.shape[x]}, axis {y} of b {b_array.shape[y]}")
        b_term[y] = a_term[x]
    output = ([i for n, i in enumerate(a_term) if n not in a_axes]
              + [i for n, i in enumerate(b_term) if n not in b_axes])
    return np.asarray(einsum(f"{''.join(a_term)},{''.join(b_term)}->{''.join(output)}",
                             a_array, b_array, threads=threads))  # 0-d: numpy's array


def _axis(axis: object, ndim: int) -> int:
    index = int(axis)  # pyright: ignore[reportArgumentType]
    if not -ndim <= index < ndim:
        raise ValueError(f"tensordot: axis {index} is out of range for {ndim} dimensions")
    return index % ndim


def _as_array(value: object, subject: str) -> np.ndarray:
    """An ndarray subclass as a plain view of its memory, anything else as numpy
    reads it (a list, a Python float: np.asarray)."""
    if isinstance(value, np.ndarray):
        return plain_array(value, subject)
    return np.asarray(value)


def _interleaved(first: object, rest: Sequence[object]) -> tuple[str, tuple[object, ...]]:
    """numpy's sublist form as a subscripts string: 0-25 are A-Z, 26-51 a-z, as
    numpy spells them (so the implicit output is in label order), Ellipsis '...'."""
    items = (first, *rest)
    operands = items[0::2][: len(items) // 2]
    sublists = items[1::2][: len(items) // 2]
    output = items[-1] if len(items) % 2 else None

    def term(sublist: object) -> str:
        try:
            labels = list(sublist)  # pyright: ignore[reportArgumentType]
        except TypeError:
            raise TypeError(
                f"einsum: a subscript list must be a list of integers and Ellipsis, "
                f"got {type(sublist).__name__}"
            ) from None
        text = ""
        for label in labels:
            if label is Ellipsis:
                text += "..."
            elif isinstance(label, (int, np.integer)) and not isinstance(label, bool):
                if not 0 <= label < len(_LETTERS):
                    raise ValueError(
                        f"einsum: subscript {label} is not within the valid range [0, 52)"
                    )
                text += _SUBLIST_LETTERS[label]
            else:
                raise TypeError(
                    "einsum: each subscript must be either an integer or an ellipsis, "
                    f"got {label!r}"
                )
        return text

    spec = ",".join(term(s) for s in sublists)
    if output is not None:
        spec += "->" + term(output)
    return spec, operands


# --------------------------------------------------------------------------
# Parsing and types
# --------------------------------------------------------------------------


def _parse(spec: str, arrays: Sequence[np.ndarray]) -> tuple[list[str], str]:
    """Input terms and output (one character per dimension, ellipses replaced)
    after numpy's checks that opt_einsum's parser does not make."""
    text = spec.replace(" ", "")  # numpy's: spaces, not other white space
    left, arrow, output = text.partition("->")
    for char in text:
        if (char not in _LETTERS and char not in ",->.") or (char == "," and char in output):
            raise ValueError(
                f"einsum: invalid subscript {char!r} in {spec!r}; subscripts are the "
                "letters a-z and A-Z"
            )
    arrows = text.count("->")
    if arrows > 1 or text.count("-") != arrows or text.count(">") != arrows:
        raise ValueError(f"einsum: {spec!r} does not contain one proper '->'")
    terms = left.split(",")
    if not arrays:
        raise ValueError("einsum: no operands given")
    if len(terms) != len(arrays):
        raise ValueError(
            f"einsum: {spec!r} names {len(terms)} operand(s) but {len(arrays)} were given"
        )
    for where, term in [*((f"operand {i}", t) for i, t in enumerate(terms)),
                        ("the output", output)]:
        if term.count(".") not in (0, 3) or (term.count(".") == 3 and "..." not in term):
            raise ValueError(
                f"einsum: {spec!r} has a '.' that is not part of an ellipsis ('...') "
                f"in {where}"
            )
    for index, (term, array) in enumerate(zip(terms, arrays)):
        named = len(term.replace("...", ""))
        if named > array.ndim:
            raise ValueError(
                f"einsum: {spec!r} names {named} dimensions for operand {index}, which "
                f"has {array.ndim} {array.shape}"
            )
        if "..." not in term and named < array.ndim:
            raise ValueError(
                f"einsum: operand {index} has {array.ndim} dimensions {array.shape} but "
                f"{spec!r} names {named} and no '...' to broadcast the others"
            )
        if arrow and "..." in term and "..." not in output and named < array.ndim:
            raise ValueError(
                f"einsum: operand {index} has dimensions under '...' but the output "
                f"{output!r} has no '...' to put them in"
            )
    try:
        inputs, result, _ = parse_einsum_input((text, *arrays))
    except ValueError as error:
        raise ValueError(f"einsum: {spec!r}: {error}") from None
    return inputs.split(","), result


def _planned(key: tuple, run: Run | None, spec: str, arrays: tuple[np.ndarray, ...],
             target: np.ndarray | None, dtype: object, order: str, casting: str,
             optimize: object, relu: bool, threads: int | None, tune: bool) -> np.ndarray:
    """`run` (planned and kept under `key` first when None) on the arrays."""
    if run is None:
        run = _plan(spec, arrays, target, dtype, order, casting, optimize, relu, threads,
                    tune)
        with _LOCK:
            _PLANS[key] = run
    return run(arrays, target, threads)


def _check_float(dtype: np.dtype, where: str, hint: str = "") -> None:
    if dtype.name not in _TEIR_TYPES:
        raise TypeError(
            f"einsum: {where} is {dtype}; TEIR computes in float16, bfloat16, float32 "
            f"or float64{hint}"
        )


def _check_real(dtype: np.dtype, where: str) -> None:
    """Operands and out may hold what numpy casts to a TEIR type (bool, integers:
    `einsum('ij,->ij', x, 2)` computes in x's float as numpy does); complex,
    object and text are refused by name before numpy's promotion is asked."""
    if dtype.name not in _TEIR_TYPES and dtype.kind not in "biuf":
        raise TypeError(
            f"einsum: {where} holds {dtype} elements; TEIR computes in float16, "
            "bfloat16, float32 or float64 (complex, object and text arrays are not "
            "TEIR data types)"
        )


def _types(arrays: Sequence[np.ndarray], target: np.ndarray | None, dtype: object,
           casting: str) -> tuple[np.dtype, str]:
    """The numpy dtype the result is computed in and its TEIR data type, with
    numpy's casting checks (operands to it, it to out)."""
    if not isinstance(casting, str):
        raise TypeError(f"einsum: casting must be a str, got {type(casting).__name__}")
    if casting not in _CASTINGS:
        raise ValueError(
            f"einsum: casting must be one of {', '.join(map(repr, _CASTINGS))} "
            f"(got {casting!r})"
        )
    for index, array in enumerate(arrays):
        _check_real(array.dtype, f"operand {index}")
    if target is not None:
        _check_real(target.dtype, "out")
    spelled = parse_enum(DataType, dtype)
    if spelled is not None:
        compute, teir = spelled.numpy_dtypes[0], str(spelled)
    elif dtype is not None:
        try:
            compute = np.dtype(dtype)  # pyright: ignore[reportArgumentType]
        except TypeError as error:
            raise TypeError(f"einsum: dtype {dtype!r} is not a data type ({error})") from None
        _check_float(compute, f"dtype={dtype!r}")
        teir = _TEIR_TYPES[compute.name]
    else:
        try:
            compute = np.result_type(*(a.dtype for a in arrays),
                                     *([] if target is None else [target.dtype]))
        except TypeError:
            listing = ", ".join(str(a.dtype) for a in arrays)
            raise TypeError(
                f"einsum: numpy has no common type for {listing}"
                + ("" if target is None else f" and out's {target.dtype}")
                + "; pass dtype="
            ) from None
        _check_float(compute, "the result type numpy gives these operands"
                     + ("" if target is None else " and out"),
                     " (pass dtype= to compute in one of them)")
        teir = _TEIR_TYPES[compute.name]
    compute = compute.newbyteorder("=")  # TEIR reads native byte order
    for index, array in enumerate(arrays):
        if not np.can_cast(array.dtype, compute, casting):
            raise TypeError(
                f"einsum: operand {index} cannot be cast from {array.dtype} to "
                f"{compute} according to the rule {casting!r}"
            )
    if target is not None and not np.can_cast(compute, target.dtype, casting):
        raise TypeError(
            f"einsum: the result cannot be cast from {compute} to out's {target.dtype} "
            f"according to the rule {casting!r}"
        )
    return compute, teir


def _extents(inputs: Sequence[str], arrays: Sequence[np.ndarray]) -> dict[str, int]:
    """Each index's extent, numpy's broadcasting across operands (1 against n is n)
    and equality within one operand (a diagonal)."""
    extents: dict[str, int] = {}
    for index, (term, array) in enumerate(zip(inputs, arrays)):
        own: dict[str, int] = {}
        for letter, extent in zip(term, array.shape):
            if own.setdefault(letter, extent) != extent:
                raise ValueError(
                    f"einsum: operand {index} repeats an index over dimensions of "
                    f"extents {own[letter]} and {extent}; a diagonal needs them equal"
                )
        for letter, extent in own.items():
            known = extents.setdefault(letter, extent)
            if known != extent and 1 not in (known, extent):
                shapes = " ".join(str(a.shape) for a in arrays)
                raise ValueError(
                    f"einsum: operands could not be broadcast together: an index has "
                    f"extent {known} in one operand and {extent} in operand {index} "
                    f"(shapes {shapes})"
                )
            if known == 1:
                extents[letter] = extent
    return extents


# --------------------------------------------------------------------------
# Views
# --------------------------------------------------------------------------


@dataclass
class _View:
    """A tensor as one axis per distinct index: `letters`, their `strides` in bytes
    (negative until flipped), and the axes of the array it starts at the end of."""

    letters: str
    shape: tuple[int, ...]
    strides: list[int]
    ends: set[int]
    identity: bool

    def flip(self, letter: str, term: str, array_shape: Sequence[int]) -> None:
        at = self.letters.index(letter)
        self.strides[at] = -self.strides[at]
        self.ends |= {k for k, x in enumerate(term) if x == letter and array_shape[k] > 1}
        self.identity = False


def _view(term: str, shape: Sequence[int], strides: Sequence[int],
          extents: dict[str, int]) -> _View:
    letters = "".join(dict.fromkeys(term))
    summed = dict.fromkeys(letters, 0)
    for letter, extent, stride in zip(term, shape, strides):
        if extent > 1:
            summed[letter] += stride
    view_shape = tuple(extents[x] for x in letters)
    return _View(letters, view_shape, [summed[x] for x in letters], set(),
                 letters == term and view_shape == tuple(shape))


def _maker(view: _View, term: str, array_shape: Sequence[int],
           writeable: bool) -> Callable[[np.ndarray], np.ndarray]:
    """A function giving `view` of an array of the planned layout."""
    if view.identity:
        return lambda a: a
    start = tuple(slice(n - 1, None) if k in view.ends else slice(None)
                  for k, n in enumerate(array_shape))
    shape, strides = view.shape, tuple(view.strides)
    if not view.ends:
        def plain(a: np.ndarray) -> np.ndarray:
            if a.flags.c_contiguous:
                return np.ndarray(shape, a.dtype, a, 0, strides)
            return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=writeable)
        return plain
    return lambda a: np.lib.stride_tricks.as_strided(a[start], shape, strides,
                                                     writeable=writeable)


def _c_strides(shape: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """The byte strides of a C-contiguous array (what astype(order="C") makes)."""
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def _layouts(inputs: Sequence[str], output: str, arrays: Sequence[np.ndarray],
             target: np.ndarray | None, extents: dict[str, int], compute: np.dtype
             ) -> tuple[list[_View], _View, set[int], bool]:
    """The views of the operands and of the result, which operands are copied
    (converted or left with a negative stride) and whether `out` is written
    through a temporary."""
    copied = {i for i, a in enumerate(arrays) if a.dtype != compute}
    direct = target is not None and target.dtype == compute
    while True:
        views = [
            _view(term, a.shape, _c_strides(a.shape, compute.itemsize) if i in copied
                  else a.strides, extents)
            for i, (term, a) in enumerate(zip(inputs, arrays))
        ]
        result_shape = tuple(extents[x] for x in output)
        result = (_view(output, result_shape, target.strides, extents)  # pyright: ignore
                  if direct else _view(output, result_shape,
                                       _c_strides(result_shape, compute.itemsize), extents))
        tensors = [*zip(views, inputs, (a.shape for a in arrays)),
                   (result, output, result_shape)]
        for letter, extent in extents.items():
            strides = [v.strides[v.letters.index(letter)] for v, _, _ in tensors
                       if letter in v.letters and extent > 1]
            if any(strides) and all(s <= 0 for s in strides):
                for view, term, shape in tensors:
                    if letter in view.letters and view.strides[view.letters.index(letter)]:
                        view.flip(letter, term, shape)
        negative = {i for i, v in enumerate(views) if any(s < 0 for s in v.strides)}
        if negative - copied:
            copied |= negative
            continue
        if direct and any(s < 0 for s in result.strides):
            direct = False
            continue
        return views, result, copied, direct


# --------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------


def _plan(spec: str, arrays: Sequence[np.ndarray], target: np.ndarray | None,
          dtype: object, order: str, casting: str, optimize: object, relu: bool,
          threads: int | None, tune: bool) -> Run:
    if not isinstance(order, str | None):
        raise TypeError(f"einsum: order must be a str or None, got {type(order).__name__}")
    order = "K" if order is None else order.upper()  # numpy's: 'c', None
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"einsum: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    inputs, output = _parse(spec, arrays)
    compute, teir = _types(arrays, target, dtype, casting)
    from teir_lowering.frontends.einsum_frontend import products

    if products() is not None and teir != "BF16":
        raise ValueError(f"einsum: bf16_products={products()!r} pairs the products of BF16 "
                         f"contractions; this einsum computes in {teir} (pass dtype='BF16' "
                         "or leave bf16_products out)")
    extents = _extents(inputs, arrays)
    result_shape = tuple(extents[x] for x in output)
    if target is not None and target.shape != result_shape:
        raise ValueError(
            f"einsum: out has shape {target.shape}; {spec!r} gives {result_shape}"
        )
    fortran = order == "F" or (
        order == "A" and bool(arrays)
        and all(a.flags.f_contiguous and not a.flags.c_contiguous for a in arrays)
    )

    def fresh() -> np.ndarray:
        return result_array(result_shape, compute, "F" if fortran else "C")

    if 0 in extents.values():
        def zeros(given: Sequence[np.ndarray], out: np.ndarray | None, count: int | None):
            result = fresh() if out is None else out
            result[...] = 0
            return result
        return zeros
    if len(arrays) > 2:
        return _tree_plan(inputs, output, arrays, target, extents, compute, teir,
                          optimize, relu, threads, fresh)
    views, result, copied, direct = _layouts(inputs, output, arrays, target, extents,
                                             compute)
    if fortran and target is None:
        result = _view(output, result_shape, fresh().strides, extents)
    letters = "".join(dict.fromkeys("".join(v.letters for v in views)))
    if len(letters) > len(_LETTERS):
        raise ValueError(f"einsum: {spec!r} has more than {len(_LETTERS)} distinct indices")
    ascii_ = str.maketrans(letters, _LETTERS[: len(letters)])
    prepare = [_preparer(i in copied, compute, _maker(v, term, a.shape, False))
               for i, (v, term, a) in enumerate(zip(views, inputs, arrays))]
    place = _maker(result, output, result_shape, True)
    examples = [p(a) for p, a in zip(prepare, arrays)]
    sample_out = place(target if direct else fresh())  # pyright: ignore[reportArgumentType]
    steps = _steps([v.letters.translate(ascii_) for v in views], output.translate(ascii_),
                   examples, sample_out, _renamed(extents, ascii_), compute, teir, relu,
                   threads, tune)
    kernel = getattr(steps, "kernel", None)
    if kernel is not None and (direct or target is None) and not copied and (
            result.identity and all(v.identity for v in views)):
        # the arrays as they are into one kernel: its call alone (a small einsum's
        # time went to the views, steps and plans between)
        call = kernel.call_planned

        def run_kernel(given: Sequence[np.ndarray], out: np.ndarray | None,
                       count: int | None):
            result = fresh() if out is None else out
            call((*given, result), count)
            return result

        return run_kernel

    def run(given: Sequence[np.ndarray], out: np.ndarray | None, count: int | None):
        operands = [p(a) for p, a in zip(prepare, given)]
        result = out if direct else fresh()
        steps(operands, place(result), count)  # pyright: ignore[reportArgumentType]
        if out is not None and not direct:
            np.copyto(out, result, casting="unsafe")
            return out
        return result

    return run


def _renamed(extents: dict[str, int], table: dict[int, int]) -> dict[str, int]:
    """`extents` under the letters of `table` (str.maketrans)."""
    return {x.translate(table): n for x, n in extents.items()}


def _preparer(copy: bool, compute: np.dtype, view: Callable[[np.ndarray], np.ndarray]
              ) -> Callable[[np.ndarray], np.ndarray]:
    if copy:
        return lambda a: view(a.astype(compute, order="C"))
    return view


def _ones(letters: str, extents: dict[str, int], compute: np.dtype) -> np.ndarray:
    """1.0 at every index of `letters`: one element, stride 0."""
    shape = tuple(extents[x] for x in letters)
    return np.lib.stride_tricks.as_strided(np.ones(1, compute), shape, (0,) * len(shape),
                                           writeable=False)


def _steps(terms: list[str], output: str, operands: list[np.ndarray], out: np.ndarray,
           extents: dict[str, int], compute: np.dtype, teir: str, relu: bool,
           threads: int | None, tune: bool
           ) -> Callable[[list[np.ndarray], np.ndarray, int | None], None]:
    """The TEIR kernels computing `terms -> output` (one or two operands, distinct
    letters in each) from views: the sums over an index of one operand only
    first (a Contraction with 1.0), then the permutation or contraction."""
    from teir_lowering.frontends.einsum_frontend import _plan as kernel_plan

    sums: list[tuple[int, str, Callable, tuple[int, ...]]] = []
    for index, term in enumerate(terms):
        others = "".join(t for k, t in enumerate(terms) if k != index) + output
        own = "".join(x for x in term if x not in others)
        if not own or len(terms) == 1:
            continue
        kept = "".join(x for x in term if x not in own)
        shape = tuple(extents[x] for x in kept)
        ones = _ones(own, extents, compute)
        partial = np.empty(shape, compute)
        plan = kernel_plan(f"{term},{own}->{kept}", [operands[index], ones], partial, False,
                           teir, threads, tune)
        sums.append((index, own, plan, shape))
        terms[index], operands[index] = kept, partial
    ones_last: np.ndarray | None = None
    if len(terms) == 1 and (own := "".join(x for x in terms[0] if x not in output)):
        ones_last = _ones(own, extents, compute)
        final = kernel_plan(f"{terms[0]},{own}->{output}", [operands[0], ones_last], out,
                            relu, teir, threads, tune)
    else:
        final = kernel_plan(f"{','.join(terms)}->{output}", operands, out, relu, teir,
                            threads, tune)
    sum_steps = [(index, plan, shape, _ones(own, extents, compute))
                 for index, own, plan, shape in sums]

    def steps(given: list[np.ndarray], target: np.ndarray, count: int | None) -> None:
        for index, plan, shape, ones in sum_steps:
            partial = np.empty(shape, compute)
            plan([given[index], ones], partial, count)
            given[index] = partial
        if ones_last is not None:
            given = [given[0], ones_last]
        final(given, target, count)

    if not sum_steps and ones_last is None and hasattr(final, "kernel"):
        steps.kernel = final.kernel  # pyright: ignore[reportFunctionMemberAccess]
        # (one kernel on the operands as given: `_plan` may call it directly)
    return steps


def _tree_plan(inputs: list[str], output: str, arrays: Sequence[np.ndarray],
               target: np.ndarray | None, extents: dict[str, int], compute: np.dtype,
               teir: str, optimize: object, relu: bool, threads: int | None,
               fresh: Callable[[], np.ndarray]) -> Run:
    """More than two operands: views as for two, then the plan of `einsum_tree.contract`
    for them (`plan_for`, run on each call's views)."""
    from teir_lowering.frontends.einsum_frontend import einsum as kernel_einsum
    from teir_lowering.frontends.einsum_tree import plan_for
    views, result, copied, direct = _layouts(inputs, output, arrays, target, extents,
                                             compute)
    letters = "".join(dict.fromkeys("".join(v.letters for v in views)))
    if len(letters) > len(_LETTERS):
        raise ValueError(f"einsum: more than {len(_LETTERS)} distinct indices")
    table = str.maketrans(letters, _LETTERS[: len(letters)])
    terms = [v.letters.translate(table) for v in views]
    prepare = [_preparer(i in copied, compute, _maker(v, term, a.shape, False))
               for i, (v, term, a) in enumerate(zip(views, inputs, arrays))]
    place = _maker(result, output, result.shape, True)
    letters_out = output.translate(table)
    # optimize=False (numpy's default) asks for no path search; a tree runs
    # pairwise anyway, so it follows opt_einsum's default path rather than the
    # order of the operands.
    path = None if optimize is False else optimize
    # (the arrays' checks are this function's: the tree's plan is run directly)
    tree = plan_for(terms, letters_out, [p(a) for p, a in zip(prepare, arrays)],
                    path=path, data_type=teir)

    def run(given: Sequence[np.ndarray], out: np.ndarray | None, count: int | None):
        operands = [p(a) for p, a in zip(prepare, given)]
        result = out if direct else fresh()
        where = place(result)  # pyright: ignore[reportArgumentType]
        if not relu:
            tree.run(operands, where, teir, count)
        else:  # ReLU as a Copy kernel's (which reads and writes separate buffers)
            product = np.empty(result.shape, compute)
            tree.run(operands, product, teir, count)
            kernel_einsum(f"{letters_out}->{letters_out}", product, out=where, relu=True,
                          threads=count, dtype=teir)
        if out is not None and not direct:
            np.copyto(out, result, casting="unsafe")
            return out
        return result

    return run
