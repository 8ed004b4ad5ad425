"""``npy.scan``: NumPy files as one Arrow table for DuckDB, polars, pyarrow and pandas."""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from ._npy import Scan, open_scan

Rows = slice | range | tuple[int | None, int | None]

_P = ParamSpec("_P")
_R = TypeVar("_R")


@dataclass(frozen=True)
class OpenedScan:
    """A scan's files opened (``table``: all their columns and rows) and what was asked of
    it: ``rows`` as ``(start, stop)``, the ``columns`` and ``batch_rows`` given."""

    table: Scan
    start: int
    stop: int
    columns: Sequence[str] | None
    batch_rows: int | None


def open_table(
    source: str | os.PathLike[str],
    *,
    columns: Sequence[str] | None = None,
    rows: Rows | None = None,
    batch_rows: int | None = None,
    members: Sequence[str] | None = None,
    days_as_int64: bool = False,
    map_local_files: bool = False,
) -> OpenedScan:
    """The files of ``source`` opened: the one definition of the keywords of
    :func:`npy.scan` and ``npy.polars.scan_npy`` (their signatures are this one's, by
    :func:`signature_of`), checked here."""
    if isinstance(columns, str) or isinstance(members, str):
        raise TypeError("columns and members take a list of names, not one string")
    if batch_rows is not None and (not isinstance(batch_rows, int) or batch_rows < 1):
        raise ValueError(f"batch_rows must be a positive int, not {batch_rows!r}")
    names = list(members) if members is not None else None
    table = open_scan(os.fspath(source), names, batch_rows, days_as_int64, map_local_files)
    start, stop = _rows(rows, table.num_rows)
    return OpenedScan(table, start, stop, columns, batch_rows)


def signature_of(template: Callable[_P, OpenedScan]) -> Callable[[Callable[..., _R]], Callable[_P, _R]]:
    """A decorator giving a function ``f(source, **keywords)`` the signature of ``template``
    (for ``inspect.signature``, ``help`` and type checkers), with ``f``'s return type, and
    its checks of arguments (an unknown keyword is a ``TypeError`` naming ``f``): so
    ``scan`` and ``scan_npy`` take the keywords of :func:`open_table`, written once."""
    keywords = inspect.signature(template)

    def apply(f: Callable[..., _R]) -> Callable[_P, _R]:
        signature = keywords.replace(return_annotation=inspect.signature(f).return_annotation)

        @functools.wraps(f)
        def checked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                signature.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{f.__name__}() {e}") from None
            return f(*args, **kwargs)

        checked.__signature__ = signature  # type: ignore[attr-defined]
        return checked

    return apply


@signature_of(open_table)
def scan(source: str | os.PathLike[str], **keywords: Any) -> Scan:
    """A table over NumPy files that Arrow consumers read as a stream.

    ``source`` is one ``.npy`` file (a 1-D array of records gives one column per field,
    nested records as structs, subarrays as fixed-size lists; other arrays one column,
    ``values``), one ``.npz`` archive (its members as columns, all of one length), or a
    directory or glob pattern of ``.npy`` files with one dtype (or of ``.npz`` archives
    with the same members), read in path order as one table. An object array is decoded
    whole when the table opens (never by running its pickle): one of ``str`` (``None`` or
    NaN where missing) is a string column, a ragged array (every value a 1-d ndarray of one
    bool, integer, float, datetime64, timedelta64, str or bytes type, or ``None``) a list
    column of that type, a row per ndarray; other object arrays raise ``ValueError``.

    The result has ``schema``, ``num_rows``, ``column_names``, ``files``,
    ``__arrow_c_schema__`` and ``__arrow_c_stream__``; every stream is fresh and
    independent, so it can be handed to consumers that read it more than once::

        t = npy.scan("traces.npy", columns=["t0", "dt"])
        duckdb.sql("SELECT avg(dt) FROM t")
        polars.DataFrame(t); pyarrow.table(t); pandas.DataFrame.from_arrow(t)

    ``columns`` picks columns (by name, in that order), or parts of them, each decoded
    from its own bytes: a record's field (``"receiver.x"``), a subarray's item
    (``"samples[10]"``, ``"samples[-1]"``) or run of items (``"samples[2:5]"``), an N-d
    array's row's items in C order (``"values[3]"``); ``rows`` a range of rows (a
    ``slice`` or ``range`` of step 1, or ``(start, stop)``; negative numbers count from the
    end, as in Python); ``batch_rows`` the rows per record batch; ``members`` the members of
    an archive that make the table; ``days_as_int64`` gives ``datetime64[D]`` columns as
    Int64 days instead of Date32 (whose range they may exceed). Only the columns and rows
    asked are read.

    Local files are read, not mapped: a file changed or truncated while a stream reads it
    makes the stream raise. ``map_local_files=True`` maps local ``.npy`` files instead (a
    query of a few fields of wide records then reads 2-3 times faster), on the contract
    of ``np.load(mmap_mode="r")``: nothing modifies or truncates the files while a stream
    reads them, or the process may die of ``SIGBUS`` (a change is still reported, after
    the batch that saw it).

    Errors name the file: a missing file (``FileNotFoundError``), a file that is not a NumPy
    file or is corrupt (``ValueError``, ``npy.BadNpzFile`` for archives), files of different
    dtypes, an unknown column (``KeyError``), a part its column has not (``ValueError``:
    ``samples[16]`` of 16 items). A stream that meets a corrupt member or a file
    changed since the scan opened it raises in its consumer instead of giving its rows.
    """
    opened = open_table(source, **keywords)
    table, start, stop, columns = opened.table, opened.start, opened.stop, opened.columns
    if columns is None and (start, stop) == (0, table.num_rows):
        return table
    return table.select(list(columns) if columns is not None else None, start, stop)


def _rows(rows: Rows | None, total: int) -> tuple[int, int]:
    """``rows`` as ``(start, stop)`` of ``total`` rows, clamped as Python slices clamp."""
    if rows is None:
        return 0, total
    if isinstance(rows, tuple):
        if len(rows) != 2:
            raise ValueError(f"rows as a tuple is (start, stop), not {rows!r}")
        rows = slice(*rows)
    if isinstance(rows, range):
        if rows.step != 1:
            raise ValueError(f"rows must be consecutive (step 1), not {rows!r}")
        rows = slice(rows.start, rows.stop)
    if not isinstance(rows, slice):
        raise TypeError(f"rows takes a slice, a range or (start, stop), not {type(rows).__name__}")
    start, stop, step = rows.indices(total)
    if step != 1:
        raise ValueError(f"rows must be consecutive (step 1), not {rows!r}")
    return start, max(start, stop)
