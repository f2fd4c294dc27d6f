# The sparse kind of a fit's topics (issue 33): a gibbs fit that keeps its
# sparse store instead of a dense K x V lambda, read by the methods without
# the dense table; the default engine at large K x V.

sparse_pair <- function(K = 4, passes = 3, heldout = NULL, seed = 5, ...) {
  sim <- simulate_lda(D = 120, V = 60, K = 4, seed = 11)
  sp <- split_heldout(sim$dtm, n_test = 20, seed = 2)
  fit <- function() {
    fit_lda(sp$train, K = K, local = "gibbs", passes = passes, seed = seed,
            progress = FALSE, heldout = heldout, ...)
  }
  dense <- fit()
  # the sparse kind above 0 entries: every fit
  swap_binding("gibbs_sparse_topics_above", 0)
  list(sim = sim, sp = sp, dense = dense, sparse = fit())
}

test_that("a sparse fit holds the store, no lambda, and builds the same lambda when read", {
  p <- sparse_pair()
  fs <- p$sparse
  expect_identical(fs$topics_kind, "sparse")
  expect_identical(p$dense$topics_kind, "dense")
  expect_null(.subset2(fs, "lambda"))
  expect_null(.subset2(fs, "topic_word"))
  expect_false(is.null(fs$state$topics$sparse))
  # read: the dense table, bit for bit the dense fit's
  expect_identical(fs$lambda, p$dense$lambda)
  expect_identical(fs$topic_word, p$dense$topic_word)
  expect_identical(fs[["lambda"]], p$dense$lambda)
  expect_identical(coef(fs), coef(p$dense))
  # the same training: trace (held-out aside) and training proportions
  expect_identical(fs$doc_topic, p$dense$doc_topic)
  expect_identical(fs$state$topics$sparse, p$dense$state$topics$sparse)
})

test_that("the methods of a sparse fit read the store and agree with the dense fit", {
  p <- sparse_pair()
  fd <- p$dense
  fs <- p$sparse
  test <- p$sp$test
  # no dense table is built: reading lambda or topic_word through `$` fails
  swap_binding("lda_fit_lambda", function(fit) {
    if (!is.null(lda_sparse_store(fit))) stop("dense table built")
    .subset2(fit, "lambda")
  })
  expect_equal(heldout_loglik(fs, test), heldout_loglik(fd, test), tolerance = 1e-12)
  expect_equal(attr(heldout_loglik(fs, test), "per_doc"),
               attr(heldout_loglik(fd, test), "per_doc"), tolerance = 1e-12)
  expect_equal(heldout_loglik(fs, test, by = "tokens", seed = 3),
               heldout_loglik(fd, test, by = "tokens", seed = 3), tolerance = 1e-12)
  expect_equal(heldout_loglik(fs, test, method = "left_to_right", seed = 1),
               heldout_loglik(fd, test, method = "left_to_right", seed = 1), tolerance = 1e-12)
  expect_identical(terms(fs, 7), terms(fd, 7))
  expect_equal(predict(fs, test$observed), predict(fd, test$observed), tolerance = 1e-12)
  expect_identical(predict(fs, test$observed, method = "gibbs", seed = 2),
                   predict(fd, test$observed, method = "gibbs", seed = 2))
  expect_equal(coherence(fs, p$sim$dtm), coherence(fd, p$sim$dtm), tolerance = 1e-12)
  expect_equal(coherence(fs, p$sim$dtm, measure = "umass", n = 5),
               coherence(fd, p$sim$dtm, measure = "umass", n = 5), tolerance = 1e-12)
  expect_equal(as.data.frame(fs, n = 6), as.data.frame(fd, n = 6), tolerance = 1e-12)
  expect_equal(summary(fs)$topic_share, summary(fd)$topic_share, tolerance = 1e-12)
  expect_identical(summary(fs)$top_terms, summary(fd)$top_terms)
  expect_output(print(fs), "topics held sparsely")
  aug <- sparsevi:::augment.sparsevi_lda
  expect_identical(aug(fs, p$sim$dtm[1:5, ]), aug(fd, p$sim$dtm[1:5, ]))
})

test_that("a sparse fit's top words break ties by word order, as the dense ranking", {
  # many topics for few documents: topics with fewer stored entries than n
  p <- sparse_pair(K = 30, passes = 1, init = "sparse", batch_size = 10)
  expect_true(any(tabulate(p$sparse$state$topics$sparse$k + 1L, nbins = 30) < 10))
  expect_identical(terms(p$sparse, 10), terms(p$dense, 10))
  expect_identical(terms(p$sparse, 60), terms(p$dense, 60))
  expect_identical(sparsevi:::lda_top_words(p$sparse, 10), sparsevi:::lda_top_words(p$dense, 10))
})

test_that("held-out scoring of a sparse fit works in blocks of documents", {
  p <- sparse_pair()
  # blocks of a few documents each: the same per-document scores
  swap_binding("lda_dense_topics_max", 4 * 30)
  blocks <- sparsevi:::sparse_doc_blocks(list(p$sp$test$observed, p$sp$test$heldout), 4)
  expect_gt(length(blocks), 3)
  expect_equal(heldout_loglik(p$sparse, p$sp$test), heldout_loglik(p$dense, p$sp$test),
               tolerance = 1e-12)
  expect_equal(heldout_loglik(p$sparse, p$sp$test, method = "left_to_right", seed = 4),
               heldout_loglik(p$dense, p$sp$test, method = "left_to_right", seed = 4),
               tolerance = 1e-12)
})

test_that("a sparse fit scores its held-out documents each lap like the dense fit", {
  sim <- simulate_lda(D = 120, V = 60, K = 4, seed = 11)
  sp <- split_heldout(sim$dtm, n_test = 20, seed = 2)
  p <- sparse_pair(heldout = sp$test)
  expect_equal(p$sparse$trace$heldout, p$dense$trace$heldout, tolerance = 1e-12)
  expect_false(anyNA(p$sparse$trace$heldout))
})

test_that("a sparse fit survives saveRDS()/readRDS() and update()", {
  p <- sparse_pair()
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f))
  saveRDS(p$sparse, f)
  back <- readRDS(f)
  expect_identical(back$topics_kind, "sparse")
  expect_identical(back$lambda, p$dense$lambda)
  expect_identical(heldout_loglik(back, p$sp$test), heldout_loglik(p$sparse, p$sp$test))
  ud <- update(p$dense, p$sp$train, passes = 2)
  us <- update(back, p$sp$train, passes = 2)
  expect_identical(us$topics_kind, "sparse")
  expect_null(.subset2(us, "lambda"))
  expect_identical(us$lambda, ud$lambda)
  expect_identical(us$doc_topic, ud$doc_topic)
  expect_identical(nrow(us$trace), 5L)
})

test_that("a gibbs fit keeps the sparse kind above 2^25 K x V entries", {
  small <- list(p = integer(61), tot = double(4))
  expect_false(sparsevi:::gibbs_sparse_kind(list(), small))
  big <- list(p = integer(2^16 + 1), tot = double(1000))
  expect_true(sparsevi:::gibbs_sparse_kind(list(), big))
})

test_that("the default engine is gibbs, sparse, above 2^28 K x V entries, and print says why", {
  expect_identical(sparsevi:::lda_default_engine(1000, 129289)$local, "cvb0")
  expect_null(sparsevi:::lda_default_engine(2000, 129289)$reason)
  pick <- sparsevi:::lda_default_engine(10000, 129289)
  expect_identical(pick$local, "gibbs")
  expect_match(pick$reason, "2\\^28")
  sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
  swap_binding("lda_default_large", list(local = "gibbs", above = 100, eta = 0.01))
  fit <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, progress = FALSE)
  expect_identical(fit$local, "gibbs")
  expect_identical(fit$eta, 0.01)
  expect_identical(fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, eta = 0.3,
                           progress = FALSE)$eta, 0.3)
  expect_match(fit$control$engine_reason, "chosen by default")
  expect_output(print(fit), "chosen by default")
  # fewer documents than topics: the sparse start, not a dense random one
  few <- fit_lda(sim$dtm[1:10, ], K = 12, passes = 1, seed = 1, progress = FALSE)
  expect_identical(few$control$init, "sparse")
  expect_identical(few$topics_kind, "dense")
  # a given engine is kept, without a reason
  fit2 <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 1, seed = 1, progress = FALSE)
  expect_identical(fit2$local, "cvb0")
  expect_null(fit2$control$engine_reason)
})

test_that("gibbs keeps its documents' topic counts sparse, with batches of the usual size at any K", {
  sim <- simulate_lda(D = 1200, V = 40, K = 3, doc_length = 8, seed = 1)
  K <- 40
  fg <- fit_lda(sim$dtm, K = K, local = "gibbs", passes = 1, seed = 1, progress = FALSE)
  fv <- fit_lda(sim$dtm, K = K, local = "vb", global = "stochastic", passes = 1, seed = 1,
                progress = FALSE)
  expect_identical(fg$control$batch_size, fv$control$batch_size)
  # a local step's counts: one entry per topic a document drew, never K
  ns <- asNamespace("sparsevi")
  res <- ns$lda_local_gibbs(ns$dtm_subset(sim$dtm, 1:50), fg$state, fg$control, c(0, 1), 1L)
  expect_s4_class(res$doc_topic, "dgCMatrix")
  expect_identical(dim(res$doc_topic), c(as.integer(K), 50L))
  expect_true(all(diff(res$doc_topic@p) <= 8 * fg$control$samples))
  expect_equal(unname(Matrix::colSums(res$doc_topic)), ns$doc_lengths(ns$dtm_subset(sim$dtm, 1:50)))
})

test_that("print() shows the largest topics even when every topic is under dead_topics()'s share", {
  sim <- simulate_lda(D = 200, V = 60, K = 4, seed = 11)
  fit <- fit_lda(sim$dtm, K = 12, local = "gibbs", passes = 1, seed = 1, progress = FALSE)
  swap_binding("dead_topics", function(fit, ...) {
    structure(seq_len(fit$K), reason = rep("dead", fit$K), class = "sparsevi_dead_topics")
  })
  out <- capture.output(print(fit))
  i <- grep("largest topics", out)
  expect_match(out[i + 1L], "%\\): w")
})

test_that("a sparse fit's coherence on a corpus on disk is its coherence in memory", {
  p <- sparse_pair()
  src <- uci_source_of(p$sp$train, 30)
  expect_identical(coherence(p$sparse, src), coherence(p$sparse, p$sp$train))
  expect_equal(coherence(p$sparse, src, "umass"), coherence(p$sparse, p$sp$train, "umass"),
               tolerance = 1e-13)
})
