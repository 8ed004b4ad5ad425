//! `npy dump FILE [--format json|csv] [--member NAME] [--strict-json null|string]`
//!
//! Writes every row of an array to stdout: a 1-D array element by element, an N-d
//! array's row `i` as `arr.tolist()[i]` (a `(4, 3)` array gives 4 lines of 3 values),
//! a 0-d array as one line. The mapping of values is [`HELP`]'s (shown by
//! `npy dump --help`); how the data is read, and the memory it takes, is in
//! `records.rs`: C-order data streams in chunks (bounded memory), Fortran-order files
//! are read at positions a block of rows at a time, Fortran-order npz members are held
//! whole, object arrays are decoded whole.

use std::io::{BufWriter, StdoutLock, Write};
use std::path::PathBuf;

use npy_core::header::shape_repr;
use npy_core::{ErrorKind, Result};

use crate::read_args::ReadArgs;
use crate::records::{self, At, Element, RowShape, Sink};
use crate::render::{self, NonFinite};

/// The long help of `npy dump`: what it writes for each kind of value.
pub const HELP: &str = "\
Write every row of an array to stdout as JSON lines or CSV, streaming.

Rows are NumPy's arr.tolist() items: a 1-D array gives one line (JSON) or row (CSV) per
element, an N-d array one per item of its first axis (a (4, 3) array: 4 lines of 3
values, in C order whatever the file's order), a 0-d array one line. C-order data is
read in chunks, so memory stays bounded whatever the file's size; a Fortran-order file
is read at positions a block of rows at a time (4 MiB, or one row if larger), a
Fortran-order .npz member and an object array (dtype=object) are held whole.

JSON (one value per line), as tolist() gives values:
  records         objects, fields in order: {\"id\": 1, \"pos\": {\"x\": 0.5}}
  subarrays, rows nested lists in C order: [[1, 2], [3, 4]]
  bool            true / false (a b1 byte other than 0 or 1 is true, as NumPy reads it)
  integers        numbers
  floats          numbers in NumPy's digits for their type, f2, f4, f8 and long double
                  (an f4 0.004 is 0.004, not 0.004000000189989805; 5e-324 is 5e-324)
  NaN, inf, -inf  NaN, Infinity, -Infinity as Python's json writes and reads them (in
                  object arrays too); --strict-json null|string gives null, or \"NaN\",
                  \"Infinity\", \"-Infinity\"
  complex         [re, im]
  S bytes         strings of their repr as NumPy prints it, b'LINE-001' (as in CSV)
  V bytes         strings of NumPy's str() of the void, b'\\x0C\\xFF' (as in CSV)
  U text          strings
  datetime64      ISO strings as np.datetime_as_string: \"2020-01-01T12:00\"; NaT is null
  timedelta64     the count of its units (m8[s] 5 is 5); NaT is null
  objects         None null, bool, int (any size) and float numbers, complex [re, im],
                  str strings, bytes and bytearray their repr, lists, tuples, sets and
                  frozensets arrays, dicts, OrderedDicts and Counters objects (arrays of
                  [key, value] pairs unless every key is a str); an ndarray in an object
                  array (a ragged array's rows) nested lists as its tolist(), NumPy
                  scalars as the values above (np.datetime64 ISO text, NaT null);
                  datetime.date/time/datetime their isoformat(); timedelta, timezone,
                  Decimal, Fraction, UUID and paths their str() (\"1 day, 0:00:00\",
                  \"1.50\", \"1/3\"); range, slice and classes their repr

CSV: a header row of column names, then one row per array row; each cell is NumPy's
str() of one value (True, 0.004, b'LINE-001', 2020-01-01, 5 seconds, nan), an object
array's Python's str() of its element (an ndarray's NumPy str(): [0 1 2]). Columns are
named after the fields: a.b for nested fields, samples[3] for subarray items, [j] and
[j].field for the items of an N-d array's rows, value for a plain 1-D array.

Values NumPy cannot show either are errors naming the element: text with a code point
beyond U+10FFFF, datetime64 values other than NaT with generic units. JSON writes a
surrogate code point as Python's json does (\\ud800); CSV cannot hold one.";

/// Write every row to stdout as JSON lines or CSV, values as NumPy's tolist() and
/// str() give them, streaming (bounded memory).
#[derive(Debug, clap::Args)]
#[command(long_about = HELP)]
pub struct Args {
    /// The .npy or .npz file.
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// The member of an .npz to dump.
    #[arg(long)]
    member: Option<String>,
    /// For strict JSON parsers: NaN, inf and -inf as null, or as the strings "NaN",
    /// "Infinity", "-Infinity" (default: NaN, Infinity, -Infinity, as Python's json).
    #[arg(long, value_enum, value_name = "null|string")]
    strict_json: Option<Strict>,
    #[command(flatten)]
    read: ReadArgs,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON value per line (per row of the array).
    Json,
    /// A header row of column names, then one row per row of the array.
    Csv,
}

/// `--strict-json`: NaN and infinities in JSON for parsers that refuse `NaN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Strict {
    /// As `null`.
    Null,
    /// As the strings "NaN", "Infinity", "-Infinity".
    String,
}

/// Output is written to stdout once this much is pending.
const FLUSH_AT: usize = 1 << 16;

/// Writes every row of the file (or of `--member` of an `.npz`) to stdout.
///
/// # Errors
/// [`ErrorKind::Usage`] for `--strict-json` with CSV, and as [`records::read_with`].
pub fn run(args: &Args) -> Result<()> {
    let format = args.format;
    let non_finite = match (format, args.strict_json) {
        (_, None) => NonFinite::Python,
        (Format::Json, Some(Strict::Null)) => NonFinite::Null,
        (Format::Json, Some(Strict::String)) => NonFinite::Strings,
        (Format::Csv, Some(_)) => {
            let reason = "--strict-json is for --format json (CSV writes nan, inf and -inf as NumPy prints them)";
            return Err(ErrorKind::Usage { reason: reason.into() }.into());
        }
    };
    let out = BufWriter::with_capacity(FLUSH_AT, std::io::stdout().lock());
    let mut writer = Writer { out, format, non_finite, layout: None, text: String::new(), cells: 0, empty_row: None };
    records::read_with(&args.file, args.member.as_deref(), Some("dump"), &mut writer, &args.read.options())?;
    writer.out.flush()?;
    Ok(())
}

/// The JSON-lines or CSV writer of rows.
struct Writer<'a> {
    out: BufWriter<StdoutLock<'a>>,
    format: Format,
    non_finite: NonFinite,
    layout: Option<RowShape>,
    /// Text of the row being written, not yet handed to `out`.
    text: String,
    /// CSV cells written in the current row.
    cells: usize,
    /// JSON of a row with no elements (a zero in its dimensions): `[]`, `[[], []]`.
    empty_row: Option<String>,
}

impl Writer<'_> {
    fn flush_text(&mut self) -> Result<()> {
        self.out.write_all(self.text.as_bytes())?;
        self.text.clear();
        Ok(())
    }

    fn cell(&mut self, cell: &str) {
        if self.cells > 0 {
            self.text.push(',');
        }
        self.text.push_str(&render::csv_field(cell));
        self.cells += 1;
    }

    /// The CSV header row: every column's name.
    fn header(&mut self, layout: &RowShape) -> Result<()> {
        let mut flushed = Ok(());
        render::column_names(layout, &mut |name| {
            self.cell(&name);
            if flushed.is_ok() && self.text.len() >= FLUSH_AT {
                flushed = self.flush_text();
            }
        });
        flushed?;
        self.text.push('\n');
        self.cells = 0;
        self.flush_text()
    }
}

impl Sink for Writer<'_> {
    fn begin(&mut self, layout: &RowShape) -> Result<()> {
        match self.format {
            Format::Csv => self.header(layout)?,
            Format::Json if layout.row_len() == 0 && !layout.row_dims.is_empty() => {
                let mut empty = String::new();
                render::empty_lists(&layout.row_dims, &mut empty).map_err(|bad| {
                    let shape = std::iter::once(layout.rows).chain(layout.row_dims.iter().copied()).collect::<Vec<_>>();
                    ErrorKind::Shape { shape: shape_repr(&shape), reason: bad.to_string() }
                })?;
                self.empty_row = Some(empty);
            }
            Format::Json => {}
        }
        self.layout = Some(layout.clone());
        Ok(())
    }

    fn element(&mut self, at: At, element: Element<'_>) -> Result<()> {
        let Some(layout) = &self.layout else { return Ok(()) };
        match self.format {
            Format::Json => {
                if !layout.row_dims.is_empty() {
                    render::open_lists(&layout.row_dims, at.k, &mut self.text);
                }
                match (element, &layout.dtype) {
                    (Element::Raw(bytes), Some(dtype)) => {
                        render::json_element(dtype, bytes, self.non_finite, &mut self.text)
                    }
                    (Element::Object(object), _) => render::json_object(object, self.non_finite, &mut self.text),
                    (Element::Raw(_), None) => Ok(()),
                }
                .map_err(|bad| bad.at(at, layout))?;
                if !layout.row_dims.is_empty() {
                    render::close_lists(&layout.row_dims, at.k, &mut self.text);
                }
            }
            Format::Csv => {
                let mut cells = Vec::new();
                match (element, &layout.dtype) {
                    (Element::Raw(bytes), Some(dtype)) => {
                        render::leaf_texts(dtype, bytes, &mut |text| cells.push(text))
                            .map_err(|bad| bad.at(at, layout))?
                    }
                    (Element::Object(object), _) => cells.push(render::object_cell(object)),
                    (Element::Raw(_), None) => {}
                }
                for cell in &cells {
                    self.cell(cell);
                }
            }
        }
        if self.text.len() >= FLUSH_AT {
            self.flush_text()?;
        }
        Ok(())
    }

    fn end_row(&mut self, _row: usize) -> Result<bool> {
        if let Some(empty) = &self.empty_row {
            self.text.push_str(empty);
        }
        self.text.push('\n');
        self.cells = 0;
        self.flush_text()?;
        Ok(true)
    }
}
