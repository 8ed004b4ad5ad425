#[derive(npy_core::NpyRecord)]
#[repr(u8)]
enum Kind {
    Shot(f32),
    Receiver { depth: f64 },
}

fn main() {}
