# The main job's traces (cargo run --release --example seismic): every field a column
# equal to NumPy's; rows and cols subsets equal to NumPy's slices.

test_that("the traces read as columns equal to NumPy's", {
  want <- expected()$traces
  t <- read_npy(needed_env("NPY_TRACES"))
  expect_identical(nrow(t), as.integer(want$rows))
  expect_identical(attr(t, "npy_dtype"), want$descr)
  for (path in names(want$sums)) {
    expect_equal(sum(as.numeric(t[[path]])), as.numeric(want$sums[[path]]), tolerance = 1e-12, label = path)
  }
})

test_that("rows and cols of the traces are NumPy's slices", {
  want <- expected()$traces
  rows <- as.numeric(unlist(want$subset_rows))
  cols <- unlist(want$subset_cols)
  t <- read_npy(needed_env("NPY_TRACES"), rows = rows, cols = cols)
  expect_numpy(t, want$subset, "traces subset")
})
