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
