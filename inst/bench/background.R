# SCVB0's background topic on a large corpus (issue 35): the default call
# over the first 60,000 Wikipedia paragraphs (all 129,289
# terms, as inst/bench/threads.R reads them; SPARSEVI_BENCH_SMALL_RDS keeps
# the corpus between runs), with its default background and with
# `background = 0` (the model without one) and with `background = 0.5`,
# at K = 100, 300 and 1000 (SPARSEVI_BENCH_KS), SPARSEVI_BENCH_PASSES laps
# (default 1). One split: 1,000 paragraphs held out
# (split_heldout(n_test = 1000, seed = 1)), scored as inst/bench/quality.R
# scores (document completion with the fit's topics and alpha, 80% of each
# test paragraph's word types observed); diversity (distinct words among the
# topics' top 25 over 25 K), NPMI of each topic's top 10 on the training
# paragraphs, the background topic's share of the training tokens, and the
# elapsed seconds of the fit_lda() call on SPARSEVI_BENCH_THREADS threads
# (default 2). Run from the package root:
#   Rscript inst/bench/background.R
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
Ks <- if (smoke) c(4L, 8L) else
  as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_KS", "100,300,1000"), ",")[[1]])
passes <- as.integer(Sys.getenv("SPARSEVI_BENCH_PASSES", "1"))
threads <- as.integer(Sys.getenv("SPARSEVI_BENCH_THREADS", "2"))

x <- if (smoke) bench_sim_corpus(D = 300, V = 60, K = 4, seed = 1) else
  bench_wikipara_kept(60000)
sp <- split_heldout(x, n_test = if (smoke) 30 else 1000, seed = 1)
bench_header(say, sprintf("== SCVB0's background topic, %d lap(s) over %d paragraphs (inst/bench/background.R)",
                          passes, nrow(x)))
say("   %d training documents, %d held out, V = %d; %d thread(s)", nrow(sp$train),
    nrow(sp$test$observed), ncol(x), threads)
say("   %-28s %9s %7s %9s %8s %9s", "K, background", "held-out", "NPMI", "diversity",
    "bg share", "elapsed s")
for (K in Ks) {
  for (bg in list(NULL, 0, 0.5)) {
    args <- list(sp$train, K = K, passes = passes, seed = 1, threads = threads, progress = FALSE)
    if (!is.null(bg)) args$background <- bg
    gc()
    t0 <- proc.time()[["elapsed"]]
    fit <- do.call(fit_lda, args)
    secs <- proc.time()[["elapsed"]] - t0
    tw <- fit$topic_word
    b <- fit$control$background
    size <- sparsevi:::lda_topic_sizes(fit)
    say("   K = %4d, background %-8s %9.4f %7.4f %9.4f %8.3f %9.1f", K,
        if (is.null(bg)) sprintf("%g (dflt)", b) else format(b),
        sparsevi:::completion_score(tw, fit$alpha, sp$test, threads),
        mean(sparsevi:::coherence_npmi(tw, sp$train, threads = threads)),
        sparsevi:::topic_diversity(tw), if (b > 0) size[1] / sum(size) else NA_real_, secs)
    bench_header(say, fits = stats::setNames(list(fit), sprintf("K = %d, background %g", K, b)))
    rm(fit, tw)
  }
}
attr(say, "close")()
