"""teir_dialect.strided: byte sets of strided loop nests, checked against brute force.

The parallel-race rule of the verifier rests on `parallel_overlap`; these tests
enumerate every byte each index of a parallel axis writes and compare.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    per_index = [
        set().union(*(written_bytes(b, i, stride) for b in boxes)) for i in range(extent)
    ]
    return any(per_index[i] & per_index[j] for i in range(extent) for j in range(i + 1, extent))


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
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=400, deadline=None)
@given(boxes_strategy, st.integers(2, 5), st.sampled_from([0, 1, 2, 4, 8, 12, 16, 32, 64]))
def test_parallel_overlap_is_exact(boxes: list[Box], extent: int, stride: int) -> None:
    boxes = [b if b.at is None or b.at < extent else Box(b.base, b.axes, b.width) for b in boxes]
    found = parallel_overlap(boxes, extent, stride)
    assert (found is not None) == brute_overlap(boxes, extent, stride)
    if found is not None:  # the witness is real: i and j write a common byte
        i, j, x, y = found
        assert i != j
        assert written_bytes(x, i, stride) & written_bytes(y, j, stride)


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


def test_disjoint_windows() -> None:
    assert disjoint_windows([(4, 4), (3, 16)], 4)
    assert not disjoint_windows([(4, 4), (3, 12)], 4)
    assert disjoint_windows([(1, 0), (4, 4)], 4)  # extent 1 never steps
