"""The example extension (npy-pyo3/example): Rust records to NumPy and back."""

import numpy as np
import pytest

import npy
import traces

TRACE = np.dtype(
    [("trace_id", "<i4"), ("station", "<u2"), ("t0", "<f8"), ("dt", "<f4"), ("samples", "<f4", (8,))],
    align=True,
)


def test_records_are_numpy_records_without_copies():
    t = traces.make_traces(1000)
    assert t.dtype == TRACE and t.dtype.itemsize == TRACE.itemsize
    assert t["t0"][3] == 1.5 and t["station"][100] == 3 and list(t["samples"][2]) == [2.0] * 8
    assert t.flags.owndata is False and t.flags.writeable
    assert traces.is_borrowed(t)
    assert traces.mean_t0(t) == pytest.approx(np.mean(t["t0"]))
    assert traces.trace_dtype() == TRACE


def test_other_layouts_convert_by_field_name(tmp_path):
    t = traces.make_traces(100)
    other = np.dtype(
        [
            ("t0", ">f8"),
            ("samples", "<f4", (8,)),
            ("trace_id", "<i8"),
            ("dt", "<f8"),
            ("station", "<u2"),
            ("extra", "<i4"),
        ]
    )
    converted = np.zeros(100, dtype=other)
    for name in TRACE.names:
        converted[name] = t[name]
    with pytest.raises(TypeError, match="trace_id"):
        traces.mean_t0(converted)  # i8 does not narrow to i4
    other = np.dtype([(n, f) if n != "trace_id" else (n, "<i2") for n, f in [(d[0], d[1]) for d in other.descr]])
    narrow = np.zeros(
        100, dtype=[("t0", ">f8"), ("samples", "<f4", (8,)), ("trace_id", "<i2"), ("dt", "<f4"), ("station", "<u2")]
    )
    for name in TRACE.names:
        narrow[name] = t[name]
    assert not traces.is_borrowed(narrow)
    assert traces.mean_t0(narrow) == pytest.approx(np.mean(t["t0"]))
    back = traces.round_trip(narrow)
    assert back.dtype == TRACE and np.array_equal(back, t)
    with pytest.raises(TypeError, match="'dt'"):
        traces.mean_t0(
            np.zeros(3, dtype=[("trace_id", "<i4"), ("station", "<u2"), ("t0", "<f8"), ("samples", "<f4", (8,))])
        )
    with pytest.raises(TypeError, match="NumPy array"):
        traces.mean_t0([1, 2])
    # Through a file, both ways.
    npy.save(tmp_path / "t.npy", t)
    np.save(tmp_path / "np.npy", t)
    assert (tmp_path / "t.npy").read_bytes() == (tmp_path / "np.npy").read_bytes()
    loaded = npy.load(tmp_path / "t.npy")
    assert traces.is_borrowed(loaded) and np.array_equal(loaded, t)
    assert traces.is_borrowed(np.load(tmp_path / "t.npy"))


def test_strided_and_misaligned_arrays_are_copied_not_viewed():
    t = traces.make_traces(10)
    assert not traces.is_borrowed(t[::2])
    assert traces.mean_t0(t[::2]) == pytest.approx(np.mean(t["t0"][::2]))
    raw = np.zeros(10 * TRACE.itemsize + 1, dtype=np.uint8)[1:].view(TRACE)
    raw[:] = t
    assert not traces.is_borrowed(raw) and traces.mean_t0(raw) == pytest.approx(np.mean(t["t0"]))
