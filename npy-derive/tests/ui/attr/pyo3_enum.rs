#[derive(npy_core::NpyRecord, Clone, Copy)]
#[npy(pyo3)]
#[repr(u8)]
enum Kind {
    A = 1,
    B = 2,
}

fn main() {}
