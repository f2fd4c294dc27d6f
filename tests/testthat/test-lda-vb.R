test_that("the C local step matches the pure-R reference, dense and sparse", {
  sim <- simulate_lda(D = 30, V = 25, K = 6, doc_length = 40, seed = 3)
  u <- sparsevi:::uniform_source(5)
  lambda <- matrix(0.1 + 3 * u(6 * 25), 6, 25)
  for (L in c(1, 2, 3, 6)) {
    for (se in c(TRUE, FALSE)) {
      for (rm in c(0, 3)) {
        a <- ref_vb_batch(sim$dtm, lambda, 0.3, L, select_every = se, restart_max = rm)
        b <- c_vb_batch(sim$dtm, lambda, 0.3, L, select_every = se, restart_max = rm)
        expect_equal(b$doc_topic, a$doc_topic, tolerance = 1e-10)
        expect_equal(unname(b$summary), a$summary, tolerance = 1e-10)
        expect_equal(b$H, a$H, tolerance = 1e-10)
        expect_equal(b$tries, a$tries)
        expect_equal(b$accepts, a$accepts)
      }
    }
  }
})

test_that("the selection schedule matches the reference on a case where it matters", {
  # many topics, long documents: top-L sets change after iteration 5
  sim <- simulate_lda(D = 12, V = 60, K = 12, doc_length = 150, alpha = 0.5, seed = 9)
  u <- sparsevi:::uniform_source(2)
  lambda <- matrix(0.05 + u(12 * 60), 12, 60)
  for (L in c(2, 4)) {
    a <- ref_vb_batch(sim$dtm, lambda, 0.2, L, select_every = FALSE, tol = 1e-4)
    b <- c_vb_batch(sim$dtm, lambda, 0.2, L, select_every = FALSE, tol = 1e-4)
    expect_equal(b$doc_topic, a$doc_topic, tolerance = 1e-9)
    a2 <- ref_vb_batch(sim$dtm, lambda, 0.2, L, select_every = TRUE, tol = 1e-4)
    b2 <- c_vb_batch(sim$dtm, lambda, 0.2, L, select_every = TRUE, tol = 1e-4)
    expect_equal(b2$doc_topic, a2$doc_topic, tolerance = 1e-9)
  }
})

test_that("the top-L scan over word lists (K > 48, lists shorter than K) matches the reference", {
  # with K > 48 each word's list of topics by weight is shorter than K, so the
  # scan's early stop and its continuation over the prior weights both run
  sim <- simulate_lda(D = 6, V = 90, K = 60, doc_length = 200, alpha = 0.3, seed = 4)
  u <- sparsevi:::uniform_source(11)
  lambda <- matrix(0.02 + 2 * u(60 * 90)^3, 60, 90)
  for (L in c(3, 8)) {
    for (se in c(FALSE, TRUE)) {
      rm <- if (se) 0 else 2
      a <- ref_vb_batch(sim$dtm, lambda, 0.1, L, select_every = se, restart_max = rm, tol = 1e-3)
      b <- c_vb_batch(sim$dtm, lambda, 0.1, L, select_every = se, restart_max = rm, tol = 1e-3)
      expect_equal(b$doc_topic, a$doc_topic, tolerance = 1e-9)
      expect_equal(unname(b$summary), a$summary, tolerance = 1e-9)
      expect_equal(b$H, a$H, tolerance = 1e-9)
      expect_equal(b$accepts, a$accepts)
    }
  }
})

test_that("responsibilities conserve counts and L = K is the dense step", {
  sim <- sim_small()
  u <- sparsevi:::uniform_source(7)
  lambda <- matrix(0.1 + u(3 * 40), 3, 40)
  for (L in 1:3) {
    b <- c_vb_batch(sim$dtm, lambda, 0.5, L, restart_max = 2)
    expect_equal(colSums(b$doc_topic), sparsevi:::doc_lengths(sim$dtm), tolerance = 1e-8)
    expect_equal(sum(b$summary), sum(sim$dtm$count), tolerance = 1e-8)
  }
  # dense written independently: r = softmax(Elogb + digamma(alpha + N))
  Elogb <- ref_elogb(lambda)
  x <- sim$dtm
  d <- 1
  idx <- seq.int(x$doc_ptr[d] + 1L, length.out = x$doc_ptr[d + 1L] - x$doc_ptr[d])
  terms <- x$term[idx] + 1L
  cnt <- x$count[idx]
  N <- rep(0, 3)
  prior <- rep(0, 3)
  for (it in 0:100) {
    W <- exp(Elogb[, terms] + prior)
    R <- sweep(W, 2, colSums(W), `/`)
    Nnew <- as.vector(R %*% cnt)
    delta <- max(abs(Nnew - N))
    N <- Nnew
    prior <- digamma(0.5 + N)
    if (it > 0 && delta < 0.05) break
  }
  b <- c_vb_batch(x[1, ], lambda, 0.5, L = 3)
  expect_equal(b$doc_topic[, 1], N, tolerance = 1e-10)
})

test_that("memoized and batch ELBO never decrease, with restarts on", {
  sim <- simulate_lda(D = 150, V = 50, K = 4, doc_length = 60, seed = 1)
  # alpha = 0.5, eta = 0.1 (the former defaults, under which this test was
  # written) for every L; the current defaults for L = 2 and 4. The local step
  # starts every document cold, so monotonicity is not guaranteed by
  # construction: with the current defaults, L = 1 and batch training, this
  # corpus shows a decrease of 9.6 (relative 4e-4) on one lap.
  cases <- list(list(L = 1, alpha = 0.5, eta = 0.1), list(L = 2, alpha = 0.5, eta = 0.1),
                list(L = 4, alpha = 0.5, eta = 0.1), list(L = 2), list(L = 4))
  for (cs in cases) {
    for (g in c("memoized", "batch")) {
      fit <- fit_lda(sim$dtm, local = "vb", K = 4, L = cs$L, global = g, passes = 12, seed = 1,
                     alpha = cs$alpha, eta = cs$eta, restarts = TRUE, progress = FALSE)
      obj <- fit$trace$objective
      expect_true(all(is.finite(obj)))
      # exact monotone up to the convergence tolerance of the local step
      expect_true(all(diff(obj) >= -1e-7 * abs(obj[-1])))
    }
  }
})

test_that("planted topics of simulate_lda are recovered", {
  # Criterion: greedy matching of true to fitted topics by L1 distance
  # (smallest pair first); every true topic is matched within L1 < 0.3
  # (topics are probability vectors, so L1 ranges over [0, 2]).
  sim <- simulate_lda(D = 150, V = 50, K = 4, doc_length = 60, seed = 1)
  for (L in c(2, 4)) {
    fit <- fit_lda(sim$dtm, local = "vb", K = 4, L = L, passes = 30, seed = 1, progress = FALSE)
    expect_true(all(match_topics_l1(fit$topic_word, sim$topic_word) < 0.3))
  }
  fit <- fit_lda(sim$dtm, local = "vb", K = 4, L = 2, global = "stochastic", passes = 40, seed = 1,
                 batch_size = 30, progress = FALSE)
  expect_true(all(match_topics_l1(fit$topic_word, sim$topic_word) < 0.3))
})

test_that("fit_lda runs with every vb global step and returns a valid object", {
  sim <- sim_small()
  sp <- split_heldout(sim$dtm, n_test = 20, seed = 2)
  for (g in c("memoized", "stochastic", "streaming", "batch")) {
    fit <- fit_lda(sp$train, local = "vb", K = 3, L = 2, global = g,
                   passes = if (g == "streaming") 1 else 3, seed = 1, progress = FALSE,
                   heldout = sp$test)
    expect_s3_class(fit, c("sparsevi_lda", "sparsevi_fit"))
    expect_equal(unname(rowSums(fit$topic_word)), rep(1, 3), tolerance = 1e-12)
    expect_identical(colnames(fit$topic_word), sim$dtm$vocab)
    expect_named(fit$trace, c("lap", "seconds", "cpu_seconds", "objective", "heldout",
                             "bytes_sent", "bytes_received", "restart_accept",
                             "bytes_between_workers"))
    expect_true(all(is.finite(fit$trace$heldout)))
    # training time excludes the evaluation: non-negative and non-decreasing
    for (col in c("seconds", "cpu_seconds")) {
      expect_true(all(fit$trace[[col]] >= 0))
      expect_false(is.unsorted(fit$trace[[col]]))
    }
    expect_identical(is.na(fit$trace$objective[1]), !g %in% c("memoized", "batch"))
    expect_equal(fit$n_docs, 100L)
    expect_identical(fit$global, g)
  }
  expect_warning(fit_lda(sp$train, local = "vb", K = 3, global = "streaming", passes = 3, seed = 1),
                 class = "sparsevi_warning_passes")
})

test_that("memoized training holds the topics through its first lap, as a batch lap does", {
  sim <- sim_small()
  m <- fit_lda(sim$dtm, local = "vb", K = 3, L = 2, global = "memoized", n_batches = 4, passes = 1,
               seed = 1, progress = FALSE)
  b <- fit_lda(sim$dtm, local = "vb", K = 3, L = 2, global = "batch", passes = 1, seed = 1,
               progress = FALSE)
  # every batch's first local step saw the initial topics: the same summary
  # (up to the order of the sums) and the same topics as one batch lap
  expect_equal(m$topic_word, b$topic_word, tolerance = 1e-10)
  expect_equal(m$trace$objective, b$trace$objective, tolerance = 1e-10)
  # from the second lap on, each batch's swap moves the topics
  m2 <- update(m, sim$dtm, passes = 1, progress = FALSE)
  b2 <- update(b, sim$dtm, passes = 1, progress = FALSE)
  expect_false(isTRUE(all.equal(m2$topic_word, b2$topic_word, tolerance = 1e-10)))
})

test_that("vb's memoized training on its store equals the dense memoized step", {
  sim <- sim_small()
  ns <- asNamespace("sparsevi")
  run <- function(L) {
    fit_lda(sim$dtm, local = "vb", K = 4, L = L, n_batches = 3, passes = 4, seed = 2,
            progress = FALSE)
  }
  for (L in c(2L, 4L)) {
    lazy <- run(L)
    # the dense step: S and lambda rebuilt as K x V tables after every batch
    orig <- get("lda_global_memoized_lazy", envir = ns)
    utils::assignInNamespace("lda_global_memoized_lazy", get("lda_global_memoized", envir = ns),
                             ns = "sparsevi")
    dense <- tryCatch(run(L), finally = utils::assignInNamespace("lda_global_memoized_lazy",
                                                                 orig, ns = "sparsevi"))
    expect_null(lazy$state$topics$store)
    expect_equal(lazy$lambda, dense$lambda, tolerance = 1e-9)
    expect_equal(lazy$state$topics$S, dense$state$topics$S, tolerance = 1e-9)
    expect_equal(lazy$trace$objective, dense$trace$objective, tolerance = 1e-9)
    expect_true(all(diff(lazy$trace$objective) > -1e-6 * abs(lazy$trace$objective[-1])))
  }
  # the vb step's batch summary is sparse at L = K too: O(K x batch vocabulary)
  x <- as_dtm(sim$dtm)
  st <- lda_test_state(lambda = matrix(1 + seq_len(4 * ncol(sim$dtm)) %% 7, 4))
  ctl <- ns$lda_vb_control(list(L = 4L, K = 4L, alpha = 0.1, eta = 0.5, global = "memoized"))
  res <- ns$lda_local_vb(x, st, ctl, 1L, 1L)
  expect_s4_class(res$summary, "dgCMatrix")
  expect_equal(sum(res$summary), sum(x$count), tolerance = 1e-10)
})

test_that("the L-sparse step's summary kept by word equals the dense accumulator's", {
  # by word, a batch's summary takes O(entries x L) memory, not K x its
  # vocabulary; the sums must be the same doubles, for any thread count
  sim <- simulate_lda(D = 60, V = 200, K = 12, seed = 4)
  x <- as_dtm(sim$dtm)
  lambda <- sim$topic_word * 40 + 0.05
  ns <- asNamespace("sparsevi")
  ctl <- ns$lda_vb_control(list(alpha = 0.1, L = 3L, restarts = TRUE))
  run <- function(form, threads = 1L) {
    .Call(ns$ffi_lda_local_vb, x, ncol(lambda), lambda,
          ns$vb_opts(ctl, mode = 0L, restarts = TRUE, objective = TRUE, summary_form = form),
          threads, NULL)
  }
  dense <- run(1L)
  by_word <- run(2L)
  chosen <- run(0L)
  expect_gt(length(dense$x), 0)
  expect_identical(by_word[c("p", "i", "x")], dense[c("p", "i", "x")])
  expect_identical(chosen[c("p", "i", "x")], dense[c("p", "i", "x")])
  expect_identical(run(2L, 2L)[c("p", "i", "x")], dense[c("p", "i", "x")])
  expect_identical(by_word$doc_topic, dense$doc_topic)
  expect_identical(by_word$doc_obj, dense$doc_obj)
  # the summary adds up to the batch's tokens, each topic's row to its usage
  S <- Matrix::sparseMatrix(i = by_word$i + 1L, p = by_word$p, x = by_word$x,
                            dims = c(12L, ncol(lambda)))
  expect_equal(sum(S), sum(x$count), tolerance = 1e-10)
  expect_equal(Matrix::rowSums(S), rowSums(by_word$doc_topic), tolerance = 1e-10)
})

test_that("vb's streaming training on its store equals the dense streaming step", {
  sim <- sim_small()
  ns <- asNamespace("sparsevi")
  run <- function() {
    fit_lda(sim$dtm, local = "vb", K = 4, L = 2, global = "streaming", n_batches = 4, passes = 2,
            seed = 3,
            progress = FALSE)
  }
  lazy <- suppressWarnings(run())
  orig <- get("lda_global_streaming_lazy", envir = ns)
  utils::assignInNamespace("lda_global_streaming_lazy", get("lda_global_streaming", envir = ns),
                           ns = "sparsevi")
  dense <- tryCatch(suppressWarnings(run()),
                    finally = utils::assignInNamespace("lda_global_streaming_lazy", orig,
                                                       ns = "sparsevi"))
  expect_null(lazy$state$topics$store)
  expect_equal(lazy$lambda, dense$lambda, tolerance = 1e-10)
  expect_equal(lazy$doc_topic, dense$doc_topic, tolerance = 1e-8)
})

test_that("the warm-started C local step matches the pure-R reference (issue 20)", {
  sim <- simulate_lda(D = 30, V = 25, K = 6, doc_length = 40, seed = 3)
  u <- sparsevi:::uniform_source(7)
  lambda <- matrix(0.1 + 3 * u(6 * 25), 6, 25)
  lambda2 <- matrix(0.1 + 3 * u(6 * 25), 6, 25)
  for (L in c(2, 6)) {
    cold <- c_vb_batch(sim$dtm, lambda, 0.3, L)
    warm <- cold$doc_topic
    warm[, 1] <- 0 # a document without a state starts fresh
    a <- ref_vb_batch(sim$dtm, lambda2, 0.3, L, warm = warm)
    b <- c_vb_batch(sim$dtm, lambda2, 0.3, L, warm = warm)
    expect_equal(b$doc_topic, a$doc_topic, tolerance = 1e-10)
    expect_equal(unname(b$summary), a$summary, tolerance = 1e-10)
    expect_equal(b$H, a$H, tolerance = 1e-10)
    # the warm start is used: it differs from the cold step on the new topics
    fresh <- c_vb_batch(sim$dtm, lambda2, 0.3, L)
    expect_equal(b$doc_topic[, 1], fresh$doc_topic[, 1])
    expect_false(isTRUE(all.equal(b$doc_topic[, -1], fresh$doc_topic[, -1])))
    # from its own fixed point, a document (that converged) is done in a
    # few iterations, where it was
    again <- c_vb_batch(sim$dtm, lambda, 0.3, L, warm = cold$doc_topic)
    ok <- cold$raw$iters < 100L
    expect_gt(sum(ok), 20L)
    expect_gt(mean(again$raw$iters[ok] <= 2L), 0.8)
    fast <- ok & again$raw$iters <= 2L
    expect_equal(again$doc_topic[, fast], cold$doc_topic[, fast], tolerance = 0.05)
  }
})

test_that("memoized vb stops when converged; passes is an upper bound (issue 20)", {
  sim <- sim_small(4)
  f <- fit_lda(sim$dtm, local = "vb", K = 3, passes = 30, seed = 1, progress = FALSE)
  expect_identical(f$ended, "converged")
  expect_lt(nrow(f$trace), 30L)
  ob <- f$trace$objective
  n <- length(ob)
  expect_lte(abs(ob[n] - ob[n - 1]), 5e-3 * abs(ob[n]))
  expect_true(all(abs(diff(ob[-n])) > 5e-3 * abs(ob[-c(1, n)])))
  g <- fit_lda(sim$dtm, local = "vb", K = 3, passes = 6, seed = 1, progress = FALSE,
               converge_tol = 0)
  expect_identical(g$ended, "passes")
  expect_identical(nrow(g$trace), 6L)
  expect_output(print(f), "training ended: converged")
  expect_output(print(g), "training ended: after the `passes` laps")
  # the laps run before stopping are the laps of the fit without stopping
  expect_equal(g$trace$objective[seq_len(min(n, 6L))], ob[seq_len(min(n, 6L))])
  # update() continues: more laps, a higher ELBO
  h <- update(g, sim$dtm, passes = 3, progress = FALSE)
  expect_gt(nrow(h$trace), 6L)
  expect_gte(h$trace$objective[nrow(h$trace)], g$trace$objective[6L])
  expect_error(fit_lda(sim$dtm, local = "vb", K = 3, converge_tol = -1, progress = FALSE),
               class = "sparsevi_error")
})

test_that("vb warm start and restart_laps fits are reproducible and thread-independent", {
  sim <- sim_small(6)
  a <- fit_lda(sim$dtm, local = "vb", K = 3, passes = 4, seed = 3, progress = FALSE,
               warm_start = TRUE,
               restarts = TRUE, restart_laps = 2, converge_tol = 0)
  b <- fit_lda(sim$dtm, local = "vb", K = 3, passes = 4, seed = 3, progress = FALSE,
               warm_start = TRUE,
               restarts = TRUE, restart_laps = 2, converge_tol = 0, threads = 2)
  expect_identical(a$topic_word, b$topic_word)
  expect_identical(a$trace$objective, b$trace$objective)
  # restart proposals in laps 1-2 only
  expect_true(all(is.na(a$trace$restart_accept[3:4])))
  c0 <- fit_lda(sim$dtm, local = "vb", K = 3, passes = 4, seed = 3, progress = FALSE,
                converge_tol = 0)
  expect_false(identical(a$topic_word, c0$topic_word))
})

test_that("vb's default alpha is 10 / K within [0.1, 0.5]; a given alpha wins; cvb0 keeps 0.1", {
  sim <- simulate_lda(D = 40, V = 20, K = 2, seed = 1)
  f <- fit_lda(sim$dtm, K = 2, local = "vb", passes = 1, seed = 1, progress = FALSE)
  expect_identical(f$control$alpha, 0.5)
  g <- fit_lda(sim$dtm, K = 2, local = "vb", alpha = 0.1, passes = 1, seed = 1,
               progress = FALSE)
  expect_identical(g$control$alpha, 0.1)
  expect_false(identical(f$topic_word, g$topic_word))
  h <- fit_lda(sim$dtm, K = 2, passes = 1, seed = 1, progress = FALSE)
  expect_identical(h$control$alpha, 0.1)
})

test_that("with a background topic the C step matches the reference, dense and sparse", {
  sim <- simulate_lda(D = 30, V = 25, K = 6, doc_length = 40, seed = 3)
  u <- sparsevi:::uniform_source(5)
  lambda <- matrix(0.1 + 3 * u(6 * 25), 6, 25)
  for (L in c(2, 6)) {
    for (rm in c(0, 3)) {
      a <- ref_vb_batch(sim$dtm, lambda, 0.3, L, restart_max = rm, background = 0.4)
      b <- c_vb_batch(sim$dtm, lambda, 0.3, L, restart_max = rm, background = 0.4)
      expect_equal(b$doc_topic, a$doc_topic, tolerance = 1e-10)
      expect_equal(unname(b$summary), a$summary, tolerance = 1e-10)
      expect_equal(b$H, a$H, tolerance = 1e-10)
      expect_equal(b$accepts, a$accepts)
      plain <- c_vb_batch(sim$dtm, lambda, 0.3, L, restart_max = rm)
      expect_gt(sum(b$doc_topic[1, ]), sum(plain$doc_topic[1, ]))
      # the same on two threads
      expect_identical(c_vb_batch(sim$dtm, lambda, 0.3, L, restart_max = rm, background = 0.4,
                                  threads = 2L)$doc_topic, b$doc_topic)
    }
  }
  # background 0 is bit for bit the option left out
  ctl <- list(max_iter = 100, tol = 0.05, active_eps = 1e-8, select_every = FALSE,
              restart_max = 0, restart_iter = 10, alpha = 0.3)
  expect_identical(sparsevi:::lda_vb_call(sim$dtm, lambda, 0L, c(ctl, background = 0), 1L, L = 2),
                   sparsevi:::lda_vb_call(sim$dtm, lambda, 0L, ctl, 1L, L = 2))
})

test_that("vb's background topic holds the words common to every document", {
  # none by default; pruning topic 1 ends it
  b <- expect_background_engine("vb", default = 0, bad = -1)
  expect_identical(prune_topics(b$fit, 1)$control$background, 0)
})

test_that("stochastic training with the vb step offsets its step size by 16 unless given tau", {
  sim <- simulate_lda(D = 120, V = 40, K = 3, doc_length = 40, seed = 2)
  fit <- function(...) fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE, ...)
  st <- fit(local = "vb", global = "stochastic", batch_size = 30)
  expect_identical(st$control$tau, 16)
  # the same fit as tau = 16 given, another than the loop's tau = 1
  expect_identical(fit(local = "vb", global = "stochastic", batch_size = 30, tau = 16)$topic_word,
                   st$topic_word)
  one <- fit(local = "vb", global = "stochastic", batch_size = 30, tau = 1)
  expect_identical(one$control$tau, 1)
  expect_false(isTRUE(all.equal(one$topic_word, st$topic_word)))
  # a given tau is kept; NULL is the engine's
  expect_identical(fit(local = "vb", global = "stochastic", tau = 5)$control$tau, 5)
  expect_identical(fit(local = "vb", global = "stochastic", tau = NULL)$control$tau, 16)
  # the other global steps and engines keep 1
  expect_identical(fit(local = "vb")$control$tau, 1)
  for (eng in c("cvb0", "gibbs", "ope")) {
    expect_identical(fit(local = eng, background = 0)$control$tau, 1, info = eng)
  }
  # choosing K refits with the engine's tau
  pick <- fit_lda(sim$dtm, K = c(2, 3), local = "vb", global = "stochastic", passes = 1, seed = 1,
                  progress = FALSE)
  expect_identical(pick$control$tau, 16)
  expect_error(fit(local = "vb", global = "stochastic", tau = -1), class = "sparsevi_error_argument")
})

test_that("the vb local step gives the same bits on any number of the package's threads", {
  expect_same_bits_on_threads("vb")
})
