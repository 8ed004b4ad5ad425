"""The check of the suite's skips (conftest.py's `_SkipCheck`) finds every stale entry of
skips.py: planted lists, judged as a run's reports would leave them."""

from pathlib import Path

from conftest import _SkipCheck

HERE = Path(__file__).parent


def judged(skips, collected=(), skipped_files=None, skipped=None, ran=()):
    check = _SkipCheck()
    check.collected = set(collected)
    check.skipped_files = dict(skipped_files or {})
    check.skipped = dict(skipped or {})
    check.ran = set(ran)
    check.judge(skips=skips, xfails={}, tests=HERE)
    return check.problems


def test_an_entry_whose_test_file_is_gone_is_stale():
    # Whether or not the run collected anything of it: the file is not there.
    problems = judged({"test_gone_away.py::test_x[a]": "why", "test_gone_whole.py": "why"})
    assert problems == [
        "skips.py lists test_gone_away.py::test_x[a], but test_gone_away.py is gone: update or remove it",
        "skips.py lists test_gone_whole.py, but test_gone_whole.py is gone: update or remove it",
    ]


def test_a_file_listed_as_skipped_whole_that_ran_is_stale():
    key = "test_skips.py"
    problems = judged(
        {key: "no such module"}, collected={f"{key}::test_a_file_listed_as_skipped_whole_that_ran_is_stale"}
    )
    assert problems == ["skips.py lists test_skips.py as skipped whole, and its tests ran: remove it"]
    # Skipped whole, for the listed reason: no problem.
    assert judged({key: "no such module"}, skipped_files={key: "could not import 'x': no such module"}) == []
    # Not collected at all (a run of another file): nothing to judge.
    assert judged({key: "no such module"}) == []


def test_the_suites_own_list_is_not_stale():
    # Every entry of skips.py names a test file that is here.
    from skips import SKIPS, XFAILS

    assert [p for p in judged(SKIPS | XFAILS) if "is gone" in p] == []
