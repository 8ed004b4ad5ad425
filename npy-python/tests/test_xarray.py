"""xarray's engine="npy": NumPy files as Datasets, read lazily by rows, compared with what
xarray itself makes of np.load's arrays; refusals name the file and field."""

import pickle
import subprocess
import sys
import warnings

import dask
import numpy as np
import pytest
import xarray as xr

from conftest import NPY_FILES, NPZ_FILES, certificates, file_id, ids
from npy.xarray import NpyBackendEntrypoint
from support import SEISMIC_TRACE as TRACE
from support import seismic_traces as traces


def fields(arr, prefix=""):
    """NumPy's leaves of a record array: {'receiver.x': values, ...}."""
    out = {}
    for name in arr.dtype.names:
        values = arr[name]
        if values.dtype.names is not None:
            out.update(fields(values, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = values
    return out


def expected(arr, dims, name=None, member_prefix=""):
    """What xarray holds of NumPy's array: a Dataset made in memory from its fields."""
    leaves = fields(arr, member_prefix) if arr.dtype.names is not None else {name: arr}
    variables = {}
    for key, values in leaves.items():
        extra = tuple(f"{key}_dim_{i}" for i in range(values.ndim - len(dims)))
        # (fastpath: xarray would make an object array's None NaN; the backend keeps np.load's values)
        variables[key] = xr.Variable((*dims, *extra), values, fastpath=values.dtype.kind in "OT")
    return xr.Dataset(variables)


def same(got, want):
    """The same variables, dims, dtypes and values (NaN equal to NaN)."""
    assert list(got.data_vars) == list(want.data_vars)
    for key in want.data_vars:
        g, w = got[key], want[key]
        assert g.dims == w.dims, key
        if w.dtype.kind in "mMSUVOT" or w.dtype.byteorder == ">":
            w = w.astype(w.dtype.newbyteorder("=")) if w.dtype.kind not in "OT" else w
        assert g.dtype == w.dtype or (w.dtype.kind == "T" and g.dtype == object), (key, g.dtype, w.dtype)
        gv, wv = g.values, w.values
        if w.dtype.kind in "OT":
            assert gv.dtype == object and repr(gv.tolist()) == repr(wv.tolist()), key
        else:
            np.testing.assert_array_equal(gv, wv, err_msg=key)
            if w.dtype.kind in "fc":
                assert gv.tobytes() == np.ascontiguousarray(wv).astype(g.dtype).tobytes(), key


def test_import_npy_imports_no_xarray():
    code = "import sys, npy; assert 'xarray' not in sys.modules and 'npy.xarray' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_engine_is_found_by_name(tmp_path):
    assert "npy" in xr.backends.list_engines()
    np.save(tmp_path / "a.npy", np.arange(5.0))
    for engine in ("npy", None):  # no other engine claims .npy files
        ds = xr.open_dataset(tmp_path / "a.npy", engine=engine)
        assert ds["a"].values.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert NpyBackendEntrypoint().guess_can_open("x/run.NPZ")
    assert not NpyBackendEntrypoint().guess_can_open("x/run.nc")


def test_records_become_variables(tmp_path):
    a = traces(2000)
    np.save(tmp_path / "traces.npy", a)
    ds = xr.open_dataset(tmp_path / "traces.npy", engine="npy", dims=["trace"], field_dims={"samples": ["sample"]})
    assert list(ds.data_vars) == ["trace_id", "receiver.x", "receiver.y", "receiver.z", "t0", "dt", "flags", "samples"]
    assert ds["samples"].dims == ("trace", "sample") and ds["samples"].shape == (2000, 64)
    assert ds["receiver.x"].dims == ("trace",)
    assert ds.sizes == {"trace": 2000, "sample": 64}
    np.testing.assert_array_equal(ds.samples.isel(trace=slice(1000, 2000)).values, a["samples"][1000:2000])
    np.testing.assert_array_equal(ds["receiver.z"].values, a["receiver"]["z"])
    default = xr.open_dataset(tmp_path / "traces.npy", engine="npy")
    same(default, expected(a, ("trace",)))
    np.testing.assert_array_equal(default.samples.isel(trace=slice(1000, 2000)).values, a["samples"][1000:2000])


@pytest.mark.parametrize(
    ("file", "dim"),
    [
        ("traces.npy", "trace"),
        ("shot_007.npy", "shot"),
        ("events-2026.npy", "event"),
        ("status.npy", "status"),
        ("class.npy", "class"),
        ("s.npy", "s"),
        ("data.npy", "data"),
        ("0042.npy", "dim_0"),  # nothing left of the stem
        ("t0s.npy", "dim_0"),  # "t0" is a field: it would become an index read whole
    ],
)
def test_a_record_files_rows_are_named_after_it(tmp_path, file, dim):
    a = traces(5)
    np.save(tmp_path / file, a)
    ds = xr.open_dataset(tmp_path / file, engine="npy")
    assert ds["t0"].dims == (dim,) and ds["samples"].dims == (dim, "samples_dim_0")
    assert dim not in ds.coords
    same(ds, expected(a, (dim,)))


def test_plain_and_archived_arrays_keep_numbered_dims(tmp_path):
    np.save(tmp_path / "weights.npy", np.zeros((2, 3)))
    assert xr.open_dataset(tmp_path / "weights.npy", engine="npy")["weights"].dims == ("dim_0", "dim_1")
    np.savez(tmp_path / "run.npz", traces=traces(3))
    assert xr.open_dataset(tmp_path / "run.npz", engine="npy")["traces.t0"].dims == ("traces_dim_0",)
    np.save(tmp_path / "grid.npy", np.zeros((2, 3), traces(1).dtype))
    assert xr.open_dataset(tmp_path / "grid.npy", engine="npy")["t0"].dims == ("grid", "dim_1")


def test_big_endian_and_padded_records_are_native(tmp_path):
    be = np.dtype([("a", ">i4"), ("pos", [("x", ">f8"), ("y", "<f4", (2, 3))]), ("s", ">U3"), ("t", ">M8[D]")])
    a = np.zeros(7, be)
    a["a"] = np.arange(7) - 3
    a["pos"]["x"] = np.linspace(0, 1, 7)
    a["pos"]["y"] = np.arange(42).reshape(7, 2, 3)
    a["s"] = ["ab", "é", "", "xyz", "q", "r", "s"]
    a["t"] = np.arange(7) * 1000
    aligned = np.zeros(5, np.dtype([("u", "u1"), ("f", "<f8"), ("v", "<i2")], align=True))
    aligned["f"] = [1.5, -2, 0, np.nan, 3]
    for arr in (a, aligned):
        np.save(tmp_path / "r.npy", arr)
        ds = xr.open_dataset(tmp_path / "r.npy", engine="npy")
        same(ds, expected(arr, ("r",)))
        assert all(v.dtype.byteorder in "=|" for v in ds.data_vars.values())
    assert ds["f"].dtype == np.dtype("f8")


KEYS = [
    {"dim_0": 3},
    {"dim_0": -1},
    {"dim_0": slice(10, 20)},
    {"dim_0": slice(None, None, 97)},
    {"dim_0": slice(900, 100, -7)},
    {"dim_0": [5, 3, 5, 999]},
    {"dim_0": slice(2, 5), "samples_dim_0": 1},
    {"dim_0": [7, 1], "samples_dim_0": [3, 0, 3]},
    {"dim_0": slice(0, 0)},
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k)[:40] for k in KEYS])
def test_indexing_is_xarrays(tmp_path, key):
    a = traces(1000)
    np.save(tmp_path / "t.npy", a)
    ds = xr.open_dataset(tmp_path / "t.npy", engine="npy", dims=["dim_0"])
    same(ds.isel(key), expected(a, ("dim_0",)).isel(key))
    b = np.arange(4000.0).reshape(1000, 4)
    np.save(tmp_path / "b.npy", b)
    plain = xr.open_dataset(tmp_path / "b.npy", engine="npy")
    bkey = {("dim_1" if k == "samples_dim_0" else k): v for k, v in key.items()}
    want = xr.Dataset({"b": (("dim_0", "dim_1"), b)}).isel(bkey)
    same(plain.isel(bkey), want)


def test_fortran_zero_d_and_empty_arrays(tmp_path):
    cases = {
        "f": np.asfortranarray(np.arange(24, dtype=">i4").reshape(4, 6)),
        "z": np.array(2.5),
        "zr": np.zeros((), [("a", "<i2"), ("b", ">f4", (3,))]),
        "e": np.zeros((0, 3), "<u2"),
        "er": traces(0),
        "s0": np.zeros(4, [("s", "S0"), ("u", "u1")]),
    }
    for name, arr in cases.items():
        np.save(tmp_path / f"{name}.npy", arr)
        ds = xr.open_dataset(tmp_path / f"{name}.npy", engine="npy")
        # s0.npy's rows would be "s", a field's name
        dims = ("er",) if name == "er" else tuple(f"dim_{i}" for i in range(arr.ndim))
        same(ds, expected(arr, dims, name))


def test_times_strings_complex_and_objects(tmp_path):
    cases = {
        "d": np.array(["2020-01-01", "NaT", "1969-12-31"], dtype=">M8[D]"),
        "y": np.array(["2020", "1900"], dtype="M8[Y]"),
        "ps": np.array([1000, -2000, 0], dtype="m8[ps]"),
        "us": np.array([1, 2], dtype="M8[us]"),
        "c": (np.arange(6) * (1 - 2j)).astype(">c8"),
        "u": np.array(["x", "yz", "été"], dtype=">U3"),
        "b": np.array([b"a", b"\x00b", b""], dtype="S2"),
        "v": np.array([b"\x00ab", b"c\x00\x01"], dtype="V3"),
        "g": np.arange(3, dtype=np.longdouble) / 3,
        "o": np.array([1, "two", None, {"k": [1.5]}], dtype=object),
    }
    for name, arr in cases.items():
        np.save(tmp_path / f"{name}.npy", arr, allow_pickle=True)
        ds = xr.open_dataset(tmp_path / f"{name}.npy", engine="npy")
        same(ds, expected(arr, ("dim_0",), name))
    assert xr.open_dataset(tmp_path / "d.npy", engine="npy")["d"].dtype == np.dtype("M8[s]")
    assert xr.open_dataset(tmp_path / "ps.npy", engine="npy")["ps"].dtype == np.dtype("m8[ns]")


def test_what_cannot_be_held_is_refused_naming_the_field(tmp_path):
    np.save(tmp_path / "g.npy", np.zeros(3, [("a", "u1"), ("when", "M8")]))
    with pytest.raises(ValueError, match=r"g\.npy: field 'when': datetime64 has no time unit"):
        xr.open_dataset(tmp_path / "g.npy", engine="npy")
    np.save(tmp_path / "p.npy", np.array([1000, 1500], dtype="m8[ps]"))
    ds = xr.open_dataset(tmp_path / "p.npy", engine="npy")
    with pytest.raises(ValueError, match=r"p\.npy: field 'p': the timedelta64\[ps\] value 1500 picoseconds"):
        ds["p"].values  # noqa: B018
    np.save(tmp_path / "o.npy", np.zeros(2, [("a", "u1"), ("o", "O")]), allow_pickle=True)
    with pytest.raises(ValueError, match=r"o\.npy: the dtype holds Python objects in records"):
        xr.open_dataset(tmp_path / "o.npy", engine="npy")
    clash = np.zeros(2, [("a.b", "u1"), ("a", [("b", "u1")])])
    np.save(tmp_path / "c.npy", clash)
    with pytest.raises(ValueError, match=r"c\.npy: two variables would be named 'a\.b'"):
        xr.open_dataset(tmp_path / "c.npy", engine="npy")
    np.save(tmp_path / "d.npy", np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"d\.npy: dims \['x'\] are not 2 distinct names"):
        xr.open_dataset(tmp_path / "d.npy", engine="npy", dims=["x"])
    with pytest.raises(FileNotFoundError, match=r"missing\.npy"):
        xr.open_dataset(tmp_path / "missing.npy", engine="npy")
    np.save(tmp_path / "short.npy", np.arange(100.0))
    data = (tmp_path / "short.npy").read_bytes()
    (tmp_path / "short.npy").write_bytes(data[:-8])
    with pytest.raises(ValueError, match=r"short\.npy: .*truncated"):
        xr.open_dataset(tmp_path / "short.npy", engine="npy")
    with pytest.raises(TypeError, match=r"engine='npy' reads paths and URLs, not BytesIO"):
        import io

        xr.open_dataset(io.BytesIO(data), engine="npy")


def test_npz_members_are_variables(tmp_path):
    a = traces(50)
    gain = np.arange(50.0)
    for save in (np.savez, np.savez_compressed):
        save(tmp_path / "run.npz", traces=a, gain=gain, grid=np.ones((2, 3), ">i2"))
        ds = xr.open_dataset(tmp_path / "run.npz", engine="npy")
        want = xr.merge(
            [
                expected(a, ("traces_dim_0",), member_prefix="traces."),
                xr.Dataset({"gain": (("gain_dim_0",), gain), "grid": (("grid_dim_0", "grid_dim_1"), np.ones((2, 3)))}),
            ]
        )
        want["grid"] = want["grid"].astype("<i2")
        same(ds, want[list(ds.data_vars)])
        shared = xr.open_dataset(
            tmp_path / "run.npz", engine="npy", dims={"traces": ["t"], "gain": ["t"], "grid": ["r", "c"]}
        )
        assert shared["gain"].dims == ("t",) and shared["traces.samples"].dims == ("t", "traces.samples_dim_0")
        np.testing.assert_array_equal(shared["traces.receiver.y"].isel(t=[3, 1]).values, a["receiver"]["y"][[3, 1]])


def test_chunks_give_dask_tasks_reading_their_rows(tmp_path, http):
    base, served = http
    a = traces(10_000)
    np.save(tmp_path / "traces.npy", a)
    ds = xr.open_dataset(f"{base}/traces.npy", engine="npy", chunks={"trace": 1000})
    assert ds["samples"].chunks == ((1000,) * 10, (64,))
    served.clear()
    with dask.config.set(scheduler="threads"):
        part = ds["samples"].isel(trace=slice(2000, 3000)).compute()
    np.testing.assert_array_equal(part.values, a["samples"][2000:3000])
    sent = sum(n for _, _, n in served)
    assert sent <= 2 * 1000 * TRACE.itemsize, served
    # No preferred chunks: any split is as good, and xarray warns of none.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = xr.open_dataset(tmp_path / "traces.npy", engine="npy", chunks={"trace": 777})
    assert auto["t0"].chunks[0][:2] == (777, 777)
    np.testing.assert_allclose(ds["t0"].sum().compute().values, a["t0"].sum())


def test_traces_over_https_and_s3_read_their_rows(tmp_path, https, s3):
    a = traces(5000)
    np.save(tmp_path / "traces.npy", a)
    s3.put_object(Bucket="bkt", Key="d/traces.npy", Body=(tmp_path / "traces.npy").read_bytes())
    base, served = https
    names = ["trace_id", "receiver.x", "receiver.y", "receiver.z", "t0", "dt", "flags", "samples"]
    for url in (f"{base}/traces.npy", "s3://bkt/d/traces.npy"):
        ds = xr.open_dataset(url, engine="npy")
        assert list(ds.data_vars) == names
        served.clear()
        got = ds.samples.isel(trace=slice(1000, 2000)).values
        np.testing.assert_array_equal(got, a["samples"][1000:2000], err_msg=url)
        if url.startswith("https"):
            assert 0 < sum(n for _, _, n in served) <= 2 * 1000 * TRACE.itemsize, served
        same(ds.isel(trace=[4999, 0, 77]), expected(a, ("trace",)).isel(trace=[4999, 0, 77]))


def test_an_untrusted_https_server_is_an_error_naming_the_url(tmp_path, https, monkeypatch, tmp_path_factory):
    np.save(tmp_path / "traces.npy", traces(3))
    base, _ = https
    other = tmp_path_factory.mktemp("other")
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates(other)[0]))  # another CA
    with pytest.raises(OSError, match=r"https://127\.0\.0\.1:\d+/traces\.npy") as refused:
        xr.open_dataset(f"{base}/traces.npy", engine="npy")
    assert "certificate" in str(refused.value).lower(), refused.value


def test_load_reads_the_records_once(tmp_path, http):
    base, served = http
    a = traces(3000)
    np.save(tmp_path / "traces.npy", a)
    ds = xr.open_dataset(f"{base}/traces.npy", engine="npy")
    served.clear()
    ds.load()
    assert sum(n for _, _, n in served) == a.nbytes, served
    same(ds, expected(a, ("trace",)))
    # What one variable was given is its own: changing it changes no later read (xarray's
    # cache aside, which keeps what was read first).
    again = xr.open_dataset(tmp_path / "traces.npy", engine="npy", cache=False)
    t0 = again["t0"][:10].values
    t0[:] = -1
    assert again["t0"][:10].values.tolist() == a["t0"][:10].tolist()
    assert again["dt"][:10].values.tolist() == a["dt"][:10].tolist()
    for name, arr in {"f": np.asfortranarray(np.ones((3, 4))), "o": np.array([1, "a"], dtype=object)}.items():
        np.save(tmp_path / f"{name}.npy", arr, allow_pickle=True)
        one = xr.open_dataset(tmp_path / f"{name}.npy", engine="npy", cache=False)
        first = one[name].values
        first[...] = 7
        assert one[name].values.tolist() == arr.tolist(), name


def test_a_lazy_dataset_pickles(tmp_path):
    a = traces(100)
    np.save(tmp_path / "traces.npy", a)
    ds = xr.open_dataset(tmp_path / "traces.npy", engine="npy")
    again = pickle.loads(pickle.dumps(ds))
    same(again, expected(a, ("trace",)))


SHOTS = 16


@pytest.fixture
def shots(tmp_path):
    folder = tmp_path / "shots"
    folder.mkdir()
    arrays = []
    for k in range(SHOTS):
        a = traces(100 + 7 * k, start=k * 1000)
        np.save(folder / f"shot_{k:02d}.npy", a)
        arrays.append(a)
    return folder, np.concatenate(arrays)


def test_mfdataset_over_shots_is_their_concatenation(shots):
    folder, joined = shots
    want = expected(joined, ("trace",))
    for source in (folder, str(folder / "*.npy")):
        ds = xr.open_dataset(source, engine="npy", dims=["trace"])
        same(ds, want)
        assert ds["samples"][[5, 150, 1700]].values.tolist() == joined["samples"][[5, 150, 1700]].tolist()
    mf = xr.open_mfdataset(str(folder / "*.npy"), engine="npy", combine="nested", concat_dim="trace", dims=["trace"])
    assert len(mf["t0"].chunks[0]) == SHOTS
    same(mf.compute(), want)
    same(xr.open_mfdataset(folder, engine="npy", dims=["trace"]).compute(), want)


def test_mismatched_shots_are_refused(shots):
    folder, _ = shots
    np.save(folder / "shot_99.npy", np.zeros(3))
    with pytest.raises(ValueError, match=r"shot_99\.npy and .*shot_00\.npy differ"):
        xr.open_dataset(folder, engine="npy")


# Corpus files the backend refuses, by what its error says, and why; every other .npy and
# .npz file opens to what xarray makes of np.load's arrays.
REFUSED = {
    # datetime64/timedelta64 without a unit: xarray's times need one
    "has no time unit, which xarray's datetimes need": [
        "corpus/datetime/le_M8.npy",
        "corpus/datetime/le_m8.npy",
        "corpus/exotic/generic_M8_nonNaT.npy",
        "tests/data/datetime/be_M8_generic.npy",
        "tests/data/datetime/be_m8_generic.npy",
        "tests/data/datetime/le_M8_generic.npy",
        "tests/data/datetime/le_m8_generic.npy",
    ],
    # datetimes and timedeltas beyond the range of xarray's units (s for [D], [Y] or [25s]):
    # refused when read, as converting them would change them
    "has no exact": [
        "corpus/datetime/be_M8_D.npy",
        "corpus/datetime/le_M8_D.npy",
        "corpus/datetime/le_m8_D.npy",
        "corpus/npz/positional_12_compressed.npz",
        "tests/data/datetime/be_M8_25s.npy",
        "tests/data/datetime/be_M8_D.npy",
        "tests/data/datetime/be_m8_25s.npy",
        "tests/data/datetime/be_m8_D.npy",
        "tests/data/datetime/le_M8_25s.npy",
        "tests/data/datetime/le_M8_D.npy",
        "tests/data/datetime/le_m8_25s.npy",
        "tests/data/datetime/le_m8_D.npy",
    ],
    # a record with no fields: no variable to make (its shape would be lost unseen)
    "has no fields: no variable to make of it": [
        "corpus/exotic/zero_itemsize_struct.npy",
    ],
    # a header over max_header_size (NumPy's 10,000-byte default, as np.load)
    "is large and may not be safe to load securely": [
        "corpus/header/v1_max_header_len.npy",
        "corpus/header/v2_min_header_len.npy",
        "corpus/struct/fields_2000_v2.npy",
        "tests/data/header/fields_3000_v2.npy",
        "corpus/npz/v2_member_stored.npz",
    ],
}
REFUSAL = {name: fragment for fragment, names in REFUSED.items() for name in names}
FILES = NPY_FILES + NPZ_FILES


def test_refused_files_are_test_files():
    assert not set(REFUSAL) - set(ids(FILES))


def numbered_dims(arr):
    return tuple(f"dim_{i}" for i in range(arr.ndim))


def numpy_dataset(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = np.load(path, allow_pickle=True)
        if path.suffix == ".npy":
            return expected(loaded, numbered_dims(loaded), "v")
        with loaded:
            parts = []
            for member in loaded.files:
                arr = loaded[member]
                dims = tuple(f"{member}_dim_{i}" for i in range(arr.ndim))
                parts.append(expected(arr, dims, member, member_prefix=f"{member}."))
            return xr.merge(parts) if parts else xr.Dataset()


@pytest.mark.parametrize("path", FILES, ids=ids(FILES))
def test_corpus(path):
    """Every corpus file opens to what xarray makes of np.load's arrays, or is one REFUSED
    lists, refused with an error that names it and says why."""
    fragment = REFUSAL.get(file_id(path))
    if fragment is not None:
        with pytest.raises(ValueError) as refused:
            xr.open_dataset(path, engine="npy", variable="v").load()
        assert str(path) in str(refused.value) and fragment in " ".join(str(refused.value).split())
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dims = numbered_dims(np.load(path, allow_pickle=True)) if path.suffix == ".npy" else None
        ds = xr.open_dataset(path, engine="npy", variable="v", dims=dims).load()
    want = numpy_dataset(path)
    same(ds, want[list(ds.data_vars)] if list(ds.data_vars) != list(want.data_vars) else want)
    assert set(ds.data_vars) == set(want.data_vars)
