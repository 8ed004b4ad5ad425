//! The cluster binaries' logs, set up as Ballista's own binaries set up theirs: `RUST_LOG`
//! (else `--log-level-setting`) filters; lines go to stdout, or with `--log-dir` to files
//! rotated by `--log-rotation-policy`.

use ballista_core::config::LogRotationPolicy;
use tracing_appender::rolling;
use tracing_subscriber::EnvFilter;

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
