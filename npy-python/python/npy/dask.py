"""NumPy files as lazy Dask arrays and DataFrames, and Dask arrays written to one ``.npy``
file.

``from_npy`` reads each chunk of a ``.npy`` file (or of several, or of an ``.npz``
member) by its byte range, with plain reads: never the whole file, and never through a
memory map (a file cut short under a map kills the process reading it with ``SIGBUS``).
``read_npy`` gives the table ``npy.scan`` makes of files as a Dask DataFrame, each
partition a range of rows that npy's table engine reads. ``to_npy`` writes the chunks of
a Dask array into their places in one ``.npy`` file, each by the worker that computed
it, and gives the file its name once all are in.

Importing this module imports Dask (``import npy`` does not). Nothing here runs a pickle
of a file's contents: arrays of Python objects are refused.
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import dask.array
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from . import _npy
from ._npyio import _warn_dtype, _warn_version, load_npz
from ._source import Located as _Located
from ._source import expand, is_url, locate, open_source

__all__ = ["from_npy", "read_npy", "to_npy"]

_StrPath: TypeAlias = str | os.PathLike[str]
_Array: TypeAlias = np.ndarray[Any, np.dtype[Any]]

# Dask is typed in part only: its functions are called untyped here.
da: Any = dask.array

_MAX_HEADER_SIZE: int = _npy.MAX_HEADER_SIZE
# The infix of the pending directory (npy-core's) a file to_npy writes lies in:
# `.{target}.npy-dask.XXXXXX` beside its target.
_INFIX = ".npy-dask."


def _stamp(file: str) -> str:
    """What says a file is the one read: npy-store's rule (``Source.stamp``: a file's size,
    modification time, device and inode; an object's size and ETag)."""
    return open_source(file).stamp


def _axis_chunks(chunks: Any, layout: _Located, shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Dask's chunks of an array of ``shape`` split along ``layout.axis`` only."""
    ndim, axis = len(shape), layout.axis
    if ndim == 0:
        return ()
    spec: Any
    if chunks is None or isinstance(chunks, (int, str)):
        spec = tuple(chunks if i == axis else -1 for i in range(ndim))
    elif isinstance(chunks, dict):
        spec = {i: -1 for i in range(ndim)}
        spec.update({k % ndim: v for k, v in chunks.items()})
    elif isinstance(chunks, Sequence) and len(chunks) != ndim and all(isinstance(c, int) for c in chunks):
        # Explicit sizes for the split axis.
        spec = tuple(tuple(chunks) if i == axis else -1 for i in range(ndim))
    else:
        spec = chunks
    if layout.slab_bytes == 0 and "auto" in (spec.values() if isinstance(spec, dict) else spec):
        spec = tuple(-1 for _ in range(ndim))
    normal: tuple[tuple[int, ...], ...] = da.core.normalize_chunks(spec, shape, dtype=layout.dtype)
    for i, c in enumerate(normal):
        if i != axis and len(c) > 1:
            which = "last (the file is in Fortran order)" if layout.fortran else "first"
            raise ValueError(
                f"{layout.name}: chunks {chunks!r} split axis {i}; from_npy splits only the {which} axis "
                "(rechunk the array it gives)"
            )
    return normal


def from_npy(
    source: _StrPath, chunks: Any = "auto", *, member: str | None = None, max_header_size: int = _MAX_HEADER_SIZE
) -> Any:
    """A lazy ``dask.array.Array`` of a ``.npy`` file, of several, or of an ``.npz`` member.

    source: a ``.npy`` path; a directory, whose ``.npy`` files (its folders' too, sorted
        by path, as ``npy.open`` and ``npy.scan`` find them) are concatenated along axis
        0; a glob pattern (``"runs/*.npy"``, sorted likewise); or,
        with ``member``, an ``.npz`` archive. Concatenated files must share dtype, order
        and shape but for axis 0 (the error names two that differ).
    chunks: as Dask takes them (an int, ``"auto"``, a tuple of sizes, a tuple or dict per
        axis), for the axis whose slabs are contiguous in the file: the first, or the last
        for a file in Fortran order. Chunks that split any other axis are refused
        (``ValueError``); rechunk the array instead. Chunks of several files may span two.
    member: the ``.npz`` member (``"x"`` or ``"x.npy"``). A stored member is read by byte
        range inside the archive, as a ``.npy`` file is; the zip's CRC-32 of the member is
        then never checked (no chunk reads it all). A compressed member is one chunk, read
        whole (and checked) by ``npy.load_npz(path)[member]``.
    max_header_size: a longer header raises ``ValueError`` (NumPy's default, 10000).

    Each task holds a path, an offset, the dtype and a range: the graph is small and
    picklable, and runs on a ``distributed`` cluster of processes. Names are
    deterministic: the same files (path, modification time, size) and chunks give the
    same keys. The dtype is the file's (structured and big-endian ones as ``np.load``
    gives them); a 0-d array is one chunk.

    Raises ``ValueError`` naming the file for a file that is not a valid ``.npy`` file, is
    shorter than its header says (when read too: a short read names the file), or holds
    Python objects (dtype ``O``: refused, never unpickled); ``OSError`` when a file cannot
    be read.
    """
    if member is not None:
        path = os.fsdecode(source)
        layouts = [locate(path, member, max_header_size)]
    else:
        layouts = [locate(p, None, max_header_size) for p in expand(source)]
    first = layouts[0]
    for other in layouts[1:]:
        same = (other.dtype, other.fortran, other.shape[1:]) == (first.dtype, first.fortran, first.shape[1:])
        if not same or not first.shape:
            raise ValueError(
                f"{other.file} and {first.file} differ: dtype {other.dtype} and {first.dtype}, shape "
                f"{other.shape} and {first.shape}, fortran_order {other.fortran} and {first.fortran} "
                "(files concatenated along axis 0 must share dtype, order and the other axes)"
            )
    shape = first.shape
    if len(layouts) > 1:
        shape = (sum(layout.shape[0] for layout in layouts), *first.shape[1:])
    stamps = [_stamp(layout.file) for layout in layouts]
    normal: tuple[tuple[int, ...], ...]
    if first.compressed:
        normal = tuple((n,) for n in shape)
        tasks: list[tuple[Any, ...]] = [(_read_compressed, first)]
    else:
        normal = _axis_chunks(chunks, first, shape)
        tasks = [(_read_block, parts) for parts in _blocks(layouts, normal, first.axis)]
    name = "from-npy-" + tokenize(
        [(layout.file, layout.member) for layout in layouts], stamps, normal, str(first.dtype)
    )
    ndim = len(shape)
    axis = first.axis if ndim else 0
    dsk: dict[Any, Any] = {}
    for i, task in enumerate(tasks):
        dsk[(name, *(i if a == axis else 0 for a in range(ndim)))] = task
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=())
    meta = np.empty((0,) * ndim, dtype=first.dtype)
    return da.Array(graph, name, normal, dtype=first.dtype, meta=meta)


# The bytes of a partition read_npy makes when not told its rows, as a row's fixed-width
# columns count them.
_PARTITION_BYTES = 64 << 20


def read_npy(
    source: _StrPath,
    *,
    columns: Sequence[str] | None = None,
    partition_rows: int | None = None,
    members: Sequence[str] | None = None,
    days_as_int64: bool = False,
) -> Any:
    """The table :func:`npy.scan` makes of ``source`` as a lazy Dask DataFrame.

    ``source``, ``columns`` (fields, parts such as ``"samples[10]"`` or ``"receiver.x"``),
    ``members`` and ``days_as_int64`` are ``npy.scan``'s: one ``.npy`` of records (a column
    per field), an ``.npz``, a directory or glob of files read in path order, at a path or
    URL. Each partition is ``partition_rows`` rows (default: about 64 MiB of the columns
    asked), read by npy's table engine from those columns' bytes only, across file
    boundaries; the index numbers the table's rows, so the divisions are known::

        df = npy.dask.read_npy("shots/", columns=["flags", "t0", "samples[10]"])
        df.groupby("flags").t0.mean().compute()

    Numbers and strings are the columns pandas makes of Arrow's; a nested record is a
    struct column and a subarray a list column of ``pd.ArrowDtype`` (``.struct.field``,
    ``.list[k]``; or ask for their parts, ``"receiver.x"``, to get numbers). A
    local file changed between this call and a partition's read raises ``ValueError``
    naming it (a file's size and modification time are its identity here).
    """
    from ._scan import scan

    dd, _, pa = _frame_modules()
    opened = scan(source, columns=columns, members=members, days_as_int64=days_as_int64)
    schema = pa.schema(opened)
    total = opened.num_rows
    if partition_rows is None:
        partition_rows = max(1, _PARTITION_BYTES // max(1, sum(_width(f.type) for f in schema)))
    elif isinstance(partition_rows, bool) or not isinstance(partition_rows, int) or partition_rows < 1:
        raise ValueError(f"partition_rows must be a positive int, not {partition_rows!r}")
    starts = list(range(0, total, partition_rows)) or [0]
    ranges = [(a, min(a + partition_rows, total)) for a in starts]
    files = list(opened.files)
    stamps = ["" if is_url(f) else _stamp(f) for f in files]
    read = _TableRows(os.fspath(source), columns, members, days_as_int64, files, stamps)
    meta = _frame(schema.empty_table())
    divisions = (*starts, max(total - 1, 0))
    return dd.from_map(read, ranges, meta=meta, divisions=divisions, label="read-npy", enforce_metadata=False)


def _frame_modules() -> tuple[Any, Any, Any]:
    """``dask.dataframe``, pandas and pyarrow, imported by read_npy's first call (``import
    npy.dask`` needs ``dask[array]`` only; none of the three is typed)."""
    return (
        importlib.import_module("dask.dataframe"),
        importlib.import_module("pandas"),
        importlib.import_module("pyarrow"),
    )


def _frame(table: Any) -> Any:
    """pandas' frame of an Arrow table: numbers and strings as ``to_pandas`` makes them,
    structs and lists as ``pd.ArrowDtype`` columns (as object columns of dicts and arrays,
    Dask would turn them into strings)."""
    _, pd, pa = _frame_modules()
    return table.to_pandas(types_mapper=lambda kind: pd.ArrowDtype(kind) if pa.types.is_nested(kind) else None)


def _width(kind: Any) -> int:
    """Bytes of a value of Arrow type ``kind`` (16 for one of no fixed width)."""
    _, _, pa = _frame_modules()
    if pa.types.is_fixed_size_list(kind):
        return int(kind.list_size) * _width(kind.value_type)
    if pa.types.is_struct(kind):
        return sum(_width(kind.field(i).type) for i in range(kind.num_fields))
    try:
        return max(1, int(kind.bit_width) // 8)
    except ValueError:
        return 16


@dataclass(frozen=True)
class _TableRows:
    """A read_npy partition's read: rows ``start..stop`` of the table, after checking
    that its local files are the ones the DataFrame was made of."""

    source: str
    columns: Sequence[str] | None
    members: Sequence[str] | None
    days_as_int64: bool
    files: list[str]
    stamps: list[str]

    def __call__(self, rows: tuple[int, int]) -> Any:
        from ._scan import scan

        _, pd, pa = _frame_modules()

        for file, stamp in zip(self.files, self.stamps, strict=True):
            if not is_url(file) and _stamp(file) != stamp:
                raise ValueError(f"{file}: the file changed since read_npy made the DataFrame")
        part = scan(
            self.source, columns=self.columns, rows=rows, members=self.members, days_as_int64=self.days_as_int64
        )
        frame = _frame(pa.table(part))
        frame.index = pd.RangeIndex(*rows)
        return frame


@dataclass(frozen=True)
class _Part:
    """Indices ``start:stop`` along the contiguous axis of one file."""

    layout: _Located
    start: int
    stop: int


def _blocks(layouts: list[_Located], normal: tuple[tuple[int, ...], ...], axis: int) -> list[tuple[_Part, ...]]:
    """The parts each chunk along ``axis`` reads: along axis 0 of several files, rows
    from each file it spans; along the last axis (Fortran order), that range of every
    file."""
    if not normal:
        return [(_Part(layouts[0], 0, 1),)]
    blocks = []
    start = 0
    for size in normal[axis]:
        stop = start + size
        if axis == 0:
            parts, base = [], 0
            for layout in layouts:
                n = layout.shape[0]
                lo, hi = max(start, base), min(stop, base + n)
                if lo < hi:
                    parts.append(_Part(layout, lo - base, hi - base))
                base += n
            blocks.append(tuple(parts) or (_Part(layouts[0], 0, 0),))
        else:
            blocks.append(tuple(_Part(layout, start, stop) for layout in layouts))
        start = stop
    return blocks


def _read_block(parts: tuple[_Part, ...]) -> _Array:
    """A chunk: each part read by its byte range, stacked along axis 0 (into an array of
    the file's dtype: ``np.concatenate`` would make it native-endian)."""
    if len(parts) == 1:
        return _read_part(parts[0])
    arrays = [_read_part(part) for part in parts]
    first = arrays[0]
    order: Literal["C", "F"] = "F" if parts[0].layout.fortran else "C"
    out = np.empty((sum(a.shape[0] for a in arrays), *first.shape[1:]), first.dtype, order=order)
    start = 0
    for a in arrays:
        out[start : start + a.shape[0]] = a
        start += a.shape[0]
    return out


def _read_part(part: _Part) -> _Array:
    layout = part.layout
    count = part.stop - part.start
    if not layout.shape:
        shape: tuple[int, ...] = ()
        count = 1
    elif layout.fortran:
        shape = (*layout.shape[:-1], count)
    else:
        shape = (count, *layout.shape[1:])
    order: Literal["C", "F"] = "F" if layout.fortran else "C"
    nbytes = count * layout.slab_bytes if layout.shape else layout.dtype.itemsize
    if nbytes == 0:
        return np.empty(shape, dtype=layout.dtype, order=order)
    offset = layout.offset + part.start * layout.slab_bytes
    # npy-store's source: a positioned read of the file, or a ranged GET of the object.
    source = open_source(layout.file)
    if offset + nbytes > source.size:
        what = "object" if is_url(layout.file) else "file"
        raise ValueError(
            f"{layout.name}: the {what} is shorter than its header says: {nbytes} bytes at offset "
            f"{offset} wanted, {max(source.size - offset, 0)} there"
        )
    buf = np.empty(nbytes, dtype=np.uint8)  # (NumPy's buffer: huge pages where it asks for them)
    source.read_into(offset, buf)
    return buf.view(layout.dtype).reshape(shape, order=order)


def _read_compressed(layout: _Located) -> _Array:
    """A compressed member (deflate or Zstandard), read whole by npy (its CRC-32 checked)."""
    assert layout.member is not None
    with load_npz(layout.file) as archive:
        array: _Array = archive[layout.member]
    if array.shape != layout.shape or array.dtype != layout.dtype:
        raise ValueError(f"{layout.name}: the member changed since from_npy read its header")
    return array


def to_npy(arr: Any, path: _StrPath) -> None:
    """Write the dask array ``arr`` to the ``.npy`` file ``path``, in parallel.

    The file is created whole in a hidden directory beside ``path``
    (``.{name}.npy-dask.XXXXXX``): ``np.save``'s header for ``arr``'s dtype and shape,
    the data area sized but not written. Each chunk is then written into its place by
    the worker that computed it (``da.store``, with the current scheduler: threads, or a
    ``distributed`` cluster whose workers see the same file system), and the file is
    renamed onto ``path`` once all are in: the bytes ``np.save(path, arr.compute())``
    writes, appearing whole or not at all. If anything fails, the hidden directory is
    removed and any old file at ``path`` stays as it was. The writing process holds a lock
    (``flock``) on the hidden directory (npy-core's pending directory); a killed run
    leaves it unlocked, and the next ``to_npy`` into the same directory removes it.
    Nothing is synced to disk (as ``np.save``).

    path: gets ``.npy`` appended unless it ends with it, as ``np.save``.
    Chunks may split any axes (a chunk that splits axes after the first is written in
    pieces, one per contiguous run). Raises ``ValueError`` for dtypes holding Python
    objects and for unknown chunk sizes (``arr.compute_chunk_sizes()`` first).
    """
    arr = da.asarray(arr)
    dtype = np.dtype(arr.dtype)
    if dtype.hasobject:
        raise ValueError(f"to_npy refuses arrays of Python objects (dtype {dtype}): they would be pickles")
    if any(math.isnan(n) for c in arr.chunks for n in c):
        raise ValueError("to_npy needs known chunk sizes: call arr.compute_chunk_sizes() first")
    target = os.fsdecode(path)
    if not target.endswith(".npy"):
        target += ".npy"
    _warn_dtype(dtype)
    shape = tuple(int(n) for n in arr.shape)
    with _npy.PendingDir(target, _INFIX) as pending:
        tmp = os.path.join(pending.path, os.path.basename(target))
        offset, version = _npy.create_npy(tmp, dtype, shape, False, None)
        _warn_version(version)
        da.store(arr, _Writer(tmp, offset, dtype, shape), lock=False)
        os.replace(tmp, target)


@dataclass(frozen=True)
class _Writer:
    """The target of ``da.store``: ``writer[region] = chunk`` writes the chunk's bytes into
    their places in the file (C order), in the process that computed it."""

    path: str
    offset: int
    dtype: np.dtype[Any]
    shape: tuple[int, ...]

    def __setitem__(self, region: tuple[slice, ...], value: Any) -> None:
        bounds = [s.indices(n) for s, n in zip(region, self.shape, strict=True)]
        sizes = tuple(stop - start for start, stop, _ in bounds)
        chunk = np.asarray(value, dtype=self.dtype)
        if chunk.shape != sizes:
            raise ValueError(f"{self.path}: a chunk of shape {chunk.shape} for a region of {sizes}")
        data = np.ascontiguousarray(chunk.reshape(-1)).view(np.uint8)
        if data.size == 0:
            return
        # The last axis that the chunk does not span whole: each run of the chunk's
        # indices from there on is contiguous in the file.
        split = max((i for i, n in enumerate(sizes) if n != self.shape[i]), default=0)
        strides = [self.dtype.itemsize * math.prod(self.shape[i + 1 :]) for i in range(len(self.shape))]
        run = math.prod(sizes[split:]) * self.dtype.itemsize
        fd = os.open(self.path, os.O_WRONLY)  # never created here: a removed file stays gone
        try:
            for k, index in enumerate(np.ndindex(*sizes[:split])):
                at = self.offset + sum((bounds[i][0] + j) * strides[i] for i, j in enumerate(index))
                at += bounds[split][0] * strides[split] if sizes else 0
                _pwrite_all(fd, data[k * run : (k + 1) * run], at, self.path)
        finally:
            os.close(fd)


def _pwrite_all(fd: int, data: _Array, offset: int, path: str) -> None:
    view = data.data
    done = 0
    while done < len(view):
        written = os.pwrite(fd, view[done:], offset + done)
        if written <= 0:
            raise OSError(f"{path}: pwrite wrote nothing at offset {offset + done}")
        done += written
