#[derive(npy_core::NpyRecord, Clone, Copy)]
struct Cached {
    x: f64,
    #[npy(skip)]
    hits: u32,
}

#[derive(npy_core::NpyRecord)]
#[repr(C, packed)]
struct Outer {
    id: u8,
    cached: Cached,
}

fn main() {}
