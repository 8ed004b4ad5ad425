//! Object store errors as npy's, and the error of an npz member's bytes.

use npy_core::Error;

/// An object store error as npy's error, naming the object (`location`, as the store
/// shows it: `s3://bucket/key` or a path).
pub(crate) fn store_error(error: object_store::Error, location: &str) -> Error {
    if matches!(error, object_store::Error::Precondition { .. }) {
        let reason = "the object changed since it was opened (its ETag is not the one opened): open it again";
        return Error::from(npy_core::ErrorKind::Usage { reason: reason.into() }).reading(location);
    }
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
    std::io::Error::new(kind, with_causes(&error))
}

/// An error's message followed by its causes' that it does not already say: an HTTP
/// store's stops at "error sending request", where the reason (a certificate refused, a
/// connection refused) is further down the chain.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = inner.source();
    }
    message
}

/// An error of an npz member's bytes (its size, its CRC-32, its compressed data).
pub(crate) fn npz_error(member: &str, reason: &str) -> Error {
    npy_core::ErrorKind::Npz { member: Some(member.to_string()), reason: reason.to_string(), source: None }.into()
}

/// An I/O error of npy-store's own (a failed blocking task, a lost temporary file), said in
/// `reason`.
pub(crate) fn io_error(reason: String) -> Error {
    std::io::Error::other(reason).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_error_says_its_causes() {
        let root = std::io::Error::new(std::io::ErrorKind::InvalidData, "invalid peer certificate: UnknownIssuer");
        let error = object_store::Error::Generic { store: "HTTP", source: Box::new(root) };
        let said = store_error(error, "https://host/a.npy").to_string();
        assert!(said.contains("https://host/a.npy") && said.contains("UnknownIssuer"), "{said}");
        assert_eq!(said.matches("UnknownIssuer").count(), 1, "{said}");
    }
}
