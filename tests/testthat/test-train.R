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
  expect_identical(setdiff(names(lda$trace), common), c("restart_accept", "bytes_between_workers"))
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

test_that("train_rounds() calls after_round() after each round's global steps", {
  seen <- list()
  run_round <- function(round, state) list(results = as.list(round * 10), sent = 0, received = 0)
  out <- train_rounds(0, 1:5, 2, run_round, function(state, res, b) state + res,
                      after_round = function(state, done) {
                        seen[[length(seen) + 1L]] <<- c(state, done)
                      })
  expect_identical(out$state, 150)
  # the state after the round, and the batches of the lap done so far
  expect_identical(seen, list(c(30, 2), c(100, 4), c(150, 5)))
})

test_that("heldout_every scores within laps and leaves the fit as it is", {
  sim <- sim_small(D = 160)
  sp <- split_heldout(sim$dtm, 20, seed = 1)
  cases <- list(list(local = "cvb0"), list(local = "vb", global = "stochastic"),
                list(local = "vb", global = "memoized"), list(local = "gibbs"),
                list(local = "ope"))
  for (cs in cases) {
    args <- c(list(sp$train, K = 3, n_batches = 5, passes = 2, seed = 1, progress = FALSE,
                   heldout = sp$test), cs)
    plain <- do.call(fit_lda, args)
    fit <- do.call(fit_lda, c(args, list(heldout_every = 2)))
    info <- paste(cs, collapse = " ")
    expect_identical(fit$lambda, plain$lambda, info = info)
    expect_identical(fit$trace$heldout, plain$trace$heldout, info = info)
    lc <- fit$learning_curve
    expect_identical(names(lc), c("lap", "batches", "seconds", "cpu_seconds", "heldout"))
    expect_identical(lc$lap, rep(1:2, each = 3), info = info)
    expect_identical(lc$batches, rep(c(2L, 4L, 5L), 2), info = info)
    # the laps' ends are the trace's scores; within a lap, scores of their own
    expect_identical(lc$heldout[lc$batches == 5L], fit$trace$heldout, info = info)
    expect_true(all(is.finite(lc$heldout)), info = info)
    expect_false(any(lc$heldout[lc$batches < 5L] %in% fit$trace$heldout), info = info)
    expect_true(all(diff(lc$seconds) >= 0) && all(diff(lc$cpu_seconds) >= 0), info = info)
    expect_null(plain$learning_curve)
  }
  # a score after the round that completes each n-th batch (sync = 2:
  # rounds end at batches 2 and 4, so every = 1 scores there, and every = 3 at 4)
  fit <- fit_lda(sp$train, K = 3, n_batches = 5, passes = 1, seed = 1, sync = 2,
                 heldout = sp$test, heldout_every = 1, progress = FALSE)
  expect_identical(fit$learning_curve$batches, c(2L, 4L, 5L))
  fit3 <- fit_lda(sp$train, K = 3, n_batches = 5, passes = 1, seed = 1, sync = 2,
                  heldout = sp$test, heldout_every = 3, progress = FALSE)
  expect_identical(fit3$learning_curve$batches, c(4L, 5L))
  # the score within a lap is that of the state there: one batch of a lap of
  # one batch's documents, scored at the lap's end, gives the same number
  # (ordered visits: streaming takes its batches in order)
  b <- list(1:28, 29:56, 57:84, 85:112, 113:140)
  start <- matrix(stats::runif(3 * ncol(sp$train)) + 0.5, 3)
  one <- fit_lda(sp$train, K = 3, local = "vb", global = "streaming", batches = b, passes = 1,
                 seed = 1, heldout = sp$test, heldout_every = 1, progress = FALSE,
                 init = start)
  part <- fit_lda(sp$train[1:56, ], K = 3, local = "vb", global = "streaming", batches = b[1:2],
                  passes = 1, seed = 1, heldout = sp$test, progress = FALSE, init = start)
  expect_equal(one$learning_curve$heldout[2], part$trace$heldout, tolerance = 1e-12)
  # progress lines within the laps
  msgs <- capture_messages(fit_lda(sp$train, K = 3, n_batches = 5, passes = 1, seed = 1,
                                   heldout = sp$test, heldout_every = 2, progress = TRUE))
  expect_match(msgs[1], "lap 1  2/5 batches")
  expect_match(msgs[2], "lap 1  4/5 batches")
  expect_match(msgs[3], "lap 1/1")
  # update() adds its laps; NULL stops the scores within laps
  up <- update(fit, sp$train, passes = 1, progress = FALSE)
  expect_identical(up$learning_curve$lap, c(1L, 1L, 1L, 2L, 2L, 2L))
  up2 <- update(up, sp$train, passes = 1, progress = FALSE, heldout_every = NULL)
  expect_identical(nrow(up2$learning_curve), 6L)
  expect_identical(nrow(up2$trace), 3L)
  f <- tempfile(fileext = ".pdf")
  grDevices::pdf(f)
  expect_invisible(plot(up))
  grDevices::dev.off()
  unlink(f)
  # bad input
  expect_error(fit_lda(sp$train, K = 3, heldout_every = 2), class = "sparsevi_error_argument")
  expect_error(fit_lda(sp$train, K = 3, heldout_every = 2), "`heldout`")
  expect_error(fit_lda(sp$train, K = 3, heldout = sp$test, heldout_every = 0),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(sp$train, K = 3, heldout = sp$test, heldout_every = "a"),
               "`heldout_every`")
  expect_error(update(fit, sp$train, heldout = NULL, heldout_every = 2),
               class = "sparsevi_error_argument")
})

test_that("an interrupted lap drops its scores within the lap", {
  sim <- sim_small(D = 160)
  sp <- split_heldout(sim$dtm, 20, seed = 1)
  restore <- fail_memoized_from(8)
  on.exit(restore())
  # fails in lap 2 after three of its batches were scored within it
  expect_warning(fit <- fit_lda(sp$train, local = "vb", K = 3, n_batches = 4, passes = 3,
                                seed = 1, heldout = sp$test, heldout_every = 1,
                                progress = FALSE),
                 class = "sparsevi_warning_interrupted")
  expect_identical(fit$learning_curve$lap, rep(1L, 4))
  expect_identical(fit$learning_curve$batches, 1:4)
})

test_that("heldout_every with several K scores the refit of the best K", {
  sim <- sim_small(D = 160)
  sp <- split_heldout(sim$dtm, 20, seed = 1)
  fit <- fit_lda(sp$train, K = c(2, 3), n_batches = 4, passes = 1, seed = 1, heldout = sp$test,
                 heldout_every = 2, progress = FALSE)
  expect_identical(fit$learning_curve$batches, c(2L, 4L))
  expect_identical(fit$learning_curve$heldout[2], fit$trace$heldout)
  expect_error(fit_lda(sp$train, K = c(2, 3), heldout_every = 2, progress = FALSE),
               class = "sparsevi_error_argument")
})
