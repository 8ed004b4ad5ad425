//! NumPy `.npy` and `.npz` files in object storage, through the
//! [`object_store`](https://docs.rs/object_store) crate: local files, S3 and S3-compatible
//! servers, Google Cloud Storage, Azure and plain HTTP.
//!
//! A `.npy` object is read as a scan format: its header from one small ranged read (the
//! same request also says how large the object is), and any rows `a..b` from one more
//! ranged read, since rows have a fixed size.
//!
//! The decoding is npy-core's and npy-arrow's (one header codec, one scalar codec); this
//! crate only moves bytes.
#![forbid(unsafe_code)]

pub mod header;
pub mod npz;
pub mod remote;
pub mod rows;
pub mod url;

pub use header::{fetch_header, fetch_header_at, NpyObject, HEADER_PREFIX};
pub use npz::{RemoteNpz, NPZ_TAIL};
pub use remote::RemoteNpy;
pub use rows::row_batches;
pub use url::{store_for, StoreLocation};

/// An object store error as npy's error, naming the object (`location`, as the store
/// shows it: `s3://bucket/key` or a path).
pub fn store_error(error: object_store::Error, location: &str) -> npy_core::Error {
    let kind = match &error {
        object_store::Error::NotFound { .. } => std::io::ErrorKind::NotFound,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => {
            std::io::ErrorKind::PermissionDenied
        }
        _ => std::io::ErrorKind::Other,
    };
    npy_core::Error::from(std::io::Error::new(kind, error)).reading(location)
}
