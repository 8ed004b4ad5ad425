#[derive(npy_core::NpyRecord, Clone)]
#[npy(pyo3)]
struct Trace {
    t0: f64,
}

fn main() {}
