"""NumPy files as virtual Zarr arrays: a VirtualiZarr parser and kerchunk references.

A ``.npy`` file is uncompressed data at a known byte offset, and so is a stored
(uncompressed) member of an ``.npz`` archive inside its zip. :class:`NpyParser` tells
VirtualiZarr where its chunks are (one, or several of at most ``CHUNK_BYTES`` along the
contiguous axis for a larger array: :func:`chunk_count`), so xarray opens the file as a
Zarr array without copying it::

    import obstore.store, virtualizarr
    from obspec_utils.registry import ObjectStoreRegistry
    from npy.virtualizarr import NpyParser

    registry = ObjectStoreRegistry({"file://": obstore.store.LocalStore()})
    vds = virtualizarr.open_virtual_dataset("file:///data/t.npy", registry=registry, parser=NpyParser())

:func:`references` gives the same array as kerchunk's version-1 references (Zarr format 2),
which fsspec's reference filesystem serves to xarray and zarr; it needs neither VirtualiZarr
nor zarr.

Only the header is read (through the registry's store: ranged reads of its first bytes, and
for an archive of its end and central directory), never the data. Refused, each with an
error naming the URL (and member): object arrays (they are pickles), compressed ``.npz``
members (deflated ones are raw deflate, for which Zarr has no codec; a Zstandard member's
one frame decodes to the whole ``.npy`` file, header first, which no Zarr codec strips),
data types Zarr cannot spell exactly
(VirtualiZarr only), and files shorter than their header says.

This module imports VirtualiZarr and zarr only when a parser is called; ``import npy`` never
imports it.
"""

from __future__ import annotations

import importlib
import math
import os
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np

from ._source import MAX_HEADER_SIZE, locate
from ._source import Located as _Located

__all__ = ["CHUNK_BYTES", "NpyParser", "chunk_count", "references"]

# A file (or member) larger than this is described as several chunks along its contiguous
# axis (see `chunk_count`): a read of a slice then fetches the chunks it touches, not the file.
CHUNK_BYTES = 64 << 20


class _StoreSource:
    """An object behind an obstore/obspec store (what VirtualiZarr's registry resolves to)."""

    def __init__(self, url: str, registry: Any) -> None:
        self.name = url
        try:
            self._store, path = registry.resolve(url)
            self._path = str(path)
            self.size = int(self._store.head(self._path)["size"])
        except FileNotFoundError as e:
            raise FileNotFoundError(f"{url}: no such object ({e})") from e
        except Exception as e:
            raise OSError(f"{url}: cannot read it: {e}") from e

    def read(self, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        try:
            return bytes(self._store.get_range(self._path, start=start, end=end))
        except Exception as e:
            raise OSError(f"{self.name}: cannot read bytes {start}..{end}: {e}") from e


def _layout(url: str, member: str | None, reader: _StoreSource | None = None) -> _Located:
    """The array's layout (npy's header codec, ``npy._source``); a compressed member refused
    with the reason Zarr cannot read it."""
    found = locate(url, member, MAX_HEADER_SIZE, reader)
    advice = (
        "Open it with xarray.open_dataset(path, engine='npy') or load it with npy.load, or write the archive "
        "with npy.savez or npy.NpzWriter(file, 'stored') to describe it"
    )
    if found.compression == "zstd":
        raise ValueError(
            f"{found.name}: the member is compressed (Zstandard), and a zip member's one Zstandard frame holds "
            "the whole .npy file, its header before the data: Zarr's zstd codec would give the header too, and "
            "no Zarr codec drops it (a frame of its own for the data would be a chunk, but zipfile's Zstandard "
            f"readers, np.load's, read one frame a member). {advice}"
        )
    if found.compressed:
        raise ValueError(
            f"{found.name}: the member is compressed (deflate); only stored members are one chunk at an offset: a zip "
            "member is a raw deflate stream, which no Zarr codec reads (zlib and gzip have headers). "
            f"{advice}"
        )
    return found


def _names(url: str, layout: _Located, member: str | None, variable: str | None, dims: Any) -> tuple[str, list[str]]:
    """The variable's name (``variable``, else the member's or the file's stem) and its
    dimensions' names (``dims``, else ``dim_0``...)."""
    if variable is None:
        base = member if member is not None else unquote(urlparse(url).path) or url
        leaf = PurePosixPath(base).name
        variable = leaf.removesuffix(".npy") if member is not None else PurePosixPath(leaf).stem
    if not variable:
        raise ValueError(f"{layout.name}: no variable name (pass variable=)")
    ndim = len(layout.shape)
    given = [dims] if isinstance(dims, str) else dims
    names = [f"dim_{i}" for i in range(ndim)] if dims is None else [str(d) for d in given]
    if len(names) != ndim or len(set(names)) != ndim:
        raise ValueError(f"{layout.name}: dims {dims!r} are not {ndim} distinct names for shape {layout.shape}")
    return variable, names


def chunk_count(layout: _Located, chunk_bytes: int = CHUNK_BYTES) -> int:
    """How many chunks the array is split into along its contiguous axis (the first, the
    last for Fortran order): as few as keep each within ``chunk_bytes``, of an equal number
    of rows each, which must divide the rows.

    Zarr's regular grid lets an array end in a partial chunk only if that chunk is stored
    whole: zarr-python's bytes codec reshapes a chunk's bytes to the full chunk shape and
    fails on fewer (checked with zarr 3.1.6 and VirtualiZarr 2.5.1), and a file's bytes end
    where its array does. So the rows per chunk are the largest divisor of the row count
    whose chunk fits ``chunk_bytes``; where even that gives chunks under 1/16 of it (a
    prime count of rows, say), the array stays one chunk."""
    n = layout.shape[layout.axis] if layout.shape else 1
    slab = layout.slab_bytes if layout.shape else layout.dtype.itemsize
    if n <= 1 or slab == 0 or n * slab <= chunk_bytes:
        return 1
    most = max(1, chunk_bytes // slab)
    small = np.arange(1, math.isqrt(n) + 1, dtype=np.int64)
    small = small[n % small == 0]
    divisors = np.concatenate([small, n // small])
    rows = int(divisors[divisors <= most].max())
    if rows * slab * 16 < chunk_bytes:
        return 1
    return n // rows


def _chunks(layout: _Located, chunk_bytes: int) -> tuple[tuple[int, ...], list[tuple[tuple[int, ...], int, int]]]:
    """The chunk shape and each chunk's ``(index, offset, length)``."""
    shape, ndim = layout.shape, len(layout.shape)
    count = chunk_count(layout, chunk_bytes)
    if count == 1:
        return tuple(max(n, 1) for n in shape), [((0,) * ndim, layout.offset, layout.nbytes)]
    axis = layout.axis
    rows = shape[axis] // count
    size = rows * layout.slab_bytes
    chunk = tuple(rows if i == axis else max(n, 1) for i, n in enumerate(shape))
    entries = [
        (tuple(k if i == axis else 0 for i in range(ndim)), layout.offset + k * size, size) for k in range(count)
    ]
    return chunk, entries


def _check_record(layout: _Located) -> None:
    """Refuse a record dtype that Zarr's ``structured`` type (format 3, whose fields have
    no byte order) or format 2 would read otherwise: padded or overlapping fields, nested
    records, subarray fields, multi-byte fields that are not little-endian."""
    dtype = layout.dtype
    if dtype.names is None:
        return
    why = (
        "refused, as Zarr would read it otherwise; open it with xarray.open_dataset(path, engine='npy') "
        "(a variable per field, read lazily), or read its fields as columns with npy.scan"
    )
    for field in dtype.names:
        f = dtype.fields[field][0] if dtype.fields is not None else dtype
        if f.names is not None or f.subdtype is not None:
            raise ValueError(f"{layout.name}: record dtype {dtype}: field {field!r} is nested or a subarray, {why}")
        if f.itemsize > 1 and f.str[0] == ">":
            raise ValueError(f"{layout.name}: record dtype {dtype}: field {field!r} is big-endian ({f.str}), {why}")
    packed = np.dtype([(n, dtype.fields[n][0]) for n in dtype.names]) if dtype.fields is not None else dtype
    if packed != dtype:
        raise ValueError(f"{layout.name}: record dtype {dtype} has padding or fields out of order, {why}")


def _check_zarr_dtype(layout: _Located) -> Any:
    """Zarr's (format 3) data type for the file's dtype, refusing one that Zarr lacks or
    would read differently once its metadata is written as JSON (another item size, field
    offsets or byte order)."""
    zarr_dtype = importlib.import_module("zarr.core.dtype")
    parse_data_type, get_data_type_from_json = zarr_dtype.parse_data_type, zarr_dtype.get_data_type_from_json
    dtype = layout.dtype
    _check_record(layout)
    if dtype.kind in "mM" and np.datetime_data(dtype)[0] == "generic":
        raise ValueError(f"{layout.name}: {dtype} has no time unit, which Zarr's datetime types need: refused")
    try:
        zdtype = parse_data_type(dtype, zarr_format=3)
        native = get_data_type_from_json(zdtype.to_json(zarr_format=3), zarr_format=3).to_native_dtype()
    except Exception as e:
        raise ValueError(f"{layout.name}: Zarr has no data type for {dtype} ({e})") from None
    # Simple types' byte order is the bytes codec's; a structured type's is its fields'.
    same = native == dtype if dtype.names is not None else native.newbyteorder("=") == dtype.newbyteorder("=")
    if not same:
        raise ValueError(f"{layout.name}: Zarr's data type for {dtype} reads as {native}: refused")
    return zdtype


class NpyParser:
    """A VirtualiZarr parser of ``.npy`` files and stored ``.npz`` members: each becomes
    one Zarr array whose chunks are the file's data where it lies: one chunk, or for an
    array over ``chunk_bytes`` (64 MiB) equal chunks along its contiguous axis
    (:func:`chunk_count` says how many, and why their rows must divide the array's).

    ``parser(url, registry)`` (as ``virtualizarr.open_virtual_dataset(url, registry=...,
    parser=NpyParser())`` calls it) reads the header through the registry's store and returns
    a ``ManifestStore`` holding one array:

    - named ``variable``, else the member's name (``member=``) or the file's stem;
    - with dimensions ``dims``, else ``dim_0``, ``dim_1``...; a 0-d array is a scalar;
    - its dtype as Zarr spells it, the bytes codec in the file's byte order, and Fortran
      order as a ``transpose`` codec; a record dtype is one variable of Zarr's
      ``structured`` type (its fields are strided inside the records, which no Zarr chunk
      can express one field at a time);
    - its fill value NaN for floats and complex, else Zarr's default (zero): no chunk is
      missing, so the fill value is never read, but xarray masks it in Zarr format 2
      (references VirtualiZarr writes) unless opened with ``mask_and_scale=False``.
    """

    def __init__(
        self,
        member: str | None = None,
        variable: str | None = None,
        dims: Any = None,
        *,
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:
        if chunk_bytes < 1:
            raise ValueError(f"chunk_bytes must be positive, not {chunk_bytes}")
        self.member = member
        self.variable = variable
        self.dims = dims
        self.chunk_bytes = chunk_bytes

    def __repr__(self) -> str:
        return (
            f"NpyParser(member={self.member!r}, variable={self.variable!r}, dims={self.dims!r}, "
            f"chunk_bytes={self.chunk_bytes!r})"
        )

    def __call__(self, url: str, registry: Any) -> Any:
        # Imported here, untyped: the package works (and type-checks) without VirtualiZarr.
        manifests = importlib.import_module("virtualizarr.manifests")
        create_v3_array_metadata = importlib.import_module("virtualizarr.manifests.utils").create_v3_array_metadata
        ChunkManifest, ManifestArray = manifests.ChunkManifest, manifests.ManifestArray
        ManifestGroup, ManifestStore = manifests.ManifestGroup, manifests.ManifestStore

        layout = _layout(url, self.member, _StoreSource(url, registry))
        variable, dims = _names(url, layout, self.member, self.variable, self.dims)
        zdtype = _check_zarr_dtype(layout)
        shape = layout.shape
        ndim = len(shape)
        chunks, entries = _chunks(layout, self.chunk_bytes)
        codecs: list[dict[str, Any]] = []
        if layout.fortran:
            codecs.append({"name": "transpose", "configuration": {"order": list(range(ndim))[::-1]}})
        if layout.dtype.itemsize > 1 and layout.dtype.names is None and layout.dtype.kind not in "SV":
            endian = "big" if layout.dtype.byteorder == ">" else "little"
            codecs.append({"name": "bytes", "configuration": {"endian": endian}})
        else:
            codecs.append({"name": "bytes"})
        try:
            metadata = create_v3_array_metadata(
                shape=shape,
                data_type=layout.dtype,
                chunk_shape=chunks,
                fill_value=zdtype.cast_scalar(np.nan) if layout.dtype.kind in "fc" else zdtype.default_scalar(),
                codecs=codecs,
                dimension_names=dims,
            )
        except Exception as e:
            raise ValueError(f"{layout.name}: Zarr refuses the array's metadata ({e})") from None
        if layout.nbytes:
            manifest = ChunkManifest(
                {
                    (".".join(map(str, index)) if ndim else "c"): {"path": url, "offset": offset, "length": length}
                    for index, offset, length in entries
                }
            )
        else:
            manifest = ChunkManifest({}, shape=tuple(0 if n == 0 else 1 for n in shape))
        group = ManifestGroup(arrays={variable: ManifestArray(metadata=metadata, chunkmanifest=manifest)})
        return ManifestStore(group=group, registry=registry)


def references(
    path_or_url: str | os.PathLike[str],
    member: str | None = None,
    *,
    variable: str | None = None,
    dims: Any = None,
    registry: Any = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> dict[str, Any]:
    """kerchunk's version-1 references (Zarr format 2) to a ``.npy`` file or a stored
    ``.npz`` member: one array, chunked, named and dimensioned as :class:`NpyParser` does
    (``_ARRAY_DIMENSIONS``), in the file's byte order and memory order.

    ``path_or_url``: a local path or ``file://`` URL, read directly; any other URL is read
    through ``registry`` (an obstore ``ObjectStoreRegistry``), header bytes only. The
    references name the chunk by ``path_or_url`` as given (a path made absolute)::

        refs = npy.virtualizarr.references("t.npy")
        xr.open_dataset("reference://", engine="zarr",
                        backend_kwargs={"consolidated": False, "storage_options": {"fo": refs}})
    """
    target = os.fspath(path_or_url)
    parsed = urlparse(target)
    if registry is not None:
        url = target
        layout = _layout(target, member, _StoreSource(target, registry))
    elif parsed.scheme in ("", "file") or len(parsed.scheme) == 1:  # (a Windows drive letter)
        local = unquote(parsed.path) if parsed.scheme == "file" else target
        local = str(Path(local).absolute())
        url = target if parsed.scheme == "file" else local
        layout = _layout(local, member)
    else:
        # Buckets and web servers through npy's own object stores (credentials from the
        # environment, as npy.load takes them).
        url = target
        layout = _layout(target, member)
    variable, dim_names = _names(url, layout, member, variable, dims)
    dtype = layout.dtype
    _check_record(layout)
    if np.dtype(dtype.descr if dtype.names is not None else dtype.str) != dtype:
        raise ValueError(f"{layout.name}: Zarr format 2 cannot spell the dtype {dtype}")
    ndim = len(layout.shape)
    chunks, entries = _chunks(layout, chunk_bytes)
    zarray = {
        "zarr_format": 2,
        "shape": list(layout.shape),
        "chunks": list(chunks),
        "dtype": dtype.descr if dtype.names is not None else dtype.str,
        "compressor": None,
        "filters": None,
        "fill_value": None,
        "order": "F" if layout.fortran else "C",
        "dimension_separator": ".",
    }
    refs: dict[str, Any] = {
        ".zgroup": _json({"zarr_format": 2}),
        ".zattrs": _json({}),
        f"{variable}/.zarray": _json(zarray),
        f"{variable}/.zattrs": _json({"_ARRAY_DIMENSIONS": dim_names}),
    }
    if layout.nbytes:
        for index, offset, length in entries:
            refs[f"{variable}/{'.'.join(map(str, index)) if ndim else '0'}"] = [url, offset, length]
    return {"version": 1, "refs": refs}


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
