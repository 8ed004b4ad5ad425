"""The one list of the suite's expected skips and expected failures, each with why.

A skip is a claim that the test cannot run here, so each one is listed: its test id (the
test file's name, `::`, the test's name with its parameters; files as `conftest.file_id`
names them; a file skipped whole while collecting, by a module-level `pytest.skip` or
`importorskip`, by its name alone) and a fragment the skip's message must hold, which says
why. conftest.py fails the run when a test or a file skips that is not listed here, skips
for another reason, or when an entry is stale: a listed test ran and did not skip, its file
has no such test, a file listed as skipped whole ran its tests, or the entry's test file is
gone. A run of part of the suite (`-k`, one file) checks only the listed tests of the files
it collected (and every entry's file for being there). `NPY_SKIPS_CHECK=0` turns the
check off for an ad-hoc run; `cargo xtask ci` sets it to 1.

XFAILS are tests marked as strict expected failures (a pass fails the run); a test that
fails as expected without being listed here fails the run too. NumPy's own tests
(test_numpy_suite.py) have their list there, `SUITE`, with the same rules.

Rust tests have no skip: a test that cannot run returns early after printing why (the
corpus missing, a tmpfs that cannot be mounted, no mkfifo), and fails instead under `CI`
where CI must run it (the corpus, the full-disk tests); `cargo test` counts the others as
passed. They are not checked here.
"""

DUCKDB_F2 = "DuckDB has no 16-bit float"
DUCKDB_NO_COLUMNS = "DuckDB has no table of no columns"
POLARS_EMPTY_LIST = "polars reads no fixed-size list of length 0 from IPC"

SKIPS = {
    # The consumers' own limits, by their documentation (xtask/consumer_check.py's `lacks`):
    # npy.scan gives the Arrow type, the consumer has no such type.
    "test_scan.py::test_consumers_read_numpy_values[corpus/fortran/2x5_be_f2_F.npy-duckdb]": DUCKDB_F2,
    "test_scan.py::test_consumers_read_numpy_values[corpus/scalar/be_f2.npy-duckdb]": DUCKDB_F2,
    "test_scan.py::test_consumers_read_numpy_values[corpus/scalar/le_f2.npy-duckdb]": DUCKDB_F2,
    "test_scan.py::test_consumers_read_numpy_values[corpus/struct/kitchen_sink.npy-duckdb]": DUCKDB_F2,
    "test_scan.py::test_consumers_read_numpy_values[corpus/struct/latin1_name_v1.npy-duckdb]": DUCKDB_F2,
    "test_scan.py::test_consumers_read_numpy_values[corpus/struct/nested_3_levels.npy-duckdb]": DUCKDB_F2,
    "test_scan.py::test_consumers_read_numpy_values[tests/data/record/nested_3_levels.npy-duckdb]": DUCKDB_F2,
    "test_scan.py::test_consumers_read_numpy_values[tests/data/scalar/be_f2.npy-duckdb]": DUCKDB_F2,
    "test_scan.py::test_consumers_read_numpy_values[tests/data/scalar/le_f2.npy-duckdb]": DUCKDB_F2,
    "test_scan.py::test_consumers_read_numpy_values[corpus/exotic/zero_itemsize_struct.npy-duckdb]": DUCKDB_NO_COLUMNS,
    "test_scan.py::test_consumers_read_archive_members[corpus/npz/empty_archive.npz-duckdb]": DUCKDB_NO_COLUMNS,
    "test_scan.py::test_consumers_read_numpy_values[corpus/exotic/struct_empty_subfield.npy-polars]": (
        "polars has no struct of no fields"
    ),
    "test_scan.py::test_consumers_read_numpy_values[corpus/exotic/void0.npy-polars]": (
        "polars has no fixed-size binary of width 0"
    ),
    "test_scan.py::test_consumers_read_numpy_values[corpus/shape/5x0x3_b1.npy-polars]": POLARS_EMPTY_LIST,
    "test_scan.py::test_consumers_read_numpy_values[tests/data/shape/5x0x3_f4.npy-polars]": POLARS_EMPTY_LIST,
    # pyarrow's to_pandas has no column for a list of fixed-size binary (long doubles).
    "test_scan.py::test_consumers_read_numpy_values[corpus/exotic/longdouble_be_3x2.npy-pandas]": (
        "pandas has no column for it"
    ),
    # Every row holds a timedelta64[us] beyond what DuckDB's Arrow export of durations holds
    # (int64 ns: +-(2^63 - 1) // 1000 us): no row to read (the other time files are checked
    # on the rows DuckDB and polars can hold; test_duckdb_reads_the_durations_it_holds
    # checks this file's values that DuckDB holds).
    "test_scan.py::test_consumers_read_numpy_values[corpus/datetime/le_m8_us.npy-duckdb]": (
        "every row out of range: duckdb holds times of unit us"
    ),
}

XFAILS: dict[str, str] = {}
