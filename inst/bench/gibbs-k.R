# Gibbs within SVI on a small corpus (issue 20): a one-pass fit over the
# first 1,000 kos documents at K = 100 and K = 1000, the whole fit_lda()
# call (defaults otherwise; doc_topics default), CPU seconds, the median of
# 3 runs; the paper's point is cost sublinear in K (target: K = 1000 at most
# 3x K = 100). Run from the package root:
#   nice -n 10 Rscript inst/bench/gibbs-k.R
# Environment: SPARSEVI_BENCH_LIB (library of the sparsevi to run).
# Appends to inst/bench/results/gibbs-k.txt.
lib <- Sys.getenv("SPARSEVI_BENCH_LIB", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(sparsevi))
out_file <- file.path("inst", "bench", "results", "gibbs-k.txt")
source(file.path("inst", "bench", "bench-log.R"))
say <- bench_logger(out_file)
dir <- file.path("..", "shared", "data", "kos")
x <- read_uci_bow(file.path(dir, "docword.kos.txt.gz"), file.path(dir, "vocab.kos.txt"))
x <- sparsevi:::dtm_subset(x, 1:1000)
cpu <- function(K) {
  t0 <- proc.time()
  f <- fit_lda(x, K = K, local = "gibbs", passes = 1, seed = 1, progress = FALSE)
  t1 <- proc.time() - t0
  c(t1[["user.self"]] + t1[["sys.self"]], max(f$trace$cpu_seconds))
}
say("")
say("== gibbs one pass, first 1,000 kos documents (V = %d), %s; sparsevi from %s; load %s",
    ncol(x), format(Sys.time()), if (nzchar(lib)) lib else "default library",
    paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""))
res <- list()
for (K in c(100L, 1000L)) {
  r <- replicate(3, cpu(K))
  res[[as.character(K)]] <- apply(r, 1, stats::median)
  say("  K = %4d: whole call %.2f s CPU (training %.2f s), median of 3", K,
      res[[as.character(K)]][1], res[[as.character(K)]][2])
}
say("  K = 1000 over K = 100, whole call: %.2fx (target <= 3x)", res[["1000"]][1] / res[["100"]][1])
attr(say, "close")()
