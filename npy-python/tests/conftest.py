"""Where the files under test are: NumPy's corpus (NPY_CORPUS, default
../shared/corpus/public beside the clone) and the repository's tests/data."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("NPY_CORPUS", ROOT.parent / "shared" / "corpus" / "public"))
DATA = ROOT / "tests" / "data"


def files(suffix):
    found = []
    for base in (CORPUS, DATA):
        if not base.is_dir():
            raise RuntimeError(f"no test files at {base} (set NPY_CORPUS)")
        found += sorted(p for p in base.rglob(f"*{suffix}") if "corrupt" not in p.parts and "stack" not in p.parts)
    return found


def ids(paths):
    return [str(p.relative_to(ROOT.parent)) for p in paths]


NPY_FILES = files(".npy")
NPZ_FILES = files(".npz")


@pytest.fixture
def tmp(tmp_path):
    return tmp_path
