//! The rows of an array, as `npy dump` and `npy head` show them: NumPy's `arr.tolist()`,
//! one item of the first axis at a time.
//!
//! A 1-D array's rows are its elements; an N-d array's row `i` is `arr[i]` (a `(4, 3)`
//! array has 4 rows of 3 elements, given in C order whatever the file's order); a 0-d
//! array is one row of one element. Elements are given as their raw bytes, as stored,
//! for the sink to decode with the scalar codec (see `render`).
//!
//! How the data is read:
//! - C order (and any array whose storage is the same in both orders: at most one
//!   dimension above 1): streamed in chunks of about 1 MiB, so memory stays bounded
//!   whatever the file's size, even within a row.
//! - Fortran order, a file: read at positions, a block of rows at a time (about 4 MiB,
//!   at least one row): memory is bounded by the larger of 4 MiB and one row.
//! - Fortran order, an `.npz` member (a stream that cannot seek): held whole.
//! - Object arrays (`|O`): decoded whole by npy-core's restricted pickle decoder, which
//!   never runs any code.

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

use indicatif::ProgressBar;
use npy_core::dtype::DType;
use npy_core::header::{shape_repr, Header};
use npy_core::npz::Reader;
use npy_core::{Array, Error, ErrorKind, NpyReader, Object, ReadOptions, Result};

/// Bytes read per step of a C-order array.
const CHUNK_BYTES: usize = 1 << 20;
/// Bytes of a block of rows of a Fortran-order file read at positions.
const BLOCK_BYTES: usize = 4 << 20;

/// What a sink is given before the rows: the array's element type and how its elements
/// group into rows.
#[derive(Debug, Clone)]
pub struct RowShape {
    /// The element type; `None` for an object array.
    pub dtype: Option<DType>,
    /// The number of rows: the first dimension (1 for a 0-d array).
    pub rows: usize,
    /// The shape of a row: the dimensions after the first (empty when a row is one
    /// element: 1-D and 0-d arrays).
    pub row_dims: Vec<usize>,
}

impl RowShape {
    fn new(dtype: Option<DType>, shape: &[usize]) -> RowShape {
        match shape.split_first() {
            None => RowShape { dtype, rows: 1, row_dims: Vec::new() },
            Some((&rows, rest)) => RowShape { dtype, rows, row_dims: rest.to_vec() },
        }
    }

    /// Elements in a row.
    pub fn row_len(&self) -> usize {
        self.row_dims.iter().product()
    }
}

/// One element: its bytes as stored (file byte order), or an object array's value.
#[derive(Debug, Clone, Copy)]
pub enum Element<'a> {
    Raw(&'a [u8]),
    Object(&'a Object),
}

/// Where an element is: its index in storage order (as npy-core's errors count) and its
/// position `k` in its row (C order over [`RowShape::row_dims`]).
#[derive(Debug, Clone, Copy)]
pub struct At {
    pub row: usize,
    pub k: usize,
    pub storage: usize,
}

/// What `dump` and `head` do with the rows.
pub trait Sink {
    /// Called once, before any row.
    fn begin(&mut self, layout: &RowShape) -> Result<()>;
    /// Each element of the current row, `at.k` counting up from 0.
    fn element(&mut self, at: At, element: Element<'_>) -> Result<()>;
    /// The current row (`row`) is complete; `false` stops reading.
    fn end_row(&mut self, row: usize) -> Result<bool>;
    /// The most elements of each row the sink is given (asked after [`Sink::begin`]): the
    /// rest of the row is skipped, read past but not given.
    fn row_elements(&self) -> usize {
        usize::MAX
    }
}

/// Most values of no bytes one element may hold (an empty record in subarrays nests them:
/// NumPy takes `[('a', [], (2**30,))]`): nothing in the file bounds them, and each one is
/// a step of rendering, so more is refused.
const MAX_EMPTY_VALUES: usize = 1 << 20;

/// The steps of walking one element of `dtype` value by value: its scalars, and each
/// empty record, counted once per subarray item (saturating).
pub fn element_steps(dtype: &DType) -> usize {
    match dtype {
        DType::Scalar(_) => 1,
        DType::Record(r) => r.fields().iter().fold(1usize, |n, f| n.saturating_add(element_steps(&f.dtype))),
        DType::SubArray(a) => {
            let items = a.flat_shape().iter().fold(1usize, |n, &d| n.saturating_mul(d));
            items.saturating_mul(element_steps(a.flat_base()))
        }
    }
}

/// Refuses an element type of no bytes whose elements would take more than
/// [`MAX_EMPTY_VALUES`] steps to render.
fn bounded(dtype: &DType) -> Result<()> {
    let steps = element_steps(dtype);
    if dtype.itemsize() == 0 && steps > MAX_EMPTY_VALUES {
        let reason = format!(
            "an element holds {steps} values of no bytes, over {MAX_EMPTY_VALUES}: nothing in the file bounds them"
        );
        return Err(ErrorKind::UnsupportedDtype { descr: dtype.descr(), reason }.into());
    }
    Ok(())
}

/// Reads `file` (or `member` of an `.npz`) and gives its rows to `sink`. With `progress`,
/// a bar of that label counts the data bytes as they are read (shown only on a terminal,
/// for large inputs: [`crate::progress::bytes`]).
///
/// # Errors
/// [`ErrorKind::Usage`] for an archive of several members and no `member`; errors of
/// reading; the sink's errors. Errors name the file and member.
pub fn read_with(
    file: &Path,
    member: Option<&str>,
    progress: Option<&str>,
    sink: &mut impl Sink,
    opts: &ReadOptions,
) -> Result<()> {
    let mut bar = None;
    let result = read_into(file, member, opts, progress, &mut bar, sink);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    result.map_err(|e| e.reading(file))
}

fn read_into(
    file: &Path,
    member: Option<&str>,
    opts: &ReadOptions,
    progress: Option<&str>,
    bar: &mut Option<ProgressBar>,
    sink: &mut impl Sink,
) -> Result<()> {
    if !npy_core::npz::is_npz(file)? {
        if let Some(m) = member {
            let reason = format!("--member {m:?} is for .npz archives, and this is a .npy file");
            return Err(ErrorKind::Usage { reason }.into());
        }
        let reader = npy_core::NpyReader::from_path_with(file, opts)?;
        if reader.header().dtype.has_object() {
            return objects(reader.read::<Array<Object>>()?, sink);
        }
        *bar = progress.and_then(|label| crate::progress::bytes(reader.data_len() as u64, label));
        let header = reader.header().clone();
        return if permuted(&header) {
            fortran_file(reader, bar.as_ref(), sink)
        } else {
            streamed(reader, bar.as_ref(), sink)
        };
    }
    let mut archive = Reader::from_path_with(file, npy_core::npz::ReaderOptions::new().read_options(opts))?;
    let name = match member {
        Some(m) => m.to_string(),
        None => match archive.names() {
            [only] => only.clone(),
            [] => return Err(ErrorKind::Usage { reason: "the archive has no members".into() }.into()),
            names => {
                let list = names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
                let reason = format!("the archive has {} members ({list}): choose one with --member NAME", names.len());
                return Err(ErrorKind::Usage { reason }.into());
            }
        },
    };
    // Errors of our own decoding name the member as npy-core's do.
    let file_name =
        npy_core::npz::MemberInfo::find(archive.members(), &name).map_or_else(|| name.clone(), |m| m.member.clone());
    let reader = archive.npy(&name)?;
    let result = if reader.header().dtype.has_object() {
        reader.read::<Array<Object>>().and_then(|array| objects(array, sink))
    } else {
        *bar = progress.and_then(|label| crate::progress::bytes(reader.data_len() as u64, label));
        if permuted(reader.header()) {
            held(reader, bar.as_ref(), sink)
        } else {
            streamed(reader, bar.as_ref(), sink)
        }
    };
    result.map_err(|e| e.in_member(&file_name))
}

/// Whether the rows' elements are not in storage order: a Fortran-order array with more
/// than one dimension above 1 (with at most one, both orders store the same bytes).
fn permuted(header: &Header) -> bool {
    header.fortran_order && header.shape.iter().filter(|&&d| d > 1).count() > 1
}

/// Rows of an array whose storage order is the rows' order, read in chunks of about
/// [`CHUNK_BYTES`] (only one chunk is held).
fn streamed<R: Read>(mut reader: NpyReader<R>, bar: Option<&ProgressBar>, sink: &mut impl Sink) -> Result<()> {
    let header = reader.header().clone();
    bounded(&header.dtype)?;
    let layout = RowShape::new(Some(header.dtype.clone()), &header.shape);
    sink.begin(&layout)?;
    let size = header.dtype.itemsize();
    let per_chunk = (CHUNK_BYTES / size.max(1)).max(1);
    let row_len = layout.row_len();
    let shown = row_len.min(sink.row_elements());
    let mut buf = Vec::new();
    let (mut next, mut filled, mut storage) = (0usize, 0usize, 0usize);
    for row in 0..layout.rows {
        for k in 0..row_len {
            if k == shown {
                // The rest of the row is skipped: elements of no bytes at once, others
                // read past a chunk at a time.
                let mut left = row_len - shown;
                storage += left;
                if size == 0 {
                    break;
                }
                while left > 0 {
                    if next == filled {
                        buf.clear();
                        filled = reader.read_raw(per_chunk.min(left), &mut buf)?;
                        next = 0;
                        if filled == 0 {
                            let (expected, found) = (reader.data_len() as u64, ((storage - left) * size) as u64);
                            return Err(ErrorKind::Truncated { expected, found }.into());
                        }
                        if let Some(bar) = bar {
                            bar.inc(buf.len() as u64);
                        }
                    }
                    let step = left.min(filled - next);
                    next += step;
                    left -= step;
                }
                break;
            }
            if next == filled {
                buf.clear();
                filled = reader.read_raw(per_chunk, &mut buf)?;
                next = 0;
                if filled == 0 {
                    // The reader gives every element the shape counts; this is a guard.
                    let (expected, found) = (reader.data_len() as u64, (storage * size) as u64);
                    return Err(ErrorKind::Truncated { expected, found }.into());
                }
                if let Some(bar) = bar {
                    bar.inc(buf.len() as u64);
                }
            }
            sink.element(At { row, k, storage }, Element::Raw(&buf[next * size..(next + 1) * size]))?;
            next += 1;
            storage += 1;
        }
        if !sink.end_row(row)? {
            return Ok(());
        }
    }
    Ok(())
}

/// The Fortran-order storage index of a row's element `k` (C order over `row_dims`),
/// counted in rows: element `(i, k)` of the array is at `i + rows * rest_index(k)`.
fn rest_index(row_dims: &[usize], mut k: usize) -> usize {
    // C order: the last dimension varies fastest; Fortran: the first.
    let mut stride: usize = row_dims.iter().product();
    let mut f = 0;
    let mut f_stride = 1;
    for &d in row_dims {
        stride /= d.max(1);
        let j = k / stride.max(1);
        k %= stride.max(1);
        f += j * f_stride;
        f_stride *= d;
    }
    f
}

/// Rows of a Fortran-order npz member: the data is read whole (a member cannot seek),
/// then given row by row.
fn held<R: Read>(mut reader: NpyReader<R>, bar: Option<&ProgressBar>, sink: &mut impl Sink) -> Result<()> {
    let header = reader.header().clone();
    bounded(&header.dtype)?;
    let layout = RowShape::new(Some(header.dtype.clone()), &header.shape);
    let size = header.dtype.itemsize();
    let data_len = reader.data_len();
    let mut data = Vec::new();
    while reader.read_raw(per_chunk_of(size), &mut data)? > 0 {
        if let Some(bar) = bar {
            bar.set_position(data.len() as u64);
        }
    }
    sink.begin(&layout)?;
    let rows = layout.rows;
    let shown = layout.row_len().min(sink.row_elements());
    for row in 0..rows {
        for k in 0..shown {
            let storage = row + rows * rest_index(&layout.row_dims, k);
            let bytes = data.get(storage * size..(storage + 1) * size).ok_or_else(|| {
                // read_raw read every element the shape counts; this is a guard.
                Error::from(ErrorKind::Truncated { expected: data_len as u64, found: data.len() as u64 })
            })?;
            sink.element(At { row, k, storage }, Element::Raw(bytes))?;
        }
        if !sink.end_row(row)? {
            break;
        }
    }
    Ok(())
}

fn per_chunk_of(size: usize) -> usize {
    (CHUNK_BYTES / size.max(1)).max(1)
}

/// Rows of a Fortran-order file, read at positions a block of rows at a time: for each
/// element of a row, the run of the block's rows is contiguous in the file.
fn fortran_file(reader: NpyReader<BufReader<File>>, bar: Option<&ProgressBar>, sink: &mut impl Sink) -> Result<()> {
    let header = reader.header().clone();
    bounded(&header.dtype)?;
    let layout = RowShape::new(Some(header.dtype.clone()), &header.shape);
    let size = header.dtype.itemsize();
    let data_offset = reader.data_offset() as u64;
    let data_len = reader.data_len() as u64;
    let mut file = reader.into_inner();
    let mut at = file.stream_position()?;
    sink.begin(&layout)?;
    let (rows, row_len) = (layout.rows, layout.row_len());
    let shown = row_len.min(sink.row_elements());
    let row_bytes = row_len * size;
    let block = (BLOCK_BYTES / row_bytes.max(1)).clamp(1, rows.max(1));
    let mut buf = Vec::new();
    let mut first = 0;
    while first < rows {
        let n = block.min(rows - first);
        buf.clear();
        buf.resize(n * row_bytes, 0);
        // Elements of no bytes have no runs to read.
        for f in 0..if size == 0 { 0 } else { row_len } {
            let run = &mut buf[f * n * size..(f + 1) * n * size];
            let pos = data_offset + ((first + rows * f) * size) as u64;
            // Both are within the file, whose length fits an i64.
            file.seek_relative(pos as i64 - at as i64)?;
            file.read_exact(run).map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => {
                    let found = pos - data_offset;
                    Error::from(ErrorKind::Truncated { expected: data_len, found })
                }
                _ => Error::from(e),
            })?;
            at = pos + run.len() as u64;
            if let Some(bar) = bar {
                bar.inc(run.len() as u64);
            }
        }
        for row in first..first + n {
            for k in 0..shown {
                let f = rest_index(&layout.row_dims, k);
                let off = (f * n + (row - first)) * size;
                let storage = row + rows * f;
                sink.element(At { row, k, storage }, Element::Raw(&buf[off..off + size]))?;
            }
            if !sink.end_row(row)? {
                return Ok(());
            }
        }
        first += n;
    }
    Ok(())
}

/// Rows of an object array (held whole: its data is one pickle).
fn objects(array: Array<Object>, sink: &mut impl Sink) -> Result<()> {
    let layout = RowShape::new(None, array.shape());
    sink.begin(&layout)?;
    let shown = layout.row_len().min(sink.row_elements());
    let mut index = vec![0usize; array.shape().len()];
    for row in 0..layout.rows {
        for k in 0..shown {
            if let Some((first, rest)) = index.split_first_mut() {
                *first = row;
                c_index(&layout.row_dims, k, rest);
            }
            let object = array.get(&index).ok_or_else(|| {
                // The decoder checked that the values fill the shape; this is a guard.
                let reason = "an object array holds fewer values than its shape".to_string();
                Error::from(ErrorKind::Shape { shape: shape_repr(array.shape()), reason })
            })?;
            let storage = storage_of(array.shape(), array.fortran_order(), &index);
            sink.element(At { row, k, storage }, Element::Object(object))?;
        }
        if !sink.end_row(row)? {
            break;
        }
    }
    Ok(())
}

/// The multi-index of element `k` (C order) of an array of shape `dims`, into `out`.
pub fn c_index(dims: &[usize], mut k: usize, out: &mut [usize]) {
    for (slot, &d) in out.iter_mut().zip(dims).rev() {
        let d = d.max(1);
        *slot = k % d;
        k /= d;
    }
}

/// The storage position of a (valid) logical index.
fn storage_of(shape: &[usize], fortran: bool, index: &[usize]) -> usize {
    let mut pos = 0;
    let mut stride = 1;
    let mut step = |(&d, &i): (&usize, &usize)| {
        pos += i * stride;
        stride *= d;
    };
    if fortran {
        shape.iter().zip(index).for_each(&mut step);
    } else {
        shape.iter().zip(index).rev().for_each(&mut step);
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that records what it is given: (row, k, storage, bytes) and the rows ended.
    #[derive(Default)]
    struct Record {
        layout: Option<RowShape>,
        elements: Vec<(usize, usize, usize, Vec<u8>)>,
        ended: Vec<usize>,
        stop_after: Option<usize>,
    }

    impl Sink for Record {
        fn begin(&mut self, layout: &RowShape) -> Result<()> {
            self.layout = Some(layout.clone());
            Ok(())
        }
        fn element(&mut self, at: At, element: Element<'_>) -> Result<()> {
            let bytes = match element {
                Element::Raw(b) => b.to_vec(),
                Element::Object(o) => o.repr().into_bytes(),
            };
            self.elements.push((at.row, at.k, at.storage, bytes));
            Ok(())
        }
        fn end_row(&mut self, row: usize) -> Result<bool> {
            self.ended.push(row);
            Ok(self.stop_after.is_none_or(|n| self.ended.len() < n))
        }
    }

    fn fixture(rel: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data").join(rel)
    }

    /// The values of a NumPy-made fixture as `tolist()` orders them, read through
    /// npy-core's typed reader (which knows Fortran order) as the reference.
    fn logical<T: npy_core::NpyRecord + Copy>(rel: &str) -> (Vec<usize>, Vec<T>) {
        let array = NpyReader::from_path(fixture(rel)).unwrap().read::<Array<T>>().unwrap();
        let shape = array.shape().to_vec();
        let n: usize = shape.iter().product();
        let mut index = vec![0; shape.len()];
        let values = (0..n)
            .map(|i| {
                c_index(&shape, i, &mut index);
                *array.get(&index).unwrap()
            })
            .collect();
        (shape, values)
    }

    fn rows_of(rel: &str) -> Record {
        let mut sink = Record::default();
        read_with(&fixture(rel), None, None, &mut sink, &ReadOptions::new()).unwrap();
        sink
    }

    /// C and Fortran files, 2-D and 3-D, give the rows of `tolist()`: row `i` is `arr[i]`
    /// in C order, and `storage` says where each element is in the file.
    #[test]
    fn rows_follow_tolist_in_both_orders() {
        for rel in ["shape/3x4_C_i4.npy", "shape/3x4_F_i4.npy"] {
            let (shape, want) = logical::<i32>(rel);
            let got = rows_of(rel);
            assert_eq!(got.layout.as_ref().unwrap().row_dims, [4], "{rel}");
            assert_eq!(got.ended, [0, 1, 2], "{rel}");
            let values: Vec<i32> =
                got.elements.iter().map(|e| i32::from_le_bytes(e.3.clone().try_into().unwrap())).collect();
            assert_eq!(values, want, "{rel}");
            assert_eq!(shape, [3, 4]);
            let fortran = rel.contains("_F_");
            for &(row, k, storage, _) in &got.elements {
                assert_eq!(storage, if fortran { row + 3 * k } else { row * 4 + k }, "{rel}");
            }
        }
        for rel in ["shape/2x3x4_C_f8.npy", "shape/2x3x4_F_f8.npy"] {
            let (_, want) = logical::<f64>(rel);
            let got = rows_of(rel);
            assert_eq!(got.layout.as_ref().unwrap().row_dims, [3, 4], "{rel}");
            let values: Vec<f64> =
                got.elements.iter().map(|e| f64::from_le_bytes(e.3.clone().try_into().unwrap())).collect();
            assert_eq!(values.len(), 24);
            assert!(values.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{rel}");
        }
    }

    /// Empty rows are still rows (`(5, 0, 3)`: five empty rows), a 0-d array is one row.
    #[test]
    fn empty_rows_and_zero_d() {
        let got = rows_of("shape/5x0x3_f4.npy");
        assert_eq!((got.ended.len(), got.elements.len()), (5, 0));
        assert_eq!(got.layout.unwrap().row_dims, [0, 3]);
        let got = rows_of("shape/0_i4.npy");
        assert!(got.ended.is_empty() && got.elements.is_empty());
        let got = rows_of("shape/0d_f8.npy");
        assert_eq!((got.ended, got.elements.len()), (vec![0], 1));
    }

    /// A sink that says stop is not given more rows.
    #[test]
    fn a_sink_stops_the_reading() {
        let mut sink = Record { stop_after: Some(2), ..Record::default() };
        read_with(&fixture("shape/3x4_F_i4.npy"), None, None, &mut sink, &ReadOptions::new()).unwrap();
        assert_eq!((sink.ended, sink.elements.len()), (vec![0, 1], 8));
    }

    /// Object arrays in Fortran order give the same logical rows.
    #[test]
    fn object_rows_in_both_orders() {
        let c = rows_of("object/2x3_C.npy");
        let f = rows_of("object/2x3_F.npy");
        let text = |r: &Record| r.elements.iter().map(|e| String::from_utf8(e.3.clone()).unwrap()).collect::<Vec<_>>();
        assert_eq!(c.layout.as_ref().unwrap().row_dims, [3]);
        assert_eq!(text(&c), text(&f));
        assert_eq!(c.ended, [0, 1]);
    }

    /// Fortran-order arrays larger than a block: several blocks of rows, and rows larger
    /// than a block (one row at a time), read at positions from a file and held from a
    /// deflated npz member, give the logical rows; a C-order copy gives the same.
    #[test]
    fn fortran_reads_across_blocks() {
        use npy_core::npz::{Compression, Writer};
        use npy_core::types::Void;
        use npy_core::WriteNpy;

        let dir = tempfile::tempdir().unwrap();
        // Elements of 64 bytes, each filled with a byte that tells its (row, column).
        let value = |i: usize, j: usize| Void([((i * 7 + j * 13) % 251) as u8; 64]);
        // 3,000 rows of 25 (1,600 bytes): blocks of 2,621 rows; 2 rows of 70,000 (4.5 MB,
        // more than a block): one row at a time.
        for (rows, cols) in [(3000usize, 25usize), (2, 70_000)] {
            let logical: Vec<Void<64>> = (0..rows * cols).map(|n| value(n / cols, n % cols)).collect();
            let fortran: Vec<Void<64>> = (0..rows * cols).map(|n| value(n % rows, n / rows)).collect();
            let f = Array::from_shape_vec_fortran(vec![rows, cols], fortran).unwrap();
            let c = Array::from_shape_vec(vec![rows, cols], logical.clone()).unwrap();
            let (f_path, c_path, npz) = (dir.path().join("f.npy"), dir.path().join("c.npy"), dir.path().join("f.npz"));
            f.write_npy(&f_path).unwrap();
            c.write_npy(&c_path).unwrap();
            let mut w = Writer::create(&npz).unwrap();
            w.add_with("f", &f, Compression::deflated()).unwrap();
            w.finish().unwrap();
            for (path, member) in [(&f_path, None), (&c_path, None), (&npz, Some("f"))] {
                let mut sink = Record::default();
                read_with(path, member, None, &mut sink, &ReadOptions::new()).unwrap();
                assert_eq!(sink.ended.len(), rows, "{path:?}");
                let got: Vec<&[u8]> = sink.elements.iter().map(|e| &e.3[..]).collect();
                assert!(got.iter().zip(&logical).all(|(a, b)| a == &b.0), "{rows}x{cols} {path:?}: rows differ");
                assert_eq!(got.len(), logical.len());
                let fortran = path != &c_path;
                let (row, k, storage, _) = &sink.elements[cols + 5];
                assert_eq!((*row, *k), (1, 5));
                assert_eq!(*storage, if fortran { 1 + rows * 5 } else { cols + 5 }, "{path:?}");
            }
        }
    }

    #[test]
    fn index_helpers() {
        let mut out = [0; 3];
        c_index(&[2, 3, 4], 23, &mut out);
        assert_eq!(out, [1, 2, 3]);
        assert_eq!(rest_index(&[3, 4], 5), 1 + 3);
        assert_eq!(storage_of(&[2, 3], true, &[1, 2]), 1 + 2 * 2);
        assert_eq!(storage_of(&[2, 3], false, &[1, 2]), 3 + 2);
    }
}
