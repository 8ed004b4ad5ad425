//! SQL over generated `.npy` / `.npz` tables, checked against npy-core's reads of the same
//! files, and over an S3 bucket ([`s3`], ignored without the local server CI starts). One
//! test binary (each binary linking DataFusion costs a long link and 280 MB).

// npy-store's counting store (the S3 tests use part of it).
#[allow(dead_code)]
#[path = "../../../npy-store/tests/support/counting.rs"]
mod counting;

mod aggregate;
mod errors;
mod filters;
mod integrity;
mod npz;
mod parts;
mod plans;
mod queries;
mod s3;
mod support;
mod tables;
mod write;
