#' Number of threads used by sparsevi
#'
#' Every fit, prediction and score takes a `threads` argument whose default
#' is `getOption("sparsevi.threads", 1L)`. Results never depend on it, bit
#' for bit: blocks of documents or points, not threads, own the random
#' streams and the partial sums.
#'
#' Whatever is asked:
#' * under `R CMD check` (when `_R_CHECK_LIMIT_CORES_` is set) at most 2
#'   are used;
#' * in a child process made by `fork()` (`parallel::mclapply()`,
#'   [parallel::makeForkCluster()], future's `multicore` plan) one is used:
#'   the OpenMP runtime of GCC does not survive a fork, and a child that
#'   starts threads after its parent has used them waits forever;
#' * a build without OpenMP uses one.
#'
#' The default is one thread. On a quiet two-core machine two threads run
#' the default call `fit_lda(x, K = 100)` 1.05x to 1.4x as fast as one on
#' the package's seven benchmark corpora (1.4x to 1.8x at K = 1000 on 60,000
#' paragraphs, on different days), and the other engines 1.1x to 1.8x; but
#' the threads meet after every minibatch, and beside one busy program on
#' the other core the default call ran at 0.33x to 0.6x. Give `threads` (or
#' set the option) where the cores are free.
#'
#' @section Threads on a busy machine:
#' What slows threads down beside other programs is how GCC's OpenMP
#' runtime, the one R uses on Linux, makes a thread wait: it spins for a few
#' milliseconds before it sleeps, and a spinning thread holds a core that
#' another thread needs. Where the cores may be busy, set the environment
#' variable `OMP_WAIT_POLICY=passive` (part of the OpenMP standard) in the
#' shell or job script that starts R (`OMP_WAIT_POLICY=passive Rscript
#' analysis.R`, or `export OMP_WAIT_POLICY=passive` before R): threads then
#' sleep as soon as they wait. The runtime reads the variable once, when R
#' starts, so `Sys.setenv()` and `~/.Renviron` come too late. On four
#' benchmark corpora at K = 100, beside a busy loop on one of two cores, two
#' threads ran the default call at 0.88x to 1.08x of one thread with it,
#' against 0.33x to 0.6x without; on a quiet machine they used up to 38%
#' less CPU time, and the wall clock moved within the machine's noise
#' (`inst/bench/threads.R`, results in `inst/bench/results/scale.txt`). The
#' setting applies to every OpenMP program in the session, not only to this
#' package. Workers that [sparsevi_workers()] starts on this machine get it
#' unless the session's environment sets it.
#'
#' @param threads A whole number of threads, at least 1.
#' @returns The number of threads that will be used, an integer.
#' @examples
#' sparsevi_threads()
#' sparsevi_threads(2)
#' # for the rest of the session
#' old <- options(sparsevi.threads = 2)
#' sparsevi_threads()
#' options(old)
#' @export
sparsevi_threads <- function(threads = getOption("sparsevi.threads", 1L)) {
  threads <- check_count(threads, "threads", min = 1, max = 1024)
  if (nzchar(Sys.getenv("_R_CHECK_LIMIT_CORES_")) ||
      identical(Sys.getenv("NOT_CRAN"), "false")) {
    threads <- min(threads, 2L)
  }
  info <- .Call(ffi_svi_threads_info) # OpenMP built in, this process a fork's child
  if (info[[1L]] == 0L || info[[2L]] == 1L) threads <- 1L
  as.integer(threads)
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
