# What a topic model keeps besides its topics (R/lda-kept.R): the training
# documents' sparse proportions, the held-out documents, strict update().

methods_corpus <- function() simulate_lda(D = 80, V = 60, K = 4, seed = 11)

test_that("the fit keeps its training documents' top-L proportions, and predict() returns them", {
  sim <- methods_corpus()
  # (no background topic: simulated documents have none, ?scvb0)
  fit <- fit_lda(sim$dtm, K = 4, L = 2, passes = 3, seed = 1, progress = FALSE, background = 0)
  dt <- fit$doc_topic
  expect_s4_class(dt, "dgCMatrix")
  expect_identical(dim(dt), c(80L, 4L))
  expect_identical(rownames(dt), sim$dtm$doc_names)
  # at most L topics per document, renormalised
  expect_true(all(diff(dt@p) >= 0))
  per_doc <- tabulate(methods::as(dt, "TsparseMatrix")@i + 1L, nbins = 80)
  expect_true(all(per_doc == 2L))
  expect_equal(unname(Matrix::rowSums(dt)), rep(1, 80), tolerance = 1e-12)
  # they come from the last lap's local step (issue 20), not from inference
  # with the final topics: close to predict()'s proportions but not equal
  full <- predict(fit, sim$dtm, seed = 1)
  expect_gte(mean(max.col(as.matrix(dt), "first") == max.col(full, "first")), 0.9)
  top2 <- t(apply(full, 1, function(p) { q <- p; q[rank(-p, ties.method = "first") > 2] <- 0; q / sum(q) }))
  expect_lt(mean(abs(as.matrix(dt) - top2)), 0.05)
  expect_identical(predict(fit), as.matrix(dt))
  expect_identical(predict(fit, sparse = TRUE), dt)
  # threads do not change them; doc_topics = 0 keeps none
  fit2 <- fit_lda(sim$dtm, K = 4, L = 2, passes = 3, seed = 1, threads = 2, progress = FALSE,
                  background = 0)
  expect_identical(fit2$doc_topic, dt)
  none <- fit_lda(sim$dtm, K = 4, L = 2, passes = 1, seed = 1, doc_topics = 0, progress = FALSE)
  expect_null(none$doc_topic)
  expect_error(predict(none), class = "sparsevi_error_argument")
  expect_error(fit_lda(sim$dtm, K = 4, doc_topics = 9), class = "sparsevi_error_argument")
  # other engines keep them too, and update() refreshes them
  for (loc in c("cvb0", "gibbs", "ope")) {
    f <- fit_lda(sim$dtm, K = 4, local = loc, passes = 2, seed = 1, doc_topics = 3,
                 progress = FALSE)
    expect_identical(dim(f$doc_topic), c(80L, 4L))
    expect_equal(unname(Matrix::rowSums(f$doc_topic)), rep(1, 80), tolerance = 1e-12)
  }
  up <- update(fit, sim$dtm, passes = 1, progress = FALSE)
  expect_false(identical(up$doc_topic, dt))
  expect_identical(dim(up$doc_topic), c(80L, 4L))
  # a saved fit keeps them
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  expect_identical(predict(readRDS(path)), predict(fit))
})

test_that("kept proportions in C equal their R forms", {
  skip_if_not_installed("Matrix")
  set.seed(7)
  W <- matrix(rgamma(6 * 9, 0.3), 6, 9)
  W[2, 3] <- W[5, 3] # a tie: broken by the lower topic, as ffi_svi_select_top
  W[, 4] <- 0 # a document whose topics all tie
  for (alpha in c(0, 0.1)) for (L in c(1L, 3L, 6L)) {
    expect_identical(.Call(sparsevi:::ffi_lda_top_share, W, L, alpha),
                     sparsevi:::lda_top_share_r(W, L, alpha))
  }
  # many topics, few kept (the one-scan path: L <= 16, K >= 4 L) and more
  # kept (the selection): ties at and above the L-th value, rounded weights,
  # a column that rises along the topics
  Wb <- matrix(round(rgamma(300 * 12, 0.3), 1), 300, 12)
  Wb[c(5, 90, 200, 299), 1] <- max(Wb[, 1]) + 1
  Wb[, 2] <- seq_len(300)
  Wb[, 3] <- 0
  for (L in c(1L, 2L, 8L, 16L, 17L, 75L, 76L, 300L)) {
    expect_identical(.Call(sparsevi:::ffi_lda_top_share, Wb, L, 0.05),
                     sparsevi:::lda_top_share_r(Wb, L, 0.05))
  }
  # a sparse matrix of counts (the gibbs engine's) gives the same, bit for
  # bit, without its dense form: ties among its empty topics, a column with
  # fewer entries than L, an empty column, an entry in the last topic
  S <- matrix(0, 8, 7)
  S[c(2, 5), 1] <- c(3, 1)
  S[, 2] <- c(0, 2, 0, 2, 0, 0.5, 0, 4)
  S[8, 4] <- 1.5
  S[, 5] <- 1
  S[c(1, 3), 6] <- c(2, 2)
  S[7, 7] <- 10
  Sc <- methods::as(S, "CsparseMatrix")
  for (alpha in c(0, 0.1, 2)) for (L in c(1L, 3L, 8L)) {
    expect_identical(sparsevi:::lda_top_share(Sc, L, alpha),
                     sparsevi:::lda_top_share_r(S, L, alpha))
    expect_identical(sparsevi:::lda_top_share(Sc, L, alpha),
                     .Call(sparsevi:::ffi_lda_top_share, S, L, alpha))
  }
  Wc <- methods::as(W, "CsparseMatrix")
  expect_identical(sparsevi:::lda_top_share(Wc, 3L, 0.1), sparsevi:::lda_top_share_r(W, 3L, 0.1))
  # batches of documents in any order, one empty; names kept
  rows <- list(c(5L, 2L, 9L), integer(0), c(1L, 3L, 4L, 6L, 7L, 8L))
  parts <- lapply(rows, function(r) .Call(sparsevi:::ffi_lda_top_share, W[, r, drop = FALSE], 3L, 0.1))
  docs <- paste0("d", 1:9)
  got <- sparsevi:::lda_kept_dgc(parts, rows, 9L, 6L, 3L, docs)
  expect_identical(got, sparsevi:::lda_kept_csc_r(parts, rows, 9L, 6L, 3L, docs))
  expect_true(methods::validObject(got))
  expect_identical(sparsevi:::lda_kept_dgc(parts, rows, 9L, 6L, 3L),
                   sparsevi:::lda_kept_csc_r(parts, rows, 9L, 6L, 3L))
  # every document once, or an error
  expect_error(sparsevi:::lda_kept_dgc(parts, list(c(5L, 2L, 9L), integer(0), c(1L, 3L, 4L, 6L, 7L, 7L)),
                                       9L, 6L, 3L), "once")
  # a hostile size asks for nothing before it is checked against the input
  expect_error(.Call(sparsevi:::ffi_lda_kept_csc, parts, rows, 2e9, 6L, 1L), "malformed")
  expect_error(.Call(sparsevi:::ffi_lda_kept_csc, parts, rows, 2e8, 6L, 3L), "once")
  expect_error(.Call(sparsevi:::ffi_lda_kept_csc, parts, rows, 9L, .Machine$integer.max, 3L),
               "46340")
  expect_error(.Call(sparsevi:::ffi_lda_summary_blocks, c(0L, 1L), 0L, 1, .Machine$integer.max),
               "46340")
})

test_that("update() remembers the held-out documents and rejects unknown arguments", {
  sim <- methods_corpus()
  sp <- split_heldout(sim$dtm, seed = 2)
  fit <- fit_lda(sp$train, K = 4, passes = 2, seed = 1, heldout = sp$test, progress = FALSE)
  expect_s3_class(fit$heldout, "sparsevi_heldout")
  up <- update(fit, sp$train, passes = 2, progress = FALSE)
  expect_true(all(!is.na(up$trace$heldout)))
  off <- update(fit, sp$train, passes = 1, heldout = NULL, progress = FALSE)
  expect_true(is.na(off$trace$heldout[3]))
  expect_null(off$heldout)
  expect_error(update(fit, sp$train, pases = 2), class = "sparsevi_error_argument")
  expect_error(update(fit, sp$train, alpha = 0.5), "alpha", class = "sparsevi_error_argument")
  expect_error(update(fit, sp$train, 3, TRUE, NULL, NULL, 7), class = "sparsevi_error_argument")
  expect_error(update(fit), class = "sparsevi_error_argument")
  # mixtures too
  simm <- simulate_mixture(N = 200, D = 2, K = 2, seed = 3)
  mix <- fit_mixture(simm$X[1:150, ], K = 2, passes = 2, seed = 1, heldout = simm$X[151:200, ],
                     progress = FALSE)
  mup <- update(mix, simm$X[1:150, ], passes = 2, progress = FALSE)
  expect_true(all(!is.na(mup$trace$heldout)))
  moff <- update(mix, simm$X[1:150, ], passes = 2, heldout = NULL, progress = FALSE)
  expect_true(all(is.na(utils::tail(moff$trace$heldout, 2))))
  expect_error(update(mix, simm$X, K = 3), "K", class = "sparsevi_error_argument")
  expect_error(update(mix), class = "sparsevi_error_argument")
})

test_that("a fit builds topic_word from lambda when it is read, at every size", {
  sim <- methods_corpus()
  small <- fit_lda(sim$dtm, K = 4, passes = 2, seed = 1, progress = FALSE)
  # one K x V table on the fit: lambda; topic_word its rows normalised, named
  expect_null(.subset2(small, "topic_word"))
  lam <- small$lambda
  expect_identical(small$topic_word,
                   `dimnames<-`(lam / rowSums(lam), list(NULL, small$vocab)))
  both <- unclass(small)
  both$topic_word <- small$topic_word
  expect_lt(length(serialize(small, NULL)), length(serialize(both, NULL)))
  # the same for a large memoized fit, which keeps its sums S alone
  old <- sparsevi:::lda_dense_topics_max
  utils::assignInNamespace("lda_dense_topics_max", 10, ns = "sparsevi")
  on.exit(utils::assignInNamespace("lda_dense_topics_max", old, ns = "sparsevi"))
  big <- fit_lda(sim$dtm, K = 4, passes = 2, seed = 1, progress = FALSE)
  expect_null(.subset2(big, "topic_word"))
  expect_identical(big$topic_word, small$topic_word)
  expect_identical(big[["topic_word"]], small$topic_word)
  expect_identical(terms(big, 5), terms(small, 5))
  expect_identical(predict(big, sim$dtm[1:5, ], seed = 1), predict(small, sim$dtm[1:5, ], seed = 1))
  path <- tempfile(fileext = ".rds")
  saveRDS(big, path)
  expect_identical(readRDS(path)$topic_word, small$topic_word)
  # partial matching of other fields as for any list
  expect_identical(big$voc, big$vocab)
  up <- update(big, sim$dtm, passes = 1, progress = FALSE)
  expect_null(.subset2(up, "topic_word"))
})

test_that("top words by partial sort equal a full order()", {
  sim <- methods_corpus()
  fit <- fit_lda(sim$dtm, K = 4, passes = 2, seed = 1, progress = FALSE)
  for (n in c(1, 5, 60)) {
    full <- apply(fit$topic_word, 1, function(p) order(-p)[seq_len(n)])
    expect_identical(sparsevi:::lda_top_words(fit, n), matrix(full, nrow = n))
  }
  # ties keep word order, as order() does
  tie <- list(topic_word = rbind(c(0.2, 0.3, 0.2, 0.3), c(0.25, 0.25, 0.25, 0.25)))
  expect_identical(sparsevi:::lda_top_words(tie, 3), cbind(c(2L, 4L, 1L), 1:3))
})

test_that("predict(type = \"full\") gives the full posterior or says how to get it", {
  sim <- methods_corpus()
  fit <- fit_lda(sim$dtm, local = "vb", K = 4, L = 2, passes = 3, seed = 1, progress = FALSE)
  # the stored proportions are truncated: type = "full" refuses them
  expect_error(predict(fit, type = "full"), "doc_topics = K",
               class = "sparsevi_error_argument")
  # with the training documents as newdata, every topic
  full <- predict(fit, sim$dtm, type = "full")
  expect_true(all(full > 0))
  expect_equal(predict(fit, sim$dtm), full)
  # a fit keeping every topic returns the full posterior itself
  fitK <- fit_lda(sim$dtm, local = "vb", K = 4, L = 2, passes = 3, seed = 1, doc_topics = 4,
                  progress = FALSE)
  pk <- predict(fitK, type = "full")
  expect_true(all(pk > 0))
  expect_equal(unname(rowSums(pk)), rep(1, 80), tolerance = 1e-12)
  # from the last lap's local step: near a fresh inference with the final topics
  expect_lt(mean(abs(unname(pk) - unname(predict(fitK, sim$dtm)))), 0.02)
  expect_identical(sparsevi:::lda_doc_topics_kept(fit), 2L)
  expect_identical(sparsevi:::lda_doc_topics_kept(fitK), 4L)
})

test_that("topicmodels' verbs: posterior, topics, perplexity (the code behind them)", {
  sim <- methods_corpus()
  fit <- fit_lda(sim$dtm, K = 4, L = 2, passes = 3, seed = 1, progress = FALSE)
  # posterior(): terms are the topics, topics the kept proportions (with a note)
  expect_message(p <- sparsevi:::tm_posterior(fit), "2 largest of 4")
  expect_equal(unname(p$terms), unname(fit$topic_word))
  expect_equal(unname(p$topics), unname(predict(fit)))
  pn <- sparsevi:::tm_posterior(fit, sim$dtm[1:5, ])
  expect_equal(unname(pn$topics), unname(predict(fit, sim$dtm[1:5, ])))
  # topics(): most likely topics, exact from the kept ones up to k = doc_topics
  full <- predict(fit)
  t1 <- sparsevi:::tm_topics(fit)
  expect_identical(unname(t1), max.col(full, ties.method = "first"))
  expect_identical(names(t1), sim$dtm$doc_names)
  t2 <- sparsevi:::tm_topics(fit, 2)
  expect_identical(dim(t2), c(2L, 80L))
  expect_identical(unname(t2[2, ]), unname(apply(full, 1, function(q) order(-q)[2])))
  expect_error(sparsevi:::tm_topics(fit, 3), "keeps only the 2", class = "sparsevi_error_argument")
  expect_identical(dim(sparsevi:::tm_topics(fit, 3, newdata = sim$dtm[1:4, ])), c(3L, 4L))
  # perplexity(): exp(-log-likelihood per token) under the inferred proportions
  m <- as.matrix(sim$dtm[1:10, ])
  th <- predict(fit, sim$dtm[1:10, ])
  ll <- sum(m * log(th %*% fit$topic_word))
  expect_equal(sparsevi:::tm_perplexity(fit, sim$dtm[1:10, ]), exp(-ll / sum(m)))
  expect_error(sparsevi:::tm_perplexity(fit), "newdata", class = "sparsevi_error_argument")
  # a better model has a lower perplexity than a uniform one
  expect_lt(sparsevi:::tm_perplexity(fit, sim$dtm), ncol(m))
})

test_that("with topicmodels loaded, its verbs work on our fits", {
  skip_if_not_installed("topicmodels")
  loadNamespace("topicmodels") # the hook set in .onLoad registers the methods
  expect_true(isTRUE(sparsevi:::topicmodels_env$done))
  sim <- methods_corpus()
  fit <- fit_lda(sim$dtm, K = 4, L = 2, passes = 3, seed = 1, progress = FALSE,
                 doc_topics = 4)
  p <- topicmodels::posterior(fit)
  expect_named(p, c("terms", "topics"))
  expect_equal(unname(p$topics), unname(predict(fit)))
  expect_identical(unname(topicmodels::topics(fit)), max.col(predict(fit), "first"))
  expect_identical(dim(topicmodels::topics(fit, 2)), c(2L, 80L))
  expect_equal(topicmodels::perplexity(fit, sim$dtm[1:10, ]),
               sparsevi:::tm_perplexity(fit, sim$dtm[1:10, ]))
  expect_equal(topicmodels::perplexity(fit, as.matrix(sim$dtm[1:10, ])),
               sparsevi:::tm_perplexity(fit, sim$dtm[1:10, ]))
  expect_identical(topicmodels::terms(fit, 3), terms(fit, 3))
  expect_s3_class(stats::logLik(fit), "logLik")
})

test_that("logLik() scores newdata, the fit's held-out documents, or says what to call", {
  sim <- sim_small()
  sp <- split_heldout(sim$dtm, test_frac = 0.2, seed = 1)
  fit <- fit_lda(sp$train, K = 3, passes = 3, seed = 1, progress = FALSE)
  # newdata is scored, not ignored
  ll <- logLik(fit, sp$test)
  score <- heldout_loglik(fit, sp$test)
  expect_s3_class(ll, "logLik")
  expect_identical(attr(ll, "type"), "heldout")
  expect_equal(as.numeric(ll), as.numeric(score) * attr(score, "tokens"))
  expect_equal(attr(ll, "per_token"), as.numeric(score))
  expect_identical(attr(ll, "nobs"), attr(score, "tokens"))
  other <- logLik(fit, sp$test$observed, seed = 2)
  expect_false(isTRUE(all.equal(as.numeric(other), as.numeric(ll))))
  # the default SCVB0 fit without heldout: a classed error naming what to call
  expect_error(logLik(fit), "heldout_loglik", class = "sparsevi_error_loglik")
  # with heldout: the held-out score of those documents
  fh <- fit_lda(sp$train, K = 3, passes = 3, seed = 1, heldout = sp$test, progress = FALSE)
  lh <- logLik(fh)
  expect_equal(attr(lh, "per_token"), fh$trace$heldout[3])
  expect_equal(as.numeric(lh), as.numeric(logLik(fh, sp$test)))
  # memoized vb: the ELBO, as before
  vb <- fit_lda(sp$train, K = 3, local = "vb", passes = 3, seed = 1, progress = FALSE)
  expect_identical(attr(logLik(vb), "type"), "objective")
  expect_equal(as.numeric(logLik(vb)), utils::tail(vb$trace$objective, 1))
})

test_that("plot() of a fit without objective or held-out score draws seconds per lap", {
  sim <- sim_small()
  fit <- fit_lda(sim$dtm, K = 3, passes = 4, seed = 1, progress = FALSE)
  rec <- new.env()
  trace(graphics::plot.default, bquote(assign("drawn", list(y = y, main = main), envir = .(rec))),
        print = FALSE, where = asNamespace("graphics"))
  on.exit(untrace(graphics::plot.default, where = asNamespace("graphics")))
  grDevices::pdf(NULL)
  plot(fit)
  grDevices::dev.off()
  expect_identical(rec$drawn$main, "Training time per lap")
  expect_equal(rec$drawn$y, diff(c(0, fit$trace$seconds)))
})

test_that("nobs, fitted, coef and residuals on an LDA fit work or say what to call (issue 36, item 8)", {
  sim <- simulate_lda(D = 40, V = 20, K = 3, doc_length = 20, seed = 1)
  fit <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE)
  expect_identical(nobs(fit), fit$n_tokens)

  expect_identical(fitted(fit), predict(fit))
  expect_identical(dim(fitted(fit)), c(40L, 3L))
  expect_identical(coef(fit), fit$topic_word)
  expect_equal(unname(rowSums(coef(fit))), rep(1, 3))
  expect_error(residuals(fit), "heldout_loglik\\(fit, test\\)", class = "sparsevi_error_method")
  none <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, doc_topics = 0, progress = FALSE)
  expect_error(fitted(none), "predict\\(fit, newdata = ", class = "sparsevi_error_method")
})

test_that("predict() infers in blocks of documents, the same proportions (issue 36, item 9)", {
  sim <- simulate_lda(D = 300, V = 60, K = 4, doc_length = 40, seed = 3)
  fit <- fit_lda(sim$dtm, K = 4, passes = 2, seed = 1, progress = FALSE)
  ns <- asNamespace("sparsevi")
  # vb inference, and SCVB0's fold-in (the default for this fit), whose
  # documents keep their random streams from block to block
  for (m in c("vb", "cvb0")) {
    one <- predict(fit, sim$dtm, method = m)
    old <- get("predict_block_work", ns)
    utils::assignInNamespace("predict_block_work", 4 * 40, ns = "sparsevi")
    # the blocks are answered one by one (Ctrl-C lands between them)
    expect_gt(length(sparsevi:::predict_blocks(sim$dtm, 4)), 10)
    name <- paste0("lda_infer_", m)
    orig <- get(name, ns)
    calls <- 0
    utils::assignInNamespace(name, function(...) {
      calls <<- calls + 1
      orig(...)
    }, ns = "sparsevi")
    blocked <- predict(fit, sim$dtm, method = m)
    utils::assignInNamespace(name, orig, ns = "sparsevi")
    utils::assignInNamespace("predict_block_work", old, ns = "sparsevi")
    expect_gt(calls, 10)
    expect_identical(blocked, one)
    expect_identical(predict(fit, sim$dtm, method = m, threads = 2), one)
  }
})

test_that("predict() of an SCVB0 fit uses its fold-in by default, seeded from the fit", {
  sim <- simulate_lda(D = 200, V = 50, K = 4, doc_length = 40, seed = 4)
  fit <- fit_lda(sim$dtm, K = 4, passes = 3, seed = 1, progress = FALSE)
  expect_identical(fit$local, "cvb0")
  p <- predict(fit, sim$dtm[1:20, ])
  # the same fit predicts the same proportions every time, whatever R's
  # generator holds; the default is method "cvb0" with the fit's seed
  set.seed(99)
  expect_identical(predict(fit, sim$dtm[1:20, ]), p)
  expect_identical(predict(fit, sim$dtm[1:20, ], method = "cvb0"), p)
  expect_false(identical(predict(fit, sim$dtm[1:20, ], method = "vb"), p))
  expect_false(identical(predict(fit, sim$dtm[1:20, ], seed = 7), p))
  expect_equal(rowSums(p), rep(1, 20), ignore_attr = TRUE)
  # vb and Online-OPE fits with a dense lambda use the fold-in too; gibbs
  # fits and ML-OPE (no lambda) keep vb inference
  vb <- fit_lda(sim$dtm, K = 4, local = "vb", passes = 3, seed = 1, progress = FALSE)
  expect_identical(predict(vb, sim$dtm[1:20, ]), predict(vb, sim$dtm[1:20, ], method = "cvb0"))
  ope <- fit_lda(sim$dtm, K = 4, local = "ope", passes = 3, seed = 1, progress = FALSE)
  expect_identical(predict(ope, sim$dtm[1:20, ]), predict(ope, sim$dtm[1:20, ], method = "cvb0"))
  ml <- fit_lda(sim$dtm, K = 4, local = "ope", global = "ml", passes = 3, seed = 1,
                progress = FALSE)
  expect_identical(predict(ml, sim$dtm[1:20, ]), predict(ml, sim$dtm[1:20, ], method = "vb"))
  gb <- fit_lda(sim$dtm, K = 4, local = "gibbs", passes = 3, seed = 1, progress = FALSE)
  expect_identical(predict(gb, sim$dtm[1:20, ]), predict(gb, sim$dtm[1:20, ], method = "vb"))
  # the fold-in reads lambda over its row sums: the topic_word the fit shows
  # gives the same proportions to rounding
  tw_fit <- fit
  tw_fit$lambda <- NULL
  class(tw_fit) <- "list"
  tw_fit$topic_word <- fit$topic_word
  tw_fit$alpha <- fit$alpha
  from_tw <- sparsevi:::lda_infer_cvb0(tw_fit, sparsevi::as_dtm(sim$dtm[1:20, ]), NULL,
                                       sparsevi:::lda_predict_seed(fit), 1L)
  expect_equal(unname(from_tw), unname(p), tolerance = 1e-10)
})

# The pure-R references of terms(type = "frex" / "lift") (stm's calcfrex()
# without word counts, and calclift()): ranks as empirical CDFs, ties at
# their mean rank, counted word by word.
ref_ecdf_rank <- function(v) {
  vapply(v, function(a) (sum(v < a) + (sum(v == a) + 1) / 2) / length(v), 0)
}
ref_frex <- function(tw, w) {
  excl <- sweep(tw, 2L, colSums(tw), "/")
  t(vapply(seq_len(nrow(tw)), function(k) {
    1 / (w / ref_ecdf_rank(tw[k, ]) + (1 - w) / ref_ecdf_rank(excl[k, ]))
  }, numeric(ncol(tw))))
}
ref_top <- function(score, vocab, n) {
  apply(score, 1L, function(s) vocab[order(-s)[seq_len(n)]])
}

test_that("each topic's top words (one pass in C) match a pure-R reference, ties by word order", {
  # the reference: each row sorted, larger first, lower column among equals
  ref_top_rows <- function(m, n) {
    matrix(apply(m, 1L, function(p) order(-p, seq_along(p))[seq_len(n)]), nrow = n)
  }
  u <- sparsevi:::uniform_source(21)
  for (case in list(c(1, 1), c(3, 1), c(1, 9), c(4, 30), c(7, 25))) {
    K <- case[1]
    V <- case[2]
    m <- matrix(round(u(K * V) * 4) / 4, K, V) # values in 0, 0.25, ..., 1: many ties
    for (n in unique(c(1, min(3, V), V))) {
      expect_identical(.Call(sparsevi:::ffi_svi_top_rows, m, n, NULL, NULL),
                       ref_top_rows(m, n))
      # each entry over its column's number (terms(type = "lift")), and first
      # over its row's (lambda over its row sums)
      d <- c(1, 3, 0.5, 2)[(seq_len(V) - 1L) %% 4L + 1L]
      r <- c(2, 0.25, 1, 5, 3, 0.5, 7)[seq_len(K)]
      expect_identical(.Call(sparsevi:::ffi_svi_top_rows, m, n, d, NULL),
                       ref_top_rows(sweep(m, 2L, d, "/"), n))
      expect_identical(.Call(sparsevi:::ffi_svi_top_rows, m, n, d, r),
                       ref_top_rows(sweep(m / r, 2L, d, "/"), n))
    }
  }
  sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 2)
  fit <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE, background = 0)
  expect_identical(terms(fit, 7), matrix(fit$vocab[ref_top_rows(fit$topic_word, 7)], 7,
                                         dimnames = list(NULL, paste0("topic", 1:3))))
})

test_that("terms(type = \"frex\") and (type = \"lift\") match a pure-R reference (issue 35)", {
  sim <- methods_corpus()
  fit <- fit_lda(sim$dtm, K = 4, passes = 3, seed = 1, progress = FALSE)
  tw <- unname(fit$topic_word)
  for (w in c(0.5, 0.2, 0.9)) {
    ref <- ref_top(ref_frex(tw, w), fit$vocab, 6)
    expect_identical(unname(terms(fit, 6, type = "frex", frexw = w)), ref)
  }
  expect_identical(colnames(terms(fit, 6, type = "frex")), paste0("topic", 1:4))
  # frequency alone is the "prob" order
  expect_identical(terms(fit, 6, type = "frex", frexw = 1), terms(fit, 6))
  # lift against the training corpus's word shares
  cnt <- tabulate(rep(sim$dtm$term + 1L, sim$dtm$count), nbins = 60)
  p <- pmax(cnt, min(cnt[cnt > 0])) / sum(cnt)
  expect_identical(unname(terms(fit, 5, type = "lift", corpus = sim$dtm)),
                   ref_top(sweep(tw, 2L, p, "/"), fit$vocab, 5))
  # without a corpus: the model's own word shares (topic sizes x topics)
  size <- rowSums(fit$lambda) - 60 * fit$eta
  pm <- colSums(tw * size) / sum(size)
  expect_identical(unname(terms(fit, 5, type = "lift")),
                   ref_top(sweep(tw, 2L, pm, "/"), fit$vocab, 5))
  expect_error(terms(fit, 5, type = "nope"), class = "sparsevi_error_argument")
  expect_error(terms(fit, 5, type = "frex", frexw = 2), class = "sparsevi_error_argument")
})

test_that("terms(type = \"frex\") on a tiny hand-made model, ties included", {
  tw <- rbind(c(0.5, 0.3, 0.1, 0.1), c(0.1, 0.1, 0.4, 0.4))
  fit <- structure(list(topic_word = `colnames<-`(tw, c("a", "b", "c", "d")), K = 2L,
                        vocab = c("a", "b", "c", "d")), class = c("sparsevi_lda", "sparsevi_fit"))
  # topic 1: frequency ranks a 1, b 0.75, c/d 0.375; exclusivity (0.5/0.6,
  # 0.3/0.4, 0.1/0.5, 0.1/0.5) ranks a 1, b 0.75, c/d 0.375
  expect_identical(unname(terms(fit, 4, type = "frex")[, 1]), c("a", "b", "c", "d"))
  expect_identical(unname(terms(fit, 2, type = "frex")),
                   ref_top(ref_frex(tw, 0.5), fit$vocab, 2))
})

test_that("FREX in C matches its R form: ties, empty words, blocks of topics, threads", {
  # ffi_lda_terms_frex() (src/lda-terms.c, a radix sort of each topic's
  # values) against frex_row() with top_by_score() (R's rank() and order()),
  # and, where every word has some weight, against ref_frex() above
  frex_r <- function(tw, n, w) {
    sparsevi:::top_by_score(tw, n, function(tw, k, cs) sparsevi:::frex_row(tw[k, ], cs, w))
  }
  u <- sparsevi:::uniform_source(35)
  for (case in list(c(1, 1), c(1, 6), c(3, 40), c(9, 25), c(17, 300))) {
    K <- case[1]
    V <- case[2]
    tied <- matrix(round(u(K * V) * 4) / 4, K, V) # 0, 0.25, ..., 1: many ties
    tied[, seq_len(V) %% 5L == 2L] <- 0 # words no topic holds (exclusivity 0)
    spread <- matrix(u(K * V) * 10^(-u(K * V) * 30), K, V) # many exponents
    for (tw in list(tied, spread)) {
      cs <- colSums(tw)
      for (w in c(0.5, 0, 1, 0.3)) {
        for (n in unique(c(1L, min(4L, V), V))) {
          ref <- frex_r(tw, n, w)
          got <- .Call(sparsevi:::ffi_lda_terms_frex, tw, NULL, n, w, 1L)
          expect_identical(got, ref)
          expect_identical(.Call(sparsevi:::ffi_lda_terms_frex, tw, NULL, n, w, 2L), got)
          if (all(cs > 0)) {
            expect_identical(got, matrix(apply(ref_frex(tw, w), 1L,
                                               function(s) order(-s)[seq_len(n)]), nrow = n))
          }
        }
      }
    }
  }
  # -0 ranks with 0, as in R
  tw <- rbind(c(0, 0.5, -0, 0.5), c(0.2, 0.1, 0.3, 0.4))
  expect_identical(.Call(sparsevi:::ffi_lda_terms_frex, tw, NULL, 4L, 0.5, 1L),
                   frex_r(tw, 4L, 0.5))
  # from lambda over its row sums: the words of topic_word, without it
  lam <- matrix(0.01 + round(u(9 * 300) * 4), 9, 300)
  tw <- lam / rowSums(lam)
  for (w in c(0.5, 0.2)) {
    expect_identical(.Call(sparsevi:::ffi_lda_terms_frex, lam, rowSums(lam), 12L, w, 2L),
                     frex_r(tw, 12L, w))
  }
})

test_that("summary() reports diversity, and NPMI coherence when given the corpus (issue 35)", {
  sim <- methods_corpus()
  fit <- fit_lda(sim$dtm, K = 4, passes = 3, seed = 1, progress = FALSE)
  s <- summary(fit)
  top <- apply(fit$topic_word, 1L, function(p) order(p, decreasing = TRUE)[1:25])
  expect_equal(s$diversity, length(unique(as.vector(top))) / (25 * 4))
  expect_true(is.na(s$npmi))
  expect_null(s$coherence)
  expect_output(print(s), "diversity .*summary\\(fit, x = corpus\\)")
  sx <- summary(fit, x = sim$dtm)
  coh <- coherence(fit, sim$dtm, measure = "npmi", n = 10)
  expect_equal(sx$npmi, mean(coh))
  expect_identical(sx$coherence, coh)
  out <- capture.output(print(sx))
  expect_true(any(grepl(sprintf("NPMI coherence %s", format(mean(coh), digits = 3)), out,
                        fixed = TRUE)))
  # each topic's line shows its NPMI before its words
  k <- which.max(s$topic_share)
  expect_true(any(grepl(sprintf("%6.3f  %s", coh[k], paste(terms(fit, 10)[, k], collapse = " ")),
                        out, fixed = TRUE)))
  # the held-out score is still there
  expect_output(print(sx), "held-out")
})

test_that("predict(method = \"gibbs\") reads a lambda that dips below the fit's eta", {
  # (Online-OPE's lambda does, in places: predict() stopped with an error
  # about the gibbs engine's start) the sampler reads it with the largest
  # eta that keeps its counts non-negative, which leaves the topics as they are
  sim <- simulate_lda(D = 100, V = 40, K = 3, doc_length = 30, seed = 2)
  fit <- fit_lda(sim$dtm, K = 3, local = "vb", passes = 2, seed = 1, progress = FALSE)
  low <- fit
  lam <- fit$lambda
  lam[1, 1] <- fit$eta / 4
  low$lambda <- lam
  p <- predict(low, sim$dtm[1:10, ], method = "gibbs", seed = 3)
  expect_equal(rowSums(p), rep(1, 10), ignore_attr = TRUE)
  # the same as the fit whose eta is that smallest entry
  same <- low
  same$eta <- fit$eta / 4
  expect_identical(predict(same, sim$dtm[1:10, ], method = "gibbs", seed = 3), p)
  bad <- fit
  lam[1, 1] <- 0
  bad$lambda <- lam
  expect_error(predict(bad, sim$dtm[1:10, ], method = "gibbs"), class = "sparsevi_error_argument")
})

test_that("a fit holds its topics once: saved, read back and trained on as before", {
  sim <- simulate_lda(D = 80, V = 300, K = 4, seed = 5)
  for (local in c("cvb0", "vb", "ope", "gibbs")) {
    fit <- fit_lda(sim$dtm, K = 4, local = local, passes = 2, seed = 1, progress = FALSE)
    # the state's topics refer to no second table: a saved fit writes one
    tp <- unclass(fit)$state$topics
    expect_null(tp$lambda, label = local)
    expect_false(any(vapply(tp, function(e) identical(e, fit$lambda), TRUE)), label = local)
    back <- unserialize(serialize(fit, NULL))
    expect_identical(back$lambda, fit$lambda)
    # training goes on from the fit's lambda, the same whether saved or not
    u1 <- update(fit, sim$dtm, passes = 1, progress = FALSE)
    u2 <- update(back, sim$dtm, passes = 1, progress = FALSE)
    expect_identical(u1$lambda, u2$lambda, label = local)
    expect_identical(u1$topic_word, u2$topic_word, label = local)
    expect_equal(nrow(u1$trace), 3L)
  }
  # a pruned fit holds its topics once too, and trains on
  fit <- fit_lda(sim$dtm, K = 4, passes = 2, seed = 1, progress = FALSE)
  p <- prune_topics(fit, 2)
  expect_null(unclass(p)$state$topics$lambda)
  expect_null(.subset2(p, "topic_word")) # made from lambda when read
  expect_equal(p$topic_word, fit$topic_word[-2, ] / rowSums(fit$topic_word[-2, ]),
               tolerance = 1e-14)
  # a point-estimate learner's pruned topics are its table, renormalised
  ml <- fit_lda(sim$dtm, K = 4, local = "ope", global = "ml", passes = 2, seed = 1,
                progress = FALSE)
  pm <- prune_topics(ml, 2)
  expect_identical(.subset2(pm, "topic_word"),
                   ml$topic_word[-2, ] / rowSums(ml$topic_word[-2, ]))
  expect_identical(dim(update(p, sim$dtm, passes = 1, progress = FALSE)$lambda), c(3L, 300L))
})

test_that("terms() reads lambda over its row sums, or a stored topic_word, with the same words", {
  sim <- methods_corpus()
  frex_r <- function(tw, n, w = 0.5) {
    sparsevi:::top_by_score(tw, n, function(tw, k, cs) sparsevi:::frex_row(tw[k, ], cs, w))
  }
  lift_r <- function(fit, tw, n) {
    p <- sparsevi:::lda_word_shares(fit, tw)
    sparsevi:::top_by_score(tw, n, function(tw, k, cs) tw[k, ] / p)
  }
  dense <- fit_lda(sim$dtm, K = 4, passes = 2, seed = 1, progress = FALSE)
  ml <- fit_lda(sim$dtm, K = 4, local = "ope", global = "ml", passes = 2, seed = 1,
                progress = FALSE)
  expect_null(.subset2(dense, "topic_word"))
  expect_false(is.null(.subset2(ml, "topic_word")))
  for (fit in list(dense, ml)) {
    tw <- unname(fit$topic_word)
    expect_identical(unname(terms(fit, 8, type = "frex")), matrix(fit$vocab[frex_r(tw, 8)], 8))
    expect_identical(unname(terms(fit, 8, type = "lift")),
                     matrix(fit$vocab[lift_r(fit, tw, 8)], 8))
  }
})
