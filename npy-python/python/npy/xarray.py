"""xarray's ``engine="npy"``: NumPy files as Datasets, read lazily by the rows asked for.

::

    import xarray as xr

    ds = xr.open_dataset("traces.npy", engine="npy")
    ds["samples"].isel(trace=slice(1000, 2000)).values  # those 1,000 records' bytes only

xarray finds the backend through the ``xarray.backends`` entry point ``npy`` that the
package installs; :class:`NpyBackendEntrypoint` can also be passed as ``engine=``. A
``.npy`` of records becomes one variable per field (nested fields flattened as
``receiver.x``, subarray fields with extra dimensions, padding dropped), any other array
one variable, an ``.npz`` one variable per member (a record member one per field,
``member.field``), a directory of ``.npy`` files (or a glob pattern) their arrays
concatenated along the first axis. Each variable is an xarray ``BackendArray`` whose
indexing reads the rows it selects through ``npy.open``'s :class:`~npy.LazyArray` (one a
file or member, npy-store's shards): by positioned reads locally, by ranged GETs at a URL
(``s3://``, ``https://``, ...); an array of objects is read whole by ``npy.load``. With
``chunks=``, xarray makes Dask arrays whose tasks read their own rows.

Importing this module imports xarray; ``import npy`` never does.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, TypeAlias
from urllib.parse import unquote, urlparse

import numpy as np
import xarray as xr
from xarray.backends import BackendArray, BackendEntrypoint
from xarray.core import indexing

from . import _npy
from ._lazy import LazyArray
from ._lazy import open as open_lazy
from ._source import MAX_HEADER_SIZE, Located, expand, is_url, kind_of_name, open_source

__all__ = ["NpyBackendArray", "NpyBackendEntrypoint", "open_dataset"]

# The most bytes of rows kept for the other variables of the same records to take.
KEPT_BYTES = 1 << 30

_Array: TypeAlias = np.ndarray[Any, np.dtype[Any]]
# The resolutions xarray holds datetime64 and timedelta64 values in (coarser units become
# seconds, finer ones nanoseconds, as xarray converts NumPy's arrays).
_COARSE = {"Y", "M", "W", "D", "h", "m"}
_FINE = {"ps", "fs", "as"}


def open_dataset(
    source: str | os.PathLike[str],
    *,
    dims: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    field_dims: Mapping[str, Sequence[str]] | None = None,
    variable: str | None = None,
    drop_variables: str | Iterable[str] | None = None,
    max_header_size: int = MAX_HEADER_SIZE,
) -> xr.Dataset:
    """What ``xr.open_dataset(source, engine="npy", ...)`` gives: see
    :meth:`NpyBackendEntrypoint.open_dataset`."""
    return NpyBackendEntrypoint().open_dataset(
        source,
        dims=dims,
        field_dims=field_dims,
        variable=variable,
        drop_variables=drop_variables,
        max_header_size=max_header_size,
    )


class NpyBackendEntrypoint(BackendEntrypoint):
    """xarray's backend for NumPy's ``.npy`` and ``.npz`` files (``engine="npy"``)."""

    description = "NumPy .npy and .npz files, local or at URLs, read lazily by rows (npy)"
    url = "https://github.com/npy-rs/npy/blob/main/npy-python/README.md#xarray"
    open_dataset_parameters = (
        "filename_or_obj",
        "drop_variables",
        "dims",
        "field_dims",
        "variable",
        "max_header_size",
    )

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            return False
        name = os.fspath(filename_or_obj)
        if not isinstance(name, str):
            return False
        return kind_of_name(name) is not None

    def open_dataset(
        self,
        filename_or_obj: Any,
        *,
        drop_variables: str | Iterable[str] | None = None,
        dims: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        field_dims: Mapping[str, Sequence[str]] | None = None,
        variable: str | None = None,
        max_header_size: int = MAX_HEADER_SIZE,
    ) -> xr.Dataset:
        """A Dataset of the NumPy file (or files) ``filename_or_obj``, read lazily.

        filename_or_obj: a ``.npy`` or ``.npz`` path or URL (``s3://``, ``gs://``,
            ``az://``, ``http(s)://``, ``file://``, credentials from the environment as
            ``npy.load`` takes them); a directory, whose ``.npy`` files (its folders'
            too, sorted by path, as ``npy.open`` and ``npy.scan`` find them) are
            concatenated along the first axis; or a glob pattern (``"shots/*.npy"``)
            likewise. Concatenated files must share dtype and the other axes.
        dims: the array's dimension names (default ``dim_0``, ``dim_1``..., but a record
            file's rows are named after it: ``traces.npy`` -> ``trace``, ``shot_07.npy``
            -> ``shot``: the stem less trailing digits, separators and a plural ``s``); for an
            ``.npz``, the names for every member (default ``{member}_dim_0``...), or a
            mapping of member name to names.
        field_dims: a mapping of variable name to the names of its extra dimensions: a
            subarray field's (default ``{variable}_dim_0``...).
        variable: the name of a plain (not record) array's variable in a ``.npy``
            (default the file's stem, or the directory's name).
        drop_variables: variables left out (never read).
        max_header_size: a longer header is refused, as ``np.load`` refuses it.

        Variables: a record array gives one per field, named by its path (``receiver.x``:
        npy.scan's and SQL's name for it), of the array's dims and then the field's
        subarray dims; padding and fields of no fields give none. An ``.npz`` record
        member gives ``member.field``. Values are what xarray holds of NumPy's: native
        byte order, datetimes and timedeltas in seconds (units coarser) or nanoseconds
        (finer), checked exact; object arrays (their pickles checked by npy's restricted
        decoder) read whole on first access. Refused, naming the file and field:
        datetimes without a unit, records holding objects, names that collide.
        """
        if not isinstance(filename_or_obj, (str, os.PathLike)):
            raise TypeError(
                f"engine='npy' reads paths and URLs, not {type(filename_or_obj).__name__}: "
                "use npy.load for file objects"
            )
        source = os.fspath(filename_or_obj)
        if not isinstance(source, str):
            source = os.fsdecode(source)
        drop = {drop_variables} if isinstance(drop_variables, str) else set(drop_variables or ())
        arrays = _arrays(source, max_header_size)
        variables: dict[Hashable, xr.Variable] = {}
        readers: list[_Rows] = []
        for member, rows in arrays:
            readers.append(rows)
            users = 0
            base = _base_name(source, member, variable, rows)
            array_dims = _array_dims(rows, member, dims, source)
            for name, path, shape, dtype in _leaves(rows, base):
                if name in variables or name in drop:
                    if name in variables:
                        raise ValueError(f"{rows.name}: two variables would be named {name!r}: rename a field")
                    continue
                extra = _extra_dims(rows, name, shape, field_dims)
                target = _xarray_dtype(dtype, rows.name, name)
                array = NpyBackendArray(rows, path, rows.shape + shape, target, name)
                users += 1
                # No preferred chunks: rows are read by range, so any split of them is as good
                # (xarray would warn about chunks that split a preferred one).
                encoding: dict[str, Any] = {"source": rows.name, "dtype": target}
                variables[name] = xr.Variable(
                    (*array_dims, *extra), indexing.LazilyIndexedArray(array), encoding=encoding
                )
            rows.users = users
        dataset = xr.Dataset(variables)
        dataset.set_close(functools.partial(_close, readers))
        return dataset


def _close(readers: list[_Rows]) -> None:
    for rows in readers:
        rows.close()


class NpyBackendArray(BackendArray):
    """One variable of a NumPy file: one field (or the whole) of its array, read by the
    rows an index selects (see :class:`NpyBackendEntrypoint`)."""

    def __init__(
        self, rows: _Rows, path: tuple[str, ...], shape: tuple[int, ...], dtype: np.dtype[Any], name: str
    ) -> None:
        self.rows = rows
        self.path = path
        self.shape = shape
        self.dtype = dtype
        self.name = name

    def __getitem__(self, key: indexing.ExplicitIndexer) -> Any:
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.OUTER, self._raw)

    def _raw(self, key: tuple[Any, ...]) -> _Array:
        """Outer indexing: the first index reads rows, the others index what was read."""
        rank = len(self.rows.shape)
        (values, squeeze, shared), rest = self.rows.read(key[0] if rank else None), key[1:] if rank else key
        for name in self.path:
            values = values[name]
        converted = _converted(values, self.dtype, self.rows.name, self.name)
        values = converted.copy() if shared and converted is values else converted
        first = 0 if rank == 0 else 1
        for axis in reversed(range(len(rest))):
            index = rest[axis]
            if not (isinstance(index, slice) and index == slice(None)):
                values = values[(slice(None),) * (first + axis) + (index,)]
        if squeeze:
            values = values[0]
        return np.asarray(values)


# Reading rows ----------------------------------------------------------------------------


class _Part:
    """One file's array (or ``.npz`` member) as ``npy.open`` reads it: records by rows
    (``LazyArray``), arrays of objects whole through ``npy.load``'s restricted decoder,
    elements of no bytes made, not read."""

    def __init__(self, found: Located, max_header_size: int) -> None:
        self.layout = found
        self.max_header_size = max_header_size
        self._lazy: LazyArray | None = None
        self._whole: _Array | None = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"layout": self.layout, "max_header_size": self.max_header_size}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["layout"], state["max_header_size"])  # type: ignore[misc]

    @property
    def by_rows(self) -> bool:
        """Whether npy-store's shards read its rows in place (C order, stored, bytes)."""
        found = self.layout
        plain = not (found.compressed or found.fortran or found.dtype.hasobject)
        return plain and bool(found.shape) and found.dtype.itemsize > 0

    def rows(self, index: slice | _Array) -> _Array:
        """The rows ``index`` selects (a bounded slice of step 1, or indices)."""
        found = self.layout
        if found.dtype.hasobject:
            return self._objects()[index].copy()  # (a view would let a caller change the kept array)
        if found.dtype.itemsize == 0 or math.prod(found.shape) == 0:
            count = index.stop - index.start if isinstance(index, slice) else len(index)
            return np.zeros((count, *found.shape[1:]), found.dtype)
        out: _Array = self._array()[index]
        # Deflated members and Fortran-order arrays are kept whole by the LazyArray: copied
        # out, as above.
        return out.copy() if found.compressed or found.fortran else out

    def whole(self) -> _Array:
        """The 0-d array."""
        found = self.layout
        if found.dtype.hasobject:
            return self._objects().copy()
        if found.dtype.itemsize == 0:
            return np.zeros((), found.dtype)
        out: _Array = np.array(self._array()[()]).reshape(())
        return out

    def _array(self) -> LazyArray:
        with self._lock:
            if self._lazy is None:
                found = self.layout
                # Read whole (a compressed member, Fortran order, 0-d): npy-store's source.
                self._lazy = LazyArray(open_source(found.file), found, found.file, found.member)
            return self._lazy

    def _objects(self) -> _Array:
        with self._lock:
            if self._whole is None:
                from ._npyio import load

                found = self.layout
                if found.member is None:
                    whole = load(found.file)
                else:
                    with load(found.file) as archive:
                        whole = archive[found.member]
                if whole.shape != found.shape:
                    raise ValueError(f"{found.name}: the array changed since it was opened")
                self._whole = np.asarray(whole, dtype=object)
            return self._whole

    def close(self) -> None:
        with self._lock:
            self._lazy = None  # (its file closes with it)


class _Rows:
    """An array spread over one or several files (``parts``, concatenated along axis 0),
    read by rows. Picklable: each process opens the files itself."""

    def __init__(self, parts: list[_Part], name: str) -> None:
        self.parts = parts
        self.name = name
        first = parts[0].layout
        self.dtype = first.dtype
        if len(parts) == 1:
            self.shape = first.shape
        else:
            self.shape = (sum(p.layout.shape[0] for p in parts), *first.shape[1:])
        self._starts = np.cumsum([0] + [p.layout.shape[0] if p.layout.shape else 1 for p in parts])
        # How many variables read these rows (their fields), and the rows read lately that
        # some of them have not taken yet: `ds.load()` reads the records once, not once per
        # field (it read the main job's 1M Traces 8 times, 10x np.load's time).
        self.users = 1
        self._kept: OrderedDict[Hashable, list[Any]] = OrderedDict()
        self._kept_bytes = 0
        self._lock = threading.Lock()
        # Files read by rows: one lazy array over all of them (npy-store's shards), opened
        # by `open` or on first read.
        self._joined: LazyArray | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"parts": self.parts, "name": self.name, "users": self.users}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["parts"], state["name"])  # type: ignore[misc]
        self.users = state["users"]

    def read(self, index: Any) -> tuple[_Array, bool, bool]:
        """The rows ``index`` selects along axis 0 (an int, a slice or int indices; ``None``
        for a 0-d array's value), whether it was an int (its axis to drop), and whether the
        rows are shared with other readers (their fields to be copied, not viewed)."""
        key = _key(index)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                kept[2] -= 1
                if kept[2] <= 0:
                    del self._kept[key]
                    self._kept_bytes -= kept[0].nbytes
                return kept[0], kept[1], True
        records, squeeze = self._read(index)
        if self.users < 2 or records.nbytes > KEPT_BYTES:
            return records, squeeze, False
        with self._lock:
            if key not in self._kept:
                self._kept[key] = [records, squeeze, self.users - 1]
                self._kept_bytes += records.nbytes
                while self._kept_bytes > KEPT_BYTES:
                    _, (old, _, _) = self._kept.popitem(last=False)
                    self._kept_bytes -= old.nbytes
        return records, squeeze, True

    def _read(self, index: Any) -> tuple[_Array, bool]:
        if index is None:
            return self.parts[0].whole(), False
        n = self.shape[0]
        squeeze = False
        if isinstance(index, (int, np.integer)):
            i = int(index)
            if not -n <= i < n:
                raise IndexError(f"{self.name}: index {i} is out of bounds for axis 0 with size {n}")
            index, squeeze = slice(i % n, i % n + 1), True
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step == 1:
                return self._run(start, max(start, stop)), squeeze
            index = np.arange(start, stop, step)
        rows = np.asarray(index, dtype=np.int64)
        rows = np.where(rows < 0, rows + n, rows)
        if rows.size and (rows.min() < 0 or rows.max() >= n):
            raise IndexError(f"{self.name}: an index is out of bounds for axis 0 with size {n}")
        return self._gather(rows), squeeze

    def open(self) -> None:
        """Opens the files now, when they are read by rows (else each on its first read)."""
        self._all()

    def _all(self) -> LazyArray | None:
        """The lazy array over all the files, when they are read by rows."""
        if not all(p.by_rows for p in self.parts):
            return None
        with self._lock:
            if self._joined is None:
                first = self.parts[0]
                files = [p.layout.file for p in self.parts]
                joined = open_lazy(files, first.layout.member, max_header_size=first.max_header_size)
                if joined.shape != self.shape or joined.dtype != self.dtype:
                    raise ValueError(f"{self.name}: the array changed since it was opened")
                self._joined = joined
            return self._joined

    def _run(self, start: int, stop: int) -> _Array:
        joined = self._all()
        if joined is not None:
            out: _Array = joined[start:stop]
            return out
        pieces = []
        for part, base in zip(self.parts, self._starts[:-1], strict=True):
            lo, hi = max(start, int(base)), min(stop, int(base) + part.layout.shape[0])
            if lo < hi:
                pieces.append(part.rows(slice(lo - int(base), hi - int(base))))
        if len(pieces) == 1:
            return pieces[0]
        return self._join(pieces, stop - start)

    def _gather(self, rows: _Array) -> _Array:
        joined = self._all()
        if joined is not None:
            got: _Array = joined[np.ascontiguousarray(rows, dtype=np.int64)]
            return got
        if len(self.parts) == 1:
            return self.parts[0].rows(rows)
        out = np.empty((len(rows), *self.shape[1:]), self.dtype)
        which = np.searchsorted(self._starts, rows, side="right") - 1
        for k, part in enumerate(self.parts):
            mask = which == k
            if mask.any():
                out[mask] = part.rows(rows[mask] - int(self._starts[k]))
        return out

    def _join(self, pieces: list[_Array], count: int) -> _Array:
        # Into an array of the files' dtype: np.concatenate would make it native-endian.
        out = np.empty((count, *self.shape[1:]), self.dtype)
        at = 0
        for piece in pieces:
            out[at : at + len(piece)] = piece
            at += len(piece)
        return out

    def close(self) -> None:
        with self._lock:
            self._kept.clear()
            self._kept_bytes = 0
            self._joined = None
        for part in self.parts:
            part.close()


def _key(index: Any) -> Hashable:
    """A row index as a key of the rows kept."""
    if isinstance(index, slice):
        return ("slice", index.start, index.stop, index.step)
    if index is None or isinstance(index, (int, np.integer)):
        return ("int", None if index is None else int(index))
    rows = np.asarray(index)
    return ("rows", rows.dtype.str, rows.shape, rows.tobytes())


# The files, their arrays and their variables ------------------------------------------------


def _describe(file: str, member: str | None, max_header_size: int) -> Located:
    """The array's layout as ``npy.open`` finds it (npy-store's header codec), arrays of
    objects included (their values are read whole by ``npy.load``)."""
    dtype, fortran, shape, offset, compressed, compression = _npy.locate(file, member, max_header_size)
    name = file if member is None else f"{file} (member {member!r})"
    return Located(file, name, offset, dtype, tuple(shape), fortran and len(shape) > 1, member, compressed, compression)


def _members(file: str) -> list[str]:
    from ._npyio import load, load_npz

    archive = load(file) if is_url(file) else load_npz(file)
    with archive:
        return list(archive.files)


def _is_npz(file: str) -> bool:
    path = unquote(urlparse(file).path) if is_url(file) else file
    return kind_of_name(path) == "npz"


def _arrays(source: str, max_header_size: int) -> list[tuple[str | None, _Rows]]:
    """Each array the source holds: ``(None, rows)`` for ``.npy`` files (several
    concatenated), ``(member, rows)`` per ``.npz`` member."""
    if _is_npz(source) and not os.path.isdir(source):
        # (Each member's rows are opened on first read: opening them all now would read
        # the archive's directory once more a member.)
        return [
            (m, _Rows([_Part(found, max_header_size)], found.name))
            for m in _members(source)
            for found in [_describe(source, m, max_header_size)]
        ]
    files = expand(source)
    layouts = [_describe(f, None, max_header_size) for f in files]
    first = layouts[0]
    for other in layouts[1:]:
        same = (other.dtype, other.fortran, other.shape[1:]) == (first.dtype, first.fortran, first.shape[1:])
        if not same or not first.shape or not other.shape:
            raise ValueError(
                f"{other.file} and {first.file} differ: dtype {other.dtype} and {first.dtype}, shape "
                f"{other.shape} and {first.shape}, fortran_order {other.fortran} and {first.fortran} "
                "(files concatenated along axis 0 must share dtype, order and the other axes)"
            )
    name = first.name if len(layouts) == 1 else source
    rows = _Rows([_Part(found, max_header_size) for found in layouts], name)
    rows.open()
    return [(None, rows)]


def _base_name(source: str, member: str | None, variable: str | None, rows: _Rows) -> str:
    """A plain array's variable name; a record array's fields are prefixed by it only in
    an archive (``member.field``)."""
    if member is not None:
        return member
    if variable is not None:
        return variable
    path = unquote(urlparse(source).path) if is_url(source) else source
    leaf = PurePosixPath(path.replace(os.sep, "/").rstrip("/")).name
    folder = os.path.isdir(source) or source.endswith("/")
    stem = leaf if folder or any(c in leaf for c in "*?[") else PurePosixPath(leaf).stem
    if any(c in stem for c in "*?["):
        stem = PurePosixPath(path.replace(os.sep, "/")).parent.name
    if not stem:
        raise ValueError(f"{rows.name}: no variable name (pass variable=)")
    return stem


def _leaves(rows: _Rows, base: str) -> list[tuple[str, tuple[str, ...], tuple[int, ...], np.dtype[Any]]]:
    """The variables of an array: ``(name, field path, extra shape, leaf dtype)`` each."""
    dtype = rows.dtype
    if dtype.names is None:
        return [(base, (), (), dtype)]
    if dtype.hasobject:
        raise ValueError(f"{rows.name}: record dtype {dtype} holds Python objects: refused (no pickle is run)")
    archive = rows.parts[0].layout.member is not None
    found: list[tuple[str, tuple[str, ...], tuple[int, ...], np.dtype[Any]]] = []

    def walk(record: np.dtype[Any], path: tuple[str, ...], shape: tuple[int, ...]) -> None:
        assert record.names is not None and record.fields is not None
        for field in record.names:
            leaf = record.fields[field][0]
            extra = shape
            while leaf.subdtype is not None:
                leaf, sub = leaf.subdtype
                extra = extra + tuple(sub)
            if leaf.names is not None:
                walk(leaf, (*path, field), extra)
            else:
                name = ".".join((base, *path, field) if archive else (*path, field))
                found.append((name, (*path, field), extra, leaf))

    walk(dtype, (), ())
    if not found:
        raise ValueError(f"{rows.name}: record dtype {dtype} has no fields: no variable to make of it")
    return found


def _array_dims(rows: _Rows, member: str | None, dims: Any, source: str) -> tuple[str, ...]:
    ndim = len(rows.shape)
    given = dims.get(member) if isinstance(dims, Mapping) and member is not None else dims
    if isinstance(dims, Mapping) and member is None:
        raise ValueError(f"{rows.name}: dims as a mapping names an archive's members; give a list of names")
    if given is None:
        prefix = "dim" if member is None else f"{member}_dim"
        numbered = [f"{prefix}_{i}" for i in range(ndim)]
        record = _record_dim(rows, source) if member is None and ndim else None
        if record is not None:
            numbered[0] = record
        return tuple(numbered)
    names = (given,) if isinstance(given, str) else tuple(str(d) for d in given)
    if len(names) != ndim or len(set(names)) != ndim:
        raise ValueError(f"{rows.name}: dims {given!r} are not {ndim} distinct names for shape {rows.shape}")
    return names


def _record_dim(rows: _Rows, source: str) -> str | None:
    """The name of a record file's rows: its stem (or directory's name) less trailing
    digits and separators and a plural ``s``: ``traces.npy`` -> ``trace``,
    ``shot_007.npy`` -> ``shot``. None (so ``dim_0``) for plain arrays, for a name left
    empty, and for one a field or another axis has (xarray would make that field an
    index, read whole)."""
    if rows.dtype.names is None:
        return None
    try:
        base = _base_name(source, None, None, rows)
    except ValueError:  # no stem to name the rows after
        return None
    name = base.rstrip("0123456789_-. ")
    if name.endswith("s") and not name.endswith(("ss", "us", "is")) and len(name) > 1:
        name = name[:-1]
    taken = {leaf[0] for leaf in _leaves(rows, base)} | {f"dim_{i}" for i in range(1, len(rows.shape))}
    return name if name and name not in taken else None


def _extra_dims(rows: _Rows, name: str, shape: tuple[int, ...], field_dims: Any) -> tuple[str, ...]:
    given = (field_dims or {}).get(name)
    if given is None:
        return tuple(f"{name}_dim_{i}" for i in range(len(shape)))
    names = (given,) if isinstance(given, str) else tuple(str(d) for d in given)
    if len(names) != len(shape):
        raise ValueError(f"{rows.name}: field_dims[{name!r}] {given!r} are not {len(shape)} names for {shape}")
    return names


def _xarray_dtype(dtype: np.dtype[Any], file: str, name: str) -> np.dtype[Any]:
    """What xarray holds values of ``dtype`` as: native byte order, times in a unit
    xarray keeps, zero-width strings one wide; datetimes without a unit refused."""
    if dtype.kind in "mM":
        unit, _ = np.datetime_data(dtype)  # (a count, as in `M8[10s]`, is dropped)
        if unit == "generic":
            raise ValueError(
                f"{file}: field {name!r}: {dtype} has no time unit, which xarray's datetimes need: refused"
            )
        if unit in _COARSE:
            unit = "s"
        elif unit in _FINE:
            unit = "ns"
        return np.dtype(f"{dtype.kind}8[{unit}]")
    if dtype.kind in "SU" and dtype.itemsize == 0:
        return np.dtype(f"{dtype.kind}1")
    if dtype.hasobject:
        return np.dtype(object)
    return dtype.newbyteorder("=") if dtype.byteorder in "<>" else dtype


def _converted(values: _Array, target: np.dtype[Any], file: str, name: str) -> _Array:
    """``values`` as ``target``, datetimes checked to keep every value."""
    if values.dtype == target:
        return values
    out = values.astype(target)
    if target.kind in "mM" and values.size:
        native = values.dtype.newbyteorder("=")
        back = out.astype(native)
        kept = (back == values) | (np.isnat(values) & np.isnat(out))
        if not kept.all():
            bad = values[~kept].reshape(-1)[0]
            raise ValueError(
                f"{file}: field {name!r}: the {values.dtype} value {bad} has no exact "
                f"{target} value, xarray's unit for it: refused"
            )
    return out
