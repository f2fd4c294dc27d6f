# The levers of issue 20, one at a time, on the default vb memoized fit
# (K = 100, one split per corpus, held-out by the package's document
# completion evaluator): the old default (restarts every lap, all 10 laps),
# restarts off, restarts off + warm start, and the new default (restarts
# off or on, stop at converge_tol = 0.005). CPU seconds of training by lap. Run
# from the package root:
#   nice -n 10 Rscript inst/bench/speed-levers.R
# Environment: SPARSEVI_BENCH_CORPORA (default kos,sotu_chunks,spamassassin),
# SPARSEVI_BENCH_VARIANTS (indices of the variants, default all).
# Appends to inst/bench/results/speed-levers.txt.
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()
say <- bench_logger(bench_out("speed-levers.txt"))
corpora <- strsplit(Sys.getenv("SPARSEVI_BENCH_CORPORA", "kos,sotu_chunks,spamassassin"),
                    ",")[[1]]
if (smoke) corpora <- corpora[1]
K <- if (smoke) 8L else 100L
# the vb memoized fit every variant starts from, every setting named (vb's
# values at 06ddbb6); each variant then names the levers it sets
vb_base <- list(local = "vb", global = "memoized", L = 8, alpha = 0.1, eta = 0.01,
                init = "bregman", passes = if (smoke) 2 else 10, max_iter = 100, tol = 0.05,
                restart_max = 4, restart_iter = 10, warm_start = FALSE)
variants <- list(
  "old default (restarts every lap, 10 laps)" = list(restarts = TRUE, converge_tol = 0),
  "restarts off, 10 laps" = list(restarts = FALSE, converge_tol = 0),
  "restarts in lap 1 only, 10 laps" = list(restarts = TRUE, restart_laps = 1,
                                           converge_tol = 0),
  "restarts off + warm start, 10 laps" = list(restarts = FALSE, warm_start = TRUE,
                                              converge_tol = 0),
  "restarts off, converge_tol 0.005" = list(restarts = FALSE, converge_tol = 0.005),
  "restarts every lap, converge_tol 0.005" = list(restarts = TRUE, converge_tol = 0.005),
  "vb's defaults at 06ddbb6 (restarts every lap, converge_tol 0.005)" =
    list(restarts = TRUE, restart_laps = 1e6, converge_tol = 0.005)
)
# SPARSEVI_BENCH_VARIANTS: indices of the variants to run (default all)
pick <- Sys.getenv("SPARSEVI_BENCH_VARIANTS", "")
if (nzchar(pick)) variants <- variants[as.integer(strsplit(pick, ",")[[1]])]
bench_header(say, sprintf("== issue 20 levers (inst/bench/speed-levers.R), vb memoized, K = %d; load %s", K,
                           paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
for (cn in corpora) {
  x <- if (smoke) bench_sim_corpus(D = 80, V = 50, K = 4) else {
    dir <- file.path(bench_data_dir(), cn)
    read_uci_bow(file.path(dir, sprintf("docword.%s.txt.gz", cn)),
                 file.path(dir, sprintf("vocab.%s.txt", cn)))
  }
  sp <- split_heldout(x, test_frac = 0.1, seed = 1)
  say("-- %s: %d train documents", cn, nrow(sp$train))
  for (v in names(variants)) {
    f <- do.call(fit_lda, c(list(sp$train, K = K, seed = 1, heldout = sp$test,
                                 progress = FALSE, doc_topics = 0, threads = 1),
                            utils::modifyList(vb_base, variants[[v]])))
    bench_header(say, fits = stats::setNames(list(f), v))
    tr <- f$trace
    say("  %-48s final %.4f best %.4f (lap %d)  %2d laps (%s)  CPU %5.1f s", v,
        tr$heldout[nrow(tr)], max(tr$heldout), which.max(tr$heldout), nrow(tr), f$ended,
        max(tr$cpu_seconds))
    say("      held-out by lap %s", paste(sprintf("%.3f", tr$heldout), collapse = " "))
    say("      CPU s by lap    %s", paste(sprintf("%.1f", tr$cpu_seconds), collapse = " "))
  }
}
attr(say, "close")()
