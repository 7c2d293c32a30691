"""Arrays that lie: ndarray subclasses overriding what the checks read (`nbytes`,
`shape`, `strides`, `flags`, `ctypes`, `__array_interface__`, `dtype`), an
object whose `__class__` claims ndarray, and numpy's own subclasses (np.matrix,
np.memmap, masked arrays) against the compiled kernel (both entry paths), the
reference interpreter and einsum.

Every array is a view at the start of a larger buffer filled with a sentinel:
a call either computes what the plain arrays give or raises, and never changes
a byte after the view (teir_dialect.arrays.plain_array)."""

from __future__ import annotations

import copy
import types
from pathlib import Path

import numpy as np
import pytest

from conftest import SPEC_EXAMPLES
from teir_dialect.arrays import ArrayTypeError
from teir_dialect.interpreter import run_reference
from teir_lowering import einsum
from teir_lowering.runtime.kernel import compile_kernel

SMALL = SPEC_EXAMPLES / "tree" / "10_2_1_minimal.json"
"""in0 -> out on 24 bytes (6 float32) each."""
ELEMENTS = 6
SENTINEL = 7.0


def _lie(name: str, **attributes: object) -> type:
    return type(name, (np.ndarray,), attributes)


_DECOY = np.zeros(64, np.float32)
_FLAGS = types.SimpleNamespace(c_contiguous=True, writeable=True, f_contiguous=True)

LIARS = [
    _lie("BigNbytes", nbytes=property(lambda self: 1 << 30)),
    _lie("BigShape", shape=property(lambda self: (1 << 20,)),
         size=property(lambda self: 1 << 20)),
    _lie("BigStrides", strides=property(lambda self: (1 << 20,))),
    _lie("Flags", flags=property(lambda self: _FLAGS)),
    _lie("Ctypes", ctypes=property(lambda self: types.SimpleNamespace(data=_DECOY.ctypes.data))),
    _lie("Interface", __array_interface__=property(lambda self: {
        **_DECOY.__array_interface__, "shape": (1 << 20,)})),
    _lie("Everything", nbytes=property(lambda self: 1 << 30),
         dtype=property(lambda self: np.dtype(np.float32)),
         flags=property(lambda self: _FLAGS), shape=property(lambda self: (1 << 20,)),
         ctypes=property(lambda self: types.SimpleNamespace(data=_DECOY.ctypes.data))),
]


@pytest.fixture(scope="module")
def kernels() -> dict[str, object]:
    """The kernel through its native entry, and a copy through the ctypes path."""
    kernel = compile_kernel(SMALL, threads=1)
    assert kernel._entry is not None
    slow = copy.copy(kernel)
    slow._entry = None
    return {"entry": kernel, "ctypes": slow}


def _source(seed: int) -> np.ndarray:
    """Random values throughout: a kernel reading past the view copies no sentinel."""
    return np.random.default_rng(seed).standard_normal(ELEMENTS + 16).astype(np.float32)


def _target() -> np.ndarray:
    return np.full(ELEMENTS + 16, SENTINEL, np.float32)


def _expected(in0: np.ndarray) -> np.ndarray:
    arrays = [in0.copy(), np.zeros(ELEMENTS, np.float32)]
    run_reference(SMALL, arrays)
    return arrays[1]


@pytest.mark.parametrize("path", ["entry", "ctypes"])
@pytest.mark.parametrize("liar", LIARS, ids=lambda kind: kind.__name__)
def test_a_lying_subclass_is_checked_by_its_buffer(kernels, path: str, liar: type) -> None:
    kernel = kernels[path]
    decoy = _DECOY.copy()
    # Exact sizes: computed as on plain arrays, in the arrays' own memory.
    source, target = _source(1), _target()
    before = source.copy()
    kernel(source[:ELEMENTS].view(liar), target[:ELEMENTS].view(liar))
    np.testing.assert_array_equal(target[:ELEMENTS], _expected(source[:ELEMENTS]))
    assert (target[ELEMENTS:] == SENTINEL).all()
    np.testing.assert_array_equal(source, before)
    # Two elements where six are touched: refused by the true size, nothing written.
    for short in (0, 1):
        arrays = [_source(3), _target()]
        before = [a.copy() for a in arrays]
        views = [a[:ELEMENTS] for a in arrays]
        views[short] = arrays[short][:2]
        with pytest.raises(ValueError, match=r"has 8 bytes .* needs at least 24 bytes"):
            kernel(*(v.view(liar) for v in views))
        for array, old in zip(arrays, before):
            np.testing.assert_array_equal(array, old)
    np.testing.assert_array_equal(_DECOY, decoy)


@pytest.mark.parametrize("path", ["entry", "ctypes"])
def test_flags_that_lie_do_not_open_read_only_or_strided_memory(kernels, path: str) -> None:
    kernel, liar = kernels[path], LIARS[3]
    frozen = bytes(np.full(ELEMENTS, SENTINEL, np.float32).tobytes())
    out = np.frombuffer(frozen, np.float32).view(liar)  # immutable memory
    with pytest.raises(ValueError, match="tensor out must be a writeable array"):
        kernel(_source(5)[:ELEMENTS], out)
    assert frozen == np.full(ELEMENTS, SENTINEL, np.float32).tobytes()
    strided = _target()
    with pytest.raises(ValueError, match="tensor out must be a C-contiguous array"):
        kernel(_source(7)[:ELEMENTS], strided[: 2 * ELEMENTS : 2].view(liar))
    assert (strided == SENTINEL).all()


@pytest.mark.parametrize("path", ["entry", "ctypes"])
def test_a_dtype_that_lies_is_refused(kernels, path: str) -> None:
    liar = _lie("Dtype", dtype=property(lambda self: np.dtype(np.float32)))
    halves = np.zeros(2 * ELEMENTS, np.float16)  # 24 bytes, as the kernel needs
    with pytest.raises(ArrayTypeError, match="tensor out must hold float32 elements, got float16"):
        kernels[path](_source(17)[:ELEMENTS], halves.view(liar))
    assert not halves.any()


class Impostor:
    """Claims to be an ndarray (isinstance believes `__class__`) with plausible fields."""

    __class__ = property(lambda self: np.ndarray)  # type: ignore[assignment]
    dtype = np.dtype(np.float32)
    flags = _FLAGS
    nbytes = 1 << 30


def test_an_object_claiming_to_be_an_ndarray_is_refused(kernels) -> None:
    assert isinstance(Impostor(), np.ndarray)
    arrays = [_source(8)[:ELEMENTS], Impostor()]
    for kernel in kernels.values():
        with pytest.raises(ArrayTypeError, match="tensor out must be a numpy array, got Impostor"):
            kernel.check_arrays(arrays)
    with pytest.raises(ArrayTypeError, match="tensor out must be a numpy array, got Impostor"):
        run_reference(SMALL, arrays)


@pytest.mark.parametrize("liar", [LIARS[0], LIARS[1], LIARS[-1]], ids=lambda k: k.__name__)
def test_the_interpreter_checks_the_buffer_too(liar: type) -> None:
    source, target = _source(9), _target()
    run_reference(SMALL, [source[:ELEMENTS].view(liar), target[:ELEMENTS].view(liar)])
    np.testing.assert_array_equal(target[:ELEMENTS], _expected(source[:ELEMENTS]))
    with pytest.raises(ValueError, match=r"tensor out has 8 bytes"):
        run_reference(SMALL, [source[:ELEMENTS].view(liar), target[:2].view(liar)])
    assert (target[ELEMENTS:] == SENTINEL).all()


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_matrix_and_memmap_are_their_buffers(kernels, tmp_path: Path) -> None:
    """np.matrix and np.memmap are plain memory to a kernel: accepted, computed in
    place, and refused by their true size when short."""
    file = tmp_path / "out.bin"
    np.full(ELEMENTS + 16, SENTINEL, np.float32).tofile(file)
    for kernel in kernels.values():
        source, target = _source(11), _target()
        matrix = np.asmatrix(target[:ELEMENTS].reshape(2, 3))
        kernel(np.asmatrix(source[:ELEMENTS].reshape(3, 2)), matrix)
        np.testing.assert_array_equal(target[:ELEMENTS], _expected(source[:ELEMENTS]))
        assert (target[ELEMENTS:] == SENTINEL).all()
        with pytest.raises(ValueError, match=r"tensor out has 8 bytes"):
            kernel(source[:ELEMENTS], np.asmatrix(target[:2]))
        mapped = np.memmap(file, np.float32, "r+")
        kernel(source[:ELEMENTS], mapped[:ELEMENTS])
        with pytest.raises(ValueError, match=r"tensor out has 8 bytes"):
            kernel(source[:ELEMENTS], mapped[:2])
        mapped.flush()
        del mapped
        written = np.fromfile(file, np.float32)
        np.testing.assert_array_equal(written[:ELEMENTS], _expected(source[:ELEMENTS]))
        assert (written[ELEMENTS:] == SENTINEL).all()
        with pytest.raises(ValueError, match="tensor out must be a writeable array"):
            kernel(source[:ELEMENTS], np.memmap(file, np.float32, "r"))


def test_masked_arrays_are_refused_by_name(kernels) -> None:
    """A kernel would read the data under the mask and leave out's mask as it was."""
    source, target = _source(13), _target()
    masked = np.ma.masked_array(source[:ELEMENTS], mask=[0, 1, 0, 0, 0, 0])
    message = "tensor in0 is a masked array, whose mask TEIR would ignore"
    for kernel in kernels.values():
        with pytest.raises(ArrayTypeError, match=message):
            kernel(masked, target[:ELEMENTS])
    with pytest.raises(ArrayTypeError, match=message):
        run_reference(SMALL, [masked, target[:ELEMENTS]])
    with pytest.raises(TypeError, match="einsum: operand 0 is a masked array"):
        einsum("ij->ji", masked.reshape(2, 3))
    assert (target == SENTINEL).all()


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_einsum_reads_shapes_and_strides_from_the_buffer() -> None:
    """Operands and out claiming twice their rows: einsum copies the rows they have."""
    liar = _lie("TwiceTheRows",
                shape=property(lambda self: (2 * np.ndarray.shape.__get__(self)[0], 3)),
                nbytes=property(lambda self: 2 * np.ndarray.nbytes.__get__(self)))
    source, target = _source(15), _target()
    returned = einsum("ij->ij", source[:ELEMENTS].reshape(2, 3).view(liar),
                      out=target[:ELEMENTS].reshape(2, 3).view(liar))
    assert type(returned) is liar
    np.testing.assert_array_equal(target[:ELEMENTS], source[:ELEMENTS])
    assert (target[ELEMENTS:] == SENTINEL).all()
    transposed = einsum("ij->ji", np.asmatrix(source[:ELEMENTS].reshape(2, 3)))
    np.testing.assert_array_equal(transposed, source[:ELEMENTS].reshape(2, 3).T)
