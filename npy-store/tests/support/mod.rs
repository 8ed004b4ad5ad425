//! Test support shared by npy-store's tests.

pub mod counting;
