# The step offset tau for local = "gibbs" (issue 25, Mimno et al. Fig. 2):
# the package default tau = 1 against the paper's order, tau = 1000, Gibbs
# only, otherwise defaults (K = 100, minibatches of max(100, D / 10), kappa
# 0.6, the default start), after 1 and after several passes. Held-out:
# document completion (heldout_loglik(), the default method) on held-out
# documents; coherence: UMass over the top 20 words on the training
# documents (mean and the lowest decile, the paper's "poor topics"), and the
# median KL of a topic from the corpus word distribution (UMass rates
# topics near the corpus' frequent words well). Seeds 1 and 2.
# Run from the package root:
#   SPARSEVI_BENCH_LIB=<lib> nice -n 10 Rscript inst/bench/gibbs-tau.R
# Appends to inst/bench/results/gibbs-tau.txt.
lib <- Sys.getenv("SPARSEVI_BENCH_LIB", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
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
say <- bench_logger(bench_out("gibbs-tau.txt"))
bench_header(say, sprintf("== gibbs (inst/bench/gibbs-tau.R): tau = 1 (the default at 06ddbb6) vs tau = 1000 (the paper's order); sparsevi from %s; load %s",
                          if (nzchar(lib)) lib else "default library",
                          paste(readLines("/proc/loadavg"), collapse = "")))
say("   every fit names: local gibbs, global stochastic, alpha 0.1, eta 0.2, init bregman, step_scale 1, kappa 0.6, no re-seeding, batches of max(100, D / 10)")
seeds <- if (smoke) 1L else 1:2

run <- function(label, train, test, passes, K = if (smoke) 5L else 100L) {
  bg <- tabulate(rep.int(train$term + 1L, train$count), ncol(train)) + 1e-12
  bg <- bg / sum(bg)
  say("-- %s: %d training documents, %d held out, V = %d, K = %d, minibatches of %d",
      label, nrow(train), nrow(test$observed), ncol(train), K,
      max(100L, as.integer(ceiling(nrow(train) / 10))))
  for (p in passes) for (tau in c(1, 1000)) {
    h <- u_mean <- u_low <- kl_med <- sec <- numeric(0)
    for (seed in seeds) {
      t0 <- proc.time()
      f <- fit_lda(train, K = K, local = "gibbs", global = "stochastic", alpha = 0.1,
                   eta = 0.2, init = "bregman", step_scale = 1, kappa = 0.6, reuse_dead = FALSE,
                   batch_size = max(100L, as.integer(ceiling(nrow(train) / 10))),
                   passes = p, tau = tau, seed = seed,
                   threads = 1, progress = FALSE, doc_topics = 0)
      if (seed == seeds[1]) bench_header(say, fits = stats::setNames(list(f), sprintf("%s, %d pass(es), tau %g", label, p, tau)))
      t1 <- proc.time() - t0
      sec <- c(sec, t1[["user.self"]] + t1[["sys.self"]])
      u <- as.numeric(coherence(f, train, measure = "umass", n = 20))
      tw <- f$topic_word
      kl <- rowSums(tw * (log(tw) - rep(log(bg), each = nrow(tw))))
      h <- c(h, as.numeric(heldout_loglik(f, test)))
      u_mean <- c(u_mean, mean(u))
      u_low <- c(u_low, mean(sort(u)[seq_len(max(1L, K %/% 10))]))
      kl_med <- c(kl_med, stats::median(kl))
      rm(f, tw)
    }
    say("   %2d pass(es) tau = %4g: held-out %.4f/token  UMass mean %8.2f  lowest decile %8.2f  median KL(topic || corpus) %.2f nats  %.1f CPU s (means of %d seeds)",
        p, tau, mean(h), mean(u_mean), mean(u_low), mean(kl_med), mean(sec), length(seeds))
  }
}

kos <- bench_corpus("kos")
sp <- split_heldout(kos, n_test = if (smoke) 10L else 343L, seed = 1)
invisible(fit_lda(sp$train[seq_len(min(200, nrow(sp$train))), ], K = 5, local = "gibbs",
                  passes = 1, progress = FALSE))
run("kos", sp$train, sp$test, passes = if (smoke) 1L else c(1L, 5L))
if (!smoke) {
  wiki <- bench_corpus("wikipara21000")
  sp <- split_heldout(wiki, n_test = 1000L, seed = 1)
  run("wikipara", sp$train, sp$test, passes = c(1L, 3L))
}
attr(say, "close")()
