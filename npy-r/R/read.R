# Reading .npy files and .npz archives. The work is done in Rust (src/rust, over
# npy-core); these wrappers check arguments, choose how 64-bit integers arrive and turn
# failures into conditions of class `npy_error`.

#' Read a NumPy `.npy` file
#'
#' @param path The file.
#' @param rows Row numbers (from 1, along the first axis) to read, in the order wanted;
#'   `NULL` reads all. Only those rows' bytes are read from a `.npy` file.
#' @param cols For a record array, the fields to read (`"t0"`, a nested field
#'   `"receiver.x"`, or a nested record `"receiver"` for all its fields); for a matrix,
#'   column numbers. `NULL` reads all.
#' @param int64 How 64-bit integers arrive: `"auto"` (`bit64::integer64` when bit64 is
#'   installed, else double), `"integer64"` or `"double"` (with a warning naming the
#'   column when a value loses precision).
#' @return A vector, matrix or array with NumPy's indices (`x[i, j]` is `a[i-1, j-1]`),
#'   or a `data.frame` for a record array; attribute `npy_dtype` holds the file's dtype.
#' @export
read_npy <- function(path, rows = NULL, cols = NULL, int64 = c("auto", "integer64", "double")) {
  path <- check_path(path)
  args <- read_args(rows, cols, int64)
  answer <- npy_call(npyr_read_npy(path, args$rows, args$names, args$bit64), path)
  finish_read(answer, args)
}

#' Read a NumPy `.npz` archive
#'
#' @param path The archive.
#' @param member A member's name: reads that member (as `read_npy` reads a file). `NULL`
#'   gives the archive, whose members are read when asked: `z[["t0"]]`, `z$t0`.
#' @inheritParams read_npy
#' @return The member's value, or an `npy_npz` object: `names(z)`, `z$members` (name,
#'   compression, size and compressed size of each), `z[["name"]]`.
#' @export
read_npz <- function(path, member = NULL, rows = NULL, cols = NULL,
                     int64 = c("auto", "integer64", "double")) {
  path <- check_path(path)
  int64 <- match.arg(int64)
  if (!is.null(member)) {
    return(read_member(path, member, rows, cols, int64))
  }
  if (!is.null(rows) || !is.null(cols)) {
    npy_abort("`rows` and `cols` apply to one member: give `member` too")
  }
  members <- npy_call(npyr_members(path), path)$value
  structure(list(path = path, members = members, int64 = int64), class = "npy_npz")
}

read_member <- function(path, member, rows, cols, int64) {
  if (!is.character(member) || length(member) != 1L || is.na(member)) {
    npy_abort("`member` must be one member's name")
  }
  args <- read_args(rows, cols, int64)
  answer <- npy_call(npyr_read_member(path, member, args$rows, args$names, args$bit64), path)
  finish_read(answer, args)
}

#' @export
names.npy_npz <- function(x) unclass(x)$members$name

#' @export
length.npy_npz <- function(x) nrow(unclass(x)$members)

#' @export
`[[.npy_npz` <- function(x, i, ...) {
  x <- unclass(x)
  if (is.numeric(i)) i <- x$members$name[[i]]
  if (identical(i, "members")) return(x$members)
  if (identical(i, "path")) return(x$path)
  read_member(x$path, i, NULL, NULL, x$int64)
}

#' @export
`$.npy_npz` <- function(x, name) x[[name]]

#' @export
print.npy_npz <- function(x, ...) {
  x <- unclass(x)
  cat("<npy_npz> ", x$path, ": ", nrow(x$members), " member(s)\n", sep = "")
  print(x$members, row.names = FALSE)
  invisible(x)
}

check_path <- function(path) {
  if (!is.character(path) || length(path) != 1L || is.na(path)) {
    npy_abort("`path` must be one file name")
  }
  path.expand(path)
}

read_args <- function(rows, cols, int64) {
  int64 <- match.arg(int64, c("auto", "integer64", "double"))
  bit64 <- switch(int64,
    auto = requireNamespace("bit64", quietly = TRUE),
    integer64 = {
      if (!requireNamespace("bit64", quietly = TRUE)) {
        npy_abort("int64 = \"integer64\" needs the bit64 package")
      }
      TRUE
    },
    double = FALSE
  )
  if (!is.null(rows)) {
    if (!is.numeric(rows) || anyNA(rows)) npy_abort("`rows` must be row numbers (from 1)")
    rows <- as.double(rows)
  }
  names <- NULL
  index <- NULL
  if (!is.null(cols)) {
    if (is.character(cols) && !anyNA(cols)) {
      names <- cols
    } else if (is.numeric(cols) && !anyNA(cols)) {
      index <- cols
    } else {
      npy_abort("`cols` must be field names or column numbers")
    }
  }
  list(rows = rows, names = names, index = index, bit64 = bit64)
}

finish_read <- function(answer, args) {
  for (w in answer$warnings) warning(npy_condition(w, "npy_warning", "warning"))
  x <- answer$value
  if (!is.null(args$index)) {
    d <- dim(x)
    if (length(d) != 2L) npy_abort("column numbers in `cols` apply to a 2-d array")
    if (any(args$index < 1 | args$index > d[2])) {
      npy_abort(sprintf("`cols`: the array has %d columns", d[2]))
    }
    dtype <- attr(x, "npy_dtype")
    x <- x[, args$index, drop = FALSE]
    attr(x, "npy_dtype") <- dtype
  }
  x
}

npy_condition <- function(message, class, base) {
  structure(class = c(class, base, "condition"), list(message = message, call = NULL))
}

npy_abort <- function(message) stop(npy_condition(message, "npy_error", "error"))

# The answer of a call into Rust, `list(value, warnings, error)`: its failure as an
# `npy_error`, and an R error the call raised (a bug: a Rust panic, which extendr turns
# into one) as an `npy_error` too.
npy_call <- function(expr, what) {
  answer <- tryCatch(expr, error = function(e) {
    if (inherits(e, "npy_error")) stop(e)
    message <- conditionMessage(e)
    # R's own errors (memory R cannot allocate) do not name the file: say which.
    npy_abort(if (grepl(what, message, fixed = TRUE)) message else paste0(what, ": ", message))
  })
  if (!is.null(answer$error)) npy_abort(answer$error)
  answer
}
