# OPE's sparse summaries (fit_lda(local = "ope", L = )): the C kernel against
# a pure-R reference, the same fit on any threads and on a cluster, and no L
# (or L = K) the dense fit.

# Pure-R reference: the summary of weights W (K x D, one column per
# document): S_kv = sum_d n_dv W_dk ("theta") or sum_d n_dv phi_dvk with
# phi_dvk proportional to W_dk beta_kv ("phi"). Returns the K x V matrix.
ref_ope_weights_summary <- function(W, x, beta, mode) {
  m <- as.matrix(x)
  S <- matrix(0, nrow(W), ncol(m))
  for (d in seq_len(nrow(m))) {
    w <- W[, d]
    for (v in which(m[d, ] > 0)) {
      if (mode == "theta") {
        S[, v] <- S[, v] + m[d, v] * w
      } else {
        phi <- w * beta[, v]
        if (sum(phi) > 0) S[, v] <- S[, v] + m[d, v] * phi / sum(phi)
      }
    }
  }
  S
}

# Each document keeps L topics with weights w_dk (ties: the lower topic
# first). rest = 0: the topics of its L largest proportions, divided by
# their sum; rest = 1: its L - 1 largest as they are, and the rest of its
# mass on one topic drawn from the others in proportion to theta with one
# uniform of stream 2^32 + d - 1 of `seed` (OPE's stream0 = 0).
ref_ope_sparse_summary <- function(theta, x, beta, L, mode, rest = 0, seed = NULL) {
  K <- nrow(theta)
  W <- matrix(0, K, ncol(theta))
  for (d in seq_len(ncol(theta))) {
    th <- theta[, d]
    if (rest == 0) {
      keep <- order(-th, seq_len(K))[seq_len(L)]
      W[keep, d] <- th[keep] / sum(th[keep])
    } else {
      keep <- order(-th, seq_len(K))[seq_len(L - 1)]
      W[keep, d] <- th[keep]
      others <- setdiff(seq_len(K), keep)
      u <- .Call(sparsevi:::ffi_svi_rng_unif, seed, 2^32 + d - 1, 1)
      r <- sum(th[others])
      pick <- others[min(which(cumsum(th[others]) > u * r), length(others))]
      W[pick, d] <- r
    }
  }
  ref_ope_weights_summary(W, x, beta, mode)
}

# The shape form (rest = 2): each document's L largest proportions stay,
# the others are replaced by their mean.
ref_ope_shape_summary <- function(theta, x, beta, L, mode) {
  K <- nrow(theta)
  W <- theta
  for (d in seq_len(ncol(theta))) {
    keep <- order(-theta[, d], seq_len(K))[seq_len(L)]
    W[-keep, d] <- sum(theta[-keep, d]) / (K - L)
  }
  ref_ope_weights_summary(W, x, beta, mode)
}

# A shape-form summary (list(words, p, k, v, r)) as a K x V matrix: column u
# is r[u] times its weights (1 / K each for "theta", the word's column of
# beta normalised for "phi") plus its sums.
shape_summary_dense <- function(S, K, V, beta, mode) {
  M <- sparse_summary_dense(S, K, V)
  for (u in seq_along(S$words)) {
    v <- S$words[u] + 1L
    w <- if (mode == "theta") rep(1 / K, K) else beta[, v] / sum(beta[, v])
    if (S$r[u] != 0) M[, v] <- M[, v] + S$r[u] * w
  }
  M
}

# A list(words, p, k, v) summary as a K x V matrix.
sparse_summary_dense <- function(S, K, V) {
  M <- matrix(0, K, V)
  cols <- rep.int(S$words, diff(S$p)) + 1L
  M[cbind(S$k + 1L, cols)] <- S$v
  M
}

test_that("the sparse OPE summary matches its pure-R definition", {
  sim <- simulate_lda(D = 50, V = 30, K = 6, doc_length = 40, seed = 3)
  lambda <- sim$topic_word + 0.01
  lambda[, 5] <- 0 # a word no topic emits
  beta <- lambda / rowSums(lambda)
  seed <- sparsevi:::resolve_seed(4)
  for (mode in c("theta", "phi")) {
    dense <- sparsevi:::ope_run(sim$dtm, lambda, 0.3, 20, summary = mode, seed = seed)
    for (L in c(1L, 2L, 5L)) for (rest in 0:1) {
      r <- sparsevi:::ope_run(sim$dtm, lambda, 0.3, 20, summary = mode, seed = seed,
                              top_L = L, form = "blocks", sparse_rest = rest)
      # the documents' proportions are those of the dense run
      expect_identical(r$theta, dense$theta)
      S <- r$summary
      expect_named(S, c("words", "p", "k", "v"))
      # each word's topics distinct and increasing, at most L per entry
      for (u in seq_along(S$words)) {
        k <- S$k[seq_len(S$p[u + 1] - S$p[u]) + S$p[u]]
        expect_false(is.unsorted(k, strictly = TRUE))
      }
      expect_lte(length(S$k), L * length(sim$dtm$term))
      ref <- ref_ope_sparse_summary(r$theta, sim$dtm, beta, L, mode, rest, seed)
      expect_equal(sparse_summary_dense(S, 6L, ncol(sim$dtm)), ref, tolerance = 1e-12,
                   info = paste(mode, L, rest))
      # every token counted once (a word no topic emits left out of phi)
      tokens <- sum(sim$dtm$count[if (mode == "phi") sim$dtm$term != 4L else TRUE])
      expect_equal(sum(S$v), tokens, tolerance = 1e-10)
    }
  }
  # the shape form against its definition; every token counted once
  for (mode in c("theta", "phi")) for (L in c(1L, 2L, 5L)) {
    r <- sparsevi:::ope_run(sim$dtm, lambda, 0.3, 20, summary = mode, seed = seed,
                            top_L = L, form = "blocks", sparse_rest = 2L)
    S <- r$summary
    expect_named(S, c("words", "p", "k", "v", "r"))
    expect_lte(length(S$k), L * length(sim$dtm$term))
    expect_true(all(S$v >= 0) && all(S$r >= 0))
    ref <- ref_ope_shape_summary(r$theta, sim$dtm, beta, L, mode)
    got <- shape_summary_dense(S, 6L, ncol(sim$dtm), beta, mode)
    expect_equal(got, ref, tolerance = 1e-12, info = paste("shape", mode, L))
    tokens <- sum(sim$dtm$count[if (mode == "phi") sim$dtm$term != 4L else TRUE])
    expect_equal(sum(got), tokens, tolerance = 1e-10)
    # ML-OPE's global step expands it so (ope_shape_blocks())
    if (mode == "theta") {
      b <- sparsevi:::ope_shape_blocks(S, 6L)
      expect_equal(matrix(b$x, 6L), got[, S$words + 1L], tolerance = 1e-14)
    }
  }
  # with proportions equal off their top L the shape form is the dense summary
  th <- matrix(0.1, 6, 50)
  th[cbind(rep(1:2, 25), 1:50)] <- 0.6
  d <- ref_ope_sparse_summary(th, sim$dtm, beta, 6L, "phi")
  expect_equal(ref_ope_shape_summary(th, sim$dtm, beta, 1L, "phi"), d, tolerance = 1e-12)
  # L = K: the dense summary
  full <- sparsevi:::ope_run(sim$dtm, lambda, 0.3, 20, summary = "phi", seed = seed,
                             top_L = 6L, form = "blocks")
  dense <- sparsevi:::ope_run(sim$dtm, lambda, 0.3, 20, summary = "phi", seed = seed,
                              form = "blocks")
  expect_identical(full, dense)
})

test_that("the sparse OPE summary is the same for 1, 2 and 3 threads", {
  sim <- simulate_lda(D = 400, V = 80, K = 7, doc_length = 30, seed = 6)
  lambda <- sim$topic_word + 0.01
  seed <- sparsevi:::resolve_seed(2)
  for (mode in c("theta", "phi")) {
    for (rest in 0:2) {
      run <- function(threads) {
        sparsevi:::ope_run(sim$dtm, lambda, 0.2, 30, summary = mode, seed = seed,
                           threads = threads, top_L = 3L, form = "blocks", sparse_rest = rest)
      }
      a <- run(1L)
      expect_identical(run(2L), a)
      expect_identical(run(3L), a)
    }
  }
})

test_that("ML-OPE's sparse step equals the dense ML-OPE step on the same summary", {
  sim <- simulate_lda(D = 80, V = 40, K = 5, doc_length = 50, seed = 7)
  beta0 <- sim$topic_word + 0.02
  beta0 <- beta0 / rowSums(beta0)
  res <- sparsevi:::ope_run(sim$dtm[1:30, ], beta0, 0.2, 30, summary = "theta",
                            seed = sparsevi:::resolve_seed(1), top_L = 2L, form = "blocks")
  res$stats <- list(topic_mass = NULL)
  control <- list(tau = 1, kappa = 0.9, local = "ope", global = "ml", n_docs = 80)
  dense <- sparsevi:::lda_global_ml(list(topics = list(beta = beta0), t = 2L), res, 1L, control)
  lazy <- sparsevi:::lda_global_ml_lazy(list(topics = list(beta = beta0), t = 2L), res, 1L,
                                        control)
  lazy <- sparsevi:::lda_ope_finish(lazy, control)
  expect_equal(lazy$topics$beta, dense$topics$beta, tolerance = 1e-12, ignore_attr = TRUE)
  expect_identical(lazy$t, 3L)
})

test_that("fit_lda(local = \"ope\", L = ): dense without L, the same fit on any threads", {
  x <- cluster_corpus()
  args <- list(x, K = 6, local = "ope", n_batches = 4, passes = 2, seed = 5,
               progress = FALSE)
  for (g in c("ml", "stochastic", "streaming", "memoized")) {
    a <- c(args, global = g)
    dense <- suppressWarnings(do.call(fit_lda, c(a, threads = 1)))
    expect_identical(dense$control$ope_L, 0L)
    # L = K: the dense fit, bit for bit
    full <- suppressWarnings(do.call(fit_lda, c(a, L = 6, threads = 2)))
    expect_same_lda(full, dense)
    s1 <- suppressWarnings(do.call(fit_lda, c(a, L = 2, threads = 1)))
    expect_identical(s1$control$ope_L, 2L)
    expect_same_lda(suppressWarnings(do.call(fit_lda, c(a, L = 2, threads = 2))), s1)
    expect_same_lda(suppressWarnings(do.call(fit_lda, c(a, L = 2, threads = 3))), s1)
    expect_false(identical(s1$topic_word, dense$topic_word), info = g)
    # close to the dense fit: OPE's proportions are nearly sparse already
    expect_lt(max(abs(s1$topic_word - dense$topic_word)), 0.2)
  }
  # update() keeps the sparse summaries
  s1 <- do.call(fit_lda, c(args, L = 2))
  u <- update(s1, x, passes = 1, progress = FALSE)
  expect_identical(u$control$ope_L, 2L)
  expect_error(do.call(fit_lda, c(args, L = 7)), class = "sparsevi_error_argument")
})

test_that("a cluster fit of OPE with L equals the local fit and receives less", {
  skip_on_cran()
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  sv <- split_vocab_corpus()
  args <- list(sv$x, K = 20, local = "ope", batches = sv$batches, passes = 2, seed = 4,
               sync = 2, progress = FALSE)
  for (g in c("ml", "stochastic")) {
    a <- do.call(fit_lda, c(args, list(global = g, L = 2, cluster = cl)))
    b <- do.call(fit_lda, c(args, list(global = g, L = 2)))
    expect_same_lda(a, b)
    d <- do.call(fit_lda, c(args, list(global = g, cluster = cl)))
    expect_same_lda(d, do.call(fit_lda, c(args, list(global = g))))
    # the workers send back at most 2 values per entry (and, in the shape
    # form, one tail weight per word) instead of K = 20 per word
    expect_true(all(a$trace$bytes_received < 0.8 * d$trace$bytes_received))
  }
})

test_that("options(sparsevi.ope_sparse_rest) chooses the form, checked when the fit starts", {
  x <- cluster_corpus()
  args <- list(x, K = 6, local = "ope", L = 2, n_batches = 4, passes = 1, seed = 5,
               progress = FALSE)
  old <- options(sparsevi.ope_sparse_rest = NULL)
  on.exit(options(old), add = TRUE)
  # the shape form by default where the learner reads it, else the sampled one
  shape <- do.call(fit_lda, args)
  expect_identical(shape$control$ope_sparse_rest, 2L)
  expect_identical(do.call(fit_lda, c(args, global = "ml"))$control$ope_sparse_rest, 2L)
  for (g in c("streaming", "memoized")) {
    f <- suppressWarnings(do.call(fit_lda, c(args, global = g)))
    expect_identical(f$control$ope_sparse_rest, 1L)
  }
  options(sparsevi.ope_sparse_rest = 1)
  sampled <- do.call(fit_lda, args)
  expect_identical(sampled$control$ope_sparse_rest, 1L)
  expect_false(identical(shape$topic_word, sampled$topic_word))
  options(sparsevi.ope_sparse_rest = 0)
  renorm <- do.call(fit_lda, args)
  expect_identical(renorm$control$ope_sparse_rest, 0L)
  expect_false(identical(renorm$topic_word, sampled$topic_word))
  # update() keeps the form the fit started with
  options(sparsevi.ope_sparse_rest = 1)
  expect_identical(update(renorm, x, passes = 1, progress = FALSE)$control$ope_sparse_rest, 0L)
  options(sparsevi.ope_sparse_rest = 3)
  expect_error(do.call(fit_lda, args), class = "sparsevi_error_argument")
  # the shape form needs the topics as they stand at the step
  options(sparsevi.ope_sparse_rest = 2)
  expect_error(do.call(fit_lda, c(args, global = "memoized")),
               class = "sparsevi_error_argument", regexp = "global")
})
