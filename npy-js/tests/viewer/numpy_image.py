#!/usr/bin/env python3
"""NumPy's side of the image view's browser test (tests/viewer_image.test.js).

Usage:
    numpy_image.py make DIR COLORMAPS
        Writes the arrays to DIR and prints the cases as JSON: per case, the file, how the
        view is set (axes shown, slider indices, colormap, contrast, complex part), the
        slice's size, and for sampled pixels (r, c) of the slice the colour NumPy computes
        with COLORMAPS (colormaps.json's tables and the mapping it states) and str() of the
        element (a pixel's channels for RGB) as NumPy prints it.
    numpy_image.py large-colours FILE OVERVIEW FINE COLORMAPS
        The colours of pixels of the region read at FINE (the view's select index, JSON),
        with the contrast of the overview read at OVERVIEW: JSON {range, pixels: [r, c, rgb]}.
    numpy_image.py str FILE INDEX...
        str() of the element at INDEX.
    numpy_image.py large DIR ROWS COLS
        DIR/large.npy: a ROWS x COLS <f4 image, sparse on disk: zeros but for a band of
        rows every 1,000 (a ramp from 0 to 1 every 97 columns).

The mapping (colormaps.json's "about"): t = (v - lo) / (hi - lo) clipped to [0, 1] (0
when hi <= lo), entry min(255, floor(256 t)); lo, hi the finite min and max, or the sorted
finite values at floor(p (n - 1) / 100) and floor((100 - p) (n - 1) / 100); NaN, +inf and
-inf the special colours. Complex: magnitude sqrt(re^2 + im^2), phase atan2(im, re).
Masks: False black, True white. RGB: u1 as it is, floats floor(255 clip(v, 0, 1) + 0.5).
"""

import json
import sys

import numpy as np


def contrast(values, p):
    finite = np.sort(values[np.isfinite(values)].astype(np.float64))
    n = finite.size
    if n == 0:
        return 0.0, 1.0
    if p == 0:
        return float(finite[0]), float(finite[-1])
    return float(finite[(p * (n - 1)) // 100]), float(finite[((100 - p) * (n - 1)) // 100])


def colour(v, lo, hi, table, special):
    v = float(v)
    if np.isnan(v):
        return special["nan"]
    if v == np.inf:
        return special["posinf"]
    if v == -np.inf:
        return special["neginf"]
    t = (v - lo) / (hi - lo) if hi > lo else 0.0
    t = min(1.0, max(0.0, t))
    return table[min(255, int(np.floor(256 * t)))]


def make(out, maps_path):
    maps = json.load(open(maps_path))
    rng = np.random.default_rng(80)

    image = (rng.standard_normal((512, 512)) * 2 + np.linspace(-3, 3, 512)).astype("<f4")
    image[5, 7] = np.nan
    image[100, 200] = np.inf
    image[300, 400] = -np.inf
    image[511, 0] = np.nan
    np.save(f"{out}/image.npy", image)

    y, x = np.mgrid[0:128, 0:192]
    photo = np.stack([x * 255 // 191, y * 255 // 127, (x + y) % 256], axis=-1).astype("|u1")
    np.save(f"{out}/photo.npy", photo)

    # RGBA floats, opaque (the canvas is read where it is drawn over its background), some
    # values outside 0..1 and NaN.
    rgba = rng.uniform(-0.2, 1.2, (40, 50, 4)).astype("<f4")
    rgba[..., 3] = 1
    rgba[3, 4, 0] = np.nan
    np.save(f"{out}/rgba.npy", rgba)

    z, yy, xx = np.mgrid[0:16, 0:64, 0:64]
    volume = (np.sin(xx / 7.0) * np.cos(yy / 5.0) * (z + 1)).astype("<f4")
    np.save(f"{out}/volume.npy", volume)

    t, zz, y4, x4 = np.mgrid[0:3, 0:5, 0:40, 0:48]
    series = np.asfortranarray((t * 1000 + zz * 100 + y4 * x4).astype("<i2"))
    np.save(f"{out}/series.npy", series)

    mask = np.add.outer(np.arange(256), np.arange(256)) % 7 == 0
    np.save(f"{out}/mask.npy", mask)

    w = np.linspace(-2, 2, 96)[:, None] + 1j * np.linspace(-3, 3, 128)[None, :]
    signal = (np.exp(1j * np.abs(w) * 3) * np.abs(w)).astype("<c8")
    np.save(f"{out}/complex.npy", signal)

    cases = []

    def case(name, file, a, sl, position, samples, mode="scalar", cmap="viridis", p=0, part="magnitude", view=None):
        """`sl`: the slice shown as NumPy's (rows, cols[, channels]) array; `position(r, c)`: the full index."""
        maps_table = maps["maps"]["gray" if mode == "mask" else cmap]
        if mode == "rgb":
            # Floats in double precision, as the page computes them.
            got = [[int(x) for x in (sl[r, c] if sl.dtype == np.uint8 else np.floor(255 * np.clip(np.nan_to_num(sl[r, c].astype(np.float64), nan=0), 0, 1) + 0.5))][:3] for r, c in samples]
            lo, hi = 0.0, 1.0
        else:
            if mode == "complex":
                re, im = sl.real.astype(np.float64), sl.imag.astype(np.float64)
                values = {"magnitude": np.sqrt(re * re + im * im), "phase": np.arctan2(im, re), "real": re, "imag": im}[part]
            else:
                values = sl.astype(np.float64)
            lo, hi = (0.0, 1.0) if mode == "mask" else contrast(values, p)
            got = [colour(values[r, c], lo, hi, maps_table, maps["special"]) for r, c in samples]
        cases.append({
            "name": name, "file": file, "mode": mode, "map": cmap, "contrast": p, "part": part,
            "view": view or {}, "size": [int(sl.shape[0]), int(sl.shape[1])], "range": [lo, hi],
            "samples": [[int(r), int(c)] for r, c in samples], "colours": got,
            "indices": [list(position(r, c)) for r, c in samples],
            "texts": [str(a[tuple(position(r, c))]) for r, c in samples],
        })

    def picks(h, w, extra=()):
        pts = [(0, 0), (h - 1, w - 1), (h // 2, w // 3), (h // 3, w - 1), (h - 1, 0)]
        pts += [(int(rng.integers(0, h)), int(rng.integers(0, w))) for _ in range(15)]
        return pts + list(extra)

    special = [(5, 7), (100, 200), (300, 400), (511, 0)]
    two = lambda r, c: (r, c)
    case("image", "image.npy", image, image, two, picks(512, 512, special))
    case("image-gray-percentile", "image.npy", image, image, two, picks(512, 512, special), cmap="gray", p=2)
    case("image-diverging", "image.npy", image, image, two, picks(512, 512), cmap="RdBu_r", p=1)
    case("photo", "photo.npy", photo, photo, two, picks(128, 192), mode="rgb")
    # The photo's last axis as an axis: its green channel through viridis.
    case("photo-channel", "photo.npy", photo, photo[:, :, 1], lambda r, c: (r, c, 1), picks(128, 192),
         view={"rgb": False, "at": {"2": 1}})
    case("rgba", "rgba.npy", rgba, rgba, two, picks(40, 50, [(3, 4)]), mode="rgb")
    # volume[:, 17, :] shown with its last axis down and its first across: the transpose.
    case("volume", "volume.npy", volume, volume[:, 17, :].T, lambda r, c: (c, 17, r), picks(64, 16),
         view={"rows": 2, "cols": 0, "at": {"1": 17}})
    case("series", "series.npy", series, series[1, 3], lambda r, c: (1, 3, r, c), picks(40, 48),
         view={"rows": 2, "cols": 3, "at": {"0": 1, "1": 3}})
    case("mask", "mask.npy", mask, mask, two, picks(256, 256, [(0, 7), (1, 6)]), mode="mask")
    case("complex", "complex.npy", signal, signal, two, picks(96, 128), mode="complex")
    case("complex-phase", "complex.npy", signal, signal, two, picks(96, 128), mode="complex", part="phase")
    print(json.dumps(cases))


def large_colours(file, overview, fine, maps_path):
    """The colours of the large image's region read at `fine` (select indexes as JSON), with
    the contrast of the overview read at `overview`: 40 sampled pixels of the region as
    [r, c, colour] (slice indices)."""
    maps = json.load(open(maps_path))
    a = np.load(file, mmap_mode="r")
    key = lambda index: tuple(slice(*e) for e in json.loads(index))
    lo, hi = contrast(np.asarray(a[key(overview)], np.float64), 0)
    fine = json.loads(fine)
    rng = np.random.default_rng(7)
    (r0, r1, _), (c0, c1, _) = fine
    # The region's band rows (every 1,000) and others.
    band = [r for r in range(r0, r1) if r % 1000 < 8]
    rows = band[:4] + [int(r) for r in rng.integers(r0, r1, 16)]
    out = []
    for r in rows:
        for c in rng.integers(c0, c1, 2):
            out.append([int(r), int(c), colour(a[r, c], lo, hi, maps["maps"]["viridis"], maps["special"])])
    print(json.dumps({"range": [lo, hi], "pixels": out}))


def large(out, rows, cols):
    a = np.lib.format.open_memmap(f"{out}/large.npy", mode="w+", dtype="<f4", shape=(rows, cols))
    # A ramp repeating every 97 columns: neighbours a few colormap entries apart.
    band = ((np.arange(cols) % 97) / 96).astype("<f4")
    for r in range(0, rows, 1000):
        a[r : r + 8] = band
    a.flush()


def main():
    what = sys.argv[1]
    if what == "make":
        make(sys.argv[2], sys.argv[3])
    elif what == "str":
        print(str(np.load(sys.argv[2])[tuple(int(i) for i in sys.argv[3:])]), end="")
    elif what == "large-colours":
        large_colours(*sys.argv[2:6])
    elif what == "large":
        large(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        raise SystemExit(f"unknown command {what}")


if __name__ == "__main__":
    main()
