# The "gibbs" engine (Mimno, Hoffman & Blei 2012) and its evaluators.

gibbs_fixture <- function() {
  # a store with a mix of zero and non-zero N*_kw
  K <- 6; V <- 8
  u <- sparsevi:::uniform_source(11)
  nstar <- matrix(0, K, V)
  on <- u(K * V) < 0.4
  nstar[on] <- 10 * u(sum(on))
  nstar[, 8] <- 0 # a word no topic has seen
  list(K = K, V = V, nstar = nstar, eta = 0.3,
       alpha = c(0.1, 0.2, 0.1, 0.5, 0.1, 0.3))
}

test_that("the sparse sampler draws from the exact conditional (chi-square)", {
  f <- gibbs_fixture()
  store <- ref_store(f$nstar)
  lambda <- f$eta + f$nstar
  ndk <- c(3L, 0L, 1L, 0L, 7L, 2L)
  n <- 40000
  for (w in c(1L, 3L, 8L)) {
    counts <- .Call(sparsevi:::ffi_lda_gibbs_draw, store, f$eta, f$alpha, ndk,
                    w - 1L, n, 0, c(0, 42))
    p <- ref_gibbs_conditional(lambda, f$alpha, ndk, w)
    expect_equal(sum(counts), n)
    expect_gt(suppressWarnings(stats::chisq.test(counts, p = p))$p.value, 0.001)
    # the test has power: a conditional without the document counts is rejected
    wrong <- ref_gibbs_conditional(lambda, f$alpha, 0 * ndk, w)
    expect_lt(suppressWarnings(stats::chisq.test(counts, p = wrong))$p.value, 1e-6)
  }
  # an empty document: only the word and alpha parts
  counts <- .Call(sparsevi:::ffi_lda_gibbs_draw, store, f$eta, f$alpha, integer(6),
                  1L, n, 0, c(0, 43))
  p <- ref_gibbs_conditional(lambda, f$alpha, integer(6), 2L)
  expect_gt(suppressWarnings(stats::chisq.test(counts, p = p))$p.value, 0.001)
})

test_that("with a background topic the sampler draws from the exact conditional", {
  # topic 1's prior alpha_1 + bg: words with and without a non-zero of topic 1,
  # and an empty document
  f <- gibbs_fixture()
  store <- ref_store(f$nstar)
  lambda <- f$eta + f$nstar
  bg <- 2.5
  a1 <- f$alpha + c(bg, rep(0, 5))
  n <- 40000
  words <- c(which(f$nstar[1, ] > 0)[1], which(f$nstar[1, ] == 0)[1])
  for (ndk in list(c(3L, 0L, 1L, 0L, 7L, 2L), integer(6))) {
    for (w in words) {
      counts <- .Call(sparsevi:::ffi_lda_gibbs_draw, store, f$eta, f$alpha, ndk,
                      w - 1L, n, bg, c(0, 44))
      expect_gt(suppressWarnings(stats::chisq.test(counts, p = ref_gibbs_conditional(
        lambda, a1, ndk, w)))$p.value, 0.001)
      expect_lt(suppressWarnings(stats::chisq.test(counts, p = ref_gibbs_conditional(
        lambda, f$alpha, ndk, w)))$p.value, 1e-6)
    }
  }
})

test_that("gibbs's background topic holds the words common to every document", {
  expect_background_engine("gibbs", default = 0, bad = NA)
})

test_that("the scaled store samples like its materialised lambda", {
  f <- gibbs_fixture()
  store <- ref_store(f$nstar / 0.25)
  store$scale <- 0.25
  lambda <- sparsevi:::gibbs_materialise(store, f$eta)
  expect_equal(lambda, f$eta + f$nstar, tolerance = 1e-14)
  ndk <- c(0L, 4L, 1L, 0L, 2L, 2L)
  counts <- .Call(sparsevi:::ffi_lda_gibbs_draw, store, f$eta, f$alpha, ndk, 2L,
                  40000, 0, c(0, 7))
  p <- ref_gibbs_conditional(lambda, f$alpha, ndk, 3L)
  expect_gt(suppressWarnings(stats::chisq.test(counts, p = p))$p.value, 0.001)
})

test_that("the lazy sparse update equals the dense update, across rescalings", {
  K <- 5; V <- 30; eta <- 0.4
  u <- sparsevi:::uniform_source(3)
  nstar0 <- matrix(0, K, V)
  nstar0[u(K * V) < 0.2] <- 2
  store <- ref_store(nstar0)
  dense <- eta + nstar0
  scales <- numeric(0)
  for (t in 0:79) {
    rho <- (1 + t)^-0.6 # rho = 1 at t = 0: the old values are dropped
    nhat <- matrix(0, K, V)
    on <- u(K * V) < 0.01
    nhat[on] <- round(5 * u(sum(on))) / 2
    bs <- ref_store(nhat)
    store <- .Call(sparsevi:::ffi_lda_global_gibbs, store, bs[1:3], rho, 7, 1e-2)
    dense <- ref_dense_svi(dense, nhat, rho, 7, eta)
    scales <- c(scales, store$scale)
  }
  got <- sparsevi:::gibbs_materialise(store, eta)
  expect_lt(max(abs(got - dense) / dense), 1e-10)
  # the running product was reset several times
  expect_gt(sum(scales == 1), 2)
  expect_lt(min(scales), 2e-2)
  expect_gt(min(scales), 1e-3)
  # totals are consistent with the stored values
  expect_equal(store$tot, rowSums(got - eta) / store$scale, tolerance = 1e-10)
  # the store is sparse: pairs never touched since the reset at t = 0 stay zero
  expect_lt(length(store$x), K * V)
})

test_that("the local step conserves tokens and is reproducible across threads", {
  sim <- simulate_lda(D = 150, V = 40, K = 3, doc_length = 30, seed = 5)
  dtm <- sim$dtm
  ns <- asNamespace("sparsevi")
  u <- sparsevi:::uniform_source(9)
  nstar <- matrix(0, 3, 40)
  nstar[u(120) < 0.3] <- 5
  state <- lda_test_state(gibbs = ref_store(nstar), t = 4)
  control <- list(eta = 0.3, alpha = 0.1, burnin = 2, samples = 3)
  r1 <- ns$lda_local_gibbs(dtm, state, control, c(0, 1), 1L)
  r2 <- ns$lda_local_gibbs(dtm, state, control, c(0, 1), 2L)
  r3 <- ns$lda_local_gibbs(dtm, state, control, c(0, 2), 1L)
  expect_identical(r1, r2)
  expect_false(identical(r1$summary, r3$summary))
  n_tok <- sum(dtm$count)
  expect_equal(sum(r1$summary), n_tok)
  expect_equal(colSums(as.matrix(r1$doc_topic)), ns$doc_lengths(dtm))
  # per word, the summary counts that word's tokens
  expect_equal(unname(Matrix::colSums(r1$summary)),
               tabulate(rep(dtm$term + 1L, dtm$count), 40))
  # with S saved sweeps, values are multiples of 1/S
  expect_equal(r1$summary@x * 3, round(r1$summary@x * 3))
  expect_equal(r1$stats$tokens, n_tok)
})

test_that("planted topics are recovered and training is reproducible", {
  sim <- simulate_lda(D = 200, V = 60, K = 4, doc_length = 50, seed = 1)
  a <- ref_gibbs_train(sim$dtm, 4, laps = 8, seed = 3)
  tw <- a$lambda / rowSums(a$lambda)
  expect_gt(min(ref_topic_match(tw, sim$topic_word)), 0.9)
  b <- ref_gibbs_train(sim$dtm, 4, laps = 8, seed = 3, threads = 2L)
  expect_identical(a$state, b$state)
  # the store stays sparse (most word-topic pairs are exactly eta)
  expect_lt(length(a$state$topics$sparse$x), 0.8 * 4 * 60)
})

test_that("left-to-right matches the pure-R sampler on the same random stream", {
  sim <- simulate_lda(D = 6, V = 12, K = 3, doc_length = 15, seed = 2)
  beta <- sim$topic_word
  m <- as.matrix(sim$dtm)
  alpha <- c(0.1, 0.3, 0.2)
  res <- .Call(sparsevi:::ffi_eval_ltr, sim$dtm, 12L, beta,
               list(alpha = alpha, particles = 4L, stream0 = 2^52), c(0, 99), 1L)
  ref <- ref_ltr(beta, alpha, m, 4L, c(0, 99), 2^52)
  expect_equal(res$loglik, ref, tolerance = 1e-12)
  expect_equal(res$tokens, unname(rowSums(m)))
  res2 <- .Call(sparsevi:::ffi_eval_ltr, sim$dtm, 12L, beta,
                list(alpha = alpha, particles = 4L, stream0 = 2^52), c(0, 99), 2L)
  expect_identical(res, res2)
})

test_that("heldout_loglik_left_to_right scores documents and checks its input", {
  sim <- simulate_lda(D = 40, V = 30, K = 3, doc_length = 40, seed = 4)
  tw <- sim$topic_word
  colnames(tw) <- sim$dtm$vocab
  fit <- list(topic_word = tw, alpha = 0.1, vocab = sim$dtm$vocab)
  test <- sim$dtm[1:10, ]
  a <- heldout_loglik_left_to_right(fit, test, particles = 5, seed = 1)
  b <- heldout_loglik_left_to_right(fit, test, particles = 5, seed = 1, threads = 2)
  expect_identical(a, b)
  # the true topics beat uniform topics
  flat <- fit
  flat$topic_word[] <- 1 / 30
  expect_gt(a, heldout_loglik_left_to_right(flat, test, particles = 5, seed = 1))
  expect_equal(as.numeric(a), sum(attr(a, "per_doc")) / attr(a, "tokens"))
  expect_equal(attr(a, "doc_tokens"), unname(sparsevi:::doc_lengths(test)))
  # a split test set is scored as whole documents
  sp <- split_heldout(sim$dtm, n_test = 10, seed = 2)
  h <- heldout_loglik_left_to_right(fit, sp$test, particles = 2, seed = 1)
  expect_equal(attr(h, "tokens"),
               sum(sp$test$observed$count) + sum(sp$test$heldout$count))
  expect_error(heldout_loglik_left_to_right(fit, test, particles = 0),
               class = "sparsevi_error_argument")
  bad <- test
  bad$count <- bad$count + 0.5
  expect_error(heldout_loglik_left_to_right(fit, bad), class = "sparsevi_error_count")
})

test_that("UMass coherence matches the pure-R computation", {
  sim <- simulate_lda(D = 80, V = 25, K = 4, doc_length = 20, seed = 6)
  tw <- sim$topic_word
  colnames(tw) <- sim$dtm$vocab
  res <- coherence_umass(tw, sim$dtm, n = 6)
  expect_equal(as.numeric(res), ref_umass(tw, as.matrix(sim$dtm), 6), tolerance = 1e-12)
  expect_equal(dim(attr(res, "top_words")), c(6L, 4L))
  expect_true(all(res <= 0 | attr(res, "skipped") > 0))
  # reference with another column order is aligned by term name
  m <- as_dgCMatrix(sim$dtm)
  perm <- rev(seq_len(ncol(m)))
  res2 <- coherence_umass(tw, m[, perm], n = 6)
  expect_equal(res2, res)
  expect_error(coherence_umass(tw, sim$dtm, n = 1), class = "sparsevi_error_argument")
})

test_that("gibbs controls and counts are checked", {
  sim <- simulate_lda(D = 5, V = 10, K = 2, doc_length = 10, seed = 1)
  ns <- asNamespace("sparsevi")
  state <- lda_test_state(gibbs = ns$gibbs_store_empty(2, 10), t = 0)
  ctl <- list(eta = 0.3, alpha = 0.1, burnin = -1)
  expect_error(ns$lda_local_gibbs(sim$dtm, state, ctl, c(0, 1), 1L),
               class = "sparsevi_error_argument")
  ctl <- list(eta = 0.3, alpha = 0.1, samples = 0)
  expect_error(ns$lda_local_gibbs(sim$dtm, state, ctl, c(0, 1), 1L),
               class = "sparsevi_error_argument")
  bad <- sim$dtm
  bad$count <- bad$count / 3
  expect_error(ns$lda_local_gibbs(bad, state, list(eta = 0.3, alpha = 0.1), c(0, 1), 1L),
               class = "sparsevi_error_count")
  expect_error(ns$gibbs_store_from_lambda(matrix(0.1, 2, 3), 0.3),
               class = "sparsevi_error_engine")
})

test_that("fit_lda(local = \"gibbs\") plugs into the loop", {
  sim <- simulate_lda(D = 160, V = 50, K = 3, doc_length = 40, seed = 8)
  sp <- split_heldout(sim$dtm, n_test = 16, seed = 1)
  fit <- fit_lda(sp$train, K = 3, local = "gibbs", global = "stochastic", passes = 6,
                 batch_size = 36, seed = 4, heldout = sp$test, progress = FALSE)
  expect_s3_class(fit, "sparsevi_lda")
  expect_identical(fit$global, "stochastic")
  expect_identical(fit$control$global_step, "sparse")
  expect_equal(fit$control$burnin, 3L)
  expect_equal(fit$control$samples, 2L)
  expect_equal(unname(rowSums(fit$topic_word)), rep(1, 3))
  expect_gt(min(ref_topic_match(fit$topic_word, sim$topic_word)), 0.9)
  # the fit's lambda is the materialised sparse store
  expect_equal(fit$lambda, sparsevi:::gibbs_materialise(fit$state$topics$sparse, fit$eta),
               ignore_attr = TRUE)
  expect_equal(nrow(fit$trace), 6L)
  expect_true(all(is.finite(fit$trace$heldout)))
  # same seed, same fit, whatever the thread count
  fit2 <- fit_lda(sp$train, K = 3, local = "gibbs", passes = 6, batch_size = 36,
                  seed = 4, heldout = sp$test, threads = 2, progress = FALSE)
  expect_identical(fit$state, fit2$state)
  expect_identical(fit$topic_word, fit2$topic_word)
  # saveRDS round trip; evaluators and predict work on the restored fit
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  back <- readRDS(path)
  expect_identical(back$state, fit$state)
  expect_identical(heldout_loglik(back, sp$test, method = "left_to_right", seed = 1),
                   heldout_loglik(fit, sp$test, method = "left_to_right", seed = 1))
  th <- predict(back, sp$test$observed, method = "gibbs", seed = 1)
  expect_equal(unname(rowSums(th)), rep(1, nrow(th)))
  u <- coherence(back, sp$train, measure = "umass", n = 5)
  expect_length(u, 3L)
  # update() continues from the sparse store
  up <- update(fit, sp$train, passes = 1, progress = FALSE)
  expect_equal(nrow(up$trace), 7L)
  expect_gt(up$state$t, fit$state$t)
})

test_that("fit_lda(local = \"gibbs\") checks its controls", {
  sim <- simulate_lda(D = 20, V = 15, K = 2, doc_length = 10, seed = 1)
  expect_error(fit_lda(sim$dtm, K = 2, local = "gibbs", burnin = -1, passes = 1),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm, K = 2, local = "gibbs", samples = 1.5, passes = 1),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm, K = 2, local = "gibbs", global = "memoized", passes = 1),
               class = "sparsevi_error_engine")
  m <- as_dgCMatrix(sim$dtm) * 0.5
  expect_error(suppressWarnings(fit_lda(m, K = 2, local = "gibbs", passes = 1)),
               class = "sparsevi_error_count")
})

test_that("the sparse lazy global step tracks the package's dense stochastic step", {
  sim <- simulate_lda(D = 120, V = 40, K = 3, doc_length = 30, seed = 12)
  ns <- asNamespace("sparsevi")
  control <- list(K = 3L, eta = 0.25, alpha = 0.1, n_docs = 120, burnin = 2L,
                  samples = 2L, tau = 1, kappa = 0.55, step_scale = 1, n_batches = 4L,
                  rescale_below = 0.05)
  lam0 <- ns$lda_init_bregman(sim$dtm, 3L, control$eta, c(0, 5))
  sparse <- lda_test_state(lambda = lam0, t = 0L)
  dense <- lda_test_state(lambda = lam0, t = 0L)
  idx <- split(seq_len(120), rep_len(1:4, 120))
  rescaled <- 0
  for (lap in 1:15) for (b in 1:4) {
    res <- ns$lda_local_gibbs(ns$dtm_subset(sim$dtm, idx[[b]]), sparse, control,
                              as.double(c(lap, b)), 1L)
    sparse <- ns$lda_global_gibbs(sparse, res, b, control)
    dense <- ns$lda_global_stochastic(dense, res, b, control)
    rescaled <- rescaled + (sparse$topics$sparse$scale == 1)
  }
  expect_gt(rescaled, 2)
  got <- ns$gibbs_materialise(sparse$topics$sparse, control$eta)
  expect_lt(max(abs(got - dense$topics$lambda) / dense$topics$lambda), 1e-10)
  expect_null(sparse$topics$lambda) # materialised by the loop at the end of a lap
  ended <- ns$lda_gibbs_end_lap(sparse, control)
  expect_equal(ended$topics$lambda, got)
  # with its row sums from the store's totals, for the lap they belong to
  expect_equal(ended$tot, rowSums(got), tolerance = 1e-12)
  expect_identical(ended$tot_t, sparse$t)
  expect_identical(sparse$t, dense$t)
})

test_that("the default step_scale 0.2 keeps 80% of the start in the first step, sparse as dense", {
  expect_identical(sparsevi:::gibbs_step_scale("bregman"), 0.2)
  expect_identical(sparsevi:::gibbs_step_scale("sparse"), 1)
  expect_identical(sparsevi:::gibbs_step_scale("seeded"), 1)
  expect_identical(sparsevi:::gibbs_step_scale("random"), 0.2)
  sim <- simulate_lda(D = 60, V = 30, K = 3, doc_length = 20, seed = 13)
  fit <- fit_lda(sim$dtm, K = 3, local = "gibbs", passes = 1, n_batches = 2, seed = 1)
  expect_identical(fit$control$step_scale, 0.2)
  # the seeded start of large tables keeps the full first step
  expect_identical(fit_lda(sim$dtm, K = 3, local = "gibbs", init = "seeded", passes = 1,
                           n_batches = 2, seed = 1)$control$step_scale, 1)
  expect_identical(fit_lda(sim$dtm, K = 3, local = "gibbs", passes = 1, n_batches = 2, seed = 1,
                           step_scale = 0.7)$control$step_scale, 0.7)
  ns <- asNamespace("sparsevi")
  control <- list(K = 3L, eta = 0.2, alpha = 0.1, n_docs = 60, burnin = 1L, samples = 1L,
                  tau = 1, kappa = 0.6, step_scale = 0.2, n_batches = 2L,
                  rescale_below = 1e-100)
  lam0 <- ns$lda_init_bregman(sim$dtm, 3L, control$eta, c(0, 7))
  sparse <- lda_test_state(lambda = lam0, t = 0L)
  dense <- lda_test_state(lambda = lam0, t = 0L)
  idx <- split(seq_len(60), rep_len(1:2, 60))
  for (step in 1:4) {
    b <- 1L + (step - 1L) %% 2L
    res <- ns$lda_local_gibbs(ns$dtm_subset(sim$dtm, idx[[b]]), sparse, control,
                              as.double(c(step, b)), 1L)
    if (step == 1L) {
      # lambda_1 = 0.8 lambda_0 + 0.2 (eta + (D / |B|) N_hat)
      want <- 0.8 * lam0 + 0.2 * (control$eta + 2 * as.matrix(res$summary))
    }
    sparse <- ns$lda_global_gibbs(sparse, res, b, control)
    dense <- ns$lda_global_stochastic(dense, res, b, control)
    got <- ns$gibbs_materialise(sparse$topics$sparse, control$eta)
    if (step == 1L) expect_lt(max(abs(got - want) / want), 1e-12)
    expect_lt(max(abs(got - dense$topics$lambda) / dense$topics$lambda), 1e-10)
  }
})

test_that("init = \"sparse\" starts Gibbs within SVI from an empty store", {
  sim <- simulate_lda(D = 80, V = 60, K = 3, doc_length = 50, seed = 4)
  st <- sparsevi:::lda_gibbs_sparse_start(list(K = 3L), 60L)
  expect_null(st$topics$lambda)
  expect_length(st$topics$sparse$x, 0L)
  expect_identical(st$topics$sparse$p, integer(61))
  f <- fit_lda(sim$dtm, K = 3, local = "gibbs", init = "sparse", passes = 3, batch_size = 20,
               seed = 1, progress = FALSE)
  expect_identical(f$control$init, "sparse")
  expect_identical(f$control$step_scale, 1) # the engine's rule for an empty start
  expect_equal(unname(rowSums(f$topic_word)), rep(1, 3), tolerance = 1e-12)
  # the symmetry is broken: distinct topics that recover the planted ones
  cors <- stats::cor(t(f$topic_word), t(sim$topic_word))
  expect_true(all(apply(cors, 2, max) > 0.9))
  f2 <- fit_lda(sim$dtm, K = 3, local = "gibbs", init = "sparse", passes = 3, batch_size = 20,
                seed = 1, threads = 2, progress = FALSE)
  expect_identical(f2$topic_word, f$topic_word)
  expect_error(fit_lda(sim$dtm, K = 3, init = "sparse"), class = "sparsevi_error_argument")
})

test_that("the store of a dense lambda is built in C as the pure-R form builds it (issue 20)", {
  u <- sparsevi:::uniform_source(4)
  K <- 7
  V <- 30
  eta <- 0.2
  lambda <- matrix(eta + 3 * u(K * V), K, V)
  lambda[sample.int(K * V, 60)] <- eta # exact zeros of lambda - eta
  lambda[2, 5] <- eta - 1e-14 # within the tolerance: read as 0
  a <- sparsevi:::gibbs_store_from_lambda(lambda, eta)
  b <- sparsevi:::gibbs_store_from_lambda_r(lambda, eta)
  expect_identical(a$p, b$p)
  expect_identical(a$k, b$k)
  expect_identical(a$x, b$x)
  expect_equal(a$tot, b$tot, tolerance = 1e-14)
  expect_identical(a$scale, 1)
  expect_equal(sparsevi:::gibbs_materialise(a, eta), pmax(lambda, eta), tolerance = 1e-14)
  bad <- lambda
  bad[3, 3] <- eta - 0.1
  expect_null(sparsevi:::gibbs_store_from_lambda_r(bad, eta))
  expect_error(sparsevi:::gibbs_store_from_lambda(bad, eta), class = "sparsevi_error_engine")
})

test_that("init = \"seeded\" holds the Bregman seeding sparsely for gibbs, refused for vb", {
  sim <- simulate_lda(D = 60, V = 40, K = 3, doc_length = 40, seed = 3)
  f <- fit_lda(sim$dtm, K = 3, local = "gibbs", init = "seeded", passes = 2, batch_size = 20,
               seed = 1, progress = FALSE)
  expect_equal(unname(rowSums(f$topic_word)), rep(1, 3), tolerance = 1e-12)
  g <- fit_lda(sim$dtm, K = 3, local = "gibbs", passes = 2, batch_size = 20, seed = 1,
               progress = FALSE)
  expect_false(isTRUE(all.equal(f$topic_word, g$topic_word)))
  expect_error(fit_lda(sim$dtm, K = 3, local = "vb", init = "seeded", passes = 1, progress = FALSE),
               "is for local = \"cvb0\" or \"gibbs\"", class = "sparsevi_error_argument")
})

# ---- the sparse Bregman start (issue 20) -----------------------------------

test_that("the default start is the dense Bregman seeding with its noise at its mean", {
  sim <- simulate_lda(D = 70, V = 50, K = 4, doc_length = 30, seed = 9)
  ns <- asNamespace("sparsevi")
  seed <- ns$resolve_seed(3)
  eta <- 0.2
  control <- list(K = 5L, init = "bregman", local = "gibbs", global = "stochastic",
                  eta = eta, seed = seed)
  st <- ns$lda_init_state(sim$dtm, control)
  expect_null(st$topics$lambda)
  expect_identical(st$topics$sparse$base, 1)
  # no K x V table: only the chosen documents' distinct words are stored
  chosen <- ns$lda_bregman_pick(sim$dtm, 5L, eta, seed)
  expect_identical(length(st$topics$sparse$x), sum(diff(sim$dtm$doc_ptr)[chosen]))
  # the old dense start: eta + Gamma(100, 100) draws + the same documents'
  # counts; the new one holds 1 (their mean) in place of the draws
  dense <- ns$lda_init_bregman(sim$dtm, 5L, eta, seed)
  draws <- ns$lda_init_random(sim$dtm, 5L, eta, seed) - eta
  expect_equal(abs(mean(draws) - 1) < 0.02, TRUE)
  got <- ns$gibbs_materialise(st$topics$sparse, eta)
  expect_equal(got, dense - draws + 1, tolerance = 1e-13)
  expect_equal(st$topics$sparse$tot, rowSums(got - eta - 1), tolerance = 1e-13)
  # init = "seeded" is the same store without the base
  sd <- ns$lda_init_state(sim$dtm, utils::modifyList(control, list(init = "seeded")))
  expect_identical(sd$topics$sparse[c("p", "k", "x", "tot")], st$topics$sparse[c("p", "k", "x", "tot")])
  expect_identical(sd$topics$sparse$base, 0)
})

test_that("a store with a shared base samples like its materialised lambda", {
  f <- gibbs_fixture()
  store <- ref_store(f$nstar / 0.5)
  store$scale <- 0.5
  store$base <- 1.4
  lambda <- sparsevi:::gibbs_materialise(store, f$eta)
  expect_equal(lambda, f$eta + 0.5 * 1.4 + f$nstar, tolerance = 1e-14)
  ndk <- c(2L, 0L, 5L, 0L, 1L, 3L)
  for (w in c(2L, 8L)) {
    counts <- .Call(sparsevi:::ffi_lda_gibbs_draw, store, f$eta, f$alpha, ndk, w - 1L,
                    40000, 0, c(0, 17))
    p <- ref_gibbs_conditional(lambda, f$alpha, ndk, w)
    expect_gt(suppressWarnings(stats::chisq.test(counts, p = p))$p.value, 0.001)
    # the test has power: the same store without its base is rejected
    nobase <- ref_gibbs_conditional(f$eta + f$nstar, f$alpha, ndk, w)
    expect_lt(suppressWarnings(stats::chisq.test(counts, p = nobase))$p.value, 1e-6)
  }
})

test_that("the lazy update decays a shared base like the dense update, across rescalings", {
  K <- 4; V <- 25; eta <- 0.3
  u <- sparsevi:::uniform_source(21)
  nstar0 <- matrix(0, K, V)
  nstar0[u(K * V) < 0.2] <- 3
  store <- ref_store(nstar0)
  store$base <- 1
  dense <- eta + 1 + nstar0
  scales <- numeric(0)
  for (t in 5:60) {
    rho <- (10 + t)^-0.6 # tau = 10: the start decays without being dropped
    nhat <- matrix(0, K, V)
    on <- u(K * V) < 0.02
    nhat[on] <- round(4 * u(sum(on))) / 2
    bs <- ref_store(nhat)
    store <- .Call(sparsevi:::ffi_lda_global_gibbs, store, bs[1:3], rho, 5, 0.05)
    dense <- ref_dense_svi(dense, nhat, rho, 5, eta)
    scales <- c(scales, store$scale)
  }
  expect_gt(sum(scales == 1), 1) # rescaled: the base was folded too
  expect_gt(store$base, 0)
  expect_lt(store$base, 1)
  got <- sparsevi:::gibbs_materialise(store, eta)
  expect_lt(max(abs(got - dense) / dense), 1e-10)
  # the store stays sparse: the base is one number, not K x V entries
  expect_lt(length(store$x), K * V)
  # a step of rho = 1 drops the start, base included
  store <- .Call(sparsevi:::ffi_lda_global_gibbs, store, bs[1:3], 1, 5, 0.05)
  expect_identical(store$base, 0)
  expect_equal(sparsevi:::gibbs_materialise(store, eta), ref_dense_svi(dense, nhat, 1, 5, eta),
               tolerance = 1e-12)
})

test_that("fits from the sparse Bregman start are reproducible and read old stores", {
  sim <- simulate_lda(D = 120, V = 60, K = 3, doc_length = 40, seed = 2)
  f1 <- fit_lda(sim$dtm, K = 3, local = "gibbs", passes = 2, batch_size = 30, seed = 1,
                step_scale = 1, progress = FALSE)
  expect_identical(f1$control$init, "bregman")
  # tau = 1 and step_scale = 1: the first step (rho = 1) drops the start
  expect_identical(f1$state$topics$sparse$base, 0)
  f2 <- fit_lda(sim$dtm, K = 3, local = "gibbs", passes = 2, batch_size = 30, seed = 1,
                step_scale = 1, threads = 2, progress = FALSE)
  expect_identical(f2$state, f1$state)
  # the default step_scale (0.2) keeps a decayed base, bit-identical across threads
  d1 <- fit_lda(sim$dtm, K = 3, local = "gibbs", passes = 2, batch_size = 30, seed = 1,
                progress = FALSE)
  expect_gt(d1$state$topics$sparse$scale * d1$state$topics$sparse$base, 0)
  d2 <- fit_lda(sim$dtm, K = 3, local = "gibbs", passes = 2, batch_size = 30, seed = 1,
                threads = 2, progress = FALSE)
  expect_identical(d2$state, d1$state)
  g <- fit_lda(sim$dtm, K = 3, local = "gibbs", passes = 1, batch_size = 30, seed = 1,
               tau = 100, step_scale = 1, progress = FALSE)
  # tau = 100: the base decays (the store holds it over the running product)
  expect_gt(g$state$topics$sparse$scale * g$state$topics$sparse$base, 0)
  expect_lt(g$state$topics$sparse$scale * g$state$topics$sparse$base, 0.9)
  expect_equal(g$lambda, sparsevi:::gibbs_materialise(g$state$topics$sparse, g$eta), ignore_attr = TRUE)
  # a store saved before the base existed (five elements) reads as base 0
  old <- f1$state$topics$sparse[c("p", "k", "x", "tot", "scale")]
  expect_identical(sparsevi:::gibbs_materialise(old, f1$eta),
                   sparsevi:::gibbs_materialise(f1$state$topics$sparse, f1$eta))
})

test_that("the Bregman pick in C picks the documents of its pure-R form (issue 20)", {
  ns <- asNamespace("sparsevi")
  sim <- simulate_lda(D = 90, V = 70, K = 5, doc_length = 25, seed = 6)
  m <- as.matrix(sim$dtm)
  m[c(3, 40, 41), ] <- 0 # empty documents
  m[7, ] <- m[8, ]       # two identical documents
  x <- as_dtm(m)
  for (s in 1:3) {
    seed <- ns$resolve_seed(s)
    for (K in c(1L, 6L, 30L, 87L, 90L)) { # up to every document, empty ones included
      expect_identical(ns$lda_bregman_pick(x, K, 0.1, seed),
                       ns$lda_bregman_pick_r(x, K, 0.1, seed), label = paste(s, K))
    }
  }
  # the picks differ by seed and cover distinct documents while any is left
  a <- ns$lda_bregman_pick(x, 30L, 0.1, ns$resolve_seed(1))
  expect_false(anyDuplicated(a) > 0)
  expect_false(identical(a, ns$lda_bregman_pick(x, 30L, 0.1, ns$resolve_seed(2))))
})

test_that("a worker's columns of the store sample as the whole store does", {
  ns <- asNamespace("sparsevi")
  sim <- simulate_lda(D = 40, V = 80, K = 5, doc_length = 30, seed = 3)
  x <- sim$dtm
  fit <- fit_lda(x, K = 5, local = "gibbs", passes = 1, batch_size = 10, seed = 2,
                 progress = FALSE)
  control <- fit$control
  state <- lda_test_state(lambda = fit$lambda, t = 4L)
  batch <- ns$dtm_subset(x, 1:6)
  cols <- ns$batch_columns(batch)
  # U: the batch's words and a few more (a worker's union over its batches)
  U <- sort(unique(c(cols$vocab, 1L, 80L)))
  whole <- ns$lda_local_gibbs(batch, state, control, c(0, 7), 1L)
  view <- ns$lda_columns_gibbs(state, control, U)
  expect_identical(length(view$topics$sparse$p), length(U) + 1L)
  expect_identical(view$topics$sparse$vocab, 80)
  part <- ns$lda_local_gibbs(ns$batch_in_columns(batch, cols, U), view, control, c(0, 7), 1L)
  back <- ns$lda_columns_result(part, U, 80L)
  expect_identical(back$summary, whole$summary)
  expect_identical(back$doc_topic, whole$doc_topic)
  # the store's columns hold that store's entries
  st <- ns$gibbs_state_store(state, control)
  dense <- .Call(ns$ffi_lda_gibbs_materialise, st, control$eta)
  dview <- .Call(ns$ffi_lda_gibbs_materialise, view$topics$sparse[1:6], control$eta)
  expect_identical(dview, dense[, U, drop = FALSE])
})

test_that("the gibbs local step gives the same bits on any number of the package's threads", {
  expect_same_bits_on_threads("gibbs")
})
