//! How `.npy` / `.npz` files are read as a table: [`NpyReadOptions`].

use std::collections::HashMap;

use datafusion::error::Result;
use npy_core::mmap::MapContract;
use npy_core::ErrorKind;

use crate::error::npy_error;

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
/// files read rather than mapped. Set with `&mut self` setters, as npy-arrow's
/// [`ConvertOptions`](npy_arrow::ConvertOptions); the functions that take them take them by
/// reference.
///
/// # Examples
/// ```
/// use npy_datafusion::NpyReadOptions;
///
/// let mut options = NpyReadOptions::new();
/// options.batch_rows(65536);
/// let map = options.to_table_options();
/// assert_eq!(map["format.batch_rows"], "65536");
/// assert_eq!(NpyReadOptions::from_table_options(&map)?, options);
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NpyReadOptions {
    pub(crate) batch_rows: Option<usize>,
    pub(crate) days_as_int64: bool,
    pub(crate) residue: bool,
    pub(crate) map_local_files: Option<MapContract>,
}

impl NpyReadOptions {
    /// The defaults.
    pub fn new() -> Self {
        NpyReadOptions::default()
    }

    /// Rows per batch (at least 1). Default: the session's
    /// `datafusion.execution.batch_size`.
    pub fn batch_rows(&mut self, rows: usize) -> &mut Self {
        self.batch_rows = Some(rows.max(1));
        self
    }

    /// Whether `datetime64[D]` columns are Int64 days instead of Date32
    /// ([`npy_arrow::ConvertOptions::days_as_int64`]). Default: `false`.
    pub fn days_as_int64(&mut self, yes: bool) -> &mut Self {
        self.days_as_int64 = yes;
        self
    }

    /// Whether the table has the residue column ([`npy_arrow::ConvertOptions::residue`]).
    /// Default: `false`.
    pub fn residue(&mut self, yes: bool) -> &mut Self {
        self.residue = yes;
        self
    }

    /// Scan local `.npy` files through memory maps ([`npy_store::RowScan::map`]) instead of
    /// reads: a query that uses a few fields of wide records then touches their pages
    /// without copying whole rows (in the bench, one field of 293-byte records scans
    /// several times faster than all of them). The value is the caller's `unsafe`
    /// [`MapContract::accept`]: nothing modifies or truncates the table's files while a
    /// query scans them. Not an `OPTIONS` key (SQL cannot make that promise), not sent to
    /// Ballista executors (they read), and without effect on object stores and npz members.
    /// Pages are faulted in by the threads that decode them (the session's runtime, where
    /// reads go to the blocking pool): meant for files in the page cache or on local SSDs.
    /// Default: none (local files are read).
    ///
    /// ```
    /// use npy_core::mmap::MapContract;
    /// use npy_datafusion::NpyReadOptions;
    ///
    /// // SAFETY: the table's files are written once and never changed while queried.
    /// let contract = unsafe { MapContract::accept() };
    /// let mut options = NpyReadOptions::new();
    /// options.map_local_files(contract);
    /// assert!(options.to_table_options().is_empty());
    /// ```
    pub fn map_local_files(&mut self, contract: MapContract) -> &mut Self {
        self.map_local_files = Some(contract);
        self
    }

    /// The options as `CREATE EXTERNAL TABLE ... OPTIONS` pairs, keys as DataFusion passes
    /// them to a format (`format.batch_rows`, ...). Only settings that differ from the
    /// defaults appear; [`NpyReadOptions::map_local_files`] never does.
    pub fn to_table_options(&self) -> HashMap<String, String> {
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

    /// Options from `CREATE EXTERNAL TABLE ... OPTIONS` pairs: keys with or without the
    /// `format.` prefix, any case. Keys of DataFusion's own `execution.` namespace are left
    /// to DataFusion.
    ///
    /// # Errors
    /// An unknown key (the error names it and the known ones), a `batch_rows` that is not
    /// a positive integer, a flag that is not `true` or `false`.
    pub fn from_table_options(map: &HashMap<String, String>) -> Result<Self> {
        let mut options = NpyReadOptions::new();
        options.set_table_options(map)?;
        Ok(options)
    }

    /// Changes the settings `map` names ([`NpyReadOptions::from_table_options`]' keys),
    /// keeping the others.
    ///
    /// # Errors
    /// As [`NpyReadOptions::from_table_options`]; the options are unchanged then.
    pub fn set_table_options(&mut self, map: &HashMap<String, String>) -> Result<&mut Self> {
        let mut options = self.clone();
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
                        "option '{key}' is not a table option: mapping the files is the promise that nothing \
                         modifies or truncates them while they are scanned, which SQL cannot make \
                         (NpyReadOptions::map_local_files with MapContract::accept)"
                    );
                    return Err(usage(reason));
                }
                _ => {
                    let known = KEYS.join(", ");
                    return Err(usage(format!("unknown option '{key}' for npy tables (known: {known})")));
                }
            }
        }
        *self = options;
        Ok(self)
    }

    /// The conversion settings npy-arrow reads with, batches of `batch_rows` or else
    /// `default_batch_rows`.
    pub(crate) fn convert_options(&self, default_batch_rows: usize) -> npy_arrow::ConvertOptions {
        let mut options = npy_arrow::ConvertOptions::new();
        options
            .batch_rows(self.batch_rows.unwrap_or(default_batch_rows).max(1))
            .days_as_int64(self.days_as_int64)
            .residue(self.residue);
        options
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
        let got =
            NpyReadOptions::from_table_options(&map(&[("batch_rows", "10"), ("format.RESIDUE", "TRUE")])).unwrap();
        assert_eq!(&got, NpyReadOptions::new().batch_rows(10).residue(true));
        let mut all = NpyReadOptions::new();
        all.batch_rows(3).days_as_int64(true).residue(true);
        assert_eq!(NpyReadOptions::from_table_options(&all.to_table_options()).unwrap(), all);
        assert!(NpyReadOptions::default().to_table_options().is_empty());
        // A failed change leaves the options as they were.
        let mut kept = all.clone();
        assert!(kept.set_table_options(&map(&[("residue", "false"), ("batch_rows", "x")])).is_err());
        assert_eq!(kept, all);
    }

    #[test]
    fn bad_options_name_the_key() {
        let err = NpyReadOptions::from_table_options(&map(&[("format.bogus", "1")])).unwrap_err().to_string();
        assert!(err.contains("unknown option 'format.bogus'") && err.contains("format.batch_rows"), "{err}");
        let err = NpyReadOptions::from_table_options(&map(&[("batch_rows", "0")])).unwrap_err().to_string();
        assert!(err.contains("'batch_rows': '0' is not a positive integer"), "{err}");
        let err = NpyReadOptions::from_table_options(&map(&[("residue", "yes")])).unwrap_err().to_string();
        assert!(err.contains("'residue': 'yes' is not true or false"), "{err}");
        let err = NpyReadOptions::from_table_options(&map(&[("map_local_files", "true")])).unwrap_err().to_string();
        assert!(err.contains("'map_local_files' is not a table option"), "{err}");
    }
}
