# SCVB0 (R/lda-cvb0.R, src/lda-cvb0.c, src/lda-cvb0-ffi.c).

cvb0_fixture <- function(D = 150, V = 40, K = 4, seed = 3) {
  sim <- simulate_lda(D = D, V = V, K = 3, doc_length = 30, seed = seed)
  rng <- uniform_source(seed + 100)
  lambda <- matrix(0.01 + stats::qgamma(rng(K * V), 1), K, V)
  list(x = sim$dtm, lambda = lambda, K = K, V = V)
}

# A bare SCVB0 loop over fixed minibatches, for tests that do not need fit_lda.
cvb0_loop <- function(x, K, passes, batch_size = 50, seed = c(0, 7), threads = 1L,
                      init_seed = 11) {
  V <- ncol(x)
  rng <- uniform_source(init_seed)
  state <- lda_test_state(lambda = matrix(0.01 + rng(K * V), K, V), t = 0,
                n_tokens = sum(x$count))
  control <- list(alpha = 0.1, eta = 0.01, step_scale = 1, tau = 10, kappa = 0.6,
                  threads = threads)
  D <- nrow(x)
  batches <- split(seq_len(D), ceiling(seq_len(D) / batch_size))
  for (p in seq_len(passes)) {
    for (b in seq_along(batches)) {
      batch <- sparsevi:::dtm_subset(x, batches[[b]])
      res <- sparsevi:::lda_local_cvb0(batch, state, control, seed, threads)
      state <- sparsevi:::lda_global_cvb0(state, res, b, control)
    }
  }
  state
}

test_that("one SCVB0 minibatch local step matches the pure-R reference of Algorithm 2", {
  f <- cvb0_fixture()
  seed <- c(0, 12345)
  for (case in list(list(burnin = 1L, shuffle = TRUE, start = "random"),
                    list(burnin = 0L, shuffle = FALSE, start = "random"),
                    list(burnin = 3L, shuffle = TRUE, start = "random"),
                    list(burnin = 0L, shuffle = TRUE, start = "topics"),
                    list(burnin = 1L, shuffle = FALSE, start = "topics"),
                    list(burnin = 0L, shuffle = TRUE, start = "uniform"))) {
    ctl <- list(alpha = 0.1, burnin = case$burnin, shuffle = case$shuffle,
                doc_start = case$start, doc_tau = 10)
    state <- lda_test_state(lambda = f$lambda, t = 5)
    res <- sparsevi:::lda_local_cvb0(f$x, state, ctl, seed, 1L)
    ref <- ref_cvb0_local(f$x, f$lambda, 0.1, seed, stream_base = 5 * 2^26,
                          passes = case$burnin + 1L, shuffle = case$shuffle,
                          start = case$start, doc_tau = 10)
    expect_equal(res$doc_topic, ref$theta, tolerance = 1e-12)
    expect_equal(cvb0_dense(res, f$V), ref$summary, tolerance = 1e-12)
  }
})

test_that("the document schedule arguments reach the kernel", {
  f <- cvb0_fixture(D = 20)
  ctl <- list(alpha = 0.3, doc_s = 0.5, doc_tau = 3, doc_kappa = 0.7, burnin = 2L)
  res <- sparsevi:::lda_local_cvb0(f$x, lda_test_state(lambda = f$lambda, t = 0), ctl, c(1, 2), 1L)
  ref <- ref_cvb0_local(f$x, f$lambda, 0.3, c(1, 2), doc_s = 0.5, doc_tau = 3,
                        doc_kappa = 0.7, passes = 3L, start = "topics")
  expect_equal(res$doc_topic, ref$theta, tolerance = 1e-12)
  expect_equal(cvb0_dense(res, f$V), ref$summary, tolerance = 1e-12)
})

test_that("one SCVB0 global step matches eqs. 7-8 with C / |M| scaling", {
  f <- cvb0_fixture()
  state <- lda_test_state(lambda = f$lambda, t = 3, n_tokens = 10 * sum(f$x$count))
  ctl <- list(alpha = 0.1, eta = 0.01)
  res <- sparsevi:::lda_local_cvb0(f$x, state, ctl, c(0, 1), 1L)
  new <- sparsevi:::lda_global_cvb0(state, res, 1L, ctl)
  # the default schedule (1 + t)^-0.6
  rho <- (1 + 3)^(-0.6)
  expect_equal(new$rho, rho)
  expect_equal(new$t, 4)
  ref <- ref_cvb0_global(f$lambda, cvb0_dense(res, f$V), 0.01, rho, 10)
  expect_equal(new$topics$lambda, ref, tolerance = 1e-13)
  # the paper's schedule when asked for
  paper <- c(ctl, list(step_scale = 10, tau = 1000, kappa = 0.9))
  expect_equal(sparsevi:::lda_global_cvb0(state, res, 1L, paper)$rho, 10 * (1000 + 3)^(-0.9))
  # NZ + V eta updated by eq. 8 equals the row sums of the new lambda
  expect_equal(new$tot, rowSums(ref), tolerance = 1e-12)
})

test_that("SCVB0 conserves counts and keeps topic totals consistent", {
  f <- cvb0_fixture()
  res <- sparsevi:::lda_local_cvb0(f$x, lda_test_state(lambda = f$lambda, t = 0),
                                   list(alpha = 0.1), c(0, 9), 1L)
  # each document's NTheta sums to its length, the summary to the batch tokens
  expect_equal(colSums(res$doc_topic), sparsevi:::doc_lengths(f$x), tolerance = 1e-12)
  expect_equal(sum(res$summary$x), sum(f$x$count), tolerance = 1e-12)
  expect_equal(res$stats$tokens, sum(f$x$count))
  expect_true(all(res$doc_topic >= 0))
  # each word's column of the summary holds exactly its count in the batch
  word_count <- numeric(f$V)
  agg <- rowsum(f$x$count, f$x$term)
  word_count[as.integer(rownames(agg)) + 1L] <- agg[, 1L]
  expect_equal(colSums(cvb0_dense(res, f$V)), word_count, tolerance = 1e-12)
  # after many stochastic updates NZ + V eta still equals the row sums of lambda
  state <- cvb0_loop(f$x, K = 4, passes = 3)
  expect_equal(state$tot, rowSums(state$topics$lambda), tolerance = 1e-10)
  expect_equal(state$t, 9)
})

test_that("SCVB0 recovers planted topics", {
  sim <- simulate_lda(D = 400, V = 60, K = 4, doc_length = 80, alpha = 0.1,
                      eta = 0.05, seed = 21)
  state <- cvb0_loop(sim$dtm, K = 4, passes = 15, batch_size = 100)
  tw <- state$topics$lambda / rowSums(state$topics$lambda)
  # greedy matching of true topics to fitted ones by L1 distance
  dist <- as.matrix(stats::dist(rbind(sim$topic_word, tw), method = "manhattan"))[1:4, 5:8]
  worst <- 0
  for (i in 1:4) {
    ij <- which(dist == min(dist), arr.ind = TRUE)[1, ]
    worst <- max(worst, dist[ij[1], ij[2]])
    dist[ij[1], ] <- Inf
    dist[, ij[2]] <- Inf
  }
  expect_lt(worst, 0.25)
})

test_that("SCVB0 is reproducible by seed and identical across thread counts", {
  f <- cvb0_fixture(D = 300)
  a <- cvb0_loop(f$x, K = 4, passes = 2, batch_size = 200, threads = 1L)
  b <- cvb0_loop(f$x, K = 4, passes = 2, batch_size = 200, threads = 1L)
  c2 <- cvb0_loop(f$x, K = 4, passes = 2, batch_size = 200, threads = 2L)
  expect_identical(a$topics$lambda, b$topics$lambda)
  expect_identical(a$topics$lambda, c2$topics$lambda)
  expect_identical(a$tot, c2$tot)
  d <- cvb0_loop(f$x, K = 4, passes = 2, batch_size = 200, seed = c(0, 8))
  expect_false(isTRUE(all.equal(a$topics$lambda, d$topics$lambda)))
})

test_that("SCVB0's summary is the one-thread sum with any number of document ranges", {
  # long documents over a small vocabulary (most entries' words were seen in
  # an earlier range), an empty document and a document of zero counts: the
  # ranges' direct adds, slots and empty entries must give the one-thread bits
  sim <- simulate_lda(D = 60, V = 25, K = 3, doc_length = 200, seed = 5)
  x <- sim$dtm
  x <- sparsevi:::dtm_subset(x, c(1:20, 1, 21:60))
  x$count[x$doc_ptr[2] + seq_len(x$doc_ptr[3] - x$doc_ptr[2])] <- 0
  x$doc_ptr <- c(x$doc_ptr[1:31], x$doc_ptr[31:length(x$doc_ptr)])
  x$doc_names <- NULL
  K <- 5
  rng <- uniform_source(9)
  state <- lda_test_state(lambda = matrix(0.01 + rng(K * 25), K, 25), t = 3)
  ctl <- list(alpha = 0.1, burnin = 0L, shuffle = TRUE, doc_start = "topics")
  one <- sparsevi:::lda_local_cvb0(x, state, ctl, c(0, 3), 1L)
  for (th in c(2L, 3L, 7L)) {
    more <- sparsevi:::lda_local_cvb0(x, state, ctl, c(0, 3), th)
    expect_identical(more$summary, one$summary)
    expect_identical(more$doc_topic, one$doc_topic)
  }
  ref <- ref_cvb0_local(x, state$topics$lambda, 0.1, c(0, 3), stream_base = 3 * 2^26,
                        passes = 1L, start = "topics")
  expect_equal(cvb0_dense(one, 25), ref$summary, tolerance = 1e-12)
})

test_that("the SCVB0 fold-in returns proportions and finds the planted mixtures", {
  sim <- simulate_lda(D = 60, V = 60, K = 3, doc_length = 200, alpha = 0.1,
                      eta = 0.05, seed = 5)
  fit <- list(topic_word = sim$topic_word, alpha = 0.1, control = list())
  p1 <- sparsevi:::lda_infer_cvb0(fit, sim$dtm, list(), c(0, 3), 1L)
  p2 <- sparsevi:::lda_infer_cvb0(fit, sim$dtm, list(), c(0, 3), 2L)
  expect_identical(p1, p2)
  expect_equal(dim(p1), c(60L, 3L))
  expect_equal(unname(rowSums(p1)), rep(1, 60), tolerance = 1e-12)
  expect_lt(mean(abs(p1 - sim$doc_topic)), 0.05)
  # an empty document gets the prior mean
  empty <- sparsevi:::new_sparsevi_dtm(c(0L, 0L), integer(), double(), colnames(sim$topic_word))
  expect_equal(unname(sparsevi:::lda_infer_cvb0(fit, empty, list(), c(0, 3), 1L)),
               matrix(1 / 3, 1, 3))
})

test_that("bad SCVB0 settings raise classed errors", {
  f <- cvb0_fixture(D = 5)
  st <- lda_test_state(lambda = f$lambda, t = 0)
  expect_error(sparsevi:::lda_local_cvb0(f$x, st, list(doc_s = 20), c(0, 1), 1L),
               class = "sparsevi_error_argument")
  expect_error(sparsevi:::lda_local_cvb0(f$x, st, list(burnin = -1), c(0, 1), 1L),
               class = "sparsevi_error_argument")
  expect_error(sparsevi:::lda_local_cvb0(f$x, st, list(doc_kappa = 1.5), c(0, 1), 1L),
               class = "sparsevi_error_argument")
  expect_error(sparsevi:::lda_local_cvb0(f$x, st, list(shuffle = NA), c(0, 1), 1L),
               class = "sparsevi_error_argument")
  fit <- list(topic_word = f$lambda / rowSums(f$lambda), alpha = 0.1, control = list())
  expect_error(sparsevi:::lda_infer_cvb0(fit, f$x, list(infer_passes = 0), c(0, 1), 1L),
               class = "sparsevi_error_argument")
})

# greedy matching of true to fitted topics; the largest L1 distance
cvb0_worst_match <- function(truth, fitted) {
  K <- nrow(truth)
  dist <- as.matrix(stats::dist(rbind(truth, fitted), method = "manhattan"))[
    seq_len(K), K + seq_len(nrow(fitted))]
  worst <- 0
  for (i in seq_len(K)) {
    ij <- which(dist == min(dist), arr.ind = TRUE)[1, ]
    worst <- max(worst, dist[ij[1], ij[2]])
    dist[ij[1], ] <- Inf
    dist[, ij[2]] <- Inf
  }
  worst
}

test_that("fit_lda(local = 'cvb0') uses its defaults and recovers planted topics", {
  sim <- simulate_lda(D = 400, V = 60, K = 4, doc_length = 80, seed = 21)
  fit <- fit_lda(sim$dtm, K = 4, local = "cvb0", passes = 10, seed = 1, progress = FALSE)
  expect_s3_class(fit, "sparsevi_lda")
  expect_identical(fit$global, "stochastic")
  expect_equal(c(fit$alpha, fit$eta, fit$control$tau, fit$control$kappa,
                 fit$control$step_scale), c(0.1, 0.01, 1, 0.6, 1))
  expect_identical(fit$control$batch_size, 100L)
  expect_identical(fit$control$burnin, 0L)
  expect_identical(fit$control$background, 0.3)
  expect_equal(fit$control$n_tokens, sum(sim$dtm$count))
  expect_equal(fit$state$t, 40L)
  # NZ + V eta tracked by eq. 8 equals the row sums of NPhi + eta
  expect_equal(fit$state$tot, rowSums(fit$lambda), tolerance = 1e-10)
  # simulated LDA documents have no background: without one, the planted
  # topics come back
  plain <- fit_lda(sim$dtm, K = 4, local = "cvb0", passes = 10, seed = 1, progress = FALSE,
                   background = 0)
  expect_lt(cvb0_worst_match(sim$topic_word, plain$topic_word), 0.2)
  # user-given schedule and minibatches win over the engine defaults
  fit2 <- fit_lda(sim$dtm, K = 4, local = "cvb0", passes = 1, tau = 10, kappa = 0.7,
                  batch_size = 50, burnin = 0, seed = 1, progress = FALSE)
  expect_equal(c(fit2$control$tau, fit2$control$kappa), c(10, 0.7))
  expect_identical(fit2$control$n_batches, 8L)
  expect_identical(fit2$control$burnin, 0L)
  fit3 <- fit_lda(sim$dtm, K = 4, local = "cvb0", passes = 1, step_scale = 10, tau = 1000,
                  kappa = 0.9, burnin = 1, seed = 1, progress = FALSE)
  expect_equal(c(fit3$control$tau, fit3$control$kappa, fit3$control$step_scale), c(1000, 0.9, 10))
  expect_identical(fit3$control$burnin, 1L)
})

test_that("one SCVB0 pass forgets the start: the topics sit on the corpus's words", {
  # The start gives every word of every topic about one pseudo-count; the
  # paper's schedule 10 (1000 + t)^-0.9 starts at rho = 0.02 and after the two
  # minibatches of this corpus still held half of each topic's mass on words
  # no document uses (0.46 on the corpus's words). The default schedule
  # replaces the start at the first step.
  sim <- simulate_lda(D = 200, V = 3000, K = 4, doc_length = 50, seed = 7)
  used <- tabulate(sim$dtm$term + 1L, nbins = ncol(sim$dtm)) > 0
  fit <- fit_lda(sim$dtm, K = 4, local = "cvb0", passes = 1, seed = 1, progress = FALSE)
  expect_identical(fit$control$n_batches, 2L)
  expect_gt(min(rowSums(fit$topic_word[, used])), 0.9)
  paper <- fit_lda(sim$dtm, K = 4, local = "cvb0", passes = 1, seed = 1, progress = FALSE,
                   step_scale = 10, tau = 1000, kappa = 0.9)
  expect_lt(max(rowSums(paper$topic_word[, used])), 0.6)
})

test_that("by default a word's topic statistics come from a document state without its own", {
  # With a burn-in pass, each word's responsibility in the topic summary is
  # computed from document statistics that already hold that word's own
  # responsibility from the burn-in (a self-count that sharpens the topics
  # lap after lap: the held-out score on sotu_chunks fell from lap 1 on).
  # By default (burnin = 0) the summary of a word is computed from the start
  # and the document's other words only: for a document of one distinct
  # word, from the start alone.
  f <- cvb0_fixture(D = 30)
  defaults <- sparsevi:::cvb0_settings(list())
  expect_identical(defaults$passes, 1L)
  x1 <- sparsevi:::dtm_subset(f$x, 1:30)
  # documents of a single distinct word (its count kept)
  first <- x1$doc_ptr[-length(x1$doc_ptr)] + 1L
  x1$term <- x1$term[first]
  x1$count <- x1$count[first] + 2
  x1$doc_ptr <- c(0L, seq_len(30L))
  seed <- c(0, 99)
  res <- sparsevi:::lda_local_cvb0(x1, lda_test_state(lambda = f$lambda, t = 0), list(alpha = 0.1),
                                   seed, 1L)
  ref <- ref_cvb0_local(x1, f$lambda, 0.1, seed, passes = 1L)
  expect_equal(cvb0_dense(res, f$V), ref$summary, tolerance = 1e-12)
  # each summary column is m p_v (theta_start + alpha), normalised: the same
  # columns with a burn-in pass differ (they include the word's own update)
  burn <- sparsevi:::lda_local_cvb0(x1, lda_test_state(lambda = f$lambda, t = 0),
                                    list(alpha = 0.1, burnin = 1L), seed, 1L)
  expect_false(isTRUE(all.equal(cvb0_dense(burn, f$V), ref$summary)))
})

test_that("SCVB0's local step gives the same bits on any number of the package's threads", {
  # the local step runs on src/pool.c's threads: documents in ranges (the
  # dense summary), one at a time (the sparse summary, the fold-in), more
  # threads than ranges or cores, and one job after another
  sim <- simulate_lda(D = 400, V = 80, K = 5, doc_length = 40, seed = 11)
  args <- list(sim$dtm, K = 5, local = "cvb0", passes = 2, batch_size = 100, seed = 3,
               progress = FALSE)
  ref <- do.call(fit_lda, c(args, threads = 1))
  ref_l <- do.call(fit_lda, c(args, threads = 1, L = 2, sparse_rest = "renormalise"))
  p1 <- predict(ref, sim$dtm[1:60, ], method = "cvb0", seed = 1, threads = 1)
  for (th in c(2L, 3L, 5L)) {
    f <- do.call(fit_lda, c(args, threads = th))
    expect_identical(f$topic_word, ref$topic_word)
    expect_identical(f$doc_topic, ref$doc_topic)
    fl <- do.call(fit_lda, c(args, threads = th, L = 2, sparse_rest = "renormalise"))
    expect_identical(fl$topic_word, ref_l$topic_word)
    expect_identical(predict(ref, sim$dtm[1:60, ], method = "cvb0", seed = 1, threads = th), p1)
  }
})

test_that("SCVB0 fits are reproducible, thread-independent and survive saveRDS", {
  sim <- simulate_lda(D = 300, V = 50, K = 3, doc_length = 50, seed = 4)
  args <- list(sim$dtm, K = 3, local = "cvb0", passes = 2, batch_size = 150,
               progress = FALSE)
  a <- do.call(fit_lda, c(args, seed = 9, threads = 1))
  b <- do.call(fit_lda, c(args, seed = 9, threads = 1))
  c2 <- do.call(fit_lda, c(args, seed = 9, threads = 2))
  d <- do.call(fit_lda, c(args, seed = 10, threads = 1))
  expect_identical(a$topic_word, b$topic_word)
  expect_identical(a$topic_word, c2$topic_word)
  expect_false(isTRUE(all.equal(a$topic_word, d$topic_word)))
  path <- tempfile(fileext = ".rds")
  saveRDS(a, path)
  r <- readRDS(path)
  unlink(path)
  expect_identical(r$topic_word, a$topic_word)
  p1 <- predict(a, sim$dtm[1:5, ], method = "cvb0", seed = 1)
  expect_identical(predict(r, sim$dtm[1:5, ], method = "cvb0", seed = 1), p1)
  expect_equal(unname(rowSums(p1)), rep(1, 5), tolerance = 1e-12)
  # continuing training works from the restored fit
  u <- update(r, sim$dtm, passes = 1, progress = FALSE)
  expect_equal(nrow(u$trace), 3L)
  expect_equal(u$state$tot, rowSums(u$lambda), tolerance = 1e-10)
})

test_that("fit_lda(local = 'cvb0') rejects bad engine controls with classed errors", {
  sim <- simulate_lda(D = 20, V = 20, K = 2, doc_length = 20, seed = 1)
  expect_error(fit_lda(sim$dtm, K = 2, local = "cvb0", burnin = 1.5, progress = FALSE),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm, K = 2, local = "cvb0", doc_tau = -1, progress = FALSE),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm, K = 2, local = "cvb0", global = "memoized",
                       progress = FALSE), class = "sparsevi_error_engine")
})

test_that("init = 'seeded' starts SCVB0 from the chosen documents without a random base", {
  sim <- simulate_lda(D = 60, V = 40, K = 3, doc_length = 30, seed = 3)
  x <- sim$dtm
  st <- sparsevi:::lda_cvb0_seeded_start(x, c(5L, 1L, 9L), list(K = 3L, eta = 0.01), ncol(x))
  expect_identical(st$t, 0L)
  dense <- as.matrix(x)
  expect_equal(sparsevi:::cvb0_state_lambda(st), 0.01 + unname(dense[c(5, 1, 9), ]),
               tolerance = 1e-15)
  f <- fit_lda(x, K = 3, local = "cvb0", init = "seeded", passes = 2, batch_size = 20,
               seed = 1, progress = FALSE)
  f2 <- fit_lda(x, K = 3, local = "cvb0", init = "seeded", passes = 2, batch_size = 20,
                seed = 1, progress = FALSE)
  g <- fit_lda(x, K = 3, local = "cvb0", passes = 2, batch_size = 20, seed = 1,
               progress = FALSE)
  expect_identical(f$topic_word, f2$topic_word)
  expect_equal(unname(rowSums(f$topic_word)), rep(1, 3), tolerance = 1e-12)
  expect_false(isTRUE(all.equal(f$topic_word, g$topic_word)))
})

test_that("the local step writes its summary into a buffer it is given, and fits are unchanged", {
  sim <- simulate_lda(D = 30, V = 50, K = 4, doc_length = 25, seed = 8)
  K <- 4
  lambda <- matrix(0.01 + seq_len(K * 50) / 100, K, 50)
  st <- lda_test_state(lambda = lambda, t = 0)
  ctl <- list(alpha = 0.1)
  seed <- c(0, 3)
  plain <- sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, seed, 1L)
  n <- K * length(plain$summary$words)
  expect_length(plain$summary$x, n)
  # a large buffer full of junk, given up to the package (as the loop's
  # buffers are: src/own.c): written in place, the first K x U values
  buf <- .Call(sparsevi:::ffi_svi_give_up, rep(NaN, n + 37))
  given <- seed
  attr(given, "summary_buffer") <- buf
  r <- sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, given, 1L)
  expect_length(r$summary$x, n + 37)
  expect_identical(r$summary$x[seq_len(n)], plain$summary$x)
  expect_identical(r$doc_topic, plain$doc_topic)
  # too small (or empty): a new one with a quarter to spare
  attr(given, "summary_buffer") <- double(3)
  r <- sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, given, 1L)
  expect_length(r$summary$x, n + n %/% 4)
  expect_identical(r$summary$x[seq_len(n)], plain$summary$x)
  # ... the package's own, so the next call may write it
  expect_true(attr(r$summary$x, "sparsevi_owned"))
  # a buffer the package does not own is never written: a new one instead
  mine <- rep(NaN, n + 37)
  attr(given, "summary_buffer") <- mine
  r <- sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, given, 1L)
  expect_true(all(is.nan(mine)))
  expect_identical(r$summary$x[seq_len(n)], plain$summary$x)
  # the store's update reads the first K x U values of a longer x
  fit <- fit_lda(sim$dtm, K = 4, passes = 3, batch_size = 7, seed = 2, progress = FALSE)
  ns <- asNamespace("sparsevi")
  eng <- ns$sparsevi_engines
  off <- eng
  off$lda$cvb0$summary_buffers <- FALSE
  utils::assignInNamespace("sparsevi_engines", off, ns = "sparsevi")
  on.exit(utils::assignInNamespace("sparsevi_engines", eng, ns = "sparsevi"))
  ref <- fit_lda(sim$dtm, K = 4, passes = 3, batch_size = 7, seed = 2, progress = FALSE)
  expect_identical(fit$lambda, ref$lambda)
  expect_identical(fit$doc_topic, ref$doc_topic)
})

test_that("a local step whose document-topic counts nobody reads returns none, and the same summary", {
  tb <- cvb0_test_batch(D = 80, V = 60, K = 4, doc_length = 30, seed = 4, n_docs = 40,
                        rng_seed = 5, tokens_mult = 2)
  x <- tb$x
  state <- tb$state
  ctl <- list(alpha = 0.1, eta = 0.01)
  seed <- c(0, 3)
  off <- structure(seed, doc_topic = FALSE)
  a <- sparsevi:::lda_local_cvb0(x, state, ctl, seed, 1L)
  b <- sparsevi:::lda_local_cvb0(x, state, ctl, off, 1L)
  expect_identical(dim(a$doc_topic), c(4L, 40L))
  expect_null(b$doc_topic)
  expect_identical(b$summary$words, a$summary$words)
  expect_identical(b$summary$x, a$summary$x)
  expect_identical(b$stats$docs, 40L)
  # with the session's scratch too small for the working memory, the same
  c2 <- .Call(sparsevi:::ffi_lda_local_cvb0, x, tb$V, state$topics$lambda, NULL,
              sparsevi:::cvb0_opts(sparsevi:::cvb0_settings(ctl), 0, TRUE, NULL, FALSE), seed, 1L,
              sparsevi:::cvb0_buffers(scratch = double(3)))
  expect_null(c2$theta)
  expect_identical(c2$x, a$summary$x)
  # the global step reads the same from either
  expect_identical(sparsevi:::lda_global_cvb0(state, b, 1L, ctl),
                   sparsevi:::lda_global_cvb0(state, a, 1L, ctl))
})

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
  dense <- lda_test_state(lambda = matrix(0.01 + rng(K * V), K, V), t = 0,
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
    old_scale <- if (is.null(lazy$topics$store)) 1 else lazy$topics$store$meta[1]
    lazy <- sparsevi:::lda_global_cvb0_lazy(lazy, res, i, control)
    if (lazy$topics$store$meta[1] == 1 || lazy$topics$store$meta[1] > old_scale) rescales <- rescales + 1
    lam <- sparsevi:::cvb0_state_lambda(lazy)
    worst <- max(worst, max(abs(lam - dense$topics$lambda) / abs(dense$topics$lambda)),
                 max(abs(lazy$tot - dense$tot) / abs(dense$tot)))
    expect_null(lazy$topics$lambda)
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
  expect_lt(a$lazy$topics$store$meta[1], 0.5)
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
  X0 <- state$topics$lambda - 0.01
  seen <- sort(unique(x$term)) + 1L
  unseen <- setdiff(seq_len(V), seen)
  expect_gt(length(unseen), 0)
  expect_identical(s1$topics$store$X[, unseen], X0[, unseen])
  expect_false(isTRUE(all.equal(s1$topics$store$X[, seen], X0[, seen])))
  # the dense view decays the unseen words all the same
  rho <- s1$rho
  expect_equal(sparsevi:::cvb0_state_lambda(s1)[, unseen],
               (1 - rho) * state$topics$lambda[, unseen] + rho * 0.01, tolerance = 1e-13)
  # the finish materialises lambda (as R's eta + scale X) and drops the store
  e <- sparsevi:::lda_cvb0_finish(s1, ctl)
  expect_null(e$topics$store)
  expect_identical(e$topics$lambda, 0.01 + s1$topics$store$meta[1] * s1$topics$store$X)
  expect_identical(e$topics$lambda, sparsevi:::cvb0_state_lambda(s1))
  expect_equal(e$tot, rowSums(e$topics$lambda), tolerance = 1e-12)
  expect_identical(e$t, s1$t)
})

test_that("the lazy SCVB0 loop is thread-independent and equals the dense loop", {
  sim <- simulate_lda(D = 300, V = 60, K = 3, doc_length = 40, seed = 6)
  x <- sim$dtm
  run <- function(global, threads) {
    rng <- uniform_source(4)
    state <- lda_test_state(lambda = matrix(0.01 + rng(4 * ncol(x)), 4, ncol(x)), t = 0,
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
  st <- lda_test_state(lambda = lambda, t = 2)
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

test_that("training on two threads sums each word's summary in document order, bit for bit", {
  sim <- simulate_lda(D = 120, V = 30, K = 3, doc_length = 40, seed = 12)
  # (its word only0's summary column is 0)
  x <- cvb0_edge_corpus(sim$dtm)
  expect_identical(nrow(x), 122L)
  K <- 13L
  lambda <- matrix(0.01 + stats::qgamma(uniform_source(2)(K * 31), 1), K, 31)
  for (ctl in list(list(alpha = 0.1), list(alpha = 0.1, burnin = 2L),
                   list(alpha = 0.5, shuffle = FALSE, cvb0_kernel = 2L),
                   list(alpha = 0.1, cvb0_kernel = 8L),
                   list(alpha = 0.1, doc_start = "random", doc_tau = 10))) {
    st <- lda_test_state(lambda = lambda, t = 3)
    r1 <- sparsevi:::lda_local_cvb0(x, st, ctl, c(1, 9), 1L)
    r2 <- sparsevi:::lda_local_cvb0(x, st, ctl, c(1, 9), 2L)
    r3 <- sparsevi:::lda_local_cvb0(x, st, ctl, c(1, 9), 3L)
    expect_identical(r2$summary, r1$summary)
    expect_identical(r3$summary, r1$summary)
    expect_identical(r2$doc_topic, r1$doc_topic)
    expect_identical(r3$doc_topic, r1$doc_topic)
    expect_identical(r2$summary$words[length(r2$summary$words)], 30L)
    expect_identical(cvb0_dense(r2, 31)[, 31], double(K))
    expect_identical(r2$doc_topic[, 3], double(K))
  }
  # the pure-R reference, on the corpus without the zero count
  ref <- ref_cvb0_local(sim$dtm, lambda[, 1:30], 0.1, c(1, 9), stream_base = 3 * 2^26,
                        passes = 1L)
  r2 <- sparsevi:::lda_local_cvb0(sim$dtm, lda_test_state(lambda = lambda[, 1:30], t = 3),
                                  list(alpha = 0.1), c(1, 9), 2L)
  expect_equal(r2$doc_topic, ref$theta, tolerance = 1e-12)
  expect_equal(cvb0_dense(r2, 30), ref$summary, tolerance = 1e-12)
})

test_that("the store's update gives the same bits on any number of threads", {
  K <- 37L
  V <- 900L
  rng <- uniform_source(21)
  X0 <- matrix(rng(K * V), K, V)
  words <- as.integer(seq(1L, V - 1L, by = 2L))[seq_len(400)]
  vals <- rng(K * 400L)
  run <- function(threads, rescale_below) {
    st <- list(X = .Call(sparsevi:::ffi_svi_give_up, X0 + 0),
               meta = .Call(sparsevi:::ffi_svi_give_up, c(0.5, 0, rowSums(X0))))
    sparsevi:::lda_store_update(st, list(words = words, x = vals), 0.3, 7, 1,
                                rescale_below, threads)
    st
  }
  for (below in c(1e-100, 0.9)) {
    a <- run(1L, below)
    b <- run(2L, below)
    expect_identical(b$X, a$X)
    expect_identical(b$meta, a$meta)
    expect_false(identical(a$X, X0))
  }
  expect_identical(a$meta[1], 1)
})

test_that("training does not modify an earlier fit in place", {
  sim <- simulate_lda(D = 200, V = 40, K = 3, doc_length = 30, seed = 12)
  a <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 1, batch_size = 50, seed = 3,
               progress = FALSE)
  snap <- serialize(a, NULL)
  expect_null(a$state$topics$store)
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
  st <- lda_test_state(lambda = lambda, t = 1)
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

test_that("every kernel width picks the same top L, ties included", {
  # cvb0_top()'s scans over K run in vectors: K = 67 (whole vectors and a
  # tail), topics of equal weight (ties go to the lower topic), L below and
  # above a quarter of K, each form of the sparse summary
  sim <- simulate_lda(D = 90, V = 40, K = 3, doc_length = 30, seed = 21)
  K <- 67L
  lam <- matrix(0.01 + stats::qgamma(uniform_source(3)(K * 40), 0.3), K, 40)
  lam[1:20, 1:10] <- 0.5
  lam[30:40, ] <- lam[31, rep(1L, 40)]
  st <- lda_test_state(lambda = lam, t = 2)
  for (L in c(3L, 20L)) {
    for (rest in c("shape", "renormalise", "sample")) {
      out <- lapply(c(2L, 4L, 8L), function(w) {
        ctl <- list(alpha = 0.1, K = K, cvb0_L = L, sparse_rest = rest, cvb0_kernel = w)
        sparsevi:::lda_local_cvb0(sim$dtm, st, ctl, c(0, 5), 1L)
      })
      for (o in out[-1]) expect_identical(o, out[[1]])
      ref <- ref_cvb0_local(sim$dtm, lam, 0.1, c(0, 5), stream_base = 2 * 2^26, passes = 1L,
                            L = L, rest = rest)
      expect_equal(cvb0_dense(out[[1]], 40L, lam), ref$summary, tolerance = 1e-12)
    }
  }
})

test_that("a minibatch far smaller than the vocabulary finds its words by sorting", {
  sim <- simulate_lda(D = 20, V = 5000, K = 3, doc_length = 6, seed = 15)
  K <- 4
  lambda <- matrix(0.01 + stats::qgamma(uniform_source(5)(K * 5000), 1), K, 5000)
  sub <- sparsevi:::dtm_subset(sim$dtm, c(3, 9))
  expect_gt(5000, 256 * length(sub$term))
  st <- lda_test_state(lambda = lambda, t = 0)
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
  expect_null(a$state$topics$store)
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
  st <- sparsevi:::lda_finish_state(lda_test_state(lambda = a$lambda, t = 1L), a$control)
  expect_identical(st$topics$lambda, a$lambda)
})

test_that("a state left behind by an interrupted lap finishes consistently", {
  sim <- simulate_lda(D = 200, V = 40, K = 3, doc_length = 30, seed = 17)
  x <- sim$dtm
  K <- 4
  st <- lda_test_state(lambda = matrix(0.01 + uniform_source(6)(K * 40), K, 40), t = 0L,
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
  expect_identical(fa$topics$lambda, fb$topics$lambda)
  expect_identical(fa$tot, fb$tot)
  expect_identical(fa$t, 3L)
  expect_equal(fb$tot, rowSums(fb$topics$lambda), tolerance = 1e-12)
  # continuing from the finished state equals continuing from the store
  c1 <- sparsevi:::lda_finish_state(step(fb, 151:200), list(local = "cvb0"))
  c2 <- sparsevi:::lda_finish_state(step(b, 151:200), list(local = "cvb0"))
  expect_equal(c1$topics$lambda, c2$topics$lambda, tolerance = 1e-12)
  expect_identical(c1$t, c2$t)
})

test_that("the session's word table finds the batch's words whatever it holds", {
  sim <- simulate_lda(D = 80, V = 300, K = 3, doc_length = 25, seed = 18)
  K <- 5
  lambda <- matrix(0.01 + uniform_source(8)(K * 300), K, 300)
  st <- lda_test_state(lambda = lambda, t = 0)
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

# A fit saved before the control `name` existed (the fit `a` without it)
# goes on, in update() and predict(), as `a` does.
expect_saved_without <- function(a, name, x) {
  old <- a
  old$control$cvb0_settings[[name]] <- NULL
  old$control[[name]] <- NULL
  expect_identical(update(old, x, passes = 1, progress = FALSE)$topic_word,
                   update(a, x, passes = 1, progress = FALSE)$topic_word)
  expect_identical(predict(old, x[1:5, ], method = "cvb0", seed = 1),
                   predict(a, x[1:5, ], method = "cvb0", seed = 1))
}

test_that("a fit saved before doc_start existed goes on with its random start", {
  sim <- simulate_lda(D = 60, V = 30, K = 3, doc_length = 20, seed = 4)
  a <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 2, doc_start = "random", doc_tau = 10,
               progress = FALSE)
  expect_saved_without(a, "doc_start", sim$dtm)
})

# ---- sparse summaries (fit_lda()'s L for SCVB0) --------------------------------

test_that("the sparse summary (top L per entry) matches the pure-R reference, on any threads", {
  sim <- simulate_lda(D = 120, V = 30, K = 3, doc_length = 40, seed = 12)
  # (its word only0's column has no topics)
  x0 <- cvb0_edge_corpus(sim$dtm)
  K <- 9L
  lambda <- matrix(0.01 + stats::qgamma(uniform_source(5)(K * 31), 1), K, 31)
  for (L in c(1L, 2L, 4L, K - 1L)) {
    for (ctl in list(list(alpha = 0.1), list(alpha = 0.1, burnin = 1L, shuffle = FALSE),
                     list(alpha = 0.3, doc_start = "random", cvb0_kernel = 2L),
                     list(alpha = 0.1, sparse_rest = "renormalise"),
                     list(alpha = 0.1, burnin = 1L, sparse_rest = "renormalise"),
                     list(alpha = 0.1, sparse_rest = "sample"),
                     list(alpha = 0.3, doc_start = "random", sparse_rest = "sample"))) {
      ctl <- c(ctl, list(K = K, cvb0_L = L))
      st <- lda_test_state(lambda = lambda, t = 3)
      r1 <- sparsevi:::lda_local_cvb0(x0, st, ctl, c(1, 9), 1L)
      r2 <- sparsevi:::lda_local_cvb0(x0, st, ctl, c(1, 9), 2L)
      r3 <- sparsevi:::lda_local_cvb0(x0, st, ctl, c(1, 9), 3L)
      S <- r1$summary
      rest <- if (is.null(ctl$sparse_rest)) "shape" else ctl$sparse_rest
      expect_named(S, c("words", "p", "k", "v", if (rest == "shape") "r"))
      expect_identical(r2$summary, S)
      expect_identical(r3$summary, S)
      expect_identical(r3$doc_topic, r1$doc_topic)
      # at most L topics per entry, increasing within a column; the word
      # only the zero count has gets none
      n_entries <- tabulate(x0$term + 1L, 31L)[S$words + 1L]
      expect_true(all(diff(S$p) <= pmin(K, L * n_entries)))
      expect_identical(S$p[length(S$p)] - S$p[length(S$p) - 1L], 0L)
      expect_true(all(vapply(seq_along(S$words), function(u) {
        !is.unsorted(S$k[S$p[u] + seq_len(S$p[u + 1L] - S$p[u])], strictly = TRUE)
      }, logical(1))))
      # every entry adds its whole count (the shape form: its values and
      # its tail weight, times a column summing to 1)
      expect_equal(sum(S$v) + sum(S$r), sum(x0$count), tolerance = 1e-12)
      if (rest == "shape") {
        # a word with K / L entries or more keeps all K topics, tail 0
        full <- L * n_entries >= K
        expect_true(all(diff(S$p)[full] == K))
        expect_true(all(S$r[full] == 0))
      }
      ref <- ref_cvb0_local(x0, lambda, ctl$alpha, c(1, 9), stream_base = 3 * 2^26,
                            passes = if (is.null(ctl$burnin)) 1L else ctl$burnin + 1L,
                            shuffle = !isFALSE(ctl$shuffle),
                            start = if (is.null(ctl$doc_start)) "topics" else ctl$doc_start,
                            L = L, rest = rest)
      expect_equal(r1$doc_topic, ref$theta, tolerance = 1e-12)
      expect_equal(cvb0_dense(r1, 31L, lambda), ref$summary, tolerance = 1e-12)
    }
  }
  # L = K is the dense summary, bit for bit
  st <- lda_test_state(lambda = lambda, t = 3)
  dense <- sparsevi:::lda_local_cvb0(x0, st, list(alpha = 0.1), c(1, 9), 2L)
  full <- sparsevi:::lda_local_cvb0(x0, st, list(alpha = 0.1, K = K, cvb0_L = K), c(1, 9), 2L)
  expect_named(full$summary, c("words", "x"))
  expect_identical(full, dense)
})

test_that("the store's sparse update equals its dense update and keeps exact totals", {
  K <- 11L
  V <- 300L
  rng <- uniform_source(31)
  X0 <- matrix(rng(K * V), K, V)
  words <- as.integer(seq(3L, V - 1L, by = 3L))
  U <- length(words)
  set.seed(4)
  n <- sample(0:4, U, replace = TRUE)
  k <- unlist(lapply(n, function(m) sort(sample(K, m)) - 1L))
  S <- list(words = words, p = c(0L, cumsum(n)), k = as.integer(k), v = rng(sum(n)))
  blocks <- sparsevi:::cvb0_summary_parts(S, K)
  expect_identical(length(blocks$x), K * U)
  expect_identical(sum(blocks$x), sum(S$v))
  run <- function(S, threads, below) {
    st <- list(X = .Call(sparsevi:::ffi_svi_give_up, X0 + 0),
               meta = .Call(sparsevi:::ffi_svi_give_up, c(0.5, 0, rowSums(X0))))
    sparsevi:::lda_store_update(st, S, 0.3, 7, 1, below, threads)
    st
  }
  for (below in c(1e-100, 0.9)) {
    a <- run(S, 1L, below)
    expect_identical(run(S, 2L, below), a)
    d <- run(blocks, 1L, below)
    expect_equal(a$X, d$X, tolerance = 1e-14)
    expect_equal(a$meta, d$meta, tolerance = 1e-14)
    # the totals stay the row sums of X
    expect_equal(a$meta[-(1:2)], rowSums(a$X), tolerance = 1e-13)
    # only the summary's entries move (a lazy step)
    if (below < 0.5) {
      moved <- a$X != X0
      expect_identical(sum(moved), length(S$k))
    }
  }
  bad <- S
  bad$k[2:1] <- bad$k[1:2]
  if (S$p[2] >= 2) expect_error(run(bad, 1L, 1e-100), "malformed")
})

test_that("fit_lda(L = ) gives SCVB0 sparse summaries, the same fit on any threads and cluster", {
  x <- cluster_corpus()
  args <- list(x, K = 6, n_batches = 4, passes = 3, seed = 5, progress = FALSE)
  dense <- do.call(fit_lda, c(args, threads = 1))
  expect_true(is.na(dense$control$cvb0_L))
  expect_identical(dense$control$cvb0_settings$top_L, 0L)
  # L = K: the dense fit, bit for bit
  full <- do.call(fit_lda, c(args, L = 6, threads = 2))
  expect_identical(full$lambda, dense$lambda)
  s1 <- do.call(fit_lda, c(args, L = 2, threads = 1))
  s2 <- do.call(fit_lda, c(args, L = 2, threads = 2))
  expect_identical(s1$control$cvb0_settings$top_L, 2L)
  expect_identical(s1$control$cvb0_settings$top_rest, 2L)
  expect_same_lda(s1, s2)
  m1 <- do.call(fit_lda, c(args, L = 2, threads = 1, sparse_rest = "sample"))
  m2 <- do.call(fit_lda, c(args, L = 2, threads = 2, sparse_rest = "sample"))
  expect_identical(m1$control$cvb0_settings$top_rest, 1L)
  expect_same_lda(m1, m2)
  expect_false(identical(m1$lambda, s1$lambda))
  r1 <- do.call(fit_lda, c(args, L = 2, threads = 1, sparse_rest = "renormalise"))
  r2 <- do.call(fit_lda, c(args, L = 2, threads = 2, sparse_rest = "renormalise"))
  expect_identical(r1$control$cvb0_settings$top_rest, 0L)
  expect_same_lda(r1, r2)
  expect_false(identical(r1$lambda, s1$lambda))
  expect_error(do.call(fit_lda, c(args, L = 2, sparse_rest = "drop")),
               class = "sparsevi_error_argument")
  expect_false(identical(s1$lambda, dense$lambda))
  # update() keeps the sparse summaries
  u <- update(s1, x, passes = 1, progress = FALSE)
  expect_identical(u$control$cvb0_settings$top_L, 2L)
  # what a cluster worker runs: the local step over its batch's topic
  # columns, its sparse summary put back in the V columns (lda_columns())
  X <- unname(s1$lambda - 0.01)
  state <- sparsevi:::lda_state_topics(list(
    store = list(X = X, meta = c(0.5, 3, rowSums(X)), eta = 0.01), t = 3L))
  batch <- sparsevi:::dtm_subset(x, 1:30)
  U <- sort(unique(batch$term)) + 1L
  cols <- sparsevi:::lda_columns(s1$control, ncol(x))
  view <- cols$view(list(state = state), U)$state
  inside <- sparsevi:::batch_in_columns(batch, sparsevi:::batch_columns(batch), U)
  here <- sparsevi:::lda_local_cvb0(batch, state, s1$control, c(0, 3), 1L)
  there <- cols$result(sparsevi:::lda_local_cvb0(inside, view, s1$control, c(0, 3), 1L), U)
  expect_named(there$summary, c("words", "p", "k", "v", "r"))
  expect_identical(there$summary, here$summary)
})

test_that("SCVB0's shape-form summaries give the same fit through a cluster, in rounds", {
  skip_if_not_installed("future")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  x <- cluster_corpus()
  args <- list(x, K = 6, L = 2, n_batches = 4, sync = 2, passes = 2, seed = 5, progress = FALSE)
  a <- do.call(fit_lda, c(args, cluster = "future"))
  b <- do.call(fit_lda, args)
  expect_identical(a$control$cvb0_settings$top_rest, 2L)
  expect_same_lda(a, b)
  expect_true(all(a$trace$bytes_received > 0))
})

test_that("SCVB0 trains on the caller's own batches (its 100-document default does not replace them)", {
  sim <- simulate_lda(D = 600, V = 30, K = 3, seed = 1)
  own <- split(1:600, rep(1:4, each = 150))
  f <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, batches = own, progress = FALSE)
  expect_identical(f$control$n_batches, 4L)
  expect_identical(f$control$batch_size, 150L)
  expect_identical(f$state$t, 4L)
  # without batches: minibatches of 100
  d <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, progress = FALSE)
  expect_identical(d$control$n_batches, 6L)
})

# ---- the background topic (fit_lda(background = ), ?scvb0) ----------------

test_that("the background topic's local step matches the pure-R reference, on any threads", {
  f <- cvb0_fixture(D = 60)
  seed <- c(0, 4)
  for (case in list(list(start = "topics", burnin = 0L, b = 0.4),
                    list(start = "random", burnin = 1L, b = 0.4),
                    list(start = "uniform", burnin = 0L, b = 2),
                    list(start = "topics", burnin = 0L, b = 0.4, L = 2L),
                    list(start = "topics", burnin = 1L, b = 0.4, L = 2L,
                         rest = "renormalise"))) {
    rest <- if (is.null(case$rest)) "shape" else case$rest
    ctl <- list(alpha = 0.1, background = case$b, doc_start = case$start,
                burnin = case$burnin, K = f$K, cvb0_L = case$L, sparse_rest = rest)
    st <- lda_test_state(lambda = f$lambda, t = 2)
    r1 <- sparsevi:::lda_local_cvb0(f$x, st, ctl, seed, 1L)
    r2 <- sparsevi:::lda_local_cvb0(f$x, st, ctl, seed, 2L)
    expect_identical(r2$summary, r1$summary)
    expect_identical(r2$doc_topic, r1$doc_topic)
    ref <- ref_cvb0_local(f$x, f$lambda, 0.1, seed, stream_base = 2 * 2^26,
                          passes = case$burnin + 1L, start = case$start, L = case$L,
                          rest = rest, background = case$b)
    expect_equal(r1$doc_topic, ref$theta, tolerance = 1e-12)
    expect_equal(cvb0_dense(r1, f$V, f$lambda), ref$summary, tolerance = 1e-12)
    # the background draws topic 1 up: more of every document's counts
    plain <- ref_cvb0_local(f$x, f$lambda, 0.1, seed, stream_base = 2 * 2^26,
                            passes = case$burnin + 1L, start = case$start, L = case$L,
                            rest = rest)
    expect_gt(sum(ref$theta[1, ]), sum(plain$theta[1, ]))
  }
  # background 0 is the paper's model, bit for bit the option left out
  st <- lda_test_state(lambda = f$lambda, t = 2)
  expect_identical(sparsevi:::lda_local_cvb0(f$x, st, list(alpha = 0.1, background = 0), seed, 2L),
                   sparsevi:::lda_local_cvb0(f$x, st, list(alpha = 0.1), seed, 2L))
})

test_that("by default topic 1 holds the words common to every document", {
  x <- background_corpus()
  fit <- fit_lda(x, K = 5, passes = 10, seed = 1, progress = FALSE)
  expect_identical(fit$control$background, sparsevi:::cvb0_background(5))
  expect_identical(sparsevi:::cvb0_background(100), 0.5)
  expect_identical(sparsevi:::cvb0_background(200), 0.5)
  # above K = 200 it fades, to none from K = 500 on (no step at K = 200)
  expect_equal(sparsevi:::cvb0_background(300), 1 / 3)
  expect_lt(sparsevi:::cvb0_background(201), 0.5)
  expect_gt(sparsevi:::cvb0_background(201), 0.498)
  expect_gt(sparsevi:::cvb0_background(499), 0)
  expect_identical(sparsevi:::cvb0_background(500), 0)
  expect_identical(sparsevi:::cvb0_background(1000), 0)
  plain <- fit_lda(x, K = 5, passes = 10, seed = 1, progress = FALSE, background = 0)
  common_in <- function(f) colSums(matrix(grepl("^common", terms(f, 6)), 6))
  with_bg <- common_in(fit)
  without <- common_in(plain)
  # the common words lead topic 1 and leave the others; without a background
  # topic they sit among the top words of every topic
  expect_gte(with_bg[1], 3)
  expect_lte(sum(with_bg[-1]), 4)
  expect_gte(min(without), 2)
  expect_gte(sum(without[-1]), 10)
  # the same fit on any threads
  expect_identical(fit_lda(x, K = 5, passes = 10, seed = 1, progress = FALSE,
                           threads = 2)$topic_word, fit$topic_word)
  # print() names it; without topic 1 there is no background topic
  expect_output(print(fit), "background topic")
  expect_output(print(fit), "1 \\(.*, background\\)")
  out <- capture.output(print(plain))
  expect_false(any(grepl("background", out)))
  pruned <- prune_topics(fit, 1)
  expect_identical(pruned$control$background, 0)
  expect_identical(pruned$control$cvb0_settings$background, 0)
  expect_false(any(grepl("background", capture.output(print(pruned)))))
})

test_that("a fit saved before background existed has no background topic; other engines' fits keep theirs", {
  sim <- simulate_lda(D = 60, V = 30, K = 3, doc_length = 20, seed = 4)
  a <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 2, background = 0, progress = FALSE)
  expect_saved_without(a, "background", sim$dtm)
  # predict(method = "cvb0") of a vb fit takes the vb fit's background
  for (b in c(0, 0.5)) {
    vb <- fit_lda(sim$dtm, K = 3, local = "vb", passes = 2, seed = 2, progress = FALSE,
                  background = b)
    expect_identical(vb$control$background, b)
    p <- predict(vb, sim$dtm[1:5, ], method = "cvb0", seed = 1)
    expect_identical(p, predict(vb, sim$dtm[1:5, ], method = "cvb0", seed = 1, background = b))
    if (b > 0) {
      expect_false(identical(p, predict(vb, sim$dtm[1:5, ], method = "cvb0", seed = 1,
                                        background = 0)))
    }
  }
})

test_that("a bad background is a classed error naming it", {
  sim <- simulate_lda(D = 20, V = 10, K = 2, seed = 1)
  for (bad in list(-1, NA_real_, "a", c(0.1, 0.2), 101)) {
    expect_error(fit_lda(sim$dtm, K = 2, passes = 1, background = bad, progress = FALSE),
                 "background", class = "sparsevi_error_argument")
  }
})
