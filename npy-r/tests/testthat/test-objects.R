# Object arrays NumPy pickled (tests/numpy_expect.py writes them): R lists, read by
# npy-core's restricted decoder, which runs nothing and needs no Python.

objects_dir <- function() file.path(dirname(needed_env("NPY_R_EXPECTED")), "objects")

test_that("np.save(dict) reads as a named list", {
  d <- read_npy(file.path(objects_dir(), "dict.npy"))
  expect_identical(names(d), c("name", "gain", "ids", "ok", "none", "grid"))
  expect_identical(d$name, "trace")
  expect_identical(d$gain, 2.5)
  expect_identical(d$ids, list(1L, 2L, 3L))
  expect_true(d$ok)
  expect_null(d$none)
  expect_identical(as.vector(d$grid), c(0L, 3L, 1L, 4L, 2L, 5L))
  expect_identical(dim(d$grid), c(2L, 3L))
})

test_that("a ragged array reads as a list of arrays", {
  r <- read_npy(file.path(objects_dir(), "ragged.npy"))
  expect_length(r, 3)
  expect_identical(as.character(r[[1]]), c("0", "1", "2"))
  expect_identical(as.vector(r[[2]]), c(1.5, -2))
  expect_identical(length(r[[3]]), 0L)
  expect_identical(attr(r, "npy_dtype"), "'|O'")
})

test_that("strings with None, and 2-d nested values, keep NumPy's indices", {
  s <- read_npy(file.path(objects_dir(), "strings.npy"))
  expect_identical(s[[1]], "a")
  expect_null(s[[2]])
  expect_identical(s[[3]], "\u00e9t\u00e9")
  n <- read_npy(file.path(objects_dir(), "nested_2x2.npy"))
  expect_identical(dim(n), c(2L, 2L))
  expect_identical(n[[1, 2]], "x")
  expect_identical(n[[2, 1]], list(1L, 2L))
  expect_identical(n[[2, 2]], list(k = as.raw(c(0, 255))))
  expect_identical(read_npy(file.path(objects_dir(), "nested_2x2.npy"), rows = 2)[[1, 2]], list(k = as.raw(c(0, 255))))
})
