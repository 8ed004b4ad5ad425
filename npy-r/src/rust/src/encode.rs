//! R values to elements, the inverse of `decode`: each leaf's values (an R vector, or a
//! matrix column for a subarray field) are encoded one by one by npy-core's scalar codec
//! in the leaf's own type and byte order, then put in their place in the elements by a
//! plan; bytes no field covers stay zero, as `np.save` writes a new array's padding.
//!
//! The dtype is the one attribute `npy_dtype` names (what `read_npy` read), else the one
//! R's types give (the table in the package's README).

use extendr_api::prelude::*;
use npy_core::dtype::{ByteOrder, Column, DType, DateUnit, Record, Scalar, ScalarType, TimeUnit};
use npy_core::header::Header;
use npy_core::plan::Plan;
use npy_core::scalar::{encode, f64_to_long_double, narrow, Value};
use npy_core::DynArray;

use crate::error::{usage, Failure};

/// An R value as the array NumPy reads back.
pub fn to_array(x: &Robj, what: &str) -> std::result::Result<DynArray, Failure> {
    if x.inherits("data.frame") {
        return records(x, what);
    }
    if x.is_list() && !is_raw_list(x) {
        return Err(usage(format!(
            "{what}: a list is not an array (write a data.frame, a vector, a matrix or an array)"
        )));
    }
    let given = descr_attr(x)?;
    let dims: Vec<usize> = match x.get_attrib("dim") {
        Some(d) => numbers(&d)?.into_iter().map(|v| v as usize).collect(),
        None => vec![x.len()],
    };
    let scalar = match &given {
        Some(DType::Scalar(s)) => *s,
        Some(_) => {
            return Err(usage(format!(
                "{what}: attribute npy_dtype is a record dtype, but the value is not a data.frame"
            )))
        }
        None => infer(x, what)?,
    };
    let dtype = DType::Scalar(scalar);
    let column = dtype.columns()?.remove(0);
    let n: usize = dims.iter().product();
    let mut data = vec![0u8; n * scalar.itemsize()];
    put_leaf(x, &column, &dtype, n, &mut data, what)?;
    // R's values are in column-major (Fortran) order; a value read from a C-order file
    // (attribute npy_order "C") is written back in C order, as it was.
    let c_order =
        dims.len() >= 2 && x.get_attrib("npy_order").and_then(|o| o.as_str().map(|s| s == "C")).unwrap_or(false);
    if c_order {
        data = to_c_order(&data, &dims, scalar.itemsize());
    }
    let mut header = Header::new(dtype, if x.get_attrib("dim").is_none() && is_scalar0(x) { vec![] } else { dims });
    header.fortran_order = header.shape.len() >= 2 && !c_order;
    Ok(DynArray::new(header, data)?)
}

/// A length-1 value read from a 0-d file (attribute `npy_shape` of length 0).
fn is_scalar0(x: &Robj) -> bool {
    x.get_attrib("npy_shape").is_some_and(|s| s.len() == 0) && x.len() == 1
}

/// A list of raw vectors: void values, or text R's strings cannot hold (`read_npy` gives
/// such columns so).
fn is_raw_list(x: &Robj) -> bool {
    x.as_list().is_some_and(|l| l.values().all(|v| v.rtype() == Rtype::Raw))
}

fn descr_attr(x: &Robj) -> std::result::Result<Option<DType>, Failure> {
    match x.get_attrib("npy_dtype").and_then(|d| d.as_str().map(str::to_string)) {
        Some(text) => {
            let text = text.trim();
            let text = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')).unwrap_or(text);
            Ok(Some(text.parse::<DType>().map_err(|e| usage(format!("attribute npy_dtype {text:?}: {e}")))?))
        }
        None => Ok(None),
    }
}

fn numbers(x: &Robj) -> std::result::Result<Vec<f64>, Failure> {
    if let Some(v) = x.as_real_slice() {
        return Ok(v.to_vec());
    }
    if let Some(v) = x.as_integer_slice() {
        return Ok(v.iter().map(|&i| f64::from(i)).collect());
    }
    Err(usage("expected numbers"))
}

fn le(ty: ScalarType) -> Scalar {
    Scalar::new(ty, ByteOrder::Little)
}

/// The dtype R's type gives a vector (or a data.frame's column).
fn infer(x: &Robj, what: &str) -> std::result::Result<Scalar, Failure> {
    if x.inherits("Date") {
        return Ok(le(ScalarType::DateTime(DateUnit::new(TimeUnit::Days))));
    }
    if x.inherits("POSIXct") {
        return Ok(le(ScalarType::DateTime(DateUnit::new(TimeUnit::Microseconds))));
    }
    if x.inherits("difftime") {
        return Ok(le(ScalarType::TimeDelta(DateUnit::new(TimeUnit::Microseconds))));
    }
    if x.inherits("integer64") {
        return Ok(le(ScalarType::Int(8)));
    }
    if x.inherits("factor") {
        let labels = factor_labels(x)?;
        let n = labels.iter().map(|s| s.chars().count()).max().unwrap_or(0).max(1);
        return Ok(le(ScalarType::Unicode(n)));
    }
    Ok(match x.rtype() {
        Rtype::Doubles => le(ScalarType::Float(8)),
        Rtype::Integers => le(ScalarType::Int(4)),
        Rtype::Logicals => Scalar::new(ScalarType::Bool, ByteOrder::NotApplicable),
        Rtype::Complexes => le(ScalarType::Complex(16)),
        Rtype::Raw => Scalar::new(ScalarType::UInt(1), ByteOrder::NotApplicable),
        Rtype::Strings => {
            let strings: Strings = x.clone().try_into()?;
            let n = strings.iter().map(|s| if s.is_na() { 0 } else { s.as_ref().chars().count() }).max().unwrap_or(0);
            le(ScalarType::Unicode(n.max(1)))
        }
        Rtype::List if is_raw_list(x) => {
            let list: List = x.clone().try_into()?;
            let n = list.values().map(|v| v.len()).max().unwrap_or(0);
            Scalar::new(ScalarType::Void(n), ByteOrder::NotApplicable)
        }
        other => return Err(usage(format!("{what}: R values of type {other:?} have no NumPy dtype"))),
    })
}

fn factor_labels(x: &Robj) -> std::result::Result<Vec<String>, Failure> {
    let levels: Strings = x.get_attrib("levels").ok_or_else(|| usage("a factor without levels"))?.try_into()?;
    Ok(levels.iter().map(|s| s.as_ref().to_string()).collect())
}

/// A data.frame as a record array.
fn records(x: &Robj, what: &str) -> std::result::Result<DynArray, Failure> {
    let list: List = x.clone().try_into()?;
    let names: Vec<String> = list.names().map(|n| n.map(str::to_string).collect()).unwrap_or_default();
    let n = frame_rows(x, &list);
    let dtype = match descr_attr(x)? {
        Some(d @ DType::Record(_)) => d,
        Some(_) => return Err(usage(format!("{what}: attribute npy_dtype is not a record dtype"))),
        None => {
            let mut fields = Vec::with_capacity(names.len());
            for (name, col) in names.iter().zip(list.values()) {
                let at = format!("{what}, column '{name}'");
                let scalar = infer(&col, &at)?;
                let dt = match col.get_attrib("dim") {
                    Some(d) => {
                        let d = numbers(&d)?;
                        if d.len() != 2 {
                            return Err(usage(format!("{at}: an array column; give a vector or a matrix")));
                        }
                        DType::subarray(DType::Scalar(scalar), vec![d[1] as usize])?
                    }
                    None => DType::Scalar(scalar),
                };
                fields.push((name.clone(), dt));
            }
            DType::Record(Record::packed(fields)?)
        }
    };
    let columns = dtype.columns()?;
    let paths: Vec<&str> = columns.iter().map(|c| c.path.as_str()).collect();
    for name in &names {
        if !paths.contains(&name.as_str()) {
            return Err(usage(format!(
                "{what}: column '{name}' is not a field of attribute npy_dtype ({}); remove the attribute to write the columns as they are",
                paths.join(", ")
            )));
        }
    }
    let mut data = vec![0u8; n * dtype.itemsize()];
    for column in &columns {
        let at = names.iter().position(|nm| *nm == column.path).ok_or_else(|| {
            usage(format!(
                "{what}: field '{}' of attribute npy_dtype has no column; remove the attribute to write the columns as they are",
                column.path
            ))
        })?;
        let col = list.elt(at)?;
        put_leaf(&col, column, &dtype, n, &mut data, &format!("{what}, column '{}'", column.path))?;
    }
    let shape = match x.get_attrib("npy_shape") {
        Some(s) if numbers(&s)?.iter().product::<f64>() as usize == n => {
            numbers(&s)?.into_iter().map(|v| v as usize).collect()
        }
        _ => vec![n],
    };
    let fortran =
        shape.len() >= 2 && x.get_attrib("npy_order").and_then(|o| o.as_str().map(|s| s == "F")).unwrap_or(false);
    let mut header = Header::new(dtype, shape);
    header.fortran_order = fortran;
    Ok(DynArray::new(header, data)?)
}

fn frame_rows(x: &Robj, list: &List) -> usize {
    if let Some(rn) = x.get_attrib("row.names") {
        if let Some(v) = rn.as_integer_slice() {
            if v.len() == 2 && v[0] == i32::MIN {
                return v[1].unsigned_abs() as usize;
            }
        }
        return rn.len();
    }
    list.values().next().map_or(0, |c| c.len())
}

/// Encodes vector `x` as the leaf `column` of `n` elements of `dtype` into `data`.
fn put_leaf(
    x: &Robj,
    column: &Column,
    dtype: &DType,
    n: usize,
    data: &mut [u8],
    what: &str,
) -> std::result::Result<(), Failure> {
    let per = column.per_element();
    let scalar = column.scalar;
    let size = scalar.itemsize();
    if x.len() != n * per {
        return Err(usage(format!("{what}: {} values for {n} elements of {per} each", x.len())));
    }
    let mut buf = vec![0u8; n * per * size];
    let bad = |k: usize, why: String| {
        let row = k / per + 1;
        usage(format!("{what}, row {row}: {why}"))
    };
    let put = |k: usize, v: Value<'_>, buf: &mut [u8]| -> std::result::Result<(), Failure> {
        encode(&v, scalar, &mut buf[k * size..(k + 1) * size]).map_err(|e| bad(k, e.to_string()))
    };
    let ty = scalar.ty();
    let time_scale = time_seconds(x, ty);
    if x.inherits("factor") {
        let labels = factor_labels(x)?;
        let codes = x.as_integer_slice().ok_or_else(|| usage("a factor's codes"))?;
        for (k, r) in positions(n, per) {
            let c = codes[r];
            if c == i32::MIN {
                return Err(bad(k, "NA, which NumPy's strings cannot hold".into()));
            }
            text(&labels[(c - 1) as usize], scalar, k, &mut buf, size).map_err(|e| bad(k, e))?;
        }
    } else if x.inherits("integer64") {
        let v = x.as_real_slice().ok_or_else(|| usage("integer64 values"))?;
        for (k, r) in positions(n, per) {
            let i = v[r].to_bits() as i64;
            let value = match ty {
                ScalarType::Float(_) | ScalarType::Complex(_) => Value::from_f64(i as f64, scalar),
                _ => Value::from_int(i128::from(i), scalar),
            }
            .map_err(|e| bad(k, e.to_string()))?;
            put(k, value, &mut buf)?;
        }
    } else {
        match x.rtype() {
            Rtype::Doubles => {
                let v = x.as_real_slice().expect("doubles");
                let big = scalar.order() == ByteOrder::Big;
                if ty == ScalarType::Float(8) {
                    each(n, per, |k, r| {
                        let b = if big { v[r].to_be_bytes() } else { v[r].to_le_bytes() };
                        buf[k * 8..k * 8 + 8].copy_from_slice(&b);
                    });
                } else if ty == ScalarType::Float(4) {
                    each(n, per, |k, r| {
                        let x = narrow(v[r]);
                        let b = if big { x.to_be_bytes() } else { x.to_le_bytes() };
                        buf[k * 4..k * 4 + 4].copy_from_slice(&b);
                    });
                } else {
                    for (k, r) in positions(n, per) {
                        let x = v[r];
                        put(k, double_value(x, scalar, time_scale).map_err(|e| bad(k, e))?, &mut buf)?;
                    }
                }
            }
            Rtype::Integers | Rtype::Logicals => {
                let v: Vec<i32> = match x.as_integer_slice() {
                    Some(v) => v.to_vec(),
                    None => x.as_logical_slice().expect("logicals").iter().map(|b| b.0).collect(),
                };
                // The common integer types directly: NA and range checked, bytes in order.
                let direct =
                    |bytes: usize, fits: &dyn Fn(i32) -> bool, buf: &mut [u8]| -> std::result::Result<(), Failure> {
                        let big = scalar.order() == ByteOrder::Big;
                        let mut first_bad = None;
                        each(n, per, |k, r| {
                            let i = v[r];
                            if i == i32::MIN || !fits(i) {
                                first_bad = first_bad.or(Some((k, i)));
                                return;
                            }
                            let b = if big { i.to_be_bytes() } else { i.to_le_bytes() };
                            let b = if big { &b[4 - bytes..] } else { &b[..bytes] };
                            buf[k * bytes..(k + 1) * bytes].copy_from_slice(b);
                        });
                        match first_bad {
                            None => Ok(()),
                            Some((k, i32::MIN)) => {
                                Err(bad(k, format!("NA, which {} cannot hold (NumPy has no NA)", scalar.type_str())))
                            }
                            Some((k, i)) => Err(bad(k, format!("{i} does not fit in {}", scalar.type_str()))),
                        }
                    };
                let done = match ty {
                    ScalarType::Int(4) => direct(4, &|_| true, &mut buf).map(|()| true),
                    ScalarType::Int(2) => direct(2, &|i| i16::try_from(i).is_ok(), &mut buf).map(|()| true),
                    ScalarType::UInt(2) => direct(2, &|i| u16::try_from(i).is_ok(), &mut buf).map(|()| true),
                    ScalarType::Int(1) => direct(1, &|i| i8::try_from(i).is_ok(), &mut buf).map(|()| true),
                    ScalarType::UInt(1) => direct(1, &|i| u8::try_from(i).is_ok(), &mut buf).map(|()| true),
                    ScalarType::Bool => direct(1, &|i| i == 0 || i == 1, &mut buf).map(|()| true),
                    _ => Ok(false),
                }?;
                for (k, r) in positions(n, per).filter(|_| !done) {
                    let i = v[r];
                    let value = if i == i32::MIN {
                        match ty {
                            ScalarType::Float(_) | ScalarType::Complex(_) => Value::from_f64(f64::NAN, scalar),
                            ScalarType::DateTime(_) | ScalarType::TimeDelta(_) => {
                                Value::from_int(i128::from(i64::MIN), scalar)
                            }
                            _ => {
                                return Err(bad(
                                    k,
                                    format!("NA, which {} cannot hold (NumPy has no NA)", scalar.type_str()),
                                ))
                            }
                        }
                        .map_err(|e| bad(k, e.to_string()))?
                    } else {
                        match ty {
                            ScalarType::Bool if i == 0 || i == 1 => Ok::<_, Failure>(Value::Bool(i == 1)),
                            ScalarType::Bool => return Err(bad(k, format!("{i} is not a bool"))),
                            ScalarType::Float(_) | ScalarType::Complex(_) => {
                                Value::from_f64(f64::from(i), scalar).map_err(|e| bad(k, e.to_string()))
                            }
                            ScalarType::DateTime(_) | ScalarType::TimeDelta(_) if time_scale.is_some() => {
                                double_value(f64::from(i), scalar, time_scale).map_err(|e| bad(k, e))
                            }
                            _ => Value::from_int(i128::from(i), scalar).map_err(|e| bad(k, e.to_string())),
                        }?
                    };
                    put(k, value, &mut buf)?;
                }
            }
            Rtype::Complexes => {
                let v: Complexes = x.clone().try_into()?;
                for (k, r) in positions(n, per) {
                    let c = v[r];
                    let (re, im) = (c.re().0, c.im().0);
                    let value = match ty {
                        ScalarType::Complex(32) => {
                            let mut b = [0u8; 32];
                            b[..16].copy_from_slice(&f64_to_long_double(re));
                            b[16..].copy_from_slice(&f64_to_long_double(im));
                            Value::LongComplex(b)
                        }
                        _ => Value::from_complex(re, im, scalar).map_err(|e| bad(k, e.to_string()))?,
                    };
                    put(k, value, &mut buf)?;
                }
            }
            Rtype::Strings => {
                let v: Strings = x.clone().try_into()?;
                for (k, r) in positions(n, per) {
                    let s = &v[r];
                    if s.is_na() {
                        return Err(bad(k, "NA, which NumPy's strings cannot hold".into()));
                    }
                    text(s.as_ref(), scalar, k, &mut buf, size).map_err(|e| bad(k, e))?;
                }
            }
            Rtype::Raw => {
                let v = x.as_raw_slice().expect("raw");
                for (k, r) in positions(n, per) {
                    put(k, Value::from_int(i128::from(v[r]), scalar).map_err(|e| bad(k, e.to_string()))?, &mut buf)?;
                }
            }
            Rtype::List if is_raw_list(x) => {
                let list: List = x.clone().try_into()?;
                for (k, r) in positions(n, per) {
                    let item = list.elt(r)?;
                    let bytes = item.as_raw_slice().ok_or_else(|| bad(k, "not a raw vector".into()))?;
                    let value = match ty {
                        ScalarType::Void(_) => Value::Void(bytes),
                        ScalarType::Bytes(_) => Value::Bytes(bytes),
                        ScalarType::Unicode(_) => {
                            let text: Option<String> = bytes
                                .chunks(4)
                                .map(|u| {
                                    <[u8; 4]>::try_from(u).ok().and_then(|u| char::from_u32(u32::from_le_bytes(u)))
                                })
                                .collect();
                            let text =
                                text.ok_or_else(|| bad(k, "raw bytes that are not UTF-32LE characters".into()))?;
                            encode(&Value::Str(text.as_str().into()), scalar, &mut buf[k * size..(k + 1) * size])
                                .map_err(|e| bad(k, e.to_string()))?;
                            continue;
                        }
                        _ => return Err(bad(k, format!("raw bytes cannot be written as {}", scalar.type_str()))),
                    };
                    put(k, value, &mut buf)?;
                }
            }
            other => {
                return Err(usage(format!(
                    "{what}: R values of type {other:?} cannot be written as {}",
                    scalar.type_str()
                )))
            }
        }
    }
    let plan = Plan::new_partial(&column.extract, dtype)?;
    plan.run(&buf, data, 0)?;
    Ok(())
}

/// The values of `n` elements of `per` each, column by column: (position in the plan's
/// input, element by element; position in R's vector, whose value j of element i is at
/// `i + j * n`).
fn positions(n: usize, per: usize) -> Box<dyn Iterator<Item = (usize, usize)>> {
    if per == 1 {
        return Box::new((0..n).map(|i| (i, i)));
    }
    Box::new((0..per).flat_map(move |j| (0..n).map(move |i| (i * per + j, i + j * n))))
}

/// Calls `f(k, r)` for every value as [`positions`] gives them, by plain loops (the hot
/// paths: no iterator between).
fn each(n: usize, per: usize, mut f: impl FnMut(usize, usize)) {
    if per == 1 {
        (0..n).for_each(|i| f(i, i));
        return;
    }
    for j in 0..per {
        for i in 0..n {
            f(i * per + j, i + j * n);
        }
    }
}

/// Seconds per R unit of a time vector (1 for POSIXct and difftime in secs, 86400 for
/// Date), when it is written as a datetime or timedelta.
fn time_seconds(x: &Robj, ty: ScalarType) -> Option<f64> {
    if !matches!(ty, ScalarType::DateTime(_) | ScalarType::TimeDelta(_)) {
        return None;
    }
    if x.inherits("Date") {
        return Some(86400.0);
    }
    if x.inherits("POSIXct") {
        return Some(1.0);
    }
    if x.inherits("difftime") {
        let units = x.get_attrib("units").and_then(|u| u.as_str().map(str::to_string)).unwrap_or_default();
        return Some(match units.as_str() {
            "mins" => 60.0,
            "hours" => 3600.0,
            "days" => 86400.0,
            "weeks" => 604800.0,
            _ => 1.0,
        });
    }
    None
}

/// Seconds per step of a datetime unit (`None` for years, months and the generic unit).
fn unit_seconds(unit: DateUnit) -> Option<f64> {
    let s = match unit.unit {
        TimeUnit::Weeks => 604800.0,
        TimeUnit::Days => 86400.0,
        TimeUnit::Hours => 3600.0,
        TimeUnit::Minutes => 60.0,
        TimeUnit::Seconds => 1.0,
        TimeUnit::Milliseconds => 1e-3,
        TimeUnit::Microseconds => 1e-6,
        TimeUnit::Nanoseconds => 1e-9,
        TimeUnit::Picoseconds => 1e-12,
        TimeUnit::Femtoseconds => 1e-15,
        TimeUnit::Attoseconds => 1e-18,
        _ => return None,
    };
    Some(s * f64::from(unit.multiple))
}

/// A double as a value of `scalar`: a number, or a time (R's seconds or days, `seconds`
/// per R unit) as a count of the scalar's unit, rounded to the nearest.
fn double_value(x: f64, scalar: Scalar, seconds: Option<f64>) -> std::result::Result<Value<'static>, String> {
    match scalar.ty() {
        ScalarType::Float(16) => Ok(Value::LongDouble(f64_to_long_double(x))),
        ScalarType::Float(_) | ScalarType::Complex(_) => Value::from_f64(x, scalar).map_err(|e| e.to_string()),
        ScalarType::DateTime(u) | ScalarType::TimeDelta(u) => {
            if x.is_nan() {
                return Value::from_int(i128::from(i64::MIN), scalar).map_err(|e| e.to_string());
            }
            let count = match (seconds, unit_seconds(u)) {
                (Some(r), Some(s)) => (x * r / s).round(),
                (None, _) => x,
                (Some(_), None) => {
                    return Err(format!("R's times cannot be written as {} (a calendar unit)", scalar.type_str()))
                }
            };
            if !count.is_finite() || count.abs() >= 9.2e18 {
                return Err(format!("{x} is out of range for {}", scalar.type_str()));
            }
            Value::from_int(count as i128, scalar).map_err(|e| e.to_string())
        }
        ScalarType::Bool if x == 0.0 || x == 1.0 => Ok(Value::Bool(x == 1.0)),
        _ if x.is_nan() => Err(format!("NA or NaN, which {} cannot hold (NumPy has no NA)", scalar.type_str())),
        _ if x.fract() != 0.0 || !x.is_finite() => {
            Err(format!("{x} is not an integer, as {} needs", scalar.type_str()))
        }
        _ => Value::from_int(x as i128, scalar).map_err(|e| e.to_string()),
    }
}

/// Text as an `S` (one byte per char, U+0000 to U+00FF) or `U` value.
fn text(s: &str, scalar: Scalar, k: usize, buf: &mut [u8], size: usize) -> std::result::Result<(), String> {
    let out = &mut buf[k * size..(k + 1) * size];
    match scalar.ty() {
        ScalarType::Bytes(n) => {
            let mut bytes = Vec::with_capacity(s.len());
            for c in s.chars() {
                let b = u8::try_from(u32::from(c))
                    .map_err(|_| format!("{c:?} is beyond U+00FF, which |S{n} (bytes) cannot hold"))?;
                bytes.push(b);
            }
            encode(&Value::Bytes(&bytes), scalar, out).map_err(|e| e.to_string())
        }
        ScalarType::Unicode(_) => encode(&Value::Str(s.into()), scalar, out).map_err(|e| e.to_string()),
        _ => Err(format!("text cannot be written as {}", scalar.type_str())),
    }
}

/// Elements in column-major order of `dims` rearranged into C order.
fn to_c_order(data: &[u8], dims: &[usize], size: usize) -> Vec<u8> {
    let positions = crate::read::c_positions(dims);
    let mut out = vec![0u8; data.len()];
    for (q, &c) in positions.iter().enumerate() {
        out[c * size..(c + 1) * size].copy_from_slice(&data[q * size..(q + 1) * size]);
    }
    out
}
