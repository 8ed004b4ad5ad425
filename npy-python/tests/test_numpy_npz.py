"""npy.savez, npy.savez_compressed and the NpzFile npy.load returns, against NumPy's: the same
members (names, order, compression, bytes) and the same mapping, attributes, repr and errors."""

import collections.abc
import gzip
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest

import npy
from conftest import NPZ_FILES, ids
from support import (
    PATH_KINDS,
    PY2_COMPLEX,
    READ_KINDS,
    WRITE_KINDS,
    Raised,
    attempt,
    describe,
    field_bytes,
    hostile_objects,
    kind,
    npy_bytes,
    object_npy,
    position,
    py2_pickle,
    py2_str,
    raised,
    sample,
)

NO_SAVED_OBJECTS = "Object arrays cannot be saved when allow_pickle=False"
NO_LOADED_OBJECTS = "Object arrays cannot be loaded when allow_pickle=False"
SAVERS = ["savez", "savez_compressed"]


def positional():
    return [sample("<f8"), sample("object")]


def keywords():
    return {
        "rec": sample("record-aligned"),
        "text": sample("StringDType"),
        "scalar": sample("0-d"),
        "empty": sample("empty-0x3"),
        "fortran": sample("fortran-2d"),
    }


def archive(data, start=0):
    """What zipfile and np.load see in an archive: each member's name, compression and bytes,
    and every array np.load reads (padding aside, which np.load leaves uninitialized)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = [(i.filename, i.compress_type, z.read(i.filename)) for i in z.infolist()]
    f = io.BytesIO(data)
    f.seek(start)
    with np.load(f, allow_pickle=True) as loaded:
        arrays = {name: describe(loaded[name], padding=False) for name in loaded.files}
    return members, arrays


def contents(npz):
    return {name: describe(npz[name], padding=False) for name in npz.files}


@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("how", PATH_KINDS)
def test_savez_path(same, how, saver):
    def run(api, folder):
        getattr(api, saver)(PATH_KINDS[how](folder / "a.npz"), *positional(), **keywords())
        return sorted(os.listdir(folder)), archive((folder / "a.npz").read_bytes())

    same(run)


# np.savez cannot write into a GzipFile (zipfile seeks back: "Negative seek in write mode") nor
# into an object without `read` (TypeError); npy's gzip case is test_savez_into_gzip.
SAVEZ_KINDS = [k for k in WRITE_KINDS if k not in ("GzipFile", "WriteOnly")]


@pytest.mark.parametrize("prefix", [b"", b"data before the archive\n"], ids=["at-start", "after-data"])
@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("kind_name", SAVEZ_KINDS)
def test_savez_file_object(same, kind_name, saver, prefix):
    def run(api, folder):
        with kind(kind_name, folder) as k:
            f = k.writer()
            f.write(prefix)
            getattr(api, saver)(f, *positional(), **keywords())
            end = position(f)
            closed = getattr(f, "closed", False)
            data = k.written()
        # npy's archive may be longer or shorter than NumPy's: the file ends where it ends.
        return end in (None, len(data)), closed, data.startswith(prefix), archive(data, len(prefix))

    same(run)


@pytest.mark.parametrize("saver", SAVERS)
def test_savez_into_gzip(tmp_path, saver):
    # The spec: a gzip.GzipFile takes an archive (np.savez fails there, see SAVEZ_KINDS).
    with gzip.GzipFile(tmp_path / "a.npz.gz", "wb") as g:
        g.write(b"before")
        getattr(npy, saver)(g, *positional(), **keywords())
        assert not g.closed
        end = g.tell()
    data = gzip.decompress((tmp_path / "a.npz.gz").read_bytes())
    assert end == len(data)
    reference = io.BytesIO()
    getattr(np, saver)(reference, *positional(), **keywords())
    assert data.startswith(b"before")
    assert archive(data, 6) == archive(reference.getvalue())


def test_savez_names_and_order(same):
    # Keywords first, then positional arrays as arr_0, arr_1, ...
    def run(api, folder):
        api.savez(folder / "a.npz", np.arange(2), np.arange(3), z=np.arange(4), arr_5=np.arange(5), a=np.arange(6))
        with api.load(folder / "a.npz") as z:
            return z.files, z.zip.namelist()

    assert same(run) == (
        ["z", "arr_5", "a", "arr_0", "arr_1"],
        ["z.npy", "arr_5.npy", "a.npy", "arr_0.npy", "arr_1.npy"],
    )


@pytest.mark.parametrize("saver", SAVERS)
def test_savez_positional_and_keyword_collide(same, saver):
    def run(api, folder):
        result = attempt(
            getattr(api, saver), folder / "a.npz", np.arange(2), np.arange(3), arr_1=np.arange(4), exact=True
        )
        return result, sorted(os.listdir(folder))

    assert same(run) == (Raised(ValueError, "Cannot use un-named variables and keyword arr_1"), [])


@pytest.mark.parametrize("saver", SAVERS)
def test_savez_keyword_named_file(same, saver):
    def run(api, folder):
        return attempt(getattr(api, saver), folder / "a.npz", np.arange(2), file=np.arange(3)), sorted(
            os.listdir(folder)
        )

    assert same(run) == (Raised(TypeError), [])


@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("name", ["object", "StringDType"])
def test_savez_allow_pickle_false_refuses_objects(same, saver, name):
    def run(api, folder):
        save = getattr(api, saver)
        return attempt(save, io.BytesIO(), a=np.arange(3), o=sample(name), allow_pickle=False, exact=True)

    assert same(run) == Raised(ValueError, NO_SAVED_OBJECTS)


@pytest.mark.parametrize("saver", SAVERS)
def test_savez_allow_pickle_false_leaves_no_file(tmp_path, saver):
    # np.savez leaves an archive of the members before the object array; npy writes paths
    # atomically: nothing new, an old file untouched.
    save = getattr(npy, saver)
    with pytest.raises(ValueError, match="allow_pickle=False"):
        save(tmp_path / "new.npz", a=np.arange(3), o=sample("object"), allow_pickle=False)
    assert os.listdir(tmp_path) == []
    save(tmp_path / "old.npz", a=np.arange(3))
    before = (tmp_path / "old.npz").read_bytes()
    with pytest.raises(ValueError, match="allow_pickle=False"):
        save(tmp_path / "old.npz", a=np.arange(3), o=sample("object"), allow_pickle=False)
    assert (tmp_path / "old.npz").read_bytes() == before and os.listdir(tmp_path) == ["old.npz"]


@pytest.mark.parametrize("saver", SAVERS)
def test_savez_allow_pickle_false_saves_plain_arrays(same, saver):
    def run(api, folder):
        getattr(api, saver)(folder / "a.npz", x=sample("record-aligned"), y=sample("<U7"), allow_pickle=False)
        return archive((folder / "a.npz").read_bytes())

    same(run)


@pytest.mark.parametrize("saver", SAVERS)
def test_savez_nothing(same, saver):
    def run(api, folder):
        getattr(api, saver)(folder / "e.npz")
        with api.load(folder / "e.npz") as z:
            return z.files, repr(z), archive((folder / "e.npz").read_bytes())

    same(run)


NAMES = ["x", "x.npz", "x.NPZ", "x.npy", "x.npz.bak", "dotted.name"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("how", PATH_KINDS)
def test_savez_appends_npz_unless_present(same, how, name):
    def run(api, folder):
        api.savez_compressed(PATH_KINDS[how](folder / name), a=np.arange(3))
        return sorted(os.listdir(folder))

    same(run)


WARNINGS = {
    "metadata": np.dtype("<f8", metadata={"unit": "m"}),
    "format-2.0": np.dtype([(f"field_{i}", "<f4") for i in range(5000)]),
    "format-3.0": np.dtype([("温度", "<f8")]),
}


@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("dtype", WARNINGS.values(), ids=WARNINGS.keys())
def test_savez_warns_as_numpy(same, saver, dtype):
    def run(api, folder):
        getattr(api, saver)(folder / "w.npz", np.zeros(1, dtype), b=np.zeros(2, dtype), c=np.arange(2))
        return archive((folder / "w.npz").read_bytes())

    same(run)


def test_savez_member_bytes_are_np_save_bytes(tmp_path):
    arrays = {
        name: sample(name) for name in ["<c16", "|S3", "<M8[ns]", "record-nested", "record-titles", "transposed-3d"]
    }
    for saver in SAVERS:
        getattr(npy, saver)(tmp_path / f"{saver}.npz", **arrays)
        with zipfile.ZipFile(tmp_path / f"{saver}.npz") as z:
            assert [(i.filename, i.compress_type) for i in z.infolist()] == [
                (f"{name}.npy", zipfile.ZIP_DEFLATED if saver == "savez_compressed" else zipfile.ZIP_STORED)
                for name in arrays
            ]
            assert all(z.read(f"{name}.npy") == npy_bytes(arr) for name, arr in arrays.items())
            assert z.testzip() is None


def test_savez_many_members(tmp_path):
    # More members than a zip without ZIP64 records can count (65535).
    count = 65_600
    npy.savez(tmp_path / "many.npz", **{f"m{i}": np.array(i, "<i4") for i in range(count)})
    with zipfile.ZipFile(tmp_path / "many.npz") as z:
        assert z.namelist() == [f"m{i}.npy" for i in range(count)]
        assert all(z.read(f"m{i}.npy") == npy_bytes(np.array(i, "<i4")) for i in range(0, count, 997))
    with np.load(tmp_path / "many.npz") as loaded:
        assert len(loaded.files) == count and loaded[f"m{count - 1}"] == count - 1


@pytest.mark.parametrize("saver", SAVERS)
def test_savez_large_member(same, saver):
    big = np.arange(1_000_000, dtype="<i8")

    def run(api, folder):
        getattr(api, saver)(folder / "big.npz", big=big, after=np.arange(3))
        with zipfile.ZipFile(folder / "big.npz") as z:
            infos = [(i.filename, i.compress_type, i.file_size, i.CRC) for i in z.infolist()]
        with np.load(folder / "big.npz") as loaded:
            return infos, np.array_equal(loaded["big"], big), loaded["after"].tolist()

    same(run)


def deflate_kinds():
    """One array of each kind the deflate bench measures (issue 82), each over 256 KiB so that
    its parts are deflated by the encoder a sample chooses (npy-core's npz/encoder.rs; below
    1 MiB in one slice, and only where zlib leaves more than a tenth)."""
    n = 12_000
    rng = np.random.default_rng(82)
    words = np.array("the quick brown fox jumps over a lazy dog seismic trace".split())
    return {
        "samples": (np.arange(n) % 4096).astype("<f4")[:, None] + np.arange(64, dtype="<f4") / np.float32(64),
        "random_f8": rng.random(20 * n),
        "small_i8": rng.integers(0, 100, 20 * n),
        "text_U": rng.choice(words, 5 * n),
        "zeros": np.zeros(40 * n),
        "walk_f8": np.cumsum(rng.standard_normal(20 * n)),
        "ints_0_49": rng.integers(0, 50, 40 * n),
        "image_u1": (np.add.outer(2 * np.arange(n // 20), np.arange(2048)) // 9 % 256).astype("u1"),
        "zeros_then_floats": np.concatenate([np.zeros(10 * n), rng.random(10 * n)]),
        # The traces' smaller columns (under 1 MiB: sampled in one slice), a short ramp.
        "trace_id": np.arange(100_000, dtype="<i4"),
        "t0": (np.arange(100_000) % 1000) * 0.001,
        "short_ramp": (np.arange(600_000, 670_000) / 64).astype("<f4"),
        # Over 4 MiB: cut into parts of 4 MiB, listed by a part index (extra field 0x706e).
        "walk_in_parts": np.cumsum(rng.standard_normal(100 * n)),
    }


DEFLATE_WRITERS = {
    "savez_compressed": lambda path, name, a: npy.savez_compressed(path, **{name: a}),
    "NpzWriter": lambda path, name, a: _write_one(npy.NpzWriter(path, "deflate"), name, a),
    "NpzWriter level 4": lambda path, name, a: _write_one(npy.NpzWriter(path, "deflate", 4), name, a),
}


def _write_one(writer, name, a):
    with writer as w:
        w[name] = a


@pytest.mark.parametrize("writer", DEFLATE_WRITERS)
@pytest.mark.parametrize("name", deflate_kinds())
def test_deflated_members_numpy_reads_equal_at_numpys_size(tmp_path, writer, name):
    a = deflate_kinds()[name]
    ours, theirs = tmp_path / "ours.npz", tmp_path / "np.npz"
    DEFLATE_WRITERS[writer](ours, name, a)
    np.savez_compressed(theirs, **{name: a})
    with zipfile.ZipFile(ours) as z:
        assert z.testzip() is None  # every member's CRC, by zipfile's own inflate
        info = z.getinfo(f"{name}.npy")
        assert info.compress_type == zipfile.ZIP_DEFLATED
        if name == "walk_in_parts" and (os.cpu_count() or 1) > 1:
            # Deflated on worker threads: its part index is in the central directory's
            # extra field, which zipfile keeps and skips.
            assert b"np" in info.extra, info.extra
    with np.load(ours) as loaded:
        assert loaded[name].dtype == a.dtype and np.array_equal(loaded[name], a)
    with npy.load(ours) as back:
        assert np.array_equal(back[name], a)
    if writer != "NpzWriter level 4":
        with zipfile.ZipFile(theirs) as z:
            numpys = z.getinfo(f"{name}.npy").compress_size
        assert info.compress_size <= numpys * 1.02, (info.compress_size, numpys)


# --- NpzFile: reading archives np.savez wrote -------------------------------------------------


def saved(folder, count=3, **extra):
    """An archive of `count` small arrays (and `extra`), saved by np.savez into folder/a.npz."""
    path = folder / "a.npz"
    np.savez(path, **{f"a{i}": np.arange(i + 1) for i in range(count)}, **extra)
    return path


@pytest.mark.parametrize("path", NPZ_FILES, ids=ids(NPZ_FILES))
def test_npz_corpus_file_objects(same, path):
    # Every archive NumPy wrote, through a stream.
    def run(api, folder):
        with api.load(io.BytesIO(path.read_bytes()), allow_pickle=True, max_header_size=2**20) as z:
            return repr(z), contents(z)

    same(run)


def test_npz_is_numpys_npzfile(tmp_path):
    with npy.load(saved(tmp_path)) as z:
        assert isinstance(z, np.lib.npyio.NpzFile) and isinstance(z, npy.NpzFile)


@pytest.mark.parametrize("allow_pickle", [False, True])
@pytest.mark.parametrize("how", PATH_KINDS)
def test_npz_attributes(same, how, allow_pickle):
    def run(api, folder):
        with api.load(PATH_KINDS[how](saved(folder)), allow_pickle=allow_pickle) as z:
            return {
                "files": z.files,
                "zip": (type(z.zip), z.zip.namelist()),
                "fid": (type(z.fid), z.fid.name, z.fid.mode, z.fid.closed),
                "allow_pickle": z.allow_pickle,
                "max_header_size": z.max_header_size,
                "pickle_kwargs": z.pickle_kwargs,
                "repr": repr(z),
            }

    assert same(run)["files"] == ["a0", "a1", "a2"]


@pytest.mark.parametrize("kind_name", READ_KINDS)
def test_npz_from_file_object(same, kind_name):
    def run(api, folder):
        data = saved(folder, rec=sample("record-aligned"), obj=sample("object")).read_bytes()
        with kind(kind_name, folder) as k:
            f = k.reader(data)
            with api.load(f, allow_pickle=True) as z:
                seen = z.fid, repr(z), z.files, contents(z)
            return seen, f.closed

    assert same(run)[0][:2] == (None, "NpzFile 'object' with keys: a0, a1, a2, rec, obj")


@pytest.mark.parametrize("offsets", ["from-the-archive", "from-the-file"])
@pytest.mark.parametrize("kind_name", READ_KINDS)
def test_npz_after_other_data(same, kind_name, offsets):
    # An archive after other data: copied there (its offsets count from its own start), or
    # written there by np.savez (zipfile's offsets count from the start of the file).
    def run(api, folder):
        if offsets == "from-the-archive":
            data = b"data before the archive" + saved(folder, obj=sample("object")).read_bytes()
        else:
            out = io.BytesIO(b"data before the archive")
            out.seek(0, io.SEEK_END)
            np.savez(out, **{f"a{i}": np.arange(i + 1) for i in range(3)}, obj=sample("object"))
            data = out.getvalue()
        with kind(kind_name, folder) as k:
            f = k.reader(data)
            f.seek(23)
            with api.load(f, allow_pickle=True) as z:
                seen = z.fid, repr(z), z.files, contents(z)
            return seen, f.closed

    assert same(run)[0][:2] == (None, "NpzFile 'object' with keys: a0, a1, a2, obj")


def test_npz_mapping(same):
    def run(api, folder):
        path = saved(folder, 4)
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("readme.txt", b"not an array")
        with api.load(path) as z:
            return {
                "in": ["a1" in z, "a1.npy" in z, "readme.txt" in z, "readme" in z, "a9" in z, 1 in z],
                "iter": list(z),
                "len": len(z),
                "getitem": [describe(z["a1"]), describe(z["a1.npy"]), z["readme.txt"]],
                "get": [describe(z.get("a2")), z.get("zz"), z.get("zz", 5)],
                "missing": attempt(lambda: z["zz"], exact=True),
                "f": [describe(z.f.a3), attempt(lambda: z.f.zz, exact=True), sorted(dir(z.f))],
                "keys": [
                    isinstance(z.keys(), collections.abc.KeysView),
                    list(z.keys()),
                    z.keys() == {"a0", "a1", "a2", "a3", "readme.txt"},
                ],
                "values": [isinstance(z.values(), collections.abc.ValuesView), [describe(v) for v in z.values()]],
                "items": [isinstance(z.items(), collections.abc.ItemsView), [(k, describe(v)) for k, v in z.items()]],
                "dict": sorted(dict(z)),
            }

    result = same(run)
    assert result["missing"] == Raised(KeyError, "'zz is not a file in the archive'")
    assert result["f"][1] == Raised(AttributeError, "zz")


@pytest.mark.parametrize("count", [1, 5, 7])
@pytest.mark.parametrize("how", PATH_KINDS)
def test_npz_repr(same, how, count):
    def run(api, folder):
        z = api.load(PATH_KINDS[how](saved(folder, count)))
        with open(folder / "a.npz", "rb") as f, api.load(f) as from_file:
            shown = repr(z), repr(from_file)
        z.close()
        # Closed, NumPy's NpzFile has no file left to name: 'object'.
        return shown, repr(z)

    same(run)


def test_npz_close(same):
    def run(api, folder):
        z = api.load(saved(folder))
        fid = z.fid
        z.close()
        after = z.zip, z.fid, fid.closed, z.files, len(z), "a1" in z, list(z)
        z.close()
        with api.load(folder / "a.npz") as managed:
            fid = managed.fid
        return after, (managed.zip, managed.fid, fid.closed)

    same(run)


def test_npz_member_after_close_raises_valueerror(tmp_path):
    # np.load's NpzFile raises AttributeError here by accident ('NoneType' has no 'open');
    # the spec says ValueError, as reading a closed file does.
    z = npy.load(saved(tmp_path))
    z.close()
    with pytest.raises(ValueError):
        z["a1"]


def test_npz_members_are_read_by_content_not_name(same):
    # NumPy returns an array for a member holding .npy bytes whatever its name, bytes otherwise.
    def run(api, folder):
        with zipfile.ZipFile(folder / "a.npz", "w") as z:
            z.writestr("data.bin", npy_bytes(np.arange(3)))
            z.writestr("fake.npy", b"not an array")
            z.writestr("dir/nested.npy", npy_bytes(np.eye(2)))
            z.writestr("empty.npy", b"")
        with api.load(folder / "a.npz") as z:
            return z.files, contents(z)

    same(run)


def test_npz_padding_is_the_stored_bytes(tmp_path):
    # np.load leaves a record member's padding uninitialized; npy gives the stored bytes.
    rec = sample("record-aligned")
    np.savez(tmp_path / "p.npz", rec=rec, nested=sample("record-nested"))
    with npy.load(tmp_path / "p.npz") as z, zipfile.ZipFile(tmp_path / "p.npz") as raw:
        for name in ("rec", "nested"):
            stored = raw.read(f"{name}.npy")
            assert z[name].tobytes() == stored[len(stored) - z[name].nbytes :]
    with np.load(tmp_path / "p.npz") as theirs, npy.load(tmp_path / "p.npz") as ours:
        assert field_bytes(ours["rec"]) == field_bytes(theirs["rec"])


@pytest.mark.filterwarnings("ignore:Custom dtypes are saved")
def test_npz_load_all(tmp_path):
    path = saved(tmp_path, 6, rec=sample("record-aligned"), obj=sample("object"), text=sample("StringDType"))
    with npy.load(path) as ours, np.load(path, allow_pickle=True) as theirs:
        every = ours.load_all()
        assert list(every) == theirs.files
        assert {k: describe(v, padding=False) for k, v in every.items()} == contents(theirs)


@pytest.mark.parametrize("allow_pickle", [False, True])
def test_npz_object_members_follow_allow_pickle(same, allow_pickle):
    def run(api, folder):
        with api.load(saved(folder, obj=sample("object")), allow_pickle=allow_pickle) as z:
            return describe(z["a0"]), describe(attempt(lambda: z["obj"], exact=True))

    result = same(run)
    assert (result[1] == Raised(ValueError, NO_LOADED_OBJECTS)) != allow_pickle


@pytest.mark.filterwarnings("ignore:Custom dtypes are saved")
def test_npz_default_allow_pickle_loads_plain_objects(tmp_path):
    # npy's default (None) loads plain object members as np.load(allow_pickle=True) does.
    path = saved(tmp_path, obj=sample("object"), text=sample("StringDType-na"))
    with npy.load(path) as ours, np.load(path, allow_pickle=True) as theirs:
        assert contents(ours) == contents(theirs)


@pytest.mark.parametrize("allow_pickle", [None, True])
def test_npz_unsafe_member_raises_and_runs_nothing(tmp_path, allow_pickle):
    marker = tmp_path / "ran"
    path = saved(tmp_path, evil=hostile_objects(marker))
    with npy.load(path, allow_pickle=allow_pickle) as z:
        assert z["a1"].tolist() == [0, 1]
        with pytest.raises(npy.UnsafePickleError, match="evil"):
            z["evil"]
        with pytest.raises(npy.UnsafePickleError, match="evil"):
            z.load_all()
    assert not marker.exists()


@pytest.mark.parametrize("encoding", ["ASCII", "latin1", "bytes"])
@pytest.mark.parametrize("fix_imports", [True, False])
def test_npz_pickle_arguments_reach_members(same, encoding, fix_imports):
    def run(api, folder):
        with zipfile.ZipFile(folder / "py2.npz", "w") as z:
            z.writestr("s.npy", object_npy(py2_pickle(b"N", py2_str(b"\xc3\xa4")), 2))
            z.writestr("c.npy", object_npy(py2_pickle(PY2_COMPLEX), 1))
        with api.load(folder / "py2.npz", allow_pickle=True, fix_imports=fix_imports, encoding=encoding) as z:
            return z.pickle_kwargs, describe(attempt(lambda: z["s"])), describe(attempt(lambda: z["c"]))

    kwargs, strings, numbers = same(run)
    assert kwargs == {"encoding": encoding, "fix_imports": fix_imports}
    assert raised(strings, UnicodeError) == (encoding == "ASCII")
    assert raised(numbers, ImportError) == (not fix_imports)


@pytest.mark.parametrize(
    "kwargs", [{}, {"max_header_size": 100_000}, {"allow_pickle": True}, {"allow_pickle": False}], ids=repr
)
def test_npz_max_header_size(same, kwargs):
    def run(api, folder):
        with api.load(saved(folder, wide=np.zeros(2, [(f"f{i}", "<f8") for i in range(2000)])), **kwargs) as z:
            return z.max_header_size, describe(z["a1"]), describe(attempt(lambda: z["wide"], exact=True))

    result = same(run)
    assert raised(result[2], ValueError) == ("max_header_size" not in kwargs and not kwargs.get("allow_pickle"))


def zip_bytes(**members):
    out = io.BytesIO()
    np.savez(out, **members)
    return out.getvalue()


@pytest.mark.parametrize("cut", [4, 30, 200, -30, -1])
def test_npz_truncated_archive(same, cut):
    def run(api, folder):
        (folder / "cut.npz").write_bytes(zip_bytes(x=np.arange(100), y=np.arange(5.0))[:cut])
        return attempt(api.load, folder / "cut.npz")

    assert raised(same(run), zipfile.BadZipFile)


def test_npz_truncated_member(same):
    def run(api, folder):
        with zipfile.ZipFile(folder / "a.npz", "w") as z:
            z.writestr("x.npy", npy_bytes(np.arange(100))[:-8])
            z.writestr("y.npy", npy_bytes(np.arange(3)))
        with api.load(folder / "a.npz") as z:
            return attempt(lambda: z["x"]), describe(z["y"])

    assert raised(same(run)[0], ValueError)


def corrupt(data, name, where):
    """An archive whose member `name` has one data byte flipped ("data") or its CRC-32 changed
    in the local and the central header ("crc")."""
    data = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo(name)
    local = info.header_offset
    if where == "data":
        name_len, extra_len = struct.unpack("<HH", data[local + 26 : local + 30])
        data[local + 30 + name_len + extra_len + info.compress_size - 1] ^= 0x01
    else:
        bad = struct.pack("<I", info.CRC ^ 1)
        data[local + 14 : local + 18] = bad
        central = data.find(b"PK\x01\x02" + data[local + 4 : local + 14])
        while data[central + 46 : central + 46 + len(name)] != name.encode():
            central = data.find(b"PK\x01\x02", central + 1)
        data[central + 16 : central + 20] = bad
    return bytes(data)


@pytest.mark.parametrize("saver, where", [("savez", "data"), ("savez", "crc"), ("savez_compressed", "crc")])
def test_npz_corrupt_member_fails_its_crc(same, saver, where):
    def run(api, folder):
        out = io.BytesIO()
        getattr(np, saver)(out, x=np.zeros(1000), y=np.arange(3))
        (folder / "bad.npz").write_bytes(corrupt(out.getvalue(), "x.npy", where))
        with api.load(folder / "bad.npz") as z:
            return attempt(lambda: z["x"]), describe(z["y"])

    assert raised(same(run)[0], zipfile.BadZipFile)


def test_npz_mmap_mode_maps_stored_members(tmp_path):
    # np.load ignores mmap_mode for archives; npy maps stored members read-only ('r') or
    # copy-on-write ('c'); compressed members are read as usual.
    path = tmp_path / "m.npz"
    np.savez(path, x=np.arange(8, dtype="<i8"), rec=sample("record-aligned"), o=sample("object"))
    deflated = tmp_path / "d.npz"
    np.savez_compressed(deflated, x=np.arange(8, dtype="<i8"))
    before = path.read_bytes()
    with npy.load(path, mmap_mode="r") as z, np.load(path, allow_pickle=True) as theirs:
        x = z["x"]
        assert isinstance(x, np.memmap) and x.mode == "r" and not x.flags.writeable
        assert os.fspath(x.filename) == str(path) and np.array_equal(x, theirs["x"])
        assert describe(z["o"]) == describe(theirs["o"])
        assert field_bytes(z["rec"]) == field_bytes(theirs["rec"])
    with npy.load(path, mmap_mode="c") as z:
        x = z["x"]
        assert isinstance(x, np.memmap) and x.flags.writeable
        x[0] = 99
    assert path.read_bytes() == before
    with npy.load(deflated, mmap_mode="r") as z:
        assert type(z["x"]) is np.ndarray and z["x"].tolist() == list(range(8))


def test_npz_mmap_mode_r_plus_refuses_stored_members(tmp_path):
    # Writing through the map would leave the member's CRC wrong; np.load ignores mmap_mode.
    np.savez(tmp_path / "m.npz", x=np.arange(8))
    with npy.load(tmp_path / "m.npz", mmap_mode="r+") as z, pytest.raises(ValueError):
        z["x"]


def test_npz_pickle_member_is_bytes(tmp_path):
    # A pickle stored as a member is bytes unless it starts as .npy does: no pickle is run.
    marker = tmp_path / "ran"
    with zipfile.ZipFile(tmp_path / "p.npz", "w") as z:
        z.writestr("p.pkl", pickle.dumps(hostile_objects(marker)))
    with npy.load(tmp_path / "p.npz") as ours, np.load(tmp_path / "p.npz") as theirs:
        assert ours["p.pkl"] == theirs["p.pkl"]
    assert not marker.exists()
