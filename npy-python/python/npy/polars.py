"""NumPy files as polars ``LazyFrame``: ``npy.polars.scan_npy``.

Imports polars only when used (``import npy`` never does).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import polars as pl

from ._scan import open_table, signature_of


@signature_of(open_table)
def scan_npy(source: str | os.PathLike[str], **keywords: Any) -> pl.LazyFrame:
    """A lazy polars frame over NumPy files, as ``npy.scan`` reads them.

    polars pushes its projection, ``head``/``n_rows``, batch size and filters into the scan: the
    columns a filter reads are read first, the filter is evaluated (by polars, on those
    columns, so its answers are polars' own), and the other columns are then read only at
    the rows it kept: of ``.npy`` files, and of archives whose filter reads members that
    are not records (a filter on a record member judges rows once they are read).
    Columns may be parts, as in :func:`npy.scan` (``pl.col("samples[3]") > 0``).
    Arguments as :func:`npy.scan`::

        lf = npy.polars.scan_npy("traces.npy")
        lf.filter(pl.col("dt") > 0.01).select("t0").collect()
    """
    opened = open_table(source, **keywords)
    base, start, stop, columns, batch_rows = opened.table, opened.start, opened.stop, opened.columns, opened.batch_rows
    chosen = list(columns) if columns is not None else base.column_names
    empty = pl.DataFrame(base.select(chosen, start, start))

    def read(
        with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, batch_size: int | None
    ) -> Iterator[pl.DataFrame]:
        wanted = chosen if with_columns is None else with_columns
        # polars' batch size is a hint; the caller's batch_rows wins.
        rows_per_batch = batch_size if batch_rows is None and batch_size else None
        end = stop if n_rows is None or predicate is not None else min(stop, start + n_rows)
        judged = predicate.meta.root_names() if predicate is not None else []
        # Into the scan only when that saves reading: the columns beyond the predicate's
        # are then read at the rows it kept. Else each batch is filtered here, its
        # predicate's columns read with it and dropped after.
        pushed = bool(judged) and not set(wanted) <= set(judged)
        if pushed:
            assert predicate is not None
            condition = predicate.fill_null(False)

            def keep(batch: Any) -> np.ndarray[Any, np.dtype[np.bool_]]:
                return pl.DataFrame(batch).select(condition).to_series().to_numpy()

            batches = base.select(wanted, start, end, rows_per_batch).batches(judged, keep)
        else:
            columns_read = [*wanted, *(c for c in judged if c not in wanted)]
            batches = base.select(columns_read, start, end, rows_per_batch).batches()
        left = n_rows
        for batch in batches:
            frame = pl.DataFrame(batch)
            if predicate is not None and not pushed:
                frame = frame.filter(predicate).select(wanted)
            if left is not None:
                frame = frame.head(left)
                left -= frame.height
            yield frame
            if left == 0:
                return

    return pl.io.plugins.register_io_source(
        read, schema=empty.schema, is_pure=True, explain_name="npy", explain_detail=", ".join(base.files[:3])
    )
