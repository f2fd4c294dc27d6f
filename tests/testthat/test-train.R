# The one training loop (R/train.R): the step size, the trace schema shared by
# LDA and mixtures, the rounds, and a failed lap keeping the last one.

test_that("step_size() is min(1, s (tau + t)^-kappa)", {
  expect_identical(step_size(0, 1, 0.6), 1)
  expect_identical(step_size(3, 1, 0.6), 4^-0.6)
  expect_identical(step_size(3, 1000, 0.9, 10), 10 * 1003^-0.9)
  expect_identical(step_size(0, 0.5, 0.9, 10), 1)
  # every stochastic global step uses it: LDA's rho is the same number
  ctl <- list(tau = 1, kappa = 0.7, step_scale = 1)
  expect_identical(sparsevi:::lda_rho(5, ctl), step_size(5, 1, 0.7))
})

test_that("LDA and mixture traces share one schema", {
  sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 1)
  lda <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE)
  mix <- fit_mixture(faithful, K = 2, passes = 2, tol = 0.1, seed = 1, progress = FALSE)
  common <- train_trace_columns
  expect_identical(names(lda$trace)[seq_along(common)], common)
  expect_identical(names(mix$trace)[seq_along(common)], common)
  expect_identical(setdiff(names(mix$trace), common), c("local_seconds", "summary_seconds"))
  expect_identical(setdiff(names(lda$trace), common), "restart_accept")
  for (tr in list(lda$trace, mix$trace)) {
    expect_type(tr$lap, "integer")
    expect_true(all(diff(tr$seconds) >= 0) && all(diff(tr$cpu_seconds) >= 0))
    expect_true(all(tr$bytes_sent == 0))
  }
  # update() continues the clock and the laps of both
  up <- suppressWarnings(update(mix, faithful, passes = 2))
  expect_identical(names(up$trace), names(mix$trace))
  expect_true(all(diff(up$trace$cpu_seconds) >= 0))
  lu <- update(lda, sim$dtm, passes = 1, progress = FALSE)
  expect_identical(lu$trace$lap, 1:3)
  expect_identical(train_empty_trace("x")$lap, integer(0))
})

test_that("train_rounds() runs local steps per round from the round's start", {
  seen <- list()
  run_round <- function(round, state) {
    seen[[length(seen) + 1L]] <<- list(round = round, state = state)
    list(results = as.list(round * 10), sent = 1, received = 2)
  }
  out <- train_rounds(0, 1:5, 2, run_round, function(state, res, b) state + res,
                      function(acc, res) acc + 1, 0)
  expect_identical(out$state, 150)
  expect_identical(out$acc, 5)
  expect_identical(out$sent, 3)
  expect_identical(lapply(seen, `[[`, "round"), list(1:2, 3:4, 5L))
  # the second round starts from the state after the first round's globals
  expect_identical(vapply(seen, `[[`, 1, "state"), c(0, 30, 100))
})

test_that("train_laps() keeps the last completed lap when a lap fails", {
  tr <- new_trainer(FALSE, 3)
  lap <- function(state, l) {
    if (l == 3) stop("boom")
    list(state = state + 1, extras = list())
  }
  expect_warning(run <- train_laps(0, 1:3, lap, function(s) list(objective = s, heldout = NA),
                                   tr),
                 "boom", class = "sparsevi_warning_interrupted")
  expect_identical(run$state, 2)
  expect_identical(run$ended, "interrupted")
  expect_identical(tr$frame()$objective, c(1, 2))
  # the first lap failing is an error, unless the engine has a lap 0
  expect_error(train_laps(0, 3, lap, function(s) list(objective = s, heldout = NA),
                          new_trainer(FALSE, 3)), "boom")
  # convergence ends the loop
  tr2 <- new_trainer(FALSE, 10)
  run <- train_laps(0, 1:10, function(state, l) list(state = state + 1 / l^2, extras = list()),
                    function(s) list(objective = s, heldout = NA), tr2, previous = 0,
                    converged = function(p, o) abs(o - p) < 0.05)
  expect_identical(run$ended, "converged")
  expect_identical(nrow(tr2$frame()), 5L)
})

test_that("one registry describes every engine", {
  eng <- sparsevi:::sparsevi_engines
  expect_setequal(names(eng$lda), c("vb", "ope", "cvb0", "gibbs"))
  # lda_combinations is the registry's pairs, each one fit_lda() accepts
  expect_identical(nrow(lda_combinations),
                   sum(vapply(eng$lda, function(e) length(e$globals), 1L)))
  sim <- simulate_lda(D = 30, V = 20, K = 2, seed = 1)
  for (i in seq_len(nrow(lda_combinations))) {
    loc <- lda_combinations$local[i]
    glob <- lda_combinations$global[i]
    fit <- suppressWarnings(fit_lda(sim$dtm, K = 2, local = loc, global = glob, passes = 1,
                                    seed = 1, progress = FALSE, doc_topics = 0))
    expect_identical(c(fit$local, fit$global), c(loc, glob))
    # the global step the registry chose (R/engines.R) is recorded in the fit
    expect_identical(fit$control$global_step,
                     sparsevi:::lda_engine(loc)$holds[[glob]])
  }
  expect_error(fit_lda(sim$dtm, K = 2, local = "cvb0", global = "memoized"),
               "Valid combinations", class = "sparsevi_error_engine")
  expect_error(fit_mixture(faithful, K = 2, global = "ml"), class = "sparsevi_error_argument")
  expect_identical(eng$mixture$globals, c("memoized", "stochastic", "batch"))
})
