"""NumPy files at URLs: a local S3 (moto) and a web server on loopback give what np.load
gives from the same bytes, read by the byte ranges each call needs; errors name the URL.

Every server is started by a fixture that stops it, also when a test fails.
"""

import os
import signal
import tempfile
import zipfile

import numpy as np
import pyarrow as pa
import pytest

import npy
import npy.dask
from support import SEISMIC_TRACE, TRACE, fill_traces, seismic_traces, traces


def put(client, key, data):
    client.put_object(Bucket="bkt", Key=key, Body=data)


def npy_bytes(a, tmp_path, name="x.npy"):
    np.save(tmp_path / name, a)
    return (tmp_path / name).read_bytes()


ARRAYS = {
    "records": traces(1000),
    "f8_2d": np.arange(60.0).reshape(10, 6),
    "fortran": np.asfortranarray(np.arange(24, dtype=">i4").reshape(4, 6)),
    "zero_d": np.array(3.5),
    "empty": np.zeros((0, 3), "<u2"),
    "text": np.array(["a", "bcd", "éf"]),
}


@pytest.mark.parametrize("name", list(ARRAYS))
def test_load_over_s3_http_and_file_urls(name, s3, http, tmp_path):
    a = ARRAYS[name]
    data = npy_bytes(a, tmp_path, f"{name}.npy")
    put(s3, f"d/{name}.npy", data)
    base, _ = http
    for url in (f"s3://bkt/d/{name}.npy", f"{base}/{name}.npy", (tmp_path / f"{name}.npy").as_uri()):
        got = npy.load(url)
        assert got.dtype == a.dtype and got.shape == a.shape, url
        assert got.tobytes("A") == np.load(tmp_path / f"{name}.npy").tobytes("A"), url
        assert got.flags.f_contiguous == a.flags.f_contiguous or a.ndim < 2


def test_archives_at_urls_are_read_lazily(s3, tmp_path):
    a = traces(5000)
    np.savez(tmp_path / "s.npz", traces=a, gain=np.arange(10.0))
    np.savez_compressed(tmp_path / "c.npz", traces=a, gain=np.arange(10.0))
    for name in ("s.npz", "c.npz"):
        put(s3, name, (tmp_path / name).read_bytes())
        with npy.load(f"s3://bkt/{name}") as z:
            assert isinstance(z, npy.NpzFile) and z.files == ["traces", "gain"]
            assert np.array_equal(z["gain"], np.arange(10.0))
            assert np.array_equal(z["traces"], a)
        with npy.load_npz(f"s3://bkt/{name}") as z:
            assert np.array_equal(z["traces"], a)
    with pytest.raises(ValueError, match=r"mmap_mode"):
        npy.load("s3://bkt/s.npz", mmap_mode="r")


def test_saves_upload_whole(s3, tmp_path):
    a = traces(300_000)  # 9.6 MB: several parts would be 16 MiB each; one put here
    npy.save("s3://bkt/out/t", a)
    body = s3.get_object(Bucket="bkt", Key="out/t.npy")["Body"].read()
    assert body == npy_bytes(a, tmp_path)
    npy.savez_compressed("s3://bkt/out/run.npz", t=a, g=np.arange(3))
    with npy.load("s3://bkt/out/run.npz") as z:
        assert np.array_equal(z["t"], a) and np.array_equal(z["g"], np.arange(3))
    big = np.arange(5 << 20, dtype="<f8")  # 40 MiB: a multipart upload
    npy.save("s3://bkt/out/big.npy", big)
    assert np.array_equal(npy.load("s3://bkt/out/big.npy"), big)
    spools = [n for n in os.listdir(tempfile.gettempdir()) if ".npy-upload." in n]
    assert not spools


def test_an_object_whose_name_is_as_long_as_a_file_name_uploads(s3):
    key = "k" * 251 + ".npy"  # 255 bytes: the longest file name; a spool named after it would not fit
    npy.save(f"s3://bkt/{key}", np.arange(3))
    assert np.array_equal(npy.load(f"s3://bkt/{key}"), np.arange(3))


def test_a_killed_uploads_spool_is_swept(s3, tmp_path):
    import subprocess
    import sys

    # A save killed mid-upload leaves its pending directory, its lock gone with it.
    code = (
        "import os, signal, numpy as np, npy, npy._npyio as io; "
        "s = io._spool('s3://bkt/killed.npy'); path = s.__enter__(); np.save(path, np.arange(3)); "
        "print(os.path.dirname(path), flush=True); os.kill(os.getpid(), signal.SIGKILL)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    left = done.stdout.strip()
    assert done.returncode == -signal.SIGKILL and os.path.basename(left).startswith(".upload.npy.npy-upload.")
    assert os.listdir(left) == ["upload.npy"]
    npy.save("s3://bkt/next.npy", np.arange(3))
    assert not os.path.exists(left)
    assert np.array_equal(npy.load("s3://bkt/next.npy"), np.arange(3))


def test_errors_name_the_url(s3, http, tmp_path):
    with pytest.raises(FileNotFoundError, match=r"s3://bkt/missing.npy"):
        npy.load("s3://bkt/missing.npy")
    data = npy_bytes(np.arange(1000.0), tmp_path)
    put(s3, "short.npy", data[:-8])
    with pytest.raises(ValueError, match=r"short.npy"):
        npy.load("s3://bkt/short.npy")
    with pytest.raises(ValueError, match=r"short.npy.*truncated"):
        npy.open("s3://bkt/short.npy")
    put(s3, "junk.npy", b"not a numpy file at all" * 10)
    for call in (npy.load, npy.open, npy.scan):
        with pytest.raises(ValueError, match=r"junk.npy"):
            call("s3://bkt/junk.npy")
    base, _ = http
    with pytest.raises(FileNotFoundError, match=r"nothing.npy"):
        npy.open(f"{base}/nothing.npy")
    with pytest.raises(ValueError, match=r"nope://"):
        npy.load("nope://x/y.npy")


KEYS = [
    np.s_[3],
    np.s_[-1],
    np.s_[10:20],
    np.s_[::97],
    np.s_[900:100:-7],
    np.s_[[5, 3, 5, 999]],
    np.s_[np.arange(1000) % 3 == 0],
    np.s_[...],
    np.s_[2:5, 1],
    np.s_[:0],
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:30] for k in KEYS])
def test_open_indexes_as_numpy(key, s3, tmp_path):
    a = traces(1000)
    put(s3, "t.npy", npy_bytes(a, tmp_path))
    b = np.arange(4000.0).reshape(1000, 4)
    put(s3, "b.npy", npy_bytes(b, tmp_path, "b.npy"))
    lazy, lazy_b = npy.open("s3://bkt/t.npy"), npy.open("s3://bkt/b.npy")
    assert (lazy.shape, lazy.dtype, lazy.ndim, len(lazy)) == (a.shape, a.dtype, 1, 1000)
    if not (isinstance(key, tuple) and len(key) > 1):
        got = lazy[key]
        assert np.array_equal(got, a[key]) and got.dtype == a.dtype
        assert np.array_equal(lazy["t0"][key], a["t0"][key])
        assert np.array_equal(lazy[["id", "dt"]][key], a[["id", "dt"]][key])
    assert np.array_equal(lazy_b[key], b[key])
    assert np.array_equal(np.asarray(lazy), a)


def test_a_slice_fetches_its_rows_only(http, tmp_path):
    base, served = http
    directory = tmp_path
    n = 100 * 1000 * 1000 // TRACE.itemsize  # about 100 MB of records
    a = np.zeros(n, TRACE)
    a["id"] = np.arange(n)
    np.save(directory / "big.npy", a)
    served.clear()
    lazy = npy.open(f"{base}/big.npy")
    rows = lazy[n // 2 : n // 2 + 1000]
    assert rows["id"].tolist() == list(range(n // 2, n // 2 + 1000))
    sent = sum(n for _, _, n in served)
    assert lazy.fetched < 1 << 20 and sent < 1 << 20, (lazy.fetched, sent)


def test_npz_members_open_lazily(s3, tmp_path):
    a = traces(2000)
    np.savez(tmp_path / "s.npz", traces=a)
    np.savez_compressed(tmp_path / "c.npz", traces=a)
    for name in ("s.npz", "c.npz"):
        put(s3, name, (tmp_path / name).read_bytes())
        lazy = npy.open(f"s3://bkt/{name}", member="traces")
        assert np.array_equal(lazy[100:300], a[100:300])
        assert np.array_equal(lazy["id"][[7, 3]], a["id"][[7, 3]])
    with pytest.raises(KeyError, match=r"nope"):
        npy.open("s3://bkt/s.npz", member="nope")


def test_scan_and_dask_read_urls(s3, http, tmp_path):
    a = traces(3000)
    put(s3, "t.npy", npy_bytes(a, tmp_path))
    table = pa.table(npy.scan("s3://bkt/t.npy", columns=["id", "t0"], rows=(100, 2000)))
    assert table.column("id").to_pylist() == a["id"][100:2000].tolist()
    np.savez(tmp_path / "z.npz", traces=a, gain=np.arange(3000.0))
    put(s3, "z.npz", (tmp_path / "z.npz").read_bytes())
    assert pa.table(npy.scan("s3://bkt/z.npz")).num_rows == 3000
    x = npy.dask.from_npy("s3://bkt/t.npy", chunks=700)
    assert np.array_equal(x.compute(), a)
    base, _ = http
    np.save(tmp_path / "w.npy", a)
    assert np.array_equal(npy.dask.from_npy(f"{base}/w.npy", chunks=1000)["id"].compute(), a["id"])


def test_stored_member_offsets_match_zipfile(tmp_path):
    a = traces(10)
    np.savez(tmp_path / "s.npz", traces=a)
    with zipfile.ZipFile(tmp_path / "s.npz") as z:
        assert z.getinfo("traces.npy").compress_type == zipfile.ZIP_STORED
    assert np.array_equal(npy.open(tmp_path / "s.npz", member="traces")[...], a)


def test_open_refuses_a_long_header_naming_its_argument(tmp_path):
    # NumPy's words, but for its advice to pass allow_pickle=True, which npy.open does not take.
    wide = np.zeros(2, [(f"f{i}", "<f8") for i in range(2000)])
    np.save(tmp_path / "wide.npy", wide)
    with pytest.raises(ValueError, match=r"wide\.npy: Header info length \(34998\) is large") as refused:
        npy.open(tmp_path / "wide.npy")
    assert str(refused.value).endswith("To allow loading, adjust `max_header_size`.")
    assert np.array_equal(npy.open(tmp_path / "wide.npy", max_header_size=2**20)[...], wide)


def test_an_archive_at_a_url_reads_its_directory_then_each_member(http, tmp_path):
    # npy-store's RemoteNpz: the object's first bytes, the archive's tail (its directory),
    # a 256 KiB block holding the first member's local header (checked, as every one, when
    # the archive opens), then one ranged GET per member read, never the members not asked
    # for.
    base, served = http
    a = traces(40_000)  # 1.28 MB: far more than the tail and the small member
    np.savez(tmp_path / "s.npz", traces=a, gain=np.arange(10.0))
    np.savez_compressed(tmp_path / "c.npz", traces=a, gain=np.arange(10.0))
    for name in ("s.npz", "c.npz"):
        served.clear()
        with npy.load(f"{base}/{name}") as z:
            assert np.array_equal(z["gain"], np.arange(10.0))
            assert len(served) == 4 and sum(n for _, _, n in served) < 400_000, served
            assert np.array_equal(z["traces"], a)
            assert len(served) == 5, served
            every = z.load_all()
            assert np.array_equal(every["traces"], a) and np.array_equal(every["gain"], np.arange(10.0))
            # NumPy's attributes still read the archive, through ranged reads.
            assert z.zip.namelist() == ["traces.npy", "gain.npy"]


def test_a_corrupt_member_at_a_url_names_the_url_and_member(http, tmp_path):
    base, _ = http
    np.savez(tmp_path / "s.npz", x=np.arange(1000.0), y=np.arange(3))
    data = bytearray((tmp_path / "s.npz").read_bytes())
    at = data.index(np.float64(500.0).tobytes())
    data[at] ^= 1
    (tmp_path / "bad.npz").write_bytes(bytes(data))
    with npy.load(f"{base}/bad.npz") as z:
        assert np.array_equal(z["y"], np.arange(3))
        with pytest.raises(npy.BadNpzFile, match=rf"{base}/bad\.npz.*member 'x\.npy'.*CRC-32"):
            z["x"]
    np.savez_compressed(tmp_path / "c.npz", x=np.arange(1000.0))
    data = bytearray((tmp_path / "c.npz").read_bytes())
    data[len(data) // 3] ^= 0xFF
    (tmp_path / "badc.npz").write_bytes(bytes(data))
    with npy.load(f"{base}/badc.npz") as z, pytest.raises(npy.BadNpzFile, match=r"badc\.npz.*member 'x\.npy'"):
        z["x"]
    (tmp_path / "short.npz").write_bytes(data[:-30])
    with pytest.raises(npy.BadNpzFile, match=r"short\.npz"):
        npy.load(f"{base}/short.npz")


def test_a_url_npy_is_read_by_two_gets_at_most(http, tmp_path):
    base, served = http
    a = traces(10_000)
    np.save(tmp_path / "t.npy", a)
    np.save(tmp_path / "small.npy", np.arange(10))
    served.clear()
    assert np.array_equal(npy.load(f"{base}/t.npy"), a)
    assert len(served) == 2 and sum(n for _, _, n in served) == (tmp_path / "t.npy").stat().st_size, served
    served.clear()
    assert np.array_equal(npy.load(f"{base}/small.npy"), np.arange(10))
    assert len(served) == 1, served
    (tmp_path / "empty.npy").write_bytes(b"")
    with pytest.raises(EOFError):
        npy.load(f"{base}/empty.npy")
    objects = np.array([1, "a", None, {"k": (2.5, b"x")}], dtype=object)
    np.save(tmp_path / "o.npy", objects, allow_pickle=True)
    assert npy.load(f"{base}/o.npy").tolist() == objects.tolist()
    with pytest.raises(ValueError, match="allow_pickle"):
        npy.load(f"{base}/o.npy", allow_pickle=False)


def test_npz_member_layouts_come_from_the_engine(http, tmp_path):
    # npy.open's reading of archives at URLs and paths: the engine's, no zip parsing in Python.
    base, _ = http
    a = traces(100)
    np.savez(tmp_path / "s.npz", traces=a)
    np.savez_compressed(tmp_path / "c.npz", traces=a)
    for target in (f"{base}/s.npz", tmp_path / "s.npz", f"{base}/c.npz", tmp_path / "c.npz"):
        lazy = npy.open(target, member="traces.npy")
        assert np.array_equal(lazy[10:20], a[10:20]), target
    with pytest.raises(KeyError, match=r"s\.npz: no member 'nope' in the archive \(it has \['traces\.npy'\]\)"):
        npy.open(f"{base}/s.npz", member="nope")
    with pytest.raises(ValueError, match=r"s\.npz: an \.npz archive, not a \.npy file"):
        npy.open(f"{base}/s.npz")


def test_xarray_reads_a_slice_of_a_gigabyte_by_its_rows(http, tmp_path):
    # A 1 GiB file of Trace records, written sparse (a map's untouched pages are holes),
    # served over HTTP: xarray's slice of 1,000 traces fetches about their bytes, counted
    # by the server.
    import xarray as xr

    base, served = http
    n = (1 << 30) // SEISMIC_TRACE.itemsize
    big = np.lib.format.open_memmap(tmp_path / "big.npy", mode="w+", dtype=SEISMIC_TRACE, shape=(n,))
    at = n // 2
    fill_traces(big[at : at + 1000], at)
    big.flush()
    del big
    try:
        served.clear()
        ds = xr.open_dataset(f"{base}/big.npy", engine="npy", dims=["trace"])
        opened = sum(b for _, _, b in served)
        served.clear()
        samples = ds.samples.isel(trace=slice(at, at + 1000)).values
        moved = sum(b for _, _, b in served)
        want = seismic_traces(1000, at)
        assert np.array_equal(samples, want["samples"])
        assert np.array_equal(ds["receiver.x"][at : at + 1000].values, want["receiver"]["x"])
        print(f"\nopening read {opened} bytes; 1,000 traces ({1000 * SEISMIC_TRACE.itemsize} bytes) moved {moved}")
        assert moved <= 2 * 1000 * SEISMIC_TRACE.itemsize, served
        assert opened < 64 * 1024, served
    finally:
        (tmp_path / "big.npy").unlink()


def test_xarray_reads_s3_and_http_urls(s3, http, tmp_path):
    import xarray as xr

    a = seismic_traces(5000)
    data = npy_bytes(a, tmp_path, "t.npy")
    put(s3, "run/t.npy", data)
    base, _ = http
    for url in ("s3://bkt/run/t.npy", f"{base}/t.npy"):
        ds = xr.open_dataset(url, engine="npy", dims=["trace"], chunks={"trace": 1024})
        assert list(ds.data_vars)[:3] == ["trace_id", "receiver.x", "receiver.y"], url
        assert np.array_equal(ds.samples.isel(trace=slice(1000, 2000)).values, a["samples"][1000:2000]), url
        assert np.array_equal(ds["receiver.y"].values, a["receiver"]["y"]), url
    np.savez(tmp_path / "z.npz", traces=a, gain=np.arange(3.0))
    put(s3, "run/z.npz", (tmp_path / "z.npz").read_bytes())
    ds = xr.open_dataset("s3://bkt/run/z.npz", engine="npy")
    assert np.array_equal(ds["traces.t0"][[4, 2]].values, a["t0"][[4, 2]])
    assert ds["gain"].values.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(FileNotFoundError, match=r"s3://bkt/run/missing\.npy"):
        xr.open_dataset("s3://bkt/run/missing.npy", engine="npy")


def test_shards_on_s3_are_one_array_gathered_by_ranged_gets(s3, tmp_path):
    parts = [np.arange(i * 400, (i + 1) * 400, dtype="<f4").reshape(100, 4) for i in range(3)]
    urls = []
    for i, part in enumerate(parts):
        put(s3, f"shards/s{i}.npy", npy_bytes(part, tmp_path, f"s{i}.npy"))
        urls.append(f"s3://bkt/shards/s{i}.npy")
    whole = np.concatenate(parts)
    a = npy.open(urls)
    assert a.shape == (300, 4) and a.files == urls
    rows = [299, 0, 150, 151, 152, 7, 7, 100]
    got = a[rows]
    assert got.dtype == whole.dtype and np.array_equal(got, whole[rows])
    # Each run of adjacent rows is one ranged GET of its bytes, with nothing between runs.
    assert a.fetched == 7 * 16  # its 7 distinct rows
    assert np.array_equal(a[50:250:3], whole[50:250:3])
    put(s3, "shards/s1.npy", npy_bytes(parts[1] + 1, tmp_path, "s1.npy"))
    with pytest.raises(ValueError, match=r"s3://bkt/shards/s1\.npy.*changed"):
        a[[150]]
