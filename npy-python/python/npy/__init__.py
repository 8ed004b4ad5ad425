"""NumPy's ``.npy`` and ``.npz`` files on npy's Rust core.

``npy.load``, ``npy.save``, ``npy.savez``, ``npy.savez_compressed`` and
``npy.open_memmap`` take NumPy's arguments and give NumPy's results (code written for
``numpy.load`` runs unchanged with ``npy.load`` in its place), with these differences:

- object arrays load without ever running a pickle: npy's restricted decoder checks it
  first, and a pickle holding anything but data (plain values, arrays, NumPy scalars, the
  standard library's data types) raises :class:`UnsafePickleError`, unless its class is
  one the user trusts to run (:func:`add_safe_globals`, :func:`safe_globals`);
- paths are written atomically (a failed or killed save leaves the old file whole), and
  ``save(..., durable=True)`` also syncs to disk;
- archives opened by path map their stored members under ``mmap_mode``, and
  ``NpzFile.load_all()`` reads every member in parallel;
- ``npy.NpzWriter`` writes an archive one array at a time, stored, deflated or
  Zstandard-compressed (deterministic: the same arrays give the same bytes);
- ``npy.append`` grows a ``.npy`` file in place, locked and crash-safe.

Paths may be URLs (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``file://``) in
``load``, ``load_npz``, ``save``, ``savez``, ``scan``, ``npy.dask.from_npy`` and ``open``,
which gives a lazy array read by the byte ranges each index needs.

``npy.scan`` gives NumPy files to Arrow consumers (DuckDB, polars, pyarrow, pandas) as
streams; ``npy.polars.scan_npy`` as a polars ``LazyFrame``; ``npy.dask.from_npy`` as a
Dask array. Those modules import polars and Dask when first used, never with ``npy``.

Reads and writes of paths run with the GIL released.
"""

from ._format import open_memmap
from ._lazy import LazyArray, open
from ._npy import BadNpzFile, Scan, UnsafePickleError, __version__
from ._npyio import NpzFile, append, load, load_many, load_npz, save, savez, savez_compressed
from ._safe import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from ._scan import scan
from ._writer import NpzWriter

__all__ = [
    "BadNpzFile",
    "LazyArray",
    "NpzFile",
    "NpzWriter",
    "Scan",
    "UnsafePickleError",
    "__version__",
    "add_safe_globals",
    "append",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "load_many",
    "load_npz",
    "open",
    "open_memmap",
    "safe_globals",
    "save",
    "savez",
    "savez_compressed",
    "scan",
]
