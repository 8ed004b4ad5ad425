#[derive(npy_core::NpyRecord)]
struct Point {
    x: f64,
    name: String,
}

fn main() {}
