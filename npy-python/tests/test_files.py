"""npy.load and npy.save against np.load and np.save, on every file NumPy wrote."""

import numpy as np
import pytest

import npy
from conftest import NPY_FILES, NPZ_FILES, ids

FLAGS = ("c_contiguous", "f_contiguous", "writeable", "aligned")


def reference(path, **kwargs):
    return np.load(path, allow_pickle=True, **kwargs)


def assert_same(ours, theirs):
    assert type(ours) is type(theirs)
    assert ours.dtype == theirs.dtype
    assert ours.dtype.descr == theirs.dtype.descr
    assert ours.shape == theirs.shape
    for flag in FLAGS:
        assert getattr(ours.flags, flag) == getattr(theirs.flags, flag), flag
    if theirs.dtype.hasobject or theirs.dtype.kind == "T":
        # The same values of the same types (NumPy scalars included), and the same sharing.
        assert repr(ours.tolist()) == repr(theirs.tolist())
        assert [type(v) for v in ours.flat] == [type(v) for v in theirs.flat]
        assert len({id(v) for v in ours.flat}) == len({id(v) for v in theirs.flat})
    else:
        assert field_bytes(ours) == field_bytes(theirs)


def field_bytes(arr):
    """The bytes of every field (not of the padding, which np.load leaves uninitialized
    when it reads an npz member of a padded record dtype)."""
    if arr.dtype.names is None:
        return arr.tobytes(order="A")
    return b"".join(field_bytes(arr[name]) for name in arr.dtype.names)


@pytest.mark.parametrize("path", NPY_FILES, ids=ids(NPY_FILES))
def test_load_equals_np_load(path):
    assert_same(npy.load(path, max_header_size=2**20), reference(path, max_header_size=2**20))


@pytest.mark.parametrize("path", NPY_FILES, ids=ids(NPY_FILES))
def test_save_is_np_save(path, tmp):
    arr = reference(path, max_header_size=2**20)
    npy.save(tmp / "ours.npy", arr)
    np.save(tmp / "theirs.npy", arr)
    assert (tmp / "ours.npy").read_bytes() == (tmp / "theirs.npy").read_bytes()
    # And what npy loaded saves as np.save saves it.
    ours = npy.load(path, max_header_size=2**20)
    npy.save(tmp / "again", ours)
    np.save(tmp / "again_np", ours)
    assert (tmp / "again.npy").read_bytes() == (tmp / "again_np.npy").read_bytes()


@pytest.mark.parametrize("path", NPY_FILES, ids=ids(NPY_FILES))
@pytest.mark.parametrize("mode", ["r", "c", "r+"])
def test_mmap_equals_np_load(path, mode, tmp):
    theirs = reference(path, max_header_size=2**20)
    if theirs.dtype.hasobject or theirs.dtype.kind == "T":
        with pytest.raises(ValueError, match=str(path.name)):
            npy.load(path, mmap_mode=mode, max_header_size=2**20)
        return
    if mode == "r+":
        copy = tmp / path.name
        copy.write_bytes(path.read_bytes())
        path = copy
    ours = npy.load(path, mmap_mode=mode, max_header_size=2**20)
    theirs = np.load(path, mmap_mode=mode, max_header_size=2**20)
    assert_same(ours, theirs)
    if isinstance(theirs, np.memmap):
        assert ours.offset == theirs.offset and ours.mode == theirs.mode


@pytest.mark.parametrize("path", NPZ_FILES, ids=ids(NPZ_FILES))
def test_npz_equals_np_load(path):
    with np.load(path, allow_pickle=True) as theirs, npy.load_npz(path, max_header_size=2**20) as ours:
        assert ours.files == theirs.files
        assert list(ours) == theirs.files and len(ours) == len(theirs.files)
        for name in theirs.files:
            assert_same(ours[name], theirs[name])
            assert_same(ours[name + ".npy"], theirs[name])
        every = ours.load_all()
        assert list(every) == theirs.files
        for name in theirs.files:
            assert_same(every[name], theirs[name])


@pytest.mark.parametrize("path", NPZ_FILES, ids=ids(NPZ_FILES))
def test_npz_members_map(path):
    with np.load(path, allow_pickle=True) as theirs, npy.load_npz(path, mmap_mode="r", max_header_size=2**20) as ours:
        stored = {i.filename[:-4]: i.compress_type == 0 for i in theirs.zip.infolist()}
        for name in theirs.files:
            member = ours[name]
            if stored[name] and not theirs[name].dtype.hasobject:
                assert isinstance(member, np.memmap) and member.filename == str(path.resolve())
                assert field_bytes(member) == field_bytes(theirs[name])
            else:
                assert_same(member, theirs[name])
