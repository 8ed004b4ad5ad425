# The Rust functions (src/rust/src/lib.rs), called through the routines extendr registers.

npyr_read_npy <- function(path, rows, cols, bit64) .Call(wrap__npyr_read_npy, path, rows, cols, bit64)

npyr_read_member <- function(path, name, rows, cols, bit64) {
  .Call(wrap__npyr_read_member, path, name, rows, cols, bit64)
}

npyr_members <- function(path) .Call(wrap__npyr_members, path)

npyr_write_npy <- function(x, path, durable) .Call(wrap__npyr_write_npy, x, path, durable)

npyr_write_npz <- function(x, path, compression, level, durable) {
  .Call(wrap__npyr_write_npz, x, path, compression, level, durable)
}
