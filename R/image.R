# Image helpers for the patch experiments of Hughes & Sudderth: a small
# reader for portable graymaps and the cutting of images into patches.

#' Read a portable graymap (PGM) image
#'
#' Reads binary (`P5`) and plain (`P2`) PGM files, 8 or 16 bits deep.
#'
#' @param path Path to a `.pgm` file (may be gzip-compressed).
#' @returns A numeric matrix with the image's rows in rows, values scaled to
#'   \[0, 1\] (pixel value divided by the file's maximum value).
#' @examples
#' img <- read_pgm(system.file("extdata", "nagasaki-boats.pgm", package = "sparsevi"))
#' dim(img)
#' @export
read_pgm <- function(path) {
  path <- check_string(path, "path")
  if (!file.exists(path)) {
    abort(sprintf("`path` (\"%s\") does not exist.", path), "argument")
  }
  con <- gzfile(path, "rb")
  on.exit(close(con))
  bytes <- readBin(con, "raw", n = file.size(path) * 20 + 1e6)
  # header: magic, width, height, maxval separated by whitespace/comments
  pos <- 1L
  n <- length(bytes)
  ws <- as.raw(c(9, 10, 11, 12, 13, 32))
  token <- function() {
    repeat {
      while (pos <= n && bytes[pos] %in% ws) pos <<- pos + 1L
      if (pos <= n && bytes[pos] == as.raw(35)) {
        while (pos <= n && bytes[pos] != as.raw(10)) pos <<- pos + 1L
      } else {
        break
      }
    }
    start <- pos
    while (pos <= n && !(bytes[pos] %in% ws)) pos <<- pos + 1L
    rawToChar(bytes[start:(pos - 1L)])
  }
  bad <- function() {
    abort(sprintf("`path` (\"%s\") is not a valid PGM file.", path), "data",
          call = sys.call(-2))
  }
  magic <- tryCatch(token(), error = function(e) "")
  if (!magic %in% c("P5", "P2")) bad()
  dims <- suppressWarnings(as.integer(c(token(), token(), token())))
  if (anyNA(dims) || any(dims < 1L) || dims[3L] > 65535L) bad()
  w <- dims[1L]
  h <- dims[2L]
  maxval <- dims[3L]
  if (magic == "P5") {
    pos <- pos + 1L # the single whitespace after maxval
    nb <- if (maxval < 256L) 1L else 2L
    need <- w * h * nb
    if (n - pos + 1L < need) bad()
    px <- as.integer(bytes[pos:(pos + need - 1L)])
    if (nb == 2L) px <- px[c(TRUE, FALSE)] * 256L + px[c(FALSE, TRUE)]
  } else {
    rest <- rawToChar(bytes[pos:n])
    px <- suppressWarnings(as.integer(strsplit(trimws(rest), "[[:space:]]+")[[1L]]))
    if (length(px) < w * h || anyNA(px[seq_len(w * h)])) bad()
    px <- px[seq_len(w * h)]
  }
  matrix(px / maxval, nrow = h, ncol = w, byrow = TRUE)
}

# Write a binary 8-bit PGM (values in [0, 1]); used to make inst/extdata.
write_pgm <- function(img, path) {
  con <- file(path, "wb")
  on.exit(close(con))
  writeBin(charToRaw(sprintf("P5\n%d %d\n255\n", ncol(img), nrow(img))), con)
  writeBin(as.raw(pmin(255, pmax(0, round(t(img) * 255)))), con)
  invisible(path)
}

#' Cut an image into square patches
#'
#' Each `size` x `size` window, moved by `stride` pixels across and down,
#' becomes one row of the result (pixels in column-major order within the
#' patch), as in the image-patch experiments of Hughes and Sudderth. With
#' `remove_mean = TRUE` each patch's mean intensity is subtracted, leaving
#' the texture that a zero-mean Gaussian mixture (`fit_mixture(...,
#' likelihood = "zm_gaussian")`) models.
#'
#' @param img A numeric matrix (a grayscale image), without NA.
#' @param size Patch side in pixels, 1 <= size <= min(dim(img)); default 8.
#' @param stride Step between patches in pixels (>= 1), default 4.
#' @param remove_mean Subtract each patch's mean? Default `TRUE`.
#' @returns A numeric matrix with one patch per row and `size^2` columns;
#'   attributes `size` and `positions` (a two-column matrix of each patch's
#'   top-left row and column).
#' @examples
#' img <- matrix(seq_len(20 * 16) / 320, 20, 16)
#' P <- image_patches(img, size = 8, stride = 4)
#' dim(P)
#' @export
image_patches <- function(img, size = 8, stride = 4, remove_mean = TRUE) {
  if (!is.matrix(img) || !is.numeric(img)) {
    abort(sprintf("`img` must be a numeric matrix (a grayscale image), not %s.",
                  describe(img)), "argument")
  }
  if (anyNA(img) || any(!is.finite(img))) {
    abort("`img` contains NA, NaN or Inf pixels; fill them in first.", "data")
  }
  size <- check_count(size, "size", min = 1, max = min(dim(img)))
  stride <- check_count(stride, "stride", min = 1)
  remove_mean <- check_flag(remove_mean, "remove_mean")
  rows <- seq.int(1L, nrow(img) - size + 1L, by = stride)
  cols <- seq.int(1L, ncol(img) - size + 1L, by = stride)
  pos <- as.matrix(expand.grid(row = rows, col = cols))
  off <- as.vector(outer(0:(size - 1L), 0:(size - 1L) * nrow(img), `+`))
  start <- (pos[, "col"] - 1L) * nrow(img) + pos[, "row"]
  P <- matrix(img[outer(start, off, `+`)], nrow = length(start))
  if (remove_mean) P <- P - rowMeans(P)
  attr(P, "size") <- size
  attr(P, "positions") <- pos
  P
}
