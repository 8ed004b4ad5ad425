"""Zstandard npz members (zip method 93, issue 58): npy.load and its NpzFile read the archives
another writer makes, Python's own zipfile patched by the pinned zipfile-zstd (as CPython 3.14's
zipfile writes them unpatched), equal to what np.load reads from the same bytes."""

import io
import sys
import zipfile

import numpy as np
import pytest

import npy

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401  (patches zipfile in place: method 93)

ZSTD = 93

ARRAYS = {
    "ramp": np.arange(100_000, dtype="<f8") % 97,
    "ints": np.arange(-500, 500, dtype=">i4").reshape(10, 100),
    "fortran": np.asfortranarray(np.arange(12, dtype="<u2").reshape(3, 4)),
    "records": np.array([(1, 2.5), (3, -1.0)], dtype=[("id", "<u4"), ("t", "<f4")]),
    "text": np.array(["a", "bc", "地震"]),
    "empty": np.zeros((0, 3), dtype="<i8"),
}


def archive(methods):
    """The arrays as np.save writes them, into a zip with each member's method from
    `methods` (a member's name to a zipfile method; Zstandard if not named)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, array in ARRAYS.items():
            member = io.BytesIO()
            np.save(member, array, allow_pickle=False)
            method = methods.get(name, ZSTD)
            z.writestr(zipfile.ZipInfo(f"{name}.npy"), member.getvalue(), compress_type=method)
    return out.getvalue()


@pytest.mark.parametrize(
    "methods",
    [{}, {"ramp": zipfile.ZIP_DEFLATED, "text": zipfile.ZIP_STORED}],
    ids=["zstd", "mixed"],
)
@pytest.mark.parametrize("source", ["path", "file"])
def test_npy_load_reads_zstd_members_as_numpy_does(tmp_path, methods, source):
    data = archive(methods)
    path = tmp_path / "z.npz"
    path.write_bytes(data)
    with np.load(io.BytesIO(data)) as want:
        expected = {k: want[k] for k in want.files}
    assert list(expected) == list(ARRAYS)
    target = path if source == "path" else io.BytesIO(data)
    with npy.load(target) as got:
        assert got.files == list(ARRAYS)
        for name, array in expected.items():
            member = got[name]
            assert member.dtype == array.dtype and member.shape == array.shape, name
            assert member.flags.f_contiguous == array.flags.f_contiguous, name
            np.testing.assert_array_equal(member, array)
        everything = got.load_all()
        assert list(everything) == list(ARRAYS)
        for name, array in expected.items():
            np.testing.assert_array_equal(everything[name], array)


def test_a_corrupt_zstd_member_is_an_error_naming_it(tmp_path):
    data = bytearray(archive({}))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo("ramp.npy")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0x5A
    path = tmp_path / "bad.npz"
    path.write_bytes(bytes(data))
    with npy.load(path) as got:
        np.testing.assert_array_equal(got["ints"], ARRAYS["ints"])
        with pytest.raises(ValueError, match=r"ramp\.npy"):
            got["ramp"]


def test_a_zstd_member_is_not_mapped(tmp_path):
    path = tmp_path / "z.npz"
    path.write_bytes(archive({"ints": zipfile.ZIP_STORED}))
    with npy.load(path, mmap_mode="r") as got:
        assert isinstance(got["ints"], np.memmap)
        ramp = got["ramp"]
        assert not isinstance(ramp, np.memmap)
        np.testing.assert_array_equal(ramp, ARRAYS["ramp"])


def test_scan_reads_zstd_members_in_parts(tmp_path):
    # npy.scan's archives are read through npy-store (as SQL reads them): Zstandard
    # members decoded as they arrive, a 2-d member's item decoded alone.
    t = np.arange(50_000, dtype="<f8") * 0.25
    trace = np.arange(200_000, dtype="<f4").reshape(50_000, 4)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, array in {"t": t, "trace": trace}.items():
            member = io.BytesIO()
            np.save(member, array)
            z.writestr(zipfile.ZipInfo(f"{name}.npy"), member.getvalue(), compress_type=ZSTD)
    path = tmp_path / "z.npz"
    path.write_bytes(out.getvalue())
    import pyarrow as pa

    table = pa.table(npy.scan(path, columns=["t", "trace[2]"], rows=(100, 40_000)))
    np.testing.assert_array_equal(table["t"].to_numpy(), t[100:40_000])
    np.testing.assert_array_equal(table["trace[2]"].to_numpy(), trace[100:40_000, 2])
