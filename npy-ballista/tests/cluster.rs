//! A standalone Ballista cluster (scheduler + executor in this process, on loopback) runs SQL.

use std::time::Duration;

use datafusion::arrow::array::Int64Array;
use datafusion::physical_plan::displayable;
use datafusion::prelude::{SessionConfig, SessionContext};

/// Start-up takes well under a second; a minute leaves room for a loaded machine.
const START: Duration = Duration::from_secs(60);

/// The physical plan of `sql` on `ctx`, one operator a line.
async fn plan(ctx: &SessionContext, sql: &str) -> datafusion::error::Result<String> {
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let text = displayable(plan.as_ref()).indent(true).to_string();
    Ok(text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_cluster_runs_sql() -> datafusion::error::Result<()> {
    let state = npy_ballista::ballista_state(SessionConfig::new().with_target_partitions(2))?;
    let ctx = npy_ballista::standalone(state, START).await?;

    let sql = "SELECT sum(column1) AS s, count(*) AS n FROM (VALUES (1), (2), (39))";
    // The client only forwards the query: the plan is the scheduler's job.
    assert!(plan(&ctx, sql).await?.contains("DistributedQueryExec"));
    let batches = ctx.sql(sql).await?.collect().await?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 1);
    let column = |i: usize| batches[0].column(i).as_any().downcast_ref::<Int64Array>().unwrap().value(0);
    assert_eq!((column(0), column(1)), (42, 3));
    Ok(())
}
