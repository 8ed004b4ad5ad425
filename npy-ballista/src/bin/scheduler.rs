//! `npy-ballista-scheduler`: Ballista 55's `ballista-scheduler` with npy's codecs, formats
//! and object stores ([`npy_ballista::scheduler_config`]): the same flags, parsed by
//! Ballista's own `Config`.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::{Config, SchedulerConfig};
use ballista_scheduler::scheduler_process::start_server;
use clap::{CommandFactory, FromArgMatches};

#[path = "shared/cli.rs"]
mod cli;

/// What `--help` says before the flags.
const ABOUT: &str = "The scheduler of a Ballista cluster that runs SQL over NumPy .npy/.npz files \
(npy's build of Apache Ballista 55's ballista-scheduler)";

/// What `--help` says after the flags: how this differs from Ballista's own scheduler.
const DIFFERS: &str = "\
Same flags, defaults and RUST_LOG as Ballista 55's ballista-scheduler, so Ballista's
deployment docs apply. What differs:
  - it decodes npy's tables and scans (.npy/.npz files), and its sessions know the NPY and
    NPZ formats (CREATE EXTERNAL TABLE ... STORED AS NPY, COPY ... TO 'x.npy');
  - object stores are made from a table's URL and this process's environment (AWS_*,
    GOOGLE_*, AZURE_* variables, as object_store reads them), for s3://, gs://, az:// and
    http(s):// tables; Ballista's own reads S3 settings from the session's s3.* options;
  - its executors must be npy-ballista-executor (Ballista's cannot decode npy's scans).
Clients: npy sql --ballista df://HOST:PORT, or npy_ballista::remote in Rust.";

/// Ballista's scheduler binary builds a runtime with 32 MiB thread stacks (deep plans are
/// planned recursively); so does this one.
const STACK: usize = 32 * 1024 * 1024;

fn main() -> ExitCode {
    let command = cli::named(Config::command(), "npy-ballista-scheduler", ABOUT, DIFFERS);
    let config = Config::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().thread_stack_size(STACK).build();
    cli::exit_code("npy-ballista-scheduler", runtime, run(config))
}

async fn run(opt: Config) -> Result<(), String> {
    let prefix = format!("scheduler_{}_{}_{}", opt.namespace, opt.external_host, opt.bind_port);
    cli::Logs {
        level: &opt.log_level_setting,
        thread_info: opt.print_thread_info,
        dir: opt.log_dir.as_deref(),
        rotation: opt.log_rotation_policy,
        prefix: &prefix,
    }
    .init();
    let addr = format!("{}:{}", opt.bind_host, opt.bind_port);
    let addr: SocketAddr = addr.parse().map_err(|e| format!("--bind-host/--bind-port {addr}: {e}"))?;
    let config = SchedulerConfig::try_from(opt).map_err(|e| e.to_string())?;
    let config = npy_ballista::scheduler_config(config).map_err(|e| e.to_string())?;
    let cluster = BallistaCluster::new_from_config(&config).await.map_err(|e| e.to_string())?;
    start_server(cluster, addr, Arc::new(config)).await.map_err(|e| format!("on {addr}: {e}"))
}
