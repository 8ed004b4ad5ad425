#[derive(npy_core::NpyRecord, Clone, Copy)]
#[npy(pyo3)]
struct Label {
    code: char,
}

fn main() {
    pyo3::Python::attach(|py| {
        let _ = <Label as numpy::Element>::get_dtype(py);
    });
}
