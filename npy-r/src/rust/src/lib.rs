//! The R package `npy`'s glue over npy-core (extendr): `.npy` files and `.npz` members
//! read into R values and R values written as NumPy writes them. The rules (dtypes,
//! headers, archives, object arrays) are npy-core's; this crate chooses R's types.

use extendr_api::prelude::*;
use npy_core::WriteNpy;

mod decode;
mod encode;
mod error;
mod read;

use decode::Int64;
use error::{usage, Failure, Located};
use read::{Request, Value};

/// The request the R wrapper's arguments make: `rows` from 1 (R's) to 0 (NumPy's).
fn request(
    rows: Nullable<Vec<f64>>,
    cols: Nullable<Vec<String>>,
    bit64: bool,
) -> std::result::Result<Request, Failure> {
    let rows = match rows {
        Nullable::NotNull(rows) => Some(
            rows.iter()
                .map(|&r| {
                    if r >= 1.0 && r.fract() == 0.0 && r < 9.0e15 {
                        Ok(r as usize - 1)
                    } else {
                        Err(usage(format!("rows: {r} is not a row number (rows count from 1)")))
                    }
                })
                .collect::<std::result::Result<Vec<_>, _>>()?,
        ),
        Nullable::Null => None,
    };
    let cols = match cols {
        Nullable::NotNull(cols) => Some(cols),
        Nullable::Null => None,
    };
    Ok(Request { rows, cols, int64: if bit64 { Int64::Bit64 } else { Int64::Double } })
}

/// What every function gives the R wrapper: `list(value, warnings, error)`, `error` a
/// message or `NULL`. Failures come back as values, never as Rust errors: extendr raises
/// those by unwinding a panic, whose hook would print to the console.
fn answer(read: std::result::Result<Value, Failure>) -> Robj {
    match read {
        Ok(Value { value, warnings }) => list!(value = value, warnings = warnings, error = ()).into(),
        Err(Failure(message)) => list!(value = (), warnings = Vec::<String>::new(), error = message).into(),
    }
}

/// Reads a `.npy` file (see `read_npy` in R).
#[extendr]
fn npyr_read_npy(path: &str, rows: Nullable<Vec<f64>>, cols: Nullable<Vec<String>>, bit64: bool) -> Robj {
    answer(request(rows, cols, bit64).and_then(|r| read::npy_file(path, &r)))
}

/// Reads a member of an `.npz` archive (see `read_npz` in R).
#[extendr]
fn npyr_read_member(
    path: &str,
    name: &str,
    rows: Nullable<Vec<f64>>,
    cols: Nullable<Vec<String>>,
    bit64: bool,
) -> Robj {
    answer(request(rows, cols, bit64).and_then(|r| read::npz_member(path, name, &r)))
}

/// The members of an `.npz` archive: a data.frame of name, compression and sizes.
#[extendr]
fn npyr_members(path: &str) -> Robj {
    answer(read::npz_members(path).map(|value| Value { value, warnings: Vec::new() }))
}

/// Writes `x` as a `.npy` file, atomically (see `write_npy` in R).
#[extendr]
fn npyr_write_npy(x: Robj, path: &str, durable: bool) -> Robj {
    let write = || -> std::result::Result<Value, Failure> {
        let array = encode::to_array(&x, path)?;
        let mut options = npy_core::WriteOptions::default();
        options.sync(durable);
        array.write_npy_with(path, &options).at(path)?;
        Ok(Value { value: ().into(), warnings: Vec::new() })
    };
    answer(write())
}

/// Writes the named list `members` as an `.npz` archive, atomically (see `write_npz`).
#[extendr]
fn npyr_write_npz(members: List, path: &str, compression: &str, level: Nullable<f64>, durable: bool) -> Robj {
    let write = || -> std::result::Result<Value, Failure> {
        let level = match level {
            Nullable::NotNull(l) => Some(l as i64),
            Nullable::Null => None,
        };
        let compression = npy_core::npz::Compression::named(compression, level)?;
        let names: Vec<String> = members.names().map(|n| n.map(str::to_string).collect()).unwrap_or_default();
        let mut writer = npy_core::npz::Writer::create(path).at(path)?;
        writer.sync(durable);
        for (name, value) in names.iter().zip(members.values()) {
            let what = format!("{path}, member '{name}'");
            let array = encode::to_array(&value, &what)?;
            writer.add_with(name, &array, compression).at(&what)?;
        }
        writer.finish().at(path)?;
        Ok(Value { value: ().into(), warnings: Vec::new() })
    };
    answer(write())
}

extendr_module! {
    mod npy;
    fn npyr_read_npy;
    fn npyr_read_member;
    fn npyr_members;
    fn npyr_write_npy;
    fn npyr_write_npz;
}
