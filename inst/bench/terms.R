# The time of terms(fit, n = 10, type = ) for "prob", "frex" and "lift" on a
# fit of 60,000 Wikipedia paragraphs (V = 129,289; the default call
# fit_lda(x, K, passes = 1, seed = 1, threads = 1) at K = 100 and 1000,
# SPARSEVI_BENCH_KS), against the R form of "frex" and "lift" (frex_row()
# and top_by_score(), R/lda-methods.R: R's rank() and order() per topic),
# with the words of both compared. "frex" runs on 1 and 2 threads. Wall
# seconds, the best of SPARSEVI_BENCH_REPS (3) runs; the R form runs once
# (over 60 s at K = 1000 it runs on the first 100 topics and the figure is
# scaled to K, as the line says). Run from the package root:
#   Rscript inst/bench/terms.R
# SPARSEVI_BENCH_SMALL_RDS keeps the corpus between runs. Appends to
# inst/bench/results/quality.txt (SPARSEVI_BENCH_OUT redirects).
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
say <- bench_logger(bench_out("quality.txt"))
Ks <- if (smoke) c(3L, 10L) else
  as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", "100,1000"), ",")[[1]])
reps <- if (smoke) 1L else as.integer(Sys.getenv("SPARSEVI_BENCH_REPS", "3"))
x <- if (smoke) bench_sim_corpus(D = 100, V = 50, K = 3, seed = 1) else bench_wikipara_kept(60000L)
ns <- asNamespace("sparsevi")

best <- function(expr_fun) {
  min(vapply(seq_len(reps), function(i) system.time(expr_fun())[["elapsed"]], 0))
}

bench_header(say, "== terms(fit, n = 10, type = ): the words of each topic (inst/bench/terms.R)")
say("   corpus: %d documents, V = %d, %d tokens", nrow(x), length(x$vocab), sum(x$count))
for (K in Ks) {
  fit <- fit_lda(x, K = K, passes = 1, seed = 1, threads = 1, progress = FALSE)
  say("   K = %d; settings that ran: %s", K, bench_settings(fit))
  tw <- ns$lda_fit_topic_word(fit)
  # the R form: all topics, or the first 100 when K is larger (then scaled)
  ks <- seq_len(min(K, if (K > 100) 100L else K))
  sub_tw <- tw[ks, , drop = FALSE]
  cs <- colSums(tw)
  r_frex <- system.time(ref_frex <- vapply(ks, function(k) {
    order(-ns$frex_row(tw[k, ], cs, 0.5))[1:10]
  }, integer(10)))[["elapsed"]]
  p <- ns$lda_word_shares(fit, tw)
  r_lift <- system.time(ref_lift <- ns$top_by_score(sub_tw, 10, function(tw, k, cs) tw[k, ] / p))[["elapsed"]]
  scale <- K / length(ks)
  t_prob <- best(function() terms(fit, 10))
  t_frex1 <- best(function() terms(fit, 10, type = "frex", threads = 1))
  t_frex2 <- best(function() terms(fit, 10, type = "frex", threads = 2))
  t_lift <- best(function() terms(fit, 10, type = "lift"))
  c_frex <- terms(fit, 10, type = "frex", threads = 1)
  same_frex <- identical(unname(c_frex[, ks, drop = FALSE]), matrix(fit$vocab[ref_frex], 10)) &&
    identical(c_frex, terms(fit, 10, type = "frex", threads = 2))
  same_lift <- identical(unname(terms(fit, 10, type = "lift")[, ks, drop = FALSE]),
                         matrix(fit$vocab[ref_lift], 10))
  note <- if (scale > 1) sprintf(" (R form timed on %d topics, x %g)", length(ks), scale) else ""
  say("   K = %4d  prob %.3f s | frex %.3f s (1 thread), %.3f s (2 threads); R form %.2f s%s: %.1fx, %.1fx; same words %s",
      K, t_prob, t_frex1, t_frex2, r_frex * scale, note, r_frex * scale / t_frex1,
      r_frex * scale / t_frex2, same_frex)
  say("              lift %.3f s; R form %.2f s: %.1fx; same words %s", t_lift, r_lift * scale,
      r_lift * scale / t_lift, same_lift)
}
