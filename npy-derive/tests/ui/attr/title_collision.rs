#[derive(npy_core::NpyRecord)]
struct Point {
    #[npy(title = "y")]
    x: f64,
    y: f64,
}

fn main() {}
