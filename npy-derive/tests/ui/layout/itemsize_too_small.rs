#[derive(npy_core::NpyRecord)]
#[npy(itemsize = 4)]
struct Point {
    x: f64,
}

fn main() {}
