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
#'   the threads of GCC's OpenMP runtime and the package's own do not
#'   survive a fork (a child that starts OpenMP threads after its parent
#'   has used them waits forever);
#' * a build without OpenMP uses one.
#'
#' The default is one thread. On a quiet two-core machine two threads run
#' the default call `fit_lda(x, K = 100)` 1.05x to 1.4x as fast as one on
#' the package's seven benchmark corpora (1.4x to 1.8x at K = 1000 on 60,000
#' paragraphs, on different days), and the other engines 1.1x to 1.8x. The
#' threads meet after every minibatch, so beside a busy program they gain
#' nothing or lose (below). Give `threads` (or set the option) where the
#' cores are free.
#'
#' @section Threads on a busy machine:
#' A thread that waits for the others must not hold a core that another
#' program needs. The local steps of [fit_lda()]'s engines, the work of
#' every minibatch, run on the package's own threads, which spin for at
#' most a millisecond or two and then sleep while R works between
#' minibatches. On four benchmark corpora at K = 100, beside a busy loop on
#' one of two cores, two threads ran the default call ([scvb0]) at 0.78x to
#' 0.96x of one thread (0.35x to 0.64x when the step ran on OpenMP's
#' threads), and on a quiet machine at 1.11x to 1.29x, with less CPU time
#' than before. The other engines do more work per minibatch and lost less
#' to OpenMP's waits: on kos beside the busy loop, OPE's default call went
#' from 1.00x to 1.16x, Gibbs within SVI's from 0.98x to 1.13x and vb's
#' stayed at 1.14x-1.16x; quiet, they ran at 1.66x-1.71x
#' (`inst/bench/threads.R`, results in `inst/bench/results/scale.txt`).
#'
#' Mixtures, fast-VDP, the coherence and left-to-right scores and the
#' starts use OpenMP's threads. GCC's OpenMP runtime, the one R uses on
#' Linux, makes a waiting thread spin for a few milliseconds before it
#' sleeps. Where the cores may be busy, set the environment variable
#' `OMP_WAIT_POLICY=passive` (part of the OpenMP standard) in the shell or
#' job script that starts R (`OMP_WAIT_POLICY=passive Rscript analysis.R`,
#' or `export OMP_WAIT_POLICY=passive` before R): OpenMP's threads then
#' sleep as soon as they wait. The runtime reads the variable once, when R
#' starts, so `Sys.setenv()` and `~/.Renviron` come too late. Measured on
#' the default call before its local step had threads of its own: beside a
#' busy loop two threads ran at 0.88x to 1.08x of one thread with the
#' variable, against 0.33x to 0.6x without. The setting applies to every
#' OpenMP program in the session, not only to this package. Workers that
#' [sparsevi_workers()] starts on this machine get it unless the session's
#' environment sets it.
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
