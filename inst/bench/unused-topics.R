# Unused topics of the default call (?dead_topics, "Unused topics"): on each
# corpus of ../shared/data (wikipara: its first 20,000 paragraphs) at K = 20,
# 100 and 200 (SPARSEVI_BENCH_KS; SPARSEVI_BENCH_CORPORA picks corpora), the
# default fit_lda(train, K, seed = 1, threads = 1) on quality.R's split
# (min(1,000, 10%) of the documents held out, split_heldout(seed = 1)), and
# what dead_topics() finds: the floor f = alpha D / (C + D K alpha) (the
# share a topic no document uses keeps), the share under which a topic is
# dead (1.5 f, or 0.1% / 0.1 / K if larger), the dead topics by that rule and
# by the share alone (dead_share_default(K)), the duplicates, the held-out
# score per token (document completion, as quality.R scores) and its change
# when prune_topics() removes the dead topics, and the largest dead topic's
# share and top words. Run from the package root:
#   Rscript inst/bench/unused-topics.R
# Appends to inst/bench/results/quality.txt (SPARSEVI_BENCH_OUT redirects).
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
Ks <- if (smoke) c(4L, 12L) else
  as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", "20,100,200"), ",")[[1]])
corpora <- if (smoke) "simulated" else
  strsplit(Sys.getenv("SPARSEVI_BENCH_CORPORA", paste(
    "kos,nips_f20,poliblog5k,sotu_chunks,spamassassin,moviereviews,wikipara20000")), ",")[[1]]

bench_header(say, "== unused topics of the default call (inst/bench/unused-topics.R)")
say("   %-19s %7s  %9s  %4s  %10s  %4s  %9s  %9s   %s", "corpus, K", "floor", "min_share", "dead",
    "share only", "dup", "held-out", "pruned", "largest dead topic")
for (cn in corpora) {
  x <- if (smoke) bench_sim_corpus(D = 200, V = 60, K = 3, seed = 1) else
    bench_corpus(cn, file.path("..", "shared", "data"))
  sp <- split_heldout(x, n_test = min(1000L, as.integer(round(0.1 * nrow(x)))), seed = 1)
  for (K in Ks) {
    fit <- fit_lda(sp$train, K, seed = 1, threads = 1, progress = FALSE)
    d <- dead_topics(fit)
    share <- attr(d, "share")
    dead <- as.vector(d)[attr(d, "reason") == "dead"]
    ho <- sparsevi:::completion_score(fit$topic_word, fit$alpha, sp$test)
    pruned <- if (length(dead) && length(dead) < K - 1L) {
      p <- suppressWarnings(prune_topics(fit, dead))
      sparsevi:::completion_score(p$topic_word, p$alpha, sp$test)
    } else NA_real_
    big <- if (length(dead)) dead[which.max(share[dead])]
    say("   %-14s %4d %7.5f  %9.5f  %4d  %10d  %4d  %9.4f  %9s   %s", cn, K,
        sparsevi:::lda_prior_floor(fit), attr(d, "min_share"), length(dead),
        sum(share < sparsevi:::dead_share_default(K)), length(d) - length(dead), ho,
        if (is.na(pruned)) "-" else sprintf("%.4f", pruned),
        if (is.null(big)) "-" else sprintf("%d (%.3f%%): %s", big, 100 * share[big],
                                           paste(terms(fit, 6)[, big], collapse = " ")))
    bench_header(say, fits = stats::setNames(list(fit), sprintf("%s, K = %d", cn, K)))
  }
}
attr(say, "close")()
