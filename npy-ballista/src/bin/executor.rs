//! `npy-ballista-executor`: Ballista 55's `ballista-executor` with npy's codecs and object
//! stores ([`npy_ballista::executor_config`]): the same flags, parsed by Ballista's own
//! `Config`.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use ballista_executor::config::Config;
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_executor::health::spawn_health_server;
use clap::{CommandFactory, FromArgMatches};

#[path = "shared/cli.rs"]
mod cli;

// The allocator Ballista's executor binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What `--help` says before the flags.
const ABOUT: &str = "An executor of a Ballista cluster that runs SQL over NumPy .npy/.npz files \
(npy's build of Apache Ballista 55's ballista-executor)";

/// What `--help` says after the flags: how this differs from Ballista's own executor.
const DIFFERS: &str = "\
Same flags and RUST_LOG as Ballista 55's ballista-executor, and its defaults but one, so
Ballista's deployment docs apply. What differs:
  - it runs npy's scans and writes (.npy/.npz files), so its scheduler must be
    npy-ballista-scheduler;
  - object stores are made from a table's URL and this process's environment (AWS_*,
    GOOGLE_*, AZURE_* variables, as object_store reads them); local paths must name the
    same files on every machine (one shared mount, or a bucket);
  - --scheduler-connect-timeout-seconds defaults to 60 (Ballista's: 0, give up at once),
    so executors may start before their scheduler listens;
  - without --work-dir, the temporary work directory is removed when the executor exits.";

/// Executors wait this long for their scheduler unless told otherwise.
const CONNECT_TIMEOUT: &str = "60";

fn main() -> ExitCode {
    let command = cli::named(Config::command(), "npy-ballista-executor", ABOUT, DIFFERS)
        .mut_arg("scheduler_connect_timeout_seconds", |arg| arg.default_value(CONNECT_TIMEOUT));
    let config = Config::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build();
    cli::exit_code("npy-ballista-executor", runtime, run(config))
}

async fn run(opt: Config) -> Result<(), String> {
    let health_addr = format!("{}:{}", opt.bind_host, opt.bind_health_port);
    let health_addr: SocketAddr =
        health_addr.parse().map_err(|e| format!("--bind-host/--bind-health-port {health_addr}: {e}"))?;
    let mut config = ExecutorProcessConfig::try_from(opt).map_err(|e| e.to_string())?;
    // Ballista's executor makes a temporary directory's name and deletes the directory at
    // once; this one keeps it until the process exits.
    let _work_dir = match &config.work_dir {
        Some(_) => None,
        None => {
            let dir = tempfile::tempdir().map_err(|e| format!("cannot make a work directory: {e}"))?;
            config.work_dir = Some(dir.path().display().to_string());
            Some(dir)
        }
    };
    let config = npy_ballista::executor_config(config).map_err(|e| e.to_string())?;
    cli::Logs {
        level: &config.special_mod_log_level,
        thread_info: config.print_thread_info,
        dir: config.log_dir.as_deref(),
        rotation: config.log_rotation_policy,
        prefix: &config.log_file_name_prefix(),
    }
    .init();
    // Kubernetes-style probes, as Ballista's binary serves them: `/healthz` (alive) and
    // `/readyz` (heartbeats reach the scheduler).
    let (stop_health, health_stopped) = tokio::sync::oneshot::channel();
    let health = spawn_health_server(health_addr, config.health.clone(), health_stopped);
    let result = start_executor_process(Arc::new(config)).await.map_err(|e| e.to_string());
    // The health server ends when told to; an error of its own (a port in use) was logged.
    let _ = stop_health.send(());
    let _ = health.await;
    result
}
