"""npy.NpzWriter (issue 58): archives written one member at a time, stored, deflated or
Zstandard-compressed, read back by NumPy's own np.load (Zstandard through the pinned
zipfile-zstd on Python 3.11 to 3.13, as CPython 3.14's zipfile reads it unpatched) equal to
the arrays written; deterministic; atomic; with clear errors that leave no file."""

import io
import os
import subprocess
import sys
import textwrap
import threading
import zipfile

import numpy as np
import pytest

import npy
from support import WriteOnly

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401  (patches zipfile in place: method 93)

METHODS = {"stored": zipfile.ZIP_STORED, "deflate": zipfile.ZIP_DEFLATED, "zstd": 93}
COMPRESSIONS = [("stored", None), ("deflate", None), ("deflate", 1), ("zstd", None), ("zstd", 1), ("zstd", 19)]

RECORD = np.dtype([("id", "<u4"), ("pos", [("x", "<f8"), ("y", ">f4")]), ("tag", "S3"), ("w", "<f4", (2,))])

# One array of each dtype family np.save writes without a pickle, and object arrays.
FAMILIES = {
    "bool": np.array([True, False, True]),
    "u1": np.arange(256, dtype="u1"),
    "i8_be": np.arange(-500, 500, dtype=">i8").reshape(10, 100),
    "f2": np.linspace(-2, 2, 9, dtype="<f2"),
    "f8": np.arange(100_000, dtype="<f8") % 97,
    "c16_be": (np.arange(6) + 1j * np.arange(6)).astype(">c16"),
    "longdouble": np.arange(5, dtype=np.longdouble) / 3,
    "datetime": np.array(["2024-01-02T03:04", "NaT", "1970-01-01T00:00"], dtype="M8[m]"),
    "timedelta": np.array([1, -2, 3], dtype="m8[ns]"),
    "bytes": np.array([b"", b"ab", b"xyz"]),
    "unicode": np.array(["a", "bc", "地震"]),
    "void": np.array([b"\x00\x01", b"\xff\xfe"], dtype="V2"),
    "records": np.array([(1, (2.5, -1.0), b"abc", (1, 2)), (3, (0.0, 7.5), b"z", (3, 4))], dtype=RECORD),
    "subarray": np.zeros(3, dtype=("<i2", (2, 2))) + 7,
    "fortran": np.asfortranarray(np.arange(12, dtype="<u2").reshape(3, 4)),
    "scalar": np.array(3.25),
    "empty": np.zeros((0, 3), dtype="<i8"),
    "objects": np.array([1, "two", None, (3.5, b"x"), {"k": [1, 2]}], dtype=object),
}


def numpy_reads(archive):
    """Every member as NumPy's np.load gives it (objects allowed), with each member's zip
    method as Python's zipfile sees it."""
    with zipfile.ZipFile(archive) as z:
        methods = {info.filename: info.compress_type for info in z.infolist()}
    if isinstance(archive, io.BytesIO):
        archive.seek(0)
    with np.load(archive, allow_pickle=True) as f:
        return {name: f[name] for name in f.files}, methods


def assert_same(got, want, name):
    assert got.dtype == want.dtype and got.shape == want.shape, name
    assert got.flags.f_contiguous == want.flags.f_contiguous or got.ndim < 2, name
    if want.dtype.hasobject:
        assert got.tolist() == want.tolist(), name
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize(("compression", "level"), COMPRESSIONS)
@pytest.mark.parametrize("how", ["add", "setitem"])
def test_every_dtype_family_reads_back_through_np_load(tmp_path, compression, level, how):
    path = tmp_path / "a.npz"
    with npy.NpzWriter(path, compression, level) as w:
        for name, array in FAMILIES.items():
            if how == "add":
                w.add(name, array)
            else:
                w[name] = array
    got, methods = numpy_reads(path)
    assert list(got) == list(FAMILIES)
    assert set(methods.values()) == {METHODS[compression]}
    for name, array in FAMILIES.items():
        assert_same(got[name], array, name)


@pytest.mark.parametrize(("compression", "level"), COMPRESSIONS)
def test_members_are_the_bytes_np_save_writes(tmp_path, compression, level):
    path = tmp_path / "a.npz"
    with npy.NpzWriter(path, compression, level) as w:
        for name, array in FAMILIES.items():
            w[name] = array
    with zipfile.ZipFile(path) as z:
        for name, array in FAMILIES.items():
            member = io.BytesIO()
            np.save(member, array)
            assert z.read(f"{name}.npy") == member.getvalue(), name


def big_and_small():
    """Members on both of the writer's paths: small ones compressed on worker threads while
    add returns, one over 16 MiB compressed as it goes into the archive."""
    rng = np.random.default_rng(58)
    arrays = {f"small_{i}": np.round(rng.standard_normal(50_000 + i), 2) for i in range(6)}
    arrays["big"] = np.cumsum(rng.integers(-3, 4, 3_000_000)).astype("<i8")  # 24 MB
    arrays["last"] = np.arange(10, dtype="<u2")
    return arrays


@pytest.mark.parametrize(("compression", "level"), COMPRESSIONS)
def test_the_same_arrays_give_the_same_bytes(tmp_path, compression, level):
    arrays = big_and_small()
    outputs = []
    # Zstandard's level 19 takes about 15 s a run on the big member: two runs of it (to a
    # path, then to a buffer) and four of every other level.
    for run in range(1 if level == 19 else 3):
        path = tmp_path / f"run{run}.npz"
        with npy.NpzWriter(path, compression, level) as w:
            for name, array in arrays.items():
                w[name] = array
        outputs.append(path.read_bytes())
    buffer = io.BytesIO()
    with npy.NpzWriter(buffer, compression, level) as w:
        for name, array in arrays.items():
            w[name] = array
    outputs.append(buffer.getvalue())
    assert all(out == outputs[0] for out in outputs[1:])
    got, _ = numpy_reads(tmp_path / "run0.npz")
    for name, array in arrays.items():
        assert_same(got[name], array, name)


@pytest.mark.parametrize(
    ("args", "compression", "level"),
    [((), "zstd", 8), (("zstd",), "zstd", 8), (("deflate",), "deflate", 6), (("stored",), "stored", None)],
)
def test_levels_default_as_the_crate_and_the_cli(tmp_path, args, compression, level):
    w = npy.NpzWriter(tmp_path / "a", *args)
    assert (w.compression, w.level) == (compression, level)
    w.abort()
    assert w.closed
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("args", "error", "says"),
    [
        (("gzip",), ValueError, 'unknown compression "gzip": expected one of "stored", "deflate", "zstd"'),
        (("zstd", 23), ValueError, "level 23 is out of range for zstd: 1 to 22"),
        (("zstd", 0), ValueError, "level 0 is out of range for zstd: 1 to 22"),
        (("zstd", -1), ValueError, "level -1 is out of range for zstd: 1 to 22"),
        (("deflate", 10), ValueError, "level 10 is out of range for deflate: 1 to 9"),
        (("stored", 1), ValueError, "stored has no level"),
        (("zstd", 3.0), TypeError, "level must be an int or None"),
        (("zstd", True), TypeError, "level must be an int or None"),
        ((None,), TypeError, "compression must be"),
    ],
)
def test_bad_compression_or_level_is_a_clear_error_and_no_file(tmp_path, args, error, says):
    with pytest.raises(error, match=f"^{says}" if error is TypeError else None) as raised:
        npy.NpzWriter(tmp_path / "a.npz", *args)
    assert says in str(raised.value)
    assert not any(tmp_path.iterdir())


def test_a_duplicate_name_is_refused_and_leaves_no_file(tmp_path):
    path = tmp_path / "a.npz"
    with pytest.raises(ValueError, match=r"a\.npz.*x\.npy.*already has an array or member named 'x'"):
        with npy.NpzWriter(path) as w:
            w["x"] = np.arange(3)
            w.add("x", np.arange(4))
    assert not any(tmp_path.iterdir())


def test_a_refused_name_leaves_the_archive_usable(tmp_path):
    path = tmp_path / "a.npz"
    with npy.NpzWriter(path) as w:
        w["x"] = np.arange(3)
        with pytest.raises(ValueError, match="already has"):
            w["x"] = np.arange(4)
        with pytest.raises(TypeError, match="must be a str"):
            w[3] = np.arange(4)  # type: ignore[index]
        w["y"] = np.arange(5)
    got, _ = numpy_reads(path)
    assert list(got) == ["x", "y"]
    np.testing.assert_array_equal(got["x"], np.arange(3))


def test_adding_after_close_is_an_error_and_closing_again_nothing(tmp_path):
    path = tmp_path / "a.npz"
    w = npy.NpzWriter(path, "deflate")
    w["x"] = np.arange(3)
    w.close()
    assert w.closed
    written = path.read_bytes()
    with pytest.raises(ValueError, match=r"a\.npz: cannot add 'y': the npy\.NpzWriter is closed"):
        w["y"] = np.arange(3)
    w.close()
    assert path.read_bytes() == written
    np.testing.assert_array_equal(numpy_reads(path)[0]["x"], np.arange(3))


@pytest.mark.parametrize("compression", ["stored", "deflate", "zstd"])
def test_an_exception_in_with_leaves_the_old_file_and_no_temporary(tmp_path, compression):
    path = tmp_path / "a.npz"
    np.savez(path, old=np.arange(4))
    before = path.read_bytes()
    arrays = big_and_small()
    with pytest.raises(KeyError, match="the caller's own"):
        with npy.NpzWriter(path, compression) as w:
            for name, array in arrays.items():
                w[name] = array
            raise KeyError("the caller's own")
    assert w.closed
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npz"]


def test_a_writer_never_closed_writes_nothing_and_warns(tmp_path):
    path = tmp_path / "a.npz"
    w = npy.NpzWriter(path)
    w["x"] = np.arange(3)
    with pytest.warns(ResourceWarning, match="was never closed: the archive was not written"):
        w.__del__()
    assert not any(tmp_path.iterdir())


def test_paths_get_npz_appended_as_np_savez_does(tmp_path):
    with npy.NpzWriter(tmp_path / "plain", "stored") as w:
        w["x"] = np.arange(3)
    with npy.NpzWriter(str(tmp_path / "kept.npz"), "stored") as w:
        w["x"] = np.arange(3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.npz", "plain.npz"]


@pytest.mark.parametrize(("compression", "level"), COMPRESSIONS)
def test_a_file_object_gets_the_archive_at_its_position(compression, level):
    buffer = io.BytesIO()
    buffer.write(b"before")
    with npy.NpzWriter(buffer, compression, level) as w:
        for name, array in FAMILIES.items():
            w[name] = array
    assert not buffer.closed
    buffer.seek(6)
    with np.load(buffer, allow_pickle=True) as f:
        assert f.files == list(FAMILIES)
        for name, array in FAMILIES.items():
            assert_same(f[name], array, name)


@pytest.mark.parametrize("compression", ["stored", "deflate", "zstd"])
def test_a_file_object_that_cannot_seek(compression):
    out = WriteOnly()
    arrays = big_and_small()
    with npy.NpzWriter(out, compression) as w:
        for name, array in arrays.items():
            w[name] = array
    got, methods = numpy_reads(io.BytesIO(bytes(out.data)))
    assert set(methods.values()) == {METHODS[compression]}
    for name, array in arrays.items():
        assert_same(got[name], array, name)


def test_a_file_objects_own_error_is_raised_as_it_is():
    class Full(io.BytesIO):
        def write(self, data):
            raise OSError(28, "No space left on device (the test's)")

    with pytest.raises(OSError, match="the test's"):
        with npy.NpzWriter(Full(), "stored") as w:
            w["x"] = np.arange(1 << 20)


class Custom:
    """A class of the test's own: npy.load would not build it, so npy does not write it."""


def test_object_arrays_follow_npy_savez(tmp_path):
    path = tmp_path / "a.npz"
    with pytest.raises(ValueError, match="Object arrays cannot be saved when allow_pickle=False"):
        with npy.NpzWriter(path, allow_pickle=False) as w:
            w["plain"] = np.arange(3)
            w["objects"] = FAMILIES["objects"]
    assert not any(tmp_path.iterdir())

    with pytest.raises(TypeError, match=r"odd\.npy: npy\.save writes only object arrays that npy\.load reads back"):
        with npy.NpzWriter(path) as w:
            w["odd"] = np.array([Custom()], dtype=object)
    assert not any(tmp_path.iterdir())
    with npy.NpzWriter(path, allow_pickle=False) as w:
        w["plain"] = np.arange(3)
    assert list(numpy_reads(path)[0]) == ["plain"]


def test_warns_as_np_savez_does(tmp_path):
    dtype = np.dtype("<f8", metadata={"unit": "m"})
    with npy.NpzWriter(tmp_path / "a.npz") as w:
        with pytest.warns(UserWarning, match="metadata on a dtype is not saved") as caught:
            w["x"] = np.zeros(3, dtype=dtype)
    assert caught[0].filename == __file__


def test_npy_reads_what_it_writes(tmp_path):
    path = tmp_path / "a.npz"
    arrays = big_and_small()
    with npy.NpzWriter(path) as w:
        for name, array in arrays.items():
            w.add(name, array)
    everything = npy.load(path).load_all()
    assert list(everything) == list(arrays)
    for name, array in arrays.items():
        assert_same(everything[name], array, name)


def test_a_large_member_is_never_held_twice(tmp_path):
    # In a process of its own: its peak resident memory above the array's own must stay far
    # below the array's size, the member streamed from the array's memory into the archive.
    script = textwrap.dedent(
        """
        import resource, sys
        import numpy as np
        import npy
        a = np.arange(32 << 20, dtype="<i8")  # 256 MiB
        a += 1  # touched: resident
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for compression, level in (("stored", None), ("deflate", 1), ("zstd", 1)):
            with npy.NpzWriter(sys.argv[1], compression, level) as w:
                w["a"] = a
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) * 1024)
        """
    )
    path = tmp_path / "big.npz"
    run = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=True,
    )
    growth = int(run.stdout)
    assert growth < 64 << 20, f"peak memory grew by {growth / 2**20:.1f} MiB writing a 256 MiB member"
    with np.load(path) as f:
        a = f["a"]
        assert a[0] == 1 and a[-1] == 32 << 20 and np.all(np.diff(a) == 1)


@pytest.mark.parametrize("compression", ["deflate", "zstd"])
@pytest.mark.parametrize("size", [1 << 20, (16 << 20) + 8], ids=["staged on workers", "streamed, just over"])
def test_a_file_object_failing_under_compressed_members_raises_and_stops(compression, size):
    """Members up to 16 MiB are compressed on worker threads while the next are added;
    larger ones on the caller's. The destination failing midway raises its own error at
    once, stopping the workers: nothing waits on a peer that has left."""

    class FullAfter(io.BytesIO):
        def __init__(self):
            super().__init__()
            self.writes = 0

        def write(self, data):
            self.writes += 1
            if self.writes > 3:
                raise OSError(28, "No space left on device (the test's)")
            return super().write(data)

    rng = np.random.default_rng(58)
    arrays = [rng.standard_normal(size // 8) for _ in range(4 if size < (16 << 20) else 2)]
    raised = []

    def write():
        try:
            with npy.NpzWriter(FullAfter(), compression) as w:
                for i, a in enumerate(arrays):
                    w[f"m{i}"] = a
        except OSError as e:
            raised.append(e)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the writer waited two minutes"
    assert len(raised) == 1 and "the test's" in str(raised[0]), raised
