# SCVB0's lazy global step (lda_global_cvb0_lazy, cvb0_global_lazy in
# src/lda-cvb0.c) against the dense one (lda_global_cvb0), and the per-document
# streams of the threaded local step.

# Runs the dense and the lazy global steps side by side on the same summaries
# (computed from the dense state), comparing the materialised topics and
# totals after every step. Returns the largest relative difference and the
# number of rescalings seen.
cvb0_lazy_vs_dense <- function(x, K, steps, control, batch_size = 40, seed = 5) {
  V <- ncol(x)
  rng <- uniform_source(seed)
  dense <- list(lambda = matrix(0.01 + rng(K * V), K, V), t = 0,
                n_tokens = sum(x$count))
  lazy <- dense
  D <- nrow(x)
  batches <- split(seq_len(D), ceiling(seq_len(D) / batch_size))
  worst <- 0
  rescales <- 0
  for (i in seq_len(steps)) {
    batch <- sparsevi:::dtm_subset(x, batches[[(i - 1) %% length(batches) + 1]])
    res <- sparsevi:::lda_local_cvb0(batch, dense, control, c(0, i), 1L)
    dense <- sparsevi:::lda_global_cvb0(dense, res, i, control)
    old_scale <- if (is.null(lazy$cvb0)) 1 else lazy$cvb0$meta[1]
    lazy <- sparsevi:::lda_global_cvb0_lazy(lazy, res, i, control)
    if (lazy$cvb0$meta[1] == 1 || lazy$cvb0$meta[1] > old_scale) rescales <- rescales + 1
    lam <- sparsevi:::cvb0_state_lambda(lazy)
    worst <- max(worst, max(abs(lam - dense$lambda) / abs(dense$lambda)),
                 max(abs(lazy$tot - dense$tot) / abs(dense$tot)))
    expect_null(lazy$lambda)
    expect_identical(lazy$t, dense$t)
  }
  list(worst = worst, rescales = rescales, dense = dense, lazy = lazy)
}

test_that("the lazy SCVB0 global step equals the dense one, across rescalings", {
  sim <- simulate_lda(D = 200, V = 80, K = 3, doc_length = 40, seed = 8)
  base <- list(alpha = 0.1, eta = 0.01)
  # the paper's schedule (rho about 0.02): no rescaling in 60 steps
  paper <- list(step_scale = 10, tau = 1000, kappa = 0.9)
  a <- cvb0_lazy_vs_dense(sim$dtm, 4, 60, c(base, paper))
  expect_lt(a$worst, 1e-10)
  expect_identical(a$rescales, 0)
  expect_lt(a$lazy$cvb0$meta[1], 0.5)
  # rescale whenever the running scale falls below 0.9: many rescalings
  b <- cvb0_lazy_vs_dense(sim$dtm, 4, 60, c(base, paper, list(rescale_below = 0.9)))
  expect_lt(b$worst, 1e-10)
  expect_gt(b$rescales, 5)
  # large steps (rho = 0.5 .. 1): the scale underflows the default threshold
  c3 <- cvb0_lazy_vs_dense(sim$dtm, 4, 400,
                           c(base, list(step_scale = 1, tau = 1, kappa = 0.1)))
  expect_lt(c3$worst, 1e-10)
  expect_gt(c3$rescales, 0)
  # rho = 1 on the first step (scale would be 0): applied densely
  d <- cvb0_lazy_vs_dense(sim$dtm, 4, 3, c(base, list(step_scale = 1, tau = 1, kappa = 0.5)))
  expect_lt(d$worst, 1e-10)
  # a dense update that then rescales leaves tot equal to the row sums
  expect_equal(c3$lazy$tot, rowSums(sparsevi:::cvb0_state_lambda(c3$lazy)), tolerance = 1e-10)
})

test_that("the lazy SCVB0 global step touches only the minibatch's words", {
  tb <- cvb0_test_batch(D = 60, V = 50, K = 3, doc_length = 20, seed = 2, n_docs = 10,
                        rng_seed = 3, tokens_mult = 10)
  x <- tb$x
  K <- tb$K
  V <- tb$V
  state <- tb$state
  # the paper's schedule (rho < 1: the default's first step is dense)
  ctl <- list(alpha = 0.1, eta = 0.01, step_scale = 10, tau = 1000, kappa = 0.9)
  res <- sparsevi:::lda_local_cvb0(x, state, ctl, c(0, 1), 1L)
  s1 <- sparsevi:::lda_global_cvb0_lazy(state, res, 1L, ctl)
  X0 <- state$lambda - 0.01
  seen <- sort(unique(x$term)) + 1L
  unseen <- setdiff(seq_len(V), seen)
  expect_gt(length(unseen), 0)
  expect_identical(s1$cvb0$X[, unseen], X0[, unseen])
  expect_false(isTRUE(all.equal(s1$cvb0$X[, seen], X0[, seen])))
  # the dense view decays the unseen words all the same
  rho <- s1$rho
  expect_equal(sparsevi:::cvb0_state_lambda(s1)[, unseen],
               (1 - rho) * state$lambda[, unseen] + rho * 0.01, tolerance = 1e-13)
  # the finish materialises lambda (as R's eta + scale X) and drops the store
  e <- sparsevi:::lda_cvb0_finish(s1, ctl)
  expect_null(e$cvb0)
  expect_identical(e$lambda, 0.01 + s1$cvb0$meta[1] * s1$cvb0$X)
  expect_identical(e$lambda, sparsevi:::cvb0_state_lambda(s1))
  expect_equal(e$tot, rowSums(e$lambda), tolerance = 1e-12)
  expect_identical(e$t, s1$t)
})

test_that("the lazy SCVB0 loop is thread-independent and equals the dense loop", {
  sim <- simulate_lda(D = 300, V = 60, K = 3, doc_length = 40, seed = 6)
  x <- sim$dtm
  run <- function(global, threads) {
    rng <- uniform_source(4)
    state <- list(lambda = matrix(0.01 + rng(4 * ncol(x)), 4, ncol(x)), t = 0,
                  n_tokens = sum(x$count))
    ctl <- list(alpha = 0.1, eta = 0.01, threads = threads)
    gfun <- get(paste0("lda_global_", global), asNamespace("sparsevi"))
    for (lap in 1:2) {
      for (b in split(seq_len(300), ceiling(seq_len(300) / 70))) {
        res <- sparsevi:::lda_local_cvb0(sparsevi:::dtm_subset(x, b), state, ctl,
                                         as.double(c(lap, b[1])), threads)
        state <- gfun(state, res, 1L, ctl)
      }
    }
    sparsevi:::lda_cvb0_finish(state, ctl)
  }
  l1 <- run("cvb0_lazy", 1L)
  l2 <- run("cvb0_lazy", 2L)
  expect_identical(l1$lambda, l2$lambda)
  expect_identical(l1$tot, l2$tot)
  d1 <- run("cvb0", 1L)
  expect_equal(l1$lambda, d1$lambda, tolerance = 1e-10)
})

test_that("the threaded local step draws per-document streams in any schedule", {
  sim <- simulate_lda(D = 150, V = 40, K = 3, doc_length = 30, seed = 3)
  K <- 4
  lambda <- matrix(0.01 + stats::qgamma(uniform_source(9)(K * 40), 1), K, 40)
  ctl <- list(alpha = 0.1, burnin = 1L)
  st <- list(lambda = lambda, t = 2)
  r1 <- sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, c(0, 4), 1L)
  r2 <- sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, c(0, 4), 2L)
  expect_identical(r1$doc_topic, r2$doc_topic)
  expect_identical(r1$summary, r2$summary)
  # a document's result does not depend on the other documents of the batch
  sub <- sparsevi:::dtm_subset(sim$dtm, 1:10)
  r3 <- sparsevi:::lda_local_cvb0(sub, st, ctl, c(0, 4), 2L)
  expect_identical(r3$doc_topic, r1$doc_topic[, 1:10])
  ref <- ref_cvb0_local(sim$dtm, lambda, 0.1, c(0, 4), stream_base = 2 * 2^26)
  expect_equal(r2$doc_topic, ref$theta, tolerance = 1e-12)
  expect_equal(cvb0_dense(r2, ncol(sim$dtm)), ref$summary, tolerance = 1e-12)
})

test_that("training does not modify an earlier fit in place", {
  sim <- simulate_lda(D = 200, V = 40, K = 3, doc_length = 30, seed = 12)
  a <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 1, batch_size = 50, seed = 3,
               progress = FALSE)
  snap <- serialize(a, NULL)
  expect_null(a$state$cvb0)
  u <- update(a, sim$dtm, passes = 2, progress = FALSE)
  expect_identical(serialize(a, NULL), snap)
  expect_false(isTRUE(all.equal(u$lambda, a$lambda)))
  # one fit of three laps equals one lap continued by two
  b <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 3, batch_size = 50, seed = 3,
               progress = FALSE)
  expect_equal(u$topic_word, b$topic_word, tolerance = 1e-10)
})

test_that("every kernel width gives the same bits", {
  sim <- simulate_lda(D = 130, V = 60, K = 3, doc_length = 40, seed = 14)
  # K = 13: eight-topic groups plus a tail of five
  K <- 13
  lambda <- matrix(0.01 + stats::qgamma(uniform_source(2)(K * 60), 1), K, 60)
  st <- list(lambda = lambda, t = 1)
  out <- lapply(c(2, 4, 8), function(w) {
    ctl <- list(alpha = 0.1, burnin = 1L, cvb0_kernel = w)
    list(one = sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, c(0, 3), 1L),
         two = sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, c(0, 3), 2L))
  })
  for (o in out) {
    expect_identical(o$one$doc_topic, out[[1]]$one$doc_topic)
    expect_identical(o$one$summary, out[[1]]$one$summary)
    expect_identical(o$two$doc_topic, out[[1]]$one$doc_topic)
    expect_identical(o$two$summary, out[[1]]$one$summary)
  }
  ref <- ref_cvb0_local(sim$dtm, lambda, 0.1, c(0, 3), stream_base = 2^26)
  expect_equal(out[[1]]$one$doc_topic, ref$theta, tolerance = 1e-12)
  expect_true(.Call(sparsevi:::ffi_lda_cvb0_kernel_width, 0L) %in% c(2L, 4L, 8L))
})

test_that("a minibatch far smaller than the vocabulary finds its words by sorting", {
  sim <- simulate_lda(D = 20, V = 5000, K = 3, doc_length = 6, seed = 15)
  K <- 4
  lambda <- matrix(0.01 + stats::qgamma(uniform_source(5)(K * 5000), 1), K, 5000)
  sub <- sparsevi:::dtm_subset(sim$dtm, c(3, 9))
  expect_gt(5000, 256 * length(sub$term))
  st <- list(lambda = lambda, t = 0)
  ctl <- list(alpha = 0.1, burnin = 1L)
  r1 <- sparsevi:::lda_local_cvb0(sub, st, ctl, c(0, 6), 1L)
  r2 <- sparsevi:::lda_local_cvb0(sub, st, ctl, c(0, 6), 2L)
  ref <- ref_cvb0_local(sub, lambda, 0.1, c(0, 6))
  expect_equal(r1$doc_topic, ref$theta, tolerance = 1e-12)
  expect_equal(cvb0_dense(r1, 5000), ref$summary, tolerance = 1e-12)
  expect_identical(r1$summary, r2$summary)
  expect_identical(r1$doc_topic, r2$doc_topic)
  expect_identical(r1$summary$words, sort(unique(sub$term)))
})

test_that("training keeps the lazy store across laps; fits and held-out scores materialise", {
  sim <- simulate_lda(D = 240, V = 50, K = 3, doc_length = 30, seed = 16)
  a <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 3, batch_size = 40, seed = 4,
               progress = FALSE)
  expect_null(a$state$cvb0)
  expect_equal(a$state$t, 18)
  expect_equal(a$state$tot, rowSums(a$lambda), tolerance = 1e-12)
  # scoring held-out documents after every lap finishes a copy of the state,
  # not the training state: the same topics
  h <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 3, batch_size = 40, seed = 4,
               progress = FALSE, heldout = sim$dtm[1:30, ])
  expect_identical(h$lambda, a$lambda)
  expect_true(all(is.finite(h$trace$heldout)))
  # the loop's end-of-lap hook no longer materialises (the store lives on)
  expect_null(get0("lda_cvb0_end_lap", asNamespace("sparsevi"), inherits = FALSE))
  # the finish hook is found by the shared loop
  st <- sparsevi:::lda_finish_state(list(lambda = a$lambda, t = 1L), a$control)
  expect_identical(st$lambda, a$lambda)
})

test_that("a state left behind by an interrupted lap finishes consistently", {
  sim <- simulate_lda(D = 200, V = 40, K = 3, doc_length = 30, seed = 17)
  x <- sim$dtm
  K <- 4
  st <- list(lambda = matrix(0.01 + uniform_source(6)(K * 40), K, 40), t = 0L,
             n_tokens = sum(x$count))
  ctl <- list(alpha = 0.1, eta = 0.01)
  step <- function(state, b) {
    res <- sparsevi:::lda_local_cvb0(sparsevi:::dtm_subset(x, b), state, ctl,
                                     as.double(c(1, b[1])), 1L)
    sparsevi:::lda_global_cvb0_lazy(state, res, 1L, ctl)
  }
  a <- step(st, 1:50)
  b <- step(step(a, 51:100), 101:150) # shares a's store and moves it on
  fa <- sparsevi:::lda_finish_state(a, list(local = "cvb0"))
  fb <- sparsevi:::lda_finish_state(b, list(local = "cvb0"))
  # the stale state sees the store as it is: the same topics, totals and t
  expect_identical(fa$lambda, fb$lambda)
  expect_identical(fa$tot, fb$tot)
  expect_identical(fa$t, 3L)
  expect_equal(fb$tot, rowSums(fb$lambda), tolerance = 1e-12)
  # continuing from the finished state equals continuing from the store
  c1 <- sparsevi:::lda_finish_state(step(fb, 151:200), list(local = "cvb0"))
  c2 <- sparsevi:::lda_finish_state(step(b, 151:200), list(local = "cvb0"))
  expect_equal(c1$lambda, c2$lambda, tolerance = 1e-12)
  expect_identical(c1$t, c2$t)
})

test_that("the session's word table finds the batch's words whatever it holds", {
  sim <- simulate_lda(D = 80, V = 300, K = 3, doc_length = 25, seed = 18)
  K <- 5
  lambda <- matrix(0.01 + uniform_source(8)(K * 300), K, 300)
  st <- list(lambda = lambda, t = 0)
  ctl <- list(alpha = 0.1)
  r1 <- sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, c(0, 2), 1L)
  expect_identical(r1$summary$words, sort(unique(sim$dtm$term)))
  # any contents of the table are safe (a "sparse set" checks each entry)
  settings <- sparsevi:::cvb0_settings(ctl)
  for (junk in list(rep(0L, 300), 299:0, rep(-5L, 300), sample(0:5, 300, TRUE))) {
    rj <- .Call(sparsevi:::ffi_lda_local_cvb0, sim$dtm, 300L, lambda, NULL,
                sparsevi:::cvb0_opts(settings, 0, TRUE), c(0, 2), 1L,
                sparsevi:::cvb0_buffers(marks = junk))
    expect_identical(rj$x, r1$summary$x)
    expect_identical(rj$words, r1$summary$words)
  }
  # without the table (a V-long table of its own, or sorting): the same bits
  r2 <- .Call(sparsevi:::ffi_lda_local_cvb0, sim$dtm, 300L, lambda, NULL,
              sparsevi:::cvb0_opts(settings, 0, TRUE), c(0, 2), 1L, sparsevi:::cvb0_buffers())
  expect_identical(r2$words, r1$summary$words)
  expect_identical(r2$x, r1$summary$x)
  expect_identical(r2$theta, r1$doc_topic)
  expect_equal(length(r1$summary$x), K * length(r1$summary$words))
})
