//! The cluster commands of `npy-ballista/README.md` ("Run on a cluster"), run as written:
//! the commands that end in ` &` start the scheduler and the executors in the background,
//! each killed and reaped by a guard when the step ends (on every path); the others run in
//! order once the scheduler lists every executor (waited for, bounded); then no process may
//! be left.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::docs;
use crate::project::{self, Result};

/// How long the scheduler may take to list every executor (under a second here).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A background command of the block; dropping it kills and reaps the process.
#[derive(Debug)]
struct Background {
    line: String,
    child: Child,
    log: PathBuf,
}

impl Drop for Background {
    fn drop(&mut self) {
        // Already exited is fine; the wait reaps it either way.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Background {
    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// The Markdown file whose cluster block CI runs.
pub const MANUAL: &str = "npy-ballista/README.md";

/// Runs the `sh` block of [`MANUAL`] that starts `npy-ballista-scheduler` (its commands as
/// [`docs::commands`] reads them), from `root`, with `path` as `PATH`; logs go to `logs`.
///
/// # Errors
/// When the file has no such block, a background process exits or the scheduler does not
/// list every executor in time, a foreground command fails or writes to stderr, or a
/// process is still there after its guard killed it.
pub fn run_manual_block(root: &Path, path: &std::ffi::OsStr, logs: &Path) -> Result<()> {
    let block = docs::block(MANUAL, "sh", "cluster commands (one starting npy-ballista-scheduler)", |b| {
        b.lines().any(|l| l.starts_with("npy-ballista-scheduler"))
    })?;
    let commands = docs::commands(&block);
    let lines: Vec<&str> = commands.iter().map(String::as_str).collect();
    let scheduler = scheduler_address(&lines)?;
    let executors = lines.iter().filter(|l| l.starts_with("npy-ballista-executor")).count();
    project::fresh_dir(logs)?;

    let mut background: Vec<Background> = Vec::new();
    let mut pids = Vec::new();
    let result = (|| {
        for (i, line) in lines.iter().enumerate() {
            project::step(line);
            match line.strip_suffix('&') {
                Some(command) => {
                    let log = logs.join(format!("{i}.log"));
                    let out = File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
                    let err = out.try_clone().map_err(|e| format!("cannot share {}: {e}", log.display()))?;
                    // `exec`: the guard's kill reaches the command itself, not a shell.
                    let child = Command::new("bash")
                        .args(["-c", &format!("exec {}", command.trim())])
                        .current_dir(root)
                        .env("PATH", path)
                        .stdin(Stdio::null())
                        .stdout(out)
                        .stderr(err)
                        .spawn()
                        .map_err(|e| format!("cannot run `{line}`: {e}"))?;
                    pids.push(child.id());
                    background.push(Background { line: line.to_string(), child, log });
                }
                None => {
                    wait_for_executors(&mut background, scheduler, executors)?;
                    let mut cmd = Command::new("bash");
                    cmd.args(["-o", "pipefail", "-c", line]).current_dir(root).env("PATH", path);
                    let out = cmd.output().map_err(|e| format!("cannot run `{line}`: {e}"))?;
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    if !out.status.success() || !stderr.is_empty() {
                        return Err(format!(
                            "{MANUAL} command `{line}`: {}; stderr: {}",
                            out.status,
                            stderr.trim_end()
                        ));
                    }
                    print!("{}", String::from_utf8_lossy(&out.stdout));
                }
            }
        }
        Ok(())
    })();
    drop(background);
    let left: Vec<u32> = pids.into_iter().filter(|pid| Path::new(&format!("/proc/{pid}")).exists()).collect();
    result?;
    if !left.is_empty() {
        return Err(format!("processes {left:?} of {MANUAL}'s cluster are still there after the kill"));
    }
    println!("{} cluster commands of {MANUAL} ran as written; {executors} executors, no process left", lines.len());
    Ok(())
}

/// The scheduler's address, from the block's `--ballista df://HOST:PORT`.
fn scheduler_address(lines: &[&str]) -> Result<SocketAddr> {
    let url = lines
        .iter()
        .flat_map(|l| l.split_whitespace())
        .find_map(|word| word.strip_prefix("df://"))
        .ok_or_else(|| format!("{MANUAL}'s cluster block has no `npy sql --ballista df://HOST:PORT` command"))?;
    url.to_socket_addrs()
        .map_err(|e| format!("df://{url}: {e}"))?
        .find(SocketAddr::is_ipv4)
        .ok_or_else(|| format!("df://{url} has no IPv4 address"))
}

/// Waits until the scheduler's REST API lists `executors` executors; fails (with the logs)
/// when a background process exits or [`START_TIMEOUT`] passes.
fn wait_for_executors(background: &mut [Background], scheduler: SocketAddr, executors: usize) -> Result<()> {
    let start = Instant::now();
    loop {
        let listed = http_get(scheduler, "/api/executors").matches("\"last_seen\"").count();
        if listed >= executors {
            return Ok(());
        }
        for process in background.iter_mut() {
            if let Ok(Some(status)) = process.child.try_wait() {
                return Err(format!("`{}` exited ({status}); its log:\n{}", process.line, process.log_text()));
            }
        }
        if start.elapsed() > START_TIMEOUT {
            let logs: Vec<String> = background.iter().map(|p| format!("`{}`:\n{}", p.line, p.log_text())).collect();
            return Err(format!(
                "the scheduler at {scheduler} lists {listed} of {executors} executors after {} s; logs:\n{}",
                START_TIMEOUT.as_secs(),
                logs.join("\n")
            ));
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// The reply to `GET path` at `addr` (empty when nothing answers).
fn http_get(addr: SocketAddr, path: &str) -> String {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else { return String::new() };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return String::new();
    }
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    reply
}
