//! `traces`: an example PyO3 extension built on npy-pyo3. Rust `Trace` records go to
//! NumPy as a record array without a copy, and come back as `&[Trace]`: borrowed when the
//! array has `Trace`'s layout, converted by field name when it does not.
//!
//! ```text
//! >>> import traces, numpy as np
//! >>> t = traces.make_traces(1_000_000)      # a NumPy record array over the Vec's memory
//! >>> t.dtype.names
//! ('trace_id', 'station', 't0', 'dt', 'samples')
//! >>> traces.mean_t0(t)                       # borrowed: no copy
//! >>> traces.mean_t0(np.sort(t, order='t0'))  # any array with these fields, any layout
//! ```
#![forbid(unsafe_code)]

use npy_core::NpyRecord;
use npy_pyo3::Records;
use numpy::{IntoPyArray, PyArray1, PyArrayDescr};
use pyo3::prelude::*;

/// One seismic trace: NumPy's `align=True` layout of these fields (`#[repr(C)]`,
/// `#[npy(align)]`), so files that `np.save` writes of such arrays read as it is in memory.
#[derive(NpyRecord, Clone, Copy, Debug, PartialEq)]
#[npy(align, pyo3)]
#[repr(C)]
pub struct Trace {
    /// Which trace.
    pub trace_id: i32,
    /// The recording station.
    pub station: u16,
    /// Start time, seconds.
    pub t0: f64,
    /// Sample interval, seconds.
    pub dt: f32,
    /// The first samples.
    pub samples: [f32; 8],
}

/// `n` traces made in Rust, returned as a NumPy record array that owns the `Vec`'s memory
/// (no copy: ten million take as long as one).
#[pyfunction]
fn make_traces(py: Python<'_>, n: usize) -> Bound<'_, PyArray1<Trace>> {
    let traces: Vec<Trace> = py.detach(|| {
        (0..n)
            .map(|i| Trace {
                trace_id: i as i32,
                station: (i % 97) as u16,
                t0: i as f64 * 0.5,
                dt: 0.004,
                samples: [i as f32; 8],
            })
            .collect()
    });
    traces.into_pyarray(py)
}

/// `n` traces made in Rust, and the seconds their hand-over to NumPy took (what
/// `make_traces` spends after building the `Vec`): the same for any `n`, as nothing is
/// copied. For the bench.
#[pyfunction]
fn handover_seconds(py: Python<'_>, n: usize) -> (Bound<'_, PyArray1<Trace>>, f64) {
    let traces = vec![Trace { trace_id: 1, station: 2, t0: 0.5, dt: 0.004, samples: [0.0; 8] }; n];
    let start = std::time::Instant::now();
    let array = traces.into_pyarray(py);
    (array, start.elapsed().as_secs_f64())
}

/// The mean `t0` of `traces`, any 1-d NumPy array with `Trace`'s fields.
#[pyfunction]
fn mean_t0(py: Python<'_>, traces: Records<'_, Trace>) -> f64 {
    let traces: &[Trace] = &traces;
    py.detach(|| traces.iter().map(|t| t.t0).sum::<f64>() / traces.len().max(1) as f64)
}

/// Whether `traces` reaches Rust without a copy (its dtype is `Trace`'s memory layout).
#[pyfunction]
fn is_borrowed(traces: Records<'_, Trace>) -> bool {
    traces.is_borrowed()
}

/// `traces` as Rust sees them, back to NumPy: a round trip through `Vec<Trace>`.
#[pyfunction]
fn round_trip<'py>(py: Python<'py>, traces: Records<'py, Trace>) -> Bound<'py, PyArray1<Trace>> {
    traces.into_vec().into_pyarray(py)
}

/// `Trace`'s NumPy dtype.
#[pyfunction]
fn trace_dtype(py: Python<'_>) -> Bound<'_, PyArrayDescr> {
    numpy::dtype::<Trace>(py)
}

#[pymodule]
fn traces(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(make_traces, m)?)?;
    m.add_function(wrap_pyfunction!(handover_seconds, m)?)?;
    m.add_function(wrap_pyfunction!(mean_t0, m)?)?;
    m.add_function(wrap_pyfunction!(is_borrowed, m)?)?;
    m.add_function(wrap_pyfunction!(round_trip, m)?)?;
    m.add_function(wrap_pyfunction!(trace_dtype, m)?)?;
    Ok(())
}
