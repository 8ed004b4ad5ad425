#[derive(npy_core::NpyRecord)]
enum Kind {
    Shot,
    Receiver,
}

fn main() {}
