"""``numpy.lib.format.open_memmap`` on npy's Rust core."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np

from . import _npy
from ._npyio import _path, _warn_dtype, _warn_version

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

_StrPath: TypeAlias = str | os.PathLike[str]

__all__ = ["open_memmap"]

_MAX_HEADER_SIZE: int = _npy.MAX_HEADER_SIZE
_VERSIONS = ((1, 0), (2, 0), (3, 0), None)


def open_memmap(
    filename: _StrPath,
    mode: Literal["r", "r+", "w+", "c", "readonly", "readwrite", "write", "copyonwrite"] = "r+",
    dtype: DTypeLike | None = None,
    shape: int | tuple[int, ...] | None = None,
    fortran_order: bool = False,
    version: tuple[int, int] | None = None,
    *,
    max_header_size: int = _MAX_HEADER_SIZE,
) -> np.memmap[Any, np.dtype[Any]]:
    """Open a ``.npy`` file as a memory-mapped array: ``numpy.lib.format.open_memmap``.

    mode: ``'r'``, ``'r+'`` (the default) or ``'c'`` map an existing file, whose header is
        read (``dtype``, ``shape``, ``fortran_order`` and ``version`` are then ignored);
        ``'w+'`` creates the file: the header ``numpy.save`` writes for an array of
        ``dtype`` (default float64) and ``shape`` (required), in ``version`` (default: the
        oldest that fits), then zeros, mapped ``'r+'``. The new file appears complete or
        not at all: it is written beside its place and renamed over any old one (processes
        that mapped the old file keep it, where NumPy would cut it short under them).
    max_header_size: a longer header raises ``ValueError`` (NumPy's default, 10000).

    Gives the ``np.memmap`` NumPy gives (dtype, shape, order, offset, mode). Several
    processes may map one file ``'r+'`` and fill it; coordinating who writes where is
    theirs. Raises ``ValueError`` for a file object (a map needs a path), for dtypes holding
    Python objects, and for a file that is not a valid ``.npy`` file (naming it).
    """
    if hasattr(filename, "read") or hasattr(filename, "write"):
        # NumPy's text; NumPy itself says it only for files of the operating system's
        # (others fail in os.fspath with a TypeError).
        raise ValueError("Filename must be a string or a path-like object.  Memmap cannot use existing file handles.")
    path = _path(filename)
    if "w" not in mode:
        return _npy.map_npy(path, mode, max_header_size)
    if mode != "w+":
        # NumPy creates the file, then np.memmap refuses the mode.
        raise ValueError(f"mode must be one of ['r', 'c', 'r+', 'w+'] (got {mode!r})")
    if version not in _VERSIONS:
        raise ValueError(f"we only support format version (1,0), (2,0), and (3,0), not {version}")
    descr = np.dtype(dtype)
    if descr.hasobject:
        raise ValueError("Array can't be memory-mapped: Python objects in dtype.")
    if shape is None:
        raise TypeError("open_memmap needs a shape to create a file (mode 'w+')")
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    _warn_dtype(descr)
    offset, written = _npy.create_npy(path, descr, dims, fortran_order, version)
    if version is None:
        # NumPy warns when it chose the version, not when it was asked for one.
        _warn_version(written)
    order: Literal["C", "F"] = "F" if fortran_order else "C"
    return np.memmap(path, dtype=descr, shape=dims, order=order, mode="r+", offset=offset)
