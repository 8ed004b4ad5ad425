#[derive(npy_core::NpyRecord)]
#[npy(aligned)]
struct Point {
    #[npy(renamed = "x", endian = "big")]
    x: f64,
}

fn main() {}
