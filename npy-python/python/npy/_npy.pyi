"""The Rust engine of the ``npy`` package (``npy-python/src``); use the package's functions."""

import os
import pickle
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

__version__: str
MAX_HEADER_SIZE: int

class UnsafePickleError(ValueError, pickle.UnpicklingError):
    """A pickle that npy's restricted decoder refuses: it holds more than NumPy arrays of
    plain values, or is not a valid pickle. npy never runs a pickle; a file you trust
    loads with ``numpy.load(file, allow_pickle=True)``."""

class NpzReader:
    """An ``.npz`` archive, its members read lazily: the engine of ``npy.NpzFile``."""

    @property
    def closed(self) -> bool: ...
    def names(self) -> list[str]: ...
    def members(self) -> list[str]: ...
    def get(self, name: str) -> Any: ...
    def load_all(self) -> dict[str, Any]: ...
    def close(self) -> None: ...

class Feeder:
    """The file CPython's unpickler reads: a pickle's bytes as far as npy's check approved them."""

    def read(self, size: int = -1) -> memoryview: ...
    def readinto(self, buffer: Any) -> int: ...
    def readline(self) -> memoryview: ...
    def peek(self, _size: int = 0) -> memoryview: ...

def load_from_path(
    path: str | bytes | os.PathLike[str],
    mmap_mode: str | None,
    allow_pickle: bool | None,
    fix_imports: bool,
    encoding: str,
    max_header_size: int,
) -> Any: ...
def load_from_file(
    file: IO[bytes],
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
def map_npy(path: str | bytes | os.PathLike[str], mode: str, max_header_size: int) -> np.memmap[Any, Any]: ...
def save_to_path(
    path: str | bytes | os.PathLike[str], arr: NDArray[Any], allow_pickle: bool, durable: bool
) -> tuple[int, int]: ...
def save_to_file(file: IO[bytes], arr: NDArray[Any], allow_pickle: bool) -> tuple[int, int]: ...
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
