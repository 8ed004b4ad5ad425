"""Training loops (issue 57): ``npy.open`` of many shards as one lazy array. Every index
kind against NumPy's on the concatenated array; lists, directories, globs and stored npz
members; batches read alike by worker pools under ``fork`` and ``spawn``; shards truncated
or replaced after opening, and shards that differ, refused naming them; the GIL released
while a batch is gathered."""

import multiprocessing
import os
import pickle
import re
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import npy

RECORD = np.dtype([("id", "<i4"), ("x", "<f8"), ("tag", "S3"), ("v", "<f4", (2,))])
ROWS = [7, 1, 0, 30, 12]  # rows 0, 7, 8, 8 and 38 on: an empty shard, a one-row one


def make(tmp_path, dtype="<f4", tail=(4,), rows=ROWS, name="s"):
    """Shards `name00.npy`... of `rows` rows each; their concatenation."""
    parts, start = [], 0
    for i, n in enumerate(rows):
        size = n * int(np.prod(tail))
        if np.dtype(dtype).names:
            a = np.zeros(n, dtype)
            a["id"] = np.arange(start, start + n)
            a["x"] = a["id"] * 0.5
            a["tag"] = [b"t%d" % (k % 10) for k in range(n)]
            a["v"] = np.arange(2 * n).reshape(n, 2) + start
        else:
            a = (np.arange(size) + start * 1000).astype(dtype).reshape(n, *tail)
        np.save(tmp_path / f"{name}{i:02d}.npy", a)
        parts.append(a)
        start += n
    return [str(tmp_path / f"{name}{i:02d}.npy") for i in range(len(rows))], np.concatenate(parts).astype(dtype)


def same(ours, theirs):
    assert isinstance(ours, np.ndarray | np.void | np.generic), type(ours)
    assert ours.dtype == theirs.dtype and np.shape(ours) == np.shape(theirs)
    for name in ours.dtype.names or [None]:
        assert np.array_equal(ours if name is None else ours[name], theirs if name is None else theirs[name])


INDICES = [
    0,
    -1,
    8,
    49,
    np.int64(20),
    slice(None),
    slice(3, 30),
    slice(5, 9),
    slice(None, None, 3),
    slice(40, 2, -5),
    slice(None, None, -1),
    slice(60, 70),
    [],
    [3, 3, 0, 49, 7, 8, -1, 20],
    np.array([49, 0, 25, 24, 23, 8, 7]),
    np.array([-1, -50, 0, 49, -1, 24, -26]),
    np.arange(50)[::-2],
    np.arange(50) % 3 == 0,
    np.zeros(50, bool),
    Ellipsis,
    (slice(None), 2),
    (np.array([4, 1]), slice(1, 3)),
    (Ellipsis, 0),
    (5, -1),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_every_index_kind_gives_numpys_rows_of_the_concatenation(tmp_path, index):
    paths, whole = make(tmp_path)
    a = npy.open(paths)
    assert len(a) == 50 and a.shape == (50, 4) and a.dtype == whole.dtype and a.ndim == 2
    same(a[index], whole[index])


@pytest.mark.parametrize(
    "index", [3, [9, 0, 0, 40], np.array([-1, 9, 0, 0, 40]), slice(2, 50, 7), np.arange(50) > 44], ids=repr
)
def test_records_and_their_fields(tmp_path, index):
    paths, whole = make(tmp_path, RECORD, ())
    a = npy.open(paths)
    same(a[index], whole[index])
    same(a["x"][index], whole["x"][index])
    same(a["v"][index], whole["v"][index])
    same(a[["id", "tag"]][index], whole[["id", "tag"]][index])


def test_asarray_and_out_of_bounds(tmp_path):
    paths, whole = make(tmp_path, ">i8", (2, 3))
    a = npy.open(paths)
    same(np.asarray(a), whole)
    same(np.asarray(a, dtype="<f8"), whole.astype("<f8"))
    for bad in (50, -51, [0, 50], np.array([-51]), np.array([3, 50])):
        with pytest.raises(IndexError, match=f"index {np.ravel(bad)[-1]} is out of bounds for axis 0 with size 50"):
            a[bad]
        with pytest.raises(IndexError, match="out of bounds"):
            whole[bad]
    with pytest.raises(IndexError, match="boolean index"):
        a[np.ones(3, bool)]


def test_a_list_a_directory_and_a_glob_are_one_array(tmp_path):
    paths, whole = make(tmp_path)
    (tmp_path / "notes.txt").write_text("not a shard")
    for source in (paths, tuple(paths), tmp_path, str(tmp_path / "s*.npy"), [paths[0], str(tmp_path / "s0[1-4].npy")]):
        a = npy.open(source)
        assert a.files == paths, source
        same(a[[49, 0, 13]], whole[[49, 0, 13]])
    single = npy.open(paths[3])
    same(single[[0, 29]], whole[[8, 37]])


def test_stored_npz_members(tmp_path):
    parts = [np.arange(i * 10, i * 10 + 10, dtype="<f8").reshape(5, 2) for i in range(3)]
    for i, p in enumerate(parts):
        np.savez(tmp_path / f"a{i}.npz", x=p, y=np.zeros(1))
    whole = np.concatenate(parts)
    for member in ("x", "x.npy"):
        a = npy.open(str(tmp_path / "a*.npz"), member)
        same(a[[14, 0, 7]], whole[[14, 0, 7]])
        assert "member 'x" in repr(a)
    np.savez_compressed(tmp_path / "a1.npz", x=parts[1])
    with pytest.raises(ValueError, match=r"a1\.npz.*compressed member") as raised:
        npy.open([tmp_path / "a0.npz", tmp_path / "a1.npz"], "x")
    assert "a0.npz" not in str(raised.value)


def test_shards_that_differ_are_refused_naming_both(tmp_path):
    paths, _ = make(tmp_path)
    np.save(tmp_path / "other_shape.npy", np.zeros((3, 5), "<f4"))
    np.save(tmp_path / "other_dtype.npy", np.zeros((3, 4), "<f8"))
    for other in ("other_shape.npy", "other_dtype.npy"):
        with pytest.raises(ValueError) as raised:
            npy.open([paths[0], paths[1], str(tmp_path / other)])
        message = str(raised.value)
        assert other in message and os.path.basename(paths[0]) in message, message
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match=r"objects.npy.*Python objects"):
        npy.open([paths[0], str(tmp_path / "objects.npy")])
    np.save(tmp_path / "fortran.npy", np.asfortranarray(np.zeros((3, 4), "<f4")))
    with pytest.raises(ValueError, match=r"fortran.npy.*Fortran"):
        npy.open([paths[0], str(tmp_path / "fortran.npy")])


def test_a_shard_truncated_or_replaced_after_opening_raises_naming_it(tmp_path):
    paths, whole = make(tmp_path)
    a = npy.open(paths)
    same(a[[0, 49]], whole[[0, 49]])
    with open(paths[3], "r+b") as f:  # 30 rows of 16 bytes: rows 8..37
        f.truncate(os.path.getsize(paths[3]) - 16)
    with pytest.raises(ValueError, match=r"s03\.npy") as raised:
        a[[37]]
    assert "changed" in str(raised.value)
    same(a[[0, 1]], whole[[0, 1]])  # the other shards still read
    with pytest.raises(ValueError, match=r"s03.npy.*truncated"):
        npy.open(paths)  # opened now: shorter than its header says
    np.save(paths[3], whole[8:38])
    b = npy.open(paths)
    np.save(paths[0], np.full((7, 4), -1, "<f4"))  # replaced whole (a new file, same size)
    with pytest.raises(ValueError, match=r"s00.npy.*changed"):
        b[[0]]
    same(b[[8, 37]], whole[[8, 37]])


def test_opening_fails_cleanly(tmp_path):
    paths, _ = make(tmp_path)
    with pytest.raises(FileNotFoundError) as raised:
        npy.open([paths[0], str(tmp_path / "missing.npy")])
    assert "missing.npy" in str(raised.value)
    with pytest.raises(ValueError, match="empty list"):
        npy.open([])
    with pytest.raises(TypeError, match="glob pattern or a list"):
        npy.open([paths[0], 3])
    with pytest.raises((FileNotFoundError, ValueError), match="nothing"):
        npy.open(str(tmp_path / "nothing*.npy"))


def test_a_pytorch_map_style_dataset_as_it_stands(tmp_path):
    paths, whole = make(tmp_path)
    a = npy.open(paths)
    # What torch.utils.data's fetcher does with a batch sampler: __getitems__ if the dataset
    # has it, else one __getitem__ a sample; default_collate then stacks the samples.
    batch = [44, 2, 2, 19]
    assert len(a) == 50
    same(a.__getitems__(batch), whole[batch])
    same(np.stack([a[i] for i in batch]), whole[batch])
    same(np.stack(list(a.__getitems__(batch))), whole[batch])
    script = f"import sys, npy; a = npy.open({paths!r}); a.__getitems__([1, 2]); a[3]; print('torch' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout == "False\n"
    )


def test_pickles_as_its_files(tmp_path):
    paths, whole = make(tmp_path, RECORD, ())
    a = npy.open(paths)
    again = pickle.loads(pickle.dumps(a))
    assert again.files == paths and len(pickle.dumps(a)) < 2000
    same(again[[3, 40]], whole[[3, 40]])
    same(pickle.loads(pickle.dumps(a[["x", "id"]]))[[5]], whole[["x", "id"]][[5]])
    same(pickle.loads(pickle.dumps(a["v"]))[[5, 6]], whole["v"][[5, 6]])
    np.save(paths[4], np.zeros(31, RECORD))
    with pytest.raises(ValueError, match="changed since the array was pickled"):
        pickle.loads(pickle.dumps(a))


BATCHES = [[49, 0, 7, 8, 20], [1, 2, 3], [48, 47, 46, 0, 0], list(range(0, 50, 6))]
LAZY = None


def read_batch(batch):
    return LAZY[batch]


def read_pickled(args):
    lazy, batch = args
    return lazy[batch]


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_worker_pools_read_equal_batches(tmp_path, method):
    global LAZY
    paths, whole = make(tmp_path)
    LAZY = npy.open(paths)
    same(LAZY[[0, 49]], whole[[0, 49]])  # the parent read first: its threads exist
    context = multiprocessing.get_context(method)
    with warnings.catch_warnings():
        # Python warns of fork() in a process with threads (npy's runtime has some): the
        # child opens its files and runtime anew, which is what this test checks.
        warnings.simplefilter("ignore", DeprecationWarning)
        with context.Pool(2) as pool:
            # Waited for at most two minutes: a worker that hangs (a lock or thread of the
            # parent's that fork copied) fails the test instead of hanging the suite.
            if method == "fork":
                got = pool.map_async(read_batch, BATCHES).get(timeout=120)
            else:
                got = pool.map_async(read_pickled, [(LAZY, b) for b in BATCHES]).get(timeout=120)
    for batch, rows in zip(BATCHES, got, strict=True):
        same(rows, whole[batch])
    LAZY = None


def runs_beside(call, rounds=5):
    """How often another Python thread ran inside the middle half of `call()`'s time, over
    `rounds` calls. The other thread stamps the time while a call is under way, then
    sleeps half a millisecond (so it never holds the GIL for long, and the caller gets it
    back at once when its call returns); a stamp counts when it falls strictly inside the
    middle half of that call's window. A call that holds the GIL throughout lets that
    thread run only around its work, never in the middle; one that releases it while it
    works lets it run there."""
    stamps, state = [], {"on": False, "running": True}

    def stamp():
        while state["running"]:
            if state["on"]:
                stamps.append(time.perf_counter())
            time.sleep(0.0005)

    thread = threading.Thread(target=stamp)
    thread.start()
    inside = 0
    try:
        time.sleep(0.02)
        for _ in range(rounds):
            stamps.clear()
            state["on"] = True
            start = time.perf_counter()
            call()
            end = time.perf_counter()
            state["on"] = False
            quarter = (end - start) / 4
            inside += sum(start + quarter < t < end - quarter for t in list(stamps))
    finally:
        state["running"] = False
        thread.join(timeout=10)
    assert not thread.is_alive(), "the stamping thread did not stop"
    return inside


def test_the_gil_is_released_during_a_gather(tmp_path):
    # 8 shards of 4,000 rows of 256 <f8 (2 KiB each): gathers of 20,000 rows, 40 MiB.
    paths, whole = make(tmp_path, "<f8", (256,), rows=[4000] * 8)
    a = npy.open(paths)
    rows = np.random.default_rng(57).integers(0, len(a), 20_000)
    same(a[rows], whole[rows])  # and the page cache is warm
    assert runs_beside(lambda: a[rows]) > 0, "no other thread ran in the middle of npy's gathers"


def test_the_gil_check_sees_a_call_that_holds_the_gil():
    """The control of the test above: a regular expression scan of 100 MB, which holds the
    GIL throughout (tens of milliseconds), lets no other thread run in its middle."""
    text = "a" * 100_000_000
    assert runs_beside(lambda: re.search("b", text)) == 0
