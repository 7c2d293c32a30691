"""Einsum trees: an expression of any number of operands as a tree of binary
TEIR contractions (einsum_ir's idea, ASPLOS'25), along an opt_einsum path.

    contract(["ij", "jk", "kl"], "il", [a, b, c])                 # opt_einsum's 'auto'
    contract(["ai", "bj", "ck", "ijk"], "abc", ops, path="optimal", threads=1)

Subscripts come parsed: one letter per index, no ellipsis, no letter twice in
one term (`teir_lowering.einsum` parses numpy's forms and calls this). A plan
is made once per (subscripts, shapes, strides, dtypes, path, data type) and
cached:

- the path: opt_einsum's `contract_path` on the shapes (or the explicit
  list `np.einsum_path` returns), taken pairwise;
- pre-sums: an index that one input alone has and the output lacks is summed
  out of that input first, as a TEIR Contraction with a stride-0 operand of
  ones (x * 1 is exact), which shrinks the input before anything reads it;
  the binary contractions then only see batch, free and contracted indices;
- layouts: each intermediate gets the index order, among orders grouped the
  way its producer or its consumer would run them as a GEMM ([batch][M][N] or
  [batch][free][K] in either group order), that minimises the bytes the steps
  must transpose (a dynamic program over the tree, with a cost model of
  `teir_lowering.einsum`'s transposed plan: a term is read in place when its
  batch indices lead and its two groups are contiguous, in the same order as
  the other terms of the step have them);
- buffers: intermediates live in C-contiguous slots of a workspace, a slot
  reused once the intermediate in it has been read (linear scan in path
  order); workspaces are pooled per plan, so a repeated call allocates nothing.

Each step runs `teir_lowering.einsum` with explicit, fully named subscripts;
the last one writes into `out`.
"""

from __future__ import annotations

import itertools
import math
import operator
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from teir_dialect.arrays import plain_array
from teir_dialect.records import TeirError

__all__ = ["Plan", "contract", "plan_for"]

_PLANS: dict[tuple, Plan] = {}
_LOCK = threading.Lock()


# --------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One einsum call: `subscripts` on `inputs` into `output`. A reference is
    ("in", i) for operand i, ("ones", k) for the plan's k-th ones array, ("slot", k)
    for the workspace's k-th buffer, or ("out",) for the result."""

    subscripts: str
    inputs: tuple[tuple, ...]
    output: tuple
    shape: tuple[int, ...]  # of the output, in the order of the subscripts' output term


@dataclass
class Plan:
    """What a call runs: the path opt_einsum chose (pairs of positions in the
    shrinking operand list, as np.einsum_path gives them), the steps, and the
    workspace's slot sizes in bytes."""

    path: list[tuple[int, ...]]
    steps: list[Step]
    slot_bytes: list[int]
    dtype: np.dtype
    ones: list[np.ndarray]
    _free: list[list[np.ndarray]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    # each step's kernel plan, per out's layout, data type and bf16_products: a
    # call after the first runs the kernels without einsum's per-call checks and lookups
    _kernels: dict[tuple, list] = field(default_factory=dict)

    def describe(self) -> str:
        """The steps as one line each (for benchmarks and error messages)."""
        return "; ".join(step.subscripts for step in self.steps)

    def run(self, operands: Sequence[np.ndarray], out: np.ndarray, data_type: str | None,
            threads: int | None) -> None:
        from teir_lowering.frontends.einsum_frontend import kernel_plan, products

        key = (out.shape, out.strides, data_type, products())
        kernels = self._kernels.get(key)  # one dict read: atomic
        with self._lock:
            workspace = self._free.pop() if self._free else None
        if workspace is None:
            workspace = [_allocate(n) for n in self.slot_bytes]
        try:
            made = []
            for index, step in enumerate(self.steps):
                arrays = [self._array(ref, operands, workspace, out, None)
                          for ref in step.inputs]
                target = self._array(step.output, operands, workspace, out, step.shape)
                if kernels is None:
                    made.append(kernel_plan(step.subscripts, arrays, target, data_type,
                                            threads))
                    made[-1](arrays, target, threads)
                else:
                    kernels[index](arrays, target, threads)
            if kernels is None:
                self._kernels[key] = made
        finally:
            with self._lock:
                self._free.append(workspace)

    def _array(self, ref: tuple, operands: Sequence[np.ndarray],
               workspace: list[np.ndarray], out: np.ndarray,
               shape: tuple[int, ...] | None) -> np.ndarray:
        kind = ref[0]
        if kind == "in":
            return operands[ref[1]]
        if kind == "ones":
            return self.ones[ref[1]]
        if kind == "out":
            return out
        slot, slot_shape = ref[1], ref[2]
        count = math.prod(slot_shape)
        return workspace[slot][: count * self.dtype.itemsize].view(self.dtype).reshape(
            slot_shape)


def _allocate(nbytes: int) -> np.ndarray:
    """A workspace buffer (a function of its own so that tests can count them)."""
    return np.empty(max(nbytes, 1), dtype=np.uint8)


# --------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------


def contract(inputs: Sequence[str], output: str, operands: Sequence[np.ndarray], *,
             out: np.ndarray | None = None, path: object = None,
             data_type: str | None = None, threads: int | None = None) -> np.ndarray:
    """`np.einsum(",".join(inputs) + "->" + output, *operands)` as a tree of binary
    TEIR contractions, into `out` (a new C-contiguous array by default).

    `path`: None (opt_einsum's 'auto': optimal for few operands, greedy beyond),
    True ('greedy', numpy's optimize=True), an opt_einsum strategy name, or an
    explicit path (a list of position tuples, with or without np.einsum_path's
    leading 'einsum_path'). All operands have one float dtype, which the result
    and the intermediates have too; `data_type` ("TF32", "BF16", ...) overrides
    the TEIR data type of every step.
    """
    inputs = list(inputs)
    if len(inputs) != len(operands):
        raise TeirError(f"einsum: {len(inputs)} input terms but {len(operands)} operands")
    if not operands:
        raise TeirError("einsum: no operands given")
    dtype = _common_dtype(operands)
    operands = [plain_array(op, f"einsum: operand {index}")
                for index, op in enumerate(operands)]
    extents = _extents(inputs, output, operands)
    shape = tuple(extents[x] for x in output)
    if out is None:
        out = np.empty(shape, dtype=dtype)
    else:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"einsum: out must be a numpy array, got {type(out).__name__}")
        if out.shape != shape:
            raise TeirError(f"einsum: out has shape {out.shape}; the result has {shape}")
        if out.dtype != dtype:
            raise TypeError(f"einsum: out has dtype {out.dtype}; the operands have {dtype}")
    if 0 in extents.values():
        out[...] = 0  # a sum over nothing (or an empty result)
        return out
    plan = plan_for(inputs, output, operands, path=path, data_type=data_type)
    plan.run(operands, plain_array(out, "einsum: out"), data_type, threads)
    return out


def plan_for(inputs: Sequence[str], output: str, operands: Sequence[np.ndarray], *,
             path: object = None, data_type: str | None = None) -> Plan:
    """The cached plan of `contract` for these subscripts and operand layouts."""
    key = (tuple(inputs), output,
           tuple((op.shape, op.strides, op.dtype.str) for op in operands),
           _path_key(path), data_type)
    with _LOCK:
        plan = _PLANS.get(key)
    if plan is None:
        plan = _make_plan(list(inputs), output, operands, path)
        with _LOCK:
            plan = _PLANS.setdefault(key, plan)
    return plan


# --------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------


def _common_dtype(operands: Sequence[np.ndarray]) -> np.dtype:
    for index, op in enumerate(operands):
        if not isinstance(op, np.ndarray):
            raise TypeError(f"einsum: operand {index} must be a numpy array, got "
                            f"{type(op).__name__}")
        if op.dtype.kind in "biuOcmMSUV" and op.dtype.name != "bfloat16":
            raise TypeError(f"einsum: operand {index} has dtype {op.dtype}; TEIR computes "
                            "on float16, bfloat16, float32 and float64 arrays")
    dtypes = {op.dtype for op in operands}
    if len(dtypes) > 1:
        raise TypeError(f"einsum: the operands have dtypes {sorted(map(str, dtypes))}; a "
                        "tree takes operands of one dtype (convert them first)")
    return operands[0].dtype


def _extents(inputs: Sequence[str], output: str,
             operands: Sequence[np.ndarray]) -> dict[str, int]:
    extents: dict[str, int] = {}
    for index, (term, op) in enumerate(zip(inputs, operands)):
        if len(term) != op.ndim:
            raise TeirError(f"einsum: operand {index} has {op.ndim} dimensions {op.shape} "
                            f"but its subscripts {term!r} name {len(term)}")
        if len(set(term)) != len(term):
            raise TeirError(f"einsum: operand {index}'s subscripts {term!r} repeat an index; "
                            "a tree takes each index once per term")
        for letter, extent in zip(term, op.shape):
            if not (letter.isascii() and letter.isalpha()):
                raise TeirError(f"einsum: index {letter!r} is not a letter a-z, A-Z")
            if extents.setdefault(letter, extent) != extent:
                raise TeirError(f"einsum: index {letter!r} has extent {extents[letter]} and "
                                f"{extent} (operand {index})")
    for letter in output:
        if letter not in extents:
            raise TeirError(f"einsum: output index {letter!r} is in no input")
    if len(set(output)) != len(output):
        raise TeirError(f"einsum: the output {output!r} repeats an index")
    return extents


def _path_key(path: object) -> object:
    if path is None or isinstance(path, (bool, str)):
        return path
    try:  # (operator.index: a position is an integer, not 1.5 or 'einsum_path')
        return tuple(x if isinstance(x, str) else tuple(operator.index(i) for i in x)
                     for x in path)
    except TypeError:
        raise TeirError(f"einsum: path must be None, True, a strategy name or a list of "
                        f"position tuples (np.einsum_path returns (path, report): pass "
                        f"its first item), got {path!r}") from None


# --------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------


def _make_plan(inputs: list[str], output: str, operands: Sequence[np.ndarray],
               path: object) -> Plan:
    dtype = operands[0].dtype
    extents = _extents(inputs, output, operands)
    ones: list[np.ndarray] = []
    steps: list[_Pending] = []
    # Leaves: the operands, with the indices only they have summed out first.
    leaves: list[_Node] = []
    for index, term in enumerate(inputs):
        others = set(output).union(*(t for n, t in enumerate(inputs) if n != index))
        lone = "".join(x for x in term if x not in others)
        if not lone or len(inputs) == 1:
            leaves.append(_Node(term, ("in", index)))
            continue
        kept = "".join(x for x in term if x in others)
        ones.append(np.broadcast_to(np.ones((), dtype=dtype),
                                    tuple(extents[x] for x in lone)))
        node = _Node(kept, None)
        steps.append(_Pending(f"{term},{lone}->", [_Node(term, ("in", index)),
                                                   _Node(lone, ("ones", len(ones) - 1))],
                              node))
        leaves.append(node)
    if len(inputs) == 1:
        (leaf,) = leaves
        term = leaf.term
        lone = "".join(x for x in term if x not in output)
        if lone:
            ones.append(np.broadcast_to(np.ones((), dtype=dtype),
                                        tuple(extents[x] for x in lone)))
            subscripts = f"{term},{lone}->{output}"
            refs: tuple[tuple, ...] = (("in", 0), ("ones", len(ones) - 1))
        else:
            subscripts, refs = f"{term}->{output}", (("in", 0),)
        shape = tuple(extents[x] for x in output)
        return Plan([(0,)], [Step(subscripts, refs, ("out",), shape)], [], dtype, ones)
    pairs = _path(inputs, output, operands, path)
    tree = _tree(leaves, pairs, output)
    _choose_layouts(tree, output, extents)
    for node in tree:
        pair = [node.left, node.right]
        # The operand with the result's innermost index goes second: TEIR's GEMM
        # writes [M][N] with N from in1 faster than [N][M] (FP32; FP64 alike).
        if node.term and node.term[-1] in node.left.letters - node.right.letters:  # pyright: ignore
            pair.reverse()
        steps.append(_Pending("", pair, node))  # pyright: ignore
    return _finish(pairs, steps, output, extents, dtype, ones)


@dataclass(eq=False)
class _Node:
    """An operand of a step: a leaf with a fixed term (`ref` set unless it is a
    pre-sum's result), or an intermediate whose term `_choose_layouts` sets."""

    term: str
    ref: tuple | None
    left: _Node | None = None
    right: _Node | None = None
    letters: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.letters:
            self.letters = frozenset(self.term)


@dataclass
class _Pending:
    subscripts: str  # "" until the layouts are known; pre-sums end in "->"
    inputs: list[_Node]
    output: _Node


def _path(inputs: list[str], output: str, operands: Sequence[np.ndarray],
          path: object) -> list[tuple[int, ...]]:
    if path is None or path is True or isinstance(path, str):
        import opt_einsum

        strategy = "auto" if path is None else "greedy" if path is True else path
        subscripts = ",".join(inputs) + "->" + output
        try:
            found, _ = opt_einsum.contract_path(subscripts, *(op.shape for op in operands),
                                                shapes=True, optimize=strategy)
        except (KeyError, ValueError, TypeError) as error:
            raise TeirError(f"einsum: path {path!r}: {error}") from None
        return [tuple(step) for step in found]
    if path is False:
        return [tuple(range(len(inputs)))]
    steps = [tuple(step) for step in _path_key(path)  # pyright: ignore
             if not isinstance(step, str)]
    return steps


def _tree(leaves: list[_Node], pairs: list[tuple[int, ...]], output: str) -> list[_Node]:
    """The intermediates in the order they are made, each with its two children;
    a path step of more than two positions contracts them left to right."""
    current = list(leaves)
    made: list[_Node] = []
    for step in pairs:
        if not step or any(not 0 <= i < len(current) for i in step) or len(set(step)) != len(
                step):
            raise TeirError(f"einsum: path step {step} does not name distinct operands "
                            f"among {len(current)}")
        chosen = [current[i] for i in step]
        rest = [node for i, node in enumerate(current) if i not in step]
        node = chosen[0]
        for position, other in enumerate(chosen[1:], start=2):
            later = set(output).union(*(n.letters for n in rest),
                                      *(n.letters for n in chosen[position:]))
            letters = frozenset((node.letters | other.letters) & later)
            node = _Node("", None, node, other, letters)
            made.append(node)
        current = [*rest, node]
    if len(current) != 1:
        raise TeirError(f"einsum: the path leaves {len(current)} operands uncontracted")
    if not made:
        raise TeirError("einsum: the path contracts nothing")
    made[-1].term = output
    return made


# ---- layouts ---------------------------------------------------------------


def _size(term: str | frozenset[str], extents: dict[str, int]) -> int:
    return math.prod(extents[x] for x in term)


def _step_cost(a: str, b: str, c: str, extents: dict[str, int]) -> float:
    """Bytes (in elements) `teir_lowering.einsum` transposes for `a,b->c`: a GEMM
    reads a term in place when its batch indices lead and its two groups follow
    contiguously (either first), in the orders the other kept terms have."""
    sa, sb, sc = set(a), set(b), set(c)
    batch = sa & sb & sc
    m, n, k = (sa & sc) - sb, (sb & sc) - sa, (sa & sb) - sc
    if not (m and n and k):
        # No GEMM: a direct loop nest. Prefer a unit-stride innermost index.
        return 0.0 if c and (c[-1] == a[-1:] or c[-1] == b[-1:]) else 0.1 * len(c)
    terms = {"a": (a, m, k), "b": (b, k, n), "c": (c, m, n)}
    shapes: dict[str, dict[str, str] | None] = {}
    for name, (term, one, two) in terms.items():
        head, rest = term[:len(batch)], term[len(batch):]
        groups: dict[str, str] | None = None
        if set(head) == batch:
            for first, second in ((one, two), (two, one)):
                if set(rest[:len(first)]) == first and set(rest[len(first):]) == second:
                    groups = {"batch": head, _name(first, m, n, k): rest[:len(first)],
                              _name(second, m, n, k): rest[len(first):]}
        shapes[name] = groups
    best = math.inf
    for kept in itertools.chain.from_iterable(
            itertools.combinations("abc", r) for r in range(4)):
        if any(shapes[x] is None for x in kept):
            continue
        orders: dict[str, str] = {}
        consistent = True
        for name in kept:
            for group, order in shapes[name].items():  # pyright: ignore
                if orders.setdefault(group, order) != order:
                    consistent = False
        if consistent:
            copied = sum(_size(terms[x][0], extents) for x in "abc" if x not in kept)
            best = min(best, copied)
    return best


def _name(group: set[str], m: set[str], n: set[str], k: set[str]) -> str:
    return "m" if group == m else "n" if group == n else "k"


def _candidates(node: _Node, parent: _Node | None, sibling: _Node | None) -> list[str]:
    """Orders of an intermediate grouped the way its producer ([batch][M][N]) or
    its consumer ([batch][free][K]) runs them as a GEMM, each group in the order
    a fixed term around it has (or alphabetical)."""
    letters = node.letters
    assert node.left is not None and node.right is not None
    a, b = node.left.letters, node.right.letters
    partitions = [(letters & a & b, (letters & a) - b, (letters & b) - a)]
    references = [t for t in (node.left.term, node.right.term) if t]
    if parent is not None and sibling is not None:
        y, z = sibling.letters, parent.letters
        partitions.append((letters & y & z, (letters & z) - y, (letters & y) - z))
        references += [t for t in (sibling.term, parent.term) if t]
    references.append("".join(sorted(letters)))
    found: list[str] = []
    for batch, one, two in partitions:
        for groups in ((batch, one, two), (batch, two, one)):
            for reference in references:
                position = {x: i for i, x in enumerate(reference)}
                order = "".join(sorted(
                    letters, key=lambda x: (next(g for g, s in enumerate(groups) if x in s),
                                            position.get(x, len(position)), x)))
                if order not in found:
                    found.append(order)
    return found


def _choose_layouts(tree: list[_Node], output: str, extents: dict[str, int]) -> None:
    """Sets every intermediate's term: a dynamic program over the tree whose
    cost is `_step_cost` summed over the steps."""
    parent: dict[int, tuple[_Node, _Node]] = {}
    for node in tree:
        assert node.left is not None and node.right is not None
        parent[id(node.left)] = (node, node.right)
        parent[id(node.right)] = (node, node.left)
    # Leaves (pre-sum results included) keep the order of their operand.
    options: dict[int, list[str]] = {}
    best: dict[tuple[int, str], tuple[float, str, str]] = {}

    def orders(node: _Node) -> list[str]:
        return options[id(node)] if node.left is not None else [node.term]

    def cost_of(node: _Node, order: str) -> float:
        return best[(id(node), order)][0] if node.left is not None else 0.0

    for node in tree:
        if node is tree[-1]:
            options[id(node)] = [output]
        else:
            above, sibling = parent[id(node)]
            options[id(node)] = _candidates(node, above, sibling)
        for order in options[id(node)]:
            choice = (math.inf, "", "")
            for left in orders(node.left):  # pyright: ignore
                for right in orders(node.right):  # pyright: ignore
                    total = (_step_cost(left, right, order, extents)
                             + cost_of(node.left, left) + cost_of(node.right, right))  # pyright: ignore
                    if total < choice[0]:
                        choice = (total, left, right)
            best[(id(node), order)] = choice

    def settle(node: _Node, order: str) -> None:
        node.term = order
        if node.left is None:
            return
        _, left, right = best[(id(node), order)]
        settle(node.left, left)
        settle(node.right, right)  # pyright: ignore

    settle(tree[-1], output)


# ---- buffers ---------------------------------------------------------------


def _finish(pairs: list[tuple[int, ...]], pending: list[_Pending], output: str,
            extents: dict[str, int], dtype: np.dtype, ones: list[np.ndarray]) -> Plan:
    """Steps with workspace slots: a slot is free again after the step that reads
    its intermediate; an output takes the smallest free slot that holds it (or
    the largest free one, grown), else a new slot."""
    produced: dict[int, int] = {id(p.output): t for t, p in enumerate(pending)}
    last_use: dict[int, int] = {}
    for t, p in enumerate(pending):
        for node in p.inputs:
            if id(node) in produced:
                last_use[id(node)] = t
    slot_bytes: list[int] = []
    free: list[int] = []
    slot_of: dict[int, int] = {}
    steps: list[Step] = []
    for t, p in enumerate(pending):
        node = p.output
        shape = tuple(extents[x] for x in node.term)
        if t == len(pending) - 1:
            target: tuple = ("out",)
        else:
            nbytes = math.prod(shape) * dtype.itemsize
            fitting = [s for s in free if slot_bytes[s] >= nbytes]
            if fitting:
                slot = min(fitting, key=lambda s: slot_bytes[s])
            elif free:
                slot = max(free, key=lambda s: slot_bytes[s])
                slot_bytes[slot] = nbytes
            else:
                slot = len(slot_bytes)
                slot_bytes.append(nbytes)
            if slot in free:
                free.remove(slot)
            slot_of[id(node)] = slot
            target = ("slot", slot, shape)
        refs = tuple(node_ref if (node_ref := n.ref) is not None
                     else ("slot", slot_of[id(n)], tuple(extents[x] for x in n.term))
                     for n in p.inputs)
        terms = ",".join(n.term for n in p.inputs)
        steps.append(Step(f"{terms}->{node.term}", refs, target, shape))
        for n in p.inputs:
            if last_use.get(id(n)) == t:
                free.append(slot_of[id(n)])
    return Plan(pairs, steps, slot_bytes, dtype, ones)
