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
out_file <- file.path("inst", "bench", "results", "gibbs-k.txt")
source(file.path("inst", "bench", "bench-log.R"))
say <- bench_logger(out_file)
source(file.path("inst", "bench", "bench-data.R"))
corpus <- Sys.getenv("SPARSEVI_BENCH_CORPUS", "kos")
n_docs <- Sys.getenv("SPARSEVI_BENCH_DOCS", "1000")
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
  f <- fit_lda(x, K = K, local = "gibbs", passes = 1, seed = 1, progress = FALSE)
  whole <- cpu_s(proc.time() - t0)
  init_used <<- f$control$init
  invisible(gc())
  t0 <- proc.time()
  sparsevi:::lda_init_state(x, f$control)
  start <- cpu_s(proc.time() - t0)
  c(whole, max(f$trace$cpu_seconds), start)
}
commit <- tryCatch(system("git rev-parse --short HEAD", intern = TRUE), error = function(e) "?")
say("")
say("== gibbs one pass, %s, %s documents (D = %d, V = %d), %s; commit %s; sparsevi from %s; load %s",
    corpus, n_docs, nrow(x), ncol(x), format(Sys.time()), commit,
    if (nzchar(lib)) lib else "default library",
    paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""))
say("   command: SPARSEVI_BENCH_CORPUS=%s SPARSEVI_BENCH_DOCS=%s SPARSEVI_BENCH_LIB=%s nice -n 10 Rscript inst/bench/gibbs-k.R",
    corpus, n_docs, if (nzchar(lib)) lib else "<default>")
res <- list()
init_used <- NA
for (K in c(100L, 1000L)) {
  r <- replicate(3, cpu(K))
  res[[as.character(K)]] <- m <- apply(r, 1, stats::median)
  say("  K = %4d: whole call %.2f s CPU (training %.2f s; start %.2f s, init = \"%s\"; rest %.2f s), median of 3",
      K, m[1], m[2], m[3], init_used, m[1] - m[2] - m[3])
}
say("  K = 1000 over K = 100, whole call: %.2fx (target <= 3x)", res[["1000"]][1] / res[["100"]][1])
attr(say, "close")()
