# Empirical Bayes eta (R/lda-global.R lda_learn_eta, src/lda-eb.c).

# Pure-R reference: the Polya log-likelihood of the rows of S in eta,
# maximised by optimize().
ref_eb_eta <- function(S) {
  V <- ncol(S)
  N <- rowSums(S)
  f <- function(le) {
    a <- exp(le)
    sum(lgamma(V * a) - lgamma(V * a + N)) + sum(lgamma(a + S[S > 0]) - lgamma(a))
  }
  exp(stats::optimize(f, c(log(1e-6), log(1e3)), maximum = TRUE, tol = 1e-10)$maximum)
}

test_that("the C fixed point finds the eta of the Polya likelihood's maximum", {
  set.seed(3)
  for (trial in 1:3) {
    K <- 4 + trial
    V <- 30 * trial
    S <- matrix(rgamma(K * V, shape = 0.3, rate = 0.1), K, V)
    S[sample(length(S), length(S) %/% 2)] <- 0
    got <- .Call(sparsevi:::ffi_lda_eb_eta, S, 0.5, 1000L, 1e-12)
    expect_equal(got[1], ref_eb_eta(S), tolerance = 1e-6)
    expect_lt(got[2], 1000)
    # from another start, the same point
    expect_equal(.Call(sparsevi:::ffi_lda_eb_eta, S, 5, 1000L, 1e-12)[1], got[1],
                 tolerance = 1e-8)
  }
  # no counts: eta is kept
  expect_identical(.Call(sparsevi:::ffi_lda_eb_eta, matrix(0, 3, 5), 0.7, 10L, 1e-8)[1], 0.7)
})

test_that("eta = \"learn\" learns eta between laps; the memoized ELBO never decreases", {
  sim <- simulate_lda(D = 120, V = 80, K = 4, eta = 0.05, seed = 7)
  f <- fit_lda(sim$dtm, local = "vb", K = 4, L = 2, eta = "learn", passes = 6, seed = 1,
               progress = FALSE,
               converge_tol = 0) # all 6 laps
  expect_length(f$state$eta_path, 5L)
  expect_identical(f$eta, f$state$eta_path[5])
  expect_identical(f$control$eta, f$eta)
  expect_true(f$control$eta_learn)
  expect_true(all(diff(f$trace$objective) >= -1e-6 * abs(f$trace$objective[-1])))
  # each learned eta is the maximiser for the counts of its lap, and lambda
  # follows it
  expect_equal(f$lambda, f$eta + pmax(f$state$topics$S, 0), tolerance = 1e-12)
  # planted eta = 0.05: the learned one moves from the start towards it
  start <- sparsevi:::eta_learn_start(ncol(sim$dtm))
  expect_lt(abs(log(f$eta / 0.05)), abs(log(start / 0.05)))
  f2 <- fit_lda(sim$dtm, local = "vb", K = 4, L = 2, eta = "learn", passes = 6, seed = 1,
                threads = 2,
                progress = FALSE, converge_tol = 0)
  expect_identical(f2$topic_word, f$topic_word)
  # stochastic training learns too; update() goes on learning
  s <- fit_lda(sim$dtm, local = "vb", K = 4, L = 2, eta = "learn", global = "stochastic",
               passes = 3,
               seed = 1, progress = FALSE)
  expect_length(s$state$eta_path, 2L)
  u <- update(f, sim$dtm, passes = 2, progress = FALSE)
  expect_length(u$state$eta_path, 6L)
  expect_error(fit_lda(sim$dtm, K = 4, local = "cvb0", eta = "learn"),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm, local = "vb", K = 4, eta = "lean"),
                       class = "sparsevi_error_argument")
})
