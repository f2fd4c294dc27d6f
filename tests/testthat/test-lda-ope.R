# The OPE engine: Algorithm 1 against pure-R references, its summaries, the
# ML-OPE update, NPMI, and the OPE learners inside fit_lda().

ope_fixture <- function() {
  sim <- simulate_lda(D = 40, V = 30, K = 4, doc_length = 60, seed = 1)
  list(sim = sim, x = sim$dtm, lambda = sim$topic_word + 0.01)
}

doc_entries <- function(x, d) {
  if (x$doc_ptr[d + 1] > x$doc_ptr[d]) (x$doc_ptr[d] + 1):x$doc_ptr[d + 1] else integer(0)
}

test_that("OPE kernel reproduces the pure-R Algorithm 1 draw for draw", {
  f <- ope_fixture()
  seed <- sparsevi:::resolve_seed(7)
  for (alpha in c(0.3, 1, 2)) {
    res <- sparsevi:::ope_run(f$x, f$lambda, alpha = alpha, iter = 20, eps = 1e-10,
                              seed = seed, stream0 = 5, threads = 1L)
    ref <- ref_ope_block(f$x, f$lambda, alpha, 20, 1e-10, seed, 5)
    expect_equal(res$theta, ref$theta, tolerance = 1e-12)
    expect_equal(res$f_start, ref$f_start, tolerance = 1e-12)
    expect_equal(res$f_end, ref$f_end, tolerance = 1e-12)
  }
  expect_equal(colSums(res$theta), rep(1, nrow(f$x)), tolerance = 1e-12)
  expect_true(all(res$theta >= 1e-10))
})

test_that("documents solved in parallel draw what a block-by-block run draws", {
  # 150 documents: blocks of 64, 64 and 22, each block's documents drawing in
  # turn from stream stream0 + b; the kernel solves documents in parallel
  sim <- simulate_lda(D = 150, V = 30, K = 4, doc_length = 20, seed = 4)
  lam <- sim$topic_word + 0.01
  seed <- sparsevi:::resolve_seed(3)
  res <- sparsevi:::ope_run(sim$dtm, lam, alpha = 0.5, iter = 9, eps = 1e-10,
                            seed = seed, stream0 = 2, threads = 2L)
  ref <- lapply(0:2, function(b) {
    rows <- (64 * b + 1):min(150, 64 * (b + 1))
    ref_ope_block(sim$dtm[rows, ], lam, 0.5, 9, 1e-10, seed, 2 + b)
  })
  expect_equal(res$theta, do.call(cbind, lapply(ref, `[[`, "theta")), tolerance = 1e-12)
  expect_equal(res$f_end, unlist(lapply(ref, `[[`, "f_end")), tolerance = 1e-12)
})

test_that("for alpha >= 1 OPE reaches the projected-gradient maximum", {
  f <- ope_fixture()
  beta <- f$lambda / rowSums(f$lambda)
  seed <- sparsevi:::resolve_seed(3)
  docs <- 1:8
  for (alpha in c(1, 1.5, 3)) {
    map <- vapply(docs, function(d) {
      i <- doc_entries(f$x, d)
      ref_ope_map(beta, f$x$term[i] + 1L, f$x$count[i], alpha, 1e-10)$f
    }, 0)
    gap <- function(T) {
      res <- sparsevi:::ope_run(f$x, f$lambda, alpha = alpha, iter = T, seed = seed)
      map - res$f_end[docs]
    }
    g500 <- gap(500)
    g5000 <- gap(5000)
    # never above the maximum (up to the reference's own accuracy) ...
    expect_true(all(g5000 > -1e-6))
    # ... within 1e-3 relative of it, and converging at about the O(1/T) rate
    expect_lt(max(g5000 / abs(map)), 1e-3)
    expect_lt(max(g5000), max(g500) / 3)
  }
})

test_that("for alpha < 1 OPE improves on its starting point on nearly every document", {
  sim <- simulate_lda(D = 200, V = 60, K = 8, doc_length = 80, alpha = 0.2, seed = 2)
  res <- sparsevi:::ope_run(sim$dtm, sim$topic_word + 1e-3, alpha = 1 / 8, iter = 50,
                            seed = sparsevi:::resolve_seed(4))
  frac <- mean(res$f_end > res$f_start)
  expect_gte(frac, 0.95)
})

test_that("the first vertex follows the likelihood, not the random start", {
  # Each document uses only topic 2's words (topics with disjoint words). The
  # likelihood is counted once before the first random pick (as in the
  # authors' code), so after one iteration theta = (theta_1 + e_1) / 2 puts
  # at least half on topic 2 in every document. With a random first pick,
  # about half the documents would take the vertex of the largest component
  # of theta_1 instead (g2' = (alpha - 1) / theta_1 alone), mostly a wrong one.
  K <- 5L
  V <- 5L * K
  lam <- matrix(1e-12, K, V)
  for (k in seq_len(K)) lam[k, (5L * (k - 1L) + 1L):(5L * k)] <- 1
  D <- 60L
  m <- Matrix::sparseMatrix(i = rep(seq_len(D), each = 5L), j = rep(6:10, D),
                            x = rep(c(3, 1, 2, 1, 1), D), dims = c(D, V))
  x <- as_dtm(m)
  for (s in 1:3) {
    res <- sparsevi:::ope_run(x, lam, alpha = 0.1, iter = 1, eps = 1e-10,
                              seed = sparsevi:::resolve_seed(s), threads = 1L)
    expect_true(all(res$theta[2, ] > 0.5))
    # and further iterations keep it there
    res <- sparsevi:::ope_run(x, lam, alpha = 0.1, iter = 20, eps = 1e-10,
                              seed = sparsevi:::resolve_seed(s), threads = 1L)
    expect_true(all(max.col(t(res$theta)) == 2L))
  }
})

test_that("words no topic emits are ignored, not turned into NaN", {
  f <- ope_fixture()
  lam <- f$lambda
  lam[, 1:3] <- 0
  seed <- sparsevi:::resolve_seed(2)
  res <- sparsevi:::ope_run(f$x, lam, 0.5, 30, summary = "phi", seed = seed)
  expect_true(all(is.finite(res$theta)) && all(is.finite(res$f_end)))
  expect_true(all(is.finite(res$summary)))
  expect_equal(sum(res$summary[, 1:3]), 0)
  # the same as dropping those words from the documents
  m <- as.matrix(f$x)
  m[, 1:3] <- 0
  res2 <- sparsevi:::ope_run(as_dtm(m), lam, 0.5, 30, summary = "phi", seed = seed)
  expect_equal(res$theta, res2$theta, tolerance = 1e-12)
  expect_equal(res$f_end, res2$f_end, tolerance = 1e-12)
})

test_that("OPE summaries match their definitions", {
  f <- ope_fixture()
  seed <- sparsevi:::resolve_seed(9)
  beta <- f$lambda / rowSums(f$lambda)
  m <- as.matrix(f$x)
  r_theta <- sparsevi:::ope_run(f$x, f$lambda, 0.5, 30, summary = "theta", seed = seed)
  expect_equal(as.matrix(r_theta$summary), r_theta$theta %*% m, tolerance = 1e-12,
               ignore_attr = TRUE)
  r_phi <- sparsevi:::ope_run(f$x, f$lambda, 0.5, 30, summary = "phi", seed = seed)
  expect_equal(r_phi$theta, r_theta$theta)
  S <- matrix(0, nrow(beta), ncol(beta))
  for (d in seq_len(nrow(m))) {
    for (v in which(m[d, ] > 0)) {
      phi <- r_phi$theta[, d] * beta[, v]
      S[, v] <- S[, v] + m[d, v] * phi / sum(phi)
    }
  }
  expect_equal(as.matrix(r_phi$summary), S, tolerance = 1e-12, ignore_attr = TRUE)
  # phi summaries conserve tokens
  expect_equal(sum(r_phi$summary), sum(m), tolerance = 1e-10)
})

test_that("OPE is reproducible by seed and identical for 1 and 2 threads", {
  sim <- simulate_lda(D = 300, V = 50, K = 5, doc_length = 40, seed = 5)
  lam <- sim$topic_word + 0.01
  s <- sparsevi:::resolve_seed(11)
  a <- sparsevi:::ope_run(sim$dtm, lam, 0.2, 50, summary = "phi", seed = s, threads = 1L)
  b <- sparsevi:::ope_run(sim$dtm, lam, 0.2, 50, summary = "phi", seed = s, threads = 2L)
  c <- sparsevi:::ope_run(sim$dtm, lam, 0.2, 50, summary = "phi", seed = s, threads = 1L)
  expect_identical(a, b)
  expect_identical(a, c)
  d <- sparsevi:::ope_run(sim$dtm, lam, 0.2, 50, summary = "phi",
                          seed = sparsevi:::resolve_seed(12))
  expect_false(identical(a$theta, d$theta))
})

test_that("ML-OPE update mixes the old topics with the normalised summary", {
  set.seed(1)
  beta <- matrix(runif(12), 3, 4)
  beta <- beta / rowSums(beta)
  S <- matrix(rpois(12, 3) + 0.5, 3, 4)
  out <- .Call(sparsevi:::ffi_lda_global_ml, beta, S, 0.3)
  expect_equal(out, 0.7 * beta + 0.3 * S / rowSums(S))
  expect_equal(rowSums(out), rep(1, 3))
})

test_that("NPMI matches a brute-force computation", {
  sim <- simulate_lda(D = 60, V = 25, K = 3, doc_length = 15, seed = 6)
  tw <- sim$topic_word
  m <- as.matrix(sim$dtm)
  for (n in c(2L, 5L, 10L)) {
    ours <- sparsevi:::coherence_npmi(tw, sim$dtm, n)
    ref <- ref_npmi(tw, m, n)
    expect_equal(as.vector(unclass(ours)), ref$per_topic, tolerance = 1e-12)
    expect_equal(attr(ours, "mean"), ref$mean, tolerance = 1e-12)
  }
  two <- sparsevi:::coherence_npmi(tw, sim$dtm, 10L, threads = 2L)
  expect_identical(two, sparsevi:::coherence_npmi(tw, sim$dtm, 10L))
  expect_snapshot(print(sparsevi:::coherence_npmi(tw, sim$dtm, 4L)))
  # a pair that never co-occurs scores -1; one always together scores 1
  x <- as_dtm(matrix(c(1, 1, 0, 0,
                       1, 1, 0, 0,
                       0, 0, 1, 1), 3, 4, byrow = TRUE,
                     dimnames = list(NULL, c("a", "b", "c", "d"))))
  tw2 <- matrix(c(0.5, 0.4, 0.05, 0.05,
                  0.45, 0.05, 0.45, 0.05), 2, 4, byrow = TRUE,
                dimnames = list(NULL, c("a", "b", "c", "d")))
  r <- sparsevi:::coherence_npmi(tw2, x, 2L)
  expect_equal(unclass(r)[2], -1)
  expect_equal(unclass(r)[1], log((2 / 3) / (2 / 3)^2) / -log(2 / 3))
})

test_that("NPMI matches words by name against another vocabulary", {
  sim <- simulate_lda(D = 60, V = 25, K = 3, doc_length = 15, seed = 6)
  m <- as.matrix(sim$dtm)
  perm <- rev(seq_len(ncol(m)))
  ref_x <- as_dtm(m[, perm])
  expect_equal(sparsevi:::coherence_npmi(sim$topic_word, ref_x, 5L),
               sparsevi:::coherence_npmi(sim$topic_word, sim$dtm, 5L))
  # through the generic, from a plain matrix and from a fit-like object
  expect_equal(coherence(sim$topic_word, m, measure = "npmi", n = 5),
               sparsevi:::coherence_npmi(sim$topic_word, sim$dtm, 5L))
})

# Planted-topic recovery: greedy one-to-one matching of learned to true topics
# by L1 distance (unrelated topics of this simulation are about 1.9 apart).
matched_l1 <- function(tw, truth) {
  K <- nrow(truth)
  d <- as.matrix(stats::dist(rbind(truth, tw), method = "manhattan"))[1:K, K + 1:K]
  out <- numeric(K)
  for (i in seq_len(K)) {
    w <- which(d == min(d), arr.ind = TRUE)[1, ]
    out[w[1]] <- d[w[1], w[2]]
    d[w[1], ] <- Inf
    d[, w[2]] <- Inf
  }
  out
}

planted <- function() {
  simulate_lda(D = 600, V = 100, K = 5, doc_length = 80, alpha = 0.1, eta = 0.05,
               seed = 3)
}

# (simulated LDA documents have no words common to all: no background topic)
test_that("Online-OPE, Streaming-OPE and memoized OPE recover planted topics", {
  sim <- planted()
  for (g in c("stochastic", "memoized", "streaming")) {
    fit <- suppressWarnings(fit_lda(sim$dtm, K = 5, local = "ope", global = g,
                                    batch_size = 100, passes = 10, kappa = 0.9,
                                    seed = 2, progress = FALSE, background = 0))
    expect_s3_class(fit, "sparsevi_lda")
    expect_lt(max(matched_l1(fit$topic_word, sim$topic_word)),
              if (g == "streaming") 0.25 else 0.1)
  }
})

test_that("ML-OPE recovers planted topics up to the bias of its estimator", {
  sim <- planted()
  fit <- fit_lda(sim$dtm, K = 5, local = "ope", global = "ml", batch_size = 100,
                 passes = 10, kappa = 0.9, seed = 2, progress = FALSE, background = 0)
  expect_null(fit$lambda)
  expect_equal(rowSums(fit$topic_word), rep(1, 5), tolerance = 1e-10)
  # eq. 21 spreads each document's words over all its topics: even the true
  # theta gives topics about 0.44 (L1) from the truth on this corpus
  m <- as.matrix(sim$dtm)
  oracle <- t(sim$doc_topic) %*% m
  oracle <- oracle / rowSums(oracle)
  bias <- max(rowSums(abs(oracle - sim$topic_word)))
  expect_lt(max(matched_l1(fit$topic_word, sim$topic_word)), bias + 0.1)
})

test_that("ML-OPE topic sizes are expected tokens per topic (print, summary)", {
  sim <- simulate_lda(D = 300, V = 60, K = 3, doc_length = 50, seed = 8)
  fit <- fit_lda(sim$dtm, K = 3, local = "ope", global = "ml", batch_size = 100,
                 passes = 4, kappa = 0.9, seed = 2, progress = FALSE, background = 0)
  mass <- fit$state$topic_mass
  expect_length(mass, 3)
  expect_true(all(mass > 0))
  # expected tokens of the corpus: each batch's mass (its token count)
  # scaled by D / |B| and averaged over batches, so the total estimates the
  # corpus' token count (exact when batches hold equal numbers of tokens)
  expect_equal(sum(mass), sum(sim$dtm$count), tolerance = 0.02)
  # the hook reports them; the variational learners keep using lambda
  expect_identical(sparsevi:::lda_topic_sizes_ope(fit), mass)
  st <- fit_lda(sim$dtm, K = 3, local = "ope", global = "stochastic", batch_size = 100,
                passes = 1, seed = 2, progress = FALSE)
  expect_null(sparsevi:::lda_topic_sizes_ope(st))
  # the shares follow the tokens the fitted topics explain in the corpus
  theta <- predict(fit, sim$dtm, method = "ope", seed = 1)
  infer_share <- colSums(theta * sparsevi:::doc_lengths(sim$dtm))
  expect_equal(mass / sum(mass), unname(infer_share / sum(infer_share)), tolerance = 0.05)
  # print() and summary() read them: R/lda-methods.R's lda_topic_sizes() asks the
  # engine (hook lda_topic_sizes_<local>)
  expect_identical(sparsevi:::lda_topic_sizes(fit), mass)
  expect_equal(summary(fit)$topic_share, mass / sum(mass))
  out <- capture.output(print(fit))
  big <- which.max(mass)
  expect_true(any(grepl(sprintf("%3d (%4.1f%%)", big, 100 * max(mass) / sum(mass)), out,
                        fixed = TRUE)))
})

test_that("OPE learners are reproducible by seed and identical for 1 and 2 threads", {
  sim <- simulate_lda(D = 300, V = 60, K = 4, doc_length = 50, seed = 8)
  for (g in c("ml", "stochastic")) {
    a <- fit_lda(sim$dtm, K = 4, local = "ope", global = g, batch_size = 100,
                 passes = 2, seed = 5, threads = 1, progress = FALSE)
    b <- fit_lda(sim$dtm, K = 4, local = "ope", global = g, batch_size = 100,
                 passes = 2, seed = 5, threads = 2, progress = FALSE)
    expect_identical(a$topic_word, b$topic_word)
    c <- fit_lda(sim$dtm, K = 4, local = "ope", global = g, batch_size = 100,
                 passes = 2, seed = 6, threads = 1, progress = FALSE)
    expect_false(identical(a$topic_word, c$topic_word))
  }
})

test_that("predict(method = \"ope\") infers topic mixtures and survives saveRDS", {
  sim <- simulate_lda(D = 200, V = 60, K = 4, doc_length = 60, seed = 9)
  fit <- fit_lda(sim$dtm, K = 4, local = "ope", global = "ml", batch_size = 100,
                 passes = 3, seed = 1, progress = FALSE)
  th <- predict(fit, sim$dtm[1:20, ], method = "ope", seed = 3)
  expect_equal(dim(th), c(20L, 4L))
  expect_equal(unname(rowSums(th)), rep(1, 20), tolerance = 1e-12)
  expect_identical(th, predict(fit, sim$dtm[1:20, ], method = "ope", seed = 3,
                               threads = 2))
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  expect_identical(predict(back, sim$dtm[1:20, ], method = "ope", seed = 3), th)
  # more iterations: a different (still valid) answer
  th2 <- predict(fit, sim$dtm[1:20, ], method = "ope", seed = 3, ope_iter = 200)
  expect_false(identical(th, th2))
  # OPE also infers with a VB-trained fit
  vb <- fit_lda(sim$dtm, K = 4, passes = 2, seed = 1, progress = FALSE)
  expect_equal(dim(predict(vb, sim$dtm[1:5, ], method = "ope", seed = 1)), c(5L, 4L))
})

test_that("predictive probability (Than & Doan App. A) runs as issue 6 asks", {
  sim <- simulate_lda(D = 200, V = 60, K = 4, doc_length = 60, seed = 10)
  fit <- fit_lda(sim$dtm[1:150, ], K = 4, local = "ope", global = "ml",
                 batch_size = 50, passes = 3, seed = 1, progress = FALSE)
  test <- sim$dtm[151:200, ]
  pp <- heldout_loglik(fit, test, method = "completion", by = "tokens",
                       observed_frac = 0.7, seed = 1)
  expect_true(is.finite(pp) && pp < 0)
  # 30% of the tokens are scored
  expect_equal(attr(pp, "tokens"), sum(test$count) * 0.3, tolerance = 0.02)
  sp <- split_heldout(test, n_test = 49, observed_frac = 0.7, by = "tokens", seed = 1)
  expect_true(is.finite(heldout_loglik(fit, sp$test)))
})

test_that("OPE controls are checked with classed errors", {
  sim <- simulate_lda(D = 50, V = 30, K = 3, doc_length = 30, seed = 1)
  expect_error(fit_lda(sim$dtm, K = 3, local = "ope", ope_iter = 0, progress = FALSE),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm, K = 3, local = "ope", ope_eps = 0.5, progress = FALSE),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm, K = 3, local = "ope", global = "batch", progress = FALSE),
               class = "sparsevi_error_engine")
  fit <- fit_lda(sim$dtm, K = 3, local = "ope", passes = 1, seed = 1, progress = FALSE)
  expect_error(predict(fit, sim$dtm, method = "ope", ope_iter = -1),
               class = "sparsevi_error_argument")
  expect_error(coherence(fit, sim$dtm, measure = "npmi", n = 1),
               class = "sparsevi_error_argument")
})

test_that("OPE reads a lazy store as the dense topics it stands for", {
  f <- ope_fixture()
  seed <- sparsevi:::resolve_seed(4)
  X <- f$lambda
  offset <- 0.3
  scale <- 0.7
  dense <- sparsevi:::ope_run(f$x, offset + scale * X, 0.5, 30, summary = "phi", seed = seed)
  lazy <- sparsevi:::ope_run(f$x, X, 0.5, 30, summary = "phi", seed = seed,
                             store = c(offset, scale, rowSums(X)))
  expect_equal(lazy$theta, dense$theta, tolerance = 1e-12)
  expect_equal(as.matrix(lazy$summary), as.matrix(dense$summary), tolerance = 1e-12)
  expect_s4_class(lazy$summary, "dgCMatrix")
})

test_that("every OPE learner on its lazy store equals its dense global step", {
  sim <- simulate_lda(D = 60, V = 30, K = 3, seed = 5)
  ns <- asNamespace("sparsevi")
  dense_of <- c(ml_lazy = "lda_global_ml", stochastic_lazy = "lda_global_stochastic",
                streaming_lazy = "lda_global_streaming",
                memoized_lazy = "lda_global_memoized")
  for (g in c("ml", "stochastic", "streaming", "memoized")) {
    run <- function() {
      suppressWarnings(fit_lda(sim$dtm, K = 3, local = "ope", global = g, n_batches = 3,
                               passes = 2, seed = 6, progress = FALSE))
    }
    lazy <- run()
    lazy_name <- paste0("lda_global_", g, "_lazy")
    orig <- get(lazy_name, envir = ns)
    dense_fun <- get(dense_of[[paste0(g, "_lazy")]], envir = ns)
    # the local step gives its summary as list(words, x); the dense steps
    # take a K x V matrix
    dense_step <- function(state, res, batch_id, control) {
      res$summary <- sparsevi:::cvb0_summary_dense(res$summary, 3L, ncol(sim$dtm))
      dense_fun(state, res, batch_id, control)
    }
    utils::assignInNamespace(lazy_name, dense_step, ns = "sparsevi")
    dense <- tryCatch(run(), finally = utils::assignInNamespace(lazy_name, orig,
                                                                ns = "sparsevi"))
    expect_null(lazy$state$topics$store)
    expect_equal(lazy$topic_word, dense$topic_word, tolerance = 1e-9, info = g)
    expect_equal(lazy$lambda, dense$lambda, tolerance = 1e-9, info = g)
  }
})

test_that("OPE's summary as list(words, x) holds the sparse summary's values", {
  f <- ope_fixture()
  seed <- sparsevi:::resolve_seed(8)
  for (mode in c("theta", "phi")) {
    sp <- sparsevi:::ope_run(f$x, f$lambda, 0.5, 30, summary = mode, seed = seed)
    bl <- sparsevi:::ope_run(f$x, f$lambda, 0.5, 30, summary = mode, seed = seed,
                             form = "blocks")
    expect_identical(bl$theta, sp$theta)
    expect_named(bl$summary, c("words", "x"))
    K <- nrow(f$lambda)
    # the batch's words, each with its K values
    expect_identical(bl$summary$words, sort(unique(f$x$term)))
    expect_length(bl$summary$x, K * length(bl$summary$words))
    dense <- matrix(0, K, ncol(f$lambda))
    dense[, bl$summary$words + 1L] <- bl$summary$x
    expect_identical(dense, as.matrix(sp$summary), info = mode)
  }
  # the phi summary adds up to the batch's tokens
  expect_equal(sum(bl$summary$x), sum(f$x$count), tolerance = 1e-10)
})

test_that("every OPE learner fits the same from the sparse and the block summary", {
  sim <- simulate_lda(D = 60, V = 30, K = 3, seed = 9)
  ns <- asNamespace("sparsevi")
  orig <- get("lda_local_ope", envir = ns)
  # the local step with the summary in its former form (a sparse dgCMatrix)
  sparse_local <- function(batch, state, control, seed, threads) {
    res <- orig(batch, state, control, seed, threads)
    res$summary <- sparsevi:::ope_blocks_dgc(res$summary, 3L, ncol(sim$dtm))
    res
  }
  for (g in c("ml", "stochastic", "streaming", "memoized")) {
    run <- function() {
      suppressWarnings(fit_lda(sim$dtm, K = 3, local = "ope", global = g, n_batches = 3,
                               passes = 2, seed = 2, progress = FALSE))
    }
    blocks <- run()
    utils::assignInNamespace("lda_local_ope", sparse_local, ns = "sparsevi")
    sparse <- tryCatch(run(), finally = utils::assignInNamespace("lda_local_ope", orig,
                                                                 ns = "sparsevi"))
    expect_identical(blocks$topic_word, sparse$topic_word, info = g)
    expect_identical(blocks$lambda, sparse$lambda, info = g)
    expect_identical(blocks$state$topic_mass, sparse$state$topic_mass, info = g)
    expect_identical(blocks$trace$objective, sparse$trace$objective, info = g)
  }
})

test_that("ML-OPE's row normalisation in C is R's arithmetic, in place only when allowed", {
  set.seed(3)
  X <- matrix(rexp(4 * 50), 4, 50)
  X[2, ] <- 0
  keep <- X + 0
  Y <- X # X now shared (bound twice): never written
  # R's X / rowSums(X), on a copy
  r1 <- .Call(sparsevi:::ffi_lda_ope_rows, X,
              list(r_sums = TRUE, divide = TRUE, in_place = TRUE, given = FALSE, mark = 0L))
  expect_identical(r1, keep / rowSums(keep))
  expect_identical(X, keep)
  # the summary's x * ifelse(rs > 0, 1 / rs, 0)
  v <- as.vector(keep)
  rs <- rowSums(matrix(v, nrow = 4))
  r2 <- .Call(sparsevi:::ffi_lda_ope_rows, v + 0,
              list(K = 4L, r_sums = TRUE, divide = FALSE, in_place = TRUE, given = FALSE,
                   mark = 0L))
  expect_identical(r2, v * ifelse(rs > 0, 1 / rs, 0))
  # the topics from a store, as ffi_lda_normalise_rows()
  r3 <- .Call(sparsevi:::ffi_lda_ope_rows, keep,
              list(r_sums = FALSE, divide = FALSE, in_place = FALSE, given = FALSE,
                   mark = -1L))
  expect_identical(r3, .Call(sparsevi:::ffi_lda_normalise_rows, keep))
  expect_identical(X, keep)
  expect_identical(Y, keep)
  # a table given up (a new fit's start): written in place and marked
  Z <- keep + 0
  Z2 <- Z
  r4 <- .Call(sparsevi:::ffi_lda_ope_rows, Z,
              list(r_sums = TRUE, divide = TRUE, in_place = TRUE, given = TRUE, mark = 1L))
  expect_identical(as.vector(Z2), as.vector(keep / rowSums(keep)))
  expect_true(attr(Z2, "sparsevi_owned"))
})

test_that("an ML-OPE fit's topic_word is its beta, named, unmarked", {
  sim <- simulate_lda(D = 60, V = 30, K = 3, seed = 4)
  fit <- fit_lda(sim$dtm, K = 3, local = "ope", global = "ml", passes = 2, n_batches = 2,
                 seed = 1, progress = FALSE)
  expect_identical(fit$topic_word, fit$state$topics$beta)
  expect_identical(colnames(fit$topic_word), sim$dtm$vocab)
  expect_null(attr(fit$topic_word, "sparsevi_owned"))
  expect_equal(rowSums(fit$topic_word), rep(1, 3), tolerance = 1e-12)
  # the fit is usable further, and update() leaves it as it was
  tw0 <- fit$topic_word + 0
  fit2 <- update(fit, sim$dtm, passes = 1, progress = FALSE)
  expect_identical(fit$topic_word, tw0)
  expect_false(isTRUE(all.equal(fit2$topic_word, tw0)))
  expect_identical(colnames(fit2$topic_word), sim$dtm$vocab)
  expect_null(attr(fit2$topic_word, "sparsevi_owned"))
  expect_identical(colnames(fit$topic_word), sim$dtm$vocab) # fit itself untouched
})

test_that("a streaming fit's lambda, made in its start's table, is the fit's own", {
  sim <- simulate_lda(D = 60, V = 30, K = 3, seed = 4)
  for (loc in c("ope", "vb")) {
    fit <- fit_lda(sim$dtm, K = 3, local = loc, global = "streaming", n_batches = 3,
                   seed = 1, progress = FALSE)
    expect_null(attr(fit$lambda, "sparsevi_owned"))
    expect_null(attr(fit$topic_word, "sparsevi_owned"))
    expect_identical(dim(fit$lambda), c(3L, 30L))
    # predict() and update() work from it
    expect_identical(dim(predict(fit, sim$dtm[1:5, ], seed = 1)), c(5L, 3L))
  }
})

test_that("OPE's default learner is Online-OPE re-seeding dead topics; ML-OPE re-seeds none", {
  sim <- simulate_lda(D = 200, V = 100, K = 3, seed = 1)
  # more topics than the corpus holds: some die
  fit <- fit_lda(sim$dtm, K = 30, local = "ope", passes = 6, seed = 1, progress = FALSE)
  expect_identical(fit$global, "stochastic")
  expect_true(fit$control$reuse_dead)
  expect_identical(fit$control$dead_share, 0.001)
  expect_true(any(fit$reused_dead > 0))
  # the same fit on two threads
  two <- fit_lda(sim$dtm, K = 30, local = "ope", passes = 6, seed = 1, threads = 2,
                 progress = FALSE)
  expect_identical(two$topic_word, fit$topic_word)
  expect_identical(two$reused_dead, fit$reused_dead)
  # without re-seeding: another fit, with more dead topics
  off <- fit_lda(sim$dtm, K = 30, local = "ope", passes = 6, seed = 1, reuse_dead = FALSE,
                 progress = FALSE)
  expect_false(off$control$reuse_dead)
  expect_false(identical(off$topic_word, fit$topic_word))
  expect_gt(length(dead_topics(off, duplicates = FALSE)),
            length(dead_topics(fit, duplicates = FALSE)))
  # ML-OPE has no lambda to re-seed: off by default, an error when asked for
  ml <- fit_lda(sim$dtm, K = 12, local = "ope", global = "ml", passes = 2, seed = 1,
                progress = FALSE)
  expect_false(ml$control$reuse_dead)
  expect_error(fit_lda(sim$dtm, K = 12, local = "ope", global = "ml", reuse_dead = TRUE,
                       progress = FALSE),
               "global = \"stochastic\"", class = "sparsevi_error_argument")
  expect_false(any(grepl("reuse_dead", capture.output(print(ml)))))
})

test_that("Online-OPE's default minibatches are max(100, D / 10) documents, at most 500", {
  ns <- asNamespace("sparsevi")
  expect_identical(ns$ope_batch_size(50), 50L)
  expect_identical(ns$ope_batch_size(3087), 309L)
  expect_identical(ns$ope_batch_size(5000), 500L)
  expect_identical(ns$ope_batch_size(19000), 500L)
  sim <- simulate_lda(D = 6000, V = 20, K = 2, doc_length = 4, seed = 1)
  fit <- fit_lda(sim$dtm, K = 2, local = "ope", passes = 1, seed = 1, progress = FALSE)
  expect_identical(fit$control$batch_size, 500L)
  expect_identical(fit$control$n_batches, 12L)
  expect_identical(nrow(fit$trace), 1L)
  # what the caller gives wins; ML-OPE keeps the loop's D / 10
  mine <- fit_lda(sim$dtm, K = 2, local = "ope", passes = 1, seed = 1, batch_size = 2000,
                  progress = FALSE)
  expect_identical(mine$control$n_batches, 3L)
  three <- fit_lda(sim$dtm, K = 2, local = "ope", passes = 1, seed = 1, n_batches = 3,
                   progress = FALSE)
  expect_identical(three$control$batch_size, 2000L)
  ml <- fit_lda(sim$dtm, K = 2, local = "ope", global = "ml", passes = 1, seed = 1,
                progress = FALSE)
  expect_identical(ml$control$batch_size, 600L)
  own <- fit_lda(sim$dtm, K = 2, local = "ope", passes = 1, seed = 1,
                 batches = split(seq_len(6000), rep(1:4, each = 1500)), progress = FALSE)
  expect_identical(own$control$n_batches, 4L)
})

test_that("with a background topic the OPE kernel matches the reference draw for draw", {
  f <- ope_fixture()
  seed <- sparsevi:::resolve_seed(7)
  for (alpha in c(0.3, 1)) {
    res <- sparsevi:::ope_run(f$x, f$lambda, alpha = alpha, iter = 20, eps = 1e-10,
                              seed = seed, stream0 = 5, threads = 1L, background = 0.4)
    ref <- ref_ope_block(f$x, f$lambda, alpha, 20, 1e-10, seed, 5, background = 0.4)
    expect_equal(res$theta, ref$theta, tolerance = 1e-12)
    expect_equal(res$f_start, ref$f_start, tolerance = 1e-12)
    expect_equal(res$f_end, ref$f_end, tolerance = 1e-12)
    plain <- sparsevi:::ope_run(f$x, f$lambda, alpha = alpha, iter = 20, eps = 1e-10,
                                seed = seed, stream0 = 5, threads = 1L)
    expect_gt(sum(res$theta[1, ]), sum(plain$theta[1, ]))
    # background 0 is bit for bit the option left out
    expect_identical(sparsevi:::ope_run(f$x, f$lambda, alpha = alpha, iter = 20, eps = 1e-10,
                                        seed = seed, stream0 = 5, threads = 1L,
                                        background = 0), plain)
  }
})

test_that("OPE's background topic holds the words common to every document", {
  # the default: 0.1 up to K = 200, none above
  b <- expect_background_engine("ope", default = 0.1, bad = "a")
  expect_gte(b$common_in(b$fit_b())[1], 3)
  expect_identical(sparsevi:::ope_background(200), 0.1)
  expect_identical(sparsevi:::ope_background(201), 0)
})

test_that("the ope local step gives the same bits on any number of the package's threads", {
  expect_same_bits_on_threads("ope")
})
