//! npy on the configurations of a cluster's scheduler and executors, for processes started
//! as Ballista's own binaries start theirs.

use std::sync::Arc;

use ballista::prelude::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::utils::default_session_builder;
use ballista_executor::executor_process::ExecutorProcessConfig;
use ballista_scheduler::config::SchedulerConfig;
use datafusion::error::Result;
use datafusion::prelude::SessionConfig;

use crate::codec::{physical_codec, NpyLogicalCodec};
use crate::state::{store_runtime, with_npy};

/// `config` with what a scheduler needs for npy tables: npy's codecs (to decode the
/// clients' plans and encode the executors' tasks), and for every session Ballista's own
/// session state with npy's formats and table factories on a runtime whose object stores
/// are made from a table's URL and this process's environment
/// ([`npy_datafusion::StoreRegistry`]: the scheduler lists the tables' files). Every other
/// setting of `config` is kept.
///
/// The binary `npy-ballista-scheduler` is Ballista's `ballista-scheduler` with this.
///
/// # Errors
///
/// When the object-store runtime cannot be built.
///
/// # Examples
///
/// ```
/// use ballista_scheduler::config::SchedulerConfig;
///
/// let config = npy_ballista::scheduler_config(SchedulerConfig::default())?;
/// let session = config.override_session_builder.as_ref().expect("npy's session builder");
/// let state = session(datafusion::prelude::SessionConfig::new())?;
/// assert!(state.get_file_format_factory("npz").is_some());
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
pub fn scheduler_config(config: SchedulerConfig) -> Result<SchedulerConfig> {
    // One runtime for every session: each bucket's store (its connections) is made once.
    let runtime = store_runtime(None)?;
    let mut config =
        config.with_override_config_producer(Arc::new(SessionConfig::new_with_ballista)).with_override_session_builder(
            Arc::new(move |session: SessionConfig| with_npy(default_session_builder(session)?, Arc::clone(&runtime))),
        );
    config.override_logical_codec = Some(Arc::new(NpyLogicalCodec::default()));
    config.override_physical_codec = Some(Arc::new(physical_codec()));
    Ok(config)
}

/// `config` with what an executor needs for npy scans: npy's codecs (to decode the scans
/// and writes of its tasks), the functions of a session like the scheduler's (Ballista's
/// default registry lacks DataFusion's nested functions, as `samples[1]`), and a runtime
/// whose object stores are made from a table's URL and this process's environment
/// ([`npy_datafusion::StoreRegistry`]), spilling to `config.work_dir` as Ballista's
/// default runtime does. Ballista's memory pool (from `memory_pool_size`) is still applied
/// on top of it. Every other setting is kept.
///
/// The binary `npy-ballista-executor` is Ballista's `ballista-executor` with this.
///
/// # Errors
///
/// When the object-store runtime cannot be built.
///
/// # Examples
///
/// ```
/// use ballista_executor::executor_process::ExecutorProcessConfig;
///
/// let config = npy_ballista::executor_config(ExecutorProcessConfig::default())?;
/// let functions = config.override_function_registry.as_ref().expect("a session's functions");
/// assert!(functions.scalar_functions.contains_key("array_element"));
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
pub fn executor_config(mut config: ExecutorProcessConfig) -> Result<ExecutorProcessConfig> {
    let runtime = store_runtime(config.work_dir.as_deref())?;
    config.override_runtime_producer = Some(Arc::new(move |_: &SessionConfig| Ok(Arc::clone(&runtime))));
    let functions = default_session_builder(SessionConfig::new_with_ballista())?;
    config.override_function_registry = Some(Arc::new(BallistaFunctionRegistry::from(&functions)));
    config.override_logical_codec = Some(Arc::new(NpyLogicalCodec::default()));
    config.override_physical_codec = Some(Arc::new(physical_codec()));
    Ok(config)
}
