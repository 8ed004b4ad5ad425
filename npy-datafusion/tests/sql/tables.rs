//! Both ways to make a table give an `NpyTable`.

use npy_datafusion::{Kind, NpyReadOptions, NpyTable, SessionContextNpyExt};

use crate::support::*;

#[tokio::test]
async fn register_npy_and_create_external_table_give_npy_tables() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_shots(dir.path(), 12);
    let ctx = context();
    let path = format!("{}/", dir.path().display());
    let mut options = NpyReadOptions::new();
    options.batch_rows(7);
    ctx.register_npy("a", &path, &options).await.unwrap();
    query(&ctx, &format!("CREATE EXTERNAL TABLE b STORED AS NPY LOCATION '{path}' OPTIONS ('batch_rows' '7')")).await;
    for name in ["a", "b"] {
        let provider = ctx.table_provider(name).await.unwrap();
        let table = provider.downcast_ref::<NpyTable>().unwrap_or_else(|| panic!("{name} is not an NpyTable"));
        assert_eq!((table.kind(), table.options()), (Kind::Npy, &options));
        let count = scalar_f64(&query(&ctx, &format!("SELECT count(*) FROM {name}")).await);
        assert_eq!(count as usize, rows);
    }
}

/// A directory's tree: `.npy` files in folders below folders, names that sort differently
/// as text and component by component, a link to a file elsewhere, and files that are not
/// NumPy's. Each file's rows are `100 * i + 0..n`, `i` its place in `ORDER`.
const ORDER: [(&str, i64); 7] = [
    ("a-b.npy", 6),
    ("a.npy", 3),
    ("a/deep/y.npy", 4),
    ("a/x.npy", 2),
    ("b/z.npy", 1),
    ("c.npy", 5),
    ("linked.npy", 2),
];

fn tree() -> (tempfile::TempDir, std::path::PathBuf, Vec<i64>) {
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
async fn values(ctx: &datafusion::prelude::SessionContext, sql: &str) -> Vec<i64> {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::Int64Type;
    let batches = query(ctx, sql).await;
    batches.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect()
}

/// A directory gives SQL the files every door reads (`npy_store::find`'s: its folders' too,
/// links followed, other suffixes left out), in their order (one partition keeps it),
/// registered, made by `CREATE EXTERNAL TABLE` and as a glob pattern; and a file added
/// later to one of its folders is read at the next scan, as DataFusion lists a directory.
#[tokio::test]
async fn a_directory_gives_sql_the_files_find_gives_in_their_order() {
    let (_dir, top, want) = tree();
    let found: Vec<_> = npy_store::find(top.to_str().unwrap()).unwrap();
    let names: Vec<_> = found.iter().map(|p| p.strip_prefix(&top).unwrap().to_str().unwrap()).collect();
    assert_eq!(names, ORDER.map(|(name, _)| name));
    // One partition, and a listing made at each scan (the default session keeps its first).
    use datafusion::execution::cache::cache_manager::CacheManagerConfig;
    let runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new()
        .with_cache_manager(CacheManagerConfig::default().with_list_files_cache_limit(0))
        .build_arc()
        .unwrap();
    let config = datafusion::prelude::SessionConfig::new().with_target_partitions(1);
    let mut state = datafusion::execution::session_state::SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .with_runtime_env(runtime)
        .build();
    npy_datafusion::register(&mut state).unwrap();
    let ctx = datafusion::prelude::SessionContext::new_with_state(state);
    let path = top.to_str().unwrap();
    ctx.register_npy("registered", path, &NpyReadOptions::new()).await.unwrap();
    query(&ctx, &format!("CREATE EXTERNAL TABLE created STORED AS NPY LOCATION '{path}'")).await;
    let pattern = format!("{path}/**/*.npy");
    ctx.register_npy("pattern", &pattern, &NpyReadOptions::new()).await.unwrap();
    for name in ["registered", "created", "pattern"] {
        assert_eq!(values(&ctx, &format!("SELECT values FROM {name}")).await, want, "{name}");
    }
    npy_core::WriteNpy::write_npy(&vec![7i64; 3], top.join("a/deep/later.npy")).unwrap();
    for name in ["registered", "created"] {
        let count = scalar_f64(&query(&ctx, &format!("SELECT count(*) FROM {name}")).await);
        assert_eq!(count as usize, want.len() + 3, "{name}");
    }
}

/// A directory of the other kind's files is refused by name, as by every other door; so is
/// one of both kinds.
#[tokio::test]
async fn a_directory_of_the_other_kind_is_refused_naming_it() {
    let (_dir, top, _) = tree();
    let ctx = context();
    let path = top.to_str().unwrap();
    let e = ctx.register_npz("t", path, &NpyReadOptions::new()).await.unwrap_err().to_string();
    assert!(e.contains(path) && e.contains("holds .npy files") && e.contains("an npy table"), "{e}");
    npy_core::npz::Writer::create(top.join("b/w.npz")).unwrap().finish().unwrap();
    for e in [
        ctx.register_npy("t", path, &NpyReadOptions::new()).await.unwrap_err().to_string(),
        ctx.sql(&format!("CREATE EXTERNAL TABLE t STORED AS NPY LOCATION '{path}'")).await.unwrap_err().to_string(),
    ] {
        assert!(e.contains(path) && e.contains("a table is one kind"), "{e}");
    }
}
