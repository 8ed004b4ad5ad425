#[derive(npy_core::NpyRecord, Clone, Copy)]
#[npy(pyo3)]
struct Pick {
    t0: f64,
    #[npy(skip)]
    seen: bool,
}

fn main() {
    pyo3::Python::attach(|py| {
        let _ = <Pick as numpy::Element>::get_dtype(py);
    });
}
