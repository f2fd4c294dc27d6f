# predict() of a fit of each engine at its defaults (local = "cvb0", the
# default call; "vb", "ope" and "gibbs"; SPARSEVI_BENCH_ENGINES) by every
# inference method (SCVB0's fold-in "cvb0", "vb", "ope" and "gibbs";
# SPARSEVI_BENCH_METHODS), on every shared corpus (wikipara: its first
# 20,000 paragraphs) at K = 20, 100 and 200 (SPARSEVI_BENCH_KS). The same
# split as inst/bench/quality.R (min(1,000, 10%) documents held out, seed 1);
# each held-out document's words are split 80/20 at random (split_heldout(),
# by = "types", seed 1). The fit: fit_lda(train, K, local = engine, seed =
# 1), every other setting the engine's default, read back from the fit.
# Each method infers the held-out documents' proportions from their
# observed 80%, and the score is the mean log probability per token of the
# other 20% under those proportions and the fit's topics (document
# completion; the one scorer for every method). Seconds: elapsed time of
# each predict() call, in turn, in one process, one thread. The last column
# says which method predict() uses when none is given, and checks that it
# returns that method's proportions. Run from the package root:
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

engines <- if (smoke) c("cvb0", "vb", "ope", "gibbs") else
  strsplit(Sys.getenv("SPARSEVI_BENCH_ENGINES", "cvb0,vb,ope,gibbs"), ",")[[1]]
methods <- strsplit(Sys.getenv("SPARSEVI_BENCH_METHODS", "cvb0,vb,ope,gibbs"), ",")[[1]]

bench_header(say, sprintf("== predict() of each engine's default fit by each inference method (inst/bench/predict.R): engines %s; methods %s",
                          paste(engines, collapse = ", "), paste(methods, collapse = ", ")))
say("   completion: mean log p per token of each held-out document's other 20%%, from proportions inferred on its 80%%; seconds of one predict() call; best: the method scoring highest; default: predict()'s method when none is given")
best <- list()
fits_seen <- list()
for (cn in corpora) {
  x <- bench_corpus(cn)
  sp <- split_heldout(x, n_test = min(1000L, as.integer(round(0.1 * nrow(x)))), seed = 1)
  obs <- sp$test$observed
  held <- sp$test$heldout
  for (K in Ks) {
    for (en in engines) {
      fit <- fit_lda(sp$train, K, local = en, seed = 1, threads = 1, progress = FALSE)
      if (is.null(fits_seen[[en]])) {
        fits_seen[[en]] <- TRUE
        bench_header(say, fits = stats::setNames(list(fit), en))
      }
      tw <- fit$topic_word
      sc <- tm <- stats::setNames(numeric(length(methods)), methods)
      pr <- list()
      for (m in methods) {
        tm[[m]] <- system.time(pr[[m]] <- predict(fit, obs, method = m, threads = 1))[["elapsed"]]
        sc[[m]] <- completion(pr[[m]], tw, held)
      }
      dm <- sparsevi:::lda_predict_method(fit)
      same <- if (dm %in% methods) identical(predict(fit, obs, threads = 1), pr[[dm]]) else NA
      if (isFALSE(same)) stop("predict()'s default is not method \"", dm, "\"")
      b <- methods[which.max(sc)]
      best[[en]] <- c(best[[en]], b)
      say("   %-14s K = %3d %-5s (%4d test docs): %s  best %s  default %s",
          cn, K, fit$local, nrow(obs),
          paste(sprintf("%s %.4f (%.2f s)", methods, sc, tm), collapse = "  "), b, dm)
    }
  }
}
for (en in names(best)) {
  tab <- table(factor(best[[en]], levels = methods))
  say("   %s fits: best method %s (of %d cases)", en,
      paste(sprintf("%s %d", names(tab), as.integer(tab)), collapse = ", "), length(best[[en]]))
}
attr(say, "close")()
