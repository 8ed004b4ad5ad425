//! `npy sql`: a directory of record files as a table, results equal to what npy-core
//! reads from the same files; an `.npz` registered as an npz table; CSV, JSON and table
//! output; `--out` files read back; SQL errors exit 1 in the tool's style. The S3 case runs
//! against the local server `cargo xtask ci` starts (ignored otherwise).

use std::path::Path;
use std::process::{Command, Output};

use npy_core::npz;
use npy_core::prelude::*;

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Reading {
    sensor: i32,
    value: f64,
}

/// Reading `i` (deterministic; sensors 0..7).
fn reading(i: usize) -> Reading {
    Reading { sensor: (i % 7) as i32, value: (i as f64) * 0.5 - 20.0 }
}

/// `files` files of readings in `dir` (file `k` has `k % 11 + 1` rows); every reading,
/// read back with npy-core.
fn write_readings(dir: &Path, files: usize) -> Vec<Reading> {
    std::fs::create_dir_all(dir).unwrap();
    let mut next = 0;
    for k in 0..files {
        let rows: Vec<Reading> = (next..next + k % 11 + 1).map(reading).collect();
        next += rows.len();
        rows.write_npy(dir.join(format!("r{k:03}.npy"))).unwrap();
    }
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        all.extend(Vec::<Reading>::read_npy(entry.unwrap().path()).unwrap());
    }
    all
}

/// Per sensor: (sensor, count, sum of values), sorted by sensor.
fn per_sensor(rows: &[Reading]) -> Vec<(i32, usize, f64)> {
    let mut out: Vec<(i32, usize, f64)> = Vec::new();
    for s in 0..7 {
        let of: Vec<f64> = rows.iter().filter(|r| r.sensor == s).map(|r| r.value).collect();
        if !of.is_empty() {
            out.push((s, of.len(), of.iter().sum()));
        }
    }
    out
}

const PER_SENSOR: &str = "SELECT sensor, count(*) AS n, sum(value) AS total FROM r GROUP BY sensor ORDER BY sensor";

fn npy_sql(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_npy")).arg("sql").args(args).output().expect("run npy")
}

fn ok(output: &Output) -> String {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// CSV of `sensor,n,total` as numbers.
fn parse_csv(text: &str) -> Vec<(i32, usize, f64)> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("sensor,n,total"));
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect()
}

fn assert_same(got: &[(i32, usize, f64)], want: &[(i32, usize, f64)]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!((g.0, g.1), (w.0, w.1));
        assert!((g.2 - w.2).abs() <= 1e-9 * w.2.abs().max(1.0), "{g:?} vs {w:?}");
    }
}

#[test]
fn a_directory_of_record_files_as_csv() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_readings(&dir.path().join("r"), 25);
    let table = format!("r={}", dir.path().join("r").display());
    let out = ok(&npy_sql(&[PER_SENSOR, "--table", &table, "--format", "csv"]));
    assert_same(&parse_csv(&out), &per_sensor(&all));
}

#[test]
fn json_lines_hold_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_readings(&dir.path().join("r"), 8);
    let table = format!("r={}", dir.path().join("r").display());
    let out = ok(&npy_sql(&[
        "SELECT sensor, value FROM r WHERE sensor = 3 ORDER BY value",
        "--table",
        &table,
        "--format",
        "json",
    ]));
    let got: Vec<Reading> = out
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            Reading { sensor: v["sensor"].as_i64().unwrap() as i32, value: v["value"].as_f64().unwrap() }
        })
        .collect();
    let mut want: Vec<Reading> = all.into_iter().filter(|r| r.sensor == 3).collect();
    want.sort_by(|a, b| a.value.total_cmp(&b.value));
    assert_eq!(got, want);
}

#[test]
fn an_npz_location_is_an_npz_table() {
    // An archive of a record member, a plain member and a deflated 2-D member: its
    // members are the table's columns, and the answers are npy-core's reads of them.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.npz");
    let readings: Vec<Reading> = (0..50).map(|i| Reading { sensor: i % 4, value: f64::from(i) * 0.5 }).collect();
    let ids: Vec<i64> = (0..50).map(|i| i * 10).collect();
    let grid: Vec<f32> = (0..150).map(|i| i as f32).collect();
    let mut w = npz::Writer::create(&path).unwrap();
    w.add("r", &readings).unwrap();
    w.add("id", &ids).unwrap();
    w.compression(npz::Compression::Deflated { level: 6 });
    w.add("grid", &npy_core::Array::from_shape_vec(vec![50, 3], grid).unwrap()).unwrap();
    w.finish().unwrap();
    let mut archive = npz::Reader::from_path(&path).unwrap();
    let (r, id, grid): (Vec<Reading>, Vec<i64>, Vec<f32>) = (
        archive.read("r").unwrap(),
        archive.read("id").unwrap(),
        archive.read::<npy_core::Array<f32>>("grid").unwrap().into_vec(),
    );
    let sql = "SELECT r.sensor AS sensor, count(*) AS n, sum(r.value + id + grid[2]) AS total FROM z \
               GROUP BY r.sensor ORDER BY sensor";
    let out = ok(&npy_sql(&[sql, "--table", &format!("z={}", path.display()), "--format", "csv"]));
    let mut want: Vec<(i32, usize, f64)> = (0..4).map(|s| (s, 0, 0.0)).collect();
    for ((r, id), row) in r.iter().zip(&id).zip(grid.chunks(3)) {
        let w = &mut want[r.sensor as usize];
        w.1 += 1;
        w.2 += r.value + *id as f64 + f64::from(row[1]);
    }
    assert_same(&parse_csv(&out), &want);
}

#[test]
fn the_table_format_shows_columns_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_readings(&dir.path().join("r"), 5);
    let table = format!("r={}/", dir.path().join("r").display());
    let out = ok(&npy_sql(&["SELECT count(*) AS n FROM r", "--table", &table]));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[1].contains("| n "), "{out}");
    assert!(lines[3].contains(&format!("| {} ", all.len())), "{out}");
}

#[test]
fn out_files_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_readings(&dir.path().join("r"), 12);
    let table = format!("r={}", dir.path().join("r").display());
    let sql = "SELECT sensor, value FROM r WHERE value > 0 ORDER BY value";
    let mut want: Vec<Reading> = all.iter().copied().filter(|r| r.value > 0.0).collect();
    want.sort_by(|a, b| a.value.total_cmp(&b.value));

    let npy = dir.path().join("out.npy");
    ok(&npy_sql(&[sql, "--table", &table, "--out", npy.to_str().unwrap()]));
    assert_eq!(Vec::<Reading>::read_npy(&npy).unwrap(), want);

    let npz_out = dir.path().join("out.npz");
    ok(&npy_sql(&[sql, "--table", &table, "--out", npz_out.to_str().unwrap()]));
    let mut a = npz::Reader::from_path(&npz_out).unwrap();
    assert_eq!(a.read::<Vec<i32>>("sensor").unwrap(), want.iter().map(|r| r.sensor).collect::<Vec<_>>());
    assert_eq!(a.read::<Vec<f64>>("value").unwrap(), want.iter().map(|r| r.value).collect::<Vec<_>>());

    // Arrow IPC, converted back to .npy by npy-arrow's one converter.
    let arrow = dir.path().join("out.arrow");
    ok(&npy_sql(&[sql, "--table", &table, "--out", arrow.to_str().unwrap()]));
    let back = dir.path().join("back.npy");
    npy_arrow::formats::convert(&arrow, &back, &mut |_| {}).unwrap();
    assert_eq!(Vec::<Reading>::read_npy(&back).unwrap(), want);
}

#[test]
fn sql_errors_exit_1_with_datafusions_message() {
    let dir = tempfile::tempdir().unwrap();
    write_readings(&dir.path().join("r"), 3);
    let table = format!("r={}", dir.path().join("r").display());
    let output = npy_sql(&["SELECT nope FROM r", "--table", &table]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains("nope"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(output.stdout.is_empty());

    // A bad --table is a usage error (clap's).
    let output = npy_sql(&["SELECT 1", "--table", "r"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.npy");
    let table = format!("r={}", missing.display());
    let output = npy_sql(&["SELECT * FROM r", "--table", &table]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: ") && stderr.contains("missing.npy"), "{stderr}");
}

/// The S3 bucket of the local server `cargo xtask ci` starts (`NPY_S3_BUCKET`, with the
/// `AWS_*` variables set).
fn bucket() -> String {
    std::env::var("NPY_S3_BUCKET").expect("NPY_S3_BUCKET: run by `cargo xtask ci`, which starts a local S3 server")
}

#[test]
#[ignore = "needs a local S3 server: cargo xtask ci starts moto"]
fn s3_tables_answer_as_local_ones() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_readings(&dir.path().join("r"), 9);
    let prefix = format!("s3://{}/npy-cli-sql/r/", bucket());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let at = npy_store::store_for(&prefix).unwrap();
    for entry in std::fs::read_dir(dir.path().join("r")).unwrap() {
        let entry = entry.unwrap();
        let key =
            datafusion::object_store::path::Path::from(format!("{}/{}", at.path, entry.file_name().to_string_lossy()));
        let bytes = std::fs::read(entry.path()).unwrap();
        runtime.block_on(datafusion::object_store::ObjectStoreExt::put(&*at.store, &key, bytes.into())).unwrap();
    }
    let local =
        ok(&npy_sql(&[PER_SENSOR, "--table", &format!("r={}", dir.path().join("r").display()), "--format", "csv"]));
    let remote = ok(&npy_sql(&[PER_SENSOR, "--table", &format!("r={prefix}"), "--format", "csv"]));
    assert_eq!(remote, local);
    assert_same(&parse_csv(&remote), &per_sensor(&all));
}

#[cfg(feature = "ballista")]
#[test]
fn ballista_answers_as_npy_core() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_readings(&dir.path().join("r"), 25);
    let table = format!("r={}", dir.path().join("r").display());
    let out = ok(&npy_sql(&[PER_SENSOR, "--table", &table, "--format", "csv", "--ballista"]));
    assert_same(&parse_csv(&out), &per_sensor(&all));
}

/// `--ballista df://HOST:PORT` names a scheduler: where none listens, the query fails at
/// once saying so (exit 1); a value that is no `df://` URL (a query after a bare
/// `--ballista`) is a usage error (exit 2). The cluster's own tests are
/// `npy-ballista/tests/ballista/processes.rs` and CI's run of `npy-ballista/README.md`'s cluster commands.
#[cfg(feature = "ballista")]
#[test]
fn ballista_urls_name_a_scheduler() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = npy_sql(&["SELECT 1", "--ballista", &format!("df://127.0.0.1:{port}")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("no Ballista scheduler answers at df://127.0.0.1:{port}")), "{err}");

    let out = npy_sql(&["--ballista", "SELECT 1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a scheduler's df://HOST:PORT"), "{err}");
}

/// `--map-local-files` answers as reads do (filters and top-k evaluated in the scan
/// included); its help states the promise; it is refused as a table option, saying which
/// flag makes the promise, and (with Ballista) together with `--ballista`.
#[test]
fn mapped_tables_answer_as_read_ones() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_readings(&dir.path().join("r"), 25);
    let table = format!("r={}", dir.path().join("r").display());
    for sql in [
        PER_SENSOR,
        "SELECT sensor, count(*) AS n, sum(value) AS total FROM r WHERE value > 10 GROUP BY sensor ORDER BY sensor",
        "SELECT sensor, 1 AS n, value AS total FROM r ORDER BY value DESC LIMIT 4",
    ] {
        let read = ok(&npy_sql(&[sql, "--table", &table, "--format", "csv"]));
        let mapped = ok(&npy_sql(&[sql, "--table", &table, "--format", "csv", "--map-local-files"]));
        assert_eq!(mapped, read, "{sql}");
        assert!(read.lines().count() > 2, "{sql}: {read}");
    }
    let kept: Vec<Reading> = all.iter().filter(|r| r.value > 10.0).copied().collect();
    let sql =
        "SELECT sensor, count(*) AS n, sum(value) AS total FROM r WHERE value > 10 GROUP BY sensor ORDER BY sensor";
    let mapped = ok(&npy_sql(&[sql, "--table", &table, "--format", "csv", "--map-local-files"]));
    assert_same(&parse_csv(&mapped), &per_sensor(&kept));

    let help = Command::new(env!("CARGO_BIN_EXE_npy")).args(["sql", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("promise that nothing modifies or truncates the files while the query runs"), "{help}");
    assert!(help.contains("SIGBUS") && help.contains("wrong answer"), "{help}");

    let output = npy_sql(&[PER_SENSOR, "--table", &table, "--option", "map_local_files=true"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is not a table option") && stderr.contains("(npy sql --map-local-files makes it)"),
        "{stderr}"
    );
    #[cfg(feature = "ballista")]
    {
        let output = npy_sql(&[PER_SENSOR, "--table", &table, "--map-local-files", "--ballista"]);
        assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    }
}

/// `COPY ... TO 'x.npy'` works in `npy sql` (the session knows npy's formats), and text
/// whose longest value comes in a later batch (20,000 rows: batches of 8,192) is written
/// as wide as that value, by COPY and by `--out`.
#[test]
fn copy_to_and_text_longer_in_later_batches() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_readings(&dir.path().join("r"), 12);
    let table = format!("r={}", dir.path().join("r").display());
    let copied = dir.path().join("copied.npy");
    let sql = format!("COPY (SELECT sensor, value FROM r WHERE value > 0 ORDER BY value) TO '{}'", copied.display());
    ok(&npy_sql(&[&sql, "--table", &table]));
    let mut want: Vec<Reading> = all.iter().copied().filter(|r| r.value > 0.0).collect();
    want.sort_by(|a, b| a.value.total_cmp(&b.value));
    assert_eq!(Vec::<Reading>::read_npy(&copied).unwrap(), want);

    let growing = "SELECT v, repeat('x', CAST(v / 1000 AS INT)) AS s FROM unnest(range(0, 20000)) AS t(v) ORDER BY v";
    let out = dir.path().join("out.npy");
    ok(&npy_sql(&[growing, "--out", out.to_str().unwrap()]));
    let npz_out = dir.path().join("copied.npz");
    ok(&npy_sql(&[&format!("COPY ({growing}) TO '{}'", npz_out.display())]));
    let check = |descr: &str, s: Vec<String>| {
        assert_eq!(descr, "'<U19'");
        assert_eq!(s.len(), 20_000);
        for (v, text) in s.iter().enumerate() {
            assert_eq!(text.len(), v / 1000, "row {v}");
        }
    };
    let array = npy_core::DynArray::read_npy(&out).unwrap();
    assert_eq!(array.dtype().descr(), "[('v', '<i8'), ('s', '<U19')]");
    #[derive(NpyRecord)]
    struct Row {
        v: i64,
        s: npy_core::types::Ucs4<19>,
    }
    let rows: Vec<Row> = Vec::read_npy(&out).unwrap();
    assert!(rows.iter().enumerate().all(|(i, r)| r.v == i as i64));
    check("'<U19'", rows.iter().map(|r| r.s.to_string()).collect());
    let mut archive = npz::Reader::from_path(&npz_out).unwrap();
    let s = archive.read::<DynArray>("s").unwrap().dtype().descr();
    let texts = archive.read::<Vec<npy_core::types::Ucs4<19>>>("s").unwrap();
    check(&s, texts.iter().map(ToString::to_string).collect());
}

/// `--option` sets the read settings of every table: small batches give the same answer,
/// `residue=true` adds the residue column (padding bytes of an aligned record), an unknown
/// key is a usage error naming it.
#[test]
fn options_apply_to_every_table() {
    let dir = tempfile::tempdir().unwrap();
    let all = write_readings(&dir.path().join("r"), 9);
    let table = format!("r={}", dir.path().join("r").display());
    let small = ok(&npy_sql(&[PER_SENSOR, "--table", &table, "--option", "batch_rows=2", "--format", "csv"]));
    assert_same(&parse_csv(&small), &per_sensor(&all));

    #[derive(NpyRecord)]
    #[npy(align)]
    #[repr(C)]
    struct Padded {
        flag: u8,
        value: f64,
    }
    let padded = dir.path().join("padded.npy");
    [Padded { flag: 1, value: 2.5 }, Padded { flag: 0, value: -1.0 }].write_npy(&padded).unwrap();
    let p = format!("p={}", padded.display());
    let sql = "SELECT * FROM p";
    let plain = ok(&npy_sql(&[sql, "--table", &p, "--format", "csv"]));
    assert_eq!(plain.lines().next(), Some("flag,value"));
    let with = ok(&npy_sql(&[sql, "--table", &p, "--option", "residue=true", "--format", "csv"]));
    assert_eq!(with.lines().next(), Some("flag,value,numpy.residue"), "{with}");
    assert_eq!(with.lines().count(), 3, "{with}");

    let output = npy_sql(&[sql, "--table", &p, "--option", "bogus=1"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown option 'bogus'"), "{stderr}");
    let output = npy_sql(&[sql, "--table", &p, "--option", "=1"]);
    assert_eq!(output.status.code(), Some(2));
}

/// Errors while the query runs are about the data (exit 1) even where the library calls
/// them usage errors; they name the file as the user gave it (with its leading `/`), and
/// hints name `--option`s, not Rust APIs. Usage errors of the command line exit 2 before
/// the query runs.
#[test]
fn data_errors_exit_1_and_name_the_users_path() {
    let dir = tempfile::tempdir().unwrap();
    write_readings(&dir.path().join("r"), 3);
    let short = dir.path().join("r/short.npy");
    std::fs::write(&short, &std::fs::read(dir.path().join("r/r000.npy")).unwrap()[..20]).unwrap();
    let table = format!("r={}", dir.path().join("r").display());
    let output = npy_sql(&["SELECT count(*) FROM r", "--table", &table]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with(&format!("error: reading '{}': ", short.display())), "{stderr}");

    let days = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/datetime/le_M8_D.npy").canonicalize().unwrap();
    let output = npy_sql(&["SELECT * FROM d", "--table", &format!("d={}", days.display())]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with(&format!("error: reading '{}': ", days.display())), "{stderr}");
    assert!(stderr.ends_with("(rerun with --option days_as_int64=true)\n") && !stderr.contains("::"), "{stderr}");

    // A struct of null rows cannot be a NumPy record: an error about the result's data.
    std::fs::remove_file(&short).unwrap();
    let out = dir.path().join("o.npz");
    let sql = "SELECT CASE WHEN sensor > 0 THEN named_struct('v', value) END AS s FROM r";
    let output = npy_sql(&[sql, "--table", &table, "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("null"), "{stderr}");
    assert!(!out.exists());

    let output = npy_sql(&["SELECT 1", "--out", dir.path().join("o.txt").to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown file format"));
}

/// `npy dump` and `npy sql` print the same values: records as JSON objects and as CSV
/// flattened to `receiver.x` and `samples[0]` columns (the CSV of a struct column failed),
/// bytes as `b'...'` (not hex), NaN and infinities as `npy dump` writes them (JSON's were
/// null); the table shows the cells of the CSV.
#[test]
fn values_print_as_npy_dump_prints_them() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    for rel in [
        "record/trace_aligned.npy",
        "record/strings.npy",
        "record/nested_3_levels.npy",
        "record/subarray_of_record.npy",
    ] {
        let file = data.join(rel);
        let table = format!("t={}", file.display());
        for (dump_format, sql_format) in [("csv", "csv"), ("json", "json")] {
            let dump = Command::new(env!("CARGO_BIN_EXE_npy"))
                .args(["dump", file.to_str().unwrap(), "--format", dump_format])
                .output()
                .unwrap();
            let sql = ok(&npy_sql(&["SELECT * FROM t", "--table", &table, "--format", sql_format]));
            assert_eq!(sql, ok(&dump), "{rel} {sql_format}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.npy");
    let header = npy_core::header::Header::new("[('tag', '|S4'), ('v', '<f8')]".parse().unwrap(), vec![3]);
    let mut bytes = Vec::new();
    for (tag, v) in [(&b"ab\0\0"[..], f64::NAN), (b"a\0b\0", f64::INFINITY), (b"\xff,\"\0", f64::NEG_INFINITY)] {
        bytes.extend_from_slice(tag);
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    npy_core::DynArray::new(header, bytes).unwrap().write_npy(&file).unwrap();
    let table = format!("t={}", file.display());
    let json = ok(&npy_sql(&["SELECT * FROM t", "--table", &table, "--format", "json"]));
    assert_eq!(
        json,
        "{\"tag\":\"b'ab'\",\"v\":NaN}\n{\"tag\":\"b'a\\\\x00b'\",\"v\":Infinity}\n{\"tag\":\"b'\\\\xff,\\\"'\",\"v\":-Infinity}\n"
    );
    let csv = ok(&npy_sql(&["SELECT * FROM t", "--table", &table, "--format", "csv"]));
    assert_eq!(csv, "tag,v\nb'ab',nan\nb'a\\x00b',inf\n\"b'\\xff,\"\"'\",-inf\n");
    let nulls = "SELECT NULL AS n, CAST(NULL AS DOUBLE) AS f, 1 AS a";
    assert_eq!(ok(&npy_sql(&[nulls, "--format", "json"])), "{\"n\":null,\"f\":null,\"a\":1}\n");
    assert_eq!(ok(&npy_sql(&[nulls, "--format", "csv"])), "n,f,a\n,,1\n");
    let shown = ok(&npy_sql(&["SELECT tag, v FROM t", "--table", &table]));
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines[1], "| tag       | v    |", "{shown}");
    assert_eq!(lines[4], "| b'a\\x00b' | inf  |", "{shown}");
}

/// Result columns of field accesses and indexing are named as DuckDB names them (checked
/// with duckdb 2.0.1 on a Parquet file of the same table): `x` for `receiver.x` and
/// `t.receiver.x`, `samples[1]` for `samples[1]`; an explicit AS wins, other columns keep
/// their names, and a name that would be given twice stays DataFusion's.
#[test]
fn field_access_and_index_columns_are_named_as_duckdb_names_them() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/record/trace_aligned.npy");
    let table = format!("t={}", file.display());
    let header =
        |sql: &str| ok(&npy_sql(&[sql, "--table", &table, "--format", "csv"])).lines().next().unwrap().to_string();
    assert_eq!(header("SELECT receiver.x, samples[1] FROM t"), "x,samples[1]");
    assert_eq!(
        header("SELECT t.receiver.x, t.samples[2], samples[1:2] FROM t ORDER BY trace_id LIMIT 2"),
        "x,samples[2],samples[1:2]"
    );
    assert_eq!(
        header("SELECT receiver.x AS rx, trace_id, t.t0, receiver.y + 1 FROM t"),
        "rx,trace_id,t0,t.receiver[y] + Int64(1)"
    );
    assert_eq!(header("SELECT receiver.x, x FROM (SELECT trace_id AS x, receiver FROM t)"), "t.receiver[x],x");
    // The values are those of the columns named.
    let out = ok(&npy_sql(&[
        "SELECT receiver.x, samples[1] FROM t ORDER BY trace_id",
        "--table",
        &table,
        "--format",
        "json",
    ]));
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert!(first["x"].is_number() && first["samples[1]"].is_number(), "{out}");
}

/// A directory's folders are read too, other files left out, as by every door
/// (`npy_store::find`); a directory of archives is an npz table whatever its name.
#[test]
fn a_directory_is_its_files_in_every_folder_and_of_its_kind() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("readings");
    let mut all = write_readings(&top, 5);
    all.extend(write_readings(&top.join("day2"), 4));
    all.extend(write_readings(&top.join("day2/late"), 3));
    std::fs::write(top.join("notes.txt"), "not an array").unwrap();
    let table = format!("r={}", top.display());
    let got = parse_csv(&ok(&npy_sql(&[PER_SENSOR, "--table", &table, "--format", "csv"])));
    assert_same(&got, &per_sensor(&all));

    let archives = dir.path().join("archives");
    std::fs::create_dir_all(archives.join("more")).unwrap();
    for (k, name) in ["a.npz", "more/b.npz"].into_iter().enumerate() {
        let mut w = npz::Writer::create(archives.join(name)).unwrap();
        w.add("x", &vec![k as f64; 3 + k]).unwrap();
        w.finish().unwrap();
    }
    let table = format!("z={}", archives.display());
    let out = ok(&npy_sql(&["SELECT count(*) AS n, sum(x) AS s FROM z", "--table", &table, "--format", "csv"]));
    assert_eq!(out, "n,s\n7,4.0\n");
}
