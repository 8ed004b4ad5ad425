"""npy's exception classes, which the engine raises (re-exported as ``npy.UnsafePickleError``
and ``npy.BadNpzFile``)."""

import pickle
import zipfile


class UnsafePickleError(ValueError, pickle.UnpicklingError):
    """A pickle that npy's restricted decoder refuses: it holds more than data (plain
    values, arrays, NumPy scalars, the standard library's data types), or is not a valid
    pickle. npy never runs a pickle; a file you trust loads with
    ``numpy.load(file, allow_pickle=True)``."""


class BadNpzFile(ValueError, zipfile.BadZipFile):
    """An ``.npz`` archive whose zip structure is broken, or whose member fails its CRC-32
    or size check (NumPy raises ``zipfile.BadZipFile`` for these)."""


UnsafePickleError.__module__ = "npy"
BadNpzFile.__module__ = "npy"
