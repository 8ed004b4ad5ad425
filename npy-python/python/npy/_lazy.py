"""``npy.open``: NumPy files, local or at URLs, as one lazy array read by the byte ranges an
index needs: one file, or many along axis 0 (a list, a directory, a glob pattern), whose
batches of rows npy-store gathers with the GIL released."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from . import _npy
from ._source import MAX_HEADER_SIZE, Located, is_prefix, is_url, locate, open_source

_Array = np.ndarray[Any, np.dtype[Any]]
_File = str | os.PathLike[str] | bytes


def open(
    file: _File | Sequence[_File],
    member: str | None = None,
    *,
    max_header_size: int = MAX_HEADER_SIZE,
    map_local_files: bool = False,
) -> LazyArray:
    """The array of a ``.npy`` file (or of member ``member`` of an ``.npz``), read lazily;
    or of many, one after another along axis 0.

    ``file`` is a path or a URL (``s3://``, ``gs://``, ``az://``, ``http(s)://``,
    ``file://``; credentials and endpoints from the environment, as ``npy sql`` takes
    them), a directory or a URL prefix ending in ``/`` (its ``.npy`` files, recursively,
    in path order; with ``member``, its ``.npz`` files), a glob pattern, or a list of any
    of these. Only the headers are
    read now; each index reads the rows it selects, by positioned reads of local files and
    ranged GETs of objects (side by side, near ones coalesced)::

        a = npy.open("s3://bucket/traces.npy")
        a.shape, a.dtype
        a[1000:2000]            # 1,000 rows: their bytes only
        a["t0"][::100]          # a field of every 100th row
        np.asarray(a)           # all of it
        shards = npy.open("train/*.npy")   # one array over the files
        batch = shards[[17, 90_001, 5]]     # those rows, gathered in one call

    Indexing follows NumPy along the first axis (an int, a slice of any step, a list or
    array of ints, a boolean mask as long as the axis), then any further indices within
    the rows read; a field name or a list of them selects fields (a lazy array again).
    Results are NumPy arrays. A stored ``.npz`` member is read by range (its CRC-32 is
    not checked). Object arrays are refused (their data are pickles).

    Many files must share a dtype and the shape of a row (the error names two that
    differ); each must be C order (or 1-d) and, in archives, stored. One file may be
    anything: a compressed member or a Fortran-order array is read whole on first index.

    The array is a PyTorch map-style dataset as it stands (``len``, ``a[i]``, and
    ``a.__getitems__(indices)``, a batch in one read), pickles as its files (reopened where
    it is unpickled, as in ``spawn``ed workers) and reopens its files in a ``fork``ed child.
    A file replaced or resized after it was opened fails the read that meets it, naming it.

    ``map_local_files=True`` maps local files (of arrays read by rows) instead of reading
    them: a batch then costs its copies, not a system call a row, on
    ``np.load(mmap_mode="r")``'s terms: nothing may truncate the files while the array
    lives, or the process may die of ``SIGBUS``.
    """
    sources = _sources(file)
    one = sources[0]
    if len(sources) == 1 and ((is_url(one) and not is_prefix(one)) or os.path.isfile(one)):
        found = locate(sources[0], member, max_header_size)
        if found.compressed or found.fortran or not found.shape:
            lazy = LazyArray(open_source(sources[0]), found, sources[0], member)
            lazy._max_header_size = max_header_size
            return lazy
    shards = _npy.open_shards(sources, member, max_header_size, map_local_files)
    lazy = LazyArray._of_shards(shards, member, max_header_size)
    lazy._map_local_files = map_local_files
    return lazy


def _sources(file: Any) -> list[str]:
    """``file`` as a list of paths, URLs, directories and patterns."""
    many = isinstance(file, (list, tuple))
    items = list(file) if many else [file]
    out = []
    for item in items:
        if isinstance(item, bytes):
            item = os.fsdecode(item)
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(
                "npy.open takes a path, a URL, a directory, a glob pattern or a list of them, "
                f"not {type(item).__name__}"
            )
        out.append(os.fspath(item) if not isinstance(item, str) else item)
    if many and not out:
        raise ValueError("npy.open of an empty list: give at least one file")
    return [os.fsdecode(p) for p in out]


def _reopened(
    file: str | list[str],
    member: str | None,
    max_header_size: int,
    fields: list[str] | None,
    dtype: Any,
    shape: Any,
    map_local_files: bool = False,
) -> LazyArray:
    """A pickled :class:`LazyArray`, opened again (``pickle`` calls this)."""
    lazy = open(file, member, max_header_size=max_header_size, map_local_files=map_local_files)
    if lazy._layout.dtype != dtype or lazy.shape != shape:
        raise ValueError(
            f"{lazy.name}: the files changed since the array was pickled: dtype {lazy._layout.dtype} and shape "
            f"{lazy.shape}, not {dtype} and {shape}"
        )
    return lazy._view(fields) if fields is not None else lazy


class LazyArray:
    """NumPy files' array, read by the byte ranges each index needs (see :func:`open`)."""

    # Where this array's files were opened: a forked child opens them again.
    _pid: int
    _shards: _npy.Shards | None = None
    _max_header_size: int = MAX_HEADER_SIZE
    _map_local_files: bool = False

    def __init__(
        self,
        source: _npy.Source | None,
        found: Located,
        file: str | os.PathLike[str] | list[str],
        member: str | None,
        fields: list[str] | None = None,
    ) -> None:
        self._source = source
        self._layout = found
        self._file = file
        self._member = member
        self._fields = fields
        self._whole: _Array | None = None
        self._pid = os.getpid()

    @classmethod
    def _of_shards(cls, shards: _npy.Shards, member: str | None, max_header_size: int) -> LazyArray:
        files = shards.files
        shown = files[0] if len(files) == 1 else f"{files[0]} ... {files[-1]} ({len(files)} files)"
        label = shown if member is None else f"{shown} (member {member!r})"
        found = Located(files[0], label, 0, shards.dtype, tuple(shards.shape), False, member)
        lazy = cls(None, found, files, member)
        lazy._shards = shards
        lazy._max_header_size = max_header_size
        return lazy

    def _view(self, fields: list[str] | None) -> LazyArray:
        """This array's rows, of ``fields`` (all: ``None``)."""
        view = LazyArray(self._source, self._layout, self._file, self._member, fields)
        view._whole, view._shards, view._pid = self._whole, self._shards, self._pid
        view._max_header_size, view._map_local_files = self._max_header_size, self._map_local_files
        return view

    def __reduce__(self) -> tuple[Any, ...]:
        file = self._file if isinstance(self._file, list) else os.fspath(self._file)
        state = (
            file,
            self._member,
            self._max_header_size,
            self._fields,
            self._layout.dtype,
            self.shape,
            self._map_local_files,
        )
        return (_reopened, state)

    def _opened(self) -> None:
        """Opens the files again in a forked child (a parent's threads, connections and
        runtime are not the child's)."""
        if self._pid == os.getpid():
            return
        again = open(
            self._file,
            self._member,
            max_header_size=self._max_header_size,
            map_local_files=self._map_local_files,
        )
        if again._layout.dtype != self._layout.dtype or again.shape != self.shape:
            raise ValueError(f"{self.name}: the files changed since they were opened")
        self._source, self._shards, self._pid = again._source, again._shards, again._pid

    @property
    def files(self) -> list[str]:
        """The files (and URLs) read, in order."""
        return list(self._file) if isinstance(self._file, list) else [os.fspath(self._file)]

    @property
    def shape(self) -> tuple[int, ...]:
        return self._layout.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        dtype = self._layout.dtype
        return dtype if self._fields is None else _fields_dtype(dtype, self._fields)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def name(self) -> str:
        """The file or URL (and member) read."""
        return self._layout.name

    @property
    def fetched(self) -> int:
        """Bytes fetched so far from URLs (0 for local files)."""
        if self._shards is not None:
            return self._shards.fetched
        return self._source.fetched if self._source is not None else 0

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"npy.LazyArray({self.name!r}, shape={self.shape}, dtype={self.dtype})"

    def __getitems__(self, indices: Sequence[int]) -> _Array:
        """The rows ``indices`` (a batch, as PyTorch's ``DataLoader`` asks for one): one
        array of them, read in one gather; a sequence of the samples along its first axis."""
        out: _Array = self[np.asarray(indices, dtype=np.intp).reshape(-1)]
        return out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> _Array:
        out: _Array = self[...]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __getitem__(self, key: Any) -> Any:
        if type(key) is np.ndarray and self._shards is not None and key.ndim == 1 and key.dtype == np.int64:
            # A batch of rows across shards, the training loop's index: straight to the
            # gather, which wraps negative rows and raises NumPy's IndexError.
            self._opened()
            return self._with_fields(self._gather(key))
        if isinstance(key, str) or (isinstance(key, list) and key and all(isinstance(k, str) for k in key)):
            return self._select_fields([key] if isinstance(key, str) else key, single=isinstance(key, str))
        head, rest = _split(key, self.ndim)
        rows = self._rows(head)
        out = self._read(rows)
        if isinstance(head, (int, np.integer)):
            # The row itself: the rest indexes its axes (without the first's `:`).
            out, rest = out[0], rest[1:]
        return out[rest] if rest else out

    def _select_fields(self, names: list[str], single: bool) -> Any:
        dtype = self._layout.dtype
        if dtype.names is None:
            raise ValueError(f"{self.name}: no fields: its dtype is {dtype}")
        for n in names:
            if n not in dtype.names or (self._fields is not None and n not in self._fields):
                raise ValueError(f"no field of name {n}")
        view = self._view(names)
        if single:
            return _FieldArray(view, names[0])
        return view

    def _rows(self, head: Any) -> _Array | slice:
        """The rows ``head`` selects along axis 0: a slice (already bounded) or indices."""
        if not self.shape:
            if head is Ellipsis or head == ():
                return slice(0, 1)
            raise IndexError("too many indices for array: array is 0-dimensional")
        n = self.shape[0]
        if head is Ellipsis:
            return slice(0, n, 1)
        if isinstance(head, slice):
            return slice(*head.indices(n))
        if isinstance(head, (int, np.integer)):
            i = int(head)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis 0 with size {n}")
            i %= n
            return slice(i, i + 1, 1)
        index = np.asarray(head)
        if index.size == 0 and index.dtype.kind == "f":
            index = index.astype(np.intp)  # `a[[]]`: no rows
        if index.dtype == bool:
            if index.shape != (n,):
                raise IndexError(
                    f"boolean index did not match indexed array along axis 0; size of axis is {n} "
                    f"but size of corresponding boolean axis is {index.shape[0] if index.ndim else 0}"
                )
            return np.flatnonzero(index)
        if index.dtype.kind not in "iu":
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                "integer or boolean arrays are valid indices"
            )
        if index.size and (index.min() < -n or index.max() >= n):
            bad = index[(index < -n) | (index >= n)][0]
            raise IndexError(f"index {bad} is out of bounds for axis 0 with size {n}")
        return np.where(index < 0, index + n, index)

    def _read(self, rows: _Array | slice) -> _Array:
        """The rows (a slice or indices, in that order), of the selected fields."""
        self._opened()
        found = self._layout
        if found.compressed or found.fortran or not found.shape:
            whole = self._read_whole()
            out = whole[rows] if found.shape else whole.reshape(1)
        else:
            out = self._read_rows(rows)
        return self._with_fields(out)

    def _with_fields(self, out: _Array) -> _Array:
        """Rows read, of the selected fields."""
        if self._fields is None:
            return out
        return out[self._fields] if len(self._fields) > 1 else out[[self._fields[0]]]

    def _read_rows(self, rows: _Array | slice) -> _Array:
        # Arrays read by rows are npy-store's shards (an array read whole has a source).
        return self._gather(rows)

    def _gather(self, rows: _Array | slice) -> _Array:
        """The rows, read by npy-store's gather (the GIL released)."""
        shards = self._shards
        assert shards is not None
        if isinstance(rows, slice) and rows.step == 1:
            count = max(rows.stop - rows.start, 0)
            data = shards.read_rows(rows.start, rows.start + count)
        else:
            index = np.arange(rows.start, rows.stop, rows.step) if isinstance(rows, slice) else rows
            index = np.ascontiguousarray(index, dtype=np.int64)
            count = len(index)
            data = shards.gather(index)
        found = self._layout
        rest = found.shape[1:]
        if found.dtype.itemsize == 0:
            return np.ndarray((count, *rest), dtype=found.dtype)
        return data.view(found.dtype).reshape(count, *rest)

    def _read_whole(self) -> _Array:
        if self._whole is None:
            found = self._layout
            if found.compressed:
                from ._npyio import load_npz

                assert self._member is not None and not isinstance(self._file, list)

                if is_url(self._file):
                    from ._npyio import load

                    with load(self._file) as archive:
                        whole = archive[self._member]
                else:
                    with load_npz(self._file) as archive:
                        whole = archive[self._member]
                if whole.shape != found.shape or whole.dtype != found.dtype:
                    raise ValueError(f"{self.name}: the member changed since it was opened")
            else:
                assert self._source is not None  # an array read whole keeps its file open
                order: Literal["C", "F"] = "F" if found.fortran else "C"
                if found.nbytes:
                    data = np.empty(found.nbytes, dtype=np.uint8)
                    self._source.read_into(found.offset, data)
                    whole = data.view(found.dtype).reshape(found.shape, order=order)
                else:
                    whole = np.empty(found.shape, found.dtype, order=order)
            self._whole = whole
        return self._whole


class _FieldArray:
    """One field of a lazy record array: indexing gives the field's values."""

    def __init__(self, records: LazyArray, field: str) -> None:
        self._records = records
        self._field = field

    @property
    def shape(self) -> tuple[int, ...]:
        return self._records.shape + self.dtype.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._records._layout.dtype.fields[self._field][0]  # type: ignore[index]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"npy.LazyArray({self._records.name!r}, field {self._field!r}, shape={self.shape}, dtype={self.dtype})"

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> _Array:
        out: _Array = self[...]
        return out if dtype is None else out.astype(dtype, copy=False)

    def __getitem__(self, key: Any) -> Any:
        head, rest = _split(key, len(self._records.shape))
        records = self._records[head]
        values = records[self._field]
        return values[rest] if rest else values


def _fields_dtype(dtype: np.dtype[Any], names: list[str]) -> np.dtype[Any]:
    return dtype[names]


def _split(key: Any, ndim: int) -> tuple[Any, tuple[Any, ...]]:
    """The index along axis 0 and the rest (applied to the rows read)."""
    if not isinstance(key, tuple):
        return key, ()
    if not key:
        return Ellipsis, ()
    head, rest = key[0], key[1:]
    if head is Ellipsis:
        # `a[..., k]`: every row, then the rest on the trailing axes.
        return Ellipsis, (slice(None), Ellipsis, *rest) if ndim > 0 else key
    if head is None:
        raise IndexError("npy.open's arrays take no new axis before the first: index, then add one")
    return head, ((slice(None), *rest) if rest else ())
