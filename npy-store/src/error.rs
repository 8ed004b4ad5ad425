//! Object store errors as npy's, and the error of an npz member's bytes.

use npy_core::Error;

/// An object store error as npy's error, naming the object (`location`, as the store
/// shows it: `s3://bucket/key` or a path).
pub(crate) fn store_error(error: object_store::Error, location: &str) -> Error {
    Error::from(store_io(error)).reading(location)
}

/// A store's error as an I/O error of its kind (a missing object is `NotFound`).
pub(crate) fn store_io(error: object_store::Error) -> std::io::Error {
    let kind = match &error {
        object_store::Error::NotFound { .. } => std::io::ErrorKind::NotFound,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. } => {
            std::io::ErrorKind::PermissionDenied
        }
        _ => std::io::ErrorKind::Other,
    };
    std::io::Error::new(kind, error)
}

/// An error of an npz member's bytes (its size, its CRC-32, its deflate stream).
pub(crate) fn npz_error(member: &str, reason: &str) -> Error {
    npy_core::ErrorKind::Npz { member: Some(member.to_string()), reason: reason.to_string(), source: None }.into()
}

/// An I/O error of npy-store's own (a failed blocking task, a lost temporary file), said in
/// `reason`.
pub(crate) fn io_error(reason: String) -> Error {
    std::io::Error::other(reason).into()
}
