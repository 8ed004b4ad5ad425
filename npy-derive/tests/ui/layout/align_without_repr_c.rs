#[derive(npy_core::NpyRecord)]
#[npy(align)]
struct Point {
    x: f64,
    n: u8,
}

fn main() {}
