//! Bad tables: files that disagree, a file changed under a table, unknown options.

use npy_core::prelude::*;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::support::*;

#[tokio::test]
async fn schema_mismatch_names_both_files() {
    let dir = tempfile::tempdir().unwrap();
    write_one(&dir.path().join("a.npy"), 3, 0);
    write_picks(dir.path(), 3);
    let ctx = context();
    let err = ctx.register_npy("t", dir.path().to_str().unwrap(), &NpyReadOptions::new()).await.unwrap_err();
    let err = err.to_string();
    assert!(err.contains("a.npy") && err.contains("picks.npy"), "{err}");
    assert!(err.contains("table files disagree") && err.contains("'pick' Float32"), "{err}");
}

#[tokio::test]
async fn a_file_changed_under_its_table_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write_one(&dir.path().join("a.npy"), 3, 0);
    let ctx = context();
    ctx.register_npy("t", dir.path().to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    [1.5f64, 2.5][..].write_npy(dir.path().join("a.npy")).unwrap();
    let err = ctx.sql("SELECT t0 FROM t").await.unwrap().collect().await.unwrap_err().to_string();
    assert!(err.contains("a.npy' no longer matches its table"), "{err}");
}

#[tokio::test]
async fn truncated_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.npy");
    write_one(&path, 50, 0);
    let ctx = context();
    ctx.register_npy("t", dir.path().to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
    let err = ctx.sql("SELECT sum(t0) FROM t").await.unwrap().collect().await.unwrap_err().to_string();
    assert!(err.contains("a.npy") && err.contains("truncated"), "{err}");
}

#[tokio::test]
async fn unknown_option_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    write_one(&dir.path().join("a.npy"), 3, 0);
    let ctx = context();
    let sql =
        format!("CREATE EXTERNAL TABLE t STORED AS NPY LOCATION '{}/' OPTIONS ('batchrows' '5')", dir.path().display());
    let err = ctx.sql(&sql).await.unwrap_err().to_string();
    assert!(err.contains("unknown option 'format.batchrows'") && err.contains("format.batch_rows"), "{err}");
}
