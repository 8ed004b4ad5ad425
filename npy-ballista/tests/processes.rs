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

use std::fs::File;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use datafusion::error::Result;
use datafusion::physical_plan::displayable;
use datafusion::prelude::SessionContext;
use npy_core::prelude::*;
use npy_datafusion::{NpyReadOptions, SessionContextNpyExt};

mod support;
use support::*;

type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// How long a process may take to listen and its executors to report ready (well under a
/// second each here; a loaded machine may be slower).
const START: Duration = Duration::from_secs(60);
/// The scheduler gives up on an executor whose heartbeats stopped after this many
/// seconds (Ballista's default is 180), and looks for such executors every second.
const EXECUTOR_TIMEOUT: &str = "6";

// ---- the processes ------------------------------------------------------------------------

/// A child process, killed and reaped when dropped.
struct Process {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Drop for Process {
    fn drop(&mut self) {
        // Both fail only when the process is already gone (and reaped).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scheduler and its executors, in processes of their own.
struct Cluster {
    /// The scheduler first; dropped (killed) in this order.
    processes: Vec<Process>,
    /// The scheduler's port on 127.0.0.1.
    port: u16,
    /// The processes' logs and the executors' work directories.
    dir: tempfile::TempDir,
}

/// A port of 127.0.0.1 that was free a moment ago.
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?.port())
}

impl Cluster {
    /// Starts a scheduler and `executors` executors, and waits (at most [`START`] each)
    /// until the scheduler listens and every executor says it is ready.
    fn start(executors: usize) -> std::result::Result<Cluster, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let port = free_port().map_err(|e| e.to_string())?;
        let mut cluster = Cluster { processes: Vec::new(), port, dir };
        let port_text = port.to_string();
        cluster.spawn(
            env!("CARGO_BIN_EXE_npy-ballista-scheduler"),
            "scheduler",
            &[
                "--bind-host",
                "127.0.0.1",
                "--external-host",
                "127.0.0.1",
                "--bind-port",
                &port_text,
                "--executor-timeout-seconds",
                EXECUTOR_TIMEOUT,
                "--expire-dead-executor-interval-seconds",
                "1",
            ],
        )?;
        cluster.wait_listening(0, port)?;
        for i in 0..executors {
            let [bind, grpc, health] = [free_port(), free_port(), free_port()];
            let (bind, grpc, health) = (
                bind.map_err(|e| e.to_string())?,
                grpc.map_err(|e| e.to_string())?,
                health.map_err(|e| e.to_string())?,
            );
            let work = cluster.dir.path().join(format!("work-{i}"));
            std::fs::create_dir(&work).map_err(|e| e.to_string())?;
            cluster.spawn(
                env!("CARGO_BIN_EXE_npy-ballista-executor"),
                &format!("executor-{i}"),
                &[
                    "--bind-host",
                    "127.0.0.1",
                    "--external-host",
                    "127.0.0.1",
                    "--scheduler-host",
                    "127.0.0.1",
                    "--scheduler-port",
                    &port_text,
                    "--bind-port",
                    &bind.to_string(),
                    "--bind-grpc-port",
                    &grpc.to_string(),
                    "--bind-health-port",
                    &health.to_string(),
                    "--work-dir",
                    &work.display().to_string(),
                    "--vcores",
                    "2",
                    "--executor-heartbeat-interval-seconds",
                    "1",
                ],
            )?;
            cluster.wait_ready(i + 1, health)?;
        }
        Ok(cluster)
    }

    /// Starts `exe` with `args`, logging to a file of its own; the guard owns it at once.
    fn spawn(&mut self, exe: &str, name: &str, args: &[&str]) -> std::result::Result<(), String> {
        let log = self.dir.path().join(format!("{name}.log"));
        let out = File::create(&log).map_err(|e| e.to_string())?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {exe}: {e}"))?;
        self.processes.push(Process { name: name.to_string(), child, log });
        Ok(())
    }

    /// Fails (with the process's log) when process `i` has exited, or [`START`] passed
    /// since `since`.
    fn check(&mut self, i: usize, since: Instant, what: &str) -> std::result::Result<(), String> {
        let process = &mut self.processes[i];
        let log = || std::fs::read_to_string(&process.log).unwrap_or_default();
        if let Ok(Some(status)) = process.child.try_wait() {
            return Err(format!("{} exited ({status}) before {what}; its log:\n{}", process.name, log()));
        }
        if since.elapsed() > START {
            return Err(format!("{}: not {what} after {START:?}; its log:\n{}", process.name, log()));
        }
        std::thread::sleep(Duration::from_millis(100));
        Ok(())
    }

    fn wait_listening(&mut self, i: usize, port: u16) -> std::result::Result<(), String> {
        let since = Instant::now();
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            self.check(i, since, &format!("listening on port {port}"))?;
        }
        Ok(())
    }

    /// Waits until executor process `i` answers `/readyz` with 200: it registered with the
    /// scheduler and its heartbeats arrive.
    fn wait_ready(&mut self, i: usize, health: u16) -> std::result::Result<(), String> {
        let since = Instant::now();
        while !ready(health) {
            self.check(i, since, "ready")?;
        }
        Ok(())
    }

    /// `df://127.0.0.1:PORT`, the scheduler's URL.
    fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.port)
    }

    /// A client of the cluster, with the tests' settings.
    async fn context(&self) -> Result<SessionContext> {
        npy_ballista::remote(&self.url(), npy_ballista::ballista_state(config())?).await
    }

    /// The processes' ids.
    fn pids(&self) -> Vec<u32> {
        self.processes.iter().map(|p| p.child.id()).collect()
    }

    /// Kills executor `i` (the scheduler is process 0).
    fn kill_executor(&mut self, i: usize) {
        let process = self.processes.remove(i + 1);
        drop(process);
    }

    /// Every log, for a failing test's message.
    fn logs(&self) -> String {
        let tail = |p: &Process| {
            let text = std::fs::read_to_string(&p.log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(30)..].join("\n")
        };
        self.processes.iter().map(|p| format!("--- {} ---\n{}", p.name, tail(p))).collect::<Vec<_>>().join("\n")
    }
}

/// The reply to `GET path` from the HTTP server on `port` of 127.0.0.1 (empty when there
/// is none).
fn http_get(port: u16, path: &str) -> String {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else { return String::new() };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").as_bytes()).is_err() {
        return String::new();
    }
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply
}

/// Whether an executor's health server on `port` says it is ready (HTTP 200 on `/readyz`).
fn ready(port: u16) -> bool {
    let reply = http_get(port, "/readyz");
    reply.starts_with("HTTP/1.0 200") || reply.starts_with("HTTP/1.1 200")
}

/// Fails unless every process of `pids` is gone (Linux: no `/proc/PID`).
fn assert_gone(pids: &[u32]) {
    for pid in pids {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "process {pid} is still there");
    }
}

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
    let ctx = cluster.context().await?;
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
    let dir = tempfile::tempdir()?;
    let (short, junk) = (dir.path().join("short"), dir.path().join("junk"));
    for table in [&short, &junk] {
        std::fs::create_dir(table)?;
        for (f, name) in ["a.npy", "b.npy", "c.npy"].into_iter().enumerate() {
            (f * 50..f * 50 + 50).map(trace).collect::<Vec<_>>().write_npy(table.join(name))?;
        }
    }
    let cluster = Cluster::start(2)?;
    let ctx = cluster.context().await?;
    for (name, table) in [("short", &short), ("junk", &junk)] {
        ctx.register_npy(name, format!("{}/", table.display()), &NpyReadOptions::new()).await?;
    }
    // After registration (the schema is known): b.npy loses its last 30 bytes, c.npy
    // becomes text. The executors find out.
    let b = short.join("b.npy");
    let len = std::fs::metadata(&b)?.len();
    std::fs::OpenOptions::new().write(true).open(&b)?.set_len(len - 30)?;
    std::fs::write(junk.join("c.npy"), "not an npy file")?;
    for (sql, file) in [("SELECT sum(t0) FROM short", "b.npy"), ("SELECT sum(t0) FROM junk", "c.npy")] {
        let err = answer(&ctx, sql).await.expect_err(sql).to_string();
        assert!(err.contains(file), "{sql}: the error does not name {file}: {err}");
    }
    Ok(())
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
    let ctx = cluster.context().await?;
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
    let ctx = cluster.context().await?;
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
