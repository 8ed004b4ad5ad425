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

/// A directory gives SQL the files every door reads (`npy_store::find`'s: its folders' too,
/// links followed, `.npy` in any case, other suffixes left out), in their order (one
/// partition keeps it), registered and made by `CREATE EXTERNAL TABLE`; a glob pattern
/// gives the files it matches as written (`*.npy` is not `RUN.NPY`); and a file added
/// later to one of its folders is read at the next scan, as DataFusion lists a directory.
#[tokio::test]
async fn a_directory_gives_sql_the_files_find_gives_in_their_order() {
    let (_dir, top, want) = tree();
    let found: Vec<_> = npy_store::find(top.to_str().unwrap()).unwrap();
    let names: Vec<_> = found.iter().map(|p| p.strip_prefix(&top).unwrap().to_str().unwrap()).collect();
    assert_eq!(names, ORDER.map(|(name, _)| name));
    let ctx = one_partition_context();
    let path = top.to_str().unwrap();
    ctx.register_npy("registered", path, &NpyReadOptions::new()).await.unwrap();
    query(&ctx, &format!("CREATE EXTERNAL TABLE created STORED AS NPY LOCATION '{path}'")).await;
    let pattern = format!("{path}/**/*.npy");
    ctx.register_npy("pattern", &pattern, &NpyReadOptions::new()).await.unwrap();
    for name in ["registered", "created"] {
        assert_eq!(values(&ctx, &format!("SELECT values FROM {name}")).await, want, "{name}");
    }
    let upper = ORDER[0].1 as usize;
    assert_eq!(ORDER[0].0, "RUN.NPY");
    assert_eq!(values(&ctx, "SELECT values FROM pattern").await, want[upper..], "pattern");
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
    // An archive whose suffix is in upper case is an archive too.
    npy_core::npz::Writer::create(top.join("b/W.NPZ")).unwrap().finish().unwrap();
    for e in [
        ctx.register_npy("t", path, &NpyReadOptions::new()).await.unwrap_err().to_string(),
        ctx.sql(&format!("CREATE EXTERNAL TABLE t STORED AS NPY LOCATION '{path}'")).await.unwrap_err().to_string(),
    ] {
        assert!(e.contains(path) && e.contains("a table is one kind"), "{e}");
    }
}
