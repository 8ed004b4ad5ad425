"""What users of the package meet beyond np.load's results: errors, safety, maps, appends."""

import errno
import multiprocessing
import os
import pickle
import struct
import subprocess
import sys
import types

import numpy as np
import pytest

import npy


def npy_bytes(descr, shape, data, fortran=False):
    header = {"descr": descr, "fortran_order": fortran, "shape": shape}
    text = repr(header).encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data


class Run:
    """A pickle that, loaded, runs `call(*args)`."""

    def __init__(self, call, *args):
        self.call, self.args = call, args

    def __reduce__(self):
        return self.call, self.args


def hostile_pickles(marker):
    touch = f"touch {marker}"
    yield "os.system", pickle.dumps(Run(os.system, touch), protocol=4)
    yield "eval", pickle.dumps(Run(eval, f"open({str(marker)!r}, 'w')"), protocol=2)
    yield "subprocess", pickle.dumps(Run(subprocess.call, ["touch", str(marker)]), protocol=4)
    # Inside an object array: an element that runs code when the array is rebuilt.
    arr = np.empty(2, dtype=object)
    arr[0] = "fine"
    arr[1] = Run(os.system, touch)
    yield "element", pickle.dumps(arr, protocol=4)


def test_hostile_pickles_raise_and_run_nothing(tmp_path):
    marker = tmp_path / "ran"
    for name, payload in hostile_pickles(marker):
        path = tmp_path / f"{name}.npy"
        path.write_bytes(npy_bytes("|O", (2,), payload))
        with pytest.raises(ValueError, match=f"{name}.npy"):
            npy.load(path)
        np.savez(tmp_path / f"{name}.npz", ok=np.arange(3))
        import zipfile

        with zipfile.ZipFile(tmp_path / f"{name}.npz", "a") as z:
            z.writestr("evil.npy", npy_bytes("|O", (2,), payload))
        with npy.load_npz(tmp_path / f"{name}.npz") as archive:
            assert archive["ok"].tolist() == [0, 1, 2]
            with pytest.raises(ValueError, match="evil"):
                archive["evil"]
            with pytest.raises(ValueError):
                archive.load_all()
    assert not marker.exists()


def test_errors_name_the_file(tmp_path):
    missing = tmp_path / "missing.npy"
    with pytest.raises(FileNotFoundError) as e:
        npy.load(missing)
    assert e.value.filename == str(missing) and "missing.npy" in str(e.value)
    good = tmp_path / "good.npy"
    np.save(good, np.arange(100.0))
    cut = tmp_path / "cut.npy"
    cut.write_bytes(good.read_bytes()[:-8])
    for mode in (None, "r"):
        with pytest.raises(ValueError, match=r"cut\.npy"):
            npy.load(cut, mmap_mode=mode)
    text = tmp_path / "text.npy"
    text.write_text("not numpy")
    with pytest.raises(ValueError, match=r"text\.npy"):
        npy.load(text)
    wide = tmp_path / "wide.npy"
    np.save(wide, np.zeros(1, dtype=[(f"f{i}", "<f8") for i in range(2000)]))
    with pytest.raises(ValueError, match=r"wide\.npy"):
        npy.load(wide)
    assert npy.load(wide, max_header_size=100_000).dtype.names[-1] == "f1999"
    for mode in ("w+", "write", "x"):
        with pytest.raises(ValueError, match="mmap_mode"):
            npy.load(good, mmap_mode=mode)
    assert np.array_equal(npy.load(good), np.arange(100.0))  # w+ left it whole


def test_save_is_atomic_and_refuses_what_it_cannot_read_back(tmp_path):
    path = tmp_path / "keep.npy"
    npy.save(path, np.arange(4))
    before = path.read_bytes()
    with pytest.raises(TypeError, match=r"keep\.npy"):
        npy.save(path, np.array([types.SimpleNamespace(a=1), "x"], dtype=object))
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.npy"]
    npy.save(tmp_path / "named", np.arange(2))
    assert (tmp_path / "named.npy").exists()
    for arr in (np.arange(3), np.array(["x", None], dtype=object)):
        with pytest.raises(FileNotFoundError, match="absent"):
            npy.save(tmp_path / "absent" / "x.npy", arr)


def fails_mid_write(call, tmp_path):
    """Runs `call` (Python text using `tmp`, the directory) in a child whose files may grow
    to 1 MiB only (RLIMIT_FSIZE, SIGXFSZ ignored): a write past that fails with EFBIG after
    its first MiB is on disk, as a full disk would fail it. Gives the error's type name and
    errno the child prints."""
    script = (
        "import pathlib, resource, signal, numpy as np, npy\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))\n"
        f"tmp = pathlib.Path({str(tmp_path)!r})\n"
        "try:\n"
        f"    {call}\n"
        "except OSError as e:\n"
        "    print(type(e).__name__, e.errno)\n"
        "else:\n"
        "    print('no error')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.split()


def test_a_save_that_fails_mid_write_leaves_the_old_file_and_nothing_beside_it(tmp_path):
    path = tmp_path / "keep.npy"
    npy.save(path, np.arange(4))
    before = path.read_bytes()
    # 2 MiB of data: the write fails after its first MiB.
    got = fails_mid_write("npy.save(tmp / 'keep.npy', np.arange(1 << 18, dtype='<f8'))", tmp_path)
    assert got == ["OSError", str(errno.EFBIG)]
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.npy"]


def test_a_savez_that_fails_mid_write_leaves_the_old_file_and_nothing_beside_it(tmp_path):
    path = tmp_path / "keep.npz"
    npy.savez(path, a=np.arange(3))
    before = path.read_bytes()
    # The first member fits, the second fails after the archive's first MiB is written.
    call = "npy.savez(tmp / 'keep.npz', a=np.arange(1000), b=np.arange(1 << 18, dtype='<f8'))"
    assert fails_mid_write(call, tmp_path) == ["OSError", str(errno.EFBIG)]
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.npz"]


def test_objects_round_trip(tmp_path):
    values = np.empty(6, dtype=object)
    values[:] = [None, True, 2**80, 1.5 + 2j, b"\x00x", {"k": [1, (2.5, "s")]}]
    npy.save(tmp_path / "o.npy", values)
    np.save(tmp_path / "np.npy", values)
    assert (tmp_path / "o.npy").read_bytes() == (tmp_path / "np.npy").read_bytes()
    back = npy.load(tmp_path / "o.npy")
    assert back.tolist() == values.tolist()
    assert [type(v) for v in back] == [type(v) for v in values]


def test_loaded_arrays_are_not_copies_of_a_copy(tmp_path):
    arr = np.arange(1 << 20, dtype="<f8")
    np.save(tmp_path / "a.npy", arr)
    loaded = npy.load(tmp_path / "a.npy")
    loaded[0] = 7.0  # writeable, and its own memory
    assert loaded.flags.writeable and loaded[0] == 7.0
    assert np.array_equal(loaded[1:], arr[1:])


def test_mapped_npz_members_are_views_of_the_file(tmp_path):
    path = tmp_path / "m.npz"
    np.savez(path, x=np.arange(8, dtype="<i8"), y=np.arange(3.0))
    with npy.load_npz(path, mmap_mode="r") as archive:
        x = archive["x"]
        assert isinstance(x, np.memmap) and x.filename == str(path)
        with open(path, "r+b") as f:
            f.seek(x.offset + 8 * 3)
            f.write(struct.pack("<q", 1234))
        assert x[3] == 1234  # the map sees the file's bytes
        with pytest.raises(ValueError, match="CRC"):
            npy.load_npz(path, mmap_mode="r+")["x"]
        copy = npy.load_npz(path, mmap_mode="c")["y"]
        copy[0] = 9.0
    assert np.load(path)["y"][0] == 0.0


def append_rows(path, start, count, step):
    for first in range(start, start + count, step):
        npy.append(path, np.arange(first, first + step, dtype="<i8"))


def test_appends_from_two_processes_lose_nothing(tmp_path):
    path = str(tmp_path / "grow.npy")
    npy.save(path, np.zeros(0, dtype="<i8"))
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=append_rows, args=(path, i * 10_000, 2_000, 50)) for i in range(2)]
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
            assert p.exitcode == 0
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
    rows = np.load(path)
    assert len(rows) == 4_000
    assert sorted(rows.tolist()) == list(range(0, 2_000)) + list(range(10_000, 12_000))
    with pytest.raises(ValueError, match=r"grow\.npy"):
        npy.append(path, np.zeros(3, dtype="<f4"))


def test_a_hostile_element_deep_in_a_large_pickle_runs_nothing(tmp_path):
    # Megabytes of plain values first, so CPython builds them while the check is still
    # on its way to the element that would run code: it must stop there.
    marker = tmp_path / "ran"
    arr = np.empty(200_001, dtype=object)
    arr[:-1] = [f"value {i}" for i in range(200_000)]
    arr[-1] = Run(os.system, f"touch {marker}")
    payload = pickle.dumps(arr, protocol=4)
    assert len(payload) > 1 << 20
    path = tmp_path / "deep.npy"
    path.write_bytes(npy_bytes("|O", (200_001,), payload))
    for load in (lambda: npy.load(path), lambda: npy.load(open(path, "rb")), lambda: npy.load(path, allow_pickle=True)):
        with pytest.raises(npy.UnsafePickleError) as e:
            load()
        assert isinstance(e.value, ValueError) and isinstance(e.value, pickle.UnpicklingError)
    assert not marker.exists()


def just_over_the_threaded_check(first, last):
    """The pickle of a 1-d object array of `first`, then short strs, then `last`, its
    length just over the 64 KiB from which the check runs on a thread of its own (so both
    the checking thread and the unpickler take part), and the array's length."""
    for count in range(3000, 8000, 20):
        arr = np.empty(count + 2, dtype=object)
        arr[0], arr[-1] = first, last
        arr[1:-1] = [f"value {i:06}" for i in range(count)]
        payload = pickle.dumps(arr, protocol=4)
        if 64 << 10 < len(payload) < 70 << 10:
            return payload, count + 2
    raise AssertionError("no size just over 64 KiB")


def py2_payload(first, count):
    """A Python 2 pickle of an object array: `first` (opcodes), then `count` short strs."""
    out = b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85U\x01b\x87R"
    out += b"(K\x01M" + struct.pack("<H", count + 1) + b"\x85"
    out += b"cnumpy\ndtype\nU\x02O8K\x00K\x01\x87R(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb"
    return out + b"\x89](" + first + b"U\x0bshort value" * count + b"etb."


def within(seconds, load):
    """What `load()` raises (None if nothing), failing if it has not returned in time: a
    side waiting forever for the other is a failure, not a hang."""
    import threading

    raised = []

    def run():
        try:
            load()
            raised.append(None)
        except BaseException as e:  # handed to the test
            raised.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the load is still waiting"
    return raised[0]


@pytest.mark.parametrize("source", ["path", "file"])
def test_either_side_of_the_threaded_check_failing_ends_the_load(tmp_path, source):
    marker = tmp_path / "ran"
    cases = {}
    # The check fails, late and early; the unpickler never gets the bytes.
    late, n = just_over_the_threaded_check("first", Run(os.system, f"touch {marker}"))
    cases["check fails late"] = (npy_bytes("|O", (n,), late), {}, npy.UnsafePickleError)
    early, n = just_over_the_threaded_check(Run(os.system, f"touch {marker}"), "last")
    cases["check fails early"] = (npy_bytes("|O", (n,), early), {}, npy.UnsafePickleError)
    # The pickle's array is not the header's shape: found only once the check has ended.
    ok, n = just_over_the_threaded_check("first", "last")
    cases["shape"] = (npy_bytes("|O", (n + 1,), ok), {}, npy.UnsafePickleError)
    cases["truncated"] = (npy_bytes("|O", (n,), ok[:-3]), {}, npy.UnsafePickleError)
    # The unpickler fails first (as np.load's does) while the check goes on.
    count = 5100
    ascii_payload = py2_payload(b"U\x02\xc3\xa4", count)
    assert 64 << 10 < len(ascii_payload) < 70 << 10
    cases["unpickler fails"] = (npy_bytes("|O", (count + 1,), ascii_payload), {"encoding": "ASCII"}, UnicodeError)
    complex_first = b"c__builtin__\ncomplex\nG?\xf0\x00\x00\x00\x00\x00\x00G@\x00\x00\x00\x00\x00\x00\x00\x86R"
    imports = py2_payload(complex_first, count)
    cases["unpickler import fails"] = (
        npy_bytes("|O", (count + 1,), imports),
        {"encoding": "latin1", "fix_imports": False},
        ImportError,
    )
    for name, (data, kwargs, expected) in cases.items():
        path = tmp_path / f"{name}.npy"
        path.write_bytes(data)
        if source == "path":
            raised = within(60, lambda p=path, k=kwargs: npy.load(p, allow_pickle=True, **k))
        else:
            with open(path, "rb") as f:
                raised = within(60, lambda f=f, k=kwargs: npy.load(f, allow_pickle=True, **k))
        assert isinstance(raised, expected), (name, raised)
        if expected is not npy.UnsafePickleError:
            with pytest.raises(expected):
                np.load(path, allow_pickle=True, **kwargs)
    assert not marker.exists()
    # And the same sizes load when nothing fails, so the thread did take part.
    path = tmp_path / "fine.npy"
    path.write_bytes(npy_bytes("|O", (n,), ok))
    assert within(60, lambda: npy.load(path)) is None


def test_pickle_files_are_refused_with_numpys_or_npys_error(tmp_path):
    path = tmp_path / "plain.pkl"
    path.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(ValueError, match="allow_pickle"):
        npy.load(path, allow_pickle=False)
    for allow in (None, True):
        with pytest.raises(npy.UnsafePickleError, match=r"plain\.pkl.*numpy\.load"):
            npy.load(path, allow_pickle=allow)


def test_savez_to_a_path_is_atomic(tmp_path):
    path = tmp_path / "keep.npz"
    npy.savez(path, a=np.arange(3))
    before = path.read_bytes()
    # The second member cannot be written (it holds an instance of a class npy refuses).
    with pytest.raises(TypeError):
        npy.savez(path, a=np.arange(10**6), b=np.array([types.SimpleNamespace(a=1)], dtype=object))
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.npz"]


def test_durable_saves_write_the_same_bytes(tmp_path):
    arr = np.arange(12.0).reshape(3, 4)
    npy.save(tmp_path / "a.npy", arr, durable=True)
    np.save(tmp_path / "b.npy", arr)
    assert (tmp_path / "a.npy").read_bytes() == (tmp_path / "b.npy").read_bytes()


def test_bytes_paths_load_and_save(tmp_path):
    path = os.fsencode(tmp_path / "b")
    npy.save(path, np.arange(3))
    assert npy.load(path + b".npy").tolist() == [0, 1, 2]
    npy.savez(path, x=np.arange(2))
    with npy.load(path + b".npz") as archive:
        assert archive["x"].tolist() == [0, 1]


def test_archives_read_through_file_objects_that_others_move(tmp_path):
    path = tmp_path / "a.npz"
    np.savez_compressed(path, x=np.arange(10), y=np.arange(5.0))
    with open(path, "rb") as f:
        archive = npy.load(f)
        assert archive.fid is None and repr(archive) == "NpzFile 'object' with keys: x, y"
        f.seek(3)  # the caller moves the file between reads
        assert archive["y"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        assert archive.zip.namelist() == ["x.npy", "y.npy"]  # zipfile moves it too
        assert archive["x"].tolist() == list(range(10))
        archive.close()
        assert not f.closed  # the caller's file stays open


def test_open_memmap_w_plus_replaces_the_file_whole(tmp_path):
    path = tmp_path / "grid.npy"
    np.save(path, np.arange(4))
    old = npy.load(path, mmap_mode="r")  # a reader of the old file keeps it
    grid = npy.open_memmap(path, mode="w+", dtype="<f4", shape=(2, 3))
    grid[:] = 1.5
    grid.flush()
    del grid
    assert old.tolist() == [0, 1, 2, 3]
    assert np.load(path).tolist() == [[1.5] * 3] * 2
    assert sorted(os.listdir(tmp_path)) == ["grid.npy"]
