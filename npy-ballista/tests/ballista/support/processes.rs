#![allow(dead_code)] // The tests and the bench use parts of it.

//! npy's cluster as processes, for the tests and the bench: `npy-ballista-scheduler` and
//! `npy-ballista-executor`s started as children on loopback ports the OS picked (Ballista's
//! flags), waited for (bounded), each killed and reaped by its guard's `Drop`, on every
//! path. Needs the binaries: the `cluster` feature.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use datafusion::error::Result;
use datafusion::prelude::{SessionConfig, SessionContext};

/// How long a process may take to listen and its executors to report ready (well under a
/// second each here; a loaded machine may be slower).
pub const START: Duration = Duration::from_secs(60);
/// The scheduler gives up on an executor whose heartbeats stopped after this many
/// seconds (Ballista's default is 180), and looks for such executors every second.
pub const EXECUTOR_TIMEOUT: &str = "6";

// ---- the processes ------------------------------------------------------------------------

/// A child process, killed and reaped when dropped.
pub struct Process {
    name: String,
    pub child: Child,
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
pub struct Cluster {
    /// The scheduler first; dropped (killed) in this order.
    pub processes: Vec<Process>,
    /// The scheduler's port on 127.0.0.1.
    pub port: u16,
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
    pub fn start(executors: usize) -> std::result::Result<Cluster, String> {
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
    pub fn url(&self) -> String {
        format!("df://127.0.0.1:{}", self.port)
    }

    /// A client of the cluster, with the tests' settings.
    pub async fn context(&self, config: SessionConfig) -> Result<SessionContext> {
        npy_ballista::remote(&self.url(), npy_ballista::ballista_state(config)?).await
    }

    /// The processes' ids.
    pub fn pids(&self) -> Vec<u32> {
        self.processes.iter().map(|p| p.child.id()).collect()
    }

    /// Kills executor `i` (the scheduler is process 0).
    pub fn kill_executor(&mut self, i: usize) {
        let process = self.processes.remove(i + 1);
        drop(process);
    }

    /// Every log, for a failing test's message.
    pub fn logs(&self) -> String {
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
pub fn http_get(port: u16, path: &str) -> String {
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
pub fn assert_gone(pids: &[u32]) {
    for pid in pids {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "process {pid} is still there");
    }
}
