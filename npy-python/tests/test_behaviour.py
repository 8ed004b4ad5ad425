"""What users of the package meet beyond np.load's results: errors, safety, maps, appends."""

import multiprocessing
import os
import pickle
import struct

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
    import subprocess

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
        npy.save(path, np.array([{1, 2}, "x"], dtype=object))
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.npy"]
    npy.save(tmp_path / "named", np.arange(2))
    assert (tmp_path / "named.npy").exists()
    for arr in (np.arange(3), np.array(["x", None], dtype=object)):
        with pytest.raises(FileNotFoundError, match="absent"):
            npy.save(tmp_path / "absent" / "x.npy", arr)


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
