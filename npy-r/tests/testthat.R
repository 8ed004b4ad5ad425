# Run by R CMD check, and by `cargo xtask r` (which sets the environment helper-npy.R
# reads: where NumPy's expectations are and where files for NumPy to check go).
library(testthat)
library(npy)

test_check("npy")
