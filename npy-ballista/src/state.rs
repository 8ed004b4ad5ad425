//! The session state that scheduler, executors and client share.

use std::sync::Arc;

use ballista::prelude::SessionConfigExt;
use datafusion::error::Result;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::execution::SessionState;
use datafusion::prelude::SessionConfig;
use npy_datafusion::StoreRegistry;

use crate::codec::{physical_codec, NpyLogicalCodec};

/// Builds the session state for npy tables on Ballista: `config` upgraded with Ballista's
/// settings, npy's codecs in it ([`NpyLogicalCodec`], [`physical_codec`]), DataFusion's
/// default functions and formats, npy's file formats and `NPY` / `NPZ` table factories
/// ([`npy_datafusion::register`]), and a runtime whose object stores are made when a table
/// first names a bucket ([`StoreRegistry`]: from the URL and the `AWS_*`, `GOOGLE_*`,
/// `AZURE_*` variables).
///
/// The client, the scheduler and every executor need such a state (the same codecs), or
/// they cannot decode the plans that carry npy tables. [`crate::standalone`] gives its
/// scheduler and executor clones of the client's; the processes of a cluster get theirs
/// from [`crate::scheduler_config`] and [`crate::executor_config`] (the binaries
/// `npy-ballista-scheduler` and `npy-ballista-executor`).
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
    let state = SessionStateBuilder::new().with_config(config).with_default_features().build();
    with_npy(state, store_runtime(None)?)
}

/// `state` on `runtime`, with npy's formats and table factories.
pub(crate) fn with_npy(state: SessionState, runtime: Arc<RuntimeEnv>) -> Result<SessionState> {
    let mut state = SessionStateBuilder::new_from_existing(state).with_runtime_env(runtime).build();
    npy_datafusion::register(&mut state)?;
    Ok(state)
}

/// A runtime whose object stores come from a [`StoreRegistry`], spilling to `temp_dir`
/// (DataFusion's default place when `None`).
pub(crate) fn store_runtime(temp_dir: Option<&str>) -> Result<Arc<RuntimeEnv>> {
    let mut builder = RuntimeEnvBuilder::new().with_object_store_registry(Arc::new(StoreRegistry::new()));
    if let Some(dir) = temp_dir {
        builder = builder.with_temp_file_path(dir);
    }
    builder.build_arc()
}
