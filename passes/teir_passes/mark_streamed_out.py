"""`teir-mark-streamed-out`: record whether a configuration writes its out past the caches,
and whether it reads its inputs from memory at every call.

An out whose footprint reaches `STREAMED_MIN_BYTES` (by default the host's
`streamed_bytes`, half its last-level cache) is streamed: the lowering's
transposing tiles write it with non-temporal stores
(`teir_lowering.codegen.tile_primitives`), and the auto-scheduler orders the
loops around such tiles for their reads. The decision is the discardable unit
attribute `streamed_out` on `teir.config`, read by both, e.g.

    teir.config(%in0, %out) : (memref<?xf32>, memref<?xf32>) {
      ...
    } attributes {streamed_out}

The pass recomputes it and adds or removes the attribute, so it is idempotent;
the auto-scheduler runs it before it schedules and the lowering pipeline
before teir-to-scf (as it does teir-match-gemm), so that a configuration
scheduled by hand is judged alike. Scheduling keeps the footprint, so the two
agree. `teir-mark-streamed-out{min-bytes=N}` sets the threshold in bytes.

Inputs whose footprints together span `STREAMED_IN_SHARE` of the last-level cache
or more get `streamed_in` the same way: the GEMM planner then packs an X that
several column panels read (`teir_lowering.codegen.gemm_plan`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.dialects.builtin import UnitAttr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from teir_dialect.analysis import footprint, input_bytes
from teir_dialect.dialect import ConfigOp
from teir_dialect.host import Host, host

__all__ = ["STREAMED_ATTR", "STREAMED_IN_ATTR", "MarkStreamedOutPass", "mark", "streamed_in",
           "streamed_out"]

STREAMED_ATTR = "streamed_out"
"""The unit attribute of a `teir.config` whose out is streamed."""

STREAMED_IN_ATTR = "streamed_in"
"""The unit attribute of a `teir.config` whose inputs are read from memory."""

STREAMED_IN_SHARE = (3, 8)
"""Inputs spanning this share of the host's last-level cache or more are read from
memory at every call (`streamed_in`): the caches do not keep them from one call to
the next. Measured as a knife edge at about half the L3 on a Zen 4 host (32 MiB):
a GEMM 101 x K x 99 FP64 whose A and B took 15.76 MB ran as fast from call to call
as from the L3, with 15.84 MB (N 97) at memory speed; below half, where the L3
holds them as long as nothing else runs, the GEMM planner's packing of X costs
at most 8%, where reading X in place from memory cost 25-55%
(`teir_lowering.codegen.gemm_plan`), so the mark starts at 3/8."""

STREAMED_MIN_BYTES: int | None = None
"""Out footprints from this size on are streamed; None: the host's `streamed_bytes`,
half its last-level cache (`teir_dialect.host`, read from the machine).

Streaming stores skip the read-for-ownership of each written line, and lines
of out never sit in (and get evicted from) the cache sets that the rows of a
tile share when they are a power of two apart: the 64^4 abcd->dcba permutation
went from ~10 to ~20 GB/s on one thread on a Zen 5 host (FP32; FP64 ~10 to
~24). They also leave nothing in cache for a consumer, so they are kept for
outputs that would take much of the last-level cache: from half of it (16 MiB
on that host) `ab->ba` 2048^2 FP32 ran twice as fast streamed as with ordinary
stores; from a quarter, 2048^2 FP16 (8 MiB) ran up to 1.3x slower, and from 1 MiB
1024^2 twice as slow (README, Benchmarks).
"""


def streamed_out(config: ConfigOp) -> bool:
    """Whether teir-mark-streamed-out found `config`'s out streamed."""
    return STREAMED_ATTR in config.attributes


def streamed_in(config: ConfigOp) -> bool:
    """Whether teir-mark-streamed-out found `config`'s inputs read from memory."""
    return STREAMED_IN_ATTR in config.attributes


class MarkConfig(RewritePattern):
    """Adds or removes `streamed_out` and `streamed_in` on one configuration."""

    def __init__(self, least: int, inputs_least: int) -> None:
        self.least = least
        self.inputs_least = inputs_least

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConfigOp, rewriter: PatternRewriter) -> None:
        touched = footprint(op)
        out = touched["out"]
        large = out is not None and out.stop - out.start >= self.least
        marks = {STREAMED_ATTR: large,
                 STREAMED_IN_ATTR: input_bytes(touched) >= self.inputs_least}
        if all(want == (name in op.attributes) for name, want in marks.items()):
            return
        for name, want in marks.items():
            if want:
                op.attributes[name] = UnitAttr()
            else:
                op.attributes.pop(name, None)
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class MarkStreamedOutPass(ModulePass):
    """Marks every configuration whose out is streamed or whose inputs come from memory
    (see the module docstring)."""

    name = "teir-mark-streamed-out"

    min_bytes: int | None = None
    """The threshold in bytes (default `STREAMED_MIN_BYTES`, else the host's)."""

    def __post_init__(self) -> None:
        if self.min_bytes is not None and self.min_bytes < 0:
            raise ValueError(f"min_bytes is a byte count (>= 0), got {self.min_bytes}")

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        mark(op, host(), self.min_bytes)


def mark(module: builtin.ModuleOp, machine: Host, min_bytes: int | None = None) -> None:
    """The pass on `module` for `machine` (the auto-scheduler's, which may be pinned)."""
    least = min_bytes if min_bytes is not None else STREAMED_MIN_BYTES
    if least is None:
        least = machine.streamed_bytes
    share, whole = STREAMED_IN_SHARE
    PatternRewriteWalker(MarkConfig(least, machine.l3 * share // whole),
                         apply_recursively=False).rewrite_module(module)
