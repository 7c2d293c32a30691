"""`teir-gomp-launch`: parallel loops on all cores through libgomp's
`GOMP_parallel_loop_dynamic`.

At the llvm level it defines each `__teir_launch_*` function that
`teir-outline-parallel` (teir_lowering.codegen.outline_parallel) declared. It
stores the arguments in a stack array and calls `GOMP_parallel_loop_dynamic`
over [0, total) in chunks of total / (CHUNKS_PER_THREAD x threads), with a
trampoline that reads the arguments back and calls the outlined body on
each chunk `GOMP_loop_dynamic_next` hands its thread. Around the fork the
caller pins itself to its CPU and gives the workers it knows the other CPUs
before it wakes them, then takes its own mask back (`_define_pinning`); two
more slots carry that CPU and the caller's saved mask, so that a worker not
known yet that starts on the caller's CPU moves off it first
(`_define_placement`). The thread count is
libgomp's default (OMP_NUM_THREADS or `omp_set_num_threads`), which the
Python kernel sets per call.

Why chunks on demand rather than one static chunk per thread: a process that
also calls numpy has OpenBLAS's workers spinning on a core for about 0.1 s
after each BLAS call (and a shared machine has other jobs); with static
chunks the join waits for the thread that shares its core, so two threads ran
at about one thread's speed. Every iteration computes the same bytes on any
thread, so results stay independent of the thread count.

Why libgomp: it ships with the compiler runtime on the host (Debian's
libgomp1), its fork/join costs a few microseconds, and its threads stay
parked between calls; see benchmarks/parallel_overhead.py for the measurement
against a Python thread pool calling JIT'd chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import IntegerAttr, IntegerType, i8, i32, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from teir_dialect.records import TeirError
from teir_lowering.codegen.outline_parallel import LAUNCH_PREFIX, POINTER
from teir_lowering.codegen.team import TEAM, TEAM_SLOTS

CHUNKS_PER_THREAD = 8
"""Chunks of the iteration space per thread that libgomp hands out on demand: a
thread whose core something else also runs on (another library's thread pool
still spinning, another process) takes fewer, so the join does not wait for it."""


def _declare(module: builtin.ModuleOp, name: str, inputs: list, output) -> None:
    if any(isinstance(o, llvm.FuncOp) and o.sym_name.data == name for o in module.ops):
        return
    module.body.block.add_op(
        llvm.FuncOp(name, llvm.LLVMFunctionType(inputs, output), linkage=llvm.LinkageAttr("external"))
    )


def _i64(builder: Builder, value: int) -> SSAValue:
    return builder.insert(llvm.ConstantOp(IntegerAttr(value, i64), i64)).result


def materialize_launch(module: builtin.ModuleOp, launcher: llvm.FuncOp) -> None:
    body_name = launcher.sym_name.data[len(LAUNCH_PREFIX):]
    target = next(
        o for o in module.ops if isinstance(o, llvm.FuncOp) and o.sym_name.data == body_name
    )
    inputs = list(launcher.function_type.inputs)  # captured..., total (i64)
    body_inputs = list(target.function_type.inputs)  # captured..., lo, hi
    ptr = llvm.LLVMPointerType()
    slots = len(inputs) - 1  # the captured values; libgomp holds the range

    # Trampoline: void omp_fn(ptr ctx): claim chunks until none is left.
    trampoline_name = body_name + "__omp"
    entry, claim, run, done = Block(arg_types=[ptr]), Block(), Block(), Block()
    tb = Builder(InsertPoint.at_end(entry))
    values: list[SSAValue] = []
    for slot, arg_type in enumerate(inputs[:-1]):
        address = tb.insert(
            llvm.GEPOp(entry.args[0], [slot], pointee_type=i64)
        ).result
        raw = tb.insert(llvm.LoadOp(address, i64)).dereferenced_value
        if isinstance(arg_type, llvm.LLVMPointerType):
            raw = tb.insert(llvm.IntToPtrOp(raw)).results[0]
        elif isinstance(arg_type, IntegerType) and arg_type.width.data < 64:
            raw = tb.insert(llvm.TruncOp(raw, arg_type)).res  # pyright: ignore
        values.append(raw)
    caller = []
    for slot in (slots, slots + 1):  # the CPU the caller is pinned to, its saved mask
        address = tb.insert(llvm.GEPOp(entry.args[0], [slot], pointee_type=i64)).result
        caller.append(tb.insert(llvm.LoadOp(address, i64)).dereferenced_value)
    cpu = tb.insert(llvm.TruncOp(caller[0], i32)).res  # pyright: ignore
    tb.insert(llvm.CallOp(PLACE_WORKER, cpu, tb.insert(llvm.IntToPtrOp(caller[1])).results[0]))
    one = _i64(tb, 1)
    start = tb.insert(llvm.AllocaOp(one, i64)).res
    end = tb.insert(llvm.AllocaOp(one, i64)).res
    tb.insert(llvm.BrOp(claim))
    cb = Builder(InsertPoint.at_end(claim))
    claimed = cb.insert(
        llvm.CallOp("GOMP_loop_dynamic_next", start, end, return_type=i8)
    ).returned
    zero8 = cb.insert(llvm.ConstantOp(IntegerAttr(0, i8), i8)).result
    more = cb.insert(llvm.ICmpOp(claimed, zero8, IntegerAttr(1, IntegerType(64)))).res  # ne
    cb.insert(llvm.CondBrOp(more, run, [], done, []))
    rb = Builder(InsertPoint.at_end(run))
    lo = rb.insert(llvm.LoadOp(start, i64)).dereferenced_value
    hi = rb.insert(llvm.LoadOp(end, i64)).dereferenced_value
    call_args = [*values, lo, hi]
    assert len(call_args) == len(body_inputs)
    rb.insert(llvm.CallOp(body_name, *call_args))
    rb.insert(llvm.BrOp(claim))
    db = Builder(InsertPoint.at_end(done))
    db.insert(llvm.CallOp("GOMP_loop_end_nowait"))
    db.insert(llvm.ReturnOp())
    trampoline = llvm.FuncOp(
        trampoline_name, llvm.LLVMFunctionType([ptr]),
        body=Region([entry, claim, run, done]),
    )

    # Launcher: store the arguments, fork/join through GOMP_parallel_loop_dynamic.
    lblock = Block(arg_types=inputs)
    lb = Builder(InsertPoint.at_end(lblock))
    count = _i64(lb, slots + 2)
    context = lb.insert(llvm.AllocaOp(count, i64)).res
    for slot, arg in enumerate(lblock.args[:-1]):
        value: SSAValue = arg
        if isinstance(arg.type, llvm.LLVMPointerType):
            value = lb.insert(llvm.PtrToIntOp(arg, i64)).results[0]
        elif isinstance(arg.type, IntegerType) and arg.type.width.data < 64:
            value = lb.insert(llvm.ZExtOp(arg, i64)).res  # pyright: ignore
        elif arg.type != i64:
            raise TeirError(f"teir-gomp-launch: cannot pass a {arg.type} to a parallel loop")
        address = lb.insert(llvm.GEPOp(context, [slot], pointee_type=i64)).result
        lb.insert(llvm.StoreOp(value, address))
    saved = lb.insert(llvm.AllocaOp(_i64(lb, CPU_SET_WORDS), i64)).res
    pinned = lb.insert(llvm.CallOp(PIN_TEAM, saved, return_type=i32)).returned
    for slot, value in ((slots, lb.insert(llvm.SExtOp(pinned, i64)).res),  # pyright: ignore
                        (slots + 1, lb.insert(llvm.PtrToIntOp(saved, i64)).results[0])):
        address = lb.insert(llvm.GEPOp(context, [slot], pointee_type=i64)).result
        lb.insert(llvm.StoreOp(value, address))
    total = lblock.args[-1]
    # chunk = max(1, total / (CHUNKS_PER_THREAD * threads))
    threads = lb.insert(llvm.CallOp("omp_get_max_threads", return_type=i32)).returned
    threads = lb.insert(llvm.SExtOp(threads, i64)).res  # pyright: ignore
    pieces = lb.insert(llvm.MulOp(threads, _i64(lb, CHUNKS_PER_THREAD))).res
    chunk = lb.insert(llvm.SDivOp(total, pieces)).res
    one = _i64(lb, 1)
    small = lb.insert(llvm.ICmpOp(chunk, one, IntegerAttr(2, IntegerType(64)))).res  # slt
    chunk = lb.insert(llvm.SelectOp(small, one, chunk)).results[0]
    function = lb.insert(llvm.AddressOfOp(trampoline_name, ptr)).result
    zero = lb.insert(llvm.ConstantOp(IntegerAttr(0, i32), i32)).result
    lb.insert(llvm.CallOp("GOMP_parallel_loop_dynamic", function, context, zero,
                          _i64(lb, 0), total, one, chunk, zero))
    lb.insert(llvm.CallOp(UNPIN_CALLER, saved, pinned))
    lb.insert(llvm.ReturnOp())
    launcher.body.add_block(lblock)
    launcher.linkage = llvm.LinkageAttr("internal")  # pyright: ignore
    module.body.block.add_op(trampoline)


PLACE_WORKER = "__teir_place_worker"
"""The function each thread of a parallel loop calls first (`_define_placement`)."""

CPU_SET_WORDS = 16
"""64-bit words of the CPU mask the placement reads and writes (1,024 CPUs, glibc's
cpu_set_t); a caller on a CPU past them is left alone."""

PIN_TEAM = "__teir_pin_team"
UNPIN_CALLER = "__teir_unpin_caller"

_PREDICATES = {"eq": 0, "ne": 1, "slt": 2, "sgt": 4, "sge": 5, "ult": 6}


def _i32(builder: Builder, value: int) -> SSAValue:
    return builder.insert(llvm.ConstantOp(IntegerAttr(value, i32), i32)).result


def _call32(builder: Builder, name: str, *args: SSAValue) -> SSAValue:
    return builder.insert(llvm.CallOp(name, *args, return_type=i32)).returned


def _test(builder: Builder, a: SSAValue, b: SSAValue, predicate: str) -> SSAValue:
    attr = IntegerAttr(_PREDICATES[predicate], IntegerType(64))
    return builder.insert(llvm.ICmpOp(a, b, attr)).res


def _both(builder: Builder, a: SSAValue, b: SSAValue) -> SSAValue:
    return builder.insert(llvm.AndOp(a, b)).res


def _mask_size(builder: Builder) -> SSAValue:
    return _i64(builder, 8 * CPU_SET_WORDS)


def _slot(builder: Builder, array: SSAValue, index: SSAValue) -> SSAValue:
    """The address of i64 `index` (i64) of `array`."""
    return builder.insert(llvm.GEPOp(array, [llvm.GEP_USE_SSA_VAL], ssa_indices=[index],
                                     pointee_type=i64)).result


def _cpu_bit(builder: Builder, mask: SSAValue, cpu: SSAValue) -> tuple[SSAValue, SSAValue]:
    """The address of the word of `mask` that holds `cpu` (i32, below 64 x
    CPU_SET_WORDS), and `cpu`'s bit in it."""
    wide = builder.insert(llvm.ZExtOp(cpu, i64)).res  # pyright: ignore
    word = builder.insert(llvm.LShrOp(wide, _i64(builder, 6))).res
    bit = builder.insert(llvm.ShlOp(_i64(builder, 1), builder.insert(
        llvm.AndOp(wide, _i64(builder, 63))).res)).res
    return _slot(builder, mask, word), bit


def _copy_mask_without(builder: Builder, source: SSAValue, cpu: SSAValue) -> SSAValue:
    """A new stack mask: `source` without `cpu`."""
    mask = builder.insert(llvm.AllocaOp(_i64(builder, CPU_SET_WORDS), i64)).res
    for index in range(CPU_SET_WORDS):
        word = builder.insert(llvm.GEPOp(source, [index], pointee_type=i64)).result
        value = builder.insert(llvm.LoadOp(word, i64)).dereferenced_value
        builder.insert(llvm.StoreOp(value, builder.insert(
            llvm.GEPOp(mask, [index], pointee_type=i64)).result))
    address, bit = _cpu_bit(builder, mask, cpu)
    value = builder.insert(llvm.LoadOp(address, i64)).dereferenced_value
    others = builder.insert(llvm.XOrOp(bit, _i64(builder, -1))).res
    builder.insert(llvm.StoreOp(builder.insert(llvm.AndOp(value, others)).res, address))
    return mask


def _define_placement(module: builtin.ModuleOp) -> None:
    """`__teir_place_worker(cpu, saved)`: a worker thread (not thread 0) writes its
    thread id into `TEAM`, so that the next launch places it before waking it
    (`_define_pinning`); one that finds itself on `cpu`, the CPU the caller is
    pinned to for this fork, takes the caller's saved mask without that CPU as
    its own (`sched_setaffinity`), and so moves to another. After an idle pause
    the scheduler woke libgomp's worker on the caller's CPU and left it there
    for tens of milliseconds: a short 2-thread kernel ran at one thread's speed
    (README, Parallel policy). `cpu` is -1 when the caller did not pin itself
    (under OMP_PROC_BIND libgomp places the threads): nothing moves then, nor
    when the caller's mask holds no other CPU (sched_setaffinity refuses an
    empty mask)."""
    if any(isinstance(o, llvm.FuncOp) and o.sym_name.data == PLACE_WORKER for o in module.ops):
        return
    ptr = llvm.LLVMPointerType()
    _declare(module, "omp_get_thread_num", [], i32)
    _declare(module, "sched_setaffinity", [i32, i64, ptr], i32)
    entry, record, placed, check, move, done = (
        Block(arg_types=[i32, ptr]), Block(), Block(), Block(), Block(), Block())
    cpu, saved = entry.args
    b = Builder(InsertPoint.at_end(entry))
    zero = _i32(b, 0)
    number = _call32(b, "omp_get_thread_num")
    worker = _test(b, number, zero, "ne")
    b.insert(llvm.CondBrOp(_both(b, worker, _test(b, number, _i32(b, TEAM_SLOTS), "ult")),
                           record, [], placed, []))
    b = Builder(InsertPoint.at_end(record))
    own = b.insert(llvm.SExtOp(_call32(b, "gettid"), i64)).res  # pyright: ignore
    team = b.insert(llvm.AddressOfOp(TEAM, ptr)).result
    index = b.insert(llvm.SExtOp(number, i64)).res  # pyright: ignore
    b.insert(llvm.StoreOp(own, _slot(b, team, index)))
    b.insert(llvm.BrOp(placed))
    b = Builder(InsertPoint.at_end(placed))
    pinned = _test(b, cpu, _i32(b, 64 * CPU_SET_WORDS), "ult")
    b.insert(llvm.CondBrOp(_both(b, worker, pinned), check, [], done, []))
    b = Builder(InsertPoint.at_end(check))
    b.insert(llvm.CondBrOp(_test(b, _call32(b, "sched_getcpu"), cpu, "eq"),
                           move, [], done, []))
    b = Builder(InsertPoint.at_end(move))
    _call32(b, "sched_setaffinity", zero, _mask_size(b), _copy_mask_without(b, saved, cpu))
    b.insert(llvm.BrOp(done))
    Builder(InsertPoint.at_end(done)).insert(llvm.ReturnOp())
    module.body.block.add_op(llvm.FuncOp(
        PLACE_WORKER, llvm.LLVMFunctionType([i32, ptr]),
        body=Region([entry, record, placed, check, move, done]),
        linkage=llvm.LinkageAttr("internal")))


def _define_pinning(module: builtin.ModuleOp) -> None:
    """`__teir_pin_team(saved)`: before a fork, the caller saves its CPU mask in
    `saved`, pins itself to the CPU it is on, and gives every known worker of this
    process (`TEAM`, `tgkill(pid, tid, 0)`: a thread of ours) the saved mask
    without that CPU; it returns that CPU, or -1 when it did not pin (under
    OMP_PROC_BIND libgomp places the threads; one thread). The launcher hands
    both to the workers (`_define_placement`). `__teir_unpin_caller(saved, cpu)`
    gives the caller its mask back after the join.

    Why: in a virtual machine the scheduler counts an idle vCPU the host has
    descheduled as busy, so a woken worker is put on the caller's CPU, and a
    caller that wakes on either CPU between calls moves in the middle of one.
    With a worker confined to the other CPU after the last call, a caller now on
    that CPU shared it with the worker: after 10 ms idle, a 2-thread 512^3 GEMM
    took longer than on one thread (README, Parallel policy). Placed by the
    caller before the wake, the worker starts on another CPU and the caller
    stays on its own until the join."""
    if any(isinstance(o, llvm.FuncOp) and o.sym_name.data == PIN_TEAM for o in module.ops):
        return
    ptr = llvm.LLVMPointerType()
    for name, inputs in (("getpid", []), ("tgkill", [i32, i32, i32]),
                         ("omp_get_max_threads", []), ("omp_get_proc_bind", [])):
        _declare(module, name, inputs, i32)
    _declare(module, "sched_getaffinity", [i32, i64, ptr], i32)
    _declare(module, "sched_setaffinity", [i32, i64, ptr], i32)
    entry, read, pin, loop, body, check, move, step, done, fail = (
        Block(arg_types=[ptr]), Block(), Block(), Block(arg_types=[i32]), Block(), Block(),
        Block(), Block(), Block(), Block())
    (saved,) = entry.args
    b = Builder(InsertPoint.at_end(entry))
    zero = _i32(b, 0)
    threads = _call32(b, "omp_get_max_threads")
    cpu = _call32(b, "sched_getcpu")
    go = _both(b, _both(b, _test(b, _call32(b, "omp_get_proc_bind"), zero, "eq"),
                        _test(b, threads, _i32(b, 1), "sgt")),
               _test(b, cpu, _i32(b, 64 * CPU_SET_WORDS), "ult"))
    b.insert(llvm.CondBrOp(go, read, [], fail, []))
    b = Builder(InsertPoint.at_end(read))
    ok = _test(b, _call32(b, "sched_getaffinity", zero, _mask_size(b), saved), zero, "eq")
    b.insert(llvm.CondBrOp(ok, pin, [], fail, []))
    b = Builder(InsertPoint.at_end(pin))
    others = _copy_mask_without(b, saved, cpu)
    alone = b.insert(llvm.AllocaOp(_i64(b, CPU_SET_WORDS), i64)).res
    for index in range(CPU_SET_WORDS):
        b.insert(llvm.StoreOp(_i64(b, 0), b.insert(
            llvm.GEPOp(alone, [index], pointee_type=i64)).result))
    address, bit = _cpu_bit(b, alone, cpu)
    b.insert(llvm.StoreOp(bit, address))
    _call32(b, "sched_setaffinity", zero, _mask_size(b), alone)
    pid = _call32(b, "getpid")
    count = _min(b, threads, _i32(b, TEAM_SLOTS))
    b.insert(llvm.BrOp(loop, _i32(b, 1)))
    b = Builder(InsertPoint.at_end(loop))
    (number,) = loop.args
    b.insert(llvm.CondBrOp(_test(b, number, count, "slt"), body, [], done, []))
    b = Builder(InsertPoint.at_end(body))
    team = b.insert(llvm.AddressOfOp(TEAM, ptr)).result
    index = b.insert(llvm.SExtOp(number, i64)).res  # pyright: ignore
    tid = b.insert(llvm.TruncOp(b.insert(llvm.LoadOp(_slot(b, team, index), i64))
                                .dereferenced_value, i32)).res  # pyright: ignore
    b.insert(llvm.CondBrOp(_test(b, tid, zero, "ne"), check, [], step, []))
    b = Builder(InsertPoint.at_end(check))
    ours = _test(b, _call32(b, "tgkill", pid, tid, zero), zero, "eq")
    b.insert(llvm.CondBrOp(ours, move, [], step, []))
    b = Builder(InsertPoint.at_end(move))
    _call32(b, "sched_setaffinity", tid, _mask_size(b), others)
    b.insert(llvm.BrOp(step))
    b = Builder(InsertPoint.at_end(step))
    b.insert(llvm.BrOp(loop, b.insert(llvm.AddOp(number, _i32(b, 1))).res))
    Builder(InsertPoint.at_end(done)).insert(llvm.ReturnOp(cpu))
    b = Builder(InsertPoint.at_end(fail))
    b.insert(llvm.ReturnOp(_i32(b, -1)))
    module.body.block.add_op(llvm.FuncOp(
        PIN_TEAM, llvm.LLVMFunctionType([ptr], i32),
        body=Region([entry, read, pin, loop, body, check, move, step, done, fail]),
        linkage=llvm.LinkageAttr("internal")))

    entry, restore, back = Block(arg_types=[ptr, i32]), Block(), Block()
    saved, pinned = entry.args
    b = Builder(InsertPoint.at_end(entry))
    b.insert(llvm.CondBrOp(_test(b, pinned, _i32(b, 0), "sge"), restore, [], back, []))
    b = Builder(InsertPoint.at_end(restore))
    _call32(b, "sched_setaffinity", _i32(b, 0), _mask_size(b), saved)
    b.insert(llvm.BrOp(back))
    Builder(InsertPoint.at_end(back)).insert(llvm.ReturnOp())
    module.body.block.add_op(llvm.FuncOp(
        UNPIN_CALLER, llvm.LLVMFunctionType([ptr, i32]),
        body=Region([entry, restore, back]), linkage=llvm.LinkageAttr("internal")))


def _min(builder: Builder, a: SSAValue, b: SSAValue) -> SSAValue:
    less = builder.insert(llvm.ICmpOp(a, b, IntegerAttr(2, IntegerType(64)))).res  # slt
    return builder.insert(llvm.SelectOp(less, a, b)).results[0]


def _launchers(signatures: tuple) -> builtin.ModuleOp:
    """The launchers as an llvm-dialect module of their own: each launcher and its
    trampoline as teir-gomp-launch defines them, with external linkage, beside
    declarations of the chunk functions and of libgomp."""
    out = builtin.ModuleOp([])
    for symbol, inputs in signatures:
        _declare(out, symbol, [llvm.LLVMPointerType() if t == POINTER else t for t in inputs],
                 None)
    GompLaunchPass().apply(Context(), out)
    for op in out.ops:
        if isinstance(op, llvm.FuncOp) and op.sym_name.data.startswith(LAUNCH_PREFIX):
            op.linkage = llvm.LinkageAttr("external")  # pyright: ignore
    return out


def launchers_ir(signatures: tuple) -> str:
    """The launchers of `outline_parallel.launcher_signatures` as LLVM IR text, for a
    kernel translated straight to LLVM IR (teir_lowering.llvm.translate), which
    links them in. The runtime makes them once per process for each set of
    signatures and keeps them on disk (`teir_lowering.runtime.kernel._launchers_ir`):
    building and translating them was a tenth of a small parallel kernel's compile."""
    from xdsl.backend.llvm.convert import convert_module

    return str(convert_module(_launchers(signatures), fallback_target_triple=""))


@dataclass(frozen=True)
class GompLaunchPass(ModulePass):
    """Defines the `__teir_launch_*` functions with libgomp (llvm dialect)."""

    name = "teir-gomp-launch"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        launchers = [
            o for o in op.ops
            if isinstance(o, llvm.FuncOp)
            and o.sym_name.data.startswith(LAUNCH_PREFIX)
            and not o.body.blocks
        ]
        if not launchers:
            return
        ptr = llvm.LLVMPointerType()
        _declare(op, "GOMP_parallel_loop_dynamic",
                 [ptr, ptr, i32, i64, i64, i64, i64, i32], None)
        _declare(op, "GOMP_loop_dynamic_next", [ptr, ptr], i8)
        _declare(op, "GOMP_loop_end_nowait", [], None)
        _declare(op, "omp_get_max_threads", [], i32)
        _declare(op, "sched_getcpu", [], i32)
        _declare(op, "gettid", [], i32)
        if not any(isinstance(o, llvm.GlobalOp) and o.sym_name.data == TEAM for o in op.ops):
            op.body.block.add_op(llvm.GlobalOp(
                llvm.LLVMArrayType(TEAM_SLOTS, i64), TEAM, "external"))
        _define_placement(op)
        _define_pinning(op)
        for launcher in launchers:
            materialize_launch(op, launcher)
