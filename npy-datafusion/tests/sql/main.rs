//! SQL over generated `.npy` / `.npz` tables, checked against npy-core's reads of the same
//! files. One test binary (each binary linking DataFusion costs a long link).

mod aggregate;
mod errors;
mod filters;
mod integrity;
mod npz;
mod parts;
mod plans;
mod queries;
mod support;
mod tables;
mod write;
