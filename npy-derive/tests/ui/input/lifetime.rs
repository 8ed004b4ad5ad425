#[derive(npy_core::NpyRecord)]
struct View<'a> {
    x: f64,
    #[npy(skip)]
    name: &'a str,
}

fn main() {}
