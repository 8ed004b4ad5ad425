# Bad input is an npy_error naming the file (and member): never a crash, a hang or a
# huge allocation. The Rust suite's hostile files (NPY_HOSTILE) go through read_npy and
# read_npz too.

read_any <- function(path) {
  if (grepl("\\.npz$", path, ignore.case = TRUE)) {
    z <- read_npz(path)
    for (name in names(z)) z[[name]]
    invisible(z)
  } else {
    read_npy(path)
  }
}

test_that("a truncated, a non-NumPy and a lying file are errors naming the file", {
  f <- out_path("bad", "short.npy")
  write_npy(as.double(1:1000), f)
  bytes <- readBin(f, "raw", file.size(f))
  writeBin(bytes[1:(length(bytes) - 8)], f)
  expect_error(read_npy(f), "short.npy", class = "npy_error")
  expect_error(read_npy(f, rows = 1000), "short.npy", class = "npy_error")
  g <- out_path("bad", "text.npy")
  writeLines("not a numpy file", g)
  expect_error(read_npy(g), "text.npy", class = "npy_error")
  # A header claiming 2^40 doubles over 8 bytes of data: refused before any allocation.
  h <- out_path("bad", "huge.npy")
  header <- "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }"
  header <- paste0(header, strrep(" ", 118 - nchar(header) - 1), "\n")
  writeBin(c(as.raw(c(0x93)), charToRaw("NUMPY"), as.raw(c(1, 0, 118, 0)), charToRaw(header), as.raw(rep(0, 8))), h)
  expect_error(read_npy(h), "huge.npy", class = "npy_error")
  expect_error(read_npy(out_path("bad", "absent.npy")), "absent.npy", class = "npy_error")
  expect_error(read_npz(f), "short.npy", class = "npy_error")
  expect_error(read_npy(f, int64 = "neither"), class = "error")
})

test_that("every hostile file of the Rust suite is read or refused with an npy_error", {
  dir <- needed_env("NPY_HOSTILE")
  files <- list.files(dir, full.names = TRUE, recursive = TRUE)
  expect_gt(length(files), 10)
  outcomes <- vapply(files, function(f) {
    tryCatch({
      suppressWarnings(read_any(f))
      "read"
    }, npy_error = function(e) {
      if (!grepl(basename(f), conditionMessage(e), fixed = TRUE)) {
        stop("the error does not name ", basename(f), ": ", conditionMessage(e))
      }
      "refused"
    })
  }, "")
  expect_true(all(outcomes %in% c("read", "refused")))
  expect_true(any(outcomes == "refused"))
})
