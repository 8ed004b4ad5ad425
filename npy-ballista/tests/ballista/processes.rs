//! npy's cluster as processes: `npy-ballista-scheduler` and two `npy-ballista-executor`s
//! started as children on loopback ports the OS picked, as a user starts them (Ballista's
//! flags). The client is `npy_ballista::remote`. The same SQL suite as `cluster.rs` over
//! directories of `.npy` and `.npz` files and over an S3 bucket (the moto server `cargo
//! xtask ci` starts; ignored otherwise) answers as npy-core and plain DataFusion do; a
//! corrupt file fails naming it; `COPY` writes on the executors; an executor killed
//! mid-query ends the query within a bounded time, and the cluster answers after it.
//!
//! Every process is killed and reaped by its guard's `Drop`, also when a test fails, and
//! the tests check that none is left.

use std::path::Path;
use std::time::{Duration, Instant};

use datafusion::error::Result;
use datafusion::physical_plan::displayable;
use datafusion::prelude::SessionContext;
use npy_core::prelude::*;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

use crate::support::processes::{assert_gone, http_get, Cluster, START};
use crate::support::*;

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

// ---- the suite ------------------------------------------------------------------------------

/// Runs every query of the suite on `cluster` and on `local`: both answer as npy-core.
async fn suite(cluster: &SessionContext, local: &SessionContext, truth: &Truth) -> Result<()> {
    for (sql, expected) in queries(truth) {
        let plan = cluster.sql(sql).await?.create_physical_plan().await?;
        let plan = displayable(plan.as_ref()).indent(true).to_string();
        assert!(plan.contains("DistributedQueryExec"), "{sql}: not sent to the cluster:\n{plan}");
        assert_eq!(answer(local, sql).await?, expected, "{sql}: datafusion vs npy-core");
        assert_eq!(answer(cluster, sql).await?, expected, "{sql}: the cluster vs npy-core");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_answer_as_datafusion_and_npy_core() -> TestResult {
    let data = generate()?;
    let truth = read(&data)?;
    let cluster = Cluster::start(2)?;
    let ctx = cluster.context(config()).await?;
    register(&ctx, &data).await?;
    let local = local_context()?;
    register(&local, &data).await?;
    if let Err(e) = suite(&ctx, &local, &truth).await {
        panic!("{e}\n{}", cluster.logs());
    }

    // COPY runs on an executor, which writes the file (the same machine here).
    let out = data.dir.path().join("station-1.npy");
    let sql = format!("COPY (SELECT * FROM big WHERE station = 1 ORDER BY trace_id) TO '{}'", out.display());
    let expected: Vec<Trace> = truth.big.iter().filter(|t| t.station == 1).copied().collect();
    assert_eq!(answer(&ctx, &sql).await?, [[Cell::Int(expected.len() as i128)]]);
    assert_eq!(Vec::<Trace>::read_npy(&out)?, expected);

    let pids = cluster.pids();
    drop(cluster);
    assert_gone(&pids);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_files_fail_naming_them_on_processes() -> TestResult {
    // The executors find out.
    let cluster = Cluster::start(2)?;
    corrupt_files_fail_naming_them(&cluster.context(config()).await?).await
}

/// Traces in `files` files of `rows` each under `dir`.
fn traces_table(dir: &Path, files: usize, rows: usize) -> npy_core::Result<Vec<Trace>> {
    let mut all = Vec::with_capacity(files * rows);
    for f in 0..files {
        let records: Vec<Trace> = (f * rows..(f + 1) * rows).map(trace).collect();
        records.write_npy(dir.join(format!("part-{f:03}.npy")))?;
        all.extend(records);
    }
    Ok(all)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_executor_ends_the_query_in_bounded_time() -> TestResult {
    let dir = tempfile::tempdir()?;
    let traces = traces_table(dir.path(), 16, 1_000)?;
    let mut cluster = Cluster::start(2)?;
    let ctx = cluster.context(config()).await?;
    ctx.register_npy("traces", format!("{}/", dir.path().display()), &NpyReadOptions::new()).await?;
    // Every pair of traces at one station: 51 million rows, seconds of work for both
    // executors, in two stages (a shuffle between them).
    let sql = "SELECT a.station, count(*), sum(b.t0) FROM traces a JOIN traces b ON a.station = b.station \
               GROUP BY a.station ORDER BY a.station";
    let expected: Vec<Vec<Cell>> = (0..=STATIONS)
        .map(|s| {
            let at: Vec<_> = traces.iter().filter(|t| t.station == s).collect();
            let n = at.len();
            vec![
                Cell::Int(s.into()),
                Cell::Int((n * n) as i128),
                Cell::Float(n as f64 * at.iter().map(|t| t.t0).sum::<f64>()),
            ]
        })
        .collect();

    let query = {
        let ctx = ctx.clone();
        tokio::spawn(async move { answer(&ctx, sql).await })
    };
    // Kill an executor once the scheduler says the job runs.
    let since = Instant::now();
    while !http_get(cluster.port, "/api/jobs").contains(r#""status":"Running""#) {
        assert!(!query.is_finished(), "the query ended before the test saw it run:\n{}", cluster.logs());
        assert!(since.elapsed() < START, "the job does not run after {START:?}:\n{}", cluster.logs());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let killed = cluster.processes[1].child.id();
    cluster.kill_executor(0);
    assert_gone(&[killed]);
    let after = Instant::now();
    // `answer` panics after HANG: the query never hangs.
    match query.await? {
        Ok(rows) => {
            assert_eq!(rows, expected, "retried after the kill, the answer is still right");
            eprintln!("the query answered {:?} after the kill", after.elapsed());
        }
        Err(e) => {
            assert!(!e.to_string().is_empty(), "a failed query says why");
            eprintln!("the query failed {:?} after the kill: {e}", after.elapsed());
        }
    }

    // The executor left serves the next query.
    match answer(&ctx, "SELECT count(*) FROM traces").await {
        Ok(rows) => assert_eq!(rows, [[Cell::Int(traces.len() as i128)]]),
        Err(e) => panic!("after the kill: {e}\n{}", cluster.logs()),
    }
    let pids = cluster.pids();
    drop(cluster);
    assert_gone(&pids);
    Ok(())
}

// ---- S3 -----------------------------------------------------------------------------------

/// Uploads every file of `dir` to `url` (a directory URL).
async fn upload_dir(dir: &Path, url: &str) -> TestResult {
    use object_store::ObjectStoreExt;
    let at = npy_store::store_for(url)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let key = at.path.clone().join(entry.file_name().to_string_lossy().as_ref());
        at.store.put(&key, std::fs::read(entry.path())?.into()).await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a local S3 server: cargo xtask ci starts moto"]
async fn s3_tables_answer_on_processes() -> TestResult {
    let bucket =
        std::env::var("NPY_S3_BUCKET").expect("NPY_S3_BUCKET: run by `cargo xtask ci`, which starts a local S3 server");
    let data = generate()?;
    let truth = read(&data)?;
    let base = format!("s3://{bucket}/npy-ballista/processes");
    upload_dir(&data.traces, &format!("{base}/traces/")).await?;
    upload_dir(&data.archives, &format!("{base}/archives/")).await?;
    let stations = npy_store::store_for(&format!("{base}/stations.npy"))?;
    object_store::ObjectStoreExt::put(&*stations.store, &stations.path, std::fs::read(&data.stations)?.into()).await?;
    let big = npy_store::store_for(&format!("{base}/big.npy"))?;
    object_store::ObjectStoreExt::put(&*big.store, &big.path, std::fs::read(&data.big)?.into()).await?;

    // The processes inherit the AWS_* variables, as a deployment's would.
    let cluster = Cluster::start(2)?;
    let ctx = cluster.context(config()).await?;
    let local = local_context()?;
    let store = npy_store::store_for(&base)?;
    local.register_object_store(&store.base, store.store);
    let options = NpyReadOptions::new();
    for c in [&ctx, &local] {
        c.register_npy("traces", format!("{base}/traces/"), &options).await?;
        c.register_npy("big", format!("{base}/big.npy"), &options).await?;
        c.register_npy("stations", format!("{base}/stations.npy"), &options).await?;
        c.register_npz("shots", format!("{base}/archives/"), &options).await?;
    }
    if let Err(e) = suite(&ctx, &local, &truth).await {
        panic!("{e}\n{}", cluster.logs());
    }
    let pids = cluster.pids();
    drop(cluster);
    assert_gone(&pids);
    Ok(())
}
