"""
`rewrite_once`: a pattern set applied in one walk of a module.

xDSL's `PatternRewriteWalker` with `GreedyRewritePatternApplier` tries every
pattern on every op (each pattern's `op_type_rewrite_pattern` wrapper checks
the op's class), and after a walk that changed anything walks the whole module
again to find nothing more. The ops a rewrite creates or modifies, and the
users of values it replaces, go back on the worklist during the walk, so the
conversions of the llvm pipeline are complete after one walk; the second
walk only repeats every failed match. Here the patterns are dispatched by
the op's class (the class their `op_type_rewrite_pattern` names; a pattern
without one is tried on every op), in the given order, the first that acts
winning as in xDSL's applier, and the module is walked once. When every
pattern names its classes and dead code is not erased on the way, only the
ops of those classes go on the worklist.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import UnionType
from typing import Union, get_args, get_origin

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern, CanonicalizePass
from xdsl.transforms.dead_code_elimination import is_trivially_dead, region_dce


def _op_types(pattern: RewritePattern) -> tuple[type[Operation], ...] | None:
    """The op classes `pattern` matches (from its `op_type_rewrite_pattern`
    wrapper), or None when it may match any op."""
    method = type(pattern).match_and_rewrite
    code = getattr(method, "__code__", None)
    closure = getattr(method, "__closure__", None)
    if code is None or not closure or "expected_type" not in code.co_freevars:
        return None
    expected = closure[code.co_freevars.index("expected_type")].cell_contents
    if get_origin(expected) in (Union, UnionType):
        return get_args(expected)
    return (expected,)


class TypedPatternApplier(RewritePattern):
    """xDSL's GreedyRewritePatternApplier (first pattern that acts wins; trivially
    dead ops erased when `dce`), trying on an op only the patterns for its class."""

    def __init__(self, patterns: Sequence[RewritePattern], *, dce: bool = True):
        self.patterns = tuple(patterns)
        self.dce = dce
        self._types = [_op_types(p) for p in self.patterns]
        self._by_class: dict[type[Operation], tuple[RewritePattern, ...]] = {}
        self.op_types: tuple[type[Operation], ...] | None = None
        """The only op classes this applier can act on (None: any op)."""
        if not dce and all(types is not None for types in self._types):
            self.op_types = tuple(t for types in self._types if types for t in types)

    def _for(self, cls: type[Operation]) -> tuple[RewritePattern, ...]:
        found = self._by_class.get(cls)
        if found is None:
            found = self._by_class[cls] = tuple(
                p for p, types in zip(self.patterns, self._types)
                if types is None or issubclass(cls, types)
            )
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if self.dce and is_trivially_dead(op):
            rewriter.erase(op)
            return
        for pattern in self._for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


class OneWalk(PatternRewriteWalker):
    """xDSL's walker without the confirming second walk (see the module doc)."""

    def _populate_worklist(self, op: Operation | Region | Block) -> None:
        # Only the ops the patterns can act on: a pass for a few ops among many
        # costs one plain walk. Ops the rewrites create are visited as usual.
        types = getattr(self.pattern, "op_types", None)
        if types is None:
            return super()._populate_worklist(op)
        for sub_op in op.walk(
            reverse=not self.walk_reverse, region_first=not self.walk_regions_first
        ):
            if isinstance(sub_op, types):
                self._worklist.push(sub_op)

    def rewrite_region(self, region: Region) -> bool:
        listener = self._get_rewriter_listener()
        self._populate_worklist(region)
        return self._process_worklist(listener)


def rewrite_once(
    module: ModuleOp,
    patterns: Sequence[RewritePattern],
    *,
    dce: bool = True,
    apply_recursively: bool = True,
    walk_reverse: bool = False,
) -> bool:
    """Applies `patterns` (TypedPatternApplier) in one walk of `module`; whether
    anything changed. `apply_recursively`: ops created or changed during the walk
    are visited too."""
    return OneWalk(
        TypedPatternApplier(patterns, dce=dce),
        apply_recursively=apply_recursively,
        walk_reverse=walk_reverse,
    ).rewrite_module(module)


class OneWalkCanonicalizePass(CanonicalizePass):
    """xDSL's `canonicalize`, the same patterns and folding, in one walk (`OneWalk`):
    teir-to-scf's code needs no second one."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = GreedyRewritePatternApplier(
            [CanonicalizationRewritePattern()], ctx=ctx, folding_enabled=True
        )
        OneWalk(pattern, post_walk_func=region_dce).rewrite_module(op)
