struct Handle;

#[derive(npy_core::NpyRecord)]
struct Point {
    x: f64,
    #[npy(skip)]
    handle: Handle,
}

fn main() {}
