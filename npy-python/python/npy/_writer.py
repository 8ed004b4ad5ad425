"""``npy.NpzWriter``: an ``.npz`` archive written one array at a time, stored, deflated or
Zstandard-compressed, on npy's Rust writer (``npy._npy.NpzArchive``)."""

from __future__ import annotations

import contextlib
import os
import warnings
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self, TypeAlias

import numpy as np

from . import _npy, _source
from ._npyio import _spool, _StrPath, _SupportsWrite, _warn_dtype, _warn_version

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    _Compression: TypeAlias = Literal["stored", "deflate", "zstd"]

__all__ = ["NpzWriter"]


class NpzWriter:
    """Write an ``.npz`` archive one array at a time: ``add(name, array)`` or
    ``writer[name] = array`` writes member ``name.npy`` (as ``np.savez(file, name=array)``
    names it) before it returns, so an archive may hold more than memory does.

    ::

        with npy.NpzWriter("survey.npz") as w:  # Zstandard, level 8
            for i, shot in enumerate(shots):
                w[f"shot_{i}"] = shot

    file: a path (``.npz`` appended unless it ends with it, as ``np.savez`` does; a URL
        as :func:`npy.savez` takes, uploaded once closed), or a writable binary file object,
        written at its position (through a temporary file when it cannot seek). A path's
        archive is written beside it and appears, whole, when the writer closes; an
        exception inside the ``with`` block (or a writer never closed) leaves no file and
        any old one as it was.
    compression: ``"zstd"`` (Zstandard, zip method 93: ``np.load`` reads it on Python
        3.14+, and on 3.11 to 3.13 after ``import zipfile_zstd``), ``"deflate"`` (what
        ``np.savez_compressed`` writes) or ``"stored"`` (``np.savez``; members can be
        memory-mapped).
    level: ``None`` for the default: Zstandard 8 (1 fastest to 22 smallest),
        deflate 6 (``np.savez_compressed``'s; 1 to 9); stored members take none. These are
        the defaults of ``npy copy --compression`` and of the Rust crate.
    allow_pickle: as :func:`npy.savez`: object arrays are pickled, and only those
        :func:`npy.load` reads back are written (anything else raises ``TypeError``);
        ``False`` refuses them (``ValueError``).
    durable: as :func:`npy.save`: a path's archive is synced to disk before it appears.

    The same arrays added in the same order give the same members' bytes, whatever the
    threads (members are dated 1980-01-01); a member compressed on a worker thread also
    gets a part index in the directory, by which readers inflate its parts at once.
    Members are compressed with the GIL released: those up to 16 MiB on worker threads
    (one per CPU) while ``add`` returns, larger ones from the array's memory as they go
    into the archive, never copied whole. Adding a name twice raises ``ValueError``, as
    does adding to a closed writer.
    """

    def __init__(
        self,
        file: _StrPath | _SupportsWrite,
        compression: _Compression = "zstd",
        level: int | None = None,
        *,
        allow_pickle: bool = True,
        durable: bool = False,
    ) -> None:
        self._upload: tuple[contextlib.ExitStack, str, str] | None = None
        if not isinstance(compression, str):
            raise TypeError(f"compression must be 'stored', 'deflate' or 'zstd', not {compression!r}")
        if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
            raise TypeError(f"level must be an int or None, not {level!r}")
        target: Any = file
        if not hasattr(file, "write"):
            target = os.fsdecode(file)
            if not target.endswith(".npz"):
                target = target + ".npz"
            if _source.is_url(target):
                stack = contextlib.ExitStack()
                spool = stack.enter_context(_spool(target))
                self._upload = (stack, spool, target)
                target, durable = spool, False
        try:
            self._archive = _npy.NpzArchive(target, compression, level, durable)
        except BaseException:
            if self._upload is not None:
                self._upload[0].close()
            raise
        self._allow_pickle = allow_pickle
        self._compression: _Compression = compression
        self._file = file

    @property
    def compression(self) -> _Compression:
        """The members' compression: ``"stored"``, ``"deflate"`` or ``"zstd"``."""
        return self._compression

    @property
    def level(self) -> int | None:
        """The members' compression level (the default when none was given; ``None`` for
        stored members)."""
        return self._archive.level

    @property
    def closed(self) -> bool:
        """Whether the archive was closed (written) or dropped after an exception."""
        return self._archive.closed

    def add(self, name: str, array: ArrayLike) -> None:
        """Write ``array`` as member ``name.npy`` (``np.save``'s bytes), compressed as the
        writer says. Raises ``ValueError`` for a name already added or a closed writer."""
        self._add(name, array)

    def __setitem__(self, name: str, array: ArrayLike) -> None:
        """``writer[name] = array``: :meth:`add`."""
        self._add(name, array)

    def _add(self, name: str, array: ArrayLike) -> None:
        if not isinstance(name, str):
            raise TypeError(f"an array's name must be a str, not {type(name).__name__}")
        arr = np.asanyarray(array)
        # Warnings point at the caller of add (or of writer[name] = ...), 4 frames up.
        _warn_dtype(arr.dtype, stacklevel=4)
        _warn_version(self._archive.add(name, arr, self._allow_pickle), stacklevel=4)

    def close(self) -> None:
        """Finish the archive: write its directory and put it in place (a path's file
        appears, replacing any old one; a URL's is uploaded). Closing again does nothing.
        When it fails, no file appears."""
        if self._archive.closed:
            return
        if self._upload is None:
            self._archive.close()
            return
        stack, spool, url = self._upload
        with stack:
            self._archive.close()
            _npy.upload(spool, url)

    def abort(self) -> None:
        """Drop the archive unfinished: a path's file never appears (any old one stays);
        a file object keeps what was written to it so far. ``with`` does this when its
        block raises."""
        self._archive.abort()
        if self._upload is not None:
            self._upload[0].close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def __del__(self) -> None:
        archive = getattr(self, "_archive", None)
        if archive is not None and not archive.closed:
            warnings.warn(
                f"npy.NpzWriter({self._file!r}) was never closed: the archive was not written",
                ResourceWarning,
                stacklevel=2,
            )
            self.abort()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<npy.NpzWriter {self._file!r} compression={self._compression!r} level={self.level!r} {state}>"
