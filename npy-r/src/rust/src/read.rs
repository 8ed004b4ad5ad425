//! Reading: a `.npy` file or an `.npz` member into R values. The elements (all, or the
//! rows asked for) come from npy-core's reader in pieces and go through [`Decoder`]; the
//! values are then given R's shape: a vector, a matrix or array with NumPy's indices, or
//! a `data.frame` of a record array's leaves.

use std::io::Read;
use std::os::unix::fs::FileExt;

use extendr_api::prelude::*;
use npy_core::dtype::DType;
use npy_core::header::Header;
use npy_core::object::Object;
use npy_core::{npz, Array, DynArray, NpyReader, ReadNpy};

use crate::decode::{chosen_columns, Decoder, Int64};
use crate::error::{usage, Failure, Located};

/// What to read, as the R call asked.
pub struct Request {
    /// Rows (indices along axis 0, from 0), in the order wanted; all when `None`.
    pub rows: Option<Vec<usize>>,
    /// Fields of a record array (paths, or names of nested records); all when `None`.
    pub cols: Option<Vec<String>>,
    /// How 64-bit integers arrive.
    pub int64: Int64,
}

/// An R value with the warnings to give about it.
pub struct Value {
    pub value: Robj,
    pub warnings: Vec<String>,
}

/// Reads the `.npy` file at `path`.
pub fn npy_file(path: &str, request: &Request) -> Result<Value, Failure> {
    let reader = NpyReader::from_path(path).at(path)?;
    if reader.header().dtype.has_object() {
        let array = Array::<Object>::from_npy_reader(reader).at(path)?;
        return objects(array, request, path);
    }
    let header = reader.header().clone();
    r_shape(&header.shape).at(path)?;
    // The data must be there before R's vectors are allocated for it.
    let size = std::fs::metadata(path).map(|m| m.len()).at(path)?;
    present(reader.data_offset(), reader.data_len(), size, request).at(path)?;
    match request.rows.as_deref() {
        Some(rows) => {
            // Rows of a file are read where they are: only their bytes, by offset.
            let offset = reader.data_offset() as u64;
            let file = reader.into_inner();
            let fetch = |start: usize, len: usize, out: &mut Vec<u8>| -> Result<(), Failure> {
                let size = header.dtype.itemsize();
                let at = out.len();
                out.resize(at + len * size, 0);
                file.get_ref().read_exact_at(&mut out[at..], offset + (start * size) as u64).map_err(|e| {
                    Failure(format!(
                        "{path}: elements {start}..{} could not be read ({e}): is the file truncated?",
                        start + len
                    ))
                })
            };
            rows_of(&header, rows, request, path, fetch)
        }
        None => {
            let len = header.element_count().at(path)?;
            let columns = chosen_columns(&header.dtype, request.cols.as_deref()).at(path)?;
            let mut decoder = Decoder::new(&header.dtype, columns, len, request.int64).at(path)?;
            // An array of R's own layout is read straight into its vector: one copy.
            if let Some(dst) = decoder.direct() {
                let want = dst.len();
                let mut file = reader.into_inner();
                file.read_exact(dst).map_err(|e| {
                    Failure(format!("{path}: the data ends before its {want} bytes ({e}): is the file truncated?"))
                })?;
                return shaped(decoder, &header, header.shape.clone(), header.fortran_order, path);
            }
            pieces(reader, decoder, &header, len, path)
        }
    }
}

/// Reads member `name` of the archive at `path`.
pub fn npz_member(path: &str, name: &str, request: &Request) -> Result<Value, Failure> {
    let what = format!("{path}, member '{name}'");
    let mut archive = npz::Reader::from_path(path).at(path)?;
    let size = npz::MemberInfo::find(archive.members(), name).map_or(u64::MAX, |m| m.size);
    let reader = archive.npy(name).at(&what)?;
    if reader.header().dtype.has_object() {
        let array = Array::<Object>::from_npy_reader(reader).at(&what)?;
        return objects(array, request, &what);
    }
    let header = reader.header().clone();
    r_shape(&header.shape).at(&what)?;
    present(reader.data_offset(), reader.data_len(), size, &Request { rows: None, cols: None, int64: request.int64 })
        .at(&what)?;
    match request.rows.as_deref() {
        Some(rows) => {
            // A compressed member has no offsets to read at: its elements are read in
            // order, and the rows taken from them.
            let data = reader.read::<DynArray>().at(&what)?.into_data();
            let size = header.dtype.itemsize();
            let fetch = |start: usize, len: usize, out: &mut Vec<u8>| -> Result<(), Failure> {
                out.extend_from_slice(&data[start * size..(start + len) * size]);
                Ok(())
            };
            rows_of(&header, rows, request, &what, fetch)
        }
        None => whole(reader, &header, request, &what),
    }
}

/// Checks that a file (or member) of `size` bytes holds the data its header describes,
/// before memory is taken for it; rows are read where they are, and checked as read.
fn present(offset: usize, data: usize, size: u64, request: &Request) -> Result<(), Failure> {
    let end = offset as u64 + data as u64;
    if request.rows.is_none() && end > size {
        return Err(Failure(format!(
            "the header describes {data} bytes of data, but the file ends {} bytes after it starts: it is truncated",
            size.saturating_sub(offset as u64)
        )));
    }
    Ok(())
}

/// Checks that R can give an array of `shape` its dims: at most 2^31 - 1 along an axis.
fn r_shape(shape: &[usize]) -> Result<(), Failure> {
    if shape.len() >= 2 {
        if let Some(d) = shape.iter().find(|&&d| d > i32::MAX as usize) {
            return Err(usage(format!("an axis of {d}: R's arrays hold at most 2147483647 along an axis")));
        }
    }
    Ok(())
}

/// The names and facts of an archive's members: name, compression, sizes.
pub fn npz_members(path: &str) -> Result<Robj, Failure> {
    let archive = npz::Reader::from_path(path).at(path)?;
    let members = archive.members();
    let method = |m: &npz::MemberInfo| match m.compression {
        Some(npz::Method::Stored) => "stored",
        Some(npz::Method::Zstd) => "zstd",
        _ => "deflated",
    };
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let compression: Vec<&str> = members.iter().map(method).collect();
    let size: Vec<f64> = members.iter().map(|m| m.size as f64).collect();
    let compressed: Vec<f64> = members.iter().map(|m| m.compressed_size as f64).collect();
    data_frame(
        vec![
            ("name".to_string(), Strings::from_values(names).into()),
            ("compression".to_string(), Strings::from_values(compression).into()),
            ("size".to_string(), Robj::from(size)),
            ("compressed_size".to_string(), Robj::from(compressed)),
        ],
        members.len(),
    )
}

/// Every element of a reader, in pieces.
fn whole<R: Read>(reader: NpyReader<R>, header: &Header, request: &Request, what: &str) -> Result<Value, Failure> {
    let len = header.element_count().at(what)?;
    let columns = chosen_columns(&header.dtype, request.cols.as_deref()).at(what)?;
    let decoder = Decoder::new(&header.dtype, columns, len, request.int64).at(what)?;
    pieces(reader, decoder, header, len, what)
}

/// The `len` elements of a reader, in pieces, through `decoder`.
fn pieces<R: Read>(
    mut reader: NpyReader<R>,
    mut decoder: Decoder,
    header: &Header,
    len: usize,
    what: &str,
) -> Result<Value, Failure> {
    let piece = decoder.piece_elements();
    let mut buf = Vec::new();
    let mut done = 0;
    while done < len {
        buf.clear();
        let got = reader.read_raw(piece, &mut buf).at(what)?;
        if got == 0 {
            return Err(Failure(format!("{what}: the data ends after {done} of {len} elements")));
        }
        decoder.decode(&buf, got, done).at(what)?;
        done += got;
    }
    shaped(decoder, header, header.shape.clone(), header.fortran_order, what)
}

/// The rows `rows` of an array: runs of elements fetched by `fetch(start, len, out)`
/// (appending their bytes to `out`), in the order the output holds them.
fn rows_of(
    header: &Header,
    rows: &[usize],
    request: &Request,
    what: &str,
    mut fetch: impl FnMut(usize, usize, &mut Vec<u8>) -> Result<(), Failure>,
) -> Result<Value, Failure> {
    let shape = &header.shape;
    let Some((&first_axis, rest_axes)) = shape.split_first() else {
        return Err(usage(format!("{what}: a 0-d array has no rows")));
    };
    if let Some(bad) = rows.iter().find(|&&r| r >= first_axis) {
        return Err(usage(format!("{what}: row {} is beyond the array's {first_axis} rows", bad + 1)));
    }
    let rest: usize = rest_axes.iter().product();
    // Runs of consecutive elements, in output order: C order takes each row whole; Fortran
    // order, each column's chosen rows (the output stays in Fortran order).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut push = |start: usize, len: usize| match runs.last_mut() {
        Some((s, l)) if *s + *l == start => *l += len,
        _ if len > 0 => runs.push((start, len)),
        _ => {}
    };
    if header.fortran_order && !rest_axes.is_empty() {
        for j in 0..rest {
            for &r in rows {
                push(r + first_axis * j, 1);
            }
        }
    } else {
        for &r in rows {
            push(r * rest, rest);
        }
    }
    let mut out_shape = shape.clone();
    out_shape[0] = rows.len();
    let len = rows.len() * rest;
    let columns = chosen_columns(&header.dtype, request.cols.as_deref()).at(what)?;
    let mut decoder = Decoder::new(&header.dtype, columns, len, request.int64).at(what)?;
    let piece = decoder.piece_elements();
    let mut buf = Vec::new();
    let mut done = 0;
    let mut held = 0;
    for (mut start, mut left) in runs {
        while left > 0 {
            let k = left.min(piece);
            fetch(start, k, &mut buf)?;
            start += k;
            left -= k;
            held += k;
            if held >= piece {
                decoder.decode(&buf, held, done).at(what)?;
                done += held;
                held = 0;
                buf.clear();
            }
        }
    }
    if held > 0 {
        decoder.decode(&buf, held, done).at(what)?;
    }
    shaped(decoder, header, out_shape, header.fortran_order, what)
}

/// The decoded leaves given R's shape (see the module).
fn shaped(decoder: Decoder, header: &Header, shape: Vec<usize>, fortran: bool, what: &str) -> Result<Value, Failure> {
    let (columns, warnings) = decoder.finish().at(what)?;
    let len: usize = shape.iter().product();
    let value = match &header.dtype {
        DType::Record(_) => {
            let mut frame = data_frame(columns, len)?;
            // An N-d record array's rows are its elements in storage order.
            if shape.len() != 1 {
                frame.set_attrib("npy_shape", shape.iter().map(|&d| d as f64).collect::<Vec<f64>>())?;
                frame.set_attrib("npy_order", if fortran { "F" } else { "C" })?;
            }
            frame
        }
        _ => {
            let (_, values) = columns.into_iter().next().ok_or_else(|| usage("an array without a leaf"))?;
            let mut v = with_dims(values, &shape, fortran)?;
            // What `write_npy` needs to write the same bytes back: a 0-d shape, the order.
            if shape.is_empty() {
                v.set_attrib("npy_shape", Vec::<f64>::new())?;
            } else if shape.len() >= 2 {
                v.set_attrib("npy_order", if fortran { "F" } else { "C" })?;
            }
            v
        }
    };
    let mut value = value;
    value.set_attrib("npy_dtype", header.dtype.descr())?;
    Ok(Value { value, warnings })
}

/// A `data.frame` of `columns` (names and vectors, matrix columns kept) with `len` rows.
fn data_frame(columns: Vec<(String, Robj)>, len: usize) -> Result<Robj, Failure> {
    let names: Vec<String> = columns.iter().map(|(n, _)| n.clone()).collect();
    let mut frame: Robj = List::from_values(columns.into_iter().map(|(_, v)| v)).into();
    frame.set_names(names)?;
    // Compact row names, as R's own data.frame() makes: c(NA, -len).
    frame.set_attrib("row.names", Integers::from_values([Rint::na(), Rint::from(-(len as i32))]))?;
    frame.set_class(["data.frame"])?;
    Ok(frame)
}

/// `values` in storage order as an R value of `shape` with NumPy's indices: no `dim` for
/// 0-d and 1-d arrays; a Fortran-order array as it is; a C-order one rearranged into R's
/// column-major order.
pub fn with_dims(values: Robj, shape: &[usize], fortran: bool) -> Result<Robj, Failure> {
    if shape.len() < 2 {
        return Ok(values);
    }
    let len: usize = shape.iter().product();
    let mut out = if fortran || len == 0 || shape.iter().filter(|&&d| d > 1).count() < 2 {
        values
    } else {
        permuted(&values, &shape.iter().rev().copied().collect::<Vec<_>>())?
    };
    out.set_attrib("dim", shape.iter().map(|&d| d as f64).collect::<Vec<f64>>())?;
    Ok(out)
}

/// The storage-order positions that R's column-major positions take, for an array whose
/// values are in C order of `shape` (outermost first). Runs the array in R's order,
/// stepping through the C positions with an odometer.
pub(crate) fn c_positions(shape: &[usize]) -> Vec<usize> {
    let n: usize = shape.iter().product();
    let nd = shape.len();
    let mut strides = vec![1usize; nd];
    for k in (0..nd.saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * shape[k + 1];
    }
    let mut index = vec![0usize; nd];
    let mut c = 0usize;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(c);
        for k in 0..nd {
            index[k] += 1;
            c += strides[k];
            if index[k] < shape[k] {
                break;
            }
            c -= strides[k] * shape[k];
            index[k] = 0;
        }
    }
    out
}

/// `values` (C order of the shape whose reverse is `reversed`) in R's order.
fn permuted(values: &Robj, reversed: &[usize]) -> Result<Robj, Failure> {
    let shape: Vec<usize> = reversed.iter().rev().copied().collect();
    let from = c_positions(&shape);
    let mut out: Robj = match values.rtype() {
        Rtype::Doubles => {
            let v = values.as_real_slice().expect("doubles");
            Doubles::from_values(from.iter().map(|&i| v[i])).into()
        }
        Rtype::Integers => {
            let v = values.as_integer_slice().expect("integers");
            Integers::from_values(from.iter().map(|&i| Rint::from(v[i]))).into()
        }
        Rtype::Logicals => {
            let v = values.as_logical_slice().expect("logicals");
            Logicals::from_values(from.iter().map(|&i| v[i])).into()
        }
        Rtype::Complexes => {
            let v: Complexes = values.clone().try_into()?;
            Complexes::from_values(from.iter().map(|&i| v[i])).into()
        }
        Rtype::Strings => {
            let v: Strings = values.clone().try_into()?;
            Strings::from_values(from.iter().map(|&i| v[i].clone())).into()
        }
        Rtype::List => {
            let v: List = values.clone().try_into()?;
            List::from_values(from.iter().map(|&i| v.elt(i).expect("an element"))).into()
        }
        other => return Err(usage(format!("cannot arrange an R vector of type {other:?}"))),
    };
    for name in ["class", "tzone", "units", "npy_unit"] {
        if let Some(a) = values.get_attrib(name) {
            out.set_attrib(name, a)?;
        }
    }
    Ok(out)
}

/// An object array: a list of R values of its shape (a 0-d array: its one value).
fn objects(array: Array<Object>, request: &Request, what: &str) -> Result<Value, Failure> {
    if request.cols.is_some() {
        return Err(usage(format!("{what}: `cols` names fields of a record array; this is an object array")));
    }
    let mut warnings = Vec::new();
    let shape = array.shape().to_vec();
    let fortran = array.fortran_order();
    let values: Vec<Robj> =
        array.as_slice().iter().map(|o| object(o, request.int64, &mut warnings)).collect::<Result<_, _>>().at(what)?;
    if shape.is_empty() {
        let value = values.into_iter().next().unwrap_or_default();
        return Ok(Value { value, warnings });
    }
    let mut list: Robj = List::from_values(values).into();
    if let Some(rows) = &request.rows {
        // An object array's pickle has no offsets: it is decoded whole and the rows taken.
        let rest: usize = shape[1..].iter().product();
        if let Some(bad) = rows.iter().find(|&&r| r >= shape[0]) {
            return Err(usage(format!("{what}: row {} is beyond the array's {} rows", bad + 1, shape[0])));
        }
        let all: List = list.try_into()?;
        let d0 = shape[0];
        let positions: Vec<usize> = if fortran {
            (0..rest).flat_map(|j| rows.iter().map(move |&r| r + d0 * j)).collect()
        } else {
            rows.iter().flat_map(|&r| r * rest..(r + 1) * rest).collect()
        };
        let pick: Vec<Robj> = positions.into_iter().map(|i| all.elt(i).unwrap_or_default()).collect();
        list = List::from_values(pick).into();
        let mut s = shape.clone();
        s[0] = rows.len();
        let mut value = with_dims(list, &s, fortran)?;
        value.set_attrib("npy_dtype", "'|O'")?;
        return Ok(Value { value, warnings });
    }
    let mut value = with_dims(list, &shape, fortran)?;
    value.set_attrib("npy_dtype", "'|O'")?;
    Ok(Value { value, warnings })
}

/// One Python value as an R value (the table in the package's README).
fn object(o: &Object, int64: Int64, warnings: &mut Vec<String>) -> Result<Robj, Failure> {
    let list = |items: &[Object], warnings: &mut Vec<String>| -> Result<Robj, Failure> {
        let values = items.iter().map(|i| object(i, int64, warnings)).collect::<Result<Vec<_>, _>>()?;
        Ok(List::from_values(values).into())
    };
    let dict = |pairs: &[(Object, Object)], warnings: &mut Vec<String>| -> Result<Robj, Failure> {
        let names: Vec<String> =
            pairs.iter().map(|(k, _)| k.as_str().map_or_else(|| k.repr(), str::to_string)).collect();
        let values = pairs.iter().map(|(_, v)| object(v, int64, warnings)).collect::<Result<Vec<_>, _>>()?;
        let mut l: Robj = List::from_values(values).into();
        l.set_names(names)?;
        Ok(l)
    };
    Ok(match o {
        Object::None => Robj::from(()),
        Object::Bool(b) => Robj::from(*b),
        Object::Int(i) if *i > i64::from(i32::MIN) && *i <= i64::from(i32::MAX) => Robj::from(*i as i32),
        Object::Int(i) => {
            if (*i as f64) as i64 != *i {
                warnings.push(format!("the Python int {i} loses precision as a double"));
            }
            Robj::from(*i as f64)
        }
        Object::BigInt(text) => {
            warnings.push(format!("the Python int {text} loses precision as a double"));
            Robj::from(text.parse::<f64>().unwrap_or(f64::NAN))
        }
        Object::Float(x) => Robj::from(*x),
        Object::Complex(re, im) => Complexes::from_values([Rcplx::new(*re, *im)]).into(),
        Object::Str(s) => Robj::from(s.as_str()),
        Object::Bytes(b) | Object::ByteArray(b) => Robj::from(b.clone()),
        Object::List(items) | Object::Tuple(items) | Object::Set(items) | Object::FrozenSet(items) => {
            list(items, warnings)?
        }
        Object::Deque(d) => list(&d.items, warnings)?,
        Object::Dict(pairs) | Object::OrderedDict(pairs) | Object::Counter(pairs) => dict(pairs, warnings)?,
        Object::DefaultDict(d) => dict(&d.entries, warnings)?,
        Object::Array(a) | Object::Scalar(a) => {
            let request = Request { rows: None, cols: None, int64 };
            let header = a.header().clone();
            let reader = NpyReader::over_data(a.data(), header.clone())?;
            let read = whole(reader, &header, &request, "an array inside the object array")?;
            warnings.extend(read.warnings);
            read.value
        }
        Object::ObjectArray(a) => {
            let read = objects((**a).clone(), &Request { rows: None, cols: None, int64 }, "an object array inside")?;
            warnings.extend(read.warnings);
            read.value
        }
        other => {
            // Values no R type stands for (datetime's, Decimal, UUID, paths, ...): Python's
            // repr, with the type's name as attribute `npy_pytype`.
            let mut text = Robj::from(other.repr());
            text.set_attrib("npy_pytype", other.python_type())?;
            text
        }
    })
}
