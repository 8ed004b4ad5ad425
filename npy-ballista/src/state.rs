//! The session state that scheduler, executors and client share.

use std::sync::Arc;

use ballista::prelude::SessionConfigExt;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::execution::SessionState;
use datafusion::prelude::SessionConfig;

use crate::codec::{physical_codec, NpyLogicalCodec};

/// Builds the session state for npy tables on Ballista: `config` upgraded with Ballista's
/// settings, npy's codecs in it ([`NpyLogicalCodec`], [`physical_codec`]), DataFusion's
/// default functions and formats, and npy's file formats and `NPY` / `NPZ` table factories
/// ([`npy_datafusion::register`]).
///
/// The client, the scheduler and every executor need such a state (the same codecs), or
/// they cannot decode the plans that carry npy tables. [`crate::standalone`] gives its
/// scheduler and executor clones of the client's; for a cluster of separate processes,
/// start them with one (Ballista's `SchedulerConfig` / `ExecutorProcessConfig` take a
/// session builder and codecs).
///
/// # Errors
///
/// When npy's formats cannot be registered.
///
/// # Examples
///
/// ```
/// use ballista::prelude::SessionConfigExt;
/// use datafusion::prelude::SessionConfig;
///
/// let state = npy_ballista::ballista_state(SessionConfig::new().with_target_partitions(4))?;
/// assert!(state.get_file_format_factory("npy").is_some());
/// assert_eq!(state.config().target_partitions(), 4);
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
pub fn ballista_state(config: SessionConfig) -> Result<SessionState> {
    let config = config
        .upgrade_for_ballista()
        .with_ballista_logical_extension_codec(Arc::new(NpyLogicalCodec::default()))
        .with_ballista_physical_extension_codec(Arc::new(physical_codec()));
    let mut state = SessionStateBuilder::new().with_config(config).with_default_features().build();
    npy_datafusion::register(&mut state)?;
    Ok(state)
}
