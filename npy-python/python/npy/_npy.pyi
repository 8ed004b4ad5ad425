# The Rust engine of the `npy` package (npy-python/src); use the package's functions.

import os
import pickle
import zipfile
from typing import Any, final

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MAX_HEADER_SIZE",
    "BadNpzFile",
    "NpzReader",
    "UnsafePickleError",
    "__version__",
    "append",
    "create_npy",
    "load_from_file",
    "load_from_path",
    "map_npy",
    "open_npz",
    "save_to_file",
    "save_to_path",
    "savez",
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
def open_npz(
    file: Any,
    mmap_mode: str | None,
    allow_pickle: bool | None,
    fix_imports: bool,
    encoding: str,
    max_header_size: int,
) -> NpzReader: ...
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
