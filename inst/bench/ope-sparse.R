# OPE's sparse summaries (issue 34, fit_lda(local = "ope", L = )): how sparse
# OPE's document proportions are, and what a minibatch's summary holds with
# and without L. The held-out part of inst/bench/results/ope-sparse.txt comes
# from inst/bench/quality.R (its header gives the command); this script adds
# the sizes. Run from the package root:
#   nice -n 10 Rscript inst/bench/ope-sparse.R
# Environment: SPARSEVI_BENCH_CORPORA (comma-separated, default the seven
# corpora of quality.R), SPARSEVI_BENCH_K (default 100), SPARSEVI_BENCH_OUT
# (results file, default inst/bench/results/ope-sparse.txt, appended to),
# SPARSEVI_BENCH_SMOKE=1 (a small simulated corpus, K = 3),
# SPARSEVI_BENCH_OPE_REST (the sparse form: 2 shape, the default for ML-
# and Online-OPE; 1 sampled; 0 renormalised; default 2).
#
# For each corpus: its training split as quality.R makes it (1,000 documents
# or 10% held out, split_heldout(seed = 1)); an ML-OPE fit (global = "ml",
# named: OPE's default learner is Online-OPE since issue 35) with OPE's
# default priors and T (alpha = eta = 1 / K, T = 50, seed 1, one thread) after 1
# lap and after 10; with each fit's topics, OPE on the first three
# minibatches of the fit's size (documents in corpus order, seeds c(1, b)),
# the ML-OPE summary (S_kv = sum_d n_dv theta_dk) dense and with L = 2, 4,
# 8, 16. Reported:
#  - vertices: topics Frank-Wolfe picked per document (theta_dk above
#    eps + (1 - K eps) / (T + 1), the least share a picked topic keeps; the
#    others hold only the random start's share), mean, 90% quantile, max;
#    "rest": the proportion mass outside them (the random start's 1 / (T + 1));
#  - values per minibatch: dense K x (batch vocabulary) vs the sparse
#    summary's entries, and bytes (dense: 8 per value + 4 per word; sparse:
#    12 per entry (topic index and value) + 8 per word, + 8 more per word
#    for the shape form's tail weight);
#  - CPU: the local step (OPE and its summary) with L over without, in the
#    same process, the median of 3 alternating runs of the three minibatches
#    (the machine was shared: ratios, not seconds);
#  - part 2: bytes a 2-worker PSOCK cluster sends back per lap, dense and
#    with L (SPARSEVI_BENCH_CLUSTER_CORPUS, default nips_f20;
#    SPARSEVI_BENCH_CORPORA=none runs this part only).
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
say <- bench_logger(bench_out("ope-sparse.txt"))
corpora <- if (smoke) "simulated" else strsplit(Sys.getenv("SPARSEVI_BENCH_CORPORA",
  "kos,poliblog5k,moviereviews,sotu_chunks,spamassassin,nips_f20,wikipara20000"), ",")[[1]]
corpora <- setdiff(corpora, "none")
K <- if (smoke) 3L else as.integer(Sys.getenv("SPARSEVI_BENCH_K", "100"))
Ls <- if (smoke) 2L else c(2L, 4L, 8L, 16L)
Ls <- Ls[Ls < K]
ope_rest <- as.integer(Sys.getenv("SPARSEVI_BENCH_OPE_REST", "2"))
rest_name <- c("renormalised", "sampled", "shape")[ope_rest + 1L]
data_dir <- file.path("..", "shared", "data")

bench_header(say, sprintf("OPE sparse summaries (%s form): sizes and CPU of the local step, K = %d",
                          rest_name, K))

# the first `n` minibatches of `size` documents of x (corpus order)
first_batches <- function(x, size, n = 3L) {
  starts <- seq(1L, nrow(x), by = size)[seq_len(min(n, ceiling(nrow(x) / size)))]
  lapply(starts, function(s) sparsevi:::dtm_subset(x, s:min(nrow(x), s + size - 1L)))
}

for (cn in corpora) {
  x <- bench_corpus(cn, data_dir)
  n_test <- min(1000L, as.integer(round(0.1 * nrow(x))))
  tr <- split_heldout(x, n_test = n_test, seed = 1)$train
  say("")
  say("== %s: %d training documents, V = %d, %d tokens", cn, nrow(tr), ncol(tr), sum(tr$count))
  for (laps in c(1L, 10L)) {
    # ML-OPE's settings when this section first ran, named
    fit <- fit_lda(tr, K = K, local = "ope", global = "ml", alpha = 1 / K, eta = 1 / K,
                   init = "bregman", tau = 1, kappa = 0.6, ope_iter = 50L,
                   passes = laps, seed = 1L, threads = 1L, progress = FALSE)
    bench_header(say, fits = stats::setNames(list(fit), sprintf("%s, %d laps", cn, laps)))
    ct <- fit$control
    batches <- first_batches(tr, ct$batch_size)
    run <- function(b, L) {
      sparsevi:::ope_run(batches[[b]], fit$topic_word, fit$alpha, ct$ope_iter, ct$ope_eps,
                         "theta", c(1, b), form = "blocks", top_L = L, sparse_rest = ope_rest)
    }
    dense <- lapply(seq_along(batches), run, L = 0L)
    theta <- do.call(cbind, lapply(dense, `[[`, "theta"))
    thr <- ct$ope_eps + (1 - K * ct$ope_eps) / (ct$ope_iter + 1)
    picked <- colSums(theta >= thr)
    rest <- colSums(theta * (theta < thr))
    say("   after %2d laps: vertices per document mean %.2f, 90%% %g, max %d; rest of the mass %.4f",
        laps, mean(picked), stats::quantile(picked, 0.9, names = FALSE), max(picked), mean(rest))
    Vb <- sum(vapply(dense, function(r) length(r$summary$words), 1L))
    nnz <- sum(vapply(batches, function(b) length(b$term), 1L))
    say("   %d minibatches of %d documents: %d words, %d (document, word) entries",
        length(batches), ct$batch_size, Vb, nnz)
    say("   %-8s %12s %12s %10s %9s", "summary", "values", "bytes", "vs dense", "CPU ratio")
    dense_bytes <- 8 * K * Vb + 4 * Vb
    say("   %-8s %12.0f %12.0f %10s %9s", "dense", K * Vb, dense_bytes, "1", "1")
    for (L in Ls) {
      sp <- lapply(seq_along(batches), run, L = L)
      stopifnot(identical(lapply(sp, `[[`, "theta"), lapply(dense, `[[`, "theta")))
      n <- sum(vapply(sp, function(r) length(r$summary$k), 1L))
      bytes <- 12 * n + 8 * Vb + if (ope_rest == 2L) 8 * Vb else 0
      cpu <- matrix(NA_real_, 3, 2)
      for (rep in 1:3) {
        cpu[rep, 1] <- cpu_of(lapply(seq_along(batches), run, L = 0L))$cpu
        cpu[rep, 2] <- cpu_of(lapply(seq_along(batches), run, L = L))$cpu
      }
      ratio <- if (stats::median(cpu[, 1]) > 0) stats::median(cpu[, 2]) / stats::median(cpu[, 1])
               else NA_real_
      say("   L = %-4d %12.0f %12.0f %10.4f %9.2f", L, n, bytes, bytes / dense_bytes, ratio)
    }
  }
}
# ---- part 2: what a cluster's workers send back ---------------------------
# ML-OPE on a 2-worker PSOCK cluster (sync = 2: each worker one batch per
# round), the corpus's training split in 8 batches (smoke: 4), 2 laps, one
# thread per worker: bytes received by the master per lap (the trace's
# bytes_received, serialised results of the workers), dense and with L; and
# whether the cluster fit equals the local fit (topics, bit for bit).
cl_corpus <- if (smoke) "simulated" else Sys.getenv("SPARSEVI_BENCH_CLUSTER_CORPUS", "nips_f20")
x <- bench_corpus(cl_corpus, data_dir)
tr <- split_heldout(x, n_test = min(1000L, as.integer(round(0.1 * nrow(x)))), seed = 1)$train
cl <- parallel::makePSOCKcluster(2L)
invisible(parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths()))
say("")
say("== cluster: %s (%d training documents), ML-OPE, K = %d, %d batches, sync = 2, 2 laps, 2 PSOCK workers, %s form",
    cl_corpus, nrow(tr), K, if (smoke) 4L else 8L, rest_name)
old_opt <- options(sparsevi.ope_sparse_rest = ope_rest)
say("   %-8s %22s %14s %10s", "summary", "received per lap (MB)", "vs dense", "= local")
dense_mb <- NA_real_
for (L in c(NA, Ls)) {
  args <- list(tr, K = K, local = "ope", global = "ml", alpha = 1 / K, eta = 1 / K,
               init = "bregman", tau = 1, kappa = 0.6, ope_iter = 50L,
               n_batches = if (smoke) 4L else 8L, passes = 2L,
               sync = 2L, seed = 1L, threads = 1L, progress = FALSE)
  if (!is.na(L)) args$L <- L
  a <- do.call(fit_lda, c(args, list(cluster = cl)))
  b <- do.call(fit_lda, args)
  mb <- mean(a$trace$bytes_received) / 2^20
  if (is.na(L)) {
    dense_mb <- mb
    bench_header(say, fits = list(`cluster, dense` = a))
  }
  say("   %-8s %22.2f %14.3f %10s", if (is.na(L)) "dense" else sprintf("L = %d", L), mb,
      mb / dense_mb, identical(a$topic_word, b$topic_word))
}
parallel::stopCluster(cl)
options(old_opt)
attr(say, "close")()
