// The package's init: registers the Rust functions extendr exports (see rust/src/lib.rs).
void R_init_npy_extendr(void *dll);

void R_init_npy(void *dll) {
    R_init_npy_extendr(dll);
}
