#[derive(npy_core::NpyRecord)]
struct Point {
    #[npy(rename = "y")]
    x: f64,
    y: f64,
}

fn main() {}
