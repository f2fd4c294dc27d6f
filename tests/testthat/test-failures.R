# Failures during training (issue 11): an error in a later lap returns the
# model of the last completed lap with a classed warning; an error before any
# lap completes propagates; user inputs are never modified.

# Replaces an internal function by one that fails from its `after`-th call
# on; returns the function that restores the original.
fail_after <- function(name, after) {
  orig <- get(name, asNamespace("sparsevi"))
  calls <- 0
  utils::assignInNamespace(name, function(...) {
    calls <<- calls + 1
    if (calls >= after) stop("injected failure")
    orig(...)
  }, ns = "sparsevi")
  function() utils::assignInNamespace(name, orig, ns = "sparsevi")
}

test_that("fit_mixture returns the last completed lap when a later lap fails", {
  X <- simulate_mixture(N = 60, D = 2, K = 2, seed = 1)$X
  ref <- fit_mixture(X, K = 2, n_batches = 2, passes = 3, tol = 0, seed = 1,
                     progress = FALSE)
  for (glob in c("memoized", "stochastic")) {
    local({
      # lap 0 (memoized) or the first lap (stochastic) takes 2 calls;
      # the failure hits the next lap's second batch
      after <- if (glob == "memoized") 6 else 4
      restore <- fail_after("mix_local", after)
      on.exit(restore(), add = TRUE)
      expect_warning(
        fit <- fit_mixture(X, K = 2, n_batches = 2, passes = 3, tol = 0, seed = 1,
                           global = glob, progress = FALSE),
        class = "sparsevi_warning_interrupted")
      expect_s3_class(fit, "sparsevi_mixture")
      expect_true(all(is.finite(fit$trace$lap)))
      expect_equal(max(fit$trace$lap), if (glob == "memoized") 1 else 1)
    })
  }
  # the fit up to the failure equals the uninterrupted fit's first laps (one
  # start, so that the failure's place among the calls is known: lap 0 and
  # each lap take 2 calls, the 6th is the second batch of lap 2)
  local({
    one <- list(X, K = 2, n_batches = 2, passes = 3, tol = 0, seed = 1, init = "kmeanspp",
                n_init = 1, progress = FALSE)
    ref1 <- suppressWarnings(do.call(fit_mixture, one))
    restore <- fail_after("mix_local", 6)
    on.exit(restore(), add = TRUE)
    fit <- suppressWarnings(do.call(fit_mixture, one))
    expect_equal(fit$trace$objective, ref1$trace$objective[1:2])
  })
  # a failure before any lap completes is an error
  local({
    restore <- fail_after("mix_local", 1)
    on.exit(restore(), add = TRUE)
    expect_error(fit_mixture(X, K = 2, passes = 2, seed = 1, progress = FALSE),
                 "injected failure")
  })
})

test_that("update() of a mixture keeps the fit when a later lap fails", {
  X <- simulate_mixture(N = 60, D = 2, K = 2, seed = 1)$X
  fit <- fit_mixture(X, K = 2, n_batches = 2, passes = 1, seed = 1, progress = FALSE)
  local({
    restore <- fail_after("mix_local", 4)
    on.exit(restore(), add = TRUE)
    expect_warning(up <- update(fit, X, passes = 3, progress = FALSE),
                   class = "sparsevi_warning_interrupted")
    expect_s3_class(up, "sparsevi_mixture")
  })
})

test_that("no exported function modifies its inputs", {
  sim <- simulate_lda(D = 10, V = 12, K = 2, doc_length = 15, seed = 1)
  x <- sim$dtm
  X <- simulate_mixture(N = 40, D = 2, K = 2, seed = 1)$X
  m <- as_dgCMatrix(x)
  x0 <- unserialize(serialize(x, NULL))
  X0 <- X + 0
  m0 <- unserialize(serialize(m, NULL))
  for (loc in c("vb", "cvb0", "gibbs")) {
    fit <- fit_lda(x, K = 2, local = loc, passes = 1, seed = 1, progress = FALSE)
    fit0 <- unserialize(serialize(fit, NULL))
    predict(fit, x, seed = 1)
    predict(fit, m, seed = 1)
    update(fit, x, passes = 1, progress = FALSE)
    sp <- split_heldout(x, n_test = 2, seed = 1)
    sp0 <- unserialize(serialize(sp, NULL))
    heldout_loglik(fit, sp$test)
    heldout_loglik_left_to_right(fit, sp$test, particles = 2, seed = 1)
    coherence(fit, x, measure = "umass", n = 3)
    expect_identical(fit, fit0)
    expect_identical(sp, sp0)
  }
  fit_lda(m, K = 2, passes = 1, seed = 1, progress = FALSE)
  fm <- fit_mixture(X, K = 2, passes = 1, seed = 1, progress = FALSE)
  fm0 <- unserialize(serialize(fm, NULL))
  predict(fm, X)
  heldout_loglik(fm, X)
  update(fm, X, passes = 1, progress = FALSE)
  expect_identical(fm, fm0)
  fit_mixture(x, K = 2, likelihood = "multinomial", passes = 1, seed = 1, progress = FALSE)
  fv <- fit_vdp(X, seed = 1, progress = FALSE)
  fv0 <- unserialize(serialize(fv, NULL))
  predict(fv, X)
  heldout_loglik(fv, X)
  expect_identical(fv, fv0)
  expect_identical(x, x0)
  expect_identical(X, X0)
  expect_identical(m, m0)
})

test_that("Ctrl-C while a lap is scored returns that lap's fit (issue 36, item 2)", {
  skip_on_cran()
  res <- run_child(c(
    'suppressMessages(library(sparsevi))',
    'x <- simulate_lda(D = 100, V = 40, K = 3, doc_length = 40, alpha = 0.1, eta = 0.05, seed = 1)$dtm',
    'sp <- split_heldout(x, test_frac = 0.2, seed = 1)',
    'ref <- fit_lda(sp$train, K = 3, passes = 2, seed = 1, progress = FALSE)',
    child_interrupt_at("completion_score", 2),
    'w <- NULL',
    'f <- withCallingHandlers(fit_lda(sp$train, K = 3, passes = 5, seed = 1, progress = FALSE,',
    '                                 heldout = sp$test),',
    '  warning = function(w0) { w <<- w0; invokeRestart("muffleWarning") })',
    'stopifnot(inherits(w, "sparsevi_warning_interrupted"), grepl("lap 2", conditionMessage(w)))',
    'stopifnot(identical(f$trace$lap, 1:2), is.na(f$trace$heldout[2]), !is.na(f$trace$heldout[1]))',
    'stopifnot(identical(f$ended, "interrupted"), identical(f$lambda[, ], ref$lambda[, ]))',
    'cat("OK\\n")'))
  expect_identical(res$status, 0L, info = paste(res$output, collapse = "\n"))
  expect_true("OK" %in% res$output)
})

test_that("Ctrl-C in a K grid stops the search and returns what was done, flagged (issue 36, item 4)", {
  skip_on_cran()
  # lap 8 is K = 4's second: K = 2 and 3 are done (3 laps each)
  res <- run_child(c(
    'suppressMessages(library(sparsevi))',
    'x <- simulate_lda(D = 100, V = 40, K = 3, doc_length = 40, alpha = 0.1, eta = 0.05, seed = 1)$dtm',
    child_interrupt_at("lda_lap", 8),
    'ws <- list()',
    'f <- withCallingHandlers(fit_lda(x, K = c(2, 3, 4), passes = 3, seed = 1, progress = FALSE),',
    '  warning = function(w) { ws[[length(ws) + 1]] <<- w; invokeRestart("muffleWarning") })',
    'last <- ws[[length(ws)]]',
    'stopifnot(inherits(last, "sparsevi_warning_interrupted"), grepl("K = 4", conditionMessage(last)))',
    'stopifnot(identical(f$ended, "interrupted"), identical(f$select$K, 2:3), f$select$laps == 3)',
    'stopifnot(identical(attr(f$select, "interrupted"), 4L), f$K %in% 2:3, f$n_docs == 90)',
    'stopifnot(f$K == f$select$K[f$select$chosen])',
    'stopifnot(any(grepl("interrupted at K = 4", capture.output(print(f)))))',
    'cat("OK\\n")'))
  expect_identical(res$status, 0L, info = paste(res$output, collapse = "\n"))
  expect_true("OK" %in% res$output)
})
