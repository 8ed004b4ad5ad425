//! The flags of every subcommand that reads `.npy` data: `--max-header-size` and
//! `--max-object-bytes`, flattened into each one's `Args`.

use npy_core::ReadOptions;

/// Options for reading.
#[derive(Debug, clap::Args)]
pub struct ReadArgs {
    /// Largest header accepted, in bytes (default 16 MiB, which every header NumPy writes
    /// for a record of up to hundreds of thousands of fields fits; NumPy's np.load
    /// defaults to 10000).
    #[arg(long, value_name = "BYTES")]
    max_header_size: Option<usize>,
    /// Most memory the values of an object array (dtype=object) may take, in bytes
    /// (default: 128 MiB plus 4 per byte of its pickle; millions of small values need more).
    #[arg(long, value_name = "BYTES")]
    max_object_bytes: Option<usize>,
}

impl ReadArgs {
    /// The read options these flags ask for (npy-core's defaults for the flags not given).
    pub fn options(&self) -> ReadOptions {
        let mut opts = ReadOptions::new();
        if let Some(n) = self.max_header_size {
            opts.max_header_size(n);
        }
        if let Some(n) = self.max_object_bytes {
            opts.max_object_bytes(n);
        }
        opts
    }
}
