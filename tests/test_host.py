"""Host descriptions: what decisions read, and pinning them so tests do not follow the CI host."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import SPEC_EXAMPLES, load
from teir_dialect import from_json, to_json
from teir_dialect import host as host_module
from teir_dialect.host import (
    L3_PER_CORE,
    PINNED_HOSTS,
    buffers_transpose,
    host,
    l1_sets,
    lines_apart,
    native_host,
    pinned,
    pinned_host,
    stores_rows_plainly,
)


def test_pinned_replaces_the_description_inside_the_block() -> None:
    before = host()
    with pinned("avx2") as machine:
        assert host() is machine is PINNED_HOSTS["avx2"]
        with pinned("avx512"):
            assert host().vector_bytes == 64
        assert host() is machine
    assert host() == before


def test_teir_host_names_a_pinned_description(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEIR_HOST", "avx2-small")
    assert host() is PINNED_HOSTS["avx2-small"]
    monkeypatch.delenv("TEIR_HOST")
    assert host() is native_host()


def test_an_unknown_description_is_named_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"unknown host description 'zen9'.*avx2, avx2-small"):
        pinned_host("zen9")


def test_teir_opt_reports_an_unknown_description_without_a_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "teir_tools.teir_opt",
         str(SPEC_EXAMPLES / "tree" / "10_7_5_scalar_contraction.json"),
         "-p", "teir-auto-schedule"],
        capture_output=True, text=True, env={**os.environ, "TEIR_HOST": "zen9"}, check=False,
    )
    assert result.returncode == 1
    assert "unknown host description 'zen9'" in result.stderr
    assert "Traceback" not in result.stderr


def _auto_scheduled(name: str) -> dict:
    module = from_json(load(SPEC_EXAMPLES / "tree" / "10_7_5_scalar_contraction.json"))
    from teir_passes import apply_schedule

    with pinned(name):
        apply_schedule(module, [{"op": "teir-auto-schedule"}])
    return to_json(module)


@pytest.mark.parametrize("name", sorted(PINNED_HOSTS))
def test_a_pinned_schedule_is_the_same_in_every_process(name: str) -> None:
    """The decision depends on the description only: a fresh process with TEIR_HOST
    set schedules as this one does under pinned()."""
    script = (
        "import json, sys; from teir_dialect import from_json, to_json;"
        "from teir_passes import apply_schedule;"
        "m = from_json(sys.argv[1]); apply_schedule(m, [{'op': 'teir-auto-schedule'}]);"
        "print(json.dumps(to_json(m)))"
    )
    path = str(SPEC_EXAMPLES / "tree" / "10_7_5_scalar_contraction.json")
    result = subprocess.run([sys.executable, "-c", script, path], capture_output=True,
                            text=True, env={**os.environ, "TEIR_HOST": name}, check=True)
    assert json.loads(result.stdout) == _auto_scheduled(name)


@pytest.mark.parametrize("stride, sets", [
    (4096, 1), (135168, 1), (2048, 2), (6144, 2), (1024, 4), (512, 8), (256, 16),
    (0, 1),
    (8190, 1), (8194, 1),   # just off a power of two: the rows crowd one set all the same
    (4160, 16), (8448, 16),  # a line or more off: every row in a set of its own
])
def test_l1_sets_counts_how_a_block_spreads(stride: int, sets: int) -> None:
    assert l1_sets(stride) == sets
    assert l1_sets(-stride) == sets


@pytest.mark.parametrize("out_rows, row_bytes, column_bytes, large, buffered", [
    (135168, 132, 132, True, True),
    (135168, 32, 520, True, True),     # one set: long rows of in0 too
    (67584, 132, 132, True, True),     # two sets, short rows of in0
    (67584, 104, 360, True, False),    # two sets, rows of in0 of 360 bytes, a large out
    (67584, 104, 360, False, True),    # the same, out in the cache
    (33792, 132, 132, False, False),   # four sets
    (135168, 128, 132, False, False),  # rows of out of whole lines: streamed
    (135168, 260, 132, False, False),  # rows of out too long
])
def test_which_transposes_go_through_buffers(out_rows: int, row_bytes: int,
                                             column_bytes: int, large: bool,
                                             buffered: bool) -> None:
    assert buffers_transpose(out_rows, row_bytes, column_bytes, large) is buffered


@pytest.mark.parametrize("pitch, row_bytes, plainly, on_intel", [
    (2239488, 108, True, False),    # HPTT 55: a line and more, lines apart, short, not 4 KiB apart
    (1618496, 152, True, False),    # HPTT 40
    (1080, 36, True, True),         # under a line
    (1088, 60, True, True),
    (1048576, 128, False, False),   # 64^4: lines 4 KiB apart, streamed
    (4096 * 3, 100, False, False),  # rows 4 KiB apart: streamed
    (8192, 1024, False, False),     # four lines and more: streamed
    (288, 288, False, False),       # back to back: streamed through a buffer
    (97952, 2744, False, False),    # 4 lines and more, lines off: shifted
    (935712, 288, False, True),     # HPTT 25 at 64 MiB: 4.5 lines, every other row off a line:
                                    # shifted, or plainly where the L3 serves like memory
    (97952, 800, False, True),      # 12.5 lines
    (97952, 1024 + 36, False, False),  # 16 lines and more: shifted on both
    (97952, 255, True, True),       # under 4 lines, lines off
])
def test_which_transposes_store_their_rows_of_out_plainly(pitch: int, row_bytes: int,
                                                          plainly: bool, on_intel: bool) -> None:
    """Rows of out under four lines, whole lines apart, are stored plainly unless 4 KiB
    apart on the Zen-like description, streamed on the Intel one
    (`Host.streams_short_rows`); rows not whole lines apart are shifted from 4
    lines on on the Zen-like one, from 16 on the Intel one, whose rows stored
    plainly are prefetched (`Host.shifted_min_lines`)."""
    for name, expected in (("avx512", plainly), ("avx512-intel", on_intel)):
        with pinned(name) as machine:
            assert stores_rows_plainly(pitch, row_bytes, machine) is expected, name
            assert lines_apart(pitch, row_bytes, machine) is (pitch % 64 == 0 and (
                row_bytes >= 256 or pitch % 4096 == 0 or machine.streams_short_rows)), name


def test_outputs_stream_from_half_the_cache_that_serves_faster_than_memory() -> None:
    """Half the L3 on the Zen-like descriptions, half the L2 on the Intel one, whose L3
    a core reaches no faster than memory (`Host.l3_serves_like_memory`)."""
    assert pinned_host("avx512").streamed_bytes == 16 << 20
    assert pinned_host("avx2").streamed_bytes == 16 << 20
    assert pinned_host("avx512-intel").streamed_bytes == 1 << 20


@pytest.mark.parametrize("cores, reported, counted", [
    (2, 300 << 20, 32 << 20),    # a two-vCPU guest on a large part: its share
    (2, 32 << 20, 32 << 20),     # a CCD's L3 that two cores may well fill alone
    (32, 300 << 20, 300 << 20),  # a machine that owns its cores keeps what it reports
    (1, 1 << 20, 1 << 20),
])
def test_the_last_level_cache_counted_is_at_most_a_share_per_core(
        monkeypatch: pytest.MonkeyPatch, cores: int, reported: int, counted: int) -> None:
    """sysfs reports the socket's whole L3, which the cores of other processes and
    tenants share: the description counts at most L3_PER_CORE per core this process
    may run on (what x_cached, the streaming stores and the auto-scheduler read);
    TEIR_HOST_CACHE still says exactly what to plan for."""
    monkeypatch.setattr(host_module, "_sysfs_caches",
                        lambda: {"l1": 48 << 10, "l2": 2 << 20, "l3": reported})
    monkeypatch.setattr(host_module.os, "sched_getaffinity", lambda _: set(range(cores)))
    monkeypatch.delenv("TEIR_HOST_CACHE", raising=False)
    native_host.cache_clear()
    try:
        assert native_host().l3 == counted
        assert L3_PER_CORE == 16 << 20
        monkeypatch.setenv("TEIR_HOST_CACHE", "l3=300M")
        native_host.cache_clear()
        assert native_host().l3 == 300 << 20
    finally:
        native_host.cache_clear()
