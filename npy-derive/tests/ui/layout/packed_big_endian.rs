#[derive(npy_core::NpyRecord)]
#[npy(packed, endian = "big")]
#[repr(C, packed)]
struct Point {
    flags: u8,
    x: f64,
}

fn main() {}
