//! The conversions of Arrow's and Parquet's errors to npy's, and the error helpers the
//! readers, writers and file formats share.

use npy_core::{Error, ErrorKind};

/// An Arrow error in converting data (a batch that does not fit): an invalid-data error
/// whose text says `arrow: ...`.
pub(crate) fn arrow_error(e: arrow_schema::ArrowError) -> Error {
    bad_data(format!("arrow: {e}"))
}

/// Data that does not fit what it is written as (a batch against its array's dtype and
/// shape): an invalid-data I/O error, not a usage error.
pub(crate) fn bad_data(reason: String) -> Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, reason).into()
}

/// A call the options or arguments make impossible.
pub(crate) fn usage(reason: String) -> Error {
    ErrorKind::Usage { reason }.into()
}

#[cfg(feature = "formats")]
/// An Arrow error as npy's: the npy error inside, if it carries one, else an invalid-data
/// I/O error saying `what` (a file that does not parse, a batch that does not fit).
pub(crate) fn from_arrow(e: arrow_schema::ArrowError, what: &str) -> Error {
    match e {
        arrow_schema::ArrowError::ExternalError(inner) => match inner.downcast::<Error>() {
            Ok(e) => *e,
            Err(inner) => bad_data(format!("{what}: {inner}")),
        },
        arrow_schema::ArrowError::IoError(_, io) => io.into(),
        e => bad_data(format!("{what}: {e}")),
    }
}

/// A Parquet error as npy's: the npy error inside, if it carries one, else an invalid-data
/// I/O error (its text says "Parquet error: ...").
#[cfg(feature = "formats")]
pub(crate) fn from_parquet(e: parquet::errors::ParquetError) -> Error {
    match e {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<Error>() {
            Ok(e) => *e,
            Err(inner) => bad_data(format!("Parquet error: {inner}")),
        },
        e => bad_data(e.to_string()),
    }
}
