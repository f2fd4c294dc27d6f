# What a user's calls on a large fit cost: the default call fit_lda(x, K,
# passes = 1, seed = 1, threads = 1) on 60,000 Wikipedia paragraphs
# (V = 129,289) at K = 1000 (SPARSEVI_BENCH_KS), then, wall seconds of each:
# print(), summary(), summary(fit, x = corpus) (NPMI), terms() by "prob",
# "frex" and "lift", coherence(fit, corpus), predict() and heldout_loglik()
# on 1,000 documents, lda_to_ldavis() and augment() of the training corpus
# (its documents have no names: UCI bag of words), and saveRDS()
# (compressed and not: seconds and MB) with readRDS(). One run each, in
# this order, in one process; the library
# under test is the one on the library path, so the same script times two
# builds (SPARSEVI_BENCH_LABEL names the run). Run from the package root:
#   Rscript inst/bench/methods-large.R
# SPARSEVI_BENCH_SMALL_RDS keeps the corpus between runs. Appends to
# inst/bench/results/methods.txt (SPARSEVI_BENCH_OUT redirects).
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
say <- bench_logger(bench_out("methods.txt"))
Ks <- if (smoke) 5L else
  as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", "1000"), ",")[[1]])
x <- if (smoke) bench_sim_corpus(D = 100, V = 50, K = 3, seed = 1) else bench_wikipara_kept(60000L)
n_new <- min(1000L, nrow(x) %/% 2L)
sp <- split_heldout(x[seq_len(2L * n_new)], n_test = n_new, seed = 1)

bench_header(say, sprintf("== a user's calls on a large fit (inst/bench/methods-large.R)%s",
                          if (nzchar(Sys.getenv("SPARSEVI_BENCH_LABEL")))
                            paste0(", ", Sys.getenv("SPARSEVI_BENCH_LABEL")) else ""))
say("   corpus: %d documents, V = %d, %d tokens; new documents: the first %d", nrow(x),
    length(x$vocab), sum(x$count), n_new)
for (K in Ks) {
  t_fit <- system.time(fit <- fit_lda(x, K = K, passes = 1, seed = 1, threads = 1,
                                      progress = FALSE))[["elapsed"]]
  say("   K = %d; fit %.1f s; settings that ran: %s", K, t_fit, bench_settings(fit))
  timed <- function(label, expr) {
    t <- system.time(expr)[["elapsed"]]
    say("     %-34s %8.2f s", label, t)
  }
  timed("print()", utils::capture.output(print(fit)))
  timed("summary()", summary(fit))
  timed("summary(fit, x = corpus)", summary(fit, x = x))
  timed("terms(fit, 10)", terms(fit, 10))
  timed("terms(fit, 10, type = \"frex\")", terms(fit, 10, type = "frex"))
  timed("terms(fit, 10, type = \"lift\")", terms(fit, 10, type = "lift"))
  timed("coherence(fit, corpus)", coherence(fit, x))
  timed(sprintf("predict(fit, %d documents)", n_new), predict(fit, x[seq_len(n_new)]))
  timed(sprintf("heldout_loglik(fit, %d documents)", n_new), heldout_loglik(fit, sp$test))
  timed("lda_to_ldavis(fit, corpus)", suppressMessages(lda_to_ldavis(fit, x)))
  aug <- get0("augment.sparsevi_lda", asNamespace("sparsevi"), inherits = FALSE)
  timed("augment(fit, corpus)", aug(fit, x))
  f1 <- tempfile(fileext = ".rds")
  f2 <- tempfile(fileext = ".rds")
  t1 <- system.time(saveRDS(fit, f1))[["elapsed"]]
  t2 <- system.time(saveRDS(fit, f2, compress = FALSE))[["elapsed"]]
  t3 <- system.time(back <- readRDS(f1))[["elapsed"]]
  say("     %-34s %8.2f s, %.0f MB", "saveRDS()", t1, file.size(f1) / 2^20)
  say("     %-34s %8.2f s, %.0f MB", "saveRDS(compress = FALSE)", t2, file.size(f2) / 2^20)
  say("     %-34s %8.2f s", "readRDS()", t3)
  unlink(c(f1, f2))
  rm(back, fit)
  invisible(gc())
}
