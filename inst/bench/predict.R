# predict() of a fit of the default engine: SCVB0's fold-in (method
# "cvb0", predict()'s default for such a fit) against vb inference (method
# "vb", the default before), on every shared corpus (wikipara: its first
# 20,000 paragraphs) at K = 20, 100 and 200 (SPARSEVI_BENCH_KS). The same
# split as inst/bench/quality.R (min(1,000, 10%) documents held out, seed 1);
# each held-out document's words are split 80/20 at random (split_heldout(),
# by = "types", seed 1). The fit: fit_lda(train, K, seed = 1), every other
# setting the default call's, read back from the fit. Each method infers the
# held-out documents' proportions from their observed 80%, and the score is
# the mean log probability per token of the other 20% under those
# proportions and the fit's topics (document completion; the one scorer for
# both methods). Seconds: elapsed time of each predict() call, in turn, in
# one process, one thread. Run from the package root:
#   Rscript inst/bench/predict.R
# Appends to inst/bench/results/predict.txt (SPARSEVI_BENCH_OUT redirects).
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
say <- bench_logger(bench_out("predict.txt"))
Ks <- if (smoke) 3L else
  as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", "20,100,200"), ",")[[1]])
corpora <- if (smoke) "simulated" else
  c("kos", "nips_f20", "poliblog5k", "sotu_chunks", "spamassassin", "moviereviews",
    "wikipara20000")

# mean log p of the held-out words per token, given D x K proportions
completion <- function(theta, tw, held) {
  s <- 0
  n <- 0
  for (d in seq_len(nrow(held))) {
    idx <- held$doc_ptr[d] + seq_len(held$doc_ptr[d + 1L] - held$doc_ptr[d])
    if (!length(idx)) next
    p <- as.vector(theta[d, ] %*% tw[, held$term[idx] + 1L, drop = FALSE])
    s <- s + sum(held$count[idx] * log(p))
    n <- n + sum(held$count[idx])
  }
  s / n
}

bench_header(say, "== predict() of a default fit: SCVB0's fold-in against vb inference (inst/bench/predict.R)")
say("   completion: mean log p per token of each held-out document's other 20%%, from proportions inferred on its 80%%; seconds of one predict() call")
better <- 0L
faster <- 0L
cases <- 0L
for (cn in corpora) {
  x <- bench_corpus(cn)
  sp <- split_heldout(x, n_test = min(1000L, as.integer(round(0.1 * nrow(x)))), seed = 1)
  obs <- sp$test$observed
  held <- sp$test$heldout
  for (K in Ks) {
    fit <- fit_lda(sp$train, K, seed = 1, threads = 1, progress = FALSE)
    if (cn == corpora[1] && K == Ks[1]) bench_header(say, fits = list(default = fit))
    tw <- fit$topic_word
    t_vb <- system.time(p_vb <- predict(fit, obs, method = "vb", threads = 1))[["elapsed"]]
    t_cv <- system.time(p_cv <- predict(fit, obs, method = "cvb0", threads = 1))[["elapsed"]]
    # (the default is the fold-in, seeded from the fit)
    stopifnot(identical(predict(fit, obs, threads = 1), p_cv))
    s_vb <- completion(p_vb, tw, held)
    s_cv <- completion(p_cv, tw, held)
    cases <- cases + 1L
    better <- better + (s_cv > s_vb)
    faster <- faster + (t_cv < t_vb)
    say("   %-14s K = %3d (%s, %d test documents): vb %.4f (%.2f s)  fold-in %.4f (%.2f s)  fold-in - vb %+.4f",
        cn, K, fit$local, nrow(obs), s_vb, t_vb, s_cv, t_cv, s_cv - s_vb)
  }
}
say("   the fold-in scored higher in %d of %d cases and took less time in %d", better, cases, faster)
attr(say, "close")()
