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
  # SCVB0 has no objective: logLik() scores documents given to it
  ll <- logLik(fit, sim$dtm, seed = 1)
  expect_s3_class(ll, "logLik")
  expect_equal(attr(ll, "per_token"), as.numeric(heldout_loglik(fit, sim$dtm, seed = 1)))
  f <- tempfile(fileext = ".pdf")
  grDevices::pdf(f)
  expect_invisible(plot(fit))
  grDevices::dev.off()
  expect_message(fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, progress = TRUE), "lap 1/1")
})

test_that("an error in a later lap returns the last completed fit with a warning", {
  sim <- sim_small()
  one <- fit_lda(sim$dtm, local = "vb", K = 3, n_batches = 2, passes = 1, seed = 1,
                 progress = FALSE)
  # vb's memoized training runs the lazy step (its store is updated in place)
  restore <- fail_memoized_from(4)
  on.exit(restore())
  # fails in lap 2 after one of its batches changed the store
  expect_warning(fit <- fit_lda(sim$dtm, local = "vb", K = 3, n_batches = 2, passes = 4, seed = 1,
                                progress = FALSE),
                 class = "sparsevi_warning_interrupted")
  expect_equal(nrow(fit$trace), 1L)
  # the model of lap 1, untouched by the failed lap
  expect_identical(fit$lambda, one$lambda)
  expect_identical(fit$state$topics$S, one$state$topics$S)
  restore()
  restore <- fail_memoized_from(1)
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
  # no objective and no held-out documents: a classed error saying what to call
  expect_error(logLik(f), "logLik\\(fit, newdata\\)", class = "sparsevi_error_loglik")
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
  # L for cvb0: given below K, sparse minibatch summaries (other topics
  # than the dense fit's) and doc_topic keeps L topics a document; L = K is
  # the dense summary, as without L
  a <- fit_lda(x, K = 3, L = 1, passes = 2, seed = 1, progress = FALSE)
  b <- fit_lda(x, K = 3, L = 3, passes = 2, seed = 1, progress = FALSE)
  d <- fit_lda(x, K = 3, passes = 2, seed = 1, progress = FALSE)
  expect_identical(b$topic_word, d$topic_word)
  expect_false(isTRUE(all.equal(a$topic_word, b$topic_word)))
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
