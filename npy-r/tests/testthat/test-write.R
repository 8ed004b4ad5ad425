# What R writes, for NumPy to read: the corpus written back (checked byte for byte by
# check_roundtrip.py --strict after the tests) and values made in R (checked by
# tests/check_written.py against the spec these tests record).

test_that("every corpus file is written back", {
  corpus <- needed_env("NPY_CORPUS")
  files <- list.files(corpus, pattern = "\\.np[yz]$", recursive = TRUE)
  cannot <- not_holdable()
  for (file in files) {
    out <- out_path("corpus", file)
    write <- function() {
      if (endsWith(file, ".npz")) {
        z <- read_npz(file.path(corpus, file))
        members <- setNames(lapply(names(z), function(n) z[[n]]), names(z))
        method <- if (any(z$members$compression == "deflated")) "deflate" else "stored"
        write_npz(members, out, compression = method)
      } else {
        write_npy(read_npy(file.path(corpus, file)), out)
      }
    }
    if (file %in% cannot) {
      # Written where R holds a nearby value; refused where it holds none (u8 beyond
      # 2^63, read as a double that rounds to 2^64).
      tryCatch(suppressWarnings(write()), npy_error = function(e) NULL)
    } else {
      expect_no_error(suppressWarnings(write()))
    }
  }
})

frame <- function() {
  d <- data.frame(
    id = c(1L, -2L, 2147483647L),
    x = c(1.5, NaN, -Inf),
    ok = c(TRUE, FALSE, TRUE),
    name = c("a", "b\u00e9\u4e2d", ""),
    day = as.Date(c("1970-01-01", "2024-02-29", NA)),
    at = as.POSIXct(c(0, 1700000000.123456, -1.5), origin = "1970-01-01", tz = "UTC"),
    level = factor(c("lo", "hi", "lo"))
  )
  d$m <- matrix(c(1, 2, 3, 4, 5, 6), 3, 2)
  d
}

test_that("a data.frame is a record array, a field per column", {
  d <- frame()
  f <- out_path("written", "frame.npy")
  write_npy(d, f)
  descr <- paste0("[('id', '<i4'), ('x', '<f8'), ('ok', '|b1'), ('name', '<U3'), ('day', '<M8[D]'), ",
    "('at', '<M8[us]'), ('level', '<U2'), ('m', '<f8', (2,))]")
  spec("frame.npy", descr, FALSE, 3, list(
    id = list("<i4", 1, d$id), x = list("<f8", 1, d$x), ok = list("|b1", 1, d$ok),
    name = list("<U3", 1, d$name), day = list("<M8[D]", 1, d$day), at = list("<M8[us]", 1, d$at),
    level = list("<U2", 1, d$level), m = list("<f8", 2, as.vector(d$m))
  ))
  back <- read_npy(f)
  expect_identical(attr(back, "npy_dtype"), descr)
  expect_identical(back$id, d$id)
  expect_identical(back$x, d$x)
  expect_identical(back$name, d$name)
  expect_identical(back$day, d$day)
  expect_equal(as.numeric(back$at), as.numeric(d$at), tolerance = 1e-15)
  expect_identical(back$level, as.character(d$level))
  expect_identical(unclass(back$m), unclass(d$m))
})

test_that("arrays are written in Fortran order, or in C order as read", {
  m <- matrix(as.double(1:12), 3, 4)
  write_npy(m, out_path("written", "matrix_f.npy"))
  spec("matrix_f.npy", "'<f8'", TRUE, c(3, 4), list(list("<f8", 1, as.vector(m))))
  a <- array(1:24, c(2, 3, 4))
  write_npy(a, out_path("written", "array_f.npy"))
  spec("array_f.npy", "'<i4'", TRUE, c(2, 3, 4), list(list("<i4", 1, as.vector(a))))
  c_order <- read_npy(file.path(needed_env("NPY_CORPUS"), "shape/2x3x4_be_i2.npy"))
  c_order[1, 2, 3] <- 7L
  write_npy(c_order, out_path("written", "array_c.npy"))
  spec("array_c.npy", "'>i2'", FALSE, c(2, 3, 4), list(list(">i2", 1, as.vector(c_order))))
  expect_identical(read_npy(out_path("written", "array_c.npy"))[1, 2, 3], 7L)
})

test_that("complex, raw, integer64, strings and datetimes are written as NumPy's", {
  z <- complex(real = c(1, -0.5), imaginary = c(NaN, 2))
  write_npy(z, out_path("written", "complex.npy"))
  spec("complex.npy", "'<c16'", FALSE, 2, list(list("<c16", 1, z)))
  r <- as.raw(c(0, 127, 255))
  write_npy(r, out_path("written", "raw.npy"))
  spec("raw.npy", "'|u1'", FALSE, 3, list(list("|u1", 1, as.integer(r))))
  big <- bit64::as.integer64(c("9007199254740993", "-9223372036854775807", "0"))
  write_npy(big, out_path("written", "int64.npy"))
  spec("int64.npy", "'<i8'", FALSE, 3, list(list("<i8", 1, big)))
  s <- c("x", "\u00ff\u00e9", "")
  attr(s, "npy_dtype") <- "'|S2'"
  write_npy(s, out_path("written", "bytes.npy"))
  spec("bytes.npy", "'|S2'", FALSE, 3, list(list("|S2", 1, s)))
  t <- as.difftime(c(1.5, NA, -2), units = "mins")
  write_npy(t, out_path("written", "delta.npy"))
  spec("delta.npy", "'<m8[us]'", FALSE, 3, list(list("<m8[us]", 1, as.difftime(as.numeric(t) * 60, units = "secs"))))
  expect_identical(read_npy(out_path("written", "complex.npy"))[2], z[2])
  expect_identical(read_npy(out_path("written", "raw.npy")), c(0L, 127L, 255L), ignore_attr = TRUE)
  expect_identical(as.character(read_npy(out_path("written", "int64.npy"))), as.character(big))
  expect_identical(as.vector(read_npy(out_path("written", "bytes.npy"))), as.vector(s))
  expect_identical(as.numeric(read_npy(out_path("written", "delta.npy"))), c(90, NA, -120))
})

test_that("npz archives are written with each compression", {
  d <- frame()
  for (method in c("stored", "deflate", "zstd")) {
    file <- paste0("members_", method, ".npz")
    write_npz(list(ids = 1:5, frame = d), out_path("written", file), compression = method)
    spec(file, NULL, NULL, NULL, list(), compression = method)
    z <- read_npz(out_path("written", file))
    expect_identical(names(z), c("ids", "frame"))
    expect_identical(z$members$compression, rep(if (method == "deflate") "deflated" else method, 2))
    expect_identical(as.vector(z[["ids"]]), 1:5)
    expect_identical(z$frame$name, d$name)
  }
})

test_that("what NumPy cannot hold is an error naming the column and row", {
  f <- out_path("refused", "x.npy")
  expect_error(write_npy(data.frame(a = 1:2, b = c(1L, NA)), f), "column 'b', row 2: NA", class = "npy_error")
  expect_error(write_npy(c(TRUE, NA), f), "row 2: NA", class = "npy_error")
  expect_error(write_npy(c("a", NA), f), "row 2: NA", class = "npy_error")
  lst <- data.frame(a = 1:2)
  lst$l <- list(1, "a")
  expect_error(write_npy(lst, f), "column 'l'", class = "npy_error")
  s <- "\u4e2d"
  attr(s, "npy_dtype") <- "'|S3'"
  expect_error(write_npy(s, f), "beyond U\\+00FF", class = "npy_error")
  x <- 300L
  attr(x, "npy_dtype") <- "'|u1'"
  expect_error(write_npy(x, f), "300 does not fit", class = "npy_error")
  expect_error(write_npz(list(1:3), f), "needs a name", class = "npy_error")
  expect_false(file.exists(f))
})
