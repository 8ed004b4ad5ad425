#[derive(npy_core::NpyRecord, Clone, Copy)]
struct Receiver {
    x: f64,
    z: f32,
}

#[derive(npy_core::NpyRecord)]
#[npy(packed)]
#[repr(C, packed)]
struct Trace {
    id: i32,
    receiver: Receiver,
}

fn main() {}
