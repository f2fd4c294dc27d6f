# The default start of local = "gibbs" (issue 20): the Bregman seeding held
# sparsely (each topic eta + 1 + its chosen document's counts, the uniform
# base one number in the store) against the dense Bregman seeding it
# replaces (eta + a Gamma(100, 100) draw per (topic, word) + the same chosen
# documents' counts, the K x V table of lda_init_bregman(), given here as
# init = <matrix>: the same documents, the same fit otherwise). Same split
# and evaluators for both: document completion on held-out documents
# (heldout_loglik(), the default method) and UMass over the top 20 words on
# the training documents; CPU seconds of the whole fit_lda() call.
# Run from the package root:
#   SPARSEVI_BENCH_LIB=<lib> nice -n 10 Rscript inst/bench/gibbs-start.R
# With SPARSEVI_BENCH_PART=sparse it runs instead the default start against
# init = "sparse" (the empty store, the default above 2^25 K x V entries
# before) at K = 1000 on 20,000 Wikipedia paragraphs, one pass, seeds 1-2.
# Appends to inst/bench/results/gibbs-start.txt.
lib <- Sys.getenv("SPARSEVI_BENCH_LIB", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(sparsevi))
ns <- asNamespace("sparsevi")
bench_dir <- local({
  a <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  d <- c(if (length(a)) dirname(a[1]), file.path("inst", "bench"),
         system.file("bench", package = "sparsevi"))
  d[file.exists(file.path(d, "bench-log.R"))][1]
})
source(file.path(bench_dir, "bench-log.R"))
source(file.path(bench_dir, "bench-data.R"))
smoke <- bench_smoke()
say <- bench_logger(bench_out("gibbs-start.txt"))
bench_header(say, sprintf("== gibbs start (inst/bench/gibbs-start.R): init = \"bregman\" held sparsely (the default at 06ddbb6) vs dense Bregman (old default, given as a matrix); sparsevi from %s; load %s",
                          if (nzchar(lib)) lib else "default library",
                          paste(readLines("/proc/loadavg"), collapse = "")))
say("   every fit names: local gibbs, global stochastic, alpha 0.1, eta 0.2, step_scale 1, kappa 0.6, no re-seeding, batches of max(100, D / 10)")
# gibbs's settings at 06ddbb6, named in every fit
gibbs_fit <- function(train, ...) {
  fit_lda(train, local = "gibbs", global = "stochastic", alpha = 0.1, eta = 0.2,
          step_scale = 1, kappa = 0.6, reuse_dead = FALSE,
          batch_size = max(100L, as.integer(ceiling(nrow(train) / 10))), ...)
}

# The dense Bregman start exactly as lda_init_state() built it by default
# before (same seed pool for corpora above bregman_pool(K) documents).
dense_start <- function(x, K, eta, seed) {
  s <- ns$resolve_seed(seed)
  x0 <- x
  if (nrow(x0) > ns$bregman_pool(K)) {
    pick <- order(ns$lda_unif(s, 903, nrow(x0)))[seq_len(ns$bregman_pool(K))]
    x0 <- ns$dtm_subset(x0, sort(pick))
  }
  ns$lda_init_bregman(x0, K, eta, s)
}

seeds <- as.integer(strsplit(Sys.getenv("SPARSEVI_BENCH_SEEDS", if (smoke) "1" else "1,2,3"), ",")[[1]])
diffs <- list()
run <- function(label, train, test, K, passes, tau) {
  say("-- %s: %d training documents, %d held out, V = %d, K = %d, %d pass(es), tau = %g, gibbs settings named (see above; one thread), seeds %s",
      label, nrow(train), nrow(test$observed), ncol(train), K, passes, tau,
      paste(seeds, collapse = ","))
  eta <- 0.2
  h_of <- list()
  for (seed in seeds) for (start in c("sparse Bregman (default)", "dense Bregman (old)")) {
    init <- if (startsWith(start, "dense")) dense_start(train, K, eta, seed) else NULL
    t0 <- proc.time()
    f <- gibbs_fit(train, K = K, passes = passes, tau = tau, seed = seed, threads = 1,
                   progress = FALSE, init = if (is.null(init)) "bregman" else init)
    if (seed == seeds[1]) bench_header(say, fits = stats::setNames(list(f), sprintf("%s K %d %s", label, K, start)))
    t1 <- proc.time() - t0
    u <- as.numeric(coherence(f, train, measure = "umass", n = 20))
    h <- heldout_loglik(f, test)
    say("   seed %d %-26s %6.2f CPU s (training %6.2f)  held-out %.4f/token  UMass mean %8.2f  lowest decile %8.2f",
        seed, start, t1[["user.self"]] + t1[["sys.self"]], max(f$trace$cpu_seconds), h, mean(u),
        mean(sort(u)[seq_len(max(1, K %/% 10))]))
    h_of[[start]] <- c(h_of[[start]], as.numeric(h))
    rm(f, init)
    invisible(gc())
  }
  d <- h_of[[1]] - h_of[[2]]
  say("   held-out, sparse minus dense start: mean %+.4f nats/token over %d seeds (each: %s)",
      mean(d), length(d), paste(sprintf("%+.4f", d), collapse = ", "))
}

if (Sys.getenv("SPARSEVI_BENCH_PART") == "sparse") {
  wiki <- bench_corpus("wikipara21000")
  sp <- split_heldout(wiki, n_test = 1000L, seed = 1)
  invisible(fit_lda(sp$train[1:200, ], K = 5, local = "gibbs", passes = 1, progress = FALSE))
  say("-- wikipara: %d training documents, %d held out, V = %d, K = 1000, one pass, defaults otherwise: init = \"bregman\" (default) vs \"sparse\"",
      nrow(sp$train), nrow(sp$test$observed), ncol(sp$train))
  for (seed in 1:2) for (init in c("bregman", "sparse")) {
    t0 <- proc.time()
    f <- gibbs_fit(sp$train, K = 1000, tau = 1, passes = 1, seed = seed, init = init,
                   threads = 1, progress = FALSE, doc_topics = 0)
    bench_header(say, fits = stats::setNames(list(f), sprintf("seed %d init %s", seed, init)))
    t1 <- proc.time() - t0
    u <- as.numeric(coherence(f, sp$train, measure = "umass", n = 20))
    say("   seed %d init = %-9s %6.2f CPU s  held-out %.4f/token  UMass mean %8.2f  lowest decile %8.2f",
        seed, sprintf("\"%s\"", init), t1[["user.self"]] + t1[["sys.self"]],
        heldout_loglik(f, sp$test), mean(u), mean(sort(u)[1:100]))
    rm(f)
    invisible(gc())
  }
  attr(say, "close")()
  quit(save = "no")
}

kos <- bench_corpus("kos")
sp <- split_heldout(kos, n_test = if (smoke) 10L else 343L, seed = 1)
# warm-up (the first fit of a process pays for loading the package's code)
invisible(fit_lda(sp$train[seq_len(min(200, nrow(sp$train))), ], K = 5, local = "gibbs",
                  passes = 1, progress = FALSE))
if (smoke) {
  run("kos", sp$train, sp$test, 5L, passes = 1L, tau = 1)
  attr(say, "close")()
  quit(save = "no")
}
for (K in c(100L, 1000L)) run("kos", sp$train, sp$test, K, passes = 3L, tau = 1)
run("kos", sp$train, sp$test, 100L, passes = 1L, tau = 1000)
wiki <- bench_corpus("wikipara21000")
sp <- split_heldout(wiki, n_test = 1000L, seed = 1)
run("wikipara", sp$train, sp$test, 100L, passes = 1L, tau = 1)
run("wikipara", sp$train, sp$test, 100L, passes = 1L, tau = 1000)
attr(say, "close")()
