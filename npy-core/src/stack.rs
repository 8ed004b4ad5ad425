//! Dask npy stacks: one array as a directory of `.npy` blocks along one axis.
//!
//! `dask.array.to_npy_stack(dir, x, axis)` writes `x` as `0.npy`, `1.npy`, ... (the blocks
//! along `axis`, each whole on the other axes) and a file `info`, a pickle of
//! `{'chunks': chunks, 'dtype': dtype, 'axis': axis}`; `dask.array.from_npy_stack(dir)`
//! opens it again, a block per task. This module writes such directories and reads them.
//!
//! - **Reading** ([`Stack::from_path`]): the `info` pickle is decoded by the restricted pickle
//!   machine of [`crate::object`] — `numpy.dtype` reconstruction and plain values, nothing
//!   ever called — so a hostile `info` is an error, never code run (`pickle.load` of it runs
//!   whatever it names: dask#12578). Every block's header is checked against it. A stack
//!   without `info` (dask#11241) is read from its blocks' headers: the stacking axis is the
//!   one axis whose length differs between blocks (the first, when none does, as Dask's
//!   default), or the one [`StackOptions::axis`] gives [`Stack::from_path_with`]. The whole array comes as one
//!   stream ([`Stack::reader`], [`Stack::join`] into one `.npy` file, [`Stack::read`]),
//!   or block by block ([`Stack::read_block`]), with at most 64 block files open at once.
//!   Only regular files are opened: a FIFO named `info` or `0.npy` is refused by name
//!   before it is opened (the open would wait for a writer).
//! - **Writing** ([`split`] a file, [`write_stack`] an array, [`StackWriter`] rows as
//!   they come): blocks of [`StackOptions::block_len`] along [`StackOptions::axis`] (the
//!   last one shorter; by default about 128 MiB each along the first axis), and `info`
//!   byte for byte as Dask pickles it for the dtype `np.load` makes of the blocks (protocol
//!   4). The directory appears whole or not at all: it is written as a hidden sibling
//!   `.{name}.npy-stack.XXXXXX` and renamed into place (it must not exist, or be empty).
//!   An error or a drop removes that sibling. A killed process leaves it, and the next
//!   stack written in the same parent directory removes it: the writer holds an exclusive
//!   lock (`flock`) on its directory while it lives, and the kernel drops the lock with
//!   the process, so a free lock proves the writer gone. A directory a live writer holds
//!   is never removed, nor anything not named so.
//!
//! Blocks are kept in their file's order: a Fortran-order array's blocks are Fortran
//! order (as Dask's `np.save` of them writes them), read back in either order.
//!
//! # Examples
//! ```
//! use npy_core::prelude::*;
//! use npy_core::stack::{write_stack_with, Stack, StackOptions};
//! use npy_core::Array;
//!
//! let dir = tempfile::tempdir()?;
//! let stack = dir.path().join("temps.npy-stack");
//! let temps = Array::from_shape_vec(vec![5, 2], (0..10).map(f64::from).collect())?;
//! // Blocks of 2 rows: 0.npy, 1.npy, 2.npy; `da.from_npy_stack` opens the directory.
//! let info = write_stack_with(&temps, &stack, StackOptions::new().block_len(2))?;
//! assert_eq!(info.chunks, [vec![2, 2, 1], vec![2]]);
//!
//! let back = Stack::from_path(&stack)?;
//! assert_eq!(back.shape(), [5, 2]);
//! assert_eq!(back.read::<Array<f64>>()?.as_slice(), temps.as_slice());
//! assert_eq!(back.read_block::<Array<f64>>(2)?.as_slice(), [8.0, 9.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

#[cfg(all(doc, not(test)))]
use crate::array::DynArray;
#[cfg(test)]
use crate::array::{Array, DynArray};
use crate::atomic::{parent_dir, AtomicFile};
use crate::dtype::{ByteOrder, DType};
use crate::error::{Error, ErrorKind, Result};
use crate::header::{shape_repr, Header, MAX_DIMS};
use crate::io::{ReadNpy, WriteNpy};
use crate::object::pickle::{decode_dict, encode_dict, Item};
use crate::object::Object;
pub use crate::options::StackOptions;
use crate::pending::PendingDir;
use crate::plan::Plan;
use crate::read::NpyReader;
use crate::record::NpyRecord;
use crate::shape::c_order;
use crate::write::{element_plan, write_with_plan};

/// The name of a stack's metadata file.
pub const INFO: &str = "info";

/// Largest `info` file read (Dask's are a few hundred bytes, a record dtype of thousands
/// of fields some hundred KiB).
const MAX_INFO_LEN: u64 = 64 << 20;

/// Most block files a split or a join of a stack along an inner axis keeps open at once;
/// more blocks take more passes over the input.
const OPEN_BLOCKS: usize = 64;

/// What a stack's `info` file says: each axis's chunks, the dtype and the stacking axis.
#[derive(Debug, Clone, PartialEq)]
pub struct StackInfo {
    /// Chunk lengths on every axis: the blocks' lengths on [`axis`](Self::axis), one chunk
    /// of the whole length on the others.
    pub chunks: Vec<Vec<usize>>,
    /// The element type of every block.
    pub dtype: DType,
    /// The axis the blocks follow one another on.
    pub axis: usize,
}

impl StackInfo {
    /// The info of blocks of `block_len` along `axis` of an array of `shape` (the last
    /// block shorter; one empty block on an empty axis).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for a 0-d shape, an axis out of range or a zero `block_len`.
    pub fn split(dtype: DType, shape: &[usize], axis: usize, block_len: usize) -> Result<StackInfo> {
        if shape.is_empty() {
            return Err(Error::usage("a 0-d array cannot be split into a stack"));
        }
        if axis >= shape.len() {
            return Err(Error::usage(format!("axis {axis} is out of range for shape {}", shape_repr(shape))));
        }
        if block_len == 0 {
            return Err(Error::usage("blocks of 0 along the axis: the block length must be at least 1"));
        }
        let dim = shape[axis];
        let mut lens: Vec<usize> = std::iter::repeat_n(block_len, dim / block_len).collect();
        if !dim.is_multiple_of(block_len) || dim == 0 {
            lens.push(dim % block_len);
        }
        let chunks = shape.iter().enumerate().map(|(i, &d)| if i == axis { lens.clone() } else { vec![d] }).collect();
        Ok(StackInfo { chunks, dtype, axis })
    }

    /// The whole array's shape.
    pub fn shape(&self) -> Vec<usize> {
        self.chunks.iter().map(|c| c.iter().sum()).collect()
    }

    /// How many blocks there are.
    pub fn blocks(&self) -> usize {
        self.chunks[self.axis].len()
    }

    /// The shape of block `i`.
    pub fn block_shape(&self, i: usize) -> Vec<usize> {
        let mut shape = self.shape();
        shape[self.axis] = self.chunks[self.axis][i];
        shape
    }

    /// Decodes an `info` pickle with the restricted decoder (nothing in it is ever called).
    ///
    /// # Errors
    /// [`ErrorKind::Pickle`] for anything but a dict of plain values and a dtype (a
    /// hostile pickle names a global that is refused); [`ErrorKind::Stack`] when its
    /// entries are not a stack's (what is wrong is said).
    pub fn from_pickle(bytes: &[u8]) -> Result<StackInfo> {
        let entries = decode_dict(bytes, 0, Some(bytes.len() as u64), crate::object::pickle::Settings::default())?;
        let bad = |what: String| Error::stack(format!("not a Dask stack's info: {what}"));
        let get = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let (Some(chunks), Some(dtype), Some(axis)) = (get("chunks"), get("dtype"), get("axis")) else {
            return Err(bad("it needs the keys 'chunks', 'dtype' and 'axis'".into()));
        };
        let Item::Dtype(dtype) = dtype else { return Err(bad("'dtype' is not a numpy.dtype".into())) };
        if dtype.has_object() {
            return Err(bad("stacks of object arrays are not supported".into()));
        }
        let ints = |o: &Object| -> Option<Vec<usize>> {
            match o {
                Object::Tuple(items) | Object::List(items) => items
                    .iter()
                    .map(|i| match i {
                        Object::Int(n) => usize::try_from(*n).ok(),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            }
        };
        let chunks: Vec<Vec<usize>> = match chunks {
            Item::Object(Object::Tuple(axes) | Object::List(axes)) => axes.iter().map(ints).collect(),
            _ => None,
        }
        .ok_or_else(|| bad("'chunks' is not a tuple of tuples of lengths".into()))?;
        if chunks.is_empty() || chunks.len() > MAX_DIMS {
            return Err(bad(format!("'chunks' has {} axes (1 to {MAX_DIMS})", chunks.len())));
        }
        let Item::Object(Object::Int(axis)) = axis else { return Err(bad("'axis' is not an int".into())) };
        let n = chunks.len() as i64;
        if !(-n..n).contains(axis) {
            return Err(bad(format!("axis {axis} of {n} axes")));
        }
        let axis = axis.rem_euclid(n) as usize;
        for (i, c) in chunks.iter().enumerate() {
            if i != axis && c.len() != 1 {
                return Err(bad(format!(
                    "axis {i} has {} chunks: Dask reads one block per chunk of the stacking axis {axis}, \
                     whole on the others",
                    c.len()
                )));
            }
            c.iter()
                .try_fold(0usize, |a, &b| a.checked_add(b))
                .ok_or_else(|| bad(format!("the chunks of axis {i} overflow")))?;
        }
        crate::header::element_count(&chunks.iter().map(|c| c.iter().sum()).collect::<Vec<usize>>())?;
        Ok(StackInfo { chunks, dtype: dtype.clone(), axis })
    }

    /// The `info` pickle Dask writes for this stack (`pickle.dump` of its dict, protocol 4).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for a length beyond Python's `int` range of the encoder.
    pub fn to_pickle(&self) -> Result<Vec<u8>> {
        let tuple = |c: &[usize]| Object::Tuple(c.iter().map(|&n| Object::Int(n as i64)).collect());
        let chunks = Object::Tuple(self.chunks.iter().map(|c| tuple(c)).collect());
        encode_dict(&[
            ("chunks", Item::Object(chunks)),
            ("dtype", Item::Dtype(self.dtype.clone())),
            ("axis", Item::Object(Object::Int(self.axis as i64))),
        ])
    }
}

/// Whether blocks of dtype `block` hold values of the stack's dtype `stack`: the same, or
/// the same but for byte order (Dask on a cluster writes some blocks of a big-endian
/// array in native order under an `info` that says big-endian; `np.load` reads each as
/// it is, and so do we, converting).
fn same_values(block: &DType, stack: &DType) -> bool {
    block == stack || block.with_byte_order(ByteOrder::Little) == stack.with_byte_order(ByteOrder::Little)
}

/// Whether an array of `shape` has the same bytes in C and Fortran order (at most one
/// axis longer than 1).
fn either_order(shape: &[usize]) -> bool {
    shape.iter().filter(|&&d| d > 1).count() <= 1
}

/// The run of bytes an array's data is, seen as C order: (outer, rows, inner bytes) around
/// `axis`, where a Fortran-order array is the C-order array of the reversed shape.
fn runs(shape: &[usize], fortran: bool, axis: usize, itemsize: usize) -> (usize, usize, usize) {
    let (shape, axis): (Vec<usize>, usize) =
        if fortran { (shape.iter().rev().copied().collect(), shape.len() - 1 - axis) } else { (shape.to_vec(), axis) };
    let outer = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product::<usize>() * itemsize;
    (outer, shape[axis], inner)
}

/// A block of a stack on disk.
#[derive(Debug, Clone)]
struct Block {
    path: PathBuf,
    header: Header,
    data_offset: u64,
}

/// A Dask npy stack opened for reading: its info (from `info` or the blocks' headers) and
/// every block's header, checked.
#[derive(Debug, Clone)]
pub struct Stack {
    dir: PathBuf,
    info: StackInfo,
    has_info: bool,
    blocks: Vec<Block>,
    fortran: bool,
}

impl Stack {
    /// Opens the stack in `dir`: its `info` if there is one, else the blocks found.
    ///
    /// # Errors
    /// [`ErrorKind::Pickle`] for an `info` the restricted decoder refuses;
    /// [`ErrorKind::Stack`] for a block whose dtype or shape is not what the info says, a
    /// missing block, or (without `info`) blocks that do not line up on one axis; I/O
    /// and header errors naming the file. [`ErrorKind::Usage`] for an `axis` the
    /// stack's `info` contradicts.
    pub fn from_path(dir: impl AsRef<Path>) -> Result<Stack> {
        Stack::from_path_with(dir, &StackOptions::new())
    }

    /// Opens the stack in `dir` along [`StackOptions::axis`], if set: for a stack without
    /// `info` whose blocks could stack on several axes (all the same shape); with `info`,
    /// it must say that axis. [`StackOptions::block_len`] is not used.
    ///
    /// # Errors
    /// As [`Stack::from_path`].
    pub fn from_path_with(dir: impl AsRef<Path>, options: &StackOptions) -> Result<Stack> {
        Stack::open_dir(dir.as_ref(), options.axis_set())
    }

    fn open_dir(dir: &Path, axis: Option<usize>) -> Result<Stack> {
        let info_path = dir.join(INFO);
        let info = match crate::file::open_file(&info_path) {
            Ok(file) => {
                let mut bytes = Vec::new();
                file.take(MAX_INFO_LEN + 1).read_to_end(&mut bytes).map_err(|e| Error::from(e).reading(&info_path))?;
                if bytes.len() as u64 > MAX_INFO_LEN {
                    return Err(Error::stack(format!("the info file is over {MAX_INFO_LEN} bytes")).reading(&info_path));
                }
                let info = StackInfo::from_pickle(&bytes).map_err(|e| e.reading(&info_path))?;
                if axis.is_some_and(|a| a != info.axis) {
                    let reason = format!("the stack's info says axis {}, not {}", info.axis, axis.unwrap_or(0));
                    return Err(Error::usage(reason).reading(&info_path));
                }
                Some(info)
            }
            Err(e) if matches!(e.kind(), ErrorKind::Io(io) if io.kind() == io::ErrorKind::NotFound) => None,
            Err(e) => return Err(e),
        };
        let has_info = info.is_some();
        let (info, blocks) = match info {
            Some(info) => {
                let blocks = (0..info.blocks()).map(|i| block(dir, i)).collect::<Result<Vec<_>>>()?;
                (info, blocks)
            }
            None => infer(dir, axis)?,
        };
        for (i, b) in blocks.iter().enumerate() {
            let want = info.block_shape(i);
            let reason = if !same_values(&b.header.dtype, &info.dtype) {
                format!("its dtype is {}, where the stack's is {}", b.header.dtype.descr(), info.dtype.descr())
            } else if b.header.shape != want {
                format!("its shape is {}, where the stack needs {}", shape_repr(&b.header.shape), shape_repr(&want))
            } else {
                continue;
            };
            return Err(Error::stack(reason).reading(&b.path));
        }
        // The joined array's order: Fortran when every block that has an order has it.
        let ordered: Vec<bool> =
            blocks.iter().filter(|b| !either_order(&b.header.shape)).map(|b| b.header.fortran_order).collect();
        let fortran = !ordered.is_empty() && ordered.iter().all(|&f| f);
        Ok(Stack { dir: dir.to_path_buf(), info, has_info, blocks, fortran })
    }

    /// What the stack holds: chunks, dtype and axis.
    pub fn info(&self) -> &StackInfo {
        &self.info
    }

    /// Whether the directory has an `info` file (else the info was read from the blocks).
    pub fn has_info(&self) -> bool {
        self.has_info
    }

    /// The element type.
    pub fn dtype(&self) -> &DType {
        &self.info.dtype
    }

    /// The whole array's shape.
    pub fn shape(&self) -> Vec<usize> {
        self.info.shape()
    }

    /// The stacking axis.
    pub fn axis(&self) -> usize {
        self.info.axis
    }

    /// The number of blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True for a stack of no blocks.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The path of block `i` (`<dir>/<i>.npy`).
    pub fn block_path(&self, i: usize) -> &Path {
        &self.blocks[i].path
    }

    /// The header of block `i`.
    pub fn block_header(&self, i: usize) -> &Header {
        &self.blocks[i].header
    }

    /// The header of the whole array (Fortran order when every block is).
    pub fn header(&self) -> Header {
        Header { dtype: self.info.dtype.clone(), fortran_order: self.fortran, shape: self.shape() }
    }

    /// Reads block `i` as any [`ReadNpy`] type (`Array<T>`, [`DynArray`] as it is stored,
    /// ...), as `V::read_npy` reads the block's file.
    ///
    /// # Errors
    /// As [`ReadNpy::read_npy`] of the block's file.
    pub fn read_block<V: ReadNpy>(&self, i: usize) -> Result<V> {
        V::read_npy(&self.blocks[i].path)
    }

    /// Reads the whole array as any [`ReadNpy`] type: `Array<T>` (converted as a `.npy`
    /// read converts), [`DynArray`] (as it is stored), ...
    ///
    /// # Errors
    /// As [`Stack::read_block`], naming the block a problem is in.
    pub fn read<V: ReadNpy>(&self) -> Result<V> {
        NpyReader::from_reader(self.reader()?)?.read::<V>().map_err(|e| self.located(e))
    }

    /// The whole array as the bytes of one `.npy` file ([`Stack::header`], then the data
    /// streamed from the blocks). Blocks that follow one another in the data (along the
    /// first axis of a C-order array) are opened one after the other; otherwise every row
    /// takes a piece of every block: up to 64 blocks are all open at once (a file each),
    /// and more are read a band of rows at a time (about 4 MiB, at least one row), each
    /// block's file opened for its piece of the band and closed again, so that a stack of
    /// thousands of blocks side by side needs no more than a few open files.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] opening a block (naming it).
    pub fn reader(&self) -> Result<StackReader> {
        let (_, head) = self.header().encode(None)?;
        let itemsize = self.info.dtype.itemsize();
        let (outer, _, inner) = runs(&self.shape(), self.fortran, self.info.axis, itemsize);
        let segments: Vec<u64> = self.blocks.iter().map(|b| self.segment(b, inner)).collect();
        // No data: no rows to walk (a shape like (10**9, 0) has many, all empty).
        let outer = if segments.iter().all(|&s| s == 0) { 0 } else { outer };
        let mut reader = StackReader {
            head: io::Cursor::new(head),
            dtype: self.info.dtype.clone(),
            blocks: self.blocks.clone(),
            fortran: self.fortran,
            segments,
            outer,
            row: 0,
            at: 0,
            left: 0,
            sources: Vec::new(),
            band: None,
        };
        if outer > 1 && reader.blocks.len() > OPEN_BLOCKS {
            // Too many to hold open: rows are assembled a band at a time.
            let row_bytes: u64 = reader.segments.iter().sum();
            let rows = (BAND_BYTES as u64 / row_bytes.max(1)).max(1);
            let rows = usize::try_from(rows).unwrap_or(usize::MAX);
            reader.sources = (0..reader.blocks.len()).map(|_| None).collect();
            reader.band = Some(Band { data: io::Cursor::new(Vec::new()), rows });
        } else if outer > 1 {
            // Every row takes a piece of every block: all are open at once.
            reader.sources = (0..reader.blocks.len()).map(|i| reader.source(i, 0).map(Some)).collect::<Result<_>>()?;
        } else {
            reader.sources = (0..reader.blocks.len()).map(|_| None).collect();
        }
        if let Some(&first) = reader.segments.first() {
            reader.left = first;
        }
        Ok(reader)
    }

    /// Bytes of block `b` in one row of the whole array.
    fn segment(&self, b: &Block, inner: usize) -> u64 {
        (b.header.shape[self.info.axis] * inner) as u64
    }

    /// Writes the whole array into one `.npy` file, atomically and streamed: `progress` is
    /// called with the data bytes written so far. Returns its header.
    ///
    /// # Errors
    /// As [`Stack::reader`], reading blocks (naming them) and writing `output` (naming
    /// it; it is then untouched and no temporary file is left).
    pub fn join(&self, output: impl AsRef<Path>, progress: &mut dyn FnMut(u64)) -> Result<Header> {
        let output = output.as_ref();
        let header = self.header();
        let mut write = || -> Result<()> {
            let mut reader = self.reader()?;
            let mut out = AtomicFile::create(output)?;
            let mut buf = vec![0u8; 1 << 20];
            let head_len = reader.head.get_ref().len() as u64;
            let mut done = 0u64;
            loop {
                let n = reader.read(&mut buf).map_err(|e| self.located(e.into()))?;
                if n == 0 {
                    break;
                }
                out.write_all(&buf[..n])?;
                done += n as u64;
                progress(done.saturating_sub(head_len));
            }
            out.commit(true)
        };
        write().map_err(|e| e.writing(output))?;
        Ok(header)
    }

    /// An error from the joined stream, named for the stack's directory unless it names a
    /// block already.
    fn located(&self, e: Error) -> Error {
        if e.path().is_some() {
            e
        } else {
            e.reading(&self.dir)
        }
    }
}

/// The header of block `i` in `dir`.
fn block(dir: &Path, i: usize) -> Result<Block> {
    let path = dir.join(format!("{i}.npy"));
    // open_path refuses what is not a regular file (a FIFO would hang the open).
    let reader = NpyReader::from_path(&path).map_err(|e| match e.kind() {
        ErrorKind::Io(io) if io.kind() == io::ErrorKind::NotFound => {
            Error::stack(format!("block {i} of the stack is missing")).reading(&path)
        }
        _ => e.reading(&path),
    })?;
    let header = reader.header().clone();
    if header.dtype.has_object() || header.shape.is_empty() {
        let what = if header.shape.is_empty() { "a 0-d array" } else { "an object array" };
        return Err(Error::stack(format!("{what} cannot be a block of a stack")).reading(&path));
    }
    let data_offset = reader.data_offset() as u64;
    Ok(Block { path, header, data_offset })
}

/// The info of a stack without `info`: blocks `0.npy` to `n-1.npy`, and the one axis
/// their lengths differ on (or `axis`, or the first).
fn infer(dir: &Path, axis: Option<usize>) -> Result<(StackInfo, Vec<Block>)> {
    let entries = fs::read_dir(dir).map_err(|e| Error::from(e).reading(dir))?;
    let mut numbers = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::from(e).reading(dir))?;
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".npy")) else { continue };
        // Dask's names: "%d.npy", no sign, no leading zeros.
        if let Ok(i) = stem.parse::<usize>() {
            if i.to_string() == stem {
                numbers.push(i);
            }
        }
    }
    numbers.sort_unstable();
    if numbers.is_empty() {
        return Err(Error::stack("no info file and no blocks (0.npy, 1.npy, ...): not a Dask npy stack").reading(dir));
    }
    if let Some(missing) = numbers.iter().enumerate().find(|&(i, &n)| i != n).map(|(i, _)| i) {
        let reason = format!("no info file, and block {missing}.npy is missing before {}.npy", numbers[missing]);
        return Err(Error::stack(reason).reading(dir));
    }
    let blocks = numbers.iter().map(|&i| block(dir, i)).collect::<Result<Vec<_>>>()?;
    let first = &blocks[0].header;
    let n = first.shape.len();
    let mut differ: Vec<usize> = Vec::new();
    for b in &blocks {
        if b.header.shape.len() != n {
            let reason = format!("its shape {} has another number of axes than 0.npy's", shape_repr(&b.header.shape));
            return Err(Error::stack(reason).reading(&b.path));
        }
        for d in 0..n {
            if b.header.shape[d] != first.shape[d] && !differ.contains(&d) {
                differ.push(d);
            }
        }
    }
    let axis = match (axis, &differ[..]) {
        (Some(a), _) if a >= n => return Err(Error::usage(format!("axis {a} of blocks of {n} axes")).reading(dir)),
        (Some(a), []) => a,
        (Some(a), [d]) if *d == a => a,
        (None, []) => 0,
        (None, [d]) => *d,
        (_, _) => {
            let reason = format!(
                "no info file, and the blocks' lengths differ on axes {differ:?}: they do not stack on {}",
                axis.map_or("one axis".to_string(), |a| format!("axis {a}"))
            );
            return Err(Error::stack(reason).reading(dir));
        }
    };
    let mut chunks: Vec<Vec<usize>> = first.shape.iter().map(|&d| vec![d]).collect();
    chunks[axis] = blocks.iter().map(|b| b.header.shape[axis]).collect();
    if chunks[axis].iter().try_fold(0usize, |a, &b| a.checked_add(b)).is_none() {
        return Err(Error::stack("the blocks' lengths overflow").reading(dir));
    }
    Ok((StackInfo { chunks, dtype: first.dtype.clone(), axis }, blocks))
}

/// The bytes of a stack's whole array as one `.npy` file, from [`Stack::reader`]: blocks
/// are read as the rows need them, a block in the other order than the whole array's
/// rearranged first (in memory, a block at a time).
#[derive(Debug)]
pub struct StackReader {
    head: io::Cursor<Vec<u8>>,
    dtype: DType,
    blocks: Vec<Block>,
    fortran: bool,
    /// Bytes of each block in one row.
    segments: Vec<u64>,
    outer: usize,
    /// The row and block being read, and the bytes left of that block's segment.
    row: usize,
    at: usize,
    left: u64,
    sources: Vec<Option<BlockInput>>,
    /// With more than [`OPEN_BLOCKS`] blocks side by side: the band of rows being read.
    band: Option<Band>,
}

/// Bytes of a band of rows of a stack read [`OPEN_BLOCKS`] blocks or more at a time.
const BAND_BYTES: usize = 4 << 20;

/// Rows of the whole array assembled from every block, for a stack of too many blocks side
/// by side to keep them all open.
#[derive(Debug)]
struct Band {
    /// The band's bytes, read from the front.
    data: io::Cursor<Vec<u8>>,
    /// Rows per band.
    rows: usize,
}

/// A block's data in the whole array's order.
#[derive(Debug)]
enum BlockInput {
    File(BufReader<File>),
    Memory(io::Cursor<Vec<u8>>),
}

impl Read for BlockInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            BlockInput::File(f) => f.read(buf),
            BlockInput::Memory(m) => m.read(buf),
        }
    }
}

impl StackReader {
    /// Block `i`'s data, in the whole array's order and dtype, from its byte `skip` on.
    fn source(&self, i: usize, skip: u64) -> Result<BlockInput> {
        let b = &self.blocks[i];
        let located = |e: Error| e.reading(&b.path);
        let ordered = either_order(&b.header.shape) || b.header.fortran_order == self.fortran;
        if ordered && b.header.dtype == self.dtype {
            // Checked again: the file may have been swapped since the stack was opened.
            let mut file = crate::file::open_file(&b.path)?;
            file.seek(SeekFrom::Start(b.data_offset + skip)).map_err(|e| located(e.into()))?;
            return Ok(BlockInput::File(BufReader::with_capacity(1 << 16, file)));
        }
        // Rearranged or converted: in memory, this block only.
        let block = NpyReader::from_path(&b.path).and_then(|r| r.read_dyn()).map_err(located)?;
        let mut data = block.into_data();
        if b.header.dtype != self.dtype {
            let plan = Plan::new(&b.header.dtype, &self.dtype).map_err(located)?;
            let mut converted = vec![0u8; data.len()];
            plan.run(&data, &mut converted, 0).map_err(located)?;
            data = converted;
        }
        if !ordered {
            // Stored as the C-order array of `stored`; wanted with the axes reversed.
            let shape = &b.header.shape;
            let stored: Vec<usize> =
                if b.header.fortran_order { shape.iter().rev().copied().collect() } else { shape.clone() };
            data = reverse_axes(&data, &stored, self.dtype.itemsize());
        }
        let mut cursor = io::Cursor::new(data);
        cursor.set_position(skip);
        Ok(BlockInput::Memory(cursor))
    }

    /// Fills the band with the next rows, block by block: a block's file is opened, its
    /// rows of the band read, and closed again (a block held in memory stays held).
    fn fill_band(&mut self) -> Result<()> {
        let Some(band) = self.band.as_mut() else { return Ok(()) };
        let first = self.row;
        let rows = band.rows.min(self.outer - first);
        let row_bytes = usize::try_from(self.segments.iter().sum::<u64>()).unwrap_or(usize::MAX);
        let mut data = std::mem::take(band.data.get_mut());
        data.clear();
        data.resize(rows * row_bytes, 0);
        let mut column = 0;
        for i in 0..self.blocks.len() {
            let segment = self.segments[i] as usize;
            if segment == 0 {
                continue;
            }
            let mut source = match self.sources[i].take() {
                Some(source) => source,
                None => self.source(i, first as u64 * segment as u64)?,
            };
            for r in 0..rows {
                let at = r * row_bytes + column;
                if let Err(e) = source.read_exact(&mut data[at..at + segment]) {
                    let b = &self.blocks[i];
                    if e.kind() != io::ErrorKind::UnexpectedEof {
                        return Err(Error::from(e).reading(&b.path));
                    }
                    let needs = self.segments[i] * self.outer as u64;
                    let reason = format!("the block's data ends early: its header needs {needs} bytes");
                    return Err(Error::stack(reason).reading(&b.path));
                }
            }
            if matches!(source, BlockInput::Memory(_)) {
                self.sources[i] = Some(source);
            }
            column += segment;
        }
        self.row += rows;
        if let Some(band) = self.band.as_mut() {
            band.data = io::Cursor::new(data);
        }
        Ok(())
    }
}

impl Read for StackReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.head.read(buf)?;
        if n > 0 || buf.is_empty() {
            return Ok(n);
        }
        if self.band.is_some() {
            loop {
                let n = self.band.as_mut().map_or(Ok(0), |band| band.data.read(buf))?;
                if n > 0 || self.row >= self.outer {
                    return Ok(n);
                }
                self.fill_band().map_err(io::Error::from)?;
            }
        }
        loop {
            if self.row >= self.outer || self.blocks.is_empty() {
                return Ok(0);
            }
            if self.left > 0 {
                if self.sources[self.at].is_none() {
                    self.sources[self.at] = Some(self.source(self.at, 0).map_err(io::Error::other)?);
                }
                let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
                let Some(source) = self.sources[self.at].as_mut() else { return Ok(0) };
                let got = source.read(&mut buf[..want])?;
                if got == 0 {
                    let (path, needs) = (&self.blocks[self.at].path, self.segments[self.at] * self.outer as u64);
                    let reason = format!("the block's data ends early: its header needs {needs} bytes");
                    return Err(io::Error::other(Error::stack(reason).reading(path)));
                }
                self.left -= got as u64;
                return Ok(got);
            }
            // The next block's segment of this row, or the next row.
            if self.outer == 1 {
                // Read once, in order: a finished block is closed.
                self.sources[self.at] = None;
            }
            self.at += 1;
            if self.at == self.blocks.len() {
                self.at = 0;
                self.row += 1;
            }
            self.left = self.segments[self.at];
        }
    }
}

/// The C-order bytes of the array whose axes are those of the C-order array `data` of
/// `shape`, reversed (Fortran order of `shape` reversed, and back): `data` is the
/// Fortran-order storage of the reversed shape, walked in C order.
fn reverse_axes(data: &[u8], shape: &[usize], itemsize: usize) -> Vec<u8> {
    let reversed: Vec<usize> = shape.iter().rev().copied().collect();
    let storage = c_order(&reversed, true);
    let mut out = vec![0u8; data.len()];
    if itemsize > 0 {
        for (c, element) in out.chunks_exact_mut(itemsize).enumerate() {
            let s = storage(c) * itemsize;
            element.copy_from_slice(&data[s..s + itemsize]);
        }
    }
    out
}

/// What the hidden directory of a stack being written is named after: `.{target}` +
/// this + six random letters and digits, beside the target (see [`crate::pending`]).
const PENDING_INFIX: &str = ".npy-stack.";

/// A directory being written: a hidden sibling of the target, locked while it is
/// written, renamed into place when whole (removed if dropped before; if the process is
/// killed, by the next stack written in the same parent).
#[derive(Debug)]
struct NewDir {
    tmp: PendingDir,
    target: PathBuf,
}

impl NewDir {
    fn create(target: &Path) -> Result<NewDir> {
        match fs::read_dir(target) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(Error::stack(
                        "the directory is not empty: a stack is written into a new or empty directory",
                    )
                    .writing(target));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::from(e).writing(target)),
        }
        let tmp = PendingDir::create(target, PENDING_INFIX)?;
        Ok(NewDir { tmp, target: target.to_path_buf() })
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// Writes `info`, syncs the directory and renames it into place.
    fn commit(self, info: &StackInfo) -> Result<()> {
        let located = |e: Error| e.writing(&self.target);
        let mut file = File::create(self.path(INFO)).map_err(|e| located(e.into()))?;
        file.write_all(&info.to_pickle()?).map_err(|e| located(e.into()))?;
        file.sync_all().map_err(|e| located(e.into()))?;
        File::open(self.tmp.path()).and_then(|d| d.sync_all()).map_err(|e| located(e.into()))?;
        let target = self.target;
        self.tmp.rename_to(&target)?;
        File::open(parent_dir(&target)).and_then(|d| d.sync_all()).map_err(|e| Error::from(e).writing(&target))
    }
}

/// Splits the `.npy` file `input` into a stack in `dir` with default [`StackOptions`]
/// (blocks of about 128 MiB along the first axis), streamed: `progress` is called with the
/// data bytes copied so far. Returns the info.
///
/// # Errors
/// As [`split_with`].
pub fn split(input: impl AsRef<Path>, dir: impl AsRef<Path>, progress: &mut dyn FnMut(u64)) -> Result<StackInfo> {
    split_with(input, dir, progress, &StackOptions::new())
}

/// As [`split`], in blocks of [`StackOptions::block_len`] along [`StackOptions::axis`]
/// (blocks along an inner axis are filled side by side, at most 64 open at once, a pass
/// over the input for each 64).
///
/// # Errors
/// [`ErrorKind::Usage`] for a 0-d array, an axis out of range or a zero block length;
/// [`ErrorKind::Stack`] for an object array or a `dir` that is not empty; errors reading
/// `input` name it, errors writing name `dir`; nothing is left then.
pub fn split_with(
    input: impl AsRef<Path>,
    dir: impl AsRef<Path>,
    progress: &mut dyn FnMut(u64),
    options: &StackOptions,
) -> Result<StackInfo> {
    let input = input.as_ref();
    let reader = NpyReader::from_path(input)?;
    let (header, data_offset) = (reader.header().clone(), reader.data_offset() as u64);
    let file = reader.into_inner().into_inner();
    split_source(file, &header, data_offset, dir.as_ref(), options, progress).map_err(|e| {
        if e.path().is_some() {
            e
        } else {
            e.reading(input)
        }
    })
}

/// Writes `array` (an [`Array`](crate::Array), a [`DynArray`], a slice or `Vec` of records)
/// as a stack in `dir` with default [`StackOptions`] (blocks of about 128 MiB along the
/// first axis): its `.npy` image is made in memory and split as [`split`] splits a file.
/// Returns the info.
///
/// # Errors
/// As [`split_with`].
pub fn write_stack<A: WriteNpy + ?Sized>(array: &A, dir: impl AsRef<Path>) -> Result<StackInfo> {
    write_stack_with(array, dir, &StackOptions::new())
}

/// As [`write_stack`], in blocks of [`StackOptions::block_len`] along
/// [`StackOptions::axis`].
///
/// # Errors
/// As [`split_with`].
pub fn write_stack_with<A: WriteNpy + ?Sized>(
    array: &A,
    dir: impl AsRef<Path>,
    options: &StackOptions,
) -> Result<StackInfo> {
    let image = array.write_npy_to(Vec::new())?;
    let reader = NpyReader::from_reader(&image[..])?;
    let (header, data_offset) = (reader.header().clone(), reader.data_offset() as u64);
    split_source(io::Cursor::new(&image[..]), &header, data_offset, dir.as_ref(), options, &mut |_| {})
}

/// The one splitting engine: the data of `header` at `data_offset` in `src` into a new
/// stack directory `dir`.
fn split_source<R: Read + Seek>(
    src: R,
    header: &Header,
    data_offset: u64,
    dir: &Path,
    options: &StackOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<StackInfo> {
    if header.dtype.has_object() {
        return Err(Error::stack("object arrays cannot be split into a stack"));
    }
    let axis = options.axis_set().unwrap_or(0);
    let block_len = options.block_len_for(&header.dtype, &header.shape, axis);
    let info = StackInfo::split(header.dtype.clone(), &header.shape, axis, block_len)?;
    let new = NewDir::create(dir)?;
    let (outer, _, inner) = runs(&header.shape, header.fortran_order, axis, header.dtype.itemsize());
    // No data: no rows to walk (a shape like (10**9, 0) has many, all empty).
    let outer = if header.data_len()? == 0 { 0 } else { outer };
    let lens = &info.chunks[axis];
    let group = if outer > 1 { OPEN_BLOCKS } else { 1 };
    let writing = |e: io::Error| Error::from(e).writing(dir);
    let mut src = BufReader::with_capacity(1 << 20, src);
    let mut done = 0u64;
    let mut first = 0;
    while first < lens.len() {
        let last = (first + group).min(lens.len());
        src.seek(SeekFrom::Start(data_offset))?;
        let mut outs = Vec::with_capacity(last - first);
        for (j, &len) in lens.iter().enumerate().take(last).skip(first) {
            let mut shape = header.shape.clone();
            shape[axis] = len;
            let fortran = header.fortran_order && !either_order(&shape);
            let (_, head) = Header { dtype: header.dtype.clone(), fortran_order: fortran, shape }.encode(None)?;
            let mut out =
                BufWriter::with_capacity(1 << 20, File::create(new.path(&format!("{j}.npy"))).map_err(writing)?);
            out.write_all(&head).map_err(writing)?;
            outs.push(out);
        }
        for _ in 0..outer {
            for (j, &len) in lens.iter().enumerate() {
                let n = (len * inner) as u64;
                if !(first..last).contains(&j) {
                    src.seek_relative(n as i64)?;
                    continue;
                }
                let copied = io::copy(&mut (&mut src).take(n), &mut outs[j - first]).map_err(writing)?;
                if copied < n {
                    let expected = header.data_len()? as u64;
                    return Err(ErrorKind::Truncated { expected, found: done + copied }.into());
                }
                done += n;
                progress(done);
            }
        }
        for out in outs {
            let file = out.into_inner().map_err(|e| writing(e.into_error()))?;
            file.sync_all().map_err(writing)?;
        }
        first = last;
    }
    new.commit(&info)?;
    Ok(info)
}

/// Writes a stack along the first axis from rows as they come: blocks of `block_rows`
/// rows of `T` (each row `row_shape` elements), each written when full; the last block and
/// `info` on [`StackWriter::finish`]. The directory appears then, whole; dropped before, it
/// leaves nothing.
///
/// # Examples
/// ```
/// use npy_core::stack::{Stack, StackWriter};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("traces");
/// // Rows of 3 samples, blocks of 4 rows.
/// let mut w = StackWriter::<i16>::create(&path, &[3], 4)?;
/// for batch in (0..30i16).collect::<Vec<_>>().chunks(9) {
///     w.extend(batch)?;
/// }
/// let info = w.finish()?;
/// assert_eq!(info.chunks, [vec![4, 4, 2], vec![3]]);
/// assert_eq!(Stack::from_path(&path)?.read::<npy_core::Array<i16>>()?.into_vec(), (0..30).collect::<Vec<_>>());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StackWriter<T> {
    dir: NewDir,
    row_shape: Vec<usize>,
    row_len: usize,
    block_rows: usize,
    plan: Plan,
    /// The block being filled: its file, header length and rows so far.
    open: Option<(BufWriter<File>, usize, usize)>,
    lens: Vec<usize>,
    _marker: PhantomData<fn(&T)>,
}

impl<T: NpyRecord> StackWriter<T> {
    /// Starts a stack in `dir` (new or empty) of rows of `row_shape` (`&[]` for scalars),
    /// `block_rows` rows a block.
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] for `block_rows` 0; [`ErrorKind::Stack`] for a `dir` that
    /// is not empty; I/O errors naming `dir`.
    pub fn create(dir: impl AsRef<Path>, row_shape: &[usize], block_rows: usize) -> Result<Self> {
        let dir = dir.as_ref();
        if block_rows == 0 {
            return Err(Error::usage("blocks of 0 rows: the block length must be at least 1").writing(dir));
        }
        if row_shape.len() >= MAX_DIMS {
            return Err(
                Error::usage(format!("rows of {} axes (at most {})", row_shape.len(), MAX_DIMS - 1)).writing(dir)
            );
        }
        let row_len = crate::header::element_count(row_shape).map_err(|e| e.writing(dir))?;
        let plan = element_plan::<T>()?;
        Ok(StackWriter {
            dir: NewDir::create(dir)?,
            row_shape: row_shape.to_vec(),
            row_len,
            block_rows,
            plan,
            open: None,
            lens: Vec::new(),
            _marker: PhantomData,
        })
    }

    fn header(&self, rows: usize) -> Header {
        let mut shape = vec![rows];
        shape.extend_from_slice(&self.row_shape);
        Header::new(T::dtype(), shape)
    }

    /// Appends whole rows (`row_shape` elements each, in C order).
    ///
    /// # Errors
    /// [`ErrorKind::Usage`] when `rows` is not a whole number of rows; I/O errors naming
    /// the directory.
    pub fn extend(&mut self, mut rows: &[T]) -> Result<()> {
        let target = self.dir.target.clone();
        if self.row_len == 0 {
            if !rows.is_empty() {
                return Err(Error::usage("rows of 0 elements take no values").writing(&target));
            }
        } else if !rows.len().is_multiple_of(self.row_len) {
            let reason = format!("{} values are not whole rows of {} values", rows.len(), self.row_len);
            return Err(Error::usage(reason).writing(&target));
        }
        let writing = |e: Error| e.writing(&target);
        while !rows.is_empty() {
            if self.open.is_none() {
                let path = self.dir.path(&format!("{}.npy", self.lens.len()));
                let (_, head) = self.header(self.block_rows).encode(None)?;
                let mut out = BufWriter::with_capacity(1 << 20, File::create(path).map_err(|e| writing(e.into()))?);
                out.write_all(&head).map_err(|e| writing(e.into()))?;
                self.open = Some((out, head.len(), 0));
            }
            let Some((out, _, filled)) = self.open.as_mut() else { continue };
            let take = ((self.block_rows - *filled) * self.row_len).min(rows.len());
            write_with_plan(out, 0, &self.plan, &rows[..take]).map_err(writing)?;
            *filled += take / self.row_len;
            rows = &rows[take..];
            if *filled == self.block_rows {
                self.close_block()?;
            }
        }
        Ok(())
    }

    /// Ends the open block: its header says its rows (rewritten in place for a short last
    /// block), synced.
    fn close_block(&mut self) -> Result<()> {
        let Some((out, head_len, rows)) = self.open.take() else { return Ok(()) };
        let writing = |e: io::Error| Error::from(e).writing(&self.dir.target);
        let mut file = out.into_inner().map_err(|e| writing(e.into_error()))?;
        if rows != self.block_rows {
            let header = self.header(rows);
            let (version, _) = header.encode(None)?;
            let head = header.in_place(version, head_len).ok_or_else(|| Error::usage("the block's header grew"))?;
            file.seek(SeekFrom::Start(0)).map_err(writing)?;
            file.write_all(&head).map_err(writing)?;
        }
        file.sync_all().map_err(writing)?;
        self.lens.push(rows);
        Ok(())
    }

    /// Writes the last block and `info`, and moves the directory into place. A stack of
    /// no rows is one empty block, as Dask writes it.
    ///
    /// # Errors
    /// I/O errors naming the directory; nothing is left then.
    pub fn finish(mut self) -> Result<StackInfo> {
        if self.lens.is_empty() && self.open.is_none() {
            let path = self.dir.path("0.npy");
            let (_, head) = self.header(0).encode(None)?;
            fs::write(&path, head).map_err(|e| Error::from(e).writing(&self.dir.target))?;
            self.lens.push(0);
        }
        self.close_block()?;
        let mut chunks = vec![self.lens.clone()];
        chunks.extend(self.row_shape.iter().map(|&d| vec![d]));
        let info = StackInfo { chunks, dtype: T::dtype(), axis: 0 };
        self.dir.commit(&info)?;
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every index of `shape` in C order.
    fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
        let mut out = vec![vec![]];
        for &d in shape {
            out = out.into_iter().flat_map(|i| (0..d).map(move |k| [i.clone(), vec![k]].concat())).collect();
        }
        out
    }

    fn array(shape: &[usize], fortran: bool) -> Array<u32> {
        let n = shape.iter().product::<usize>();
        let data: Vec<u32> = (0..n as u32).map(|v| v * 7 + 1).collect();
        if fortran {
            Array::from_shape_vec_fortran(shape.to_vec(), data).unwrap()
        } else {
            Array::from_shape_vec(shape.to_vec(), data).unwrap()
        }
    }

    fn same(a: &Array<u32>, b: &Array<u32>) {
        assert_eq!(a.shape(), b.shape());
        for i in indices(a.shape()) {
            assert_eq!(a.get(&i), b.get(&i), "at {i:?}");
        }
    }

    fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name().to_string_lossy().into_owned(), fs::read(e.path()).unwrap())
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only; its io::copy between files is a copy_file_range Miri lacks")]
    fn every_axis_order_and_block_length_round_trips() {
        let tmp = tempfile::tempdir().unwrap();
        for shape in [vec![7], vec![5, 4], vec![3, 4, 5], vec![2, 0, 3]] {
            for fortran in [false, true] {
                let a = array(&shape, fortran);
                let file = tmp.path().join("a.npy");
                a.write_npy(&file).unwrap();
                for axis in 0..shape.len() {
                    for block_len in [1, 2, 3, shape[axis].max(1), shape[axis] + 1] {
                        let case = format!("{shape:?} fortran={fortran} axis={axis} blocks of {block_len}");
                        let dir = tmp.path().join("s");
                        let info =
                            write_stack_with(&a, &dir, StackOptions::new().axis(axis).block_len(block_len)).unwrap();
                        assert_eq!(info.shape(), shape, "{case}");
                        assert_eq!(info.chunks[axis].iter().filter(|&&l| l > block_len).count(), 0, "{case}");
                        let stack = Stack::from_path(&dir).unwrap();
                        assert!(stack.has_info());
                        assert_eq!(stack.info(), &info);
                        same(&stack.read::<Array<u32>>().unwrap(), &a);
                        // Each block is its slice of the array.
                        let mut start = 0;
                        for (i, &len) in info.chunks[axis].iter().enumerate() {
                            let block = stack.read_block::<Array<u32>>(i).unwrap();
                            for idx in indices(block.shape()) {
                                let mut at = idx.clone();
                                at[axis] += start;
                                assert_eq!(block.get(&idx), a.get(&at), "{case}: block {i} at {idx:?}");
                            }
                            start += len;
                        }
                        // Joined into a file; split from the file gives the same directory.
                        let joined = tmp.path().join("j.npy");
                        let header = stack.join(&joined, &mut |_| {}).unwrap();
                        assert_eq!(header.shape, shape);
                        same(&Array::<u32>::read_npy(&joined).unwrap(), &a);
                        let dir2 = tmp.path().join("s2");
                        assert_eq!(
                            split_with(&file, &dir2, &mut |_| {}, StackOptions::new().axis(axis).block_len(block_len))
                                .unwrap(),
                            info
                        );
                        assert_eq!(files(&dir), files(&dir2), "{case}");
                        // Without info: the blocks' headers say the same (the axis given
                        // where every block has one shape).
                        fs::remove_file(dir.join(INFO)).unwrap();
                        let alike = info.chunks[axis].iter().all(|&l| l == info.chunks[axis][0]);
                        let bare = if alike {
                            Stack::from_path_with(&dir, StackOptions::new().axis(axis))
                        } else {
                            Stack::from_path(&dir)
                        }
                        .unwrap();
                        assert!(!bare.has_info());
                        assert_eq!(bare.info(), &info, "{case}");
                        same(&bare.read::<Array<u32>>().unwrap(), &a);
                        fs::remove_dir_all(&dir).unwrap();
                        fs::remove_dir_all(&dir2).unwrap();
                    }
                }
            }
        }
        // Nothing else was left beside them.
        let mut left: Vec<_> = fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        left.sort();
        assert_eq!(left, ["a.npy", "j.npy"]);
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn many_blocks_side_by_side_are_read_a_band_at_a_time() {
        // 70 blocks along axis 1 (more than OPEN_BLOCKS) of rows of 560 bytes: two bands.
        let tmp = tempfile::tempdir().unwrap();
        let a = array(&[10_000, 140], false);
        let dir = tmp.path().join("s");
        write_stack_with(&a, &dir, StackOptions::new().axis(1).block_len(2)).unwrap();
        let stack = Stack::from_path(&dir).unwrap();
        assert!(stack.len() > OPEN_BLOCKS && 10_000 * 560 > BAND_BYTES);
        assert_eq!(stack.read::<Array<u32>>().unwrap().as_slice(), a.as_slice());
        let joined = tmp.path().join("j.npy");
        stack.join(&joined, &mut |_| {}).unwrap();
        assert_eq!(Array::<u32>::read_npy(&joined).unwrap().as_slice(), a.as_slice());
        // A block in Fortran order is rearranged in memory once, and read band by band.
        let block = stack.read_block::<Array<u32>>(5).unwrap();
        let (rows, cols) = (block.shape()[0], block.shape()[1]);
        let f: Vec<u32> =
            (0..cols).flat_map(|c| (0..rows).map(move |r| (r, c))).map(|(r, c)| *block.get(&[r, c]).unwrap()).collect();
        Array::from_shape_vec_fortran(vec![rows, cols], f).unwrap().write_npy(dir.join("5.npy")).unwrap();
        let stack = Stack::from_path(&dir).unwrap();
        assert!(stack.block_header(5).fortran_order);
        assert_eq!(stack.read::<Array<u32>>().unwrap().as_slice(), a.as_slice());
        // A block cut short after the stack was opened is named, in the second band.
        let nine = dir.join("9.npy");
        let len = fs::metadata(&nine).unwrap().len();
        fs::OpenOptions::new().write(true).open(&nine).unwrap().set_len(len - 8).unwrap();
        let e = stack.join(tmp.path().join("k.npy"), &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("9.npy") && e.contains("the block's data ends early"), "{e}");
        assert!(!tmp.path().join("k.npy").exists());
    }

    #[test]
    fn what_is_not_a_file_is_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        write_stack_with(&array(&[4], false), &dir, StackOptions::new().block_len(2)).unwrap();
        fs::remove_file(dir.join("1.npy")).unwrap();
        fs::create_dir(dir.join("1.npy")).unwrap();
        let e = Stack::from_path(&dir).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Io(io) if io.kind() == io::ErrorKind::IsADirectory), "{e}");
        assert_eq!(e.path(), Some(dir.join("1.npy").as_path()));
        assert!(e.to_string().ends_with("is a directory, not a file"), "{e}");
        fs::remove_file(dir.join(INFO)).unwrap();
        fs::create_dir(dir.join(INFO)).unwrap();
        let e = Stack::from_path(&dir).unwrap_err();
        assert_eq!(e.path(), Some(dir.join(INFO).as_path()), "{e}");
    }

    #[test]
    fn blocks_of_both_orders_join() {
        // Stacks whose blocks differ in order (as other writers may leave them): the
        // joined array is C order, a Fortran block rearranged.
        let tmp = tempfile::tempdir().unwrap();
        let a = array(&[4, 4], false);
        for axis in [0, 1] {
            let dir = tmp.path().join(format!("s{axis}"));
            write_stack_with(&a, &dir, StackOptions::new().axis(axis).block_len(2)).unwrap();
            let block = Stack::from_path(&dir).unwrap().read_block::<Array<u32>>(1).unwrap();
            // The same values, stored in Fortran order.
            let mut f = Vec::new();
            for c in 0..block.shape()[1] {
                for r in 0..block.shape()[0] {
                    f.push(*block.get(&[r, c]).unwrap());
                }
            }
            Array::from_shape_vec_fortran(block.shape().to_vec(), f).unwrap().write_npy(dir.join("1.npy")).unwrap();
            let stack = Stack::from_path(&dir).unwrap();
            assert!(stack.block_header(1).fortran_order && !stack.header().fortran_order);
            same(&stack.read::<Array<u32>>().unwrap(), &a);
        }
    }

    #[test]
    fn blocks_in_the_other_byte_order_are_converted() {
        // What Dask on a cluster leaves: `info` says '>u4', a block is '<u4'.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let a = array(&[3, 4], true);
        let big = Plan::new(&u32::dtype(), &u32::dtype().with_byte_order(ByteOrder::Big)).unwrap();
        let mut data = a.as_slice().iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>();
        big.run_in_place(&mut data, 0).unwrap();
        let header =
            Header { dtype: u32::dtype().with_byte_order(ByteOrder::Big), fortran_order: true, shape: vec![3, 4] };
        let image = DynArray::new(header, data).unwrap();
        write_stack_with(&image, &dir, StackOptions::new().axis(1).block_len(3)).unwrap();
        let native = Stack::from_path(&dir).unwrap().read_block::<Array<u32>>(0).unwrap();
        native.write_npy(dir.join("0.npy")).unwrap();
        let stack = Stack::from_path(&dir).unwrap();
        assert_eq!(stack.block_header(0).dtype, u32::dtype());
        let back = stack.read::<DynArray>().unwrap();
        assert_eq!(back.dtype(), &u32::dtype().with_byte_order(ByteOrder::Big));
        same(&stack.read::<Array<u32>>().unwrap(), &a);
        // Another kind is refused.
        [1.0f32; 6].write_npy(dir.join("0.npy")).unwrap();
        assert!(Stack::from_path(&dir).unwrap_err().to_string().contains("its dtype is '<f4'"));
    }

    #[test]
    fn reversing_axes_moves_whole_elements() {
        // (2, 3) in C order, 2-byte elements, read as the (3, 2) array of reversed axes.
        let data: Vec<u8> = (0..12).collect();
        assert_eq!(reverse_axes(&data, &[2, 3], 2), [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]);
        // Elements of no bytes (an empty record): nothing to move, and no panic.
        assert!(reverse_axes(&[], &[2, 3], 0).is_empty());
    }

    #[test]
    fn stacks_that_do_not_hold_together_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        let a = array(&[6, 2], false);
        write_stack_with(&a, &dir, StackOptions::new().block_len(2)).unwrap();
        let err = |dir: &Path| Stack::from_path(dir).unwrap_err().to_string();
        // A block of another dtype, shape, or a missing one: the file is named.
        [1.0f32; 4].write_npy(dir.join("1.npy")).unwrap();
        let e = err(&dir);
        assert!(e.contains("1.npy") && e.contains("its dtype is '<f4', where the stack's is '<u4'"), "{e}");
        Array::from_shape_vec(vec![2, 1], vec![1u32, 2]).unwrap().write_npy(dir.join("1.npy")).unwrap();
        let e = err(&dir);
        assert!(e.contains("its shape is (2, 1), where the stack needs (2, 2)"), "{e}");
        fs::remove_file(dir.join("1.npy")).unwrap();
        let e = err(&dir);
        assert!(e.contains("block 1 of the stack is missing") && e.contains("1.npy"), "{e}");
        fs::remove_file(dir.join(INFO)).unwrap();
        let e = err(&dir);
        assert!(e.contains("block 1.npy is missing before 2.npy"), "{e}");
        // Without info, blocks that differ on two axes.
        let dir = tmp.path().join("t");
        fs::create_dir(&dir).unwrap();
        Array::from_shape_vec(vec![2, 2], vec![1u8; 4]).unwrap().write_npy(dir.join("0.npy")).unwrap();
        Array::from_shape_vec(vec![1, 3], vec![1u8; 3]).unwrap().write_npy(dir.join("1.npy")).unwrap();
        let e = err(&dir);
        assert!(e.contains("differ on axes [0, 1]"), "{e}");
        assert!(err(tmp.path()).contains("not a Dask npy stack"));
        // A truncated block: the open names it; cut after the open, the read does.
        let dir = tmp.path().join("u");
        write_stack_with(&a, &dir, StackOptions::new().block_len(3)).unwrap();
        let block = dir.join("1.npy");
        let len = fs::metadata(&block).unwrap().len();
        let opened = Stack::from_path(&dir).unwrap();
        fs::OpenOptions::new().write(true).open(&block).unwrap().set_len(len - 4).unwrap();
        let e = err(&dir);
        assert!(e.contains("1.npy") && e.contains("truncated"), "{e}");
        let e = opened.read::<Array<u32>>().unwrap_err().to_string();
        assert!(e.contains("1.npy") && e.contains("the block's data ends early"), "{e}");
        let out = tmp.path().join("out.npy");
        let e = opened.join(&out, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("1.npy") && e.contains("its header needs 24 bytes"), "{e}");
        assert!(!out.exists());
    }

    #[test]
    fn hostile_or_wrong_info_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s");
        write_stack_with(&array(&[4], false), &dir, StackOptions::new().block_len(2)).unwrap();
        let info = dir.join(INFO);
        // pickle.dumps({'chunks': ((2, 2),), 'dtype': os.system, 'axis': 0})
        fs::write(&info, b"\x80\x04}(\x8c\x06chunksK\x02K\x02\x86\x85\x8c\x05dtype\x8c\x05posix\x8c\x06system\x93\x8c\x04axisK\x00u.").unwrap();
        let e = Stack::from_path(&dir).unwrap_err().to_string();
        assert!(e.contains("global 'posix.system' is not allowed") && e.contains("info"), "{e}");
        let wrong = |chunks: Object, axis: i64| {
            let dtype = Item::Dtype(DType::Scalar(crate::dtype::Scalar::parse("<u4").unwrap()));
            let p = encode_dict(&[
                ("chunks", Item::Object(chunks)),
                ("dtype", dtype),
                ("axis", Item::Object(Object::Int(axis))),
            ])
            .unwrap();
            fs::write(&info, p).unwrap();
            Stack::from_path(&dir).unwrap_err().to_string()
        };
        let t = |v: Vec<i64>| Object::Tuple(v.into_iter().map(Object::Int).collect());
        assert!(wrong(Object::Tuple(vec![t(vec![2, 2])]), 1).contains("axis 1 of 1 axes"));
        assert!(wrong(Object::Tuple(vec![t(vec![2, -2])]), 0).contains("not a tuple of tuples of lengths"));
        assert!(wrong(Object::Tuple(vec![t(vec![4]), t(vec![1, 1])]), 0).contains("axis 1 has 2 chunks"));
        assert!(wrong(Object::Tuple(vec![t(vec![3, 1])]), 0).contains("where the stack needs (3,)"));
        // A negative axis is Python's.
        let dtype = Item::Dtype(DType::Scalar(crate::dtype::Scalar::parse("<u4").unwrap()));
        let p = encode_dict(&[
            ("chunks", Item::Object(Object::Tuple(vec![t(vec![2, 2])]))),
            ("dtype", dtype),
            ("axis", Item::Object(Object::Int(-1))),
        ])
        .unwrap();
        assert_eq!(StackInfo::from_pickle(&p).unwrap().axis, 0);
        fs::write(&info, &p).unwrap();
        let e = Stack::from_path_with(&dir, StackOptions::new().axis(1)).unwrap_err().to_string();
        assert!(e.contains("the stack's info says axis 0, not 1"), "{e}");
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only; its io::copy between files is a copy_file_range Miri lacks")]
    fn writes_that_fail_leave_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let a = array(&[5, 3], false);
        // Into a directory that is not empty.
        let full = tmp.path().join("full");
        fs::create_dir(&full).unwrap();
        fs::write(full.join("x"), b"x").unwrap();
        let e = write_stack_with(&a, &full, StackOptions::new().block_len(2)).unwrap_err().to_string();
        assert!(e.contains("not empty") && e.contains("full"), "{e}");
        // From a truncated file.
        let file = tmp.path().join("a.npy");
        a.write_npy(&file).unwrap();
        let len = fs::metadata(&file).unwrap().len();
        fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(len - 1).unwrap();
        let e = split_with(&file, tmp.path().join("s"), &mut |_| {}, StackOptions::new().axis(1).block_len(2))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a.npy"), "{e}");
        // Into an empty directory, it works (and keeps its name).
        let empty = tmp.path().join("empty");
        fs::create_dir(&empty).unwrap();
        write_stack_with(&a, &empty, StackOptions::new().block_len(2)).unwrap();
        fs::remove_dir_all(&empty).unwrap();
        // A writer dropped before `finish`.
        let mut w = StackWriter::<u32>::create(tmp.path().join("w"), &[3], 2).unwrap();
        w.extend(a.as_slice()).unwrap();
        drop(w);
        let mut left: Vec<_> = fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        left.sort();
        assert_eq!(left, ["a.npy", "full"]);
    }

    #[test]
    fn the_writer_takes_rows_as_they_come() {
        let tmp = tempfile::tempdir().unwrap();
        let a = array(&[7, 2, 2], false);
        for batch in [1, 3, 4, 8, 28] {
            let dir = tmp.path().join(format!("w{batch}"));
            let mut w = StackWriter::<u32>::create(&dir, &[2, 2], 3).unwrap();
            for piece in a.as_slice().chunks(batch * 4) {
                w.extend(piece).unwrap();
            }
            let info = w.finish().unwrap();
            assert_eq!(info.chunks, [vec![3, 3, 1], vec![2], vec![2]]);
            // The same directory as a split of the whole array.
            let whole = tmp.path().join(format!("s{batch}"));
            write_stack_with(&a, &whole, StackOptions::new().block_len(3)).unwrap();
            assert_eq!(files(&dir), files(&whole));
        }
        let dir = tmp.path().join("none");
        let info = StackWriter::<f64>::create(&dir, &[], 10).unwrap().finish().unwrap();
        assert_eq!(info.chunks, [vec![0]]);
        assert_eq!(Stack::from_path(&dir).unwrap().read::<Array<f64>>().unwrap().shape(), [0]);
        assert_eq!(files(&dir), {
            let whole = tmp.path().join("none2");
            write_stack_with(Vec::<f64>::new().as_slice(), &whole, StackOptions::new().block_len(10)).unwrap();
            files(&whole)
        });
        // Many rows of nothing: no row is walked, written or read.
        let empty = Array::<u8>::from_shape_vec(vec![1 << 40, 0], Vec::new()).unwrap();
        let dir = tmp.path().join("empty");
        let info = write_stack_with(&empty, &dir, StackOptions::new().axis(1).block_len(5)).unwrap();
        assert_eq!(info.chunks, [vec![1 << 40], vec![0]]);
        assert_eq!(Stack::from_path(&dir).unwrap().read::<Array<u8>>().unwrap().shape(), [1 << 40, 0]);
        let mut w = StackWriter::<u32>::create(tmp.path().join("bad"), &[3], 2).unwrap();
        assert!(w.extend(&[1, 2]).unwrap_err().to_string().contains("2 values are not whole rows of 3 values"));
        assert!(StackWriter::<u32>::create(tmp.path().join("bad2"), &[3], 0).is_err());
    }

    #[test]
    fn default_blocks_are_about_128_mib_along_the_first_axis() {
        let f8 = DType::Scalar(crate::dtype::Scalar::parse("<f8").unwrap());
        let options = StackOptions::new();
        // Rows of 8 MiB: 16 a block; rows over 128 MiB: one a block; empty rows: one block.
        assert_eq!(options.block_len_for(&f8, &[100, 1 << 20], 0), 16);
        assert_eq!(options.block_len_for(&f8, &[3, 1 << 25], 0), 1);
        assert_eq!(options.block_len_for(&f8, &[7, 0], 0), 7);
        assert_eq!(options.block_len_for(&f8, &[2, 1 << 20], 1), 8 << 20);
        assert_eq!(StackOptions::new().block_len(5).block_len_for(&f8, &[100, 1 << 20], 0), 5);
        let tmp = tempfile::tempdir().unwrap();
        let info = write_stack(&array(&[4, 3], false), tmp.path().join("s")).unwrap();
        assert_eq!((info.axis, info.chunks), (0, vec![vec![4], vec![3]]));
    }
}
