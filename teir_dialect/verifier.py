"""The rules that relate a configuration's records to each other: references,
paths, bounds and parallel races, checked in one walk (`ConfigVerifier`)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import (
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from teir_dialect.attributes import EPILOGUE_ATTR, EpilogueAttr
from teir_dialect.gemm import KERNEL_ATTR
from teir_dialect.ids import id_text
from teir_dialect.ops import (
    MAX_SCHEDULE_DEPTH,
    RECORD_RULES,
    AxisOp,
    ConfigOp,
    InvokeOp,
    IterOp,
    PrimitiveOp,
    ScheduleNode,
    ScheduleOp,
)
from teir_dialect.strided import (
    INDEX_LIMIT,
    Box,
    Undecided,
    index_range,
    parallel_overlap,
)
from teir_dialect.vocabulary import (
    OperationKind,
)


def _byte_width(element_type: Attribute) -> int:
    width = getattr(element_type, "bitwidth", 8)
    return max(1, int(width) // 8)



def _id_kind(attr: Attribute) -> str:
    return "number" if isinstance(attr, IntegerAttr) else "string"



@dataclass(frozen=True)
class _AxisFacts:
    """An axis record's numbers, read once per verification."""

    id: str
    size: int
    strides: tuple[int, ...]
    offsets: tuple[int, ...]


@dataclass(frozen=True)
class _PrimitiveFacts:
    """What an invocation of a primitive needs: role axes, element width, and the
    indices of the tensors it touches."""

    roles: tuple[_AxisFacts, ...]
    width: int
    tensors: tuple[int, ...]


class ConfigVerifier:
    """The rules that relate records to each other (references, paths, bounds,
    races), checked in one walk over the configuration with lookup tables, so
    that verifying takes time linear in its size (times the schedule depth)."""

    def __init__(self, config: ConfigOp):
        self.config = config
        self.names = config.tensor_names
        self.axes: dict[str, AxisOp] = {}
        self.primitives: dict[str, PrimitiveOp] = {}
        self.nodes: set[str] = set()
        self.boxes: dict[int, list[Box]] = {}
        self.parallel: list[IterOp] = []
        self.facts: dict[str, _AxisFacts] = {}
        self.uses: dict[str, _PrimitiveFacts] = {}
        self.epilogues: list[InvokeOp] = []
        self.sizes: list[int | None] = []  # bytes of each tensor's static memref
        for name in self.names:
            memref = config.tensor_type(name)
            self.sizes.append(
                memref.element_count() * _byte_width(memref.element_type)
                if memref.has_static_shape()
                else None
            )

    # -- references -----------------------------------------------------------

    def define(self, table: dict, what: str, rule: str, op: AxisOp | PrimitiveOp) -> None:
        text = id_text(op.id)
        if text in table:
            raise VerifyException(f"{rule}: {what} id '{text}' is defined twice")
        table[text] = op

    def resolve(self, table: dict, what: str, ref: Attribute, user: str) -> AxisOp | PrimitiveOp | None:
        """The record `ref` names, None when there is none; an id written once as a
        number and once as a string (7 and "7") is an error, not the same id."""
        found = table.get(id_text(ref))
        if found is not None and type(found.id) is not type(ref):
            raise VerifyException(
                f"id rule: {user} names {what} '{id_text(ref)}' as a {_id_kind(ref)}, but "
                f"the {what} is defined with a {_id_kind(found.id)} id; an id keeps its "
                "JSON type (7 and \"7\" are different ids)"
            )
        return found

    # -- the whole configuration ---------------------------------------------

    def verify(self) -> None:
        config = self.config
        for axis in config.axes:
            self.define(self.axes, "axis", "axis rule", axis)
            self.facts[axis.axis_id] = _AxisFacts(
                axis.axis_id, axis.size, axis.stride_values, axis.offset_values
            )
        for prim in config.primitives:
            self.define(self.primitives, "primitive", "primitive rule", prim)
        for prim in config.primitives:
            self.verify_primitive(prim)
        self.walk_schedule(config.schedule)
        for node in self.parallel:
            self.verify_race(node)
        for node in self.epilogues:
            self.verify_epilogue(node)

    def verify_primitive(self, prim: PrimitiveOp) -> None:
        name, kind = prim.primitive_id, prim.kind
        for role in kind.roles:
            for ref in prim.role_ids(role):
                if self.resolve(self.axes, "axis", ref, f"primitive '{name}'") is None:
                    raise VerifyException(
                        f"primitive rule: primitive '{name}' names axis '{id_text(ref)}' "
                        f"in role {role}, which is not an axis"
                    )
        width, data_type = prim.element_width, prim.data_type
        accessed = prim.accessed_tensors
        for axis in prim.all_role_axes:
            for tensor in accessed:
                stride = axis.stride_on(tensor)
                if stride % width:
                    raise VerifyException(
                        f"stride alignment: axis '{axis.axis_id}' of primitive "
                        f"'{name}' has stride {stride} on {tensor}, not a multiple of "
                        f"the {width}-byte element width of {data_type}"
                    )
        expected = data_type.storage_type
        for tensor in accessed:
            element = self.config.tensor_type(tensor).element_type
            if element != expected and element != IntegerType(8):
                raise VerifyException(
                    f"operation constraint: primitive '{name}' works on "
                    f"{data_type} but tensor {tensor} holds {element} elements "
                    f"(expected {expected}, or i8 for raw bytes)"
                )
        self.uses[name] = _PrimitiveFacts(
            tuple(self.facts[axis.axis_id] for axis in prim.all_role_axes),
            width,
            tuple(self.names.index(tensor) for tensor in accessed),
        )
        recorded = prim.attributes.get(KERNEL_ATTR)
        if recorded is not None and recorded != (matched := prim.matched_kernel()):
            raise VerifyException(
                f"kernel rule: primitive '{name}' records {recorded} but its axes make "
                f"it {matched}; the lowering trusts this attribute, so drop it or record "
                "the rule's result (teir-match-gemm)"
            )

    # -- the schedule -----------------------------------------------------------

    def walk_schedule(self, schedule: ScheduleOp) -> None:
        """Depth-first over the forest without recursion, keeping the path (the
        iteration nodes above) and the guard terms on it up to date."""
        path: list[IterOp] = []
        path_axes: list[_AxisFacts] = []
        iterated: dict[str, IterOp] = {}
        terms: dict[str, list[str]] = {}
        work: list[tuple[bool, ScheduleNode]] = [(True, n) for n in reversed(schedule.roots)]
        while work:
            entering, node = work.pop()
            if not entering:  # leaving an iteration node
                path.pop()
                path_axes.pop()
                del iterated[node.axis_id]  # pyright: ignore[reportAttributeAccessIssue]
                self.drop_terms(node, terms)
                continue
            self.verify_node_id(node)
            self.verify_guard(node, iterated)
            self.add_terms(node, terms)
            if isinstance(node, InvokeOp):
                self.verify_invocation(node, path, path_axes, iterated, terms)
                if EPILOGUE_ATTR in node.attributes:
                    self.epilogues.append(node)
                self.drop_terms(node, terms)
                continue
            assert isinstance(node, IterOp)
            axis = self.verify_iteration(node, path, iterated)
            path.append(node)
            path_axes.append(axis)
            iterated[node.axis_id] = node
            work.append((False, node))
            work.extend((True, child) for child in reversed(node.children))

    def verify_node_id(self, node: ScheduleNode) -> None:
        if node.node_id in self.nodes:
            raise VerifyException(
                f"schedule rule: schedule node id '{node.node_id}' is defined twice"
            )
        self.nodes.add(node.node_id)

    @staticmethod
    def add_terms(node: ScheduleNode, terms: dict[str, list[str]]) -> None:
        if node.guard is not None:
            for term in node.guard.terms:
                terms.setdefault(term.axis_text, []).append(term.kind.data)

    @staticmethod
    def drop_terms(node: ScheduleNode, terms: dict[str, list[str]]) -> None:
        if node.guard is not None:
            for term in node.guard.terms:
                terms[term.axis_text].pop()

    def verify_guard(self, node: ScheduleNode, iterated: dict[str, IterOp]) -> None:
        if node.guard is None:
            return
        for term in node.guard.terms:
            if term.axis_text not in iterated:
                raise VerifyException(
                    f"guard rule: guard of {node.NODE_KIND} '{node.node_id}' names "
                    f"axis '{term.axis_text}', which no ancestor of "
                    f"'{node.node_id}' iterates"
                )

    def verify_iteration(self, node: IterOp, path: list[IterOp],
                         iterated: dict[str, IterOp]) -> _AxisFacts:
        name = node.node_id
        if len(path) >= MAX_SCHEDULE_DEPTH:
            raise VerifyException(
                f"schedule depth: iteration node '{name}' is nested {len(path) + 1} "
                f"iteration nodes deep; TEIR accepts at most {MAX_SCHEDULE_DEPTH}"
            )
        axis = self.resolve(self.axes, "axis", node.axis, f"iteration node '{name}'")
        if axis is None:
            raise VerifyException(
                f"iteration node rule: iteration node '{name}' iterates axis "
                f"'{node.axis_id}', which is not an axis"
            )
        assert isinstance(axis, AxisOp)
        if (ancestor := iterated.get(node.axis_id)) is not None:
            raise VerifyException(
                f"axis reuse: iteration node '{name}' iterates axis "
                f"'{node.axis_id}', which its ancestor '{ancestor.node_id}' "
                "already iterates"
            )
        if node.parallel and axis.size > 1:
            self.parallel.append(node)
            self.boxes[id(node)] = []
        return self.facts[node.axis_id]

    def verify_invocation(self, node: InvokeOp, path: list[IterOp], path_axes: list[_AxisFacts],
                          iterated: dict[str, IterOp], terms: dict[str, list[str]]) -> None:
        name = node.node_id
        prim = self.resolve(self.primitives, "primitive", node.primitive, f"invocation '{name}'")
        if prim is None:
            raise VerifyException(
                f"invocation node rule: invocation '{name}' invokes primitive "
                f"'{node.primitive_id}', which is not a primitive"
            )
        use = self.uses[id_text(prim.id)]
        for axis in use.roles:
            if (ancestor := iterated.get(axis.id)) is not None:
                raise VerifyException(
                    f"axis reuse: invocation '{name}' runs primitive "
                    f"'{id_text(prim.id)}' over axis '{axis.id}', which "
                    f"its ancestor '{ancestor.node_id}' already iterates"
                )
        spans: list[tuple[int, int]] = []
        for axis in path_axes:
            span = index_range(axis.size, terms.get(axis.id, ()))
            if span is None:
                return  # contradicting guards: the invocation never runs
            spans.append(span)
        for index in use.tensors:
            low = high = magnitude = 0
            for axis, (first, last) in zip(path_axes, spans):
                stride, offset = axis.strides[index], axis.offsets[index]
                low += offset + stride * first
                high += offset + stride * last
                magnitude += abs(offset) + stride * (axis.size - 1)
            for axis in use.roles:
                stride, offset = axis.strides[index], axis.offsets[index]
                low += offset
                high += offset + stride * (axis.size - 1)
                magnitude += abs(offset) + stride * (axis.size - 1)
            self.verify_bounds(name, index, low, high + use.width, magnitude + use.width)
        self.collect_boxes(node, use, path, path_axes, spans)

    def verify_bounds(self, name: str, index: int, start: int, stop: int, magnitude: int) -> None:
        """No byte before a tensor's start nor past a static memref; every address
        on the way fits a signed 64-bit index."""
        tensor = self.names[index]
        if magnitude >= INDEX_LIMIT:
            raise VerifyException(
                f"index range: invocation '{name}' addresses {tensor} with byte "
                f"offsets up to {magnitude}, which do not fit a signed 64-bit index"
            )
        if start < 0:
            raise VerifyException(
                f"bounds: invocation '{name}' touches byte {start} of {tensor}, "
                "before the start of the tensor"
            )
        size = self.sizes[index]
        if size is not None and stop > size:
            raise VerifyException(
                f"bounds: invocation '{name}' touches {tensor} up to byte {stop}, "
                f"past the end of its {size}-byte memref"
            )

    @staticmethod
    def verify_epilogue(node: InvokeOp) -> None:
        """A recorded epilogue is what the rule gives: teir-to-scf trusts it, and
        leaves out the Zero and ReLU invocations it names."""
        recorded = node.attributes[EPILOGUE_ATTR]
        name = node.node_id
        if not isinstance(recorded, EpilogueAttr):
            raise VerifyException(
                f"epilogue rule: invocation '{name}' carries an '{EPILOGUE_ATTR}' "
                f"attribute that is not a #teir.epilogue: {recorded}"
            )
        if node.primitive_op().kind is not OperationKind.CONTRACTION:
            raise VerifyException(
                f"epilogue rule: invocation '{name}' of primitive '{node.primitive_id}' "
                f"carries an '{EPILOGUE_ATTR}' attribute; only the invocation of a "
                "Contraction carries one"
            )
        if recorded != (fused := node.fused_epilogue()):
            raise VerifyException(
                f"epilogue rule: invocation '{name}' records {recorded} but the "
                f"schedule around it fuses {fused or 'nothing'}; the lowering trusts "
                "this attribute, so drop it or record the rule's result "
                "(teir-fuse-epilogues)"
            )

    # -- races ------------------------------------------------------------------

    def collect_boxes(self, node: InvokeOp, use: _PrimitiveFacts, path: list[IterOp],
                      path_axes: list[_AxisFacts], spans: list[tuple[int, int]]) -> None:
        """The bytes of out this invocation writes, as seen from each parallel node
        above it: what one index of that node's axis writes through this leaf, and
        the indices its guards pin the loops around that node to."""
        out = len(self.names) - 1
        when: list[tuple[str, int]] = []
        for depth, parallel in enumerate(path):
            if depth:
                outer, (first, last) = path_axes[depth - 1], spans[depth - 1]
                if first == last and outer.size > 1:
                    when.append((outer.id, first))
            boxes = self.boxes.get(id(parallel))
            if boxes is None:
                continue
            base = 0
            axes: list[tuple[int, int]] = []
            for axis, (first, last) in zip(path_axes[depth + 1 :], spans[depth + 1 :]):
                stride = axis.strides[out]
                base += axis.offsets[out] + stride * first
                if first != last:
                    axes.append((axis.size, stride))
            for axis in use.roles:
                base += axis.offsets[out]
                axes.append((axis.size, axis.strides[out]))
            low, high = spans[depth]
            at = None if low != high else low
            boxes.append(Box(base, tuple(axes), use.width, at, tuple(when), node.node_id))

    def verify_race(self, node: IterOp) -> None:
        """Two different indices of a parallel node's axis never write a common byte
        of out (a data race, and results that change from run to run)."""
        axis = self.axes[node.axis_id]
        boxes = self.boxes[id(node)]
        try:
            found = parallel_overlap(boxes, axis.size, axis.stride_on("out"))
        except Undecided as undecided:
            raise VerifyException(
                f"parallel race: cannot prove that the iterations of parallel node "
                f"'{node.node_id}' (axis '{node.axis_id}') write disjoint bytes of out: "
                f"the exact check would enumerate {undecided.combinations} index "
                "combinations; make the node sequential"
            ) from None
        if found is not None:
            i, j, x, y = found
            hint = (
                f" (axis '{node.axis_id}' has stride 0 on out: only writes that a "
                "first/last guard pins to one of its indices can run in parallel)"
                if axis.stride_on("out") == 0
                else ""
            )
            raise VerifyException(
                f"parallel race: iteration node '{node.node_id}' runs axis "
                f"'{node.axis_id}' in parallel, but its iterations {node.axis_id}={i} "
                f"and {node.axis_id}={j} write overlapping bytes of out (invocation "
                f"'{x.label}' at {i}, '{y.label}' at {j}); each index of a parallel "
                f"axis must write its own bytes{hint}"
            )


def verify_records(config: ConfigOp) -> None:
    ConfigVerifier(config).verify()


RECORD_RULES.append(verify_records)
