"""Every door that takes a directory, a glob pattern or a bucket's prefix finds the same
files, in the same order, by the engine's one rule (``npy_store::find_files``):
``npy.open``, ``npy.scan``, ``npy.dask.from_npy`` and xarray's ``engine="npy"``;
``npy.load_many`` of what that rule finds is the same rows too. (SQL reads the same tree through the same rule:
npy-datafusion's ``tests/sql/tables.rs`` checks its rows in this order, and npy-cli's
``tests/npy/sql.rs`` the ``npy sql`` tool.)"""

import glob
import os

import numpy as np
import pyarrow as pa
import pytest
import xarray as xr

import npy
import npy.dask
import npy.polars
from npy import _npy, _source
from support import bounded


def tree(tmp_path):
    """A directory of `.npy` files in nested folders, files named like a folder, one whose
    suffix is in upper case (as Windows tools name files), and a file that is not NumPy's;
    the rows of each file are its own numbers. The order is the paths' as text, which
    DataFusion lists a table's files in, and Python's ``sorted(...)``."""
    top = tmp_path / "runs"
    (top / "a" / "deep").mkdir(parents=True)
    (top / "b").mkdir()
    files = {
        "RUN.NPY": 2,  # a .npy file by its suffix in any case; upper case sorts first
        "a.npy": 3,  # sorts before the folder a/'s files, as "." sorts before "/"
        "a-b.npy": 6,  # and this before both: "-" sorts before "."
        "a/x.npy": 2,
        "a/deep/y.npy": 4,
        "b/z.npy": 1,
        "c.npy": 5,
    }
    for i, (name, rows) in enumerate(files.items()):
        # Through a file object: np.save adds ".npy" to a name that lacks it in lower case.
        with open(top / name, "wb") as f:
            np.save(f, np.arange(rows, dtype="<i8") + 100 * i)
    (top / "notes.txt").write_text("not an array")
    (top / "b" / "image.png").write_bytes(b"\x89PNG")
    order = ["RUN.NPY", "a-b.npy", "a.npy", "a/deep/y.npy", "a/x.npy", "b/z.npy", "c.npy"]
    want = np.concatenate([np.load(top / name) for name in order])
    return top, order, want


def test_every_door_finds_the_same_files_in_the_same_order(tmp_path):
    top, order, want = tree(tmp_path)
    found = _npy.find(str(top))
    assert [str(p)[len(str(top)) + 1 :] for p in found] == order
    every = glob.glob(str(top / "**" / "*"), recursive=True)
    assert found == sorted(p for p in every if p.lower().endswith(".npy"))
    # A pattern gives the files it matches as written, of any suffix, in the same order:
    # `*.npy` is not RUN.NPY (glob's rule), `*.[nN][pP][yY]` is.
    pattern = str(top / "**" / "*.npy")
    assert _npy.find(pattern) == found[1:]
    assert _npy.find(str(top / "**" / "*.[nN][pP][yY]")) == found
    upper = len(np.load(top / "RUN.NPY"))
    for source, rows in ((top, want), (pattern, want[upper:])):
        np.testing.assert_array_equal(npy.open(source)[:], rows)
        scanned = pa.table(npy.scan(source)).column(0).to_numpy()
        np.testing.assert_array_equal(scanned, rows)
        np.testing.assert_array_equal(npy.dask.from_npy(source, chunks=2).compute(scheduler="sync"), rows)
        with xr.open_dataset(source, engine="npy") as ds:
            np.testing.assert_array_equal(next(iter(ds.data_vars.values())).values, rows)
    np.testing.assert_array_equal(np.concatenate(npy.load_many(found)), want)


def test_every_door_finds_a_buckets_prefix_as_a_directory(tmp_path, s3):
    # The same tree in a bucket (moto's S3) and at a file:// prefix: the same objects, in
    # the same order, through every door.
    top, order, want = tree(tmp_path)
    for path in sorted(top.rglob("*")):
        if path.is_file():
            s3.put_object(Bucket="bkt", Key=f"runs/{path.relative_to(top).as_posix()}", Body=path.read_bytes())
    s3.put_object(Bucket="bkt", Key="runs-other/d.npy", Body=(top / "c.npy").read_bytes())  # not under runs/
    for prefix in ("s3://bkt/runs/", f"file://{top}/"):
        found = _npy.find(prefix)
        assert found == [prefix + name for name in order], prefix
        np.testing.assert_array_equal(npy.open(prefix)[:], want)
        np.testing.assert_array_equal(npy.open(prefix)[[9, 0, 20]], want[[9, 0, 20]])
        np.testing.assert_array_equal(pa.table(npy.scan(prefix)).column(0).to_numpy(), want)
        np.testing.assert_array_equal(npy.dask.from_npy(prefix, chunks=2).compute(scheduler="sync"), want)
        with xr.open_dataset(prefix, engine="npy") as ds:
            assert list(ds.data_vars) == ["runs"]
            np.testing.assert_array_equal(ds["runs"].values, want)
        np.testing.assert_array_equal(np.concatenate(npy.load_many(found)), want)
    with pytest.raises(FileNotFoundError, match=r"s3://bkt/nothing/.*no .npy or .npz file"):
        npy.open("s3://bkt/nothing/")
    s3.put_object(Bucket="bkt", Key="runs/b/w.npz", Body=b"PK")
    with pytest.raises(ValueError, match=r"s3://bkt/runs/.*a table is one kind"):
        npy.scan("s3://bkt/runs/")


def test_every_door_refuses_a_directory_of_two_kinds_or_of_nothing(tmp_path):
    top, _, _ = tree(tmp_path)
    with open(top / "b" / "W.NPZ", "wb") as f:  # an archive by its suffix in any case
        np.savez(f, x=np.zeros(3))
    doors = {
        "open": npy.open,
        "scan": npy.scan,
        "dask": lambda s: npy.dask.from_npy(s),
        "xarray": lambda s: xr.open_dataset(s, engine="npy"),
    }
    for name, door in doors.items():
        with pytest.raises(ValueError, match=r"a table is one kind") as raised:
            door(top)
        assert "runs" in str(raised.value), name
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("nothing here")
    for name, door in doors.items():
        with pytest.raises(FileNotFoundError, match=r"no .npy or .npz file") as raised:
            door(empty)
        assert "empty" in str(raised.value), name


def test_every_door_tells_a_url_from_a_path_by_one_rule():
    # npy_store::is_url, which the engine's doors ask too: a scheme of a letter, then
    # letters, digits, "+", "." or "-", before "://".
    urls = ["s3://bucket/runs/", "file:///data/x.npy", "https://h/x.npy", "a+b.c-d://x"]
    paths = ["runs/2024://odd.npy", "1s3://x", "://x", "s_3://x", "plain.npy", "C:\\data\\x.npy"]
    assert [_source.is_url(u) for u in urls] == [True] * len(urls)
    assert [_source.is_url(p) for p in paths] == [False] * len(paths)
    assert not _source.is_url(b"s3://bucket/x.npy")
    assert not _source.is_url(os.fsdecode(b"s3://raw\xe9\xff.npy"))  # not UTF-8: a path's bytes


def fifo_doors(top):
    """Every door of npy given ``top`` (a directory, a pattern or a file), by name."""
    return {
        "npy.load": lambda: npy.load(top),
        "npy.open": lambda: npy.open(top),
        "npy.load_many": lambda: npy.load_many(_source.expand(top)),
        "npy.scan": lambda: npy.scan(top),
        "npy.polars.scan_npy": lambda: npy.polars.scan_npy(top).collect(),
        "npy.dask.from_npy": lambda: npy.dask.from_npy(top),
        "npy.dask.read_npy": lambda: npy.dask.read_npy(top),
        "xr.open_dataset": lambda: xr.open_dataset(top, engine="npy"),
        "xr.open_mfdataset": lambda: xr.open_mfdataset(
            _source.expand(top), engine="npy", combine="nested", concat_dim="dim_0"
        ),
    }


@pytest.mark.parametrize("given", ["dir", "pattern", "fifo"])
def test_every_door_refuses_a_fifo_at_once_naming_it(tmp_path, given):
    """A FIFO among a directory's or a pattern's files, or named itself: every door fails
    at once, naming it (opening a FIFO waits for a writer that never comes: xarray's and
    ``from_npy``'s read of its header did, through object_store's local store; and a
    directory's walk left it out unsaid)."""
    np.save(tmp_path / "a.npy", np.arange(10))
    fifo = tmp_path / "fifo.npy"
    os.mkfifo(fifo)
    top = {"dir": str(tmp_path), "pattern": str(tmp_path / "*.npy"), "fifo": str(fifo)}[given]
    for door, call in fifo_doors(top).items():
        if door == "npy.load" and given != "fifo":
            continue  # a directory or pattern is no file to load
        with pytest.raises(OSError, match="is a FIFO, not a file") as raised:
            bounded(call, seconds=10)
        assert str(fifo) in str(raised.value), door
