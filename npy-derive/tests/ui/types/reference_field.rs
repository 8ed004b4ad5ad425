#[derive(npy_core::NpyRecord)]
struct Point {
    x: f64,
    name: &'static str,
}

fn main() {}
