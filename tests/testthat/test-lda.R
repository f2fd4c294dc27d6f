sim_small <- function(seed = 1, D = 120, V = 40, K = 3) {
  simulate_lda(D = D, V = V, K = K, doc_length = 60, alpha = 0.1, eta = 0.05, seed = seed)
}

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
                             "bytes_sent", "bytes_received", "restart_accept"))
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

test_that("same seed gives the same fit, whatever the number of threads", {
  sim <- sim_small()
  a <- fit_lda(sim$dtm, local = "vb", K = 3, L = 2, passes = 3, seed = 11, threads = 1,
               progress = FALSE)
  b <- fit_lda(sim$dtm, local = "vb", K = 3, L = 2, passes = 3, seed = 11, threads = 1,
               progress = FALSE)
  c <- fit_lda(sim$dtm, local = "vb", K = 3, L = 2, passes = 3, seed = 11, threads = 2,
               progress = FALSE)
  expect_identical(a$topic_word, b$topic_word)
  expect_identical(a$topic_word, c$topic_word)
  expect_identical(a$trace$objective, c$trace$objective)
  s1 <- fit_lda(sim$dtm, local = "vb", K = 3, global = "stochastic", passes = 2, seed = 3,
                threads = 1,
                batch_size = 25, progress = FALSE)
  s2 <- fit_lda(sim$dtm, local = "vb", K = 3, global = "stochastic", passes = 2, seed = 3,
                threads = 2,
                batch_size = 25, progress = FALSE)
  expect_identical(s1$lambda, s2$lambda)
  d <- fit_lda(sim$dtm, local = "vb", K = 3, L = 2, passes = 3, seed = 12, progress = FALSE)
  expect_false(identical(a$topic_word, d$topic_word))
  # local step on a batch bigger than one block: threads do not matter
  big <- simulate_lda(D = 300, V = 40, K = 3, doc_length = 30, seed = 4)$dtm
  lam <- a$lambda
  r1 <- c_vb_batch(big, lam, 0.5, 2, restart_max = 3, threads = 1)
  r2 <- c_vb_batch(big, lam, 0.5, 2, restart_max = 3, threads = 2)
  expect_identical(r1$summary, r2$summary)
  expect_identical(r1$H, r2$H)
})

test_that("a fit survives saveRDS()/readRDS() and predicts the same", {
  sim <- sim_small()
  fit <- fit_lda(sim$dtm, local = "vb", K = 3, L = 2, passes = 3, seed = 1, progress = FALSE)
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  expect_identical(predict(back, sim$dtm[1:10, ]), predict(fit, sim$dtm[1:10, ]))
  th <- predict(fit, sim$dtm[1:10, ])
  expect_equal(dim(th), c(10L, 3L))
  expect_equal(unname(rowSums(th)), rep(1, 10), tolerance = 1e-12)
  # update continues training and the trace
  more <- update(back, sim$dtm, passes = 2, progress = FALSE)
  expect_equal(nrow(more$trace), 5L)
  expect_identical(more$trace$lap, 1:5)
  expect_true(more$trace$objective[5] >= more$trace$objective[3] - 1e-6)
  expect_true(all(diff(more$trace$cpu_seconds) >= 0))
  # a fit saved before the trace had cpu_seconds still continues
  old <- back
  old$trace$cpu_seconds <- NULL
  more_old <- update(old, sim$dtm, passes = 1, progress = FALSE)
  expect_identical(more_old$trace$lap, 1:4)
  expect_identical(is.na(more_old$trace$cpu_seconds), c(TRUE, TRUE, TRUE, FALSE))
})

test_that("predict aligns newdata by term name and reports dropped terms", {
  sim <- sim_small()
  fit <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE)
  m <- as.matrix(sim$dtm[1:4, ])
  m2 <- cbind(m[, ncol(m):1], zzz_new = 3)
  expect_message(th2 <- predict(fit, m2), "1 term")
  expect_equal(th2, predict(fit, m), tolerance = 1e-12, ignore_attr = TRUE)
  other <- matrix(1, 2, 2, dimnames = list(NULL, c("foo", "bar")))
  expect_error(suppressMessages(predict(fit, other)), class = "sparsevi_error_vocab")
})

test_that("methods print, summarise, plot and give terms and logLik", {
  sim <- sim_small()
  fit <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE)
  expect_output(print(fit), "sparsevi_lda")
  expect_output(print(summary(fit)), "LDA with 3 topics")
  tt <- terms(fit, 4)
  expect_equal(dim(tt), c(4L, 3L))
  expect_true(all(tt %in% sim$dtm$vocab))
  ll <- logLik(fit)
  expect_s3_class(ll, "logLik")
  expect_equal(as.numeric(ll), fit$trace$objective[2])
  f <- tempfile(fileext = ".pdf")
  grDevices::pdf(f)
  expect_invisible(plot(fit))
  grDevices::dev.off()
  expect_message(fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, progress = TRUE), "lap 1/1")
})

test_that("an error in a later lap returns the last completed fit with a warning", {
  sim <- sim_small()
  ns <- asNamespace("sparsevi")
  # vb's memoized training runs the lazy step (its store is updated in place)
  orig <- get("lda_global_memoized_lazy", envir = ns)
  calls <- 0
  failing <- function(state, res, batch_id, control) {
    calls <<- calls + 1
    if (calls > 3) stop("boom")
    orig(state, res, batch_id, control)
  }
  one <- fit_lda(sim$dtm, local = "vb", K = 3, n_batches = 2, passes = 1, seed = 1,
                 progress = FALSE)
  utils::assignInNamespace("lda_global_memoized_lazy", failing, ns = "sparsevi")
  on.exit(utils::assignInNamespace("lda_global_memoized_lazy", orig, ns = "sparsevi"))
  # fails in lap 2 after one of its batches changed the store
  expect_warning(fit <- fit_lda(sim$dtm, local = "vb", K = 3, n_batches = 2, passes = 4, seed = 1,
                                progress = FALSE),
                 class = "sparsevi_warning_interrupted")
  expect_equal(nrow(fit$trace), 1L)
  # the model of lap 1, untouched by the failed lap
  expect_identical(fit$lambda, one$lambda)
  expect_identical(fit$state$S, one$state$S)
  calls <- 0
  utils::assignInNamespace("lda_global_memoized_lazy", function(...) stop("boom"),
                           ns = "sparsevi")
  expect_error(fit_lda(sim$dtm, local = "vb", K = 3, passes = 2, seed = 1, progress = FALSE),
                       "boom")
})

test_that("bad arguments get classed errors naming the argument", {
  x <- sim_small()$dtm
  err <- function(expr, cls = "sparsevi_error_argument") expect_error(expr, class = cls)
  err(fit_lda(x, K = 1))
  err(fit_lda(x, K = 41))
  err(fit_lda(x, K = 2.5))
  expect_error(fit_lda(x, K = 1), "`K`")
  err(fit_lda(x, K = 3, L = 0))
  err(fit_lda(x, K = 3, L = 4))
  expect_error(fit_lda(x, K = 3, L = 4), "`L`")
  err(fit_lda(x, K = 3, alpha = 0))
  err(fit_lda(x, K = 3, alpha = -1))
  err(fit_lda(x, K = 3, eta = 0))
  expect_error(fit_lda(x, K = 3, eta = 0), "`eta`")
  err(fit_lda(x, K = 3, kappa = 0.5))
  err(fit_lda(x, K = 3, kappa = 1.1))
  expect_error(fit_lda(x, K = 3, kappa = 0.4), "`kappa`")
  err(fit_lda(x, K = 3, passes = 0))
  err(fit_lda(x, K = 3, n_batches = 2, batch_size = 10))
  err(fit_lda(x, K = 3, init = "kmeans"))
  err(fit_lda(x, local = "vb", K = 3, global = "batch", n_batches = 3))
  err(fit_lda(x, K = 3, max_iter = 0))
  err(fit_lda(x, K = 3, restarts = NA))
  err(fit_lda(x, K = 3, threads = 0))
  err(fit_lda(x, K = 3, seed = 1.5))
  err(fit_lda(x, K = 3, global = "ml"), "sparsevi_error_engine")
  expect_error(fit_lda(x, K = 3, global = "ml"), "vb x memoized")
  err(fit_lda(x, K = 3, local = "nope"), "sparsevi_error_engine")
  err(fit_lda(x, K = 3, local = "cvb0", global = "memoized"), "sparsevi_error_engine")
  expect_s3_class(lda_combinations, "data.frame")
  expect_true(all(c("local", "global", "supported") %in% names(lda_combinations)))
})

test_that("random initialisation works and differs from Bregman", {
  sim <- sim_small()
  a <- fit_lda(sim$dtm, local = "vb", K = 3, init = "random", passes = 2, seed = 1,
               progress = FALSE)
  b <- fit_lda(sim$dtm, local = "vb", K = 3, init = "bregman", passes = 2, seed = 1,
               progress = FALSE)
  expect_false(identical(a$topic_word, b$topic_word))
  expect_true(all(is.finite(a$trace$objective)))
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
    expect_null(lazy$state$vbstore)
    expect_equal(lazy$lambda, dense$lambda, tolerance = 1e-9)
    expect_equal(lazy$state$S, dense$state$S, tolerance = 1e-9)
    expect_equal(lazy$trace$objective, dense$trace$objective, tolerance = 1e-9)
    expect_true(all(diff(lazy$trace$objective) > -1e-6 * abs(lazy$trace$objective[-1])))
  }
  # the vb step's batch summary is sparse at L = K too: O(K x batch vocabulary)
  x <- as_dtm(sim$dtm)
  st <- list(lambda = matrix(1 + seq_len(4 * ncol(sim$dtm)) %% 7, 4))
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
  expect_null(lazy$state$vbstore)
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

test_that("doc_topic is the last lap's local step, for every engine (issue 20)", {
  sim <- sim_small(5, D = 90)
  for (local in c("vb", "cvb0", "gibbs", "ope")) {
    f <- fit_lda(sim$dtm, K = 3, local = local, passes = 3, seed = 2, progress = FALSE,
                 doc_topics = 2)
    dt <- f$doc_topic
    expect_s4_class(dt, "dgCMatrix")
    expect_identical(dim(dt), c(90L, 3L))
    expect_equal(unname(Matrix::rowSums(dt)), rep(1, 90), tolerance = 1e-12)
    expect_true(all(Matrix::rowSums(dt > 0) <= 2))
    # close to proportions re-inferred with the final topics: same top topic
    # for nearly every document
    inf <- sparsevi:::lda_doc_topics(f, sim$dtm, 2L)
    top_kept <- apply(as.matrix(dt), 1, which.max)
    top_inf <- apply(as.matrix(inf), 1, which.max)
    expect_gt(mean(top_kept == top_inf), 0.85)
    expect_null(f$kept)
    # and the same with two threads, bit for bit
    f2 <- fit_lda(sim$dtm, K = 3, local = local, passes = 3, seed = 2, progress = FALSE,
                  doc_topics = 2, threads = 2)
    expect_identical(f2$doc_topic, dt)
  }
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

test_that("the default engine is SCVB0, and print() and summary() say so (issue 20)", {
  sim <- sim_small()
  f <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE)
  expect_identical(f$local, "cvb0")
  expect_identical(f$global, "stochastic")
  expect_identical(formals(fit_lda)$local, "cvb0")
  # the same fit as asking for the engine by name
  named <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 2, seed = 1, progress = FALSE)
  expect_identical(f$topic_word, named$topic_word)
  expect_identical(f$doc_topic, named$doc_topic)
  out <- capture.output(print(f))
  expect_match(out[2], "engine: SCVB0: local \"cvb0\", global \"stochastic\"; 2 laps")
  # no objective: the trace's column is NA and print() says why and what to do
  expect_true(all(is.na(f$trace$objective)))
  expect_true(any(grepl("no objective (SCVB0 has no training objective)", out, fixed = TRUE)))
  expect_true(is.na(logLik(f)))
  s <- capture.output(print(summary(f)))
  expect_match(s[1], "SCVB0: local \"cvb0\"")
  expect_true(any(grepl("objective: none (SCVB0 has no training objective)", s, fixed = TRUE)))
  expect_false(any(grepl("restart acceptance", s)))
  # vb is named as such, with its L
  v <- capture.output(print(fit_lda(sim$dtm, K = 3, local = "vb", L = 2, passes = 2, seed = 1,
                                    progress = FALSE)))
  expect_match(v[2], "engine: L-sparse VB: local \"vb\" \\(L = 2\\), global \"memoized\"")
  expect_true(any(grepl("final objective", v)))
})

test_that("the default call is reproducible by seed and does not depend on threads (issue 20)", {
  sim <- simulate_lda(D = 260, V = 40, K = 3, doc_length = 30, seed = 5)
  a <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 21, threads = 1, progress = FALSE)
  b <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 21, threads = 1, progress = FALSE)
  c <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 21, threads = 2, progress = FALSE)
  # several minibatches (the default is 100 documents each)
  expect_identical(a$control$n_batches, 3L)
  expect_identical(a$topic_word, b$topic_word)
  expect_identical(a$topic_word, c$topic_word)
  expect_identical(a$doc_topic, c$doc_topic)
  expect_identical(predict(a, sim$dtm[1:20, ], threads = 1),
                   predict(c, sim$dtm[1:20, ], threads = 2))
  d <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 22, progress = FALSE)
  expect_false(identical(a$topic_word, d$topic_word))
  # update() continues with the fit's own engine and stays reproducible
  u1 <- update(a, sim$dtm, passes = 2, progress = FALSE)
  u2 <- update(c, sim$dtm, passes = 2, progress = FALSE)
  expect_identical(u1$local, "cvb0")
  expect_identical(nrow(u1$trace), 5L)
  expect_identical(u1$topic_word, u2$topic_word)
  expect_false(identical(u1$topic_word, a$topic_word))
})

test_that("vb-only arguments given to the default engine are refused or documented (issue 20)", {
  sim <- sim_small()
  x <- sim$dtm
  # restarts: NULL is the engine's default (TRUE for vb); TRUE asks for what
  # SCVB0 has not; FALSE is what it does anyway
  expect_error(fit_lda(x, K = 3, restarts = TRUE), "drop `restarts`",
               class = "sparsevi_error_argument")
  f0 <- fit_lda(x, K = 3, passes = 1, seed = 1, progress = FALSE)
  f1 <- fit_lda(x, K = 3, passes = 1, seed = 1, restarts = FALSE, progress = FALSE)
  expect_identical(f0$topic_word, f1$topic_word)
  expect_false(f0$control$restarts)
  expect_true(fit_lda(x, K = 3, local = "vb", passes = 1, seed = 1,
                      progress = FALSE)$control$restarts)
  # eta = "learn", reuse_dead, vb's controls: classed errors naming the engine
  expect_error(fit_lda(x, K = 3, eta = "learn"), "\"vb\"", class = "sparsevi_error_argument")
  expect_error(fit_lda(x, K = 3, reuse_dead = TRUE), "\"vb\"", class = "sparsevi_error_argument")
  expect_error(fit_lda(x, K = 3, converge_tol = 0), "Unknown control",
               class = "sparsevi_error_argument")
  expect_error(fit_lda(x, K = 3, max_iter = 5), "Unknown control",
               class = "sparsevi_error_argument")
  # vb's global steps: the error says the default engine changed
  expect_error(fit_lda(x, K = 3, global = "memoized"), "give `local = \"vb\"`",
               class = "sparsevi_error_engine")
  # L: dense responsibilities, L sets only how many topics doc_topic keeps
  a <- fit_lda(x, K = 3, L = 1, passes = 2, seed = 1, progress = FALSE)
  b <- fit_lda(x, K = 3, L = 3, passes = 2, seed = 1, progress = FALSE)
  expect_identical(a$topic_word, b$topic_word)
  expect_true(all(Matrix::rowSums(a$doc_topic != 0) == 1))
  expect_true(all(Matrix::rowSums(b$doc_topic != 0) == 3))
  # the default minibatches: 100 documents (Foulds et al.), or as given
  expect_identical(fit_lda(x, K = 3, passes = 1, seed = 1, batch_size = 20,
                           progress = FALSE)$control$n_batches, 6L)
})

test_that("a fit's batches are made once for a corpus in memory, every lap for a large one or a single lap", {
  x <- simulate_lda(D = 30, V = 20, K = 2, seed = 1)$dtm
  members <- list(c(3L, 9L, 1L), 10:20, c(2L, 30L))
  read <- sparsevi:::lda_batch_reader(x, members)
  for (b in seq_along(members)) {
    expect_identical(read(b), sparsevi:::dtm_subset(x, members[[b]]))
  }
  # kept, batch by batch, for the later laps
  again <- environment(read)$cache
  expect_true(all(!vapply(again, is.null, TRUE)))
  # a corpus above the cap is read anew every time, nothing kept
  old <- sparsevi:::lda_batch_cache_max
  utils::assignInNamespace("lda_batch_cache_max", 5, ns = "sparsevi")
  on.exit(utils::assignInNamespace("lda_batch_cache_max", old, ns = "sparsevi"))
  read2 <- sparsevi:::lda_batch_reader(x, members)
  expect_identical(read2(2), sparsevi:::dtm_subset(x, members[[2]]))
  expect_null(environment(read2)$cache)
  # and a call of one lap keeps nothing
  read1 <- sparsevi:::lda_batch_reader(x, members, laps = 1L)
  expect_identical(read1(1), sparsevi:::dtm_subset(x, members[[1]]))
  expect_null(environment(read1)$cache)
})
