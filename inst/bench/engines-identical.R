# Issue 21: are the fits bit-identical to those of a base build? Every
# combination of lda_combinations at threads = 1 and 2 (topics, lambda,
# trace without times, training proportions, predict(), completion and
# left-to-right held-out scores, NPMI and UMass coherence), a seeded Gibbs
# start continued by update() and an SCVB0 fit continued by update(), on a
# simulated corpus, computed in one process per build and compared.
#
# Run from the package root:
#   SPARSEVI_BASE_LIB=/path/to/lib/with/base/build SPARSEVI_BASE_COMMIT=<its commit> \
#     nice -n 10 Rscript inst/bench/engines-identical.R
# (the build under test is the first sparsevi on .libPaths(), e.g. with
# R_LIBS=/path/to/lib). Results: inst/bench/results/engines-identical.txt.

base_lib <- Sys.getenv("SPARSEVI_BASE_LIB")
if (!nzchar(base_lib)) stop("Set SPARSEVI_BASE_LIB to a library holding the base build.")
base_commit <- Sys.getenv("SPARSEVI_BASE_COMMIT", "unknown")
this_lib <- dirname(find.package("sparsevi"))

source(file.path("inst", "bench", "bench-data.R")) # bench_child()

fits <- function(lib) {
  bench_child(lib, c(
    "sim <- simulate_lda(D = 120, V = 60, K = 4, seed = 11)",
    "sp <- split_heldout(sim$dtm, n_test = 20, seed = 2)",
    "out <- list()",
    "for (i in seq_len(nrow(lda_combinations))) {",
    "  loc <- lda_combinations$local[i]; glob <- lda_combinations$global[i]",
    "  for (th in 1:2) {",
    "    fit <- suppressWarnings(fit_lda(sp$train, K = 4, local = loc, global = glob,",
    "      passes = 3, seed = 5, progress = FALSE, threads = th, heldout = sp$test))",
    "    tr <- fit$trace; tr$seconds <- NULL; tr$cpu_seconds <- NULL",
    "    out[[paste(loc, glob, th)]] <- list(tw = fit$topic_word, lambda = fit$lambda,",
    "      trace = tr, dt = fit$doc_topic, pred = predict(fit, sp$test$observed, seed = 3),",
    "      comp = heldout_loglik(fit, sp$test),",
    "      ltr = heldout_loglik(fit, sp$test, method = 'left_to_right', seed = 1),",
    "      npmi = coherence(fit, sim$dtm, measure = 'npmi'),",
    "      umass = coherence(fit, sim$dtm, measure = 'umass'))",
    "  }",
    "}",
    "f <- fit_lda(sp$train, K = 4, local = 'gibbs', init = 'seeded', passes = 2, seed = 1,",
    "             progress = FALSE)",
    "out[['gibbs seeded + update']] <- update(f, sp$train, passes = 1)$topic_word",
    "f <- fit_lda(sp$train, K = 4, local = 'cvb0', passes = 2, seed = 1, progress = FALSE)",
    "out[['cvb0 + update']] <- update(f, sp$train, passes = 1)$topic_word",
    "result <- out"))
}

a <- fits(base_lib)
b <- fits(this_lib)
same <- mapply(identical, a, b[names(a)])
commit <- system("git rev-parse --short HEAD", intern = TRUE)
lines <- c(sprintf("# inst/bench/engines-identical.R at commit %s (%s)", commit,
                   format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")),
           sprintf("# base build: commit %s, installed in %s", base_commit, base_lib),
           sprintf("# command: SPARSEVI_BASE_LIB=%s SPARSEVI_BASE_COMMIT=%s R_LIBS=%s nice -n 10 Rscript inst/bench/engines-identical.R",
                   base_lib, base_commit, this_lib),
           "# each case: fit (local global threads) with its topics, lambda, trace, proportions,",
           "# predictions, held-out scores and coherences; TRUE = bit-identical to the base build",
           sprintf("%-28s %s", names(same), same),
           sprintf("# %d of %d cases bit-identical", sum(same), length(same)))
cat(lines, sep = "\n")
dir.create(file.path("inst", "bench", "results"), showWarnings = FALSE)
writeLines(lines, file.path("inst", "bench", "results", "engines-identical.txt"))
