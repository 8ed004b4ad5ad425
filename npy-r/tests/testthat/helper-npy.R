# What the tests compare with, from the environment `cargo xtask r` sets:
# - NPY_CORPUS: the shared corpus (files NumPy wrote);
# - NPY_R_EXPECTED: NumPy's values of it and of the traces (tests/numpy_expect.py);
# - NPY_TRACES: the main job's traces file;
# - NPY_R_OUT: a directory for the files R writes, which NumPy checks after the tests.
# A missing one fails the test that needs it: these tests do not skip.

needed_env <- function(name) {
  value <- Sys.getenv(name, unset = "")
  if (!nzchar(value)) {
    stop(name, " is not set: run the tests with `cargo xtask r`, which sets it")
  }
  value
}

expected <- local({
  cache <- NULL
  function() {
    if (is.null(cache)) {
      cache <<- jsonlite::fromJSON(needed_env("NPY_R_EXPECTED"), simplifyVector = FALSE)
    }
    cache
  }
})

# The corpus files whose values R cannot hold (tests/not-holdable.txt), by name.
not_holdable <- function() {
  file <- test_path("..", "not-holdable.txt")
  lines <- readLines(file)
  lines <- lines[!startsWith(lines, "#") & nzchar(lines)]
  sub(":.*$", "", lines)
}

# Hex of a string's code points, `width` bytes each, little-endian (1 for `S`, 4 for `U`).
code_hex <- function(s, width) {
  if (!nzchar(s)) return("")
  cps <- utf8ToInt(s)
  bytes <- unlist(lapply(cps, function(cp) {
    as.integer(vapply(seq_len(width) - 1L, function(k) (cp %/% 256^k) %% 256, 0))
  }))
  paste(sprintf("%02x", bytes), collapse = "")
}

raw_hex <- function(r) paste(sprintf("%02x", as.integer(r)), collapse = "")

# Seconds (or days, for Date) per unit of a datetime type string such as "<M8[us]".
unit_scale <- function(type, x) {
  unit <- sub("^.*\\[([0-9]*)([a-zA-Z]+)\\]$", "\\2", type)
  mult <- sub("^.*\\[([0-9]*)([a-zA-Z]+)\\]$", "\\1", type)
  mult <- if (nzchar(mult)) as.numeric(mult) else 1
  secs <- c(W = 604800, D = 86400, h = 3600, m = 60, s = 1, ms = 1e-3, us = 1e-6)[[unit]]
  if (inherits(x, "Date")) secs <- secs / 86400
  secs * mult
}

# integer64 values as decimals; bit64's NA is the bits of -2^63, which NumPy's value is.
int64_text <- function(x) {
  out <- as.character(x)
  out[is.na(x)] <- "-9223372036854775808"
  out
}

# Checks that R vector `x` (a leaf: values in R's order) holds NumPy's `values` (text, as
# tests/numpy_expect.py writes it) of dtype `type`.
expect_leaf <- function(x, type, values, label) {
  kind <- substr(type, 2, 2)
  values <- as.character(unlist(values))
  if (is.list(x) && kind %in% c("S", "U", "V")) {
    got <- vapply(x, raw_hex, "")
    if (kind == "U") values <- values # UTF-32LE hex on both sides
    expect_identical(got, values, label = label)
    return(invisible())
  }
  switch(kind,
    b = expect_identical(as.character(ifelse(x, "TRUE", "FALSE")), values, label = label),
    i = ,
    u = {
      if (inherits(x, "integer64")) {
        expect_identical(int64_text(x), values, label = label)
      } else {
        expect_identical(as.numeric(x), as.numeric(values), label = label)
      }
    },
    f = {
      want <- as.numeric(values)
      expect_identical(is.nan(x), is.nan(want), label = label)
      expect_identical(x[!is.nan(x)], want[!is.nan(want)], label = label)
    },
    c = {
      re <- as.numeric(values[c(TRUE, FALSE)])
      im <- as.numeric(values[c(FALSE, TRUE)])
      expect_identical(Re(x)[!is.nan(re)], re[!is.nan(re)], label = label)
      expect_identical(Im(x)[!is.nan(im)], im[!is.nan(im)], label = label)
    },
    M = ,
    m = {
      nat <- values == "NaT"
      expect_identical(as.logical(is.na(x)), nat, label = label)
      if (inherits(x, "integer64")) {
        expect_identical(int64_text(x)[!nat], values[!nat], label = label)
      } else {
        counts <- round(as.numeric(x)[!nat] / unit_scale(type, x))
        expect_identical(counts, as.numeric(values[!nat]), label = label)
      }
    },
    S = expect_identical(vapply(x, code_hex, "", width = 1L, USE.NAMES = FALSE), values, label = label),
    U = expect_identical(vapply(x, code_hex, "", width = 4L, USE.NAMES = FALSE), values, label = label),
    V = expect_identical(vapply(x, raw_hex, "", USE.NAMES = FALSE), values, label = label),
    stop("no comparison for ", type)
  )
}

# Checks an R value read from a file against NumPy's expectation of it.
expect_numpy <- function(x, want, label) {
  if (identical(want$kind, "record")) {
    expect_s3_class(x, "data.frame")
    expect_identical(nrow(x), as.integer(want$rows), label = label)
    expect_identical(names(x), names(want$columns), label = label)
    for (path in names(want$columns)) {
      col <- want$columns[[path]]
      v <- x[[path]]
      if (col$per != 1) {
        expect_identical(dim(v), as.integer(c(want$rows, col$per)), label = paste(label, path))
      }
      dim(v) <- NULL
      expect_leaf(v, col$type, col$values, paste(label, path))
    }
  } else {
    dims <- as.integer(unlist(want$dims))
    if (length(dims) >= 2) expect_identical(dim(x), dims, label = label)
    col <- want$columns[[1]]
    values <- if (is.list(x)) x else {
      a <- attributes(x)
      y <- as.vector(x)
      if (!is.null(a$class)) class(y) <- a$class
      for (k in c("units", "tzone")) if (!is.null(a[[k]])) attr(y, k) <- a[[k]]
      y
    }
    expect_leaf(values, col$type, col$values, label)
  }
}

# A fresh file name under NPY_R_OUT's `dir`, whose files NumPy checks after the tests.
out_path <- function(dir, name) {
  path <- file.path(needed_env("NPY_R_OUT"), dir, name)
  dir.create(dirname(path), recursive = TRUE, showWarnings = FALSE)
  path
}

# The inverse of expect_leaf: R vector `x`'s values as text, as written with dtype
# `type`, for tests/check_written.py to compare with what NumPy reads.
leaf_text <- function(x, type) {
  kind <- substr(type, 2, 2)
  if (is.list(x)) return(vapply(x, raw_hex, "", USE.NAMES = FALSE))
  if (is.factor(x)) x <- as.character(x)
  switch(kind,
    b = as.character(ifelse(x, "TRUE", "FALSE")),
    i = ,
    u = if (inherits(x, "integer64")) int64_text(x) else formatC(as.numeric(x), format = "f", digits = 0),
    f = number_text(as.numeric(x)),
    c = as.vector(rbind(number_text(Re(x)), number_text(Im(x)))),
    M = ,
    m = ifelse(is.na(x), "NaT", formatC(round(as.numeric(x) / unit_scale(type, x)), format = "f", digits = 0)),
    S = vapply(x, code_hex, "", width = 1L, USE.NAMES = FALSE),
    U = vapply(x, code_hex, "", width = 4L, USE.NAMES = FALSE),
    stop("no text for ", type)
  )
}

number_text <- function(x) {
  out <- sprintf("%.17g", x)
  out[is.nan(x)] <- "NaN"
  out[x %in% Inf] <- "Inf"
  out[x %in% -Inf] <- "-Inf"
  out
}

# Records what NumPy must read from `file` (a path under NPY_R_OUT/written): its descr,
# order and shape, and each leaf's values (`leaves`: path = list(type, per, R vector)).
# tests/check_written.py compares.
spec <- local({
  entries <- list()
  function(file, descr, fortran, shape, leaves, compression = NULL) {
    cols <- lapply(leaves, function(l) {
      list(type = l[[1]], per = l[[2]], values = as.list(leaf_text(l[[3]], l[[1]])))
    })
    entries[[file]] <<- list(descr = descr, fortran_order = fortran, shape = as.list(shape),
      columns = cols, compression = compression)
    jsonlite::write_json(entries, out_path("written", "spec.json"), auto_unbox = TRUE, digits = NA, null = "null")
  }
})
