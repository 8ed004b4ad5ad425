"""NumPy's side of select.test.js: writes arrays (C and Fortran order, 0-d to 4-d, records,
big-endian, complex, bools, objects) to DIR and, for many indexes, what `a[...]` gives:
its shape, its bytes in C order (values for objects) and the storage positions of the
elements it takes (which bytes a reader needs). Prints the cases as JSON."""

import hashlib
import json
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(80)


def arrays():
    rec = np.dtype([("a", "<i4"), ("b", "<f8", (2,)), ("c", "S3")])
    r = np.zeros((5, 6), rec)
    r["a"] = np.arange(30).reshape(5, 6)
    r["b"] = np.arange(60).reshape(5, 6, 2) / 4
    r["c"] = [[b"x%d" % (i % 10) for i in range(6)] for _ in range(5)]
    yield "zero_d", np.array(3.5), False
    yield "one_d", np.arange(50, dtype="<i4"), False
    base2 = np.arange(63, dtype="<f8").reshape(7, 9) * 1.5
    yield "two_c", base2, False
    yield "two_f", np.asfortranarray(base2), True
    base3 = (np.arange(120) - 60).astype(">i2").reshape(4, 5, 6)
    yield "three_c", base3, False
    yield "three_f", np.asfortranarray(base3), True
    base4 = np.arange(360, dtype="<f4").reshape(3, 4, 5, 6) / 7
    yield "four_c", base4, False
    yield "four_f", np.asfortranarray(base4), True
    yield "records_c", r, False
    yield "records_f", np.asfortranarray(r), True
    yield "complex_c", (np.arange(42) + 1j * np.arange(42)[::-1]).astype("<c16").reshape(6, 7), False
    yield "bools_f", np.asfortranarray(np.arange(64).reshape(8, 8) % 3 == 0), True
    # Rows 400 KB apart: reads farther apart than 64 KiB, each exactly what is taken.
    yield "wide_c", np.arange(800_000, dtype="<f4").reshape(8, 100_000), False
    yield "tall_f", np.asfortranarray(np.arange(800_000, dtype="<f4").reshape(100_000, 8)), True
    # A column of a long matrix: three million pieces of one element, 16 bytes apart.
    yield "long_c", np.arange(6_000_000, dtype="<f8").reshape(3_000_000, 2) * 0.5, False
    objects = np.empty((3, 4), object)
    for i in range(3):
        for j in range(4):
            objects[i, j] = i * 10 + j
    yield "objects", objects, False


def entry(dim):
    """A random index entry for an axis of `dim`: JSON, and NumPy's."""
    kind = rng.integers(0, 5)
    if kind == 0 and dim > 0:
        i = int(rng.integers(-dim, dim))
        return i, i
    if kind == 1:
        return None, slice(None)
    if kind == 2:
        k = int(rng.integers(0, dim + 1))
        return [k, k], slice(k, k)
    a = int(rng.integers(0, dim + 1))
    b = int(rng.integers(a, dim + 1))
    step = int(rng.integers(1, 4))
    return [a, b, step], slice(a, b, step)


def indexes(shape):
    yield [], ()
    yield [None] * len(shape), tuple(slice(None) for _ in shape)
    if len(shape) >= 1 and shape[0] > 1:
        yield [1], (1,)
        yield [[0, shape[0], 2]], (slice(0, shape[0], 2),)
    for _ in range(0 if not shape else 30):
        n = int(rng.integers(1, len(shape) + 1))
        pairs = [entry(d) for d in shape[:n]]
        yield [p[0] for p in pairs], tuple(p[1] for p in pairs)


cases = []
for name, a, fortran in arrays():
    path = f"{out}/{name}.npy"
    np.save(path, a, allow_pickle=True)
    shape = a.shape
    if name in ("wide_c", "tall_f"):
        picks = (
            ([None, [5, 10]], (slice(None), slice(5, 10))),
            ([[0, 8, 2], [5, 10]], (slice(0, 8, 2), slice(5, 10))),
            ([3, [0, 100_000, 50_000]], (3, slice(0, 100_000, 50_000))),
        ) if name == "wide_c" else (
            ([[5, 10], None], (slice(5, 10), slice(None))),
            ([[5, 10], [0, 8, 2]], (slice(5, 10), slice(0, 8, 2))),
        )
    elif name == "long_c":
        for index, key in (([None, 1], (slice(None), 1)), ([[7, 2_999_990, 3], 0], (slice(7, 2_999_990, 3), 0))):
            got = np.ascontiguousarray(a[key])
            cases.append({"file": name, "index": index, "shape": list(got.shape), "itemsize": 8, "sha256": hashlib.sha256(got.tobytes()).hexdigest()})
        continue
    else:
        picks = list(indexes(shape))
    positions = np.arange(a.size).reshape(shape, order="F" if fortran else "C")
    for index, key in picks:
        got = a[key]
        case = {"file": name, "index": index, "shape": list(np.shape(got)), "itemsize": a.dtype.itemsize}
        if a.dtype.hasobject:
            case["values"] = np.ravel(got).tolist() if np.ndim(got) else [got]
        else:
            case["hex"] = np.ascontiguousarray(got).tobytes().hex()
        case["needed"] = sorted(np.ravel(positions[key]).tolist())
        cases.append(case)
print(json.dumps(cases))
