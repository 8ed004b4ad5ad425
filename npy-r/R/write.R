# Writing .npy files and .npz archives, atomically: a failed write leaves no file (and
# any old file as it was).

#' Write an R value as a NumPy `.npy` file
#'
#' @param x A vector, matrix or array (written in Fortran order, so NumPy reads the same
#'   indices without a copy), or a data.frame (written as a record array, a field per
#'   column; matrix columns as subarray fields). A value read by `read_npy` keeps its
#'   dtype (attribute `npy_dtype`) and order, so NumPy gets the file's bytes back.
#' @param path The file to write. It appears whole or not at all (written beside it, then
#'   renamed over it): a failed write leaves any old file as it was.
#' @param durable Also sync the file to disk before the rename (and the directory after),
#'   so that it survives a power cut; as Python's `npy.save(durable=True)`.
#' @return `path`, invisibly.
#' @export
write_npy <- function(x, path, durable = FALSE) {
  path <- check_path(path)
  check_flag(durable)
  npy_call(npyr_write_npy(x, path, durable), path)
  invisible(path)
}

#' Write R values as a NumPy `.npz` archive
#'
#' @param x A named list of values `write_npy` takes; each is a member.
#' @param path The archive to write.
#' @param compression `"stored"` (as `np.savez`), `"deflate"` (as
#'   `np.savez_compressed`) or `"zstd"`.
#' @param level The compression level (deflate 1 to 9, zstd 1 to 22); `NULL` for the
#'   default (6 and 8).
#' @inheritParams write_npy
#' @return `path`, invisibly.
#' @export
write_npz <- function(x, path, compression = c("stored", "deflate", "zstd"), level = NULL, durable = FALSE) {
  path <- check_path(path)
  compression <- match.arg(compression)
  if (!is.list(x) || is.data.frame(x)) npy_abort("`x` must be a named list of arrays")
  if (length(x) > 0 && (is.null(names(x)) || any(names(x) == "" | is.na(names(x))))) {
    npy_abort("every member of `x` needs a name")
  }
  if (anyDuplicated(names(x))) npy_abort("member names must differ")
  if (!is.null(level) && (!is.numeric(level) || length(level) != 1L || is.na(level))) {
    npy_abort("`level` must be one number")
  }
  check_flag(durable)
  npy_call(npyr_write_npz(x, path, compression, level, durable), path)
  invisible(path)
}

check_flag <- function(flag) {
  if (!is.logical(flag) || length(flag) != 1L || is.na(flag)) npy_abort("`durable` must be TRUE or FALSE")
}
