//! [`Kind`]: `.npy` files or `.npz` archives.

/// Which files a table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.npy` files: one array each, a row per element (a record's fields are columns).
    Npy,
    /// `.npz` archives: each member is a column (a record member a struct), a row per
    /// member element, the members of an archive of one length; as
    /// `npy_arrow::NpzBatchReader` reads them. An archive is scanned whole by one
    /// partition, only the members a query uses read (deflated ones inflated as they
    /// arrive), each member read checked (size, CRC-32) before its rows are used.
    Npz,
}

impl Kind {
    /// The file extension, without the dot: `npy` or `npz`.
    pub fn ext(self) -> &'static str {
        match self {
            Kind::Npy => "npy",
            Kind::Npz => "npz",
        }
    }

    /// The glob of a folder's files of this kind, their suffix in any case (`RUN.NPY` is a
    /// `.npy` file, as `npy_store::find` has it): DataFusion lists a folder's files by a
    /// glob or by an extension it compares case by case.
    pub(crate) fn files_glob(self) -> &'static str {
        match self {
            Kind::Npy => "*.[nN][pP][yY]",
            Kind::Npz => "*.[nN][pP][zZ]",
        }
    }
}
