"""Every test of the suite is bounded in time: pytest-timeout is loaded and
pyproject.toml's settings hold, so a test that hangs fails the run with every thread's
stack instead of holding CI until its limit (a planted `npy.open` of a FIFO, which blocks
in Rust's open(2), failed after 93 s)."""


def test_every_test_has_a_timeout_that_ends_a_hang_in_rust(pytestconfig):
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert float(pytestconfig.getini("timeout")) == 90
    # The thread method: the signal method runs only between Python instructions, so it
    # would never end a call blocked in Rust.
    assert pytestconfig.getini("timeout_method") == "thread"
