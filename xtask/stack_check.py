#!/usr/bin/env python3
"""Dask reads the npy stacks npy writes, and npy reads the stacks Dask writes.

Usage: stack_check.py DIR NPY

A stack is what `dask.array.to_npy_stack` writes: a directory of blocks 0.npy, 1.npy, ...
along one axis, and `info`, `pickle.dump({'chunks': ..., 'dtype': ..., 'axis': ...})`.
Dask computes on a LocalCluster (2 worker processes, 127.0.0.1), one for the whole run.

a. Every DIR/<case>/ beside DIR/<case>.npy (left by the Rust tests: a stack npy wrote,
   and the array written whole) holds 0.npy ... N-1.npy and `info`, nothing else; Dask
   (`from_npy_stack`, or the blocks concatenated when there is no `info`) computes it as
   the array exactly: dtype, shape and the bytes of every field (a record's padding
   aside: NumPy does not copy it), and reduces it as NumPy reduces the array (per
   numeric field: sums of integers and booleans, maxima of floats, complex numbers and
   datetimes). `info` (our own file: unpickled as is) must hold chunks, dtype and axis
   that fit the blocks, and be byte for byte what Dask writes: `pickle.dumps` of what it
   holds, and the `info` of Dask's own stack of the array in those chunks.
b. Dask writes stacks of random arrays (floats, integers, records with big-endian,
   nested and subarray fields, strings, datetimes; 0 to 23 rows, 1-D to 3-D along axes
   0, 1 and 2; uneven chunks, one of length 0) with its threaded scheduler; `NPY stack
   join` of each, with `info` and without, must give the array. `NPY stack split ORIG DIR
   --rows N --axis K` of each must give a stack Dask computes as the array, whose `info`
   holds chunks (N, ..., N, rest) along K and the whole length on the other axes, and
   whose files are those of Dask's stack of the array in those chunks (blocks compared
   when the array is in C order). And a stack Dask wrote on the cluster, whose blocks
   are not all in the byte order its `info` says (see check_mixed), must join to the
   array's values.
c. Hostile `info` files: pickles that would run a command when unpickled (as the dtype,
   and as the whole of `info`) must make `NPY stack join` exit 1 saying "not allowed" on
   stderr, run nothing and write nothing; a truncated `info` must make it exit 1.

Prints one line per case, then `N cases checked` (`, M failed` if any did); exits 1 on any
failure, or when DIR holds no case.
"""

import os
import pickle
import pickletools
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

SEED = 20240618
TIMEOUT = 120  # seconds for one run of NPY


class Bad(Exception):
    pass


# ----------------------------------------------------------------------------
# comparing arrays
# ----------------------------------------------------------------------------


def leaf_fields(dtype, prefix=()):
    """Index paths of the leaf fields of a record dtype ([()] for a plain dtype)."""
    if dtype.names is None:
        return [prefix]
    return [p for name in dtype.names for p in leaf_fields(dtype.fields[name][0], prefix + (name,))]


def field(arr, path):
    for name in path:
        arr = arr[name]
    return arr


def same(got, want, what):
    """Same dtype, shape and bytes of every leaf field (NaN payloads included). Records are
    compared field by field: NumPy and Dask copy records without their padding bytes."""
    if got.dtype != want.dtype or got.shape != want.shape:
        raise Bad(f"{what}: {got.dtype} {got.shape}, expected {want.dtype} {want.shape}")
    for path in leaf_fields(want.dtype):
        a, b = np.ascontiguousarray(field(got, path)), np.ascontiguousarray(field(want, path))
        if a.tobytes() != b.tobytes():
            where = f" in field {'.'.join(path)}" if path else ""
            raise Bad(f"{what}: other values{where}")


def reductions(x):
    """(field, reduction) per numeric leaf field of `x`, a Dask or a NumPy array: the sum
    over axis 0 of integers and booleans, the maximum of floats, complex numbers and
    datetimes; none when `x` has no elements."""
    if x.ndim == 0 or 0 in x.shape:
        return []
    out = []
    for path in leaf_fields(x.dtype):
        col = field(x, path)
        name = ".".join(path) or "values"
        if col.dtype.kind in "biu":
            out.append((name, col.sum(axis=0)))
        elif col.dtype.kind in "fcMm":
            out.append((name, col.max(axis=0)))
    return out


def same_reductions(x, want, what):
    """Dask's reductions of `x` on the cluster equal NumPy's of `want`; returns how many."""
    theirs = reductions(x)
    got = dask.compute(*[r for _, r in theirs])
    for (name, _), value, (_, expect) in zip(theirs, got, reductions(want)):
        value, expect = np.asarray(value), np.asarray(expect)
        nan = expect.dtype.kind in "fcMm"
        if value.dtype != expect.dtype or not np.array_equal(value, expect, equal_nan=nan):
            raise Bad(f"{what}: Dask's reduction of {name} is {value!r}, NumPy's {expect!r}")
    return len(theirs)


# ----------------------------------------------------------------------------
# stacks
# ----------------------------------------------------------------------------


def block_names(directory):
    """The blocks of a stack, 0.npy ... N-1.npy, and whether it has `info`; anything else
    in the directory fails (a temporary file left behind, a gap in the numbers)."""
    names = {p.name for p in directory.iterdir()}
    count = sum(1 for name in names if re.fullmatch(r"(0|[1-9][0-9]*)\.npy", name))
    blocks = [f"{i}.npy" for i in range(count)]
    extra = sorted(names - set(blocks) - {"info"})
    if extra or count == 0:
        raise Bad(f"{directory.name}/ holds {sorted(names)}: expected 0.npy ... N-1.npy and info")
    return blocks, "info" in names


def block_headers(directory, blocks):
    """(shape, dtype, fortran_order) of each block."""
    out = []
    for name in blocks:
        a = np.load(directory / name, mmap_mode="r", allow_pickle=False)
        out.append((a.shape, a.dtype, bool(a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous)))
        del a
    return out


def infer_axis(headers, shape):
    """The axis along which blocks of these shapes make an array of `shape`."""
    for axis in range(len(shape)):
        if sum(s[axis] for s, _, _ in headers) == shape[axis] and all(
            s[:axis] + s[axis + 1 :] == shape[:axis] + shape[axis + 1 :] for s, _, _ in headers
        ):
            return axis
    raise Bad(f"blocks of shapes {[s for s, _, _ in headers]} make no array of shape {shape}")


def dask_info(arr, chunks, axis):
    """The bytes of `info` in Dask's own stack of `arr` in `chunks` along `axis`."""
    with tempfile.TemporaryDirectory() as tmp, dask.config.set(scheduler="threads"):
        directory = os.path.join(tmp, "stack")
        da.to_npy_stack(directory, da.from_array(arr, chunks=chunks), axis=axis)
        with open(os.path.join(directory, "info"), "rb") as f:
            return f.read()


def differ(ours, theirs, whose):
    """Where two byte strings part, for a message."""
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return (f"{len(ours)} and {len(theirs)} bytes, from byte {at}: {ours[at:at + 16].hex()} "
            f"where {whose} has {theirs[at:at + 16].hex()}")


def check_info(directory, headers, want):
    """`info` unpickles to chunks, dtype and axis that fit the blocks and `want`, and is
    byte for byte what Dask writes; returns the axis and what was found."""
    raw = (directory / "info").read_bytes()
    with open(directory / "info", "rb") as f:
        meta = pickle.load(f)  # our own file, written by the Rust tests
    if not isinstance(meta, dict) or sorted(meta) != ["axis", "chunks", "dtype"]:
        raise Bad(f"info holds {meta!r}, expected a dict of chunks, dtype and axis")
    chunks, dtype, axis = meta["chunks"], meta["dtype"], meta["axis"]
    if type(axis) is not int or not 0 <= axis < want.ndim:
        raise Bad(f"info: axis {axis!r} for {want.ndim} dimensions")
    if not isinstance(dtype, np.dtype) or dtype != want.dtype:
        raise Bad(f"info: dtype {dtype!r}, expected {want.dtype!r}")
    if any(d != dtype for _, d, _ in headers):
        raise Bad(f"info: dtype {dtype!r}, but the blocks have {[str(d) for _, d, _ in headers]}")
    expect = tuple(
        tuple(s[axis] for s, _, _ in headers) if i == axis else (n,) for i, n in enumerate(want.shape)
    )
    ints = type(chunks) is tuple and all(type(c) is tuple and all(type(n) is int for n in c) for c in chunks)
    if not ints or chunks != expect:
        raise Bad(f"info: chunks {chunks!r}, the blocks make {expect!r}")
    again = pickle.dumps({"chunks": chunks, "dtype": dtype, "axis": axis})
    if raw != again:
        raise Bad(f"info is not what pickle.dumps writes for what it holds: {differ(raw, again, 'pickle.dumps')}")
    theirs = dask_info(want, chunks, axis)
    if raw != theirs:
        raise Bad(f"info is not what Dask writes for this array and chunks: {differ(raw, theirs, 'Dask')}")
    return axis, f"info as Dask writes it ({len(raw)} bytes, protocol {raw[1]})"


def check_ours(directory, want):
    """Part a: one stack the Rust tests wrote, against the array written whole."""
    blocks, has_info = block_names(directory)
    headers = block_headers(directory, blocks)
    if has_info:
        axis, about_info = check_info(directory, headers, want)
        x = da.from_npy_stack(str(directory))
    else:
        axis, about_info = infer_axis(headers, want.shape), "no info: blocks concatenated"
        parts = [
            da.from_delayed(dask.delayed(np.load)(str(directory / name), mmap_mode="r"), shape, dtype)
            for name, (shape, dtype, _) in zip(blocks, headers)
        ]
        x = da.concatenate(parts, axis=axis)
    same(x.compute(), want, "Dask's array")
    n = same_reductions(x, want, "Dask's array")
    fortran = sum(f for _, _, f in headers)
    return f"{len(blocks)} blocks along axis {axis} ({fortran} in Fortran order), {n} reductions; {about_info}"


# ----------------------------------------------------------------------------
# part b: Dask's stacks through npy, and npy's through Dask
# ----------------------------------------------------------------------------


NESTED = np.dtype([("id", ">i4"), ("pos", [("x", "<f8"), ("y", ">f4")]), ("samples", "<i2", (3,)),
                   ("name", "<U3"), ("ok", "|b1")], align=True)


def random_arrays():
    """(name, array, chunks Dask writes in, axis, (rows, axis) for npy stack split)."""
    rng = np.random.default_rng(SEED)
    f8 = rng.standard_normal(23)
    f8[[3, 9, 17]] = [np.nan, -0.0, np.inf]
    nested = np.zeros(11, dtype=NESTED)
    nested["id"] = rng.integers(-2**31, 2**31, 11)
    nested["pos"]["x"] = rng.standard_normal(11)
    nested["pos"]["y"] = rng.standard_normal(11)
    nested["samples"] = rng.integers(-2**15, 2**15, (11, 3))
    nested["name"] = [["ab", "", "\xe9t\xe9", "\U0001F600x"][i % 4] for i in range(11)]
    nested["ok"] = rng.integers(0, 2, 11).astype(bool)
    words = np.array(["".join(chr(c) for c in rng.integers(32, 0x2FF, rng.integers(0, 8))) for _ in range(16)],
                     dtype="<U7").reshape(2, 8)
    when = (rng.integers(-2**40, 2**40, 12)).astype("<M8[us]")
    when[4] = np.datetime64("NaT")
    c8 = (rng.standard_normal((6, 4)) + 1j * rng.standard_normal((6, 4))).astype("<c8")
    return [
        ("f8_1d", f8, ((7, 7, 7, 2),), 0, (5, 0)),
        ("f8_1d_one_block", f8, ((23,),), 0, (100, 0)),
        ("i8_2d_axis1", rng.integers(-2**63, 2**63 - 1, (4, 17), dtype=np.int64), ((2, 2), (5, 5, 5, 2)), 1, (6, 1)),
        ("be_i2_2d", rng.integers(-2**15, 2**15, (9, 3)).astype(">i2"), ((4, 4, 1), (2, 1)), 0, (4, 0)),
        ("u1_3d_axis2", rng.integers(0, 256, (2, 3, 9)).astype("|u1"), ((2,), (1, 2), (4, 4, 1)), 2, (2, 2)),
        ("f4_3d_axis1", rng.standard_normal((3, 10, 2)).astype("<f4"), ((1, 2), (3, 3, 3, 1), (2,)), 1, (3, 1)),
        ("record", nested, ((5, 5, 1),), 0, (4, 0)),
        ("U7_2d_axis1", words, ((2,), (3, 3, 2)), 1, (3, 1)),
        ("S4", np.array([b"abcd", b"", b"\x00\xff", b"x"] * 3, dtype="|S4"), ((4, 4, 4),), 0, (5, 0)),
        ("M8_us", when, ((5, 5, 2),), 0, (5, 0)),
        ("c8_2d", c8, ((2, 4), (4,)), 0, (4, 0)),
        ("fortran_2d", np.asfortranarray(rng.standard_normal((7, 5))), ((7,), (2, 2, 1)), 1, (2, 1)),
        ("zero_chunk", rng.integers(0, 100, 7).astype("<i4"), ((3, 0, 4),), 0, (3, 0)),
        ("empty_2d", np.zeros((0, 3), dtype="<f8"), ((0,), (3,)), 0, (5, 0)),
    ]


class NoCopy:
    """An array source without .copy(), as h5py's and zarr's datasets: da.from_array
    copies a NumPy array first, and NumPy copies records without their padding bytes."""

    def __init__(self, arr):
        self.arr, self.shape, self.dtype, self.ndim = arr, arr.shape, arr.dtype, arr.ndim

    def __getitem__(self, key):
        return self.arr[key]


def npy(binary, *args):
    return subprocess.run([binary, *map(str, args)], capture_output=True, text=True, timeout=TIMEOUT)


def run_ok(binary, *args):
    result = npy(binary, *args)
    if result.returncode != 0:
        raise Bad(f"npy {' '.join(map(str, args[:2]))}: exit {result.returncode}: {result.stderr.strip()}")


def split_chunks(shape, rows, axis):
    """The chunks of a split in `rows` along `axis`: one empty block if that axis is empty,
    as Dask has it."""
    along = [rows] * (shape[axis] // rows) + ([shape[axis] % rows] if shape[axis] % rows else [])
    along = along or [0]
    return tuple(tuple(along) if i == axis else (n,) for i, n in enumerate(shape))


def check_theirs(binary, work, name, arr, chunks, axis, split):
    """Part b for one array."""
    theirs, out = work / name, work / f"{name}.joined.npy"
    with dask.config.set(scheduler="threads"):  # see check_mixed for the cluster's stacks
        da.to_npy_stack(str(theirs), da.from_array(arr, chunks=chunks), axis=axis)
    run_ok(binary, "stack", "join", theirs, out)
    same(np.load(out, allow_pickle=False), arr, "npy stack join of Dask's stack")
    bare = work / f"{name}.noinfo"
    shutil.copytree(theirs, bare)
    (bare / "info").unlink()
    out.unlink()
    run_ok(binary, "stack", "join", bare, out)
    same(np.load(out, allow_pickle=False), arr, "npy stack join of Dask's stack without info")
    done = f"joined Dask's {len(chunks[axis])} blocks along axis {axis}, with info and without"
    rows, k = split
    orig, ours, ref = work / f"{name}.npy", work / f"{name}.split", work / f"{name}.dask"
    np.save(orig, arr, allow_pickle=False)
    run_ok(binary, "stack", "split", orig, ours, "--rows", rows, "--axis", k)
    want = split_chunks(arr.shape, rows, k)
    with open(ours / "info", "rb") as f:
        meta = pickle.load(f)  # our own file, just written
    if meta.get("chunks") != want or meta.get("axis") != k:
        raise Bad(f"npy stack split --rows {rows} --axis {k}: info {meta!r}, expected chunks {want!r}")
    same(da.from_npy_stack(str(ours)).compute(), arr, f"Dask's read of npy stack split --rows {rows} --axis {k}")
    # Dask's own stack of the array npy read (np.load's dtype: an aligned record's flag is
    # not in the file) in those chunks: the same files (blocks compared for C order arrays
    # only: how Dask lays out the blocks of a Fortran order array depends on its source).
    # Read through NoCopy, so Dask saves NumPy's slices, padding bytes included.
    with dask.config.set(scheduler="threads"):
        da.to_npy_stack(str(ref), da.from_array(NoCopy(np.load(orig)), chunks=want), axis=k)
    names = sorted(p.name for p in ours.iterdir())
    if names != sorted(p.name for p in ref.iterdir()):
        raise Bad(f"npy stack split wrote {names}, Dask writes {sorted(p.name for p in ref.iterdir())}")
    compared = [n for n in names if n == "info" or not np.isfortran(arr)]
    differ = [n for n in compared if (ours / n).read_bytes() != (ref / n).read_bytes()]
    if differ:
        raise Bad(f"npy stack split --rows {rows} --axis {k}: {', '.join(differ)} not the bytes Dask writes")
    return done + f"; split into {len(want[k])} blocks of {rows} along axis {k}, {len(compared)} files as Dask's"


def check_mixed(binary, work):
    """Part b, a stack Dask wrote on the cluster: there the rechunk to one chunk across
    axis 1 concatenates with np.concatenate, which gives native byte order, so blocks of a
    '>i2' array come out '<i2' (some of them, from run to run), under an `info` that says
    '>i2' (dask 2026.8.0; the threaded scheduler slices the source instead, and keeps
    '>i2'). `npy stack join` converts such blocks: it gives the values in the dtype of
    `info`, or without `info` in the first block's."""
    arr = (np.arange(-13, 14).reshape(9, 3) * 1001).astype(">i2")
    theirs, out = work / "mixed_byte_order", work / "mixed_byte_order.joined.npy"
    da.to_npy_stack(str(theirs), da.from_array(arr, chunks=((4, 4, 1), (2, 1))), axis=0)
    blocks, _ = block_names(theirs)
    dtypes = [d.str for _, d, _ in block_headers(theirs, blocks)]
    run_ok(binary, "stack", "join", theirs, out)
    joined = np.load(out, allow_pickle=False)
    if joined.dtype.str != ">i2":
        raise Bad(f"npy stack join of blocks {dtypes} under info '>i2' gave {joined.dtype.str}")
    same(joined, arr, "npy stack join of blocks of both byte orders")
    (theirs / "info").unlink()
    out.unlink()
    run_ok(binary, "stack", "join", theirs, out)
    joined = np.load(out, allow_pickle=False)
    if joined.dtype.str != dtypes[0]:
        raise Bad(f"npy stack join without info of blocks {dtypes} gave {joined.dtype.str}, not the first block's")
    same(joined.astype("=i2"), arr.astype("=i2"), "npy stack join of blocks of both byte orders, no info")
    return f"Dask's blocks {', '.join(dtypes)} under info '>i2': joined as '>i2', without info as {dtypes[0]!r}"


# ----------------------------------------------------------------------------
# part c: hostile info files
# ----------------------------------------------------------------------------


class RunsCommand:
    """Pickles as a call of os.system: unpickling it runs the command (never done here)."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


class RunsExec:
    """Pickles as a call of exec: unpickling it runs the code (never done here)."""

    def __init__(self, code):
        self.code = code

    def __reduce__(self):
        return (exec, (self.code,))


def globals_in(raw):
    """The module.name of every global a pickle names, read without unpickling it."""
    found, strings = [], []
    for op, arg, _ in pickletools.genops(raw):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            found.append(".".join(strings[-2:]))
        elif op.name in ("GLOBAL", "INST"):
            found.append(arg.replace(" ", "."))
    return found


def hostile_info(case, sentinel):
    """The `info` of a hostile case: unpickling it would create `sentinel`."""
    if case == "dtype_runs_a_command":
        return {"chunks": ((3,),), "dtype": RunsCommand(f"touch {shlex.quote(str(sentinel))}"), "axis": 0}
    return RunsExec(f"open({str(sentinel)!r}, 'w').close()")


def check_hostile(binary, work, case):
    """Part c: a stack of a valid 0.npy whose `info` would run code when unpickled."""
    directory, out, sentinel = work / case, work / f"{case}.npy", work / f"{case}.SENTINEL"
    directory.mkdir()
    np.save(directory / "0.npy", np.arange(3, dtype="<i8"))
    raw = pickle.dumps(hostile_info(case, sentinel))  # pickling calls __reduce__, nothing else
    names = globals_in(raw)
    if not any(n.endswith((".system", ".exec")) for n in names):
        raise Bad(f"the pickle names {names}, not the call meant")
    (directory / "info").write_bytes(raw)
    result = npy(binary, "stack", "join", directory, out)
    if sentinel.exists():
        raise Bad("npy stack join ran the pickle's code")
    if result.returncode != 1 or "not allowed" not in result.stderr:
        raise Bad(f"exit {result.returncode}, stderr {result.stderr.strip()!r}; expected exit 1 and 'not allowed'")
    if out.exists():
        raise Bad(f"npy stack join refused the stack but left {out.name}")
    return f"info naming {', '.join(names)} refused: {result.stderr.strip()}"


def check_truncated(binary, work):
    """Part c: a stack Dask wrote, its `info` cut in half."""
    directory, out = work / "truncated_info", work / "truncated_info.npy"
    with dask.config.set(scheduler="threads"):
        da.to_npy_stack(str(directory), da.from_array(np.arange(10, dtype="<f8"), chunks=4), axis=0)
    raw = (directory / "info").read_bytes()
    (directory / "info").write_bytes(raw[: len(raw) // 2])
    result = npy(binary, "stack", "join", directory, out)
    if result.returncode != 1:
        raise Bad(f"exit {result.returncode}, expected 1; stderr {result.stderr.strip()!r}")
    if out.exists():
        raise Bad(f"npy stack join refused the stack but left {out.name}")
    return f"{len(raw) // 2} of {len(raw)} bytes of info refused: {result.stderr.strip()}"


# ----------------------------------------------------------------------------


def run_case(label, check, *args):
    """Runs one check; prints its line; returns 0 or 1 (failures)."""
    try:
        print(f"ok   {label}: {check(*args)}", flush=True)
        return 0
    except Bad as e:
        print(f"FAIL {label}: {e}", flush=True)
    except Exception as e:  # Dask, NumPy, pickle or npy refusing is a failure too
        print(f"FAIL {label}: {type(e).__name__}: {e}", flush=True)
    return 1


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    directory, binary = Path(sys.argv[1]), sys.argv[2]
    cases = []
    if directory.is_dir():
        cases = sorted(p.name for p in directory.iterdir() if p.is_dir() and (directory / f"{p.name}.npy").is_file())
    if not cases:
        print(f"FAIL no <case>/ beside <case>.npy in {directory}: did the stack tests of cargo test run?")
        return 1
    checked = failed = 0
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None)
    client = Client(cluster)
    try:
        print(f"dask {dask.__version__} on {len(client.scheduler_info()['workers'])} worker processes", flush=True)
        for case in cases:
            want = np.load(directory / f"{case}.npy", allow_pickle=False)
            checked += 1
            failed += run_case(f"a/{case}", check_ours, directory / case, want)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for name, arr, chunks, axis, split in random_arrays():
                checked += 1
                failed += run_case(f"b/{name}", check_theirs, binary, work, name, arr, chunks, axis, split)
            checked += 1
            failed += run_case("b/mixed_byte_order", check_mixed, binary, work)
            for case in ("dtype_runs_a_command", "info_runs_code"):
                checked += 1
                failed += run_case(f"c/{case}", check_hostile, binary, work, case)
            checked += 1
            failed += run_case("c/truncated_info", check_truncated, binary, work)
    finally:
        client.close()
        cluster.close()
    if failed:
        print(f"{checked} cases checked, {failed} failed")
        return 1
    print(f"{checked} cases checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
