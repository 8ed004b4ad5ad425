"""Where a NumPy array lies in a file or an object, and ranged reads of it.

``open_source`` gives a local file (``os.pread``) or an object at a URL (``s3://``,
``gs://``, ``az://``, ``http(s)://``, ``file://``: npy-store's object stores, through
``npy._npy.open_url``) as a :class:`Source`; :func:`layout` finds the array of a ``.npy``
file or of an ``.npz`` member in it, its header read by npy-core's codec
(``npy._npy.parse_header``, as ``npy.load`` reads it) from a few ranged reads: the header's
first bytes, and for an archive its end, central directory and the member's local header.
``npy.open``, ``npy.dask`` and ``npy.virtualizarr`` read files through these.
"""

from __future__ import annotations

import io
import math
import os
import re
import struct
import zipfile
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from . import _npy

MAX_HEADER_SIZE: int = _npy.MAX_HEADER_SIZE
# The first read of a header: the magic, the version, the header's length and (almost
# always) the header itself; a longer header takes one more read.
FIRST_READ = 4096
_ZIP_LOCAL = struct.Struct("<4s5H3I2H")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_COMPRESSION = {zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}


def is_url(file: object) -> bool:
    """Whether ``file`` is a URL (``scheme://...``), not a path."""
    return isinstance(file, str) and _URL.match(file) is not None


class Source(Protocol):
    """Ranged reads of one file or object: its ``name``, ``size`` and ``read(start, end)``
    (end exclusive; fewer bytes only at its end)."""

    name: str
    size: int

    def read(self, start: int, end: int) -> bytes: ...


class FileSource:
    """A local file, read with ``os.pread``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.name = os.fspath(path)
        try:
            self._fd = os.open(self.name, os.O_RDONLY)
        except FileNotFoundError:
            raise FileNotFoundError(2, "No such file or directory", self.name) from None
        self.size = os.fstat(self._fd).st_size

    def read(self, start: int, end: int) -> bytes:
        return os.pread(self._fd, max(end - start, 0), start)

    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        return [self.read(a, b) for a, b in ranges]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()


class UrlSource:
    """An object at a URL, as its ``HEAD`` found it (later reads fail if it changes, where
    the store gives an ETag); ranges fetched side by side, near ones by one GET."""

    def __init__(self, url: str) -> None:
        self._object = _npy.open_url(url)
        self.name = url
        self.size = self._object.size

    @property
    def fetched(self) -> int:
        """Bytes fetched so far."""
        return self._object.fetched

    def read(self, start: int, end: int) -> bytes:
        return self._object.read(start, max(end - start, 0))

    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        return self._object.read_ranges(ranges)

    def close(self) -> None:
        pass


def open_source(file: str | os.PathLike[str]) -> FileSource | UrlSource:
    """``file`` (a path or a URL) for ranged reads."""
    if is_url(file):
        assert isinstance(file, str)
        return UrlSource(file)
    return FileSource(file)


class RangeFile(io.RawIOBase):
    """A seekable read-only file over a :class:`Source`, for :mod:`zipfile` (wrap it in an
    ``io.BufferedReader`` for few reads); also the ``fid`` (and ``zip``) NumPy's
    ``NpzFile`` has, for an archive at a URL, made only when asked for."""

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
class Layout:
    """Where an array's data lies in a file or object: ``file`` (the path or URL read),
    ``name`` (it and the member, for messages), its header's dtype, shape and order
    (``fortran``: Fortran order with two dims or more), the data's offset; ``member``: the
    ``.npz`` member it is; ``deflated``: a compressed member (its data cannot be read by
    range: ``offset`` is 0)."""

    file: str
    name: str
    offset: int
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    fortran: bool
    member: str | None = None
    deflated: bool = False

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


def parse_header(source: Source, start: int, end: int, name: str, max_header_size: int) -> Layout:
    """The ``.npy`` header at ``start`` of ``source``, whose bytes for this array end at
    ``end``: one ranged read (two for a header longer than ``FIRST_READ``)."""
    head = source.read(start, min(start + FIRST_READ, end))
    if head[:4] == b"PK\x03\x04":
        raise ValueError(f"{name}: an .npz archive, not a .npy file: name one of its members")
    try:
        got = _npy.parse_header(head, end - start, max_header_size)
        if isinstance(got, int):
            head += source.read(start + len(head), min(start + got, end))
            got = _npy.parse_header(head, end - start, max_header_size)
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None
    if isinstance(got, int):
        raise ValueError(f"{name}: not a valid .npy file: it ends inside its header")
    dtype, fortran, shape, offset, _ = got
    if dtype.hasobject:
        raise ValueError(f"{name}: arrays of Python objects (dtype {dtype}) are refused: their data are pickles")
    return Layout(source.name, name, start + offset, dtype, tuple(shape), fortran and len(shape) > 1)


def layout(
    source: Source, member: str | None = None, max_header_size: int = MAX_HEADER_SIZE, deflated: bool = False
) -> Layout:
    """The array of the ``.npy`` file ``source`` is, or of its ``.npz`` member ``member``
    (a deflated member only with ``deflated``: its header inflated, its data not read).
    A file or member shorter than its header says is refused, naming it."""
    if member is None:
        found = parse_header(source, 0, source.size, source.name, max_header_size)
        held = source.size - found.offset
    else:
        found, held = _member(source, member, max_header_size, deflated)
    if not found.deflated and held < found.nbytes:
        raise ValueError(
            f"{found.name}: truncated: its header says {found.nbytes} bytes of data, it holds {max(held, 0)}"
        )
    return found


def _member(source: Source, member: str, max_header_size: int, deflated: bool) -> tuple[Layout, int]:
    name = f"{source.name} (member {member!r})"
    try:
        with zipfile.ZipFile(io.BufferedReader(RangeFile(source), 1 << 16)) as archive:
            names = archive.namelist()
            inner = member if member in names else f"{member}.npy"
            if inner not in names:
                raise KeyError(f"{source.name}: no member {member!r} in the archive (it has {names})")
            info = archive.getinfo(inner)
            if info.flag_bits & 0x1:
                raise ValueError(f"{name}: encrypted members are refused")
            if info.compress_type != zipfile.ZIP_STORED:
                if not deflated:
                    how = _COMPRESSION.get(info.compress_type, str(info.compress_type))
                    raise ValueError(f"{name}: the member is compressed ({how}): its data cannot be read by range")
                with archive.open(info) as f:
                    head = f.read(FIRST_READ)
                    inflated = _Bytes(name, head + f.read(max(0, _needed(head) - len(head))))
                found = parse_header(inflated, 0, info.file_size, name, max_header_size)
                return Layout(source.name, name, 0, found.dtype, found.shape, found.fortran, member, True), 0
    except zipfile.BadZipFile as e:
        raise ValueError(f"{source.name}: not an .npz archive ({e})") from None
    local = source.read(info.header_offset, info.header_offset + _ZIP_LOCAL.size)
    if len(local) != _ZIP_LOCAL.size or local[:4] != b"PK\x03\x04":
        raise ValueError(f"{name}: no zip local header at offset {info.header_offset}")
    fields = _ZIP_LOCAL.unpack(local)
    start = info.header_offset + _ZIP_LOCAL.size + fields[-2] + fields[-1]
    end = min(start + info.file_size, source.size)
    found = parse_header(source, start, end, name, max_header_size)
    return Layout(source.name, name, found.offset, found.dtype, found.shape, found.fortran, member), end - found.offset


def _needed(head: bytes) -> int:
    """The bytes a header needs, from its first ones (0 when they are enough or unknown)."""
    try:
        got = _npy.parse_header(head, 1 << 62)
    except ValueError:
        return 0
    return got if isinstance(got, int) else 0


class _Bytes:
    """Bytes in memory as a :class:`Source`."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.size, self._data = name, len(data), data

    def read(self, start: int, end: int) -> bytes:
        return self._data[start:end]
