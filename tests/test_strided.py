"""teir_dialect.strided: byte sets of strided loop nests, checked against brute force.

The parallel-race rule of the verifier rests on `parallel_overlap`; these tests
enumerate every byte each index of a parallel axis writes and compare, for
boxes and for whole generated records run through the verifier.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from teir_dialect import TeirError, from_json
from teir_dialect.strided import Box, Undecided, disjoint_windows, parallel_overlap, solve


def written_bytes(box: Box, index: int, stride: int) -> set[int]:
    if box.at is not None and box.at != index:
        return set()
    result: set[int] = set()
    for xs in itertools.product(*(range(extent) for extent, _ in box.axes)):
        start = box.base + index * stride + sum(x * s for x, (_, s) in zip(xs, box.axes))
        result.update(range(start, start + box.width))
    return result


def brute_overlap(boxes: list[Box], extent: int, stride: int) -> bool:
    """Whether, in some run of the parallel loop (indices of the enclosing loops u
    and v), two different indices write a common byte."""
    for u, v in itertools.product(range(2), repeat=2):
        run = [b for b in boxes if all({"u": u, "v": v}[axis] == i for axis, i in b.when)]
        per_index = [
            set().union(*(written_bytes(b, i, stride) for b in run)) for i in range(extent)
        ]
        if any(per_index[i] & per_index[j] for i in range(extent) for j in range(i + 1, extent)):
            return True
    return False


boxes_strategy = st.lists(
    st.builds(
        Box,
        st.sampled_from([0, 0, 4, 8, 12, 100]),
        st.lists(
            st.tuples(st.integers(1, 4), st.sampled_from([0, 2, 4, 8, 12, 16, 24, 64])),
            max_size=3,
        ).map(tuple),
        st.sampled_from([2, 4, 8]),
        st.sampled_from([None, None, 0, 1, 3]),
        st.sampled_from([(), (), (("u", 0),), (("u", 1),), (("u", 0), ("v", 1))]),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=400, deadline=None)
@given(boxes_strategy, st.integers(2, 5), st.sampled_from([0, 1, 2, 4, 8, 12, 16, 32, 64]))
def test_parallel_overlap_is_exact(boxes: list[Box], extent: int, stride: int) -> None:
    boxes = [b if b.at is None or b.at < extent else Box(b.base, b.axes, b.width, None, b.when)
             for b in boxes]
    found = parallel_overlap(boxes, extent, stride)
    assert (found is not None) == brute_overlap(boxes, extent, stride)
    if found is not None:  # the witness is real: i and j write a common byte
        i, j, x, y = found
        assert i != j
        assert written_bytes(x, i, stride) & written_bytes(y, j, stride)
        assert x.meets(y)


def test_interleaved_columns_are_disjoint() -> None:
    # a parallel unit-stride axis (4 bytes) over column tiles 64 bytes apart
    assert parallel_overlap([Box(0, ((8, 64),), 4)], 16, 4) is None
    # ... but not when the column tile reaches the next row's first element
    assert parallel_overlap([Box(0, ((8, 64),), 4)], 17, 4) is not None


def test_large_nested_tiles_take_the_fast_proof() -> None:
    # a 1024 x 1024 FP32 tile per index, rows 4096 bytes apart, index stride 4 MiB
    tile = Box(0, ((1024, 4096), (1024, 4)), 4)
    assert parallel_overlap([tile], 64, 4 << 20) is None


def test_search_past_its_budget_is_undecided_not_guessed() -> None:
    # strides with no structure and overlapping hulls: 8191 combinations to search
    box = Box(0, ((4096, 7), (4096, 11)), 4)
    with pytest.raises(Undecided) as raised:
        parallel_overlap([box], 2, 1000, budget=1000)
    assert raised.value.combinations > 1000
    assert parallel_overlap([box], 2, 1000) is not None  # 1000 = 7 * 143 - 11 * 1


def test_solve_finds_and_refutes() -> None:
    assert solve([(4, 0, 3)], 5, 7) is None  # 0, 4, 8, 12: nothing strictly between 5 and 7
    assert solve([(4, 0, 3), (10, -1, 1)], 15, 17) is None  # 16 is not reachable
    found = solve([(4, 0, 3), (10, -1, 1)], 17, 19)
    assert found is not None and 4 * found[0] + 10 * found[1] == 18


@settings(max_examples=examples(400, 100), deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([4, 16, 2**60 + 4, 2**61, 2**62 - 4]),
                       st.integers(-2, 0), st.integers(0, 2)), min_size=1, max_size=3),
    st.sampled_from([0, 1, 2**61, 2**62, 3 * 2**61]), st.sampled_from([-20, -4, 0, 12]),
    st.sampled_from([2, 8, 24]),
)
def test_solve_is_exact_past_int64_sums(terms: list, scale: int, shift: int, gap: int) -> None:
    """Byte offsets near 2**63 (each allowed by the index-range rule) make sums
    that overflow int64: solve still decides, never refusing a small search."""
    low = scale + shift
    found = solve(terms, low, low + gap)
    expected = [e for e in itertools.product(*(range(lo, hi + 1) for _, lo, hi in terms))
                if low < sum(s * x for (s, _, _), x in zip(terms, e)) < low + gap]
    assert (found is not None) == bool(expected)
    if found is not None:
        assert low < sum(s * x for (s, _, _), x in zip(terms, found)) < low + gap


def test_disjoint_windows() -> None:
    assert disjoint_windows([(4, 4), (3, 16)], 4)
    assert not disjoint_windows([(4, 4), (3, 12)], 4)
    assert disjoint_windows([(1, 0), (4, 4)], 4)  # extent 1 never steps


# -- the verifier's race rule on whole records, against brute force ------------------

OUT_STRIDES = [0, 0, 2, 4, 4, 8, 12, 16]
PRIMITIVES = [
    {"id": "z", "operation": "Zero", "axes": {"M": [], "N": []}},
    {"id": "c", "operation": "Copy", "axes": {"M": ["r0"], "N": []}},
    {"id": "w", "operation": "Zero", "axes": {"M": ["r0"], "N": ["r1"]}},
]


@st.composite
def race_records(draw: st.DrawFn) -> dict:
    """A small record with parallel loops, zero strides on out and first/last guards
    anywhere (on the parallel axis, on axes inside and outside it, contradicting)."""
    def axis(name: str, extents: st.SearchStrategy[int], strides: list[int]) -> dict:
        offset = draw(st.sampled_from([0, 0, 4, 8]))
        return {"id": name, "extent": draw(extents), "strides": [4, draw(st.sampled_from(strides))],
                "offsets": [0, offset]}

    loops = [axis(f"a{k}", st.integers(1, 3), OUT_STRIDES) for k in range(draw(st.integers(1, 3)))]
    roles = [axis(f"r{k}", st.integers(1, 3), [0, 4, 8]) for k in range(2)]
    iterations: list[dict] = []
    invocations: list[dict] = []

    def guard(path: list[str]) -> list[str] | None:
        terms = []
        for name in path:  # none, first, last or both (never true past extent 1)
            kinds = draw(st.sampled_from(["", "", "", "", "f", "l", "f", "l", "fl"]))
            terms += [f"{'first' if k == 'f' else 'last'}({name})" for k in kinds]
        return terms or None

    def node(path: list[str], policy: str | None = None) -> str:
        free = [a["id"] for a in loops if a["id"] not in path]
        name = f"n{len(iterations) + len(invocations)}"
        if free and len(path) < 3 and (policy or draw(st.integers(0, 2))):
            record = {"id": name, "axis": free[0] if policy else draw(st.sampled_from(free)),
                      "policy": policy or draw(st.sampled_from(["parallel", "parallel",
                                                                "sequential"])),
                      "guard": guard(path), "children": []}
            iterations.append(record)
            inner = [*path, record["axis"]]
            if policy == "sequential":  # a parallel loop whose runs differ in guards
                record["children"] = [node(inner, "parallel")]
            else:
                record["children"] = [node(inner) for _ in range(draw(st.integers(1, 3)))]
        else:
            invocations.append({"id": name, "primitive": draw(st.sampled_from("zcw")),
                                "guard": guard(path)})
        return name

    if len(loops) > 1 and draw(st.booleans()):
        roots = [node([], "sequential")]
    else:
        roots = [node([]) for _ in range(draw(st.integers(1, 2)))]
    return {
        "tensors": ["in0", "out"],
        "axes": loops + roles,
        "primitives": [{**p, "metadata": {"data_type": "FP32"}} for p in PRIMITIVES],
        "schedule": {"roots": roots, "iterations": iterations, "invocations": invocations},
    }


def brute_race(record: dict) -> dict[tuple[str, int, int], bool]:
    """Runs the record's schedule and returns, for every parallel node, the pairs of
    its indices (within one run of the node) that write a common out byte:
    {(node, i, j): True} for i < j; empty when there is no race."""
    axes = {a["id"]: a for a in record["axes"]}
    prims = {p["id"]: p for p in record["primitives"]}
    iterations = {n["id"]: n for n in record["schedule"]["iterations"]}
    invocations = {n["id"]: n for n in record["schedule"]["invocations"]}
    writers: dict[tuple, dict[int, set[int]]] = {}

    def holds(guard: list[str] | None, env: dict[str, int]) -> bool:
        for term in guard or ():
            kind, name = term[:-1].split("(")
            if env[name] != (0 if kind == "first" else axes[name]["extent"] - 1):
                return False
        return True

    def run(name: str, env: dict[str, int], path: list[dict]) -> None:
        if name in iterations:
            it = iterations[name]
            if holds(it["guard"], env):
                for index in range(axes[it["axis"]]["extent"]):
                    for child in it["children"]:
                        run(child, {**env, it["axis"]: index}, [*path, it])
            return
        inv = invocations[name]
        if not holds(inv["guard"], env):
            return
        role_axes = [axes[a] for ids in prims[inv["primitive"]]["axes"].values() for a in ids]
        base = sum(axes[it["axis"]]["offsets"][1] + axes[it["axis"]]["strides"][1] * env[it["axis"]]
                   for it in path) + sum(a["offsets"][1] for a in role_axes)
        written: set[int] = set()
        for xs in itertools.product(*(range(a["extent"]) for a in role_axes)):
            start = base + sum(x * a["strides"][1] for x, a in zip(xs, role_axes))
            written.update(range(start, start + 4))
        for depth, it in enumerate(path):
            if it["policy"] == "parallel":
                key = (it["id"], *(env[p["axis"]] for p in path[:depth]))
                by_byte = writers.setdefault(key, {})
                for byte in written:
                    by_byte.setdefault(byte, set()).add(env[it["axis"]])

    for root in record["schedule"]["roots"]:
        run(root, {}, [])
    pairs: dict[tuple[str, int, int], bool] = {}
    for key, by_byte in writers.items():
        for indices in by_byte.values():
            for i, j in itertools.combinations(sorted(indices), 2):
                pairs[(key[0], i, j)] = True
    return pairs


RACE = re.compile(r"parallel race: iteration node '(\w+)' runs axis '\w+' in parallel, but "
                  r"its iterations \w+=(\d+) and \w+=(\d+) write overlapping bytes of out")


def race_verdict(record: dict) -> tuple[str, int, int] | None:
    """The verifier's answer: None (accepted) or the node and indices it names."""
    try:
        from_json(record)
    except TeirError as err:
        found = RACE.match(str(err))
        assert found is not None, str(err)  # only races are refused
        i, j = sorted((int(found[2]), int(found[3])))
        return found[1], i, j
    return None


@settings(max_examples=examples(2000, 300), deadline=None)
@given(race_records())
def test_race_rule_is_exact_on_records(record: dict) -> None:
    """The verifier refuses a record iff two different indices of one run of a
    parallel node write a common out byte, with the guards and zero strides taken
    into account; the indices it names are a real race."""
    races = brute_race(record)
    verdict = race_verdict(record)
    assert (verdict is not None) == bool(races), (verdict, sorted(races))
    if verdict is not None:
        assert verdict in races


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(-6, 3), st.integers(0, 6)),
                min_size=1, max_size=4),
       st.integers(-300, 300), st.integers(1, 60))
def test_small_searches_find_what_the_numpy_search_finds(terms, low, width) -> None:
    """`solve` enumerates small searches in Python integers: the same solution (or
    none) as its numpy form, which it uses past SMALL_SEARCH combinations."""
    from teir_dialect import strided

    terms = [(s, lo, lo + span) for s, lo, span in terms]
    small = strided.solve(terms, low, low + width)
    original = strided.SMALL_SEARCH
    try:
        strided.SMALL_SEARCH = 0
        assert strided.solve(terms, low, low + width) == small
    finally:
        strided.SMALL_SEARCH = original
    if small is not None:
        total = sum(s * e for (s, _, _), e in zip(terms, small))
        assert low < total < low + width
