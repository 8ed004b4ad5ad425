//! Starting an in-process standalone cluster, or connecting to a running one.

use std::time::Duration;

use ballista::prelude::SessionContextExt;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::prelude::SessionContext;

/// Starts an in-process Ballista cluster (one scheduler and one executor on loopback, on
/// ports the OS picks) serving `state`, and returns a context whose queries run on it.
///
/// The scheduler and the executor get clones of `state`: its codecs, file formats, table
/// factories and object stores, so build `state` with [`ballista_state`](crate::ballista_state).
/// The executor runs `ballista.standalone.parallelism` tasks at once (see
/// `SessionConfigExt::with_ballista_standalone_parallelism`).
///
/// The cluster's tasks run on the current tokio runtime and end with it; there is no other
/// shutdown. Ballista's own start-up retries the connection to its scheduler forever, so
/// this waits at most `timeout`.
///
/// # Errors
///
/// When the scheduler or the executor cannot start (a port cannot be bound, …), or when
/// the cluster is not up after `timeout`.
///
/// # Panics
///
/// Outside a tokio runtime (the cluster's tasks are spawned on the current one).
///
/// # Examples
///
/// ```no_run
/// # async fn run() -> datafusion::error::Result<()> {
/// use std::time::Duration;
/// use datafusion::prelude::SessionConfig;
///
/// let state = npy_ballista::ballista_state(SessionConfig::new())?;
/// let ctx = npy_ballista::standalone(state, Duration::from_secs(60)).await?;
/// let batches = ctx.sql("SELECT 1 AS one").await?.collect().await?;
/// assert_eq!(batches[0].num_rows(), 1);
/// # Ok(())
/// # }
/// ```
pub async fn standalone(state: SessionState, timeout: Duration) -> Result<SessionContext> {
    match tokio::time::timeout(timeout, SessionContext::standalone_with_state(state)).await {
        Ok(started) => started,
        Err(_) => Err(DataFusionError::Execution(format!(
            "standalone ballista cluster: not up after {timeout:?} (the in-process scheduler \
             did not answer)"
        ))),
    }
}

/// Returns a context whose queries run on the Ballista cluster whose scheduler listens at
/// `url` (`df://host:port`; port 50050 when none is given).
///
/// The scheduler and executors of that cluster must know npy's codecs: the binaries
/// `npy-ballista-scheduler` and `npy-ballista-executor` (feature `cluster`), or processes
/// configured by [`scheduler_config`](crate::scheduler_config) and
/// [`executor_config`](crate::executor_config); give `state` from
/// [`ballista_state`](crate::ballista_state). This only checks that something accepts
/// connections at `url` (waiting at most 20 s); the first query talks to it.
///
/// # Errors
///
/// When `url` does not parse or names no host, or nothing accepts a connection there.
pub async fn remote(url: &str, state: SessionState) -> Result<SessionContext> {
    let place = url.strip_prefix("df://").unwrap_or(url).trim_end_matches('/');
    let place = if place.contains(':') { place.to_string() } else { format!("{place}:50050") };
    let unreachable =
        |why: String| DataFusionError::Execution(format!("no Ballista scheduler answers at {url}: {why}"));
    match tokio::time::timeout(REACH, tokio::net::TcpStream::connect(&place)).await {
        Ok(Ok(_)) => SessionContext::remote_with_state(url, state).await,
        Ok(Err(e)) => Err(unreachable(e.to_string())),
        Err(_) => Err(unreachable(format!("no answer after {REACH:?}"))),
    }
}

/// How long [`remote`] waits for a scheduler to accept a connection (Ballista's own
/// clients give up after 20 s too).
const REACH: Duration = Duration::from_secs(20);
