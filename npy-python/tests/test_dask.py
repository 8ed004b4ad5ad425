"""npy.dask: .npy files (several, npz members) as lazy Dask arrays read by byte range,
and Dask arrays written into one .npy file in parallel."""

import fcntl
import logging
import os
import pickle
import signal
import subprocess
import sys
import warnings

import dask
import dask.array as da
import distributed
import numpy as np
import pytest

import npy
import npy.dask as nd
from conftest import NPY_FILES, NPZ_FILES, ids
from support import field_bytes

SYNC = {"scheduler": "sync"}

ARRAYS = {
    "f8_2d": np.arange(300.0).reshape(100, 3),
    "be_i4": np.arange(50, dtype=">i4"),
    "be_f8_2d": np.linspace(0, 1, 40, dtype=">f8").reshape(10, 4),
    "c16": np.arange(30).astype("<c16") * (1 + 2j),
    "bool": np.arange(33) % 3 == 0,
    "bytes": np.array([b"a", b"bc", b"def", b""] * 5, dtype="S3"),
    "unicode": np.array(["x", "yz", "\u00e9t\u00e9"] * 7, dtype="<U3"),
    "records": np.array(
        [(i, i * 0.5, (i, -i)) for i in range(23)], dtype=[("a", "<i2"), ("b", ">f8"), ("c", "<i4", (2,))]
    ),
    "aligned_records": np.array([(i, i) for i in range(17)], dtype=np.dtype([("a", "u1"), ("b", "<f8")], align=True)),
    "fortran_2d": np.asfortranarray(np.arange(60.0).reshape(12, 5)),
    "fortran_3d": np.asfortranarray(np.arange(120, dtype="<i8").reshape(4, 5, 6)),
    "0d": np.array(3.25),
    "0d_records": np.array((1, 2.0), dtype=[("a", "<i4"), ("b", "<f4")]),
    "empty": np.zeros((0, 3)),
    "empty_rows": np.zeros((5, 0), dtype="<i2"),
    "datetime": np.arange(12).astype("M8[s]"),
}


def computed(x):
    """`x` computed chunk by chunk (synchronously), each chunk checked to hold `x`'s dtype,
    and put together into an array of that dtype (Dask's own concatenation, like
    np.concatenate, makes some dtypes native-endian)."""
    blocks = dask.compute(*x.to_delayed().ravel(), **SYNC)
    dtype = blocks[0].dtype
    if not generic_time(dtype):
        assert dtype == x.dtype
    out = np.empty(x.shape, dtype)
    if generic_time(dtype):  # np.empty made it native-endian
        out = np.empty(x.size * dtype.itemsize, np.uint8).view(dtype).reshape(x.shape)
    starts = [np.cumsum((0, *c)) for c in x.chunks]
    for index, block in zip(np.ndindex(*x.numblocks), blocks, strict=True):
        assert block.dtype == dtype
        assert block.dtype.descr == dtype.descr
        out[tuple(slice(s[i], s[i + 1]) for s, i in zip(starts, index, strict=True))] = block
    return out


def generic_time(dtype):
    """Datetimes and timedeltas without units: NumPy gives a big-endian file's dtype to
    np.load's array, but makes every new array of it (Dask's meta) native-endian."""
    return dtype.kind in "mM" and np.datetime_data(dtype)[0] == "generic"


def same(ours, theirs):
    """What from_npy gave is what np.load gives: dtype, shape and values (the bytes of
    every field, read in logical order)."""
    assert ours.dtype == theirs.dtype
    assert ours.dtype.descr == theirs.dtype.descr
    assert ours.shape == theirs.shape
    assert field_bytes(np.ascontiguousarray(ours)) == field_bytes(np.ascontiguousarray(theirs))


@pytest.mark.parametrize("chunks", [1, 7, 10_000, "auto"])
@pytest.mark.parametrize("kind", list(ARRAYS))
def test_from_npy_equals_np_load(tmp_path, kind, chunks):
    path = tmp_path / "a.npy"
    np.save(path, ARRAYS[kind])
    x = nd.from_npy(path, chunks=chunks)
    expected = np.load(path)
    assert isinstance(x, da.Array)
    assert x.dtype == expected.dtype
    same(computed(x), expected)
    assert np.array_equal(x.compute(**SYNC), expected, equal_nan=expected.dtype.kind == "f")
    if x.ndim:
        # Split along the axis contiguous in the file only.
        axis = x.ndim - 1 if np.isfortran(expected) else 0
        assert all(len(c) == 1 for i, c in enumerate(x.chunks) if i != axis)
        if isinstance(chunks, int):
            assert max(x.chunks[axis]) <= chunks
    else:
        assert x.npartitions == 1


def test_explicit_chunk_sizes_and_per_axis_specs(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, ARRAYS["f8_2d"])
    assert nd.from_npy(path, chunks=(10, 30, 60)).chunks == ((10, 30, 60), (3,))
    assert nd.from_npy(path, chunks=(40, -1)).chunks == ((40, 40, 20), (3,))
    assert nd.from_npy(path, chunks={0: 25}).chunks == ((25,) * 4, (3,))
    with pytest.raises(ValueError, match="split axis 1"):
        nd.from_npy(path, chunks=(10, 2))
    fortran = tmp_path / "f.npy"
    np.save(fortran, ARRAYS["fortran_3d"])
    with pytest.raises(ValueError, match="only the last"):
        nd.from_npy(fortran, chunks={0: 1})


@pytest.mark.parametrize("path", NPY_FILES, ids=ids(NPY_FILES))
def test_every_corpus_file_reads_as_np_load(path):
    try:
        expected = np.load(path, allow_pickle=True, max_header_size=2**20)
    except Exception:
        expected = None
    if expected is None or not isinstance(expected, np.ndarray) or expected.dtype.hasobject:
        with pytest.raises((ValueError, OSError)):
            nd.from_npy(path, chunks=3, max_header_size=2**20).compute(**SYNC)
        return
    # Chunks of 3 rows, but not a million tasks for the large files.
    chunks = 3 if path.stat().st_size < 64 * 1024 else 100_000
    same(computed(nd.from_npy(path, chunks=chunks, max_header_size=2**20)), expected)


def test_directories_and_globs_concatenate_along_axis_0(tmp_path):
    parts = [np.arange(i * 100, i * 100 + n * 2, dtype="<i8").reshape(n, 2) for i, n in enumerate([5, 0, 7, 3])]
    for i, part in enumerate(parts):
        np.save(tmp_path / f"part{i}.npy", part)
    (tmp_path / "notes.txt").write_text("not an array")
    whole = np.concatenate(parts)
    for chunks in [1, 4, 6, 100, (2, 10, 3)]:
        x = nd.from_npy(tmp_path, chunks=chunks)
        same(computed(x), whole)
        same(computed(nd.from_npy(str(tmp_path / "part*.npy"), chunks=chunks)), whole)
    assert nd.from_npy(tmp_path / "part[23].npy").shape == (10, 2)
    # Fortran-order files: each chunk is a range of the last axis of every file.
    fparts = [np.asfortranarray(np.arange(n * 12.0).reshape(n, 3, 4)) for n in (2, 5)]
    for i, part in enumerate(fparts):
        np.save(tmp_path / f"f{i}.npy", part)
    x = nd.from_npy(tmp_path / "f*.npy", chunks=3)
    assert x.chunks == ((7,), (3,), (3, 1))
    same(computed(x), np.concatenate(fparts))


def test_mismatched_files_name_both(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((4, 3)))
    np.save(tmp_path / "b.npy", np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"b\.npy and .*a\.npy differ"):
        nd.from_npy(tmp_path)
    np.save(tmp_path / "b.npy", np.zeros((4, 3), dtype="<f4"))
    with pytest.raises(ValueError, match=r"b\.npy and .*a\.npy differ"):
        nd.from_npy(tmp_path)
    np.save(tmp_path / "b.npy", np.asfortranarray(np.zeros((4, 3))))
    with pytest.raises(ValueError, match=r"b\.npy and .*a\.npy differ"):
        nd.from_npy(tmp_path)
    with pytest.raises(FileNotFoundError):
        nd.from_npy(tmp_path / "none*.npy")
    with pytest.raises(FileNotFoundError):
        nd.from_npy(tmp_path / "missing.npy")


@pytest.mark.parametrize("save", [np.savez, npy.savez])
def test_stored_npz_members_read_by_range(tmp_path, save):
    arrays = {k: ARRAYS[k] for k in ("f8_2d", "records", "fortran_3d", "0d", "empty", "be_i4")}
    path = tmp_path / "a.npz"
    save(path, **arrays)
    for name, array in arrays.items():
        for member in (name, f"{name}.npy"):
            x = nd.from_npy(path, chunks=3, member=member)
            assert x.npartitions == (
                1 if array.ndim == 0 else max(1, -(-array.shape[-1 if np.isfortran(array) else 0] // 3))
            )
            same(computed(x), array)
    with pytest.raises(KeyError, match="nope"):
        nd.from_npy(path, member="nope")


def test_deflated_npz_members_are_one_chunk(tmp_path):
    path = tmp_path / "c.npz"
    np.savez_compressed(path, x=ARRAYS["f8_2d"], r=ARRAYS["records"])
    x = nd.from_npy(path, chunks=3, member="x")
    assert x.npartitions == 1
    same(computed(x), ARRAYS["f8_2d"])
    same(computed(nd.from_npy(path, member="r")), ARRAYS["records"])


def read_chars():
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


def test_one_chunk_reads_only_its_bytes(tmp_path):
    # A sparse file of 64 GiB of zeros: reading it whole (or copying a map of it) would
    # take minutes or fail to allocate; one chunk is 4 MiB.
    path = tmp_path / "huge.npy"
    rows = 2**30
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (rows, 8)})
        f.truncate(f.tell() + rows * 64)
    x = nd.from_npy(path, chunks=2**16)
    assert x.npartitions == 2**14
    before = read_chars()
    block = x.blocks[1000].compute(**SYNC)
    read = read_chars() - before
    assert block.shape == (2**16, 8) and not block.any()
    assert block.nbytes <= read < block.nbytes + 64 * 1024, read


def test_the_graph_is_small_picklable_and_named_by_the_file(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(100_000.0))
    x = nd.from_npy(path, chunks=1000)
    graph = dict(x.__dask_graph__())
    assert len(graph) == 100
    assert len(pickle.dumps(graph)) < 100 * 1024  # the data are 800 KB
    same(pickle.loads(pickle.dumps(x)).compute(**SYNC), np.load(path))
    assert nd.from_npy(path, chunks=1000).name == x.name
    assert nd.from_npy(path, chunks=500).name != x.name
    np.save(path, np.arange(100_001.0))
    assert nd.from_npy(path, chunks=1000).name != x.name


def test_errors_name_the_file(tmp_path):
    path = tmp_path / "short.npy"
    np.save(path, np.arange(1000.0))
    data = path.read_bytes()
    path.write_bytes(data[:-8])
    with pytest.raises(ValueError, match=r"short\.npy.*truncated"):
        nd.from_npy(path)
    # Cut short after the graph was made: the short read names the file.
    path.write_bytes(data)
    x = nd.from_npy(path, chunks=100)
    path.write_bytes(data[:-8])
    with pytest.raises(ValueError, match=r"short\.npy.*shorter than its header"):
        x.compute(**SYNC)
    x.blocks[0].compute(**SYNC)  # what is there reads

    magic = tmp_path / "magic.npy"
    magic.write_bytes(b"\x93NUMPX" + data[6:])
    with pytest.raises(ValueError, match=r"magic\.npy.*not a \.npy file"):
        nd.from_npy(magic)
    objects = tmp_path / "objects.npy"
    np.save(objects, np.array([1, "a", None], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"objects\.npy.*Python objects"):
        nd.from_npy(objects)
    np.savez(tmp_path / "o.npz", o=np.array([{}], dtype=object))
    with pytest.raises(ValueError, match=r"o\.npz.*member 'o'.*Python objects"):
        nd.from_npy(tmp_path / "o.npz", member="o")
    (tmp_path / "dir").mkdir()
    np.save(tmp_path / "dir" / "a.npy", np.zeros(3))
    np.save(tmp_path / "dir" / "b.npy", np.zeros(3, dtype="<i4"))
    with pytest.raises(ValueError, match=r"dir/b\.npy and .*dir/a\.npy differ"):
        nd.from_npy(tmp_path / "dir")


@pytest.mark.parametrize("npz_file", NPZ_FILES, ids=ids(NPZ_FILES))
def test_corpus_archives_read_as_np_load(npz_file):
    # Every archive of the corpus loads in NumPy (the corrupt ones are not among them).
    with np.load(npz_file, allow_pickle=True) as z:
        expected = {name: z[name] for name in z.files}
    for name, array in expected.items():
        if not isinstance(array, np.ndarray) or array.dtype.hasobject:
            continue
        same(computed(nd.from_npy(npz_file, chunks=2, member=name, max_header_size=2**20)), array)


def dask_arrays():
    base = da.from_array(np.arange(240.0).reshape(12, 20), chunks=(5, 20))
    return {
        "rows": base,
        "blocks": base.rechunk((5, 7)),
        "3d": da.arange(3 * 4 * 5, chunks=7, dtype="<i2").reshape(3, 4, 5).rechunk((2, 3, 2)),
        "records": da.from_array(ARRAYS["records"], chunks=4),
        "big_endian": da.from_array(ARRAYS["be_f8_2d"], chunks=(3, 1)),
        "0d": da.from_array(np.array(7.5)),
        "empty": da.zeros((0, 4), chunks=2),
        "fortran_input": da.from_array(ARRAYS["fortran_3d"], chunks=(2, 2, 2)),
    }


@pytest.mark.parametrize("kind", list(dask_arrays()))
def test_to_npy_writes_np_saves_bytes(tmp_path, kind):
    arr = dask_arrays()[kind]
    with dask.config.set(scheduler="threads"):
        assert nd.to_npy(arr, tmp_path / "out.npy") is None
    values = arr.compute(**SYNC)
    values = np.ascontiguousarray(values) if values.ndim else values  # to_npy writes C order
    np.save(tmp_path / "np.npy", values)
    assert (tmp_path / "out.npy").read_bytes() == (tmp_path / "np.npy").read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["np.npy", "out.npy"]
    # And it reads back through from_npy.
    same(computed(nd.from_npy(tmp_path / "out.npy", chunks=2)), values)


def test_to_npy_appends_the_suffix_and_warns_as_np_save(tmp_path):
    nd.to_npy(da.ones(3, chunks=2), tmp_path / "plain")
    assert np.array_equal(np.load(tmp_path / "plain.npy"), np.ones(3))
    long_dtype = np.dtype([(f"field_{i:05d}_" + "x" * 40, "<f4") for i in range(1400)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nd.to_npy(da.from_array(np.zeros(2, dtype=long_dtype), chunks=1), tmp_path / "wide.npy")
    assert any("format 2.0" in str(w.message) for w in caught)
    assert np.load(tmp_path / "wide.npy", max_header_size=2**20).dtype == long_dtype
    with pytest.raises(ValueError, match="Python objects"):
        nd.to_npy(da.from_array(np.array([1, None], dtype=object), chunks=1), tmp_path / "objects.npy")
    with pytest.raises(ValueError, match="chunk sizes"):
        x = da.arange(10, chunks=3)
        nd.to_npy(x[x > 3], tmp_path / "unknown.npy")
    assert sorted(os.listdir(tmp_path)) == ["plain.npy", "wide.npy"]


def boom_on_last(block, block_info=None):
    if block_info[0]["chunk-location"][0] == block_info[0]["num-chunks"][0] - 1:
        raise RuntimeError("boom")
    return block


def test_a_failed_to_npy_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "out.npy"
    np.save(out, np.arange(3))
    old = out.read_bytes()
    failing = da.arange(1000.0, chunks=100).map_blocks(boom_on_last, dtype="<f8")
    with pytest.raises(RuntimeError, match="boom"), dask.config.set(scheduler="threads"):
        nd.to_npy(failing, out)
    assert out.read_bytes() == old
    assert os.listdir(tmp_path) == ["out.npy"]


def test_leftovers_of_killed_runs_are_swept(tmp_path):
    left = tmp_path / ".out.npy.npy-dask.Ab12Cd"
    left.mkdir()
    (left / "out.npy").write_bytes(b"half a file")
    other = tmp_path / ".other.npy.npy-dask.Zz99zz"
    other.mkdir()
    live = tmp_path / ".out.npy.npy-dask.Live00"
    live.mkdir()
    unrelated = tmp_path / ".out.npy.npy-dask.toolong"
    unrelated.mkdir()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "data.npy").write_bytes(b"someone's")
    link = tmp_path / ".out.npy.npy-dask.Link00"
    link.symlink_to(kept)
    held = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # a writer still alive
        nd.to_npy(da.arange(10, chunks=3), tmp_path / "out.npy")
        # Another target's left directory goes too; the live one, the link (though it
        # names a directory of the pattern) and other names stay.
        assert sorted(os.listdir(tmp_path)) == [
            ".out.npy.npy-dask.Link00",
            ".out.npy.npy-dask.Live00",
            ".out.npy.npy-dask.toolong",
            "kept",
            "out.npy",
        ]
        assert os.listdir(kept) == ["data.npy"]
    finally:
        os.close(held)
    assert np.array_equal(np.load(tmp_path / "out.npy"), np.arange(10))


def test_a_killed_writers_file_is_swept(tmp_path):
    # A process killed while its hidden directory and file exist (its lock dies with it).
    code = (
        "import os, signal, sys, numpy as np, npy._npy as n; "
        "d = n.PendingDir(os.path.join(sys.argv[1], 'out.npy'), '.npy-dask.'); "
        "n.create_npy(os.path.join(d.path, 'out.npy'), np.dtype('<f8'), [1000], False, None); "
        "os.kill(os.getpid(), signal.SIGKILL)"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False)
    assert done.returncode == -signal.SIGKILL
    (left,) = os.listdir(tmp_path)
    assert left.startswith(".out.npy.npy-dask.")
    assert os.listdir(tmp_path / left) == ["out.npy"]
    nd.to_npy(da.arange(10, chunks=3), tmp_path / "out.npy")
    assert os.listdir(tmp_path) == ["out.npy"]


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            processes=True,
            n_workers=2,
            threads_per_worker=1,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as c,
    ):
        yield c


def test_on_a_cluster_of_processes(client, tmp_path):
    rows = np.arange(40_000.0).reshape(10_000, 4)
    np.save(tmp_path / "a.npy", rows[:6000])
    np.save(tmp_path / "b.npy", rows[6000:])
    x = nd.from_npy(tmp_path / "*.npy", chunks=1000)
    (tmp_path / "out").mkdir()
    with dask.config.set(scheduler=client):
        assert x.sum().compute() == rows.sum()
        nd.to_npy(x * 2, tmp_path / "out" / "twice.npy")
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids
    np.save(tmp_path / "np.npy", rows * 2)
    assert (tmp_path / "out" / "twice.npy").read_bytes() == (tmp_path / "np.npy").read_bytes()
    assert os.listdir(tmp_path / "out") == ["twice.npy"]
    archive = tmp_path / "m.npz"
    npy.savez(archive, m=rows)
    with dask.config.set(scheduler=client):
        assert nd.from_npy(archive, chunks=999, member="m").sum().compute() == rows.sum()


def shot_files(folder, counts=(700, 1, 0, 1300)):
    """Shots of seismic traces in `folder`: their paths and NumPy's concatenation."""
    from support import seismic_traces

    folder.mkdir()
    arrays = [seismic_traces(n, start=1000 * k) for k, n in enumerate(counts)]
    for k, a in enumerate(arrays):
        np.save(folder / f"shot_{k:02d}.npy", a)
    return np.concatenate(arrays)


def test_read_npy_is_numpys_table_in_partitions(tmp_path):
    joined = shot_files(tmp_path / "shots")
    df = nd.read_npy(tmp_path / "shots", columns=["flags", "t0", "receiver.x", "samples[10]"], partition_rows=256)
    assert df.npartitions == 8 and df.known_divisions and df.divisions[-1] == len(joined) - 1
    assert list(df.columns) == ["flags", "t0", "receiver.x", "samples[10]"]
    got = df.compute()
    assert got.index.tolist() == list(range(len(joined)))
    np.testing.assert_array_equal(got["flags"].to_numpy(), joined["flags"])
    np.testing.assert_array_equal(got["t0"].to_numpy(), joined["t0"])
    np.testing.assert_array_equal(got["receiver.x"].to_numpy(), joined["receiver"]["x"])
    np.testing.assert_array_equal(got["samples[10]"].to_numpy(), joined["samples"][:, 10])
    means = df.groupby("flags")["t0"].mean().compute().sort_index()
    for flag, mean in means.items():
        assert mean == pytest.approx(joined["t0"][joined["flags"] == flag].mean(), rel=1e-12)
    rows = df.loc[690:710].compute()  # across the first file's end, by the known divisions
    np.testing.assert_array_equal(rows["t0"].to_numpy(), joined["t0"][690:711])
    whole = nd.read_npy(tmp_path / "shots" / "*.npy")
    assert whole.npartitions == 1 and len(whole.compute()) == len(joined)
    everything = whole.compute()
    np.testing.assert_array_equal(np.array(everything["samples"].tolist()), joined["samples"])
    np.testing.assert_array_equal(everything["receiver"].struct.field("y").to_numpy(), joined["receiver"]["y"])
    np.testing.assert_array_equal(everything["samples"].list[3].to_numpy(), joined["samples"][:, 3])


def test_read_npy_refuses_a_file_changed_after_it_and_bad_sizes(tmp_path):
    joined = shot_files(tmp_path / "shots", counts=(50, 50))
    df = nd.read_npy(tmp_path / "shots", columns=["t0"], partition_rows=10)
    np.save(tmp_path / "shots" / "shot_01.npy", joined[:60])
    with pytest.raises(ValueError, match=r"shot_01\.npy: the file changed since read_npy"):
        df.compute()
    for bad in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match="partition_rows must be a positive int"):
            nd.read_npy(tmp_path / "shots", partition_rows=bad)
    with pytest.raises(FileNotFoundError, match="missing"):
        nd.read_npy(tmp_path / "missing")


def test_read_npy_on_a_cluster_of_processes(client, tmp_path):
    joined = shot_files(tmp_path / "shots")
    df = nd.read_npy(tmp_path / "shots", columns=["trace_id", "dt"], partition_rows=500)
    with dask.config.set(scheduler=client):
        total = df["dt"].sum().compute()
        ids = df["trace_id"].compute()
    assert total == pytest.approx(joined["dt"].astype(np.float64).sum(), rel=1e-6)
    np.testing.assert_array_equal(ids.to_numpy(), joined["trace_id"])
