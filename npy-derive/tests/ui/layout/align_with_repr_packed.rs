#[derive(npy_core::NpyRecord)]
#[npy(align)]
#[repr(C, packed)]
struct Point {
    n: u8,
    x: f64,
}

fn main() {}
