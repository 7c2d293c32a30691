"""The spec's words are EnumAttributes in the IR: a policy, a guard term's kind
and a kernel kind hold their StrEnum member, print in the generic form as
`#teir<...>` and round-trip; a word outside the enum is refused by its rule."""

from __future__ import annotations

from io import StringIO

import pytest
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from conftest import SPEC_EXAMPLES
from teir_dialect import from_json
from teir_dialect.dialect import (
    GuardKindAttr,
    GuardTermAttr,
    IterOp,
    KernelAttr,
    KernelKindAttr,
    PolicyAttr,
)
from teir_dialect.records import load_json, parse_mlir
from teir_dialect.vocabulary import GuardKind, KernelKind, Policy


def _module(name: str):
    return from_json(load_json(SPEC_EXAMPLES / "tree" / f"{name}.json"))


def test_policies_are_enum_attributes_in_both_forms() -> None:
    module = _module("10_7_7_parallel_brgemm")
    policies = [op.policy for op in module.walk() if isinstance(op, IterOp)]
    assert all(isinstance(p, PolicyAttr) for p in policies)
    assert Policy.PARALLEL in {p.data for p in policies}
    text = StringIO()
    Printer(stream=text, print_generic_format=True).print_op(module)
    assert "#teir<policy parallel>" in text.getvalue()
    again = parse_mlir(text.getvalue(), "generic")
    assert [op.policy for op in again.walk() if isinstance(op, IterOp)] == policies


def test_guard_and_kernel_kinds_are_enum_attributes() -> None:
    term = GuardTermAttr("last", "k")
    assert isinstance(term.kind, GuardKindAttr) and term.kind.data is GuardKind.LAST
    kernel = KernelAttr("gemm", "NNN", m=2, n=2, k=2, lda=2, ldb=2, ldc=2)
    assert isinstance(kernel.kind, KernelKindAttr) and kernel.kind.data is KernelKind.GEMM
    assert kernel.is_gemm


@pytest.mark.parametrize("make, rule", [
    (lambda: GuardTermAttr("middle", "k"), "guard rule"),
    (lambda: KernelAttr("conv"), "kernel rule"),
])
def test_words_outside_the_enums_are_refused_by_rule(make, rule) -> None:
    with pytest.raises(VerifyException, match=rule):
        make()
