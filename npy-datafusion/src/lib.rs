//! npy-datafusion (issue 17, being built).
#![forbid(unsafe_code)]
