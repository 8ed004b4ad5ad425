//! Filters evaluated by the scan: `WHERE` clauses and the dynamic filters of top-k queries
//! pushed into `.npy` scans answer as DataFusion's own filters over the same rows in
//! memory, read or mapped, in one partition or several; limits count the rows kept.

use std::sync::Arc;

use datafusion::datasource::MemTable;
use datafusion::physical_plan::{collect, displayable};
use datafusion::prelude::{SessionConfig, SessionContext};
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::support::*;

/// Queries with filters of every kind the scan takes: on plain, nested, list and text
/// fields; on columns not selected; keeping none, few (decoded row by row), many (the
/// block decoded and cut) or all rows of a block; under GROUP BY, LIMIT and OFFSET; top-k.
const QUERIES: [&str; 14] = [
    "SELECT trace_id, receiver.x, samples[3], station FROM {} WHERE t0 > 100 AND station <> 'BB' ORDER BY trace_id",
    "SELECT trace_id FROM {} WHERE receiver.z = 3 OR samples[2] < -40 ORDER BY trace_id",
    "SELECT count(*) FROM {} WHERE t0 > 200.5 AND station = 'é'",
    "SELECT * FROM {} WHERE trace_id % 20 = 0 ORDER BY trace_id",
    "SELECT * FROM {} WHERE trace_id % 2 = 0 ORDER BY trace_id",
    "SELECT trace_id, samples FROM {} WHERE t0 < 0",
    "SELECT t0, station FROM {} WHERE t0 > 0 ORDER BY trace_id",
    "SELECT station, count(*), max(t0) FROM {} WHERE receiver.x > 50 GROUP BY station ORDER BY station",
    "SELECT count(*) FROM (SELECT trace_id FROM {} WHERE t0 > 100 LIMIT 17)",
    "SELECT trace_id FROM {} WHERE t0 > 100 ORDER BY trace_id LIMIT 5 OFFSET 3",
    "SELECT trace_id, t0 FROM {} ORDER BY t0 DESC, trace_id LIMIT 7",
    "SELECT trace_id, station FROM {} ORDER BY samples[5], trace_id LIMIT 4",
    "SELECT receiver, t0 FROM {} WHERE station IN ('A', 'CCC') ORDER BY t0 DESC, trace_id LIMIT 9",
    "SELECT trace_id FROM {} WHERE t0 > 100 AND trace_id > 300 ORDER BY trace_id LIMIT 3",
];

/// The same shots as an npy table `shots` (read), `mapped` (mapped), and `memory` (the
/// rows in memory, which DataFusion filters itself).
async fn tables(config: SessionConfig, batch_rows: usize) -> (tempfile::TempDir, SessionContext) {
    use npy_core::mmap::MapContract;
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("shots");
    write_shots(&table, 60);
    let ctx = context_with(config);
    let mut read = NpyReadOptions::new();
    read.batch_rows(batch_rows);
    ctx.register_npy("shots", table.to_str().unwrap(), &read).await.unwrap();
    // SAFETY: the files of this test's temporary directory are not changed once written.
    let contract = unsafe { MapContract::accept() };
    let mut mapped = read.clone();
    mapped.map_local_files(contract);
    ctx.register_npy("mapped", table.to_str().unwrap(), &mapped).await.unwrap();
    let all = query(&ctx, "SELECT * FROM shots").await;
    let memory = MemTable::try_new(all[0].schema(), vec![all]).unwrap();
    ctx.register_table("memory", Arc::new(memory)).unwrap();
    (dir, ctx)
}

fn concat(batches: &[datafusion::arrow::record_batch::RecordBatch]) -> datafusion::arrow::record_batch::RecordBatch {
    let schema =
        batches.first().map(|b| b.schema()).unwrap_or_else(|| Arc::new(datafusion::arrow::datatypes::Schema::empty()));
    datafusion::arrow::compute::concat_batches(&schema, batches).unwrap()
}

#[tokio::test]
async fn filtered_scans_answer_as_datafusions_filters() {
    let several = SessionConfig::new().with_target_partitions(3).with_repartition_file_min_size(1);
    for (config, batch_rows) in [(SessionConfig::new().with_target_partitions(1), 5), (several, 16)] {
        let (_dir, ctx) = tables(config, batch_rows).await;
        for sql in QUERIES {
            let want = concat(&query(&ctx, &sql.replace("{}", "memory")).await);
            for table in ["shots", "mapped"] {
                let got = concat(&query(&ctx, &sql.replace("{}", table)).await);
                assert_eq!(got.columns(), want.columns(), "{sql} over {table}, batches of {batch_rows}");
            }
            if !sql.contains("t0 < 0") {
                assert!(want.num_rows() > 0, "{sql}");
            }
        }
    }
}

/// A `WHERE` over a `.npy` table leaves no filter above the scan: the scan shows it.
#[tokio::test]
async fn where_clauses_are_evaluated_by_the_scan() {
    let (_dir, ctx) = tables(SessionConfig::new(), 8).await;
    let sql = "SELECT trace_id FROM shots WHERE t0 > 100 AND station <> 'BB'";
    let plan = ctx.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
    let shown = displayable(plan.as_ref()).indent(true).to_string();
    assert!(!shown.contains("FilterExec"), "{shown}");
    assert!(shown.contains("predicate=t0@") && shown.contains("station@"), "{shown}");
}

/// A top-k query's scan decodes the columns it does not sort by only at the rows that may
/// still be among the first k: far fewer rows leave the scan than it holds.
#[tokio::test]
async fn top_k_scans_give_out_few_rows() {
    let dir = tempfile::tempdir().unwrap();
    write_one(&dir.path().join("big.npy"), 20_000, 0);
    let ctx = context_with(SessionConfig::new().with_target_partitions(1));
    let mut options = NpyReadOptions::new();
    options.batch_rows(500);
    ctx.register_npy("big", dir.path().to_str().unwrap(), &options).await.unwrap();
    let sql = "SELECT trace_id, station FROM big ORDER BY t0 DESC, trace_id LIMIT 3";
    let plan = ctx.sql(sql).await.unwrap().create_physical_plan().await.unwrap();
    let got = collect(plan.clone(), ctx.task_ctx()).await.unwrap();
    // t0 is (i % 997) * 0.25 + 0.125: its largest value at i = 996, 1993, 2990, ...
    assert_eq!(column_f64(&got, 0), [996.0, 1993.0, 2990.0]);
    let source = &data_sources(&plan)[0];
    let out = source.metrics().unwrap().sum_by_name("npy_rows_decoded").unwrap().as_usize();
    assert!(out < 2_000, "{out} of 20,000 rows left the scan");
}

/// A filter that fails on the data is an error of the query, naming the file.
#[tokio::test]
async fn a_failing_filter_names_the_file() {
    let (_dir, ctx) = tables(SessionConfig::new().with_target_partitions(1), 8).await;
    let sql = "SELECT trace_id FROM shots WHERE 10 / (trace_id - trace_id) > 1";
    let e = ctx.sql(sql).await.unwrap().collect().await.unwrap_err().to_string();
    assert!(e.contains("shots_0001.npy") && e.to_lowercase().contains("divide by zero"), "{e}");
}
