"""NumPy's ``load``, ``save``, ``savez``, ``savez_compressed`` and ``NpzFile`` on npy's Rust
core: NumPy's signatures and behaviour (``numpy/lib/_npyio_impl.py`` is the reference),
npy's engine (``npy._npy``) underneath."""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import tempfile
import warnings
import weakref
import zipfile
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

import numpy as np
import numpy.lib.npyio

from . import _npy, _source

_StrPath: TypeAlias = str | os.PathLike[str]

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    _MapMode: TypeAlias = Literal["r", "r+", "c", "readonly", "readwrite", "copyonwrite"]

    # NumPy's stubs type its NpzFile as a generic Mapping; at run time it is a plain class.
    _NumpyNpzFile = numpy.lib.npyio.NpzFile[Any]
else:
    _NumpyNpzFile = numpy.lib.npyio.NpzFile


class _SupportsReadSeek(Protocol):
    """A file object ``load`` reads (as NumPy's stubs type it)."""

    def read(self, size: int = ..., /) -> bytes: ...
    def seek(self, offset: int, whence: int = ..., /) -> object: ...


class _SupportsWrite(Protocol):
    """A file object ``save`` writes."""

    def write(self, data: bytes, /) -> object: ...


__all__ = ["NpzFile", "append", "load", "load_many", "load_npz", "save", "savez", "savez_compressed"]

_MAX_HEADER_SIZE: int = _npy.MAX_HEADER_SIZE


def load(
    file: _StrPath | _SupportsReadSeek,
    mmap_mode: _MapMode | None = None,
    allow_pickle: bool | None = None,
    fix_imports: bool = True,
    encoding: Literal["ASCII", "latin1", "bytes"] = "ASCII",
    *,
    max_header_size: int = _MAX_HEADER_SIZE,
) -> Any:
    """Load the array of an ``.npy`` file, or open an ``.npz`` archive: ``numpy.load``.

    Gives what ``numpy.load`` gives, argument for argument: an ndarray (the same dtype,
    shape, order and bytes), an ``np.memmap`` under ``mmap_mode``, or an :class:`NpzFile`
    for an archive, whose members are read when asked for.

    file: a path (``str``, ``os.PathLike``) or a file object (``read`` and ``seek``), read
        from its current position and left right after the array (several arrays saved
        one after another into one file load one after another).
    mmap_mode: None, ``'r'``, ``'r+'`` or ``'c'`` (also ``'readonly'``, ``'readwrite'``,
        ``'copyonwrite'``): the ``.npy`` file is mapped as ``numpy.load`` maps it. For an
        archive opened by path (npy's extra), stored members are then mapped in place;
        deflated ones are read. ``'w+'`` is refused (NumPy empties the file): create
        maps with :func:`open_memmap`.
    allow_pickle: object arrays (and NumPy 2's ``StringDType`` arrays, which NumPy pickles)
        of data -- None, bool, int, float, complex, str, bytes; lists, tuples, dicts, sets,
        frozensets, ``OrderedDict``, ``Counter``; ndarrays of any dtype (ragged arrays,
        ``np.save`` of a dict of arrays) and NumPy scalars (``datetime64`` and records too);
        ``datetime``'s date, time, datetime, timedelta and fixed-offset timezone,
        ``Decimal``, ``Fraction``, ``UUID``, ``bytearray``, ``pathlib`` paths, ``range``,
        ``slice`` -- load by default and with ``True``: their pickle is checked by npy's
        restricted decoder first, and nothing in it runs but these types' own
        constructors, on arguments it has checked. A pickle holding anything else (an
        instance of another class) raises :class:`UnsafePickleError`. ``False``
        refuses object arrays, as NumPy does (``ValueError``); ``True`` also lifts
        ``max_header_size``, as NumPy does.
    fix_imports, encoding: how Python 2 pickles are read, as NumPy reads them
        (``encoding`` is ``'ASCII'``, ``'latin1'`` or ``'bytes'``).
    max_header_size: a longer header raises ``ValueError`` before anything else is read
        (NumPy's default, 10000).

    Raises ``OSError`` (``FileNotFoundError``, ...) when the file cannot be read,
    ``EOFError`` at the end of a file object, ``ValueError`` when the file is no valid
    ``.npy`` file (the message names the file), :class:`UnsafePickleError` for a pickle
    npy will not load.
    """
    source: Any
    mmap_mode = mmap_mode or None  # NumPy maps only when it is truthy
    if _source.is_url(file):
        return _load_url(file, mmap_mode, allow_pickle, fix_imports, encoding, max_header_size, npz=None)
    args = _npy.LoadArgs(mmap_mode, allow_pickle, fix_imports, encoding, max_header_size)
    if hasattr(file, "read"):
        source = file
        loaded = _npy.load_from_file(source, args)
    else:
        source = _path(file)
        loaded = _npy.load_from_path(source, args)
        source = os.fsdecode(source)
    if isinstance(loaded, _npy.NpzReader):
        kwargs = {"encoding": encoding, "fix_imports": fix_imports}
        return NpzFile._opened(loaded, source, not hasattr(file, "read"), allow_pickle, kwargs, max_header_size)
    return loaded


def load_many(
    files: Iterable[_StrPath],
    *,
    mmap_mode: _MapMode | None = None,
    threads: int | None = None,
) -> list[Any]:
    """Load many ``.npy`` files (and archives) at once: ``[npy.load(f, mmap_mode) for f in
    files]``, with the reads spread over threads and the GIL released.

    Each result is what :func:`load` gives for its file (an ndarray, an ``np.memmap``
    under ``mmap_mode``, an :class:`NpzFile`), in the order of ``files``. Plain arrays
    (regular files, or objects at URLs, holding one array of a dtype without Python objects)
    are read on ``threads`` threads (None: one per CPU this process may use) with the GIL
    released; the rest -- maps, archives, object arrays (checked as :func:`load` checks
    them: no pickle runs) -- one after another, as :func:`load` reads them.

    files: an iterable of paths (``str``, ``os.PathLike``) or URLs; not file objects, nor
        one path alone (``TypeError``).
    mmap_mode: as :func:`load`'s (local files only).
    threads: how many threads read at once (at least 1).

    Every file is tried. If any fails, the exception of the first failing one (in the
    order of ``files``) is raised, as :func:`load` raises it (``FileNotFoundError``,
    ``ValueError`` naming the file, ...), with notes (``__notes__``) naming its index and
    file, and each other failing file with its exception's type and message; no array is
    returned then.
    """
    if isinstance(files, (str, bytes, os.PathLike)):
        raise TypeError("load_many takes a list of files, not one: load one with npy.load")
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    # str (paths and URLs) as they are, which the engine tells apart: 0.06 us a file.
    sources = [file if type(file) is str else _many_path(file) for file in files]
    mmap_mode = mmap_mode or None
    if mmap_mode is not None:
        for source in sources:
            if _source.is_url(source):
                raise ValueError(f"{source}: mmap_mode maps local files only; load a URL without it")
    loaded = _npy.load_many(sources, mmap_mode, threads)
    for i, one in enumerate(loaded):
        if isinstance(one, _npy.NpzReader):
            source = sources[i]
            own = source if _source.is_url(source) else os.fsdecode(source)
            kwargs = {"encoding": "ASCII", "fix_imports": True}
            loaded[i] = NpzFile._opened(one, own, True, None, kwargs, _MAX_HEADER_SIZE)
    return loaded


def _many_path(file: Any) -> str | pathlib.PurePath:
    """A path of ``load_many`` that is not a ``str``, as the engine takes it."""
    if hasattr(file, "read"):
        raise TypeError("load_many takes paths or URLs, not file objects: load those with npy.load")
    return _path(file)


def _load_url(
    url: Any,
    mmap_mode: str | None,
    allow_pickle: bool | None,
    fix_imports: bool,
    encoding: str,
    max_header_size: int,
    npz: bool | None,
) -> Any:
    """``load`` (``npz=None``) or ``load_npz`` (``npz=True``) of the object at ``url``, read
    by the engine through npy-store: a ``.npy`` by a ranged read of its first bytes and
    one of the rest, an archive lazily (its directory, then each member as it is asked for,
    checked against its CRC-32)."""
    if mmap_mode is not None:
        raise ValueError(f"{url}: mmap_mode maps local files only; load a URL without it")
    args = _npy.LoadArgs(None, allow_pickle, fix_imports, encoding, max_header_size)
    loaded = _npy.load_from_url(url, args, bool(npz))
    if isinstance(loaded, _npy.NpzReader):
        kwargs = {"encoding": encoding, "fix_imports": fix_imports}
        return NpzFile._opened(loaded, url, True, allow_pickle, kwargs, max_header_size)
    return loaded


# Bytes read ahead by the file object of an archive at a URL that ``NpzFile.fid`` gives.
_URL_BUFFER = 8 << 20


def _path(file: Any) -> str | pathlib.PurePath:
    """A path as npy's engine takes it: a ``pathlib`` path as it is (maps keep it as their
    ``filename``, as NumPy's do), anything else (``bytes``, other ``os.PathLike``) as a
    ``str``."""
    return file if isinstance(file, pathlib.PurePath) else os.fsdecode(file)


def load_npz(
    file: _StrPath | _SupportsReadSeek,
    mmap_mode: _MapMode | None = None,
    allow_pickle: bool | None = None,
    fix_imports: bool = True,
    encoding: Literal["ASCII", "latin1", "bytes"] = "ASCII",
    *,
    max_header_size: int = _MAX_HEADER_SIZE,
) -> NpzFile:
    """Open an ``.npz`` archive as :func:`load` does, refusing anything that is not one."""
    if _source.is_url(file):
        mode = mmap_mode or None
        return _load_url(file, mode, allow_pickle, fix_imports, encoding, max_header_size, npz=True)  # type: ignore[no-any-return]
    kwargs = {"encoding": encoding, "fix_imports": fix_imports}
    own = not hasattr(file, "read")
    source: Any = os.fsdecode(file) if own else file  # type: ignore[arg-type]  # a path here
    args = _npy.LoadArgs(mmap_mode, allow_pickle, fix_imports, encoding, max_header_size)
    reader = _npy.open_npz(source, args)
    return NpzFile._opened(reader, source, own, allow_pickle, kwargs, max_header_size)


def save(file: _StrPath | _SupportsWrite, arr: ArrayLike, allow_pickle: bool = True, *, durable: bool = False) -> None:
    """Save an array to a ``.npy`` file: ``numpy.save``, byte for byte the file it writes.

    file: a path, which gets ``.npy`` appended unless it ends with it, or a file object,
        written at its position and left open after the array.
    allow_pickle: ``False`` refuses object arrays (``ValueError``) and writes nothing.
        Object arrays hold only what :func:`load` reads back (anything else raises
        ``TypeError`` and writes nothing), so every file saved loads with :func:`load`.
    durable: npy's extra. A path's file always appears whole or not at all: it is
        written beside its place and renamed over it when complete, so a failed or killed
        save leaves any old file as it was. ``durable=True`` also syncs the data to disk
        before the rename (and the directory after), so the file survives a power cut or
        a crash of the machine; ``numpy.save`` never syncs. It costs the time the disk
        takes to write the data.

    Warns as NumPy does: a dtype's metadata is not saved; headers that need format 2.0 or
    3.0; dtypes that NumPy saves as pickles (``StringDType``).
    """
    if hasattr(file, "write"):
        array = np.asanyarray(arr)
        _refuse_masked(array, _is_os_file(file))
        _warn_dtype(array.dtype)
        _warn_version(_npy.save_to_file(file, array, allow_pickle))
        return
    path = os.fsdecode(file)
    if not path.endswith(".npy"):
        path = path + ".npy"
    array = np.asanyarray(arr)
    _refuse_masked(array, True)
    _warn_dtype(array.dtype)
    if _source.is_url(path):
        with _spool(path) as spool:
            _warn_version(_npy.save_to_path(spool, array, allow_pickle, False))
            _npy.upload(spool, path)
        return
    _warn_version(_npy.save_to_path(path, array, allow_pickle, durable))


def _refuse_masked(array: NDArray[Any], os_file: bool) -> None:
    """NumPy's refusal of a masked array saved to a path or an OS file: ``np.save`` writes
    those with the array's ``tofile``, which ``np.ma.MaskedArray`` does not implement
    (other file objects, and archives' members, get the array's data without its mask)."""
    if os_file and type(array) is not np.ndarray and isinstance(array, np.ma.MaskedArray):
        raise NotImplementedError("MaskedArray.tofile() not implemented yet.")


def _is_os_file(file: object) -> bool:
    """Whether NumPy writes ``file`` as a file of the operating system's (``isfileobj``
    in ``numpy/lib/_format_impl.py``)."""
    if not isinstance(file, (io.FileIO, io.BufferedReader, io.BufferedWriter)):
        return False
    try:
        file.fileno()
    except OSError:
        return False
    return True


@contextlib.contextmanager
def _spool(url: str) -> Iterator[str]:
    """A local file to write what goes to ``url`` into, removed afterwards: uploads send
    a whole file, and the object appears only once it has all of it. The spool,
    ``upload`` with the URL's suffix, lies in a locked pending directory (npy-core's,
    ``.upload.npy.npy-upload.XXXXXX`` in the temporary directory, not named after the
    object: a key's last part may be as long as a file name may be); those that killed
    uploads left are removed by the next one."""
    suffix = os.path.splitext(url)[1]
    name = "upload" + (suffix if len(suffix) <= 16 else "")
    with _npy.PendingDir(os.path.join(tempfile.gettempdir(), name), ".npy-upload.") as pending:
        yield os.path.join(pending.path, name)


def savez(file: _StrPath | _SupportsWrite, *args: ArrayLike, allow_pickle: bool = True, **kwds: ArrayLike) -> None:
    """Save several arrays into one uncompressed ``.npz`` archive: ``numpy.savez``.

    Arrays given by keyword are stored under their names (member ``name.npy``), positional
    ones as ``arr_0``, ``arr_1``, ...; each member holds the bytes :func:`save` writes. A
    path gets ``.npz`` appended unless it ends with it and is written atomically (it
    appears whole or not at all); a file object is written at its position (through a
    temporary file when it cannot seek). Stored members are aligned so that
    ``load(path, mmap_mode='r')`` maps them in place.
    """
    _savez(file, args, kwds, False, allow_pickle)


def savez_compressed(
    file: _StrPath | _SupportsWrite, *args: ArrayLike, allow_pickle: bool = True, **kwds: ArrayLike
) -> None:
    """Save several arrays into one deflated ``.npz`` archive: ``numpy.savez_compressed``.

    As :func:`savez`, with members deflated to the size NumPy makes (zlib's level 6; a
    member of 1 MiB or more by a faster encoder where a sample of it says that comes
    within 1.5% of zlib's size), several members at once on as many threads as there are
    CPUs.
    """
    _savez(file, args, kwds, True, allow_pickle)


def _savez(
    file: Any, args: tuple[ArrayLike, ...], kwds: dict[str, ArrayLike], compress: bool, allow_pickle: bool
) -> None:
    if not hasattr(file, "write"):
        file = os.fsdecode(file)
        if not file.endswith(".npz"):
            file = file + ".npz"
    namedict = kwds
    for i, val in enumerate(args):
        key = f"arr_{i}"
        if key in namedict:
            raise ValueError(f"Cannot use un-named variables and keyword {key}")
        namedict[key] = val
    arrays = [np.asanyarray(val) for val in namedict.values()]
    for array in arrays:
        _warn_dtype(array.dtype, stacklevel=4)
    if _source.is_url(file):
        with _spool(file) as spool:
            for version in _npy.savez(spool, list(namedict), arrays, compress, allow_pickle, False):
                _warn_version(version, stacklevel=4)
            _npy.upload(spool, file)
        return
    for version in _npy.savez(file, list(namedict), arrays, compress, allow_pickle, False):
        _warn_version(version, stacklevel=4)


def append(file: _StrPath, arr: ArrayLike) -> None:
    """Append the rows of ``arr`` to the ``.npy`` file ``file``, in place (npy's own).

    The array's dtype, and its shape but for the first axis, must be the file's; the file
    grows along its first axis. Appends are locked (several processes may append to one
    file, each waiting for the others) and crash-safe: the header is rewritten only after
    the rows are on disk, so a killed append leaves the file as it was. Create the file
    with :func:`save`.
    """
    _npy.append(os.fsdecode(file), np.asanyarray(arr))


def _warn_dtype(dtype: np.dtype[Any], stacklevel: int = 3) -> None:
    """NumPy's warnings of ``dtype_to_descr`` (``numpy/lib/_format_impl.py``), pointing at
    the caller's line (``stacklevel`` frames up)."""
    if np.lib.format.drop_metadata(dtype) is not dtype:
        warnings.warn(
            "metadata on a dtype is not saved to an npy/npz. Use another format (such as pickle) to store it.",
            UserWarning,
            stacklevel=stacklevel,
        )
    if dtype.names is None and not type(dtype)._legacy:
        warnings.warn(
            "Custom dtypes are saved as python objects using the pickle protocol. "
            "Loading this file requires allow_pickle=True to be set.",
            UserWarning,
            stacklevel=stacklevel,
        )


def _warn_version(version: tuple[int, int], stacklevel: int = 3) -> None:
    """NumPy's warnings of a header that needs format 2.0 or 3.0, word for word (the
    missing space in "beread" is NumPy's, kept for filters that match it)."""
    if version == (2, 0):
        message = "Stored array in format 2.0. It can only beread by NumPy >= 1.9"
        warnings.warn(message, UserWarning, stacklevel=stacklevel)
    elif version == (3, 0):
        message = "Stored array in format 3.0. It can only be read by NumPy >= 1.17"
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


class _BagObj:
    """Attribute access to an archive's members (``npz.f.x``), as NumPy's ``BagObj``."""

    def __init__(self, obj: NpzFile) -> None:
        # A weak reference, so that an NpzFile is freed (and closed) by refcount alone.
        self._obj = weakref.proxy(obj)

    def __getattribute__(self, key: str) -> Any:
        try:
            return object.__getattribute__(self, "_obj")[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self) -> list[str]:
        return list(object.__getattribute__(self, "_obj").keys())


class NpzFile(_NumpyNpzFile):
    """An ``.npz`` archive: NumPy's ``NpzFile`` (this is a subclass of it), its members read
    by npy's engine when asked for.

    A read-only mapping of member names (``files``: the zip's names with ``.npy``
    stripped; ``'x.npy'`` finds ``'x'`` too) to arrays, each read on access. NumPy's
    attributes are here: ``files``, ``zip`` (a ``zipfile.ZipFile`` of the archive, opened
    on first use), ``fid`` (the file opened for a path; ``None`` for a caller's file
    object), ``f`` (``npz.f.x`` is ``npz['x']``), ``allow_pickle``, ``max_header_size``,
    ``pickle_kwargs``. Members that are not ``.npy`` files come back as ``bytes``, as
    NumPy gives them. Use it as a context manager, or call ``close()``.

    npy's extras: ``load_all()`` (every member, read several at once), and, for an archive
    opened by path with ``mmap_mode``, stored members mapped in place (``np.memmap``
    views of the archive's bytes).
    """

    # npy's default is None (plain values load), where NumPy's is False.
    allow_pickle: bool | None  # type: ignore[assignment]
    # NumPy's stubs type `f.x` as an NpzFile; it is the member.
    f: _BagObj  # type: ignore[assignment]
    _reader: _npy.NpzReader | None = None
    _source: Any = None
    _own_fid = False
    _opened_fid: IO[Any] | None = None
    _zip: zipfile.ZipFile | None = None
    _name: str = "object"

    def __init__(
        self,
        fid: _StrPath | IO[Any],
        own_fid: bool = False,
        allow_pickle: bool | None = None,
        pickle_kwargs: dict[str, Any] | None = None,
        *,
        max_header_size: int = _MAX_HEADER_SIZE,
        mmap_mode: _MapMode | None = None,
    ) -> None:
        kwargs = dict(pickle_kwargs or {})
        encoding = kwargs.get("encoding", "ASCII")
        fix_imports = kwargs.get("fix_imports", True)
        source: Any = fid if hasattr(fid, "read") else os.fsdecode(fid)
        args = _npy.LoadArgs(mmap_mode, allow_pickle, fix_imports, encoding, max_header_size)
        reader = _npy.open_npz(source, args)
        self._setup(reader, source, own_fid, allow_pickle, pickle_kwargs, max_header_size)

    @classmethod
    def _opened(
        cls,
        reader: _npy.NpzReader,
        source: Any,
        own: bool,
        allow_pickle: bool | None,
        pickle_kwargs: dict[str, Any] | None,
        max_header_size: int,
    ) -> NpzFile:
        self = cls.__new__(cls)
        self._setup(reader, source, own, allow_pickle, pickle_kwargs, max_header_size)
        return self

    def _setup(
        self,
        reader: _npy.NpzReader,
        source: Any,
        own: bool,
        allow_pickle: bool | None,
        pickle_kwargs: dict[str, Any] | None,
        max_header_size: int,
    ) -> None:
        self._reader = reader
        self._source = source
        self._own_fid = own
        names, members = reader.names(), reader.members()
        self.files = names
        # NumPy's: both spellings of each member, to the zip's name.
        self._files = dict(zip(names, members, strict=True))
        self._files.update(zip(members, members, strict=True))
        self._keys = dict(zip(names, names, strict=True))
        self._keys.update(zip(members, names, strict=True))
        self.allow_pickle = allow_pickle
        self.max_header_size = max_header_size
        self.pickle_kwargs = pickle_kwargs
        self.f = _BagObj(self)
        # NumPy's repr names the file it opened for a path; anything else is 'object'.
        if own:
            self._name = source if isinstance(source, str) else getattr(source, "name", "object")

    @property
    def fid(self) -> IO[Any] | None:
        """The file object of the archive, as NumPy's ``NpzFile.fid``: for an archive opened by
        path, a file npy opens on first use (and closes with the archive); else ``None``,
        or the caller's file object when ``own_fid`` was given."""
        if not self._own_fid or self._reader is None:
            return None
        if hasattr(self._source, "read"):
            return self._source  # type: ignore[no-any-return]
        if self._opened_fid is None and _source.is_url(self._source):
            # A file of ranged reads, for code that reads the archive itself.
            raw = _source.RangeFile(_source.open_source(self._source))
            self._opened_fid = io.BufferedReader(raw, _URL_BUFFER)
        if self._opened_fid is None:
            self._opened_fid = open(self._source, "rb")  # closed by close()
        return self._opened_fid

    @fid.setter
    def fid(self, value: IO[Any] | None) -> None:
        # NumPy's close() sets it to None; nothing else should.
        if value is None:
            self.close()
        else:
            raise AttributeError("NpzFile.fid is read-only")

    @property
    def zip(self) -> zipfile.ZipFile | None:
        """A ``zipfile.ZipFile`` of the archive (opened on first use; ``None`` once closed)."""
        if self._reader is None:
            return None
        if self._zip is None:
            fid = self.fid if _source.is_url(self._source) else None
            self._zip = zipfile.ZipFile(self._source if fid is None else fid)
        return self._zip

    @zip.setter
    def zip(self, value: zipfile.ZipFile | None) -> None:
        if value is None:
            self.close()
        else:
            raise AttributeError("NpzFile.zip is read-only")

    def close(self) -> None:
        """Close the archive (and the file it opened, or the file object it was given with
        ``own_fid``). Members mapped already stay valid."""
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        if self._zip is not None:
            self._zip.close()
            self._zip = None
        if self._opened_fid is not None:
            self._opened_fid.close()
            self._opened_fid = None
        if self._own_fid and hasattr(self._source, "close"):
            self._source.close()
        self._own_fid = False
        self.f = None  # type: ignore[assignment]  # breaks the reference cycle, as NumPy

    def __del__(self) -> None:
        self.close()

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __getitem__(self, key: str) -> Any:
        try:
            name = self._keys[key]
        except KeyError:
            raise KeyError(f"{key} is not a file in the archive") from None
        if self._reader is None:
            raise ValueError("the archive is closed")
        return self._reader.get(name)

    def __repr__(self) -> str:
        names = ", ".join(self.files[: self._MAX_REPR_ARRAY_COUNT])
        if len(self.files) > self._MAX_REPR_ARRAY_COUNT:
            names += "..."
        # NumPy's names the file it holds: none once closed ('object').
        name = self._name if self._own_fid else "object"
        return f"NpzFile {name!r} with keys: {names}"

    def load_all(self) -> dict[str, NDArray[Any] | bytes]:
        """Every member, in the archive's order: read several at once (one thread per CPU,
        deflated members inflated in parallel) from an archive opened by path; under
        ``mmap_mode``, stored members are mapped instead."""
        if self._reader is None:
            raise ValueError("the archive is closed")
        return self._reader.load_all()
