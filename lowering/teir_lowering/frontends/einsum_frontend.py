"""The kernel-level einsum under `teir_lowering.einsum` (einsum_semantics):
canonical subscripts only, the contractions and permutations TEIR covers.

    c = einsum("trus,pqtu->pqrs", a, b)            # a new array
    einsum("abcd->dcba", x, out=y)                   # into y
    einsum("ij,jk->ik", a, b, relu=True, threads=1)  # relu(a @ b)

The record comes from `teir_dialect.einsum_config` (any strides numpy views
have, non-contiguous included), teir-optimize schedules it (the
auto-scheduler, or a schedule `teir-tune` stored for it), and the kernel runs
on the arrays' memory in place. Kernels are cached per subscripts, shapes,
strides, data types, ReLU flag and output layout, so a repeated call costs a
dictionary lookup and the kernel's argument checks. What it does not cover
(more than two operands, repeated indices, broadcasting, ellipses, negative
strides, implicit output, a sum over one operand's index) raises `TeirError`;
einsum_semantics reduces numpy's whole semantics to it. An ndarray subclass
is read through a plain view of its memory (`teir_dialect.arrays.plain_array`);
a masked array is refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from math import prod

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from teir_dialect import einsum_config
from teir_dialect.arrays import plain_array, result_array
from teir_dialect.attributes import INCREMENTS
from teir_dialect.builders import (
    periodic_product,
    segmented_rows,
    with_unit_role,
    zeroed_nest,
)
from teir_dialect.context import teir_context
from teir_dialect.dialect import ConfigOp, KernelAttr
from teir_dialect.host import NARROW_MAX, host
from teir_dialect.records import TeirError, find_configs, load_module
from teir_dialect.vocabulary import OperationKind
from teir_lowering.codegen.gemm_plan import MIN_LANES, GemmShape, Oriented, plan_gemm
from teir_lowering.runtime import kernel_cache
from teir_lowering.runtime.kernel import compile_kernel
from teir_passes.pipeline import OptimizePass, optimize

_PLANS: dict[tuple, Plan] = {}
_LOCK = threading.Lock()

_PRODUCTS: ContextVar[str | None] = ContextVar("bf16_products", default=None)
"""The BF16 Contraction metadata `bf16_products` the records made here carry (None:
none), set for one call by `bf16_products`; part of every plan's key."""


@contextmanager
def bf16_products(value: str | None) -> Iterator[None]:
    """Records planned inside carry `bf16_products = value` (teir_dialect.ops.BF16_PRODUCTS)."""
    token = _PRODUCTS.set(value)
    try:
        yield
    finally:
        _PRODUCTS.reset(token)


def products() -> str | None:
    """The `bf16_products` mode that plans made now carry."""
    return _PRODUCTS.get()


def _config(subscripts: str, *operands: np.ndarray, out: np.ndarray, dtype: str | None,
            relu: bool) -> dict:
    """`einsum_config` with this call's `bf16_products`."""
    return einsum_config(subscripts, *operands, out=out, dtype=dtype, relu=relu,
                         bf16_products=_PRODUCTS.get())


def _layout(array: np.ndarray) -> tuple:
    return (array.shape, array.strides, array.dtype.str)


def _parsed(subscripts: str) -> tuple[list[str], str]:
    """The input terms and the output term of `subscripts` (explicit `->`, spaces
    dropped)."""
    inputs, _, output = subscripts.replace(" ", "").partition("->")
    return inputs.split(","), output


def output_shape(subscripts: str, operands: Sequence[np.ndarray]) -> tuple[int, ...]:
    terms, output = _parsed(subscripts)
    extents = {i: n for term, op in zip(terms, operands) for i, n in zip(term, np.shape(op))}
    return tuple(extents.get(i, 0) for i in output)


def einsum(subscripts: str, *operands: np.ndarray, out: np.ndarray | None = None,
           relu: bool = False, threads: int | None = None, tune: bool = False,
           dtype: str | None = None) -> np.ndarray:
    """`np.einsum(subscripts, *operands)` (with `relu`: relu of it), computed by
    compiled TEIR kernels into `out` (a new C-contiguous array by default).

    Strided views and broadcasts run the GEMM microkernel on the arrays (its
    general strides). A contraction whose GEMM dimensions span several indices
    that no fast microkernel covers (`_direct_gemm`) is computed as transposes
    into GEMM-friendly layouts (TEIR Copy kernels) and a GEMM on them, plus a
    transpose into `out` when its layout needs one (`_transposed_plan`).
    `tune=True` searches a schedule on this host first (teir-tune, a minute at
    most) unless one is stored. `dtype` ("TF32", "BF16", ...) overrides the
    data type the arrays' dtype implies.
    """
    # Shapes, strides and addresses from here on are numpy's, not a subclass's.
    operands = tuple(plain_array(operand, f"einsum: operand {index}")
                     for index, operand in enumerate(operands))
    if out is None:
        if not operands:
            raise TeirError("einsum: give one operand (a permutation) or two (a contraction)")
        out = result = result_array(output_shape(subscripts, operands), operands[0].dtype)
    else:
        result, out = out, plain_array(out, "einsum: out")
    _cached_plan(subscripts, operands, out, relu, dtype, threads, tune)(operands, out, threads)
    return result


Plan = Callable[[Sequence[np.ndarray], np.ndarray, "int | None"], None]


def kernel_plan(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                dtype: str | None, threads: int | None) -> Plan:
    """What `einsum(subscripts, *operands, out=out, dtype=dtype, threads=threads)`
    runs, to call again on plain arrays of the same layouts (a tree's steps)."""
    return _cached_plan(subscripts, operands, out, False, dtype, threads)


def _cached_plan(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                 relu: bool, dtype: str | None, threads: int | None,
                 tune: bool = False) -> Plan:
    """The plan `einsum` uses for these arrays' layouts (made and kept if new)."""
    key = (subscripts, tuple(_layout(op) for op in operands), _layout(out), relu, dtype,
           _PRODUCTS.get())
    with _LOCK:
        plan = _PLANS.get(key)
    if plan is None:
        plan = _plan(subscripts, operands, out, relu, dtype, threads, tune)
        with _LOCK:
            _PLANS[key] = plan
    return plan


def _plan(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray, relu: bool,
          dtype: str | None, threads: int | None, tune: bool) -> Plan:
    if (squeezed := _squeezed_plan(subscripts, operands, out, relu, dtype, threads,
                                   tune)) is not None:
        return squeezed
    if len(operands) == 2 and (spread := _spread_plan(subscripts, operands, out, relu,
                                                      dtype)) is not None:
        return spread
    record = _config(subscripts, *operands, out=out, dtype=dtype, relu=relu)
    if len(operands) == 2 and _short_unit_axis(subscripts, operands):
        # A's unit stride on the batch: a batched GEMV from [i][j][b] or [j][i][b] gets
        # the segmented dot or the periodic product, else with b unit on x and out too
        # (`ijb,jb->ib`, b past SEGMENT_MAX) the element-wise nest; each reads A once,
        # as the contiguous twin does, without b-fold multiply-adds or a copy
        # (README, Benchmarks)
        if (segmented := _segmented_plan(subscripts, operands, out, relu, dtype, threads,
                                          tune)) is not None:
            return segmented
        if (nest := _element_wise_nest(record, subscripts, operands, out, relu)) is not None:
            return _direct(nest, threads, tune, subscripts)
        copied = (_transposed_plan(subscripts, operands, out, relu, dtype)
                  or _copied_plan(subscripts, operands, out, relu, dtype))
        if copied is not None:
            return copied
    module = load_module(record)
    if len(operands) == 2 and _grouped(subscripts, operands):
        if _direct_gemm(module) or (_short_reduction(subscripts, operands, out)
                                    and _has_microkernel(module)
                                    and not _transposes_c(module)):
            return _direct(record, threads, tune, subscripts, module)
        transposed = _transposed_plan(subscripts, operands, out, relu, dtype,
                                      matched=_has_microkernel(module))
        if transposed is not None:
            return transposed
    if len(operands) == 2 and not _has_microkernel(module):
        if (nest := _element_wise_nest(record, subscripts, operands, out, relu)) is not None:
            return _direct(nest, threads, tune, subscripts)
        if (outer := _batch_outer_plan(subscripts, operands, out, relu, dtype)) is not None:
            return outer
        if (product := _product_then_transpose(subscripts, operands, out, relu,
                                               dtype)) is not None:
            return product
        if (gemv := _gemv_record(subscripts, operands, out, relu, dtype)) is not None:
            return _direct(gemv, threads, tune, subscripts)
        transposed = _transposed_plan(subscripts, operands, out, relu, dtype)
        if transposed is not None:
            return transposed
        copied = _copied_plan(subscripts, operands, out, relu, dtype)
        if copied is not None:
            return copied
    return _direct(record, threads, tune, subscripts, module)


def _squeezed_plan(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                   relu: bool, dtype: str | None, threads: int | None,
                   tune: bool) -> Plan | None:
    """The plan of the einsum without its indices of extent 1, run on the arrays
    without those axes (np.squeeze: views): `ij,jk->ik` with k = 1 (a matrix times
    a column) is the GEMV `ij,j->i`, which the GEMV routes take, where the record's
    extent-1 axis left no GEMM-shaped loops (10-60x slower, README, Benchmarks).
    None when no index has extent 1, or when dropping them leaves an operand
    without an index."""
    terms, output = _parsed(subscripts)
    arrays = [*operands, out]
    extents: dict[str, set[int]] = {}
    for term, array in zip([*terms, output], arrays):
        for index, extent in zip(term, array.shape):
            extents.setdefault(index, set()).add(extent)
    ones = {index for index, seen in extents.items() if seen == {1}}
    kept = [[d for d, index in enumerate(term) if index not in ones]
            for term in [*terms, output]]
    if not ones or not all(kept[:-1]):
        return None
    axes = [tuple(d for d in range(len(term)) if d not in keep)
            for term, keep in zip([*terms, output], kept)]
    squeezed = ",".join("".join(t[d] for d in keep) for t, keep in zip(terms, kept)) + (
        "->" + "".join(output[d] for d in kept[-1]))
    views = [np.squeeze(array, axis) for array, axis in zip(arrays, axes)]
    inner = _cached_plan(squeezed, views[:-1], views[-1], relu, dtype, threads, tune)

    def squeeze(given: Sequence[np.ndarray], target: np.ndarray, count: int | None) -> None:
        inner([np.squeeze(array, axis) for array, axis in zip(given, axes)],
              np.squeeze(target, axes[-1]), count)

    return squeeze


def _direct(record: dict, threads: int | None, tune: bool, subscripts: str,
            module: ModuleOp | None = None) -> Plan:
    """The kernel of `record` (whose module is `module`, when built already), run on
    the arrays' own memory."""
    if tune:
        _tune(record, subscripts, threads)
    kernel = compile_kernel(record if module is None else module, threads=threads)

    def direct(arrays: Sequence[np.ndarray], target: np.ndarray, count: int | None) -> None:
        kernel.call_planned((*arrays, target), count)

    # for inspection, and for `einsum_semantics`, which calls a plan of one such
    # kernel on the arrays as given through `kernel.call_planned` itself
    direct.kernel = kernel  # pyright: ignore[reportFunctionMemberAccess]
    return direct


def _gemv_record(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                 relu: bool, dtype: str | None) -> dict | None:
    """The record of a GEMV-like contraction (an input with no index of its own:
    `ij,j->i`, `ji,j->i`, `bij,bj->bi`; or both, a dot product: `i,i->`,
    `ij,ij->i`) as the GEMM it is, with an extent-1 index for each free dimension
    a side lacks (`with_unit_role`), when the GEMM microkernel takes it; else None."""
    terms, output = _parsed(subscripts)
    own = [[i for i in t if i in output and i not in other]
           for t, other in zip(terms, reversed(terms))]
    reduced = [i for i in terms[0] if i in terms[1] and i not in output]
    lacking = [side for side, indices in enumerate(own) if not indices]
    if not reduced or not lacking:
        return None
    if len(lacking) == 2 and not all(any(_walks(i, t, a, broadcast=True) for i in reduced)
                                     for t, a in zip(terms, operands)):
        return None  # a dot product summed at a stride in both: the dot kernel's vectors
        # would be gathered (`ij,ij->j` takes `_element_wise_nest` or `_batch_outer_plan`)
    free = [c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
            if c not in subscripts]
    units = dict(zip(lacking, free))
    views = list(operands)
    for side, unit in units.items():
        terms[side] += unit
        views[side] = np.expand_dims(views[side], -1)
        output += unit
        out = np.expand_dims(out, -1)
    record = _config(f"{','.join(terms)}->{output}", *views, out=out, dtype=dtype, relu=relu)
    for side, unit in units.items():
        record = with_unit_role(record, unit, "N" if side == 1 else "M")
    return record if _has_microkernel(load_module(record)) else None


def _walks(index: str, term: str, array: np.ndarray, broadcast: bool = False) -> bool:
    """Whether `array` (indexed by `term`) has more than one element along `index`,
    at unit stride (or, with `broadcast`, at stride 0)."""
    at = term.index(index)
    return array.shape[at] > 1 and array.strides[at] in (
        (0, array.itemsize) if broadcast else (array.itemsize,))


def _element_wise_nest(record: dict, subscripts: str, operands: Sequence[np.ndarray],
                       out: np.ndarray, relu: bool) -> dict | None:
    """The record as loops with the sums outside a batch index that has unit stride
    on both inputs and out (`ij,ij->j`, `ijk,jk->ik`: the sums run down
    columns), out zeroed first (`zeroed_nest`): the innermost loop is then an
    element-wise multiply-add along contiguous memory, which LLVM vectorizes,
    where the record's own order sums one element at a time at a stride. Each
    out element is summed in the same order. None for other layouts, for ReLU
    and for 16-bit types (whose sums are rounded once, in the Contraction)."""
    terms, output = _parsed(subscripts)
    batch, _, _, reduced = _groups(subscripts)
    arrays = [*operands, out]
    unit = [i for i in batch if all(_walks(i, term, a) for term, a in zip((*terms, output),
                                                                          arrays))]
    if relu or not unit or not reduced or any(
            p["operation"] not in ("Zero", "Contraction") or p["axes"].get("K")
            for p in record["primitives"]):
        return None  # (a K role: the 16-bit types' sums, rounded once)
    axes = {a["id"]: a for a in record["axes"]}
    free = sorted((a for a in axes if axes[a]["strides"][-1] != 0 and a != unit[0]),
                  key=lambda a: -abs(axes[a]["strides"][-1]))
    sums = [a for a in axes if axes[a]["strides"][-1] == 0]
    return zeroed_nest(record, [*free, *sums, unit[0]])


SEGMENT_MAX = 16
"""The largest batch `_segmented_plan` takes: its kernels hold lcm(b, lanes) / lanes
vectors of a period (15 for b = 15), which must fit the registers."""


def _segmented_plan(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                    relu: bool, dtype: str | None, threads: int | None,
                    tune: bool) -> Plan | None:
    """A batched GEMV whose matrix A has the batch b as its unit stride
    (`bij,bj->bi`, any index order), run in one pass over A
    (teir_lowering.codegen.segmented): laid out [i][j][b], the segmented dot per
    row i of out (`segmented_rows`; out in any layout); laid out [j][i][b], the
    periodic product (`periodic_product`) into out, or into an [i][b] scratch
    array copied into out when out lies otherwise. The vector is copied into a
    [j][b] scratch array first unless it lies so (it is A's size over i). None
    for other forms."""
    terms, output = _parsed(subscripts)
    big = max(range(2), key=lambda n: operands[n].size)
    a, x = operands[big], operands[1 - big]
    a_term, x_term = terms[big], terms[1 - big]
    batch, *_, reduced = _groups(subscripts)
    rows = [i for i in a_term if i in output and i not in x_term]
    if (a.ndim != 3 or x.ndim != 2 or len(set(a_term)) != 3 or len(batch) != 1
            or len(reduced) != 1 or len(rows) != 1 or set(x_term) != {*batch, *reduced}):
        return None
    (b,), (j,), (i,) = batch, reduced, rows
    n, width = a.shape[a_term.index(b)], a.itemsize
    near = [c for c in (j, i) if a.strides[a_term.index(c)] == n * width]
    if not 2 <= n <= SEGMENT_MAX or a.strides[a_term.index(b)] != width or not near:
        return None
    periodic = near[0] == i

    def laid(array: np.ndarray, term: str, order: list[str]) -> bool:
        """Whether `array` lies as a C-contiguous [order[0]][order[1]] array would."""
        return (array.strides[term.index(order[1])], array.strides[term.index(order[0])]) == (
            width, n * width)

    def laid_out(array: np.ndarray, term: str, order: list[str]) -> np.ndarray:
        """A new array like `array` (indexed by `term`) whose memory is in `order`."""
        base = np.empty(tuple(array.shape[term.index(c)] for c in order), array.dtype)
        return base.transpose([order.index(c) for c in term])

    x_order, out_order = [j, b], [i, b]
    copied = not laid(x, x_term, x_order)
    through = periodic and not laid(out, output, out_order)
    pair = [a, laid_out(x, x_term, x_order) if copied else x][::1 - 2 * big]
    target = laid_out(out, output, out_order) if through else out
    record = _config(subscripts, *pair, out=target, dtype=dtype, relu=relu)
    record = (periodic_product if periodic else segmented_rows)(record, b, j, i)
    kernel = _direct(record, threads, tune, subscripts)
    if not copied and not through:
        return kernel
    scratch = _Scratch()

    def segmented(given: Sequence[np.ndarray], out: np.ndarray, count: int | None) -> None:
        vector, result = given[1 - big], out
        if copied:
            vector = scratch.arrays.get(0)
            if vector is None:  # kept as the view the kernel takes
                vector = scratch.arrays[0] = laid_out(x, x_term, x_order)
            np.copyto(vector, given[1 - big])
        if through:
            result = scratch.arrays.get(1)
            if result is None:
                result = scratch.arrays[1] = laid_out(out, output, out_order)
        kernel([given[big], vector][::1 - 2 * big], result, count)
        if through:
            np.copyto(out, result)

    return segmented


def _batch_outer_plan(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                      relu: bool, dtype: str | None) -> Plan | None:
    """Both operands copied with their batch indices first (TEIR Copy kernels), then
    `einsum` on the copies, when a batch index has unit stride on both and the
    sums are the Contraction's own (16-bit types: one rounding per store, so no
    `_element_wise_nest`): each batch's sum is then a dot product over
    contiguous memory (`ij,ij->j` FP16: one strided sum per column before, 7x
    the time). None for other layouts, when the copies get no microkernel, or
    under `BATCH_OUTER_MIN` elements."""
    terms, output = _parsed(subscripts)
    batch = _groups(subscripts)[0]
    if max(a.size for a in operands) < BATCH_OUTER_MIN or not any(
            all(_walks(i, term, a) for term, a in zip(terms, operands)) for i in batch):
        return None
    orders = ["".join(batch) + "".join(i for i in term if i not in batch) for term in terms]
    product = f"{','.join(orders)}->{output}"
    copies = [np.empty(output_shape(f"{t}->{o}", (a,)), a.dtype)
              for t, o, a in zip(terms, orders, operands)]
    if not _has_fast_kernel(product, copies, out, relu, dtype):
        return None
    scratch = _Scratch()

    def run(arrays: Sequence[np.ndarray], target: np.ndarray, count: int | None) -> None:
        moved = [scratch.copy(n, f"{t}->{o}", a, count, dtype)
                 for n, (t, o, a) in enumerate(zip(terms, orders, arrays))]
        scratch.run(3, product, moved, target, relu, dtype, count)

    return run


BATCH_OUTER_MIN = 1 << 14
"""The fewest elements of the larger operand `_batch_outer_plan` copies: its three
kernel calls cost about 8 us, what the strided sums of an FP16 `ij,ij->j` take at
128 x 128 (README, einsum)."""


def _product_then_transpose(subscripts: str, operands: Sequence[np.ndarray],
                            out: np.ndarray, relu: bool, dtype: str | None) -> Plan | None:
    """An element-wise product (no index summed) whose out runs along another index
    than the larger operand (`ij,ij->ji`, `ij,j->ji`): the product into a scratch
    array in that operand's index order, whose loops then read and write along
    memory, and a TEIR Copy transposing it into out (a scalar loop over out's
    order read the operands a row apart for every element: 3.5x numpy's time).
    None for other layouts (an operand that walks out's last index at unit
    stride, as in the outer product `ij,jk->ijk`, lets the loops in out's order
    run along memory), or under `TRANSPOSED_PRODUCT_MIN` elements."""
    terms, output = _parsed(subscripts)
    if _groups(subscripts)[3] or not out.flags.c_contiguous:
        return None
    term, array = max(zip(terms, operands), key=lambda pair: pair[1].size)
    if array.size < TRANSPOSED_PRODUCT_MIN:
        return None
    memory = [i for _, i in sorted((-abs(st), i) for i, st, n in zip(term, array.strides,
                                                                     array.shape) if n > 1)]
    if not memory or memory[-1] == output[-1] or array.strides[term.index(memory[-1])] \
            != array.itemsize or any(output[-1] in t and _walks(output[-1], t, a)
                                     for t, a in zip(terms, operands)):
        return None  # (out's last index along memory in an operand: `ij,jk->ijk`)
    order = "".join(sorted(output, key=lambda i: memory.index(i) if i in memory else -1))
    product = f"{','.join(terms)}->{order}"
    shape = output_shape(product, operands)
    scratch = _Scratch()

    def run(arrays: Sequence[np.ndarray], target: np.ndarray, count: int | None) -> None:
        result = scratch.get(2, shape, target.dtype)
        scratch.run(3, product, arrays, result, relu, dtype, count)
        scratch.run(4, f"{order}->{output}", (result,), target, False, dtype, count)

    return run


TRANSPOSED_PRODUCT_MIN = 1 << 12
"""The fewest elements of the larger operand `_product_then_transpose` takes: its
second kernel call pays for itself from `ij,ij->ji` at 64 x 64 on (README, einsum)."""


def _remembered(question: str, answer: Callable[[], bool]) -> bool:
    """`answer()`, remembered on disk with the kernels under `question` (the plan
    questions schedule a record: a new process on a full cache asks none again)."""
    if isinstance(known := kernel_cache.recall(question), bool):
        return known
    result = answer()
    kernel_cache.remember(question, result)
    return result


def _scheduled(module: ModuleOp, threads: int = 0) -> ConfigOp:
    """The configuration of `module` as teir-optimize schedules it for `threads`
    (0: the host's cores; that schedule is remembered for compile_kernel, which
    compiles the same module)."""
    scheduled = module.clone()
    optimize(scheduled, teir_context(), OptimizePass(threads=threads))
    (config,) = find_configs(scheduled)
    return config


def _has_microkernel(module: ModuleOp) -> bool:
    """Whether teir-optimize finds a GEMM/BRGEMM for the contraction of `module`."""
    return _remembered(f"has-microkernel {module}", lambda: any(
        p.kind is OperationKind.CONTRACTION and p.matched_kernel().is_gemm
        for p in _scheduled(module).primitives))


def _spread_plan(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                 relu: bool, dtype: str | None) -> Plan | None:
    """A contraction whose output index has stride 0 in every operand that has it
    (`np.broadcast_to` a vector along i in `ij,jk->ik`): the result is the same
    along that index, so the einsum without it (the operands at its position 0)
    is computed into a scratch array, which is then copied along it into out (a
    TEIR Copy from a stride-0 view). The copy costs a pass over out; the
    contraction it saves costs that times the reduction's length, so this is
    the plan only when the einsum sums over at least `SPREAD_REDUCTION` elements
    and does `SPREAD_WORK` multiply-adds. None when no index is spread, or the
    work is less."""
    terms, output = _parsed(subscripts)
    extents = {i: n for term, a in zip(terms, operands) for i, n in zip(term, a.shape)}
    spread = {i for i in output if extents[i] > 1 and all(
        a.strides[term.index(i)] == 0 for term, a in zip(terms, operands) if i in term)}
    reduction = int(np.prod([n for i, n in extents.items() if i not in output]))
    if not spread or reduction < SPREAD_REDUCTION or out.size * reduction < SPREAD_WORK:
        return None
    first = [tuple(0 if i in spread else slice(None) for i in term) for term in terms]
    kept = [("".join(i for i in term if i not in spread)) for term in (*terms, output)]
    smaller = f"{','.join(kept[:-1])}->{kept[-1]}"
    shape = tuple(n for i, n in zip(output, out.shape) if i not in spread)
    ones = tuple(1 if i in spread else n for i, n in zip(output, out.shape))

    scratch = _Scratch()

    def run(arrays: Sequence[np.ndarray], target: np.ndarray, count: int | None) -> None:
        product = scratch.get(2, shape, target.dtype)
        scratch.run(3, smaller, [a[at] for a, at in zip(arrays, first)], product, relu,
                    dtype, count)
        spread_product = scratch.spread(5, product, ones, target.shape)
        scratch.run(4, f"{output}->{output}", (spread_product,), target, False, dtype, count)

    return run


SPREAD_REDUCTION = 8
"""The shortest sum `_spread_plan` computes once per spread index rather than at
every position."""

SPREAD_WORK = 1 << 17
"""The fewest multiply-adds (out's elements x the sum's length) `_spread_plan`
saves a second kernel call for: a call costs about 2.5 us, what a microkernel
does with about 10^5 multiply-adds on small shapes."""


def _short_unit_axis(subscripts: str, operands: Sequence[np.ndarray]) -> bool:
    """Whether the larger operand has its unit stride on a batch index, or on an
    index of at most `NARROW_MAX` elements while a longer one has another stride
    (`bij,bj->bi` from an [i][j][b] array, `abc,cd->abd` from [a][c][b] with b = 5):
    every vector a microkernel loads from it is then gathered lane by lane, or
    holds a few lanes. A batched GEMV whose batch index is that unit stride runs
    on the array (`_segmented_plan` from [i][j][b] and [j][i][b] with b up to
    SEGMENT_MAX, else `_element_wise_nest` when the batch is out's unit stride
    too); anything else is copied into its own index order first (a narrow
    transpose), which measured faster (README, Benchmarks: slow paths)."""
    inputs = _parsed(subscripts)[0]
    batch = _groups(subscripts)[0]
    term, array = max(zip(inputs, operands), key=lambda pair: pair[1].size)
    unit = [(i, n) for i, n, stride in zip(term, array.shape, array.strides)
            if n > 1 and stride == array.itemsize]
    if not unit:
        return False
    index, extent = unit[0]
    return index in batch or extent <= NARROW_MAX < max(array.shape)


def _groups(subscripts: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """The batch, row (M), column (N) and reduced (K) indices of a binary einsum."""
    (a_term, b_term), output = _parsed(subscripts)
    return ([i for i in output if i in a_term and i in b_term],
            [i for i in output if i in a_term and i not in b_term],
            [i for i in output if i in b_term and i not in a_term],
            [i for i in a_term if i in b_term and i not in output])


def _grouped(subscripts: str, operands: Sequence[np.ndarray]) -> bool:
    """Whether a GEMM dimension (M, N or K) of the einsum spans several indices of
    extent > 1. The microkernel takes one axis per role: such a dimension is one
    axis only where the layouts let teir-auto-schedule fuse its indices, else the
    kernel's tile is a slice of it (see `_direct_gemm`)."""
    inputs = _parsed(subscripts)[0]
    extents = {i: n for term, op in zip(inputs, operands) for i, n in zip(term, op.shape)}
    _, rows, columns, reduced = _groups(subscripts)
    return any(sum(extents[i] > 1 for i in group) > 1 for group in (rows, columns, reduced))


K_STEP_BYTES = 4096
"""The farthest apart (one page) the k steps of A and B lie in a narrow direct GEMM."""

WIDE_TILE_VECTORS = 2
"""A GEMM tile at least this many host vectors of 4-byte elements wide along M and N
is wide, whatever its type: TCCG 23, 25 and 27 in FP64 (tiles 21 x 21, three
FP64 vectors less a remainder) ran slower on the arrays than transposed
(README, Benchmarks: TCCG)."""


def _direct_gemm(module: ModuleOp) -> bool:
    """Whether the einsum of `module`, whose GEMM dimensions span several indices,
    runs the microkernel teir-optimize gives it on the arrays (remembered on disk):
    when every Contraction is a GEMM/BRGEMM in Table 10.6.1's layouts (no general
    strides) that is wide (`WIDE_TILE_VECTORS`) or steps
    k on A and B within `K_STEP_BYTES`. Otherwise transposes that fuse each GEMM
    dimension into one (`_transposed_plan`) run faster: measured on TCCG's 4-D
    cases and on `trus,pqtu->pqrs` (README, Benchmarks: general strides)."""
    machine = host()

    def answer() -> bool:
        # the tiles of one thread: blocks cut for threads (and their remainders)
        # say nothing of the layout
        kernels = [(p.matched_kernel(), p.element_width)
                   for p in _scheduled(module, threads=1).primitives
                   if p.kind is OperationKind.CONTRACTION]
        return bool(kernels) and all(direct(kernel, width) for kernel, width in kernels)

    def direct(kernel: KernelAttr, width: int) -> bool:
        if not kernel.is_gemm or any(kernel.get(name) != 1 for name in INCREMENTS):
            return False
        wide = WIDE_TILE_VECTORS * machine.lanes(4)
        k_a = kernel.get("lda") if kernel.trans_a == "N" else 1
        k_b = 1 if kernel.trans_b == "N" else kernel.get("ldb")
        narrowest = min(kernel.get("m"), kernel.get("n"))
        return narrowest >= wide or (narrowest >= MIN_LANES
                                     and max(k_a, k_b) * width <= K_STEP_BYTES)

    return _remembered(f"direct-gemm {MIN_LANES} {K_STEP_BYTES} {WIDE_TILE_VECTORS} "
                       f"{machine.fingerprint()} {module}", answer)


SHORT_REDUCTION = 32
"""Summed elements per out element up to which a grouped einsum whose transposes
would copy out runs its microkernel on the arrays (`_short_reduction`)."""


def _short_reduction(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray) -> bool:
    """Whether the transpose plan would copy out, the largest array, while the
    product sums at most SHORT_REDUCTION elements into each of its elements: the
    copy alone then takes longer than the product (TCCG's 6-D cases, 15 summed
    elements: README, Benchmarks: TCCG), and the microkernel runs on the arrays,
    general strides and all."""
    (a_term, b_term), output = _parsed(subscripts)
    batch, rows, columns, reduced = _groups(subscripts)
    extents = {i: n for term, array in zip((a_term, b_term), operands)
               for i, n in zip(term, array.shape)}
    if prod(extents[i] for i in reduced) > SHORT_REDUCTION:
        return False
    if any(array.size > out.size for array in operands):
        return False
    c_order = _gemm_orders(a_term, b_term, output, batch, rows, columns, reduced,
                           (False, False))[2]
    return c_order != output or not out.flags.c_contiguous


def _transposes_c(module: ModuleOp) -> bool:
    """Whether the planner, asked for a Contraction tile of `module`'s schedule alone
    (with and without a fused Zero, which can turn its choice), gives it the
    outer-product kernel with C transposed in registers (vectors along the
    dimension C is not contiguous in): on such small tiles of TCCG's 6-D cases in
    FP64 (34, 36, 43, 45) the kernel on the arrays ran several times slower than
    the transposes (README, Benchmarks: TCCG), so `_short_reduction` does not take
    them. Remembered on disk like `_direct_gemm`."""

    def answer() -> bool:
        for prim in _scheduled(module, threads=1).primitives:
            shape = (GemmShape.of(prim.matched_kernel())
                     if prim.kind is OperationKind.CONTRACTION else None)
            for zero_first in (False, True) if shape is not None else ():
                plan = plan_gemm(shape, max(4, prim.element_width), zero_first)
                oriented = Oriented.of(shape, plan.vector)
                if plan.kernel == "outer" and plan.transposes_c(oriented.c_v, oriented.c_u):
                    return True
        return False

    return _remembered(f"transposes-c {host().fingerprint()} {module}", answer)


def _transposed_plan(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                     relu: bool, dtype: str | None, matched: bool = False) -> Plan | None:
    """Transpose, transpose, GEMM, transpose: in0 as [batch, M, K] or [batch, K, M],
    in1 as [batch, K, N] or [batch, N, K] and the result as [batch, M, N] or
    [batch, N, M] (`_gemm_orders`: each group in the index order in0 or in1 has
    it, the two groups in the order the operand has them when it can),
    C-contiguous, so that each group fuses into one GEMM dimension. Operands
    already in that order are not copied; the result goes straight to `out`
    when out has the order and is C-contiguous. A strided view (a[:, ::2]) is
    copied C-contiguous the same way, even in the order it has: the GEMM it
    feeds is then one Table 10.6.1 kernel with unit-stride rows. None when a
    group is empty in a way that leaves no GEMM (a pure batch of dot products or
    outer products), or when every array is C-contiguous in the GEMM's order
    already; also when `matched` (teir-optimize gives the einsum a microkernel)
    and every operand already has its groups contiguous: copying them into
    [M, K] x [K, N] order would only change which dimension is unit-stride,
    which the microkernels take as it is (`dca,bd->cab`: a copy of all of A
    before the same GEMM)."""
    (a_term, b_term), output = _parsed(subscripts)
    batch, rows, columns, reduced = _groups(subscripts)
    if not rows or not columns or not reduced:
        return None
    a_order, b_order, c_order = _gemm_orders(a_term, b_term, output, batch, rows, columns,
                                             reduced, tuple(x.size > out.size for x in operands))
    if (a_order, b_order, c_order) == (a_term, b_term, output):
        if matched and all(x.flags.c_contiguous for x in (*operands, out)):
            return None
        # Already a GEMM in the operands' own layouts that teir-optimize does not
        # match: fall back to the canonical [batch, M, K] x [batch, K, N] orders.
        a_order = "".join(batch + rows + reduced)
        b_order = "".join(batch + reduced + columns)
        c_order = "".join(batch + rows + columns)
        contiguous = all(x.flags.c_contiguous for x in (*operands, out))
        if (a_order, b_order, c_order) == (a_term, b_term, output) and contiguous:
            return None
    direct_out = c_order == output and out.flags.c_contiguous
    gemm = f"{a_order},{b_order}->{c_order}"

    scratch = _Scratch()

    def run(arrays: Sequence[np.ndarray], target: np.ndarray, count: int | None) -> None:
        a, b = arrays
        if a_order != a_term or not a.flags.c_contiguous:
            a = scratch.copy(0, f"{a_term}->{a_order}", a, count, dtype)
        if b_order != b_term or not b.flags.c_contiguous:
            b = scratch.copy(1, f"{b_term}->{b_order}", b, count, dtype)
        if direct_out:
            scratch.run(3, gemm, (a, b), target, relu, dtype, count)
        else:
            product = scratch.get(2, output_shape(gemm, (a, b)), target.dtype)
            scratch.run(3, gemm, (a, b), product, relu, dtype, count)
            scratch.run(4, f"{c_order}->{output}", (product,), target, False, dtype, count)

    return run


SCRATCH_BYTES = 256 << 20
"""The largest intermediate array a plan keeps for its next call."""


class _Scratch(threading.local):
    """The intermediate arrays of a plan (copies, a product before its transpose),
    kept from call to call per calling thread: a fresh array costs a page fault
    per page on first touch, about as much as the copy that fills it."""

    def __init__(self) -> None:
        self.arrays: dict[int, np.ndarray] = {}
        self.plans: dict[int, Plan] = {}
        self.views: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def get(self, slot: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        array = self.arrays.get(slot)
        if array is None or array.shape != shape or array.dtype != dtype:
            array = np.empty(shape, dtype)
            if array.nbytes <= SCRATCH_BYTES:
                self.arrays[slot] = array
        return array

    def spread(self, slot: int, array: np.ndarray, ones: tuple[int, ...],
               shape: tuple[int, ...]) -> np.ndarray:
        """`array` reshaped to `ones` and broadcast to `shape`, kept while `array` is
        the same (np.broadcast_to costs as much as a small kernel call)."""
        kept = self.views.get(slot)
        if kept is None or kept[0] is not array:
            kept = self.views[slot] = (array, np.broadcast_to(array.reshape(ones), shape))
        return kept[1]

    def copy(self, slot: int, subscripts: str, array: np.ndarray, count: int | None,
             dtype: str | None) -> np.ndarray:
        """`einsum(subscripts, array)` (a permutation) into the slot's array."""
        into = self.get(slot, output_shape(subscripts, (array,)), array.dtype)
        self.run(slot, subscripts, (array,), into, False, dtype, count)
        return into

    def run(self, slot: int, subscripts: str, arrays: Sequence[np.ndarray], out: np.ndarray,
            relu: bool, dtype: str | None, count: int | None) -> None:
        """`einsum(subscripts, *arrays, out=out, ...)` through the step's plan, found
        on its first call: the arrays of a step have the same layouts at every
        call of its plan, so the lookup `einsum` makes per call is made once."""
        plan = self.plans.get(slot)
        if plan is None:
            plan = self.plans[slot] = _cached_plan(subscripts, arrays, out, relu, dtype,
                                                   count)
        plan(arrays, out, count)


def _has_fast_kernel(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                     relu: bool, dtype: str | None) -> bool:
    """Whether `einsum` runs these arrays with a microkernel (a GEMM or a GEMV)."""
    record = _config(subscripts, *operands, out=out, dtype=dtype, relu=relu)
    return (_has_microkernel(load_module(record))
            or _gemv_record(subscripts, operands, out, relu, dtype) is not None)


def _copied_plan(subscripts: str, operands: Sequence[np.ndarray], out: np.ndarray,
                 relu: bool, dtype: str | None) -> Plan | None:
    """Strided views copied C-contiguous in their own index order (TEIR Copy
    kernels), then `einsum` on the copies: for what `_transposed_plan` does not
    cover (a GEMV from `a[:, ::2]`, a broadcast vector). The fewest copies that
    give a microkernel: one operand if that is enough, else every strided one;
    a strided out gets the result through a copy. None when no copy gives a
    microkernel (the loop nest on the views then)."""
    terms, output = _parsed(subscripts)
    strided = [n for n, a in enumerate(operands) if not a.flags.c_contiguous]
    direct_out = out.flags.c_contiguous
    target = out if direct_out else np.empty(out.shape, out.dtype)
    candidates = [[n] for n in strided] + ([strided] if len(strided) > 1 else [])
    for chosen in candidates or [[]]:
        trial = [np.empty(a.shape, a.dtype) if n in chosen else a
                 for n, a in enumerate(operands)]
        if (chosen or not direct_out) and _has_fast_kernel(subscripts, trial, target, relu,
                                                           dtype):
            break
    else:
        return None

    scratch = _Scratch()

    def run(arrays: Sequence[np.ndarray], target: np.ndarray, count: int | None) -> None:
        copies = [scratch.copy(n, f"{term}->{term}", a, count, dtype) if n in chosen else a
                  for n, (a, term) in enumerate(zip(arrays, terms))]
        if direct_out:
            scratch.run(3, subscripts, copies, target, relu, dtype, count)
        else:
            product = scratch.get(2, target.shape, target.dtype)
            scratch.run(3, subscripts, copies, product, relu, dtype, count)
            scratch.run(4, f"{output}->{output}", (product,), target, False, dtype, count)

    return run


def _gemm_orders(a_term: str, b_term: str, output: str, batch: list[str], rows: list[str],
                 columns: list[str], reduced: list[str],
                 larger: tuple[bool, ...] = (False, False)) -> tuple[str, str, str]:
    """The index orders of the GEMM's operands and result that copy least. An
    operand stays as it is when its term is batch (in out's order) followed by
    its two groups (M and K for in0, K and N for in1) in either order: the
    microkernels take every transposition, so a group only has to be
    contiguous. The order within a group is then the one that operand has
    (in0's K order wins when both stay and disagree); a group of a copied
    operand takes out's order, so the result is more often out itself, unless
    that fails and the operand is larger than out (`larger`, per operand): its
    copy then keeps its own order, along memory. A result
    that is not out's order ends with out's last index when one of the two orders
    does (the transposition into out then copies rows: `ebad,ce->cbad`, not
    `->badc`, whose C has 14 unit-stride columns; `geab,dfgc->eabcdf`), else has
    M at unit stride when in0 has (`dca,bd->bca`). README, Benchmarks: TCCG."""

    def split(term: str, first: set[str], second: set[str]) -> tuple[list[str], list[str]] | None:
        rest = [i for i in term if i not in batch]
        if term[:len(batch)] != "".join(batch):
            return None
        for one, two in ((first, second), (second, first)):
            head, tail = rest[:len(one)], rest[len(one):]
            if set(head) == one and set(tail) == two:
                return (head, tail) if one is first else (tail, head)
        return None

    a_groups = split(a_term, set(rows), set(reduced))
    b_groups = split(b_term, set(reduced), set(columns))
    if a_groups and b_groups and a_groups[1] != b_groups[0]:
        b_groups = None  # the K orders disagree: in1 is copied into in0's
    k_order = a_groups[1] if a_groups else b_groups[0] if b_groups else reduced
    m_order = a_groups[0] if a_groups else rows
    n_order = b_groups[1] if b_groups else columns
    n_m, m_n = "".join(batch + n_order + m_order), "".join(batch + m_order + n_order)
    if output not in (n_m, m_n):
        # the result is transposed anyway: the group of a copied operand larger than
        # out keeps the operand's own order, which copies it along memory
        # (`dbea,ec->abcd`: A's copy to `dbae` moves contiguous 54 x 54 blocks, to
        # `abde` rows 548 KB apart; TCCG: README, Benchmarks)
        if not a_groups and larger[0]:
            m_order = [i for i in a_term if i in rows]
        if not b_groups and larger[1]:
            n_order = [i for i in b_term if i in columns]
        n_m, m_n = "".join(batch + n_order + m_order), "".join(batch + m_order + n_order)
    a_order = a_term if a_groups else "".join(batch + m_order + k_order)
    b_order = b_term if b_groups else "".join(batch + k_order + n_order)
    if output in (n_m, m_n):
        return a_order, b_order, output
    # the result is transposed into out: keeping out's unit-stride index last makes
    # that a copy of rows; else its unit stride goes on the group whose rows in0
    # has at unit stride (the GEMM's vectors run along them)
    for order in (n_m, m_n):
        if order[-1] == output[-1]:
            return a_order, b_order, order
    return a_order, b_order, n_m if a_order[-1] in m_order else m_n


def _tune(record: dict, subscripts: str, threads: int | None) -> None:
    from teir_dialect.records import find_configs, load_module
    from teir_lowering.frontends.tune import tune
    from teir_lowering.runtime.kernel import default_threads
    from teir_passes import schedule_cache

    count = threads or default_threads()
    function = find_configs(load_module(record))[0].parent_op()
    if schedule_cache.lookup(str(function), count) is None:
        tune(record, threads=count, budget=60.0, label=subscripts)
