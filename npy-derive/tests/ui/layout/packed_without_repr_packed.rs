#[derive(npy_core::NpyRecord)]
#[npy(packed)]
#[repr(C)]
struct Point {
    n: u8,
    x: f64,
}

fn main() {}
