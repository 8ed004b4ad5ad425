"""CPython's unpickler restricted to the globals npy's decoder allows, for object arrays
whose pickle that decoder has checked (the engine's `unpickle.rs` feeds it approved bytes)."""

import gc
import pickle
from typing import IO, Any


def load(unpickler: pickle.Unpickler) -> Any:
    """`unpickler.load()` with the cyclic garbage collector paused: the values are plain,
    and collections while a million tuples are made would only walk them again and again
    (a pickle that builds a cycle on purpose is collected once the collector runs again)."""
    if not gc.isenabled():
        return unpickler.load()
    gc.disable()
    try:
        return unpickler.load()
    finally:
        gc.enable()


class Unpickler(pickle.Unpickler):
    """CPython's unpickler, naming only the globals in `allowed`."""

    def __init__(self, file: IO[bytes], allowed: frozenset[tuple[str, str]], fix_imports: bool, encoding: str) -> None:
        super().__init__(file, fix_imports=fix_imports, encoding=encoding)
        self.allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in self.allowed:
            raise pickle.UnpicklingError(f"global '{module}.{name}' is not allowed")
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("persistent ids are not allowed")
