#' Number of threads used by sparsevi
#'
#' Every engine takes a `threads` argument whose default is
#' `getOption("sparsevi.threads", 1L)`. Results never depend on it: blocks of
#' documents, not threads, own random streams and partial sums.
#'
#' @param threads A whole number of threads, at least 1. Under
#'   `R CMD check` (when `_R_CHECK_LIMIT_CORES_` is set) at most 2 are used.
#' @returns The number of threads that will be used, an integer.
#' @examples
#' sparsevi_threads()
#' sparsevi_threads(2)
#' @export
sparsevi_threads <- function(threads = getOption("sparsevi.threads", 1L)) {
  threads <- check_count(threads, "threads", min = 1, max = 1024)
  if (nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_")) ||
      identical(Sys.getenv("NOT_CRAN"), "false")) {
    threads <- min(threads, 2L)
  }
  if (!.Call(ffi_svi_has_openmp)) threads <- 1L
  threads
}

# A 64-bit seed for the C random streams, as two 32-bit halves in doubles.
# With `seed` given it is used as is (the user's RNG state is
# untouched); otherwise it is drawn from R's RNG.
resolve_seed <- function(seed, call = caller_call()) {
  if (is.null(seed)) {
    return(floor(runif(2L) * 4294967296))
  }
  if (!is.numeric(seed) || length(seed) != 1L || is.na(seed) ||
      !is.finite(seed) || seed != round(seed) || abs(seed) >= 2^53) {
    abort(sprintf("`seed` must be NULL or a single whole number, not %s.",
                  describe(seed)), "argument", call = call)
  }
  seed <- abs(seed)
  c(floor(seed / 4294967296), seed %% 4294967296)
}
