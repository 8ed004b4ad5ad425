#[derive(npy_core::NpyRecord)]
struct Point {
    x: f64,
    #[npy(skip, rename = "label", title = "Label")]
    label: String,
}

fn main() {}
