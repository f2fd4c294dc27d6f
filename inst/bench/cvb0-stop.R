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
source(file.path("inst", "bench", "bench-log.R"))
source(file.path("inst", "bench", "bench-data.R"))
out_file <- Sys.getenv("SPARSEVI_BENCH_OUT", file.path("inst", "bench", "results", "cvb0-stop.txt"))
say <- bench_logger(out_file)
corpora <- strsplit(Sys.getenv("SPARSEVI_BENCH_CORPORA",
  "kos,nips_f20,poliblog5k,sotu_chunks,spamassassin,moviereviews,wikipara20000"), ",")[[1]]
K <- 100L
laps <- as.integer(Sys.getenv("SPARSEVI_BENCH_LAPS", "20"))
commit <- system("git rev-parse --short HEAD", intern = TRUE)
say("")
say("== SCVB0 stop signals, %s; commit %s; K = %d, %d laps, defaults (fit_lda(x, K), then update(passes = 1))",
    format(Sys.time()), commit, K, laps)
tv_rows <- function(a, b) mean(Matrix::rowSums(abs(a - b))) / 2
all <- list()
for (cn in corpora) {
  x <- bench_corpus(cn)
  sp <- split_heldout(x, test_frac = 0.1, seed = 1)
  tr <- sp$train
  f <- fit_lda(tr, K = K, seed = 1, passes = 1, heldout = sp$test, progress = FALSE)
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
      sprintf("%s lap %d (%+.4f, %+.4f)", cn, stop_at, r$heldout[stop_at] - r$heldout[10],
              r$heldout[stop_at] - max(r$heldout))
    }, "")
    say("   %s < %g (capped at 10 laps): %s", sig, th, paste(parts, collapse = "; "))
  }
}
say("   command: SPARSEVI_BENCH_CORPORA=%s nice -n 10 Rscript inst/bench/cvb0-stop.R",
    paste(corpora, collapse = ","))
attr(say, "close")()
