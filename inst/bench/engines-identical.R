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
# R_LIBS=/path/to/lib). Results: inst/bench/results/engines-identical.txt
# (rewritten). The fits name their priors and start (each engine's values at
# 06ddbb6), so both builds run the same settings. Smoke mode
# (SPARSEVI_BENCH_SMOKE=1): this build against itself.
suppressPackageStartupMessages(library(sparsevi))
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
smoke <- bench_smoke()

this_lib <- dirname(find.package("sparsevi"))
base_lib <- Sys.getenv("SPARSEVI_BASE_LIB", if (smoke) this_lib else "")
if (!nzchar(base_lib)) stop("Set SPARSEVI_BASE_LIB to a library holding the base build.")
base_commit <- Sys.getenv("SPARSEVI_BASE_COMMIT", if (smoke) "this build (smoke)" else "unknown")

source(file.path(bench_dir, "bench-data.R")) # bench_child()

fits <- function(lib) {
  bench_child(lib, c(
    "sim <- simulate_lda(D = 120, V = 60, K = 4, seed = 11)",
    "sp <- split_heldout(sim$dtm, n_test = 20, seed = 2)",
    "out <- list()",
    "for (i in seq_len(nrow(lda_combinations))) {",
    "  loc <- lda_combinations$local[i]; glob <- lda_combinations$global[i]",
    "  for (th in 1:2) {",
    "    pri <- switch(loc, vb = list(alpha = 0.1, eta = 0.01), ope = list(alpha = 0.25, eta = 0.25),",
    "                  cvb0 = list(alpha = 0.1, eta = 0.01), gibbs = list(alpha = 0.1, eta = 0.2))",
    "    fit <- suppressWarnings(do.call(fit_lda, c(list(sp$train, K = 4, local = loc, global = glob,",
    "      init = 'bregman', tau = 1, kappa = 0.6, passes = 3, seed = 5, progress = FALSE,",
    "      threads = th, heldout = sp$test), pri)))",
    "    tr <- fit$trace; tr$seconds <- NULL; tr$cpu_seconds <- NULL",
    "    out[[paste(loc, glob, th)]] <- list(tw = fit$topic_word, lambda = fit$lambda,",
    "      trace = tr, dt = fit$doc_topic, pred = predict(fit, sp$test$observed, seed = 3),",
    "      comp = heldout_loglik(fit, sp$test),",
    "      ltr = heldout_loglik(fit, sp$test, method = 'left_to_right', seed = 1),",
    "      npmi = coherence(fit, sim$dtm, measure = 'npmi'),",
    "      umass = coherence(fit, sim$dtm, measure = 'umass'))",
    "  }",
    "}",
    "f <- fit_lda(sp$train, K = 4, local = 'gibbs', init = 'seeded', alpha = 0.1, eta = 0.2,",
    "             tau = 1, kappa = 0.6, passes = 2, seed = 1, progress = FALSE)",
    "out[['gibbs seeded + update']] <- update(f, sp$train, passes = 1)$topic_word",
    "f <- fit_lda(sp$train, K = 4, local = 'cvb0', init = 'bregman', alpha = 0.1, eta = 0.01,",
    "             tau = 1, kappa = 0.6, burnin = 0, passes = 2, seed = 1, progress = FALSE)",
    "out[['cvb0 + update']] <- update(f, sp$train, passes = 1)$topic_word",
    "result <- out"))
}

a <- fits(base_lib)
b <- fits(this_lib)
same <- mapply(identical, a, b[names(a)])
lines <- c(sprintf("# inst/bench/engines-identical.R at commit %s (%s)%s", bench_commit(),
                   format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                   if (smoke) "; SMOKE MODE" else ""),
           sprintf("# base build: commit %s, installed in %s", base_commit, base_lib),
           sprintf("# command: %s", bench_command()),
           "# settings named in every fit: init bregman, tau 1, kappa 0.6; alpha/eta vb 0.1/0.01, ope 1/K, cvb0 0.1/0.01 (burnin 0), gibbs 0.1/0.2",
           "# each case: fit (local global threads) with its topics, lambda, trace, proportions,",
           "# predictions, held-out scores and coherences; TRUE = bit-identical to the base build",
           sprintf("%-28s %s", names(same), same),
           sprintf("# %d of %d cases bit-identical", sum(same), length(same)))
cat(lines, sep = "\n")
writeLines(lines, bench_out("engines-identical.txt"))
