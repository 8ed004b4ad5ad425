"""npy.virtualizarr: .npy files and stored .npz members as virtual Zarr arrays, opened by
xarray through VirtualiZarr's ManifestStore and through kerchunk references, must give
np.load's values or refuse with an error naming the file."""

import importlib
import sys
import warnings
from pathlib import Path

import numpy as np
import obspec_utils.registry as registry_module
import obstore.store as obstore_store
import pytest
import virtualizarr
import xarray as xr

import npy
from conftest import NPY_FILES, file_id, ids
from npy.virtualizarr import CHUNK_BYTES, NpyParser, chunk_count, references

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401  (np.load reads Zstandard members: zipfile patched in place)

# zarr warns that the Zarr v3 spellings of datetime64, bytes, unicode and records are not
# in the spec yet: the arrays still read right, which is what is tested here.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")


def registry():
    return registry_module.ObjectStoreRegistry({"file://": obstore_store.LocalStore()})


def url(path):
    return Path(path).resolve().as_uri()  # object store paths have no `..`


def virtual(target, parser=None, reg=None):
    """The dataset xarray reads from the parser's ManifestStore (values loaded)."""
    store = (parser or NpyParser())(target, reg or registry())
    return xr.open_zarr(store, consolidated=False, zarr_format=3, chunks=None, concat_characters=False).load()


def referenced(refs):
    return xr.open_dataset(
        "reference://",
        engine="zarr",
        backend_kwargs={"consolidated": False, "storage_options": {"fo": refs}},
        concat_characters=False,
    ).load()


def same(got, want):
    """Exactly NumPy's values and dtype (the byte order aside: Zarr may read into native order)."""
    assert got.shape == want.shape
    if want.dtype.names:
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes()  # (NaN fields compare unequal)
        return
    if want.ndim == 0 and want.dtype.kind in "SU":
        # xarray gives a 0-d string array the width of its value ("<U10" holding eight
        # characters comes back "<U8"): the value is checked, not the width.
        assert got.dtype.kind == want.dtype.kind and got.item() == want.item()
        return
    assert got.dtype.newbyteorder("=") == want.dtype.newbyteorder("=")
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind in "fc":
        assert got.tobytes() == want.astype(got.dtype).tobytes()  # -0.0 and NaN payloads too


ARRAYS = {
    "f8_2d": np.arange(300.0).reshape(100, 3) - 7.5,
    "f4_nan": np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40], dtype="<f4"),
    "be_f8_2d": np.linspace(0, 1, 40, dtype=">f8").reshape(10, 4),
    "f2": np.arange(-5, 5, dtype="<f2") / 3,
    "be_f2": np.arange(-5, 5, dtype=">f2") / 3,
    "i1": np.arange(-128, 128, dtype="i1"),
    "u1": np.arange(256, dtype="u1"),
    "be_i2": np.arange(-300, 300, 7, dtype=">i2"),
    "le_u4": np.arange(0, 2**32 - 1, 2**28, dtype="<u4"),
    "be_i8": np.array([-(2**63), -1, 0, 1, 2**63 - 1], dtype=">i8"),
    "be_u8": np.array([0, 1, 2**64 - 1], dtype=">u8"),
    "c8": (np.arange(12) * (1 - 2j)).astype("<c8"),
    "be_c16": (np.arange(12) * (1 + 2j)).astype(">c16").reshape(3, 4),
    "bool": np.arange(33) % 3 == 0,
    "datetime_D": np.array(["2020-01-01", "NaT", "1969-12-31"], dtype="<M8[D]"),
    "be_datetime_ns": np.array([0, 10**18, -(10**9)], dtype=">M8[ns]"),
    "timedelta_s": np.array([0, 1, -86400], dtype="<m8[s]"),
    "bytes": np.array([b"a", b"bc", b"def", b""] * 5, dtype="S3"),
    "chars": np.array([b"a", b"b", b""], dtype="S1"),
    "0d_unicode": np.array("\u00e9t\u00e9", dtype="<U5"),
    "void": np.array([b"\x00ab", b"c\x00\x01"], dtype="V3"),
    "unicode": np.array(["x", "yz", "\u00e9t\u00e9"] * 7, dtype="<U3"),
    "be_unicode": np.array(["x", "yz", "\u00e9t\u00e9"] * 7, dtype=">U3"),
    "records": np.array([(i, i * 0.5, b"ab") for i in range(23)], dtype=[("a", "<i2"), ("b", "<f8"), ("c", "S2")]),
    "fortran_2d": np.asfortranarray(np.arange(60.0).reshape(12, 5)),
    "fortran_3d": np.asfortranarray(np.arange(120, dtype=">i8").reshape(4, 5, 6)),
    "fortran_1d": np.asfortranarray(np.arange(7.0)),
    "0d": np.array(3.25),
    "0d_be_i4": np.array(-7, dtype=">i4"),
    "empty": np.zeros((0,), dtype="<f8"),
    "empty_2d": np.zeros((3, 0), dtype=">i4"),
    "empty_fortran": np.asfortranarray(np.zeros((0, 4))),
    "4d": np.arange(2 * 3 * 4 * 5, dtype="<u2").reshape(2, 3, 4, 5),
}


@pytest.fixture(params=list(ARRAYS), ids=list(ARRAYS))
def case(request, tmp_path):
    name = request.param
    arr = ARRAYS[name]
    path = tmp_path / f"{name}.npy"
    np.save(path, arr)
    return name, arr, path


def test_parser_gives_numpys_values(case):
    name, arr, path = case
    ds = virtual(url(path))
    assert list(ds.data_vars) == [name]
    assert ds[name].dims == tuple(f"dim_{i}" for i in range(arr.ndim))
    same(ds[name].values, np.load(path))


def test_references_give_numpys_values(case):
    name, arr, path = case
    got = referenced(references(path))[name].values
    if name == "be_unicode":
        # zarr 3.1.6 reads format 2's ">U3" as "<U12" (the values right, four times wider):
        # the values are checked, not the width.
        assert got.dtype.kind == "U"
        np.testing.assert_array_equal(got, arr)
        return
    same(got, np.load(path))


def test_open_virtual_dataset_manifest(tmp_path):
    arr = np.asfortranarray(np.arange(24, dtype=">f4").reshape(2, 3, 4))
    path = tmp_path / "t.npy"
    np.save(path, arr)
    size = path.stat().st_size
    vds = virtualizarr.open_virtual_dataset(url(path), registry=registry(), parser=NpyParser(dims=["x", "y", "z"]))
    var = vds["t"]
    assert var.dims == ("x", "y", "z") and var.shape == (2, 3, 4)
    manifest = var.data.manifest.dict()
    assert manifest == {"0.0.0": {"path": url(path), "offset": size - arr.nbytes, "length": arr.nbytes}}
    codecs = var.data.metadata.to_dict()["codecs"]
    assert {"name": "transpose", "configuration": {"order": (2, 1, 0)}} in codecs
    assert {"name": "bytes", "configuration": {"endian": "big"}} in codecs
    # VirtualiZarr 2.5.1 writes no kerchunk references for the transpose codec (format 2
    # spells Fortran order "order": "F"); npy.virtualizarr.references does.
    c_order = tmp_path / "c.npy"
    np.save(c_order, np.ascontiguousarray(arr))
    vds = virtualizarr.open_virtual_dataset(url(c_order), registry=registry(), parser=NpyParser())
    same(referenced(vds.vz.to_kerchunk(format="dict"))["c"].values, arr)
    # Their fill value (NaN for floats) is masked by xarray in format 2: for integers, zero
    # would be, so those open with mask_and_scale=False.
    ints = tmp_path / "i.npy"
    np.save(ints, np.arange(5))
    vds = virtualizarr.open_virtual_dataset(url(ints), registry=registry(), parser=NpyParser())
    refs = vds.vz.to_kerchunk(format="dict")
    opened = xr.open_dataset(
        "reference://",
        engine="zarr",
        backend_kwargs={"consolidated": False, "storage_options": {"fo": refs}},
        mask_and_scale=False,
    )
    same(opened["i"].values, np.arange(5))


def test_names_and_dims(tmp_path):
    path = tmp_path / "a.b.npy"
    np.save(path, np.arange(6).reshape(2, 3))
    # Named for the file without its `.npy`, inner dots kept.
    assert list(virtual(url(path)).data_vars) == ["a.b"]
    ds = virtual(url(path), NpyParser(variable="v", dims=("row", "col")))
    assert ds["v"].dims == ("row", "col")
    np.save(tmp_path / "s.npy", np.array(1.5))
    ds = virtual(url(tmp_path / "s.npy"), NpyParser(dims=()))
    assert ds["s"].dims == () and ds["s"].values == 1.5
    with pytest.raises(ValueError, match=r"a\.b\.npy.*dims \['x'\] are not 2 distinct names"):
        NpyParser(dims=["x"])(url(path), registry())
    with pytest.raises(ValueError, match="not 2 distinct"):
        NpyParser(dims=["x", "x"])(url(path), registry())
    refs = references(path, variable="w", dims=["r", "c"])
    assert referenced(refs)["w"].dims == ("r", "c")


@pytest.mark.parametrize("name", ["f8_2d", "be_c16", "fortran_3d", "0d", "empty_2d", "records", "unicode"])
def test_npz_stored_members(tmp_path, name):
    arr = ARRAYS[name]
    path = tmp_path / "a.npz"
    np.savez(path, first=np.arange(5), x=arr, last=np.ones(3))
    with np.load(path) as f:
        want = f["x"]
    for member in ("x", "x.npy"):
        ds = virtual(url(path), NpyParser(member=member))
        same(ds["x"].values, want)
        same(referenced(references(path, member))["x"].values, want)


def test_npz_without_member_is_refused(tmp_path):
    path = tmp_path / "a.npz"
    np.savez(path, x=np.arange(5))
    with pytest.raises(ValueError, match=r"a\.npz: an \.npz archive, not a \.npy file: name one of its members"):
        NpyParser()(url(path), registry())
    with pytest.raises(KeyError, match=r"a\.npz: no member 'y'"):
        NpyParser(member="y")(url(path), registry())


def test_deflated_member_is_refused(tmp_path):
    path = tmp_path / "c.npz"
    np.savez_compressed(path, x=np.arange(1000))
    with pytest.raises(ValueError, match=r"c\.npz \(member 'x'\): the member is compressed.*raw deflate"):
        NpyParser(member="x")(url(path), registry())
    with pytest.raises(ValueError, match=r"c\.npz \(member 'x'\): the member is compressed"):
        references(path, "x")


def test_zstd_member_is_refused_and_what_the_error_names_reads_it(tmp_path):
    # A Zstandard member's one frame decodes to the whole .npy file, header first: Zarr's
    # zstd codec would hand the bytes codec the header too, and no Zarr codec drops it.
    path = tmp_path / "z.npz"
    arr = np.arange(3000.0).reshape(300, 10)
    with npy.NpzWriter(path) as w:
        w["first"] = np.arange(5)
        w["x"] = arr
    says = r"z\.npz \(member 'x'\): the member is compressed \(Zstandard\).*header before the data.*engine='npy'"
    with pytest.raises(ValueError, match=says):
        NpyParser(member="x")(url(path), registry())
    with pytest.raises(ValueError, match=says):
        references(path, "x")
    with np.load(path) as f:
        want = f["x"]
    np.testing.assert_array_equal(want, arr)
    ds = xr.open_dataset(path, engine="npy")
    same(ds["x"].values, want)
    same(ds["first"].values, np.arange(5))


def test_object_arrays_are_refused(tmp_path):
    path = tmp_path / "o.npy"
    np.save(path, np.array([1, "a", None], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"o\.npy: arrays of Python objects .* are refused"):
        NpyParser()(url(path), registry())
    with pytest.raises(ValueError, match=r"o\.npy: arrays of Python objects"):
        references(path)
    npz = tmp_path / "o.npz"
    np.savez(npz, x=np.array([1, None], dtype=object))
    with pytest.raises(ValueError, match=r"o\.npz \(member 'x'\): arrays of Python objects"):
        NpyParser(member="x")(url(npz), registry())


@pytest.mark.parametrize(
    ("dtype", "why"),
    [
        ([("a", "<i4"), ("b", ">f8")], "field 'b' is big-endian"),
        ([("a", "u1"), ("b", "<f8", (2,))], "field 'b' is nested or a subarray"),
        ([("a", "u1"), ("b", [("c", "<i2")])], "field 'b' is nested or a subarray"),
        (np.dtype([("a", "u1"), ("b", "<f8")], align=True), "has padding or fields out of order"),
    ],
)
def test_records_zarr_cannot_read_are_refused(tmp_path, dtype, why):
    path = tmp_path / "r.npy"
    np.save(path, np.zeros(3, dtype=dtype))
    with pytest.raises(ValueError, match=rf"r\.npy: record dtype .*{why}.*npy\.scan"):
        NpyParser()(url(path), registry())
    with pytest.raises(ValueError, match=why):
        references(path)


def test_truncated_files_are_refused(tmp_path):
    path = tmp_path / "t.npy"
    np.save(path, np.arange(100.0))
    data = path.read_bytes()
    path.write_bytes(data[:-8])
    with pytest.raises(ValueError, match=r"t\.npy: .*truncated: the header needs 800 data bytes, only 792 present"):
        NpyParser()(url(path), registry())
    with pytest.raises(ValueError, match=r"t\.npy: .*truncated"):
        references(path)
    path.write_bytes(data[:40])
    with pytest.raises(ValueError, match=r"t\.npy: .*header claims 118 bytes"):
        NpyParser()(url(path), registry())
    path.write_bytes(b"not numpy at all")
    with pytest.raises(ValueError, match=r"t\.npy: not a \.npy file"):
        NpyParser()(url(path), registry())
    with pytest.raises(FileNotFoundError, match=r"missing\.npy"):
        NpyParser()(url(tmp_path / "missing.npy"), registry())


def test_truncated_npz_member_is_refused(tmp_path):
    path = tmp_path / "z.npz"
    np.savez(path, x=np.arange(100.0))
    data = bytearray(path.read_bytes())
    # Make the member's header claim 200 values: the member holds 100.
    at = data.index(b"(100,)")
    data[at : at + 6] = b"(200,)"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"z\.npz \(member 'x'\): .*truncated: the header needs 1600 data bytes"):
        NpyParser(member="x")(url(path), registry())


def test_long_header(tmp_path):
    # A header longer than the first read (4096 bytes) takes a second read.
    dtype = np.dtype([(f"field_{i:04d}", "<i2") for i in range(300)])
    arr = np.zeros(4, dtype=dtype)
    arr["field_0007"] = [1, 2, 3, 4]
    path = tmp_path / "wide.npy"
    np.save(path, arr)
    assert path.stat().st_size - arr.nbytes > 4096
    same(virtual(url(path))["wide"].values, arr)


# The files npy.virtualizarr must refuse, by what its error says (the fragment each error
# must hold) and why; every other file must open to np.load's values.
REFUSED = {
    # Python objects: the data are pickles, which Zarr has no type for
    "arrays of Python objects (dtype object) are refused": [
        "tests/data/object/0d.npy",
        "tests/data/object/2x0.npy",
        "tests/data/object/2x3_C.npy",
        "tests/data/object/2x3_F.npy",
        "tests/data/object/2x3x4_F.npy",
        "tests/data/object/batch_1001.npy",
        "tests/data/object/batches.npy",
        "tests/data/object/big.npy",
        "tests/data/object/bool_none.npy",
        "tests/data/object/bytes.npy",
        "tests/data/object/complex.npy",
        "tests/data/object/datetimes.npy",
        "tests/data/object/dict_of_arrays.npy",
        "tests/data/object/empty.npy",
        "tests/data/object/float.npy",
        "tests/data/object/int.npy",
        "tests/data/object/masked.npy",
        "tests/data/object/masked_records.npy",
        "tests/data/object/nested.npy",
        "tests/data/object/nested_objects.npy",
        "tests/data/object/numpy_scalars.npy",
        "tests/data/object/numpy_scalars_beyond.npy",
        "tests/data/object/proto0.npy",
        "tests/data/object/proto1.npy",
        "tests/data/object/proto2.npy",
        "tests/data/object/proto2_2x2_F.npy",
        "tests/data/object/proto3.npy",
        "tests/data/object/proto5.npy",
        "tests/data/object/ragged.npy",
        "tests/data/object/ragged_kinds.npy",
        "tests/data/object/ragged_proto2.npy",
        "tests/data/object/ragged_proto5.npy",
        "tests/data/object/repeated.npy",
        "tests/data/object/shared_arrays.npy",
        "tests/data/object/stdlib.npy",
        "tests/data/object/str.npy",
        "tests/data/object/str_none.npy",
        "tests/data/object/stringdtype.npy",
        "tests/data/object/stringdtype_0d.npy",
        "tests/data/object/stringdtype_2x2_C.npy",
        "tests/data/object/stringdtype_2x3_F.npy",
        "tests/data/object/stringdtype_empty.npy",
        "tests/data/object/stringdtype_na_nan.npy",
        "tests/data/object/stringdtype_na_none.npy",
        "tests/data/object/stringdtype_na_str.npy",
        "tests/data/object/stringdtype_no_coerce.npy",
        "tests/data/object/zones_collections.npy",
    ],
    # datetime64/timedelta64 without a unit: Zarr's time types need one
    "has no time unit, which Zarr's datetime types need": [
        "corpus/datetime/le_M8.npy",
        "corpus/datetime/le_m8.npy",
        "corpus/exotic/generic_M8_nonNaT.npy",
        "tests/data/datetime/be_M8_generic.npy",
        "tests/data/datetime/be_m8_generic.npy",
        "tests/data/datetime/le_M8_generic.npy",
        "tests/data/datetime/le_m8_generic.npy",
    ],
    # a dtype Zarr has no type for (long double, empty void or record)
    "Zarr has no data type for": [
        "corpus/exotic/clongdouble_be_0d.npy",
        "corpus/exotic/clongdouble_le.npy",
        "corpus/exotic/longdouble_be_3x2.npy",
        "corpus/exotic/longdouble_le.npy",
        "corpus/exotic/void0.npy",
        "corpus/exotic/zero_itemsize_struct.npy",
        "tests/data/scalar/be_c32.npy",
        "tests/data/scalar/be_f16.npy",
        "tests/data/scalar/le_c32.npy",
        "tests/data/scalar/le_f16.npy",
    ],
    # a big-endian record field: Zarr would read it as little-endian
    "is big-endian": [
        "corpus/fortran/struct_2x3_F.npy",
        "corpus/record/traces_be.npy",
        "corpus/record/traces_be_aligned.npy",
        "corpus/struct/kitchen_sink.npy",
        "corpus/struct/mixed_endian.npy",
        "corpus/struct/offsets_gap_junk.npy",
        "corpus/struct/struct_3x4_F.npy",
        "corpus/struct/titles.npy",
        "tests/data/record/3x2_F.npy",
        "tests/data/record/big_endian.npy",
        "tests/data/record/mixed_endian.npy",
        "tests/data/record/titles.npy",
    ],
    # a nested record or subarray field: Zarr would read it otherwise
    "is nested or a subarray, refused": [
        "corpus/exotic/struct_empty_subfield.npy",
        "corpus/record/gather_4x12.npy",
        "corpus/record/gather_4x12_aligned_F.npy",
        "corpus/record/trace_0d.npy",
        "corpus/record/traces_aligned.npy",
        "corpus/record/traces_empty.npy",
        "corpus/record/traces_packed.npy",
        "corpus/struct/aligned_nested.npy",
        "corpus/struct/nested_3_levels.npy",
        "corpus/struct/struct_in_subarray.npy",
        "corpus/struct/subarray_1elem_and_2d_field.npy",
        "corpus/struct/subarray_fields.npy",
        "corpus/struct/zero_d_struct.npy",
        "tests/data/record/nested_3_levels.npy",
        "tests/data/record/subarray.npy",
        "tests/data/record/subarray_of_record.npy",
        "tests/data/record/trace_aligned.npy",
        "tests/data/record/trace_packed.npy",
        "tests/data/record/zero_d.npy",
    ],
    # record padding or fields out of order: Zarr would read it otherwise
    "has padding or fields out of order, refused": [
        "corpus/exotic/struct_with_longdouble.npy",
        "corpus/exotic/titles_non_str.npy",
        "corpus/struct/aligned_padding_junk.npy",
        "corpus/struct/empty_struct_0x3_aligned.npy",
        "corpus/struct/flat_aligned.npy",
        "corpus/struct/offsets_gaps.npy",
        "corpus/struct/struct_2x3x2_aligned_F.npy",
        "tests/data/record/aligned.npy",
        "tests/data/record/offsets_gaps.npy",
        "tests/data/record/titles_non_str.npy",
    ],
    # a header over max_header_size (NumPy's 10,000-byte default, as np.load)
    "is large and may not be safe to load securely": [
        "corpus/header/v1_max_header_len.npy",
        "corpus/header/v2_min_header_len.npy",
        "corpus/struct/fields_2000_v2.npy",
        "tests/data/header/fields_3000_v2.npy",
    ],
}
REFUSAL = {name: fragment for fragment, names in REFUSED.items() for name in names}


def test_refused_files_are_test_files():
    # A file renamed or removed leaves no entry behind.
    assert not set(REFUSAL) - set(ids(NPY_FILES))


@pytest.mark.parametrize("path", NPY_FILES, ids=ids(NPY_FILES))
def test_corpus(path):
    """Every corpus file opens to NumPy's values, or is one REFUSED lists, refused with an
    error that names it and says why."""
    fragment = REFUSAL.get(file_id(path))
    if fragment is not None:
        with pytest.raises((ValueError, KeyError)) as refused:
            virtual(url(path), NpyParser(variable="v"))
        assert url(path) in str(refused.value) and fragment in " ".join(str(refused.value).split())
        return
    ds = virtual(url(path), NpyParser(variable="v"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.load(path)
    same(ds["v"].values, want)


def http_registry(base):
    store = obstore_store.HTTPStore.from_url(base, client_options={"allow_http": True})
    return registry_module.ObjectStoreRegistry({base: store})


def test_http_reads_only_the_header(tmp_path, http):
    base, served = http
    arr = np.arange(1_250_000, dtype=">f8").reshape(1250, 1000)  # 10 MB
    np.save(tmp_path / "big.npy", arr)
    np.savez(tmp_path / "big.npz", a=np.arange(10), big=arr)
    reg = http_registry(base)

    store = NpyParser()(f"{base}/big.npy", reg)
    parsed = sum(n for _, _, n in served)
    assert parsed < 64 * 1024, served

    served.clear()
    ds = xr.open_zarr(store, consolidated=False, zarr_format=3, chunks=None)
    same(ds["big"][10:20, 5:8].values, arr[10:20, 5:8])
    # One chunk is the whole array: the store reads all of it for any slice.
    sliced = sum(n for _, _, n in served)
    print(f"\nparsing read {parsed} bytes; a 10x3 slice read {sliced} bytes in {len(served)} GETs")

    # An archive's directory is read and checked as npy-store reads it: its tail (64 KiB
    # and the end record), a 256 KiB block holding the first local header, the header.
    served.clear()
    store = NpyParser(member="big")(f"{base}/big.npz", reg)
    parsed = sum(n for _, _, n in served)
    assert parsed < 400 * 1024 and len(served) <= 3, served
    same(xr.open_zarr(store, consolidated=False, zarr_format=3, chunks=None)["big"].values, arr)

    # The same references as for the local file, but for the URL (fsspec's HTTP filesystem
    # needs aiohttp to open them, which is not installed here).
    served.clear()
    refs = references(f"{base}/big.npz", "big", registry=reg)
    assert sum(n for _, _, n in served) < 400 * 1024
    local = references(tmp_path / "big.npz", "big")
    assert refs["refs"]["big/0.0"] == [f"{base}/big.npz", *local["refs"]["big/0.0"][1:]]
    assert {k: v for k, v in refs["refs"].items() if k != "big/0.0"} == {
        k: v for k, v in local["refs"].items() if k != "big/0.0"
    }
    print(f"npz member: parsing read {parsed} bytes")


def chunk_entries(store, name):
    """The manifest's (index, offset, length) entries of the store's array `name`."""
    manifest = store._group.arrays[name].manifest
    return sorted(manifest.dict().items())


@pytest.mark.parametrize(
    ("shape", "dtype", "chunk_bytes", "count"),
    [
        ((100, 3), "<f8", 24 * 25, 4),  # 25 rows a chunk
        ((100, 3), "<f8", 24 * 30, 4),  # 30 rows fit, 25 divide 100
        ((101, 3), "<f8", 24 * 30, 1),  # 101 is prime: one chunk
        ((100,), "<f8", 800, 1),  # fits
        ((12, 6), "F<f8", 96 * 2, 3),  # Fortran order: 2 columns (of 96 bytes) a chunk
        ((0, 3), "<f8", 8, 1),
    ],
)
def test_chunks_divide_the_rows(tmp_path, shape, dtype, chunk_bytes, count):
    arr = np.arange(int(np.prod(shape)), dtype=dtype.lstrip("F")).reshape(shape)
    if dtype.startswith("F"):
        arr = np.asfortranarray(arr)
    path = tmp_path / "c.npy"
    np.save(path, arr)
    store = NpyParser(chunk_bytes=chunk_bytes)(url(path), registry())
    entries = chunk_entries(store, "c") if arr.size else []  # (an empty manifest has no entries to list)
    assert len(entries) == (count if arr.size else 0)
    lengths = {e["length"] for _, e in entries}
    assert len(lengths) <= 1  # equal chunks: none partial
    same(xr.open_zarr(store, consolidated=False, zarr_format=3, chunks=None)["c"].values, arr)
    refs = references(path, chunk_bytes=chunk_bytes)
    assert len([k for k in refs["refs"] if k.startswith("c/") and not k.startswith("c/.")]) == len(entries)
    same(referenced(refs)["c"].values, arr)


def test_a_partial_last_chunk_is_what_zarr_refuses(tmp_path):
    # Why chunks divide the rows: a short last chunk (the file ends where the array does)
    # fails in zarr's bytes codec, which reshapes every chunk to the full chunk shape.
    manifests = importlib.import_module("virtualizarr.manifests")
    path = tmp_path / "p.npy"
    np.save(path, np.arange(10.0))
    store = NpyParser(chunk_bytes=4 * 8)(url(path), registry())
    assert chunk_count(store_layout(path), 4 * 8) == 5  # 4 rows fit, 2 divide 10: 5 chunks of 2
    array = store._group.arrays["p"]
    entries = array.manifest.dict()
    offset = entries["0"]["offset"]
    short = manifests.ChunkManifest(
        {
            "0": {"path": url(path), "offset": offset, "length": 32},
            "1": {"path": url(path), "offset": offset + 32, "length": 32},
            "2": {"path": url(path), "offset": offset + 64, "length": 16},
        }
    )
    metadata = importlib.import_module("virtualizarr.manifests.utils").create_v3_array_metadata(
        shape=(10,),
        data_type=np.dtype("<f8"),
        chunk_shape=(4,),
        fill_value=np.nan,
        codecs=[{"name": "bytes", "configuration": {"endian": "little"}}],
        dimension_names=["x"],
    )
    group = manifests.ManifestGroup(arrays={"p": manifests.ManifestArray(metadata=metadata, chunkmanifest=short)})
    ds = xr.open_zarr(manifests.ManifestStore(group=group, registry=registry()), consolidated=False, zarr_format=3)
    with pytest.raises(ValueError, match="cannot reshape array of size 2 into shape"):
        ds["p"].values  # noqa: B018


def store_layout(path):
    from npy._source import locate

    return locate(str(path))


def test_a_file_over_64_mib_is_many_chunks(tmp_path):
    arr = np.arange(12 << 20, dtype="<f8")  # 96 MiB: 2 chunks of 48 MiB (3 x 2^21 rows)
    path = tmp_path / "big.npy"
    np.save(path, arr)
    store = NpyParser()(url(path), registry())
    entries = chunk_entries(store, "big")
    assert [e["length"] for _, e in entries] == [48 << 20] * 2
    ds = xr.open_zarr(store, consolidated=False, zarr_format=3, chunks=None)
    same(ds["big"].values, np.load(path))
    path.unlink()


def test_a_gigabyte_is_sixteen_chunks_read_equal(tmp_path):
    # 1 GiB of <f8, written sparse but for a few runs: 16 chunks of 64 MiB, each read by
    # xarray and compared with the map's.
    n = 1 << 27
    path = tmp_path / "gib.npy"
    mm = np.lib.format.open_memmap(path, mode="w+", dtype="<f8", shape=(n,))
    for at in (0, (1 << 23) - 5, n // 2, n - 1000):
        mm[at : at + 1000] = np.arange(at, at + 1000)
    mm.flush()
    del mm
    try:
        store = NpyParser()(url(path), registry())
        entries = chunk_entries(store, "gib")
        assert len(entries) == 16 and {e["length"] for _, e in entries} == {CHUNK_BYTES}
        ds = xr.open_zarr(store, consolidated=False, zarr_format=3, chunks=None)
        want = np.load(path, mmap_mode="r")
        step = 1 << 23
        for k in range(16):
            assert np.array_equal(ds["gib"][k * step : (k + 1) * step].values, want[k * step : (k + 1) * step]), k
        del want
    finally:
        path.unlink()
