//! npy's errors as DataFusion's.

/// npy's error as DataFusion's (it stays reachable through `source()` / downcasting).
pub(crate) fn npy_error(error: npy_core::Error) -> datafusion::error::DataFusionError {
    datafusion::error::DataFusionError::External(Box::new(error))
}
