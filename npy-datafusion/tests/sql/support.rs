//! Generated tables: directories of `.npy` files written with npy-core, in three layouts
//! of one record (the `npy-seismic` crate's `Shot`: packed, `align=True`, big-endian), and
//! the same records read back with npy-core for the expected answers.
#![allow(dead_code)]

use std::path::Path;

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use npy_core::prelude::*;

pub use npy_seismic::{shot, Pick, Shot, ShotAligned, ShotBe};

fn aligned(s: &Shot) -> ShotAligned {
    ShotAligned::from(*s)
}

fn big_endian(s: &Shot) -> ShotBe {
    ShotBe::from(*s)
}

/// Writes `files` files of shots into `dir` (file `k` has `k % 23` rows, so some are
/// empty), cycling through the packed, aligned and big-endian layouts. Returns the rows
/// written.
pub fn write_shots(dir: &Path, files: usize) -> usize {
    std::fs::create_dir_all(dir).unwrap();
    let mut next = 0;
    for k in 0..files {
        let rows: Vec<Shot> = (next..next + k % 23).map(shot).collect();
        next += rows.len();
        let path = dir.join(format!("shots_{k:04}.npy"));
        match k % 3 {
            0 => rows.write_npy(&path).unwrap(),
            1 => rows.iter().map(aligned).collect::<Vec<_>>().write_npy(&path).unwrap(),
            _ => rows.iter().map(big_endian).collect::<Vec<_>>().write_npy(&path).unwrap(),
        }
    }
    next
}

/// One file of `rows` shots in `layout` 0 (packed), 1 (aligned) or 2 (big-endian).
pub fn write_one(path: &Path, rows: usize, layout: usize) {
    let shots: Vec<Shot> = (0..rows).map(shot).collect();
    match layout {
        0 => shots.write_npy(path).unwrap(),
        1 => shots.iter().map(aligned).collect::<Vec<_>>().write_npy(path).unwrap(),
        _ => shots.iter().map(big_endian).collect::<Vec<_>>().write_npy(path).unwrap(),
    }
}

/// Every shot of the `.npy` files in `dir`, read with npy-core (fields by name, so each
/// layout reads as [`Shot`]).
pub fn read_shots(dir: &Path) -> Vec<Shot> {
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "npy"))
        .flat_map(|p| Vec::<Shot>::read_npy(p).unwrap())
        .collect()
}

/// A session that knows npy (formats and table factories), with `config`.
pub fn context_with(config: SessionConfig) -> SessionContext {
    let mut state = SessionStateBuilder::new().with_config(config).with_default_features().build();
    npy_datafusion::register(&mut state).unwrap();
    SessionContext::new_with_state(state)
}

/// A session that knows npy, default settings.
pub fn context() -> SessionContext {
    context_with(SessionConfig::new())
}

/// The result of `sql`.
pub async fn query(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    match ctx.sql(sql).await {
        Ok(df) => df.collect().await.unwrap_or_else(|e| panic!("{sql}: {e}")),
        Err(e) => panic!("{sql}: {e}"),
    }
}

/// The one value of a one-row, one-column result, as f64.
pub fn scalar_f64(batches: &[RecordBatch]) -> f64 {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::{DataType, Float64Type};
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 1, "{batches:?}");
    let batch = batches.iter().find(|b| b.num_rows() == 1).unwrap();
    let column = cast(batch.column(0), &DataType::Float64).unwrap();
    let column = column.as_primitive::<Float64Type>();
    assert!(column.is_valid(0));
    column.value(0)
}

/// Asserts `a` and `b` agree to a relative 1e-12 (sums in different orders).
pub fn assert_close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0), "{a} != {b}");
}

/// Column `i` of a result, as f64s (cast by Arrow).
pub fn column_f64(batches: &[RecordBatch], i: usize) -> Vec<f64> {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::{DataType, Float64Type};
    let mut out = Vec::new();
    for batch in batches {
        let column = cast(batch.column(i), &DataType::Float64).unwrap();
        out.extend(column.as_primitive::<Float64Type>().iter().map(|v| v.expect("a null")));
    }
    out
}

/// Column `i` of a result, as strings (cast by Arrow).
pub fn column_str(batches: &[RecordBatch], i: usize) -> Vec<String> {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::DataType;
    let mut out = Vec::new();
    for batch in batches {
        let column = cast(batch.column(i), &DataType::Utf8).unwrap();
        out.extend(column.as_string::<i32>().iter().map(|v| v.expect("a null").to_string()));
    }
    out
}

/// The plan's `DataSourceExec`s, depth first.
pub fn data_sources(
    plan: &std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>,
) -> Vec<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
    let mut out = Vec::new();
    if plan.name() == "DataSourceExec" {
        out.push(plan.clone());
    }
    for child in plan.children() {
        out.extend(data_sources(child));
    }
    out
}

/// Writes `rows` picks (one every third shot id, from 0) into `dir/picks.npy`.
pub fn write_picks(dir: &Path, rows: usize) -> Vec<Pick> {
    std::fs::create_dir_all(dir).unwrap();
    let picks: Vec<Pick> = (0..rows).map(|i| Pick { trace_id: (i * 3) as i32, pick: (i % 41) as f32 * 0.5 }).collect();
    picks.write_npy(dir.join("picks.npy")).unwrap();
    Vec::<Pick>::read_npy(dir.join("picks.npy")).unwrap()
}

/// A directory's tree: `.npy` files in folders below folders, names that sort differently
/// as text and component by component, a suffix in upper case (a `.npy` file as Windows
/// tools name it, which sorts first), a link to a file elsewhere, and files that are not
/// NumPy's. Each file's rows are `100 * i + 0..n`, `i` its place in `ORDER`.
pub const ORDER: [(&str, i64); 8] = [
    ("RUN.NPY", 2),
    ("a-b.npy", 6),
    ("a.npy", 3),
    ("a/deep/y.npy", 4),
    ("a/x.npy", 2),
    ("b/z.npy", 1),
    ("c.npy", 5),
    ("linked.npy", 2),
];

pub fn tree() -> (tempfile::TempDir, std::path::PathBuf, Vec<i64>) {
    use npy_core::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("runs");
    std::fs::create_dir_all(top.join("a/deep")).unwrap();
    std::fs::create_dir_all(top.join("b")).unwrap();
    let mut want = Vec::new();
    for (i, (name, rows)) in ORDER.iter().enumerate() {
        let values: Vec<i64> = (0..*rows).map(|r| 100 * i as i64 + r).collect();
        let path = if *name == "linked.npy" { dir.path().join("elsewhere.npy") } else { top.join(name) };
        values.write_npy(&path).unwrap();
        want.extend(values);
    }
    std::os::unix::fs::symlink(dir.path().join("elsewhere.npy"), top.join("linked.npy")).unwrap();
    std::fs::write(top.join("notes.txt"), "not an array").unwrap();
    std::fs::write(top.join("b/image.png"), b"\x89PNG").unwrap();
    (dir, top, want)
}

/// The values of column `values` of `sql`'s result, in the order they came.
pub async fn values(ctx: &datafusion::prelude::SessionContext, sql: &str) -> Vec<i64> {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::Int64Type;
    let batches = query(ctx, sql).await;
    batches.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect()
}

/// A session that knows npy with one partition (rows come in the files' order) and a
/// listing made at each scan (the default session keeps its first).
pub fn one_partition_context() -> SessionContext {
    use datafusion::execution::cache::cache_manager::CacheManagerConfig;
    let runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
        .with_cache_manager(CacheManagerConfig::default().with_list_files_cache_limit(0))
        .build_arc()
        .unwrap();
    let mut state = SessionStateBuilder::new()
        .with_config(SessionConfig::new().with_target_partitions(1))
        .with_default_features()
        .with_runtime_env(runtime)
        .build();
    npy_datafusion::register(&mut state).unwrap();
    SessionContext::new_with_state(state)
}
