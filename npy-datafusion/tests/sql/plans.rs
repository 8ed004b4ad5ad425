//! What the planner makes of npy tables: counts from headers, row ranges, limits.

use datafusion::physical_plan::{collect, displayable};
use datafusion::prelude::SessionConfig;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::support::*;

#[tokio::test]
async fn count_star_comes_from_the_headers() {
    let dir = tempfile::tempdir().unwrap();
    let rows = write_shots(dir.path(), 40);
    let ctx = context();
    ctx.register_npy("shots", dir.path().to_str().unwrap(), &NpyReadOptions::new()).await.unwrap();
    let df = ctx.sql("SELECT count(*) FROM shots").await.unwrap();
    let plan = df.clone().create_physical_plan().await.unwrap();
    let shown = displayable(plan.as_ref()).indent(true).to_string();
    assert!(!shown.contains("DataSourceExec"), "{shown}");
    assert_eq!(scalar_f64(&df.collect().await.unwrap()) as usize, rows);
}

#[tokio::test]
async fn one_file_splits_into_row_ranges() {
    let config = SessionConfig::new()
        .with_target_partitions(4)
        .with_repartition_file_min_size(1)
        .set_bool("datafusion.execution.collect_statistics", false);
    for (layout, rows) in [(0, 5000), (1, 4999), (2, 3)] {
        let dir = tempfile::tempdir().unwrap();
        write_one(&dir.path().join("one.npy"), rows, layout);
        let shots = read_shots(dir.path());
        let ctx = context_with(config.clone());
        let mut options = NpyReadOptions::new();
        options.batch_rows(7);
        ctx.register_npy("one", dir.path().to_str().unwrap(), &options).await.unwrap();
        let df = ctx.sql("SELECT count(t0), sum(trace_id), sum(samples[3]) FROM one").await.unwrap();
        let plan = df.create_physical_plan().await.unwrap();
        let sources = data_sources(&plan);
        assert_eq!(sources.len(), 1);
        assert_eq!(sources[0].properties().output_partitioning().partition_count(), 4, "layout {layout}");
        let got = collect(plan, ctx.task_ctx()).await.unwrap();
        assert_eq!(column_f64(&got, 0), [rows as f64]);
        assert_eq!(column_f64(&got, 1), [shots.iter().map(|s| f64::from(s.trace_id)).sum::<f64>()]);
        assert_eq!(column_f64(&got, 2), [shots.iter().map(|s| f64::from(s.samples[2])).sum::<f64>()]);
        // No statistics here: count(*) scans rows of no columns.
        assert_eq!(scalar_f64(&query(&ctx, "SELECT count(*) FROM one").await), rows as f64);
    }
}

#[tokio::test]
async fn limit_reads_few_rows() {
    let dir = tempfile::tempdir().unwrap();
    write_one(&dir.path().join("big.npy"), 100_000, 0);
    let ctx = context();
    let mut options = NpyReadOptions::new();
    options.batch_rows(1000);
    ctx.register_npy("big", dir.path().to_str().unwrap(), &options).await.unwrap();
    let plan = ctx.sql("SELECT trace_id, t0 FROM big LIMIT 5").await.unwrap().create_physical_plan().await.unwrap();
    let got = collect(plan.clone(), ctx.task_ctx()).await.unwrap();
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 5);
    let source = &data_sources(&plan)[0];
    let partitions = source.properties().output_partitioning().partition_count();
    let decoded = source.metrics().unwrap().sum_by_name("npy_rows_decoded").unwrap().as_usize();
    assert!(decoded > 0 && decoded <= 5 * partitions, "{decoded} rows decoded in {partitions} partitions");
}
