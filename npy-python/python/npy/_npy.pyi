# The Rust engine of the `npy` package (npy-python/src); use the package's functions.

import os
import pickle
import zipfile
from collections.abc import Callable
from typing import Any, Protocol, final

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MAX_HEADER_SIZE",
    "BadNpzFile",
    "NpzArchive",
    "NpzReader",
    "PendingDir",
    "Scan",
    "ScanBatches",
    "Shards",
    "Source",
    "UnsafePickleError",
    "__version__",
    "append",
    "create_npy",
    "find",
    "is_url",
    "load_from_file",
    "load_from_path",
    "load_from_url",
    "load_many",
    "locate",
    "map_npy",
    "open_npz",
    "open_scan",
    "open_shards",
    "open_source",
    "save_to_file",
    "save_to_path",
    "savez",
    "set_safe_globals",
    "upload",
]
__version__: str
MAX_HEADER_SIZE: int

# A pickle npy's restricted decoder refuses (npy never runs a pickle).
class UnsafePickleError(ValueError, pickle.UnpicklingError): ...

# An .npz archive that is broken: its zip structure, or a member's CRC-32 or size.
class BadNpzFile(ValueError, zipfile.BadZipFile): ...

# An .npz archive, its members read lazily: the engine of npy.NpzFile.
@final
class NpzReader:
    @property
    def closed(self) -> bool: ...
    def names(self) -> list[str]: ...
    def members(self) -> list[str]: ...
    def get(self, name: str) -> Any: ...
    def load_all(self) -> dict[str, Any]: ...
    def close(self) -> None: ...

# An .npz archive being written, one member at a time: the engine of npy.NpzWriter.
@final
class NpzArchive:
    def __new__(cls, file: Any, compression: str, level: int | None, durable: bool) -> NpzArchive: ...
    @property
    def level(self) -> int | None: ...
    @property
    def closed(self) -> bool: ...
    def add(self, name: str, arr: NDArray[Any], allow_pickle: bool) -> tuple[int, int]: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...

def load_from_path(
    path: str | os.PathLike[str],
    mmap_mode: str | None,
    allow_pickle: bool | None,
    fix_imports: bool,
    encoding: str,
    max_header_size: int,
) -> Any: ...
def load_from_file(
    file: Any,
    mmap_mode: str | None,
    allow_pickle: bool | None,
    fix_imports: bool,
    encoding: str,
    max_header_size: int,
) -> Any: ...
def load_from_url(
    url: str,
    allow_pickle: bool | None,
    fix_imports: bool,
    encoding: str,
    max_header_size: int,
    npz: bool,
) -> Any: ...
def load_many(files: list[Any], mmap_mode: str | None, threads: int | None) -> list[Any]: ...
def open_npz(
    file: Any,
    mmap_mode: str | None,
    allow_pickle: bool | None,
    fix_imports: bool,
    encoding: str,
    max_header_size: int,
) -> NpzReader: ...
def set_safe_globals(names: list[tuple[str, str]]) -> None: ...
def map_npy(path: str | os.PathLike[str], mode: str, max_header_size: int) -> np.memmap[Any, Any]: ...
def save_to_path(
    path: str | bytes | os.PathLike[str], arr: NDArray[Any], allow_pickle: bool, durable: bool
) -> tuple[int, int]: ...
def save_to_file(file: Any, arr: NDArray[Any], allow_pickle: bool) -> tuple[int, int]: ...
def savez(
    file: Any, names: list[str], arrays: list[NDArray[Any]], compress: bool, allow_pickle: bool, durable: bool
) -> list[tuple[int, int]]: ...
def create_npy(
    path: str | bytes | os.PathLike[str],
    dtype: np.dtype[Any],
    shape: tuple[int, ...],
    fortran_order: bool,
    version: tuple[int, int] | None,
) -> tuple[int, tuple[int, int]]: ...
def append(path: str | bytes | os.PathLike[str], arr: NDArray[Any]) -> None: ...

# npy-core's pending directory: hidden beside its target, locked, removed by close().
@final
class PendingDir:
    def __new__(cls, target: str | os.PathLike[str], infix: str) -> PendingDir: ...
    @property
    def path(self) -> str: ...
    def close(self) -> None: ...
    def __enter__(self) -> PendingDir: ...
    def __exit__(self, *args: object) -> None: ...

# A table over NumPy files for Arrow consumers: npy.scan's result.
@final
class Scan:
    @property
    def schema(self) -> Any: ...
    @property
    def num_rows(self) -> int: ...
    @property
    def column_names(self) -> list[str]: ...
    @property
    def files(self) -> list[str]: ...
    def select(self, columns: list[str] | None, start: int, stop: int, batch_rows: int | None = None) -> Scan: ...
    def __arrow_c_schema__(self) -> Any: ...
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...
    def batches(
        self, predicate_columns: list[str] | None = None, predicate: Callable[[Any], NDArray[np.bool_]] | None = None
    ) -> ScanBatches: ...
    def __len__(self) -> int: ...

# The record batches of a Scan (each has __arrow_c_array__).
@final
class ScanBatches:
    def __iter__(self) -> ScanBatches: ...
    def __next__(self) -> Any: ...

def open_scan(
    source: str,
    members: list[str] | None = None,
    batch_rows: int | None = None,
    days_as_int64: bool = False,
    map_local_files: bool = False,
) -> Scan: ...

# An object at a URL (or a local file), as its HEAD found it, read by byte ranges.
@final
class Source:
    @property
    def name(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def stamp(self) -> str: ...
    @property
    def fetched(self) -> int: ...
    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[bytes]: ...
    def read(self, start: int, end: int) -> bytes: ...
    def read_into(self, start: int, out: NDArray[np.uint8]) -> None: ...

def open_source(file: str) -> Source: ...

# Many NumPy files as one array along axis 0 (npy.open's engine), read by rows.
@final
class Shards:
    @property
    def files(self) -> list[str]: ...
    @property
    def starts(self) -> list[int]: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def row_bytes(self) -> int: ...
    @property
    def fetched(self) -> int: ...
    @property
    def requests(self) -> int: ...
    def gather(self, rows: NDArray[np.int64]) -> NDArray[np.uint8]: ...
    def read_rows(self, start: int, stop: int) -> NDArray[np.uint8]: ...

def open_shards(
    sources: list[str], member: str | None = None, max_header_size: int = ..., map_local_files: bool = False
) -> Shards: ...
def upload(path: str | os.PathLike[str], url: str) -> None: ...

# What locate reads in place of opening a file: its size and bytes start..end.
class _Reader(Protocol):
    @property
    def size(self) -> int: ...
    def read(self, start: int, end: int, /) -> bytes: ...

# The files a path, directory or glob pattern names (npy_store::find), sorted by path.
def find(source: str) -> list[str]: ...
def is_url(s: object) -> bool: ...

# (dtype, fortran_order, shape, data offset, compressed, compression name) of a .npy file or
# an .npz member.
def locate(
    file: str, member: str | None = None, max_header_size: int = ..., reader: _Reader | None = None
) -> tuple[np.dtype[Any], bool, tuple[int, ...], int, bool, str]: ...
