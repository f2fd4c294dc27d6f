test_that("document completion matches the pure-R reference", {
  sim <- simulate_lda(D = 60, V = 30, K = 4, doc_length = 50, seed = 5)
  sp <- split_heldout(sim$dtm, n_test = 15, seed = 5)
  fit <- fit_lda(sp$train, K = 4, passes = 3, seed = 1, progress = FALSE)
  got <- heldout_loglik(fit, sp$test)
  want <- ref_completion(unname(fit$topic_word), fit$alpha, sp$test$observed, sp$test$heldout)
  expect_equal(as.numeric(got), want, tolerance = 1e-10)
  expect_equal(attr(got, "tokens"), sum(sp$test$heldout$count))
  # the true topics score at least as well as a flat model
  flat <- matrix(1 / 30, 4, 30, dimnames = list(NULL, sim$dtm$vocab))
  s_flat <- sparsevi:::completion_score(flat, 0.5, sp$test)
  expect_equal(s_flat, log(1 / 30), tolerance = 1e-12)
  expect_gt(as.numeric(got), s_flat)
})

test_that("a dense fit is scored from lambda's columns, block by block, as from topic_word", {
  sim <- simulate_lda(D = 90, V = 40, K = 4, doc_length = 50, seed = 8)
  sp <- split_heldout(sim$dtm, n_test = 30, seed = 3)
  for (local in c("cvb0", "vb")) {
    fit <- fit_lda(sp$train, K = 4, local = local, passes = 2, seed = 1, progress = FALSE,
                   heldout = sp$test)
    # the matrix path on the whole topic_word, the reference
    want <- sparsevi:::completion_score(fit$topic_word, fit$alpha, sp$test, details = TRUE)
    topics <- sparsevi:::lda_eval_topics(fit)
    expect_s3_class(topics, "sparsevi_lambda_topics")
    expect_identical(heldout_loglik(fit, sp$test), want)
    # the lap's score in the trace is the same
    expect_identical(fit$trace$heldout[2], as.numeric(want))
    # in blocks of a few documents each: the same per-document scores
    swap_binding("lda_dense_topics_max", 4 * 25)
    expect_gt(length(sparsevi:::sparse_doc_blocks(list(sp$test$observed, sp$test$heldout), 4)), 3)
    expect_identical(heldout_loglik(fit, sp$test), want)
    # logLik() of a fit without an objective (SCVB0) scores its held-out
    # documents the same way
    if (local == "cvb0") {
      expect_identical(attr(logLik(fit), "per_token"), as.numeric(want))
    }
  }
})

test_that("heldout_loglik accepts a plain corpus, splits it, and checks the vocabulary", {
  sim <- simulate_lda(D = 60, V = 30, K = 3, doc_length = 50, seed = 6)
  fit <- fit_lda(sim$dtm[1:50, ], K = 3, passes = 2, seed = 1, progress = FALSE)
  a <- heldout_loglik(fit, sim$dtm[51:60, ], seed = 2)
  b <- heldout_loglik(fit, sim$dtm[51:60, ], seed = 2)
  expect_identical(a, b)
  expect_true(is.finite(a))
  tok <- heldout_loglik(fit, sim$dtm[51:60, ], by = "tokens", observed_frac = 0.7, seed = 2)
  expect_true(is.finite(tok))
  other <- matrix(1, 3, 2, dimnames = list(NULL, c("foo", "bar")))
  expect_error(heldout_loglik(fit, other), class = "sparsevi_error_vocab")
  expect_error(heldout_loglik(fit, sim$dtm[51:60, ], method = "nope"),
               class = "sparsevi_error_argument")
  expect_error(heldout_loglik(fit, sim$dtm[51:60, ], observed_frac = 1),
               class = "sparsevi_error_argument")
  # threads do not change the score
  sp <- split_heldout(sim$dtm, n_test = 10, seed = 1)
  expect_identical(heldout_loglik(fit, sp$test, threads = 1),
                   heldout_loglik(fit, sp$test, threads = 2))
})

test_that("coherence dispatches by measure and says when one is missing", {
  sim <- simulate_lda(D = 30, V = 20, K = 3, seed = 1)
  fit <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, progress = FALSE)
  expect_error(coherence(fit, sim$dtm, measure = "bogus"), class = "sparsevi_error_argument")
  if (is.null(sparsevi:::coherence_measures()$npmi)) {
    expect_error(coherence(fit, sim$dtm, measure = "npmi"), class = "sparsevi_error_engine")
  }
})

test_that("every coherence measure returns the same type", {
  sim <- simulate_lda(D = 40, V = 20, K = 3, seed = 2)
  fit <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE)
  u <- coherence(fit, sim$dtm, measure = "umass", n = 4)
  p <- coherence(fit, sim$dtm, measure = "npmi", n = 4)
  for (coh in list(u, p)) {
    expect_s3_class(coh, "sparsevi_coherence")
    expect_type(coh, "double")
    expect_length(coh, 3L)
    expect_equal(dim(attr(coh, "top_words")), c(4L, 3L))
    expect_equal(attr(coh, "mean"), mean(as.numeric(coh)))
    expect_identical(attr(coh, "n"), 4L)
    # the top words scored are the fit's top words
    expect_equal(unname(attr(coh, "top_words")), unname(terms(fit, 4)))
    # subsetting gives plain numbers
    expect_identical(coh[2:3], as.numeric(coh)[2:3])
  }
  expect_identical(attr(u, "measure"), "umass")
  expect_identical(attr(p, "measure"), "npmi")
  expect_true(all(p >= -1 & p <= 1))
  expect_output(print(u), "UMASS coherence of the top 4 words of 3 topics")
  # the exported function and the generic agree
  expect_equal(coherence_umass(fit$topic_word, sim$dtm, n = 4), u)
  # a fit scores its top words as terms() gives them, a matrix each row's
  # (one pass in C): the same words and scores either way
  expect_identical(coherence(fit$topic_word, sim$dtm, measure = "npmi", n = 4), p)
  expect_identical(coherence(fit$topic_word, sim$dtm, measure = "umass", n = 4), u)
})

test_that("a matrix's top words for coherence follow order(), ties by word order", {
  u <- sparsevi:::uniform_source(7)
  tw <- matrix(round(u(4 * 30) * 3) / 3, 4, 30) # many ties
  ref <- matrix(apply(tw, 1L, function(r) order(r, decreasing = TRUE)[1:6]), 6)
  expect_identical(sparsevi:::coherence_top(tw, 6), ref)
  counts <- matrix(as.integer(round(u(4 * 30) * 5)), 4, 30) # counts given as integers
  expect_identical(sparsevi:::coherence_top(counts, 6),
                   matrix(apply(counts, 1L, function(r) order(r, decreasing = TRUE)[1:6]), 6))
  bad <- `colnames<-`(matrix(c(0.5, NA, 0.5, 1), 2), c("a", "b"))
  expect_error(coherence(bad, as_dtm(list(c("a", "b")))), class = "sparsevi_error_argument")
})

test_that("topic_diversity() counts distinct top words over n K (issue 35)", {
  tw <- rbind(c(0.4, 0.3, 0.2, 0.1, 0), c(0.35, 0.3, 0.05, 0.1, 0.2), c(0, 0.1, 0.2, 0.3, 0.4))
  # top 2: {1, 2}, {1, 2}, {5, 4} -> 4 distinct of 6
  expect_equal(sparsevi:::topic_diversity(tw, 2), 4 / 6)
  # top 1: 1, 1, 5
  expect_equal(sparsevi:::topic_diversity(tw, 1), 2 / 3)
  expect_equal(sparsevi:::topic_diversity(tw[c(1, 1), ], 3), 0.5)
  # n beyond V: every word of the vocabulary
  expect_equal(sparsevi:::topic_diversity(tw, 25), 5 / 15)
})
