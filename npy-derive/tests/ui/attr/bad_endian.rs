#[derive(npy_core::NpyRecord)]
struct Point {
    #[npy(endian = "network")]
    x: f64,
}

fn main() {}
