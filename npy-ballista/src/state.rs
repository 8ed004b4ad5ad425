//! The session state that scheduler, executors and client share.

use ballista::prelude::SessionConfigExt;
use datafusion::error::Result;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::execution::SessionState;
use datafusion::prelude::SessionConfig;

/// Builds the session state for running npy tables on Ballista: `config` upgraded with
/// Ballista's settings and DataFusion's default functions.
///
/// # Errors
///
/// None yet; the signature leaves room for registration failures.
pub fn ballista_state(config: SessionConfig) -> Result<SessionState> {
    let config = config.upgrade_for_ballista();
    Ok(SessionStateBuilder::new().with_config(config).with_default_features().build())
}
