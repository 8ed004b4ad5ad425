# Every .npy file of the shared corpus (NumPy wrote them) read by read_npy: NumPy's
# values, dims and dtype, for every file whose values R can hold; the others load too.

test_that("every corpus file loads with NumPy's values, dims and dtype", {
  corpus <- needed_env("NPY_CORPUS")
  want <- expected()$corpus
  skip_values <- not_holdable()
  expect_gt(length(want), 100)
  for (file in names(want)) {
    x <- suppressWarnings(read_npy(file.path(corpus, file)))
    expect_identical(attr(x, "npy_dtype"), want[[file]]$descr, label = file)
    if (!(file %in% skip_values)) expect_numpy(x, want[[file]], file)
  }
})

test_that("the not-holdable list names corpus files that exist", {
  corpus <- needed_env("NPY_CORPUS")
  for (file in not_holdable()) expect_true(file.exists(file.path(corpus, file)), label = file)
})

test_that("values R cannot hold warn, naming the column", {
  corpus <- needed_env("NPY_CORPUS")
  expect_warning(read_npy(file.path(corpus, "scalar/le_u8.npy")), "lose precision", class = "npy_warning")
  expect_warning(read_npy(file.path(corpus, "scalar/le_i4.npy")), "NA in R's integers")
  expect_warning(read_npy(file.path(corpus, "exotic/unicode_invalid_codepoints.npy")), "U\\+FFFD")
})

test_that("indices are NumPy's in C and Fortran order", {
  corpus <- needed_env("NPY_CORPUS")
  c_order <- read_npy(file.path(corpus, "shape/2x3x4_be_i2.npy"))
  f_order <- read_npy(file.path(corpus, "fortran/2x3x4_be_i2_F.npy"))
  want_c <- expected()$corpus[["shape/2x3x4_be_i2.npy"]]
  expect_identical(dim(c_order), c(2L, 3L, 4L))
  expect_identical(dim(f_order), c(2L, 3L, 4L))
  # R's column-major values are NumPy's ravel(order="F").
  expect_identical(as.vector(c_order), as.integer(unlist(want_c$columns[[1]]$values)))
  expect_identical(attr(c_order, "npy_order"), "C")
  expect_identical(attr(f_order, "npy_order"), "F")
})

test_that("rows and cols read only those, as NumPy's slices", {
  corpus <- needed_env("NPY_CORPUS")
  f <- file.path(corpus, "record/traces_packed.npy")
  all <- read_npy(f)
  some <- read_npy(f, rows = c(5, 1, 48), cols = c("trace_id", "samples"))
  expect_identical(names(some), c("trace_id", "samples"))
  expect_identical(some$trace_id, all$trace_id[c(5, 1, 48)])
  expect_identical(some$samples, all$samples[c(5, 1, 48), , drop = FALSE])
  m <- read_npy(file.path(corpus, "fortran/3x4_le_f8_F.npy"))
  two <- read_npy(file.path(corpus, "fortran/3x4_le_f8_F.npy"), rows = c(3, 1))
  expect_identical(as.vector(two), as.vector(m[c(3, 1), ]))
  expect_identical(dim(two), c(2L, 4L))
  expect_identical(attr(two, "npy_order"), "F")
  c_m <- read_npy(file.path(corpus, "legacy/no_growth_padding.npy"))
  expect_equal(read_npy(file.path(corpus, "legacy/no_growth_padding.npy"), rows = 2:3, cols = c(4, 1)),
    c_m[2:3, c(4, 1), drop = FALSE], ignore_attr = TRUE)
  expect_error(read_npy(f, rows = 49), "beyond the array's 48 rows", class = "npy_error")
  expect_error(read_npy(f, cols = "nope"), "no field 'nope'", class = "npy_error")
})
