#[derive(npy_core::NpyRecord)]
#[npy(align, itemsize = 32)]
#[repr(C)]
struct Point {
    #[npy(offset = 8)]
    x: f64,
}

fn main() {}
