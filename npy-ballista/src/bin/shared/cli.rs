//! What the cluster binaries share: their command line's names and help around Ballista's
//! own `Config`, the run of their async main with its exit code, and logs set up as
//! Ballista's binaries set up theirs.

use std::future::Future;
use std::process::ExitCode;

use ballista_core::config::LogRotationPolicy;
use tracing_appender::rolling;
use tracing_subscriber::EnvFilter;

/// Ballista's `command` renamed `name`, with npy's version, `about` before the flags and
/// `differs` (how it differs from Ballista's binary) after them.
pub fn named(command: clap::Command, name: &'static str, about: &'static str, differs: &'static str) -> clap::Command {
    command
        .name(name)
        .bin_name(name)
        .version(concat!(env!("CARGO_PKG_VERSION"), " (Ballista 55.0.0)"))
        .about(about)
        .after_help(differs)
}

/// Runs `main` on `runtime` (as built) and reports its error on stderr, as `error: NAME:
/// ...`, with exit code 1.
pub fn exit_code(
    name: &str,
    runtime: std::io::Result<tokio::runtime::Runtime>,
    main: impl Future<Output = Result<(), String>>,
) -> ExitCode {
    let result = match runtime {
        Ok(runtime) => runtime.block_on(main),
        Err(e) => Err(format!("cannot start the async runtime: {e}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How a process logs.
pub struct Logs<'a> {
    /// `--log-level-setting`, used when `RUST_LOG` is not set.
    pub level: &'a str,
    /// `--print-thread-info`.
    pub thread_info: bool,
    /// `--log-dir`.
    pub dir: Option<&'a str>,
    /// `--log-rotation-policy`.
    pub rotation: LogRotationPolicy,
    /// The log files' names start with this.
    pub prefix: &'a str,
}

impl Logs<'_> {
    /// Installs the process's one subscriber (also for the `log` crate's records).
    pub fn init(&self) {
        let filter = EnvFilter::new(std::env::var(EnvFilter::DEFAULT_ENV).unwrap_or_else(|_| self.level.to_string()));
        let format = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_thread_names(self.thread_info)
            .with_thread_ids(self.thread_info)
            .with_env_filter(filter);
        match self.dir {
            Some(dir) => {
                let files = match self.rotation {
                    LogRotationPolicy::Minutely => rolling::minutely(dir, self.prefix),
                    LogRotationPolicy::Hourly => rolling::hourly(dir, self.prefix),
                    LogRotationPolicy::Daily => rolling::daily(dir, self.prefix),
                    LogRotationPolicy::Never => rolling::never(dir, self.prefix),
                };
                format.with_writer(files).init();
            }
            None => format.with_writer(std::io::stdout).init(),
        }
    }
}
