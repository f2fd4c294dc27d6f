# When does the default engine (SCVB0) stop improving, and does a cheap
# signal say so? (issue 20, lever "stop laps when converged"). For every
# corpus of ../shared/data (K = 100, the same split as inst/bench/defaults.R):
# 20 laps of fit_lda(x, K) with every default, one lap at a time (update(),
# which continues the same fit), recording after each lap the held-out score
# (document completion) and two candidate stopping signals:
#   doc   the mean total-variation distance between each training document's
#         topic proportions (the fit's doc_topic, top-L) this lap and last
#         (O(D L), from what the fit keeps anyway);
#   topic the mean total-variation distance between each topic's word
#         distribution this lap and last (O(K V): too dear at large K, shown
#         for comparison).
# Then, for thresholds of each signal, the lap it would stop at and the
# held-out score there against lap 10 and the best of 20 laps.
# Run from the package root:
#   SPARSEVI_BENCH_CORPORA=... nice -n 10 Rscript inst/bench/cvb0-stop.R
# Appends to inst/bench/results/cvb0-stop.txt.
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
source(file.path(bench_dir, "bench-data.R"))
smoke <- bench_smoke()
out_file <- bench_out("cvb0-stop.txt")
say <- bench_logger(out_file)
corpora <- strsplit(Sys.getenv("SPARSEVI_BENCH_CORPORA",
  "kos,nips_f20,poliblog5k,sotu_chunks,spamassassin,moviereviews,wikipara20000"), ",")[[1]]
if (smoke) corpora <- corpora[1]
K <- if (smoke) 5L else 100L
laps <- as.integer(Sys.getenv("SPARSEVI_BENCH_LAPS", if (smoke) "11" else "20"))
data_dir <- if (!smoke) bench_data_dir()
bench_header(say, sprintf("== SCVB0 stop signals (inst/bench/cvb0-stop.R); K = %d, %d laps; the engine's defaults at 152e884, named (fit_lda(x, K, local = \"cvb0\", ...), then update(passes = 1))",
                          K, laps))
# The defaults this study is about, named so that a later change of them
# does not change what it measures. The start is the engine's rule at
# 06ddbb6: "seeded" when K V > 4 x tokens, else "bregman".
cvb0_settings <- list(local = "cvb0", global = "stochastic", alpha = 0.1, eta = 0.01,
                      step_scale = 1, tau = 1, kappa = 0.6, doc_s = 1, doc_tau = 10,
                      doc_kappa = 0.9, burnin = 0, batch_size = 100)
tv_rows <- function(a, b) mean(Matrix::rowSums(abs(a - b))) / 2
all <- list()
for (cn in corpora) {
  x <- bench_corpus(cn)
  sp <- split_heldout(x, test_frac = 0.1, seed = 1)
  tr <- sp$train
  init <- if (as.double(K) * ncol(tr) > 4 * sum(tr$count)) "seeded" else "bregman"
  f <- do.call(fit_lda, c(list(tr, K = K, seed = 1, passes = 1, heldout = sp$test,
                               progress = FALSE, init = init, threads = 1), cvb0_settings))
  bench_header(say, fits = stats::setNames(list(f), cn))
  rows <- data.frame(lap = 1L, heldout = f$trace$heldout[1], doc = NA_real_, topic = NA_real_)
  for (l in 2:laps) {
    prev_dt <- f$doc_topic
    prev_tw <- f$topic_word
    f <- update(f, tr, passes = 1, progress = FALSE)
    rows <- rbind(rows, data.frame(lap = l, heldout = f$trace$heldout[l],
                                   doc = tv_rows(f$doc_topic, prev_dt),
                                   topic = tv_rows(f$topic_word, prev_tw)))
  }
  say("-- %s: %d training documents, V = %d", cn, nrow(tr), ncol(tr))
  say("   lap    heldout   doc-TV  topic-TV")
  for (i in seq_len(nrow(rows))) {
    say("   %3d  %9.4f  %7.4f  %8.5f", rows$lap[i], rows$heldout[i], rows$doc[i], rows$topic[i])
  }
  all[[cn]] <- rows
}
say("-- stopping rules: stop after the first lap whose signal is below the threshold (held-out at that lap minus lap 10's, minus the best of %d laps)", laps)
for (sig in c("doc", "topic")) {
  ths <- if (sig == "doc") c(0.05, 0.03, 0.02, 0.015, 0.01) else c(0.02, 0.01, 0.005, 0.002)
  for (th in ths) {
    parts <- vapply(names(all), function(cn) {
      r <- all[[cn]]
      s <- which(!is.na(r[[sig]]) & r[[sig]] < th)
      stop_at <- if (length(s)) min(s[1], 10L) else 10L
      stop_at <- min(stop_at, nrow(r))
      sprintf("%s lap %d (%+.4f, %+.4f)", cn, stop_at, r$heldout[stop_at] - r$heldout[10],
              r$heldout[stop_at] - max(r$heldout))
    }, "")
    say("   %s < %g (capped at 10 laps): %s", sig, th, paste(parts, collapse = "; "))
  }
}
attr(say, "close")()
