#[derive(npy_core::NpyRecord)]
struct Pair<T> {
    a: T,
    b: T,
}

fn main() {
    let _ = <Pair<String> as npy_core::NpyRecord>::dtype();
}
