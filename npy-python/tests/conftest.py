"""Where the files under test are: NumPy's corpus (NPY_CORPUS, default
../shared/corpus/public beside the clone) and the repository's tests/data; and `same`, which
runs a test's code with NumPy's functions and with npy's and compares what each did; the
collection of NumPy's own tests (test_numpy_suite.py); and the check that every skip and
expected failure is one skips.py lists."""

import contextlib
import datetime
import ipaddress
import os
import shutil
import socket
import ssl
import threading
import warnings
from http.server import ThreadingHTTPServer
from pathlib import Path

import boto3
import moto.server as moto_server
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from skips import SKIPS, XFAILS
from support import NPY, NUMPY, RangeHandler, matching

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


def file_id(path):
    """A test file's name in test ids, the same in every clone: `corpus/...` for the shared
    corpus, `tests/data/...` for the repository's."""
    if path.is_relative_to(CORPUS):
        return f"corpus/{path.relative_to(CORPUS)}"
    return str(path.relative_to(ROOT))


def ids(paths):
    return [file_id(p) for p in paths]


NPY_FILES = files(".npy")
NPZ_FILES = files(".npz")


@pytest.fixture
def tmp(tmp_path):
    return tmp_path


@pytest.fixture
def same(tmp_path):
    """`same(fn, *args)` runs `fn(api, folder, *args)` with NumPy's functions, then with npy's,
    each in the same fresh folder (so paths come out equal), recording the warnings each run
    gave, and asserts npy's result and warnings equal NumPy's. Returns NumPy's result.

    An exception escaping `fn` fails the test: a run expecting one records it with `attempt`."""

    def run(fn, *args):
        folder = tmp_path / "run"
        results = []
        for api in (NUMPY, NPY):
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                value = fn(api, folder, *args)
            seen = [(w.category, str(w.message)) for w in caught if w.category is not ResourceWarning]
            results.append((value, seen))
        theirs, ours = results
        assert matching(ours, theirs) == theirs
        return theirs[0]

    return run


@pytest.fixture
def http(tmp_path):
    """A web server on loopback serving tmp_path's files with HEAD and single ranges,
    stopped also when the test fails: its base URL, and the (path, start, length) of each
    GET it served."""
    with serving(tmp_path, None) as (port, served):
        yield f"http://127.0.0.1:{port}", served


@pytest.fixture
def https(tmp_path, tmp_path_factory, monkeypatch):
    """`http`'s server over TLS, its certificate signed by a CA made for the test, which
    npy's stores (rustls, the platform's roots) trust through `SSL_CERT_FILE`: its base
    URL and the GETs it served."""
    folder = tmp_path_factory.mktemp("tls")
    ca_file, chain_file, key_file = certificates(folder)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain_file, key_file)
    with serving(tmp_path, context) as (port, served):
        yield f"https://127.0.0.1:{port}", served


@contextlib.contextmanager
def serving(root, context):
    served: list[tuple[str, int, int]] = []
    handler = type("Handler", (RangeHandler,), {"root": root, "served": served})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def certificates(folder):
    """A CA and a server certificate for 127.0.0.1 signed by it, valid for a day: the CA's
    PEM, the server's chain and its key, as files in `folder`."""
    now = datetime.datetime.now(datetime.UTC)

    def made(subject, issuer, key, signer, ca):
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
            builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = made("npy test CA", "npy test CA", ca_key, ca_key, True)
    server = made("127.0.0.1", "npy test CA", key, ca_key, False)
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "chain.pem").write_bytes(server.public_bytes(pem) + ca.public_bytes(pem))
    (folder / "key.pem").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return folder / "ca.pem", folder / "chain.pem", folder / "key.pem"


def free_port():
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3(monkeypatch):
    """A moto S3 server on loopback with bucket `bkt`, and the environment npy's stores read:
    its boto3 client. Stopped also when the test fails."""
    port = free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        for key, value in {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ALLOW_HTTP": "true",
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1",
        }.items():
            monkeypatch.setenv(key, value)
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        client.create_bucket(Bucket="bkt")
        yield client
    finally:
        server.stop()


def pytest_configure(config):
    # The marks of NumPy's own tests, which test_numpy_suite.py runs.
    for mark in ("slow", "slow_pypy", "thread_unsafe(reason)"):
        config.addinivalue_line("markers", f"{mark}: a mark of NumPy's test suite")


def pytest_collection_modifyitems(config, items):
    """NumPy's own tests (test_numpy_suite.py) as that module's `judge` decides: some
    deselected, some expected to fail; and skips.py's XFAILS marked."""
    kept, dropped = [], []
    for item in items:
        module = getattr(item, "module", None)
        judge = getattr(module, "judge", None)
        (dropped if judge is not None and judge(item) else kept).append(item)
        if judge is not None and item.get_closest_marker("xfail") is not None:
            _check.expected_xfails.add(test_key(item.nodeid))
        if test_key(item.nodeid) in XFAILS:
            item.add_marker(pytest.mark.xfail(strict=True, reason=XFAILS[test_key(item.nodeid)]))
            _check.expected_xfails.add(test_key(item.nodeid))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def test_key(nodeid):
    """A test's key in skips.py: its file's name and its id in the file."""
    file, _, rest = nodeid.partition("::")
    return f"{Path(file).name}::{rest}"


class _SkipCheck:
    """What the run skipped and expected to fail, against skips.py (see its docs)."""

    def __init__(self):
        self.on = os.environ.get("NPY_SKIPS_CHECK", "1") != "0"
        self.ran, self.skipped, self.xfailed, self.expected_xfails = set(), {}, set(), set()
        # Every test collected (deselected ones too), and the files skipped whole while
        # collecting (a module-level `pytest.skip` or `importorskip`), with the message.
        self.collected, self.skipped_files = set(), {}
        self.problems = []

    def collect(self, report):
        """A collection report: a file skipped whole is a skip like any other."""
        if report.skipped and report.nodeid:
            longrepr = report.longrepr
            message = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
            self.skipped_files[Path(report.nodeid.partition("::")[0]).name] = message

    def record(self, report):
        key = test_key(report.nodeid)
        if report.when == "setup":
            self.ran.add(key)
        if not report.skipped:
            return
        if hasattr(report, "wasxfail"):
            self.xfailed.add(key)
        else:
            longrepr = report.longrepr
            self.skipped[key] = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)

    def judge(self, skips=SKIPS, xfails=XFAILS, tests=Path(__file__).parent):
        """Adds to `problems` every way the run differs from `skips` and `xfails` (skips.py's
        lists), whose test files are in `tests`."""
        # An entry naming a test file that is gone is stale, whatever this run collected.
        for key in sorted(skips.keys() | xfails.keys()):
            file = key.partition("::")[0]
            if not (tests / file).is_file():
                self.problems.append(f"skips.py lists {key}, but {file} is gone: update or remove it")
        files = {key.partition("::")[0] for key in self.collected}
        for file, message in sorted(self.skipped_files.items()):
            why = skips.get(file)
            if why is None:
                self.problems.append(f"{file} was skipped whole and skips.py does not list it: {message}")
            elif why not in message:
                self.problems.append(f"{file} was skipped whole ({message}); skips.py lists it for {why!r}")
        # A file listed as skipped whole whose tests this run collected did not skip: stale.
        for file in sorted(key for key in skips if "::" not in key and key in files and key not in self.skipped_files):
            self.problems.append(f"skips.py lists {file} as skipped whole, and its tests ran: remove it")
        # An entry naming a test its file no longer has (renamed, removed) is stale, whether
        # or not this run ran that file's tests.
        for key in sorted((skips.keys() | xfails.keys()) - self.collected):
            if "::" in key and key.partition("::")[0] in files:
                self.problems.append(f"skips.py lists {key}, a test its file does not have: update or remove it")
        for key, message in sorted(self.skipped.items()):
            why = skips.get(key)
            if why is None:
                self.problems.append(f"{key} skipped and skips.py does not list it: {message}")
            elif why not in message:
                self.problems.append(f"{key} skipped ({message}); skips.py lists it for {why!r}")
        for key in sorted(skips.keys() & self.ran - self.skipped.keys()):
            self.problems.append(f"{key} ran and did not skip: remove it from skips.py")
        for key in sorted(self.xfailed - self.expected_xfails):
            self.problems.append(f"{key} failed as expected, and no list names it (skips.py's XFAILS)")


_check = _SkipCheck()


def pytest_runtest_logreport(report):
    _check.record(report)


def pytest_itemcollected(item):
    _check.collected.add(test_key(item.nodeid))


def pytest_collectreport(report):
    _check.collect(report)


def pytest_sessionfinish(session, exitstatus):
    if not _check.on or session.config.option.collectonly:
        return
    _check.judge()
    if _check.problems and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    if _check.problems:
        terminalreporter.section("skips not as skips.py lists them", sep="=", red=True)
        for problem in _check.problems:
            terminalreporter.write_line(problem)
