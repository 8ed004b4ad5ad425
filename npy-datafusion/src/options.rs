//! How `.npy` / `.npz` files are read as a table: [`NpyReadOptions`].

use std::collections::HashMap;

use datafusion::error::Result;
use npy_core::mmap::MapContract;
use npy_core::ErrorKind;

use crate::npy_error;

/// The `OPTIONS` keys of `CREATE EXTERNAL TABLE ... STORED AS NPY|NPZ`, as DataFusion hands
/// them to the format (unprefixed keys get `format.`).
const BATCH_ROWS: &str = "format.batch_rows";
const DAYS_AS_INT64: &str = "format.days_as_int64";
const RESIDUE: &str = "format.residue";
const KEYS: [&str; 3] = [BATCH_ROWS, DAYS_AS_INT64, RESIDUE];
/// [`NpyReadOptions::map_local_files`], asked for as a key: set from Rust only.
const MAP_LOCAL_FILES: &str = "format.map_local_files";

/// Settings of a `.npy` / `.npz` table, the same as `CREATE EXTERNAL TABLE` `OPTIONS`
/// (`'batch_rows' '65536'`, `'days_as_int64' 'true'`, `'residue' 'true'`).
///
/// Defaults: batches of the session's `datafusion.execution.batch_size` rows, `M8[D]` as
/// Date32, no residue column (see [`npy_arrow::ConvertOptions`] for the last two), local
/// files read rather than mapped.
///
/// # Examples
/// ```
/// use npy_datafusion::NpyReadOptions;
///
/// let options = NpyReadOptions { batch_rows: Some(65536), ..Default::default() };
/// let map = options.to_map();
/// assert_eq!(map["format.batch_rows"], "65536");
/// assert_eq!(NpyReadOptions::from_map(&map)?, options);
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NpyReadOptions {
    /// Rows per batch; `None`: the session's batch size.
    pub batch_rows: Option<usize>,
    /// Whether `datetime64[D]` columns are Int64 days instead of Date32
    /// ([`npy_arrow::ConvertOptions::days_as_int64`]).
    pub days_as_int64: bool,
    /// Whether the table has the residue column
    /// ([`npy_arrow::ConvertOptions::residue`]).
    pub residue: bool,
    /// Scan local `.npy` files through memory maps ([`npy_store::row_batches`]' `map`)
    /// instead of reads: a query that uses a few fields of wide records then touches their
    /// pages without copying whole rows (in the bench, one field of 293-byte records scans
    /// several times faster than all of them). The value is the caller's `unsafe`
    /// [`MapContract::accept`]: nothing modifies or truncates the table's files while a
    /// query scans them. Not an `OPTIONS` key (SQL cannot make that promise), not sent to
    /// Ballista executors (they read), and without effect on object stores and npz members.
    /// Pages are faulted in by the threads that decode them (the session's runtime, where
    /// reads go to the blocking pool): meant for files in the page cache or on local SSDs.
    ///
    /// ```
    /// use npy_core::mmap::MapContract;
    /// use npy_datafusion::NpyReadOptions;
    ///
    /// // SAFETY: the table's files are written once and never changed while queried.
    /// let contract = unsafe { MapContract::accept() };
    /// let options = NpyReadOptions { map_local_files: Some(contract), ..Default::default() };
    /// assert!(options.to_map().is_empty());
    /// ```
    pub map_local_files: Option<MapContract>,
}

impl NpyReadOptions {
    /// The options as `OPTIONS` pairs, keys as DataFusion passes them to a format
    /// (`format.batch_rows`, ...). Only settings that differ from the defaults appear.
    pub fn to_map(&self) -> HashMap<String, String> {
        let mut map = HashMap::new();
        if let Some(rows) = self.batch_rows {
            map.insert(BATCH_ROWS.to_string(), rows.to_string());
        }
        if self.days_as_int64 {
            map.insert(DAYS_AS_INT64.to_string(), "true".to_string());
        }
        if self.residue {
            map.insert(RESIDUE.to_string(), "true".to_string());
        }
        map
    }

    /// Options from `OPTIONS` pairs: keys with or without the `format.` prefix, any case.
    /// Keys of DataFusion's own `execution.` namespace are left to DataFusion.
    ///
    /// # Errors
    /// An unknown key (the error names it and the known ones), a `batch_rows` that is not
    /// a positive integer, a flag that is not `true` or `false`.
    pub fn from_map(map: &HashMap<String, String>) -> Result<Self> {
        NpyReadOptions::default().with_map(map)
    }

    /// These options with the settings of `map` ([`NpyReadOptions::from_map`]'s keys)
    /// changed.
    ///
    /// # Errors
    /// As [`NpyReadOptions::from_map`].
    pub fn with_map(self, map: &HashMap<String, String>) -> Result<Self> {
        let mut options = self;
        let mut keys: Vec<_> = map.keys().collect();
        keys.sort();
        for key in keys {
            let value = map[key].trim();
            let lower = key.to_lowercase();
            if lower.starts_with("execution.") {
                continue;
            }
            let full = if lower.contains('.') { lower } else { format!("format.{lower}") };
            match full.as_str() {
                BATCH_ROWS => {
                    let rows = value.parse::<usize>().ok().filter(|&n| n > 0);
                    let rows =
                        rows.ok_or_else(|| usage(format!("option '{key}': '{value}' is not a positive integer")))?;
                    options.batch_rows = Some(rows);
                }
                DAYS_AS_INT64 => options.days_as_int64 = flag(key, value)?,
                RESIDUE => options.residue = flag(key, value)?,
                MAP_LOCAL_FILES => {
                    let reason = format!(
                        "option '{key}' is set from Rust only: NpyReadOptions::map_local_files holds the \
                         unsafe promise (npy_core::mmap::MapContract::accept) that nothing changes the files \
                         while they are scanned"
                    );
                    return Err(usage(reason));
                }
                _ => {
                    let known = KEYS.join(", ");
                    return Err(usage(format!("unknown option '{key}' for npy tables (known: {known})")));
                }
            }
        }
        Ok(options)
    }

    /// The conversion settings npy-arrow reads with, batches of `batch_rows` or else
    /// `default_batch_rows`.
    pub fn convert_options(&self, default_batch_rows: usize) -> npy_arrow::ConvertOptions {
        npy_arrow::ConvertOptions::new()
            .batch_rows(self.batch_rows.unwrap_or(default_batch_rows).max(1))
            .days_as_int64(self.days_as_int64)
            .residue(self.residue)
    }
}

fn flag(key: &str, value: &str) -> Result<bool> {
    match value.to_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(usage(format!("option '{key}': '{value}' is not true or false"))),
    }
}

fn usage(reason: String) -> datafusion::error::DataFusionError {
    npy_error(ErrorKind::Usage { reason }.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn keys_with_and_without_prefix() {
        let got = NpyReadOptions::from_map(&map(&[("batch_rows", "10"), ("format.RESIDUE", "TRUE")])).unwrap();
        assert_eq!(got, NpyReadOptions { batch_rows: Some(10), residue: true, ..Default::default() });
        let all = NpyReadOptions { batch_rows: Some(3), days_as_int64: true, residue: true, map_local_files: None };
        assert_eq!(NpyReadOptions::from_map(&all.to_map()).unwrap(), all);
        assert!(NpyReadOptions::default().to_map().is_empty());
    }

    #[test]
    fn bad_options_name_the_key() {
        let err = NpyReadOptions::from_map(&map(&[("format.bogus", "1")])).unwrap_err().to_string();
        assert!(err.contains("unknown option 'format.bogus'") && err.contains("format.batch_rows"), "{err}");
        let err = NpyReadOptions::from_map(&map(&[("batch_rows", "0")])).unwrap_err().to_string();
        assert!(err.contains("'batch_rows': '0' is not a positive integer"), "{err}");
        let err = NpyReadOptions::from_map(&map(&[("residue", "yes")])).unwrap_err().to_string();
        assert!(err.contains("'residue': 'yes' is not true or false"), "{err}");
        let err = NpyReadOptions::from_map(&map(&[("map_local_files", "true")])).unwrap_err().to_string();
        assert!(err.contains("'map_local_files' is set from Rust only"), "{err}");
    }
}
