//! Writes: `COPY (...) TO 'x.npy'`, `TO 'dir/' STORED AS NPY`, `TO 'x.npz'` and `INSERT
//! INTO`: the files read back with npy-core equal the query's rows (computed from npy-core's
//! reads of the source files). Each written file or directory is also left in
//! `target/sql-check` with a `.expect.json` sidecar, for `cargo xtask ci` to have NumPy
//! load it (`xtask/sql_check.py`).

use std::path::{Path, PathBuf};

use npy_core::npz;
use npy_core::prelude::*;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::support::*;

/// A row of the written tables.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Out {
    trace_id: i32,
    t0: f64,
    t2: f64,
}

/// The shots table of `files` files, registered as `shots`; its rows read by npy-core.
async fn shots(dir: &Path, files: usize) -> (datafusion::prelude::SessionContext, Vec<Shot>) {
    write_shots(dir, files);
    let ctx = context();
    ctx.register_npy("shots", format!("{}/", dir.display()), &NpyReadOptions::new()).await.unwrap();
    (ctx, read_shots(dir))
}

/// What `SELECT trace_id, t0, t0 * 2 AS t2 FROM shots WHERE keep` gives, sorted by id.
fn expected(shots: &[Shot], keep: impl Fn(&Shot) -> bool) -> Vec<Out> {
    let mut rows: Vec<Out> =
        shots.iter().filter(|s| keep(s)).map(|s| Out { trace_id: s.trace_id, t0: s.t0, t2: s.t0 * 2.0 }).collect();
    rows.sort_by_key(|r| r.trace_id);
    rows
}

fn sorted(mut rows: Vec<Out>) -> Vec<Out> {
    rows.sort_by_key(|r| r.trace_id);
    rows
}

/// The rows of every `.npy` file in `dir`.
fn read_dir(dir: &Path) -> Vec<Out> {
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(path.extension().and_then(|e| e.to_str()), Some("npy"), "{}", path.display());
        rows.extend(Vec::<Out>::read_npy(&path).unwrap());
    }
    rows
}

/// The number of rows a `COPY` or `INSERT` says it wrote.
fn count(batches: &[datafusion::arrow::record_batch::RecordBatch]) -> usize {
    scalar_f64(batches) as usize
}

/// `target/sql-check`, where the files NumPy checks go.
fn check_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/sql-check");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Moves `written` (a file or directory) to `target/sql-check/<case>.<ext>` (or `<case>/`)
/// with its sidecar: NumPy must find `rows`.
fn leave_for_numpy(case: &str, written: &Path, kind: &str, rows: &[Out]) {
    let rows: Vec<serde_json::Value> = rows.iter().map(|r| serde_json::json!([r.trace_id, r.t0, r.t2])).collect();
    leave_rows_for_numpy(case, written, kind, &["trace_id", "t0", "t2"], rows);
}

/// [`leave_for_numpy`] for rows of any `columns` (each row a JSON array).
fn leave_rows_for_numpy(case: &str, written: &Path, kind: &str, columns: &[&str], rows: Vec<serde_json::Value>) {
    let dir = check_dir();
    let output = if written.is_dir() { format!("{case}/") } else { format!("{case}.{kind}") };
    let target = dir.join(output.trim_end_matches('/'));
    if target.is_dir() {
        std::fs::remove_dir_all(&target).unwrap();
    }
    copy_all(written, &target);
    let sidecar = serde_json::json!({
        "output": output,
        "kind": kind,
        "columns": columns,
        "rows": rows,
    });
    std::fs::write(dir.join(format!("{case}.expect.json")), sidecar.to_string()).unwrap();
}

fn copy_all(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_all(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

const SELECT: &str = "SELECT trace_id, t0, t0 * 2 AS t2 FROM shots";

#[tokio::test]
async fn copy_to_a_npy_file_writes_the_query_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, all) = shots(&dir.path().join("shots"), 40).await;
    let out = dir.path().join("out.npy");
    let sql = format!("COPY ({SELECT} WHERE t0 > 50) TO '{}'", out.display());
    let want = expected(&all, |s| s.t0 > 50.0);
    assert_eq!(count(&query(&ctx, &sql).await), want.len());
    let array = DynArray::read_npy(&out).unwrap();
    assert_eq!(array.dtype().descr(), "[('trace_id', '<i4'), ('t0', '<f8'), ('t2', '<f8')]");
    assert_eq!(sorted(Vec::<Out>::read_npy(&out).unwrap()), want);
    leave_for_numpy("copy_npy", &out, "npy", &want);
}

/// Two fields of the table.
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct IdT0 {
    trace_id: i32,
    t0: f64,
}

#[tokio::test]
async fn copy_of_columns_of_a_table_writes_those_columns() {
    // A plain projection keeps the table's schema metadata (its files' shared dtype): the
    // file must have the columns selected, not the table's dtype.
    let dir = tempfile::tempdir().unwrap();
    let shots_dir = dir.path().join("shots");
    std::fs::create_dir_all(&shots_dir).unwrap();
    write_one(&shots_dir.join("a.npy"), 30, 2);
    write_one(&shots_dir.join("b.npy"), 20, 2);
    let ctx = context();
    ctx.register_npy("shots", format!("{}/", shots_dir.display()), &NpyReadOptions::new()).await.unwrap();
    let out = dir.path().join("ids.npy");
    let sql = format!("COPY (SELECT trace_id, t0 FROM shots) TO '{}'", out.display());
    assert_eq!(count(&query(&ctx, &sql).await), 50);
    let mut got = Vec::<IdT0>::read_npy(&out).unwrap();
    got.sort_by_key(|r| r.trace_id);
    let mut want: Vec<IdT0> = read_shots(&shots_dir).iter().map(|s| IdT0 { trace_id: s.trace_id, t0: s.t0 }).collect();
    want.sort_by_key(|r| r.trace_id);
    assert_eq!(got, want);
    // All the columns: the table's own dtype (big-endian here) is kept.
    let all = dir.path().join("all.npy");
    query(&ctx, &format!("COPY (SELECT * FROM shots) TO '{}'", all.display())).await;
    let array = DynArray::read_npy(&all).unwrap();
    assert_eq!(array.dtype().descr(), DynArray::read_npy(shots_dir.join("a.npy")).unwrap().dtype().descr());
}

#[tokio::test]
async fn copy_to_a_directory_writes_npy_files_of_all_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, all) = shots(&dir.path().join("shots"), 60).await;
    let out = dir.path().join("out");
    let sql = format!("COPY ({SELECT}) TO '{}/' STORED AS NPY", out.display());
    let want = expected(&all, |_| true);
    assert_eq!(count(&query(&ctx, &sql).await), want.len());
    assert_eq!(sorted(read_dir(&out)), want);
    leave_for_numpy("copy_dir", &out, "npy", &want);
}

#[tokio::test]
async fn copy_to_a_npz_file_writes_a_member_per_column() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, all) = shots(&dir.path().join("shots"), 30).await;
    let out = dir.path().join("out.npz");
    let sql = format!("COPY ({SELECT} WHERE trace_id % 3 = 0 ORDER BY trace_id) TO '{}'", out.display());
    let want = expected(&all, |s| s.trace_id % 3 == 0);
    assert_eq!(count(&query(&ctx, &sql).await), want.len());
    let mut archive = npz::Reader::from_path(&out).unwrap();
    assert_eq!(archive.names(), ["trace_id", "t0", "t2"]);
    assert_eq!(archive.read::<Vec<i32>>("trace_id").unwrap(), want.iter().map(|r| r.trace_id).collect::<Vec<_>>());
    assert_eq!(archive.read::<Vec<f64>>("t0").unwrap(), want.iter().map(|r| r.t0).collect::<Vec<_>>());
    assert_eq!(archive.read::<Vec<f64>>("t2").unwrap(), want.iter().map(|r| r.t2).collect::<Vec<_>>());
    leave_for_numpy("copy_npz", &out, "npz", &want);
}

#[tokio::test]
async fn insert_into_adds_files_to_the_table_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, all) = shots(&dir.path().join("shots"), 30).await;
    let table = dir.path().join("table");
    std::fs::create_dir_all(&table).unwrap();
    let first = expected(&all, |s| s.trace_id < 10);
    first.write_npy(table.join("first.npy")).unwrap();
    ctx.register_npy("t", format!("{}/", table.display()), &NpyReadOptions::new()).await.unwrap();

    let sql = format!("INSERT INTO t {SELECT} WHERE trace_id >= 10");
    let added = expected(&all, |s| s.trace_id >= 10);
    assert_eq!(count(&query(&ctx, &sql).await), added.len());
    // New files beside the old one (as many as DataFusion's demuxer makes), which is kept.
    assert!(std::fs::read_dir(&table).unwrap().count() >= 2);
    assert_eq!(Vec::<Out>::read_npy(table.join("first.npy")).unwrap(), first);
    let want = expected(&all, |_| true);
    assert_eq!(sorted(read_dir(&table)), want);
    // The table sees its new file.
    assert_eq!(count(&query(&ctx, "SELECT count(*) FROM t").await), want.len());
    leave_for_numpy("insert_into", &table, "npy", &want);
}

#[tokio::test]
async fn a_failed_copy_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, _) = shots(&dir.path().join("shots"), 10).await;
    // NumPy's integers have no null: the NULL row cannot be written.
    let out = dir.path().join("bad.npy");
    let sql = format!(
        "COPY (SELECT CASE WHEN trace_id = 3 THEN NULL ELSE trace_id END AS id FROM shots) TO '{}'",
        out.display()
    );
    let e = ctx.sql(&sql).await.unwrap().collect().await.unwrap_err();
    let message = e.to_string();
    assert!(message.contains("bad.npy"), "{message}");
    assert!(!out.exists());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["shots"]);
}

#[tokio::test]
async fn insert_overwrite_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, all) = shots(&dir.path().join("shots"), 5).await;
    let e = match ctx.sql("INSERT OVERWRITE shots SELECT * FROM shots").await {
        Ok(df) => df.collect().await.unwrap_err(),
        Err(e) => e,
    };
    assert!(e.to_string().contains("only appending"), "{e}");
    assert_eq!(read_shots(&dir.path().join("shots")), all);
    assert_eq!(std::fs::read_dir(dir.path().join("shots")).unwrap().count(), 5);
}

/// Text whose longest value comes in a later batch (10,000 rows: batches of 8,192 and
/// 1,808): COPY writes it `<U19`, as wide as that value, to `.npy` and `.npz`; NumPy loads
/// both (CI).
#[tokio::test]
async fn copy_of_text_longer_in_later_batches() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context();
    let growing = "SELECT v, repeat('x', CAST(v / 500 AS INT)) AS s FROM unnest(range(0, 10000)) AS t(v)";
    let rows: Vec<serde_json::Value> =
        (0..10_000i64).map(|v| serde_json::json!([v, "x".repeat((v / 500) as usize)])).collect();
    for kind in ["npy", "npz"] {
        let out = dir.path().join(format!("text.{kind}"));
        let sql = format!("COPY ({growing} ORDER BY v) TO '{}'", out.display());
        assert_eq!(count(&query(&ctx, &sql).await), 10_000);
        let (v, s): (Vec<i64>, Vec<String>) = if kind == "npy" {
            let array = DynArray::read_npy(&out).unwrap();
            assert_eq!(array.dtype().descr(), "[('v', '<i8'), ('s', '<U19')]");
            #[derive(NpyRecord)]
            struct Row {
                v: i64,
                s: npy_core::types::Ucs4<19>,
            }
            Vec::<Row>::read_npy(&out).unwrap().iter().map(|r| (r.v, r.s.to_string())).unzip()
        } else {
            let mut archive = npz::Reader::from_path(&out).unwrap();
            assert_eq!(archive.read::<DynArray>("s").unwrap().dtype().descr(), "'<U19'");
            let s = archive.read::<Vec<npy_core::types::Ucs4<19>>>("s").unwrap();
            (archive.read::<Vec<i64>>("v").unwrap(), s.iter().map(ToString::to_string).collect())
        };
        assert_eq!(v, (0..10_000).collect::<Vec<i64>>());
        assert!(s.iter().enumerate().all(|(i, t)| *t == "x".repeat(i / 500)), "{kind}");
        leave_rows_for_numpy(&format!("copy_text_{kind}"), &out, kind, &["v", "s"], rows.clone());
    }
}
