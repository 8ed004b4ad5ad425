#[derive(npy_core::NpyRecord)]
struct Point {
    x: f64,
    #[npy(offset = 4)]
    n: u8,
}

fn main() {}
