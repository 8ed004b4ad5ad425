#[derive(npy_core::NpyRecord)]
#[npy(endian = "big")]
#[npy(endian = "little")]
struct Point {
    #[npy(rename = "a", rename = "b")]
    x: f64,
}

fn main() {}
