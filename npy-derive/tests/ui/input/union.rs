#[derive(npy_core::NpyRecord)]
union Bits {
    f: f32,
    u: u32,
}

fn main() {}
