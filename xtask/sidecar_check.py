"""What npz_check.py and object_check.py share: files written by the tests, each with a
sidecar `<stem>.expect.json` saying what NumPy must find in it, checked one by one."""

from pathlib import Path


class Bad(Exception):
    """A file that is not what its sidecar says."""


def check_all(folder: Path, files, check, noun, parts):
    """Runs `check(path, sidecar)` (which returns how many `parts` it checked, or raises)
    on each of `files` (in `folder`; `<stem>.npy` or `<stem>.npz`), then fails every
    sidecar with no file. Prints one line per file and a summary; returns the exit status."""
    failed = 0
    for path in files:
        sidecar = path.with_name(path.stem + ".expect.json")
        try:
            if not sidecar.is_file():
                raise Bad(f"no sidecar {sidecar.name}")
            n = check(path, sidecar)
            print(f"ok   {path.name}: {n} {parts}")
        except Bad as e:
            failed += 1
            print(f"FAIL {path.name}: {e}")
        except Exception as e:  # NumPy, pickle or zipfile refusing the file is a failure too
            failed += 1
            print(f"FAIL {path.name}: {type(e).__name__}: {e}")
    stems = {p.stem for p in files}
    for orphan in sorted(p.name for p in folder.glob("*.expect.json") if p.name[: -len(".expect.json")] not in stems):
        failed += 1
        print(f"FAIL {orphan}: no {noun[:-1]} for this sidecar")
    if failed:
        print(f"{len(files)} {noun} checked, {failed} failed")
        return 1
    print(f"{len(files)} {noun} checked")
    return 0
