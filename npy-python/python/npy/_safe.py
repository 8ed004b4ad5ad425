"""Classes of the user's own that object arrays may hold: ``npy.add_safe_globals`` and the
``npy.safe_globals`` context manager, as PyTorch names them for ``torch.load``.

npy's restricted decoder loads only data (plain values, arrays, NumPy scalars, the
standard library's data types) and never runs a pickle's code. A class named here is
let through: loading an object array that holds instances of it **calls that class**
(its ``__reduce__`` constructor, ``__new__`` and ``__setstate__``) with the arguments
the file gives, as ``pickle`` would. Name only classes you trust with the files you
load; everything else in such a file is still checked as before.
"""

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from threading import Lock
from typing import Any

from . import _npy

_lock = Lock()
_registry: list[Any] = []


def _names(obj: Any) -> tuple[str, str]:
    """The ``(module, qualified name)`` a pickle names ``obj`` by, or a ``(obj, "module.name")``
    pair's."""
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], str):
        module, _, name = obj[1].rpartition(".")
        if not module:
            raise TypeError(f"safe global name {obj[1]!r} is not 'module.name'")
        return module, name
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str):
        raise TypeError(f"a safe global must be a class or function (or a (obj, 'module.name') pair), not {obj!r}")
    return module, name


def _publish() -> None:
    _npy._set_safe_globals([_names(g) for g in _registry])


def add_safe_globals(safe_globals: Iterable[Callable[..., Any] | tuple[Any, str]]) -> None:
    """Let object arrays holding instances of these classes load (see the module docs:
    loading one runs that class's code). Each is a class or function, or an ``(obj,
    "module.name")`` pair for one pickled under another name. They stay until
    :func:`clear_safe_globals`, for every thread."""
    new = list(safe_globals)
    for g in new:
        _names(g)
    with _lock:
        _registry.extend(g for g in new if g not in _registry)
        _publish()


def get_safe_globals() -> list[Any]:
    """The safe globals now in force, in the order they were added."""
    with _lock:
        return list(_registry)


def clear_safe_globals() -> None:
    """Forget every safe global."""
    with _lock:
        _registry.clear()
        _publish()


@contextmanager
def safe_globals(safe_globals: Iterable[Callable[..., Any] | tuple[Any, str]]) -> Iterator[None]:
    """Within the ``with`` block, these safe globals are added (see
    :func:`add_safe_globals`); afterwards the ones before are restored.

    >>> with npy.safe_globals([MyPoint]):  # doctest: +SKIP
    ...     points = npy.load("points.npy")
    """
    with _lock:
        before = list(_registry)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        with _lock:
            _registry[:] = before
            _publish()
