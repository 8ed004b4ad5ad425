# The speed of the npy R package next to base R's floor and the readers R users reach for,
# in one R process: Rscript --vanilla bench.R --dir DIR --traces TRACES [--repeat K]
# [--python PYTHON] (`cargo xtask bench --only r` runs it, with R_LIBS naming the library
# the package is installed in; see xtask/src/bench.rs).
#
# DIR holds what inputs.py makes with NumPy (f8.npy: 100 MB of `<f8`); TRACES is the
# seismic example's file (`cargo run --release --example seismic`: 1,000,000 `Trace`
# records, align=True, 304 bytes each, 290 MiB). The files are read from the page cache:
# the rows time what each reader does with the bytes, not the disk.
#
# Rows (`bench <name> best=<s> median=<s> bytes=<n>`, as the repository's other bench
# programs print them):
# - f8_npy: `read_npy(f8)`, a double vector; f8_readbin: the same bytes by base R, the
#   floor: `readBin(con, "raw", header)` to skip the header, then `readBin(con, "double",
#   n)`.
# - traces_npy: `read_npy(traces)`, a data.frame with every field a column (the nested
#   receiver as dotted columns, the samples a 1,000,000 x 64 matrix column);
#   traces_readbin: `readBin(f, "raw", file.size(f))`, the floor of any read;
#   traces_fread: `data.table::fread` of the same rows as CSV (the samples as 64 columns;
#   written once with `data.table::fwrite`, its bytes in `bytes=`; every core a thread);
#   traces_reticulate: `np.load` through reticulate (the venv's Python) and each field
#   converted to R (`py_to_r(np.ascontiguousarray(a[field]))`), the same data.frame.
# - traces_tail: `read_npy(traces, rows = (n - 9):n)`, the last 10 rows (context).
# - write_npy: `write_npy` of the traces' data.frame as read (it keeps the file's dtype, so
#   it writes the file's 290 MiB); write_writebin: `writeBin` of a raw vector of the
#   file's bytes to a file, the floor. Each run writes a new file (the last one removed
#   before, outside the time).
#
# Every row runs K times (default 3) after one untimed warm-up round, in rounds that
# interleave npy's run with its peers' (each row of a group first in turn), so the noise of
# a shared machine falls on all alike; the garbage collector runs before each run (outside
# its time).
#
# Goals this program judges itself (`# goal: <key>: <what>: met` or `MISSED`; the table's
# goals, ratios of these rows, are xtask's): fread of the CSV at least 10 times read_npy's
# time, and reticulate + NumPy slower than read_npy. Each is stated first (`# goals: a |
# b`) only where its peer is installed (data.table; reticulate with a Python that has
# NumPy, and a reticulate that converts that NumPy's arrays: Debian's reticulate 1.28 gives
# NumPy 2's back unconverted, which counts as not installed): an absent peer is a `# not installed:` line, its row and goal not measured
# (context), never a missed goal.
#
# Before any timing, once: read_npy's values are checked against readBin's (the `<f8`),
# against NumPy's through reticulate (every field, where installed) and fread's (where
# installed); the last rows against the whole read's; write_npy's file read back against
# what it wrote. A difference ends the run with an error.

fail <- function(...) {
  message("bench.R: ", ...)
  quit(save = "no", status = 1)
}

parse_args <- function(argv) {
  args <- list(repeat_ = 3L, python = Sys.getenv("NPY_PYTHON", unset = NA))
  if (length(argv) %% 2 != 0) fail("every flag needs a value")
  for (i in seq(1, length(argv), by = 2)) {
    flag <- argv[[i]]
    value <- argv[[i + 1]]
    if (flag == "--dir") args$dir <- value
    else if (flag == "--traces") args$traces <- value
    else if (flag == "--python") args$python <- value
    else if (flag == "--repeat") args$repeat_ <- suppressWarnings(as.integer(value))
    else fail("unknown argument ", flag, "; usage: Rscript --vanilla bench.R --dir DIR --traces TRACES [--repeat K] [--python PYTHON]")
  }
  if (is.null(args$dir) || is.null(args$traces)) fail("--dir and --traces are needed")
  if (is.na(args$repeat_) || args$repeat_ < 1) fail("--repeat must be a whole number, at least 1")
  args
}

args <- parse_args(commandArgs(trailingOnly = TRUE))
suppressPackageStartupMessages(library(npy))

# The peers: which are here decides the goals stated, before anything else is printed.
have_data_table <- requireNamespace("data.table", quietly = TRUE)
# reticulate counts as installed where it converts NumPy arrays to R: the Debian package
# of an older reticulate loads NumPy 2 but gives its arrays back unconverted.
reticulate_absent <- if (!requireNamespace("reticulate", quietly = TRUE)) {
  "reticulate"
} else if (is.na(args$python)) {
  "a Python with NumPy for reticulate (no --python)"
} else {
  tryCatch({
    reticulate::use_python(args$python, required = TRUE)
    if (!reticulate::py_module_available("numpy")) {
      paste("NumPy in", args$python, "for reticulate")
    } else {
      probe <- reticulate::py_to_r(reticulate::import("numpy", convert = FALSE)$arange(3L))
      if (is.numeric(probe) && !inherits(probe, "python.builtin.object")) {
        NA
      } else {
        sprintf("a reticulate that converts NumPy %s arrays to R (reticulate %s gives them back unconverted)",
                as.character(reticulate::py_config()$numpy$version), as.character(packageVersion("reticulate")))
      }
    }
  }, error = function(e) paste("reticulate with", args$python, "-", conditionMessage(e)))
}
have_reticulate <- is.na(reticulate_absent)
GOALS <- c(if (have_data_table) "fread / read_npy", if (have_reticulate) "reticulate / read_npy")
if (length(GOALS) > 0) cat("# goals: ", paste(GOALS, collapse = " | "), "\n", sep = "")
if (!have_data_table) {
  cat("# not installed: data.table: traces_fread and its goal (fread at least 10 times read_npy's time) not measured, context\n")
}
if (!have_reticulate) {
  cat("# not installed: ", reticulate_absent,
      ": traces_reticulate and its goal (slower than read_npy) not measured, context\n", sep = "")
}

goal <- function(key, text, met) {
  if (!key %in% GOALS) fail("goal ", key, " is not one of GOALS")
  cat("# goal: ", key, ": ", text, ": ", if (met) "met" else "MISSED", "\n", sep = "")
}

report <- function(name, seconds, bytes) {
  cat(sprintf("bench %s best=%.9f median=%.9f bytes=%.0f\n", name, min(seconds), median(seconds), bytes))
  flush(stdout())
}

# A row of a group: what it runs, and what runs before each of its runs (untimed).
row <- function(run, before = function() NULL, bytes) list(run = run, before = before, bytes = bytes)

# The rows of `group` (a named list of `row`s) in K rounds after a warm-up round, each
# round starting at another row; reports each row and returns its best times.
rounds <- function(group, k = args$repeat_) {
  times <- lapply(group, function(r) numeric(0))
  n <- length(group)
  for (round in 0:k) {
    for (j in ((seq_len(n) + round - 1) %% n) + 1) {
      r <- group[[j]]
      r$before()
      invisible(gc(verbose = FALSE))
      start <- as.double(Sys.time())
      r$run()
      seconds <- as.double(Sys.time()) - start
      if (round > 0) times[[j]] <- c(times[[j]], seconds)
    }
  }
  for (name in names(group)) report(name, times[[name]], group[[name]]$bytes)
  vapply(times, min, 0)
}

# Values without attributes (read_npy's `npy_dtype`), for comparisons.
bare <- function(x) {
  attributes(x) <- if (is.matrix(x)) list(dim = dim(x)) else NULL
  x
}
same_columns <- function(a, b) {
  length(a) == length(b) && all(vapply(seq_along(a), function(i) identical(bare(a[[i]]), bare(b[[i]])), TRUE))
}

# The `<f8`: read_npy against readBin of the same bytes.
f8 <- file.path(args$dir, "f8.npy")
if (!file.exists(f8)) fail(f8, " is missing (cargo xtask bench --only r makes it; see inputs.py)")
preamble <- readBin(f8, "raw", 12)
if (!identical(preamble[1:6], as.raw(c(0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59))) || preamble[7] != as.raw(1)) {
  fail(f8, " is not a version 1.0 .npy file")
}
f8_offset <- 10 + as.integer(preamble[9]) + 256L * as.integer(preamble[10])
f8_n <- (file.size(f8) - f8_offset) / 8
read_f8_readbin <- function() {
  con <- file(f8, "rb")
  on.exit(close(con))
  readBin(con, "raw", f8_offset)
  readBin(con, "double", f8_n)
}
if (!identical(bare(read_npy(f8)), read_f8_readbin())) fail("read_npy(f8.npy) is not readBin's values")
f8_best <- rounds(list(
  f8_npy = row(function() read_npy(f8), bytes = f8_n * 8),
  f8_readbin = row(read_f8_readbin, bytes = f8_n * 8)
))

# The traces: every field as a column, next to the floor and the peers.
traces <- args$traces
if (!file.exists(traces)) fail(traces, " is missing (cargo run --release --example seismic makes it)")
size <- file.size(traces)
x <- read_npy(traces)
n <- nrow(x)
fields <- names(x)
cat(sprintf("# traces: %d rows, columns %s; %.0f bytes\n", n, paste(fields, collapse = ", "), size))

group <- list(
  traces_npy = row(function() read_npy(traces), bytes = size),
  traces_readbin = row(function() readBin(traces, "raw", size), bytes = size)
)

if (have_data_table) {
  data.table::setDTthreads(0)
  csv <- file.path(args$dir, "traces.csv")
  samples <- as.data.frame(x$samples)
  names(samples) <- paste0("samples.", seq_len(ncol(samples)))
  flat <- cbind(as.data.frame(lapply(x[fields != "samples"], bare), check.names = FALSE), samples)
  data.table::fwrite(flat, csv)
  rm(samples)
  back <- data.table::fread(csv)
  if (nrow(back) != n || !isTRUE(all.equal(as.data.frame(back), flat, check.attributes = FALSE))) {
    fail("fread of ", csv, " is not read_npy's values")
  }
  rm(back, flat)
  cat(sprintf("# fread: %s (%.0f bytes), %d threads\n", csv, file.size(csv), data.table::getDTthreads()))
  group$traces_fread <- row(function() data.table::fread(csv), bytes = file.size(csv))
}

if (have_reticulate) {
  np <- reticulate::import("numpy", convert = FALSE)
  # What a user of reticulate writes: np.load, then each field (nested ones by path) to R.
  read_reticulate <- function() {
    a <- np$load(traces)
    field <- function(path) {
      v <- a
      for (k in path) v <- reticulate::py_get_item(v, k)
      reticulate::py_to_r(np$ascontiguousarray(v))
    }
    df <- data.frame(
      trace_id = field("trace_id"), receiver.x = field(c("receiver", "x")),
      receiver.y = field(c("receiver", "y")), receiver.z = field(c("receiver", "z")),
      t0 = field("t0"), dt = field("dt"), flags = field("flags"), check.names = FALSE
    )
    df$samples <- field("samples")
    df
  }
  peer <- read_reticulate()
  if (!identical(names(peer), fields)) fail("reticulate's columns are ", paste(names(peer), collapse = ", "))
  # NumPy's uint8 flags arrive as integers, as read_npy's; compare values, not storage.
  same <- vapply(fields, function(f) isTRUE(all.equal(bare(peer[[f]]), bare(x[[f]]), tolerance = 0)), TRUE)
  if (!all(same)) fail("read_npy's ", paste(fields[!same], collapse = ", "), " are not NumPy's values")
  rm(peer)
  group$traces_reticulate <- row(read_reticulate, bytes = size)
}

tail_rows <- (n - 9):n
if (!same_columns(read_npy(traces, rows = tail_rows), lapply(x, function(c) if (is.matrix(c)) c[tail_rows, , drop = FALSE] else c[tail_rows]))) {
  fail("read_npy(rows = ", n - 9, ":", n, ") is not those rows of the whole read")
}
group$traces_tail <- row(function() read_npy(traces, rows = tail_rows), bytes = 10 * size / n)
traces_best <- rounds(group)

if (have_data_table) {
  ratio <- traces_best[["traces_fread"]] / traces_best[["traces_npy"]]
  goal("fread / read_npy", sprintf("fread's best time %.2f times read_npy's (at least 10)", ratio), ratio >= 10)
}
if (have_reticulate) {
  ratio <- traces_best[["traces_reticulate"]] / traces_best[["traces_npy"]]
  goal("reticulate / read_npy", sprintf("reticulate + np.load's best time %.2f times read_npy's (more than 1)", ratio), ratio > 1)
}

# Writes: the traces' data.frame as read, and the floor, writeBin of the file's bytes.
out_npy <- file.path(args$dir, "write_npy.npy")
out_bin <- file.path(args$dir, "write_writebin.bin")
bytes <- readBin(traces, "raw", size)
write_npy(x, out_npy)
if (!same_columns(read_npy(out_npy), x) || file.size(out_npy) != size) {
  fail("write_npy's file does not read back as the traces (or is not their size)")
}
invisible(rounds(list(
  write_npy = row(function() write_npy(x, out_npy), before = function() unlink(out_npy), bytes = size),
  write_writebin = row(function() writeBin(bytes, out_bin), before = function() unlink(out_bin), bytes = size)
)))
unlink(c(out_npy, out_bin))
