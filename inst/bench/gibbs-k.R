# Gibbs within SVI on a small corpus (issue 20): a one-pass fit over the
# first 1,000 kos documents at K = 100 and K = 1000, the whole fit_lda()
# call (defaults otherwise; doc_topics default), CPU seconds, the median of
# 3 runs; the paper's point is cost sublinear in K (target: K = 1000 at most
# 3x K = 100, at every corpus size). Run from the package root:
#   nice -n 10 Rscript inst/bench/gibbs-k.R
# Environment: SPARSEVI_BENCH_LIB (library of the sparsevi to run);
# SPARSEVI_BENCH_CORPUS ("kos", the default, or "wikipara") and
# SPARSEVI_BENCH_DOCS (documents: the first 1,000 by default; "all" for the
# whole of kos; wikipara reads its first N paragraphs), e.g.
#   SPARSEVI_BENCH_DOCS=all nice -n 10 Rscript inst/bench/gibbs-k.R
#   SPARSEVI_BENCH_CORPUS=wikipara SPARSEVI_BENCH_DOCS=20000 nice -n 10 Rscript inst/bench/gibbs-k.R
# Each row also splits the call: the start (lda_init_state(), timed apart),
# training (the trace's CPU seconds) and the rest (the finish: the fit's
# dense topics, kept document proportions).
# Appends to inst/bench/results/gibbs-k.txt.
lib <- Sys.getenv("SPARSEVI_BENCH_LIB", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()
say <- bench_logger(bench_out("gibbs-k.txt"))
source(file.path(bench_dir, "bench-data.R"))
corpus <- Sys.getenv("SPARSEVI_BENCH_CORPUS", "kos")
n_docs <- Sys.getenv("SPARSEVI_BENCH_DOCS", if (smoke) "60" else "1000")
Ks <- if (smoke) c(4L, 8L) else c(100L, 1000L)
n_rep <- if (smoke) 1L else 3L
if (corpus == "wikipara") {
  x <- bench_corpus(sprintf("wikipara%d", as.integer(n_docs)))
} else {
  x <- bench_corpus(corpus)
  if (n_docs != "all") x <- sparsevi:::dtm_subset(x, seq_len(as.integer(n_docs)))
}
cpu_s <- function(t1) t1[["user.self"]] + t1[["sys.self"]]
cpu <- function(K) {
  invisible(gc())
  t0 <- proc.time()
  # gibbs's settings at 06ddbb6, named
  f <- fit_lda(x, K = K, local = "gibbs", global = "stochastic", alpha = 0.1, eta = 0.2,
               init = "bregman", step_scale = 1, tau = 1, kappa = 0.6, reuse_dead = FALSE,
               passes = 1, seed = 1,
               threads = 1, progress = FALSE)
  whole <- cpu_s(proc.time() - t0)
  init_used <<- f$control$init
  fits[[as.character(K)]] <<- f
  invisible(gc())
  t0 <- proc.time()
  sparsevi:::lda_init_state(x, f$control)
  start <- cpu_s(proc.time() - t0)
  c(whole, max(f$trace$cpu_seconds), start)
}
bench_header(say, sprintf("== gibbs one pass (inst/bench/gibbs-k.R), %s, %s documents (D = %d, V = %d); sparsevi from %s; load %s",
                           corpus, n_docs, nrow(x), ncol(x),
                           if (nzchar(lib)) lib else "default library",
                           paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
res <- list()
fits <- list()
init_used <- NA
for (K in Ks) {
  r <- replicate(n_rep, cpu(K))
  res[[as.character(K)]] <- m <- apply(r, 1, stats::median)
  bench_header(say, fits = stats::setNames(fits[as.character(K)], sprintf("K = %d", K)))
  say("  K = %4d: whole call %.2f s CPU (training %.2f s; start %.2f s, init = \"%s\"; rest %.2f s), median of %d",
      K, m[1], m[2], m[3], init_used, m[1] - m[2] - m[3], n_rep)
}
say("  K = %d over K = %d, whole call: %.2fx (target <= 3x)", Ks[2], Ks[1],
    res[[2]][1] / res[[1]][1])
attr(say, "close")()
