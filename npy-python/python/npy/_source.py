"""Where a NumPy array lies in a file or an object, and ranged reads of it.

:func:`layout` finds the array of a ``.npy`` file or of an ``.npz`` member, local or at a
URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``file://``), through the engine's
``npy._npy.locate``: npy-store reads the header (and an archive's checked directory and
the member's header, a compressed one's decompressed from its first bytes) by a few ranged
reads, as ``npy.load`` reads them. ``open_source`` gives a local file or an object at a URL
as npy-store's one source of bytes (``npy._npy.Source``: positioned reads of a file checked
to be the one opened, ranged GETs pinned to an object's ETag, near ranges read as one).
``npy.open``, ``npy.dask`` and ``npy.virtualizarr`` read files through these; no module
here reads bytes itself.
"""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np

from . import _npy

MAX_HEADER_SIZE: int = _npy.MAX_HEADER_SIZE


def is_url(file: object) -> bool:
    """Whether ``file`` is a URL (``scheme://...``), not a path: the engine's one test
    (``npy_store::is_url``)."""
    return isinstance(file, str) and _npy.is_url(file)


def kind_of_name(name: str) -> Literal["npy", "npz"] | None:
    """``"npy"`` or ``"npz"`` as ``name``'s suffix says (in any case), else None: the
    engine's one suffix test (``npy_core::header::FileKind::of_name``). A URL's path is
    passed, not the URL (whose query may follow the suffix)."""
    return _npy.kind_of_name(name)


class Source(Protocol):
    """Ranged reads of one file or object (``npy._npy.Source``, or virtualizarr's store):
    its ``name``, ``size`` and ``read(start, end)`` (end exclusive; fewer bytes only at its
    end)."""

    @property
    def name(self) -> str: ...
    @property
    def size(self) -> int: ...
    def read(self, start: int, end: int) -> bytes: ...


def open_source(file: str | os.PathLike[str]) -> _npy.Source:
    """``file`` (a path or a URL) for ranged reads: a missing one raises
    ``FileNotFoundError``, naming it."""
    return _npy.open_source(os.fsdecode(file))


def expand(source: str | os.PathLike[str]) -> list[str]:
    """The files ``source`` names, by the engine's one rule (``npy_store::find_files``, as
    ``npy.open`` and ``npy.scan`` find them): a path or URL itself, every ``.npy`` or
    ``.npz`` file under a directory or under a URL prefix ending in ``/`` (its folders
    too), or the files a glob pattern matches, sorted by path."""
    return _npy.find(os.fsdecode(source))


def is_prefix(source: str) -> bool:
    """Whether ``source`` is a URL prefix (``s3://bucket/runs/``): the objects under it."""
    return is_url(source) and source.endswith("/")


class RangeFile(io.RawIOBase):
    """A seekable read-only file over a :class:`Source` (wrap it in an ``io.BufferedReader``
    for few reads): the ``fid`` (and ``zip``) NumPy's ``NpzFile`` has, for an archive at a
    URL, made only when asked for (npy reads the archive through npy-store)."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._pos = 0
        self.name = source.name

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._source.size}[whence]
        self._pos = max(base + offset, 0)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._source.read(self._pos, min(self._pos + len(view), self._source.size))
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)


@dataclass(frozen=True)
class Located:
    """Where an array's data lies in a file or object: ``file`` (the path or URL read),
    ``name`` (it and the member, for messages), its header's dtype, shape and order
    (``fortran``: Fortran order with two dims or more), the data's offset; ``member``: the
    ``.npz`` member it is; ``compressed``: a compressed member, by deflate or Zstandard (its
    data cannot be read by range: ``offset`` is 0); ``compression``: ``"stored"``,
    ``"deflate"`` or ``"zstd"``."""

    file: str
    name: str
    offset: int
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    fortran: bool
    member: str | None = None
    compressed: bool = False
    compression: str = "stored"

    @property
    def nbytes(self) -> int:
        return self.dtype.itemsize * math.prod(self.shape)

    @property
    def axis(self) -> int:
        """The axis whose slabs are contiguous: the first (C order), the last (Fortran)."""
        return len(self.shape) - 1 if self.fortran else 0

    @property
    def slab_bytes(self) -> int:
        """Bytes of one index along ``axis``."""
        rest = self.shape[:-1] if self.fortran else self.shape[1:]
        return self.dtype.itemsize * math.prod(rest)


def locate(
    file: str | os.PathLike[str],
    member: str | None = None,
    max_header_size: int = MAX_HEADER_SIZE,
    reader: Source | None = None,
) -> Located:
    """The array of the ``.npy`` file ``file`` (a path or URL), or of its ``.npz`` member
    ``member`` (``"x"`` or ``"x.npy"``), read by ``npy._npy.locate`` (``reader``: the
    :class:`Source` to read instead of opening ``file``, which then only names it). A
    file or stored member shorter than its header says is refused, naming it, and so are
    arrays of Python objects (their data are pickles)."""
    name = os.fspath(file)
    dtype, fortran, shape, offset, compressed, compression = _npy.locate(name, member, max_header_size, reader)
    label = name if member is None else f"{name} (member {member!r})"
    if dtype.hasobject:
        raise ValueError(f"{label}: arrays of Python objects (dtype {dtype}) are refused: their data are pickles")
    fortran = fortran and len(shape) > 1
    return Located(name, label, offset, dtype, tuple(shape), fortran, member, compressed, compression)
