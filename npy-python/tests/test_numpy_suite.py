"""NumPy's own save/load tests, run with npy's functions in place of NumPy's.

NumPy ships its tests. `numpy/lib/tests/test_format.py` and `test_io.py` (with their data
files), and the few save/load tests of other NumPy test modules (`PICKED`), are loaded here
as private copies whose `np` and `format` are NumPy with `load`, `save`, `savez`,
`savez_compressed` and `open_memmap` replaced by npy's (`NP`, `FORMAT`), and collected in
this module under their own names (conftest.py's collection hook asks `judge` about each).

`SUITE` is the one list of what does not run as it is: tests deselected (they test what
npy does not replace: text files, NumPy's header helpers; or take more time and memory
than this suite has) or expected to fail (npy differs from NumPy on purpose, or its object
decoder does not read that yet), each with its reason; test ids are NumPy's, paths under
its package (`lib/tests/test_io.py::TestSaveLoad::test_array`). Every other test must pass.
Expected failures are strict and name the exception npy raises there: one that passes, or
fails another way, fails the run, so the list stays true. A test
run that calls none of npy's functions fails (it would test NumPy alone: deselect it with a
reason), and so does an entry of `SUITE` that names no test (`test_suite_names_numpys_tests`).

NumPy's `format.read_array` and `format.write_array` (what test_format.py reads and writes
with) are npy's here: `read_array` is `npy.load` of the file object, `write_array` is
`npy.save` (which writes the oldest format version that fits, as NumPy does; a version
asked for explicitly is written by NumPy, npy having no such argument). NumPy's other
`format` helpers (`read_magic`, `read_array_header_1_0`, `descr_to_dtype`...) stay NumPy's."""

import functools
import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType

import numpy as np
import numpy.lib.format
import pytest
from numpy.lib import _format_impl

import npy

NUMPY = Path(np.__file__).parent

# Calls of npy's functions by the running test.
_calls = [0]
_lock = threading.Lock()


def _counted(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        with _lock:
            _calls[0] += 1
        return fn(*args, **kwargs)

    return call


# npy's functions, counted.
LOAD, SAVE, SAVEZ, SAVEZ_COMPRESSED, OPEN_MEMMAP = map(
    _counted, (npy.load, npy.save, npy.savez, npy.savez_compressed, npy.open_memmap)
)


def _read_array(fp, allow_pickle=False, pickle_kwargs=None, *, max_header_size=_format_impl._MAX_HEADER_SIZE):
    """`format.read_array` on npy: `npy.load` of the file object, NumPy's default
    `allow_pickle=False` kept."""
    return LOAD(fp, allow_pickle=allow_pickle, max_header_size=max_header_size, **(pickle_kwargs or {}))


def _write_array(fp, array, version=None, allow_pickle=True, pickle_kwargs=None):
    """`format.write_array` on npy: `npy.save`, which writes the oldest version that fits
    (as `write_array(version=None)` does); an explicit version is NumPy's to write."""
    if version is not None:
        numpy.lib.format.write_array(fp, array, version, allow_pickle, pickle_kwargs)
        return
    SAVE(fp, array, allow_pickle=allow_pickle)


class Swapped(ModuleType):
    """A NumPy module with some of its functions replaced. What a test sets on it is set on
    NumPy itself, as the test means (test_custom_dtypes sets `np._ScaledFloatTestDType` for
    pickle to find the class there)."""

    def __init__(self, base, **swapped):
        super().__init__(base.__name__, base.__doc__)
        self.__dict__.update(swapped, _base=base)

    def __getattr__(self, name):
        return getattr(self._base, name)

    def __setattr__(self, name, value):
        setattr(self._base, name, value)


NP = Swapped(np, load=LOAD, save=SAVE, savez=SAVEZ, savez_compressed=SAVEZ_COMPRESSED)
FORMAT = Swapped(numpy.lib.format, open_memmap=OPEN_MEMMAP, read_array=_read_array, write_array=_write_array)


def _copy(path):
    """NumPy's test module at `path` (under NumPy's package), loaded afresh (NumPy's own
    stays as it is) with its `np` and `format` swapped."""
    name = "numpy_suite." + path.removesuffix(".py").replace("/", ".")
    spec = importlib.util.spec_from_file_location(name, NUMPY / path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.np = NP
    if hasattr(module, "format"):
        module.format = FORMAT
    return module


# NumPy's save/load test modules: every test of theirs is collected here.
WHOLE = ["lib/tests/test_format.py", "lib/tests/test_io.py"]
# NumPy's other test modules hold a few save/load tests among thousands of others: those
# (each collected from a subclass of its class that hides the class's other tests).
PICKED = {
    "_core/tests/test_multiarray.py": [
        "TestStructured::test_zero_width_string",
        "TestIO::test_roundtrip_dump_pathlib",
    ],
    "_core/tests/test_regression.py": ["TestRegression::test_char_dump"],
    "_core/tests/test_custom_dtypes.py": ["TestSFloat::test_np_save_load"],
    "ma/tests/test_core.py": ["TestMaskedArray::test_maskedarray_tofile_raises_notimplementederror"],
}
MODULES = {path: _copy(path) for path in [*WHOLE, *PICKED]}


def _only(cls, tests):
    """A subclass of NumPy's test class `cls` whose tests are `tests` alone."""
    missing = [test for test in tests if not callable(getattr(cls, test, None))]
    assert not missing, f"NumPy's {cls.__name__} has no {missing}: update PICKED"
    hidden = {name: None for name in dir(cls) if name.startswith("test") and name not in tests}
    return type(cls.__name__, (cls,), {**hidden, "__module__": cls.__module__, "__qualname__": cls.__qualname__})


def _collected():
    """name -> test function or class, for this module's namespace."""
    found = {}
    for path, module in MODULES.items():
        if path in WHOLE:
            tests = {
                name: obj
                for name, obj in vars(module).items()
                if (name.startswith("test_") and callable(obj)) or (name.startswith("Test") and isinstance(obj, type))
            }
        else:
            by_class = {}
            for test in PICKED[path]:
                cls, _, method = test.partition("::")
                by_class.setdefault(cls, []).append(method)
            tests = {cls: _only(getattr(module, cls), methods) for cls, methods in by_class.items()}
        for name, obj in tests.items():
            assert name not in found, f"{name} is in two of NumPy's test modules"
            found[name] = obj
    return found


RUN, DESELECT, XFAIL = "run", "deselect", "xfail"
# Reasons of tests that fail because npy differs from NumPy on purpose (npy-python/README.md,
# "What differs from NumPy").
DESIGN = "by design: "
HELPER = "NumPy's own header helper, which npy does not replace: "
TEXT = "text files, not npy's: "
BIG = "over this suite's time and memory budget: "
EMPTY_READ_ARRAY = (
    DESIGN + "read_array of an empty file raises ValueError ('EOF: reading magic string'); read_array is npy.load "
    "here, which raises np.load's EOFError ('No data left in file') for an empty file"
)
PICKLE_FILE = DESIGN + "a file that is a pickle (not .npy/.npz) is never unpickled: npy.UnsafePickleError"

# The one list: NumPy's test ids (paths under NumPy's package; a prefix names a module, a
# class, a test or one parameter set, and the longest matching prefix decides), what happens
# to them, and why; an expected failure also names the exception it fails with. Every test
# not named runs and must pass.
SUITE = {
    "lib/tests/test_format.py::test_read_magic": (DESELECT, HELPER + "read_magic"),
    "lib/tests/test_format.py::test_bad_magic_args": (DESELECT, HELPER + "magic"),
    "lib/tests/test_format.py::test_large_header": (DESELECT, HELPER + "write_array_header_1_0"),
    "lib/tests/test_format.py::test_read_array_header_1_0": (DESELECT, HELPER + "read_array_header_1_0"),
    "lib/tests/test_format.py::test_read_array_header_2_0": (DESELECT, HELPER + "read_array_header_2_0"),
    "lib/tests/test_format.py::test_bad_header": (DESELECT, HELPER + "read_array_header_1_0"),
    "lib/tests/test_format.py::test_header_growth_axis": (DESELECT, HELPER + "write_array_header_1_0"),
    "lib/tests/test_format.py::test_large_archive": (DESELECT, BIG + "savez and load of 2 GiB"),
    "lib/tests/test_format.py::test_read_magic_bad_magic": (XFAIL, EMPTY_READ_ARRAY, EOFError),
    "lib/tests/test_format.py::test_read_version_1_0_bad_magic": (XFAIL, EMPTY_READ_ARRAY, EOFError),
    "lib/tests/test_io.py::TestSaveTxt": (DESELECT, TEXT + "savetxt"),
    "lib/tests/test_io.py::TestSaveTxt::test_multifield_view": (RUN, "np.save and np.load of a multi-field view"),
    "lib/tests/test_io.py::TestSaveTxt::test_large_zip": (DESELECT, BIG + "savez of 4 GB of objects (7 GB of memory)"),
    "lib/tests/test_io.py::TestLoadTxt": (DESELECT, TEXT + "loadtxt"),
    "lib/tests/test_io.py::Testfromregex": (DESELECT, TEXT + "fromregex"),
    "lib/tests/test_io.py::TestFromTxt": (DESELECT, TEXT + "genfromtxt"),
    "lib/tests/test_io.py::TestPathUsage::test_loadtxt": (DESELECT, TEXT + "loadtxt"),
    "lib/tests/test_io.py::TestPathUsage::test_genfromtxt": (DESELECT, TEXT + "genfromtxt"),
    "lib/tests/test_io.py::TestPathUsage::test_recfromtxt": (DESELECT, TEXT + "recfromtxt"),
    "lib/tests/test_io.py::TestPathUsage::test_recfromcsv": (DESELECT, TEXT + "recfromcsv"),
    "lib/tests/test_io.py::test_gzip_loadtxt": (DESELECT, TEXT + "loadtxt"),
    "lib/tests/test_io.py::test_gzip_loadtxt_from_string": (DESELECT, TEXT + "loadtxt"),
    "lib/tests/test_io.py::TestSavezLoad::test_big_arrays": (DESELECT, BIG + "savez and load of 2 GiB"),
    "_core/tests/test_multiarray.py::TestIO::test_roundtrip_dump_pathlib": (
        XFAIL,
        PICKLE_FILE + " (ndarray.dump)",
        npy.UnsafePickleError,
    ),
    "_core/tests/test_regression.py::TestRegression::test_char_dump": (
        XFAIL,
        PICKLE_FILE + " (pickle.dump)",
        npy.UnsafePickleError,
    ),
    "_core/tests/test_custom_dtypes.py::TestSFloat::test_np_save_load": (
        XFAIL,
        DESIGN + "an array of a user-defined dtype is a pickle naming its class; npy writes pickles of plain "
        "values only (TypeError)",
        TypeError,
    ),
}


def numpy_id(item):
    """The test's id in NumPy's suite, its path under NumPy's package:
    `lib/tests/test_io.py::TestSaveLoad::test_array[...]`."""
    owner = item.cls or item.function
    file = owner.__module__.removeprefix("numpy_suite.").replace(".", "/") + ".py"
    return "::".join([file, *([item.cls.__name__] if item.cls else []), item.name])


def verdict(numpy_test_id):
    """The `SUITE` entry deciding the test: its key, verdict, reason and, for an expected
    failure, the exception it fails with (RUN if none)."""
    keys = [k for k in SUITE if numpy_test_id == k or numpy_test_id.startswith((k + "::", k + "["))]
    if not keys:
        return None, RUN, "", None
    key = max(keys, key=len)
    what, reason, *raises = SUITE[key]
    return key, what, reason, raises[0] if raises else None


def judge(item):
    """For conftest's collection hook: whether to deselect `item`; marks expected failures."""
    _, what, reason, raises = verdict(numpy_id(item))
    if what == XFAIL:
        assert raises is not None, f"{numpy_id(item)}: an expected failure names the exception it raises"
        item.add_marker(pytest.mark.xfail(strict=True, reason=reason, raises=raises))
    return what == DESELECT


# NumPy's tests, collected in this module.
globals().update(_collected())


@pytest.fixture(autouse=True)
def _calls_npy(request):
    """Fails a test run as it is (not an expected failure) that called none of npy's
    functions: it tested NumPy alone."""
    _calls[0] = 0
    yield
    numpys = (request.node.cls or request.node.function).__module__.startswith("numpy_suite.")
    if numpys and request.node.get_closest_marker("xfail") is None and _calls[0] == 0:
        pytest.fail(f"{numpy_id(request.node)} called none of npy's functions: deselect it in SUITE with a reason")


def _test_ids():
    """NumPy's ids of the tests collected here, without their parameters."""
    for name, obj in _collected().items():
        file = obj.__module__.removeprefix("numpy_suite.").replace(".", "/") + ".py"
        if isinstance(obj, type):
            tests = [test for test in dir(obj) if test.startswith("test") and getattr(obj, test)]
            yield from (f"{file}::{name}::{test}" for test in tests)
        else:
            yield f"{file}::{name}"


def test_suite_names_numpys_tests():
    # Every entry of SUITE names tests of NumPy's (stale ones are removed).
    ids = list(_test_ids())
    stale = [key for key in SUITE if not any(i == key.partition("[")[0] or i.startswith(key + "::") for i in ids)]
    assert not stale, f"SUITE entries naming no test of NumPy's: {stale}"
