sim_fit <- function() {
  sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 2)
  list(sim = sim, fit = fit_lda(sim$dtm, K = 3, passes = 3, seed = 1, progress = FALSE))
}

test_that("topic-word table is long, complete and sorted", {
  s <- sim_fit()
  fit <- s$fit
  td <- as.data.frame(fit)
  expect_named(td, c("topic", "term", "beta"))
  expect_equal(nrow(td), fit$K * length(fit$vocab))
  expect_equal(as.vector(tapply(td$beta, td$topic, sum)), rep(1, 3), tolerance = 1e-10)
  k2 <- td[td$topic == 2, ]
  expect_false(is.unsorted(rev(k2$beta)))
  expect_equal(k2$beta, unname(fit$topic_word[2, k2$term]))
  top <- as.data.frame(fit, n = 4)
  expect_equal(nrow(top), 12)
  expect_equal(top$term[top$topic == 1], unname(terms(fit, 4)[, 1]))
})

test_that("document-topic table matches predict()", {
  s <- sim_fit()
  td <- as.data.frame(s$fit, type = "doc_topic", newdata = s$sim$dtm[1:5, ], seed = 1)
  theta <- predict(s$fit, s$sim$dtm[1:5, ], seed = 1)
  expect_named(td, c("document", "topic", "gamma"))
  expect_equal(nrow(td), 15)
  expect_equal(td$gamma[td$document == rownames(theta)[2]], unname(theta[2, ]))
  expect_equal(as.vector(tapply(td$gamma, td$document, sum)), rep(1, 5), tolerance = 1e-8)
  expect_error(as.data.frame(s$fit, type = "doc_topic"), class = "sparsevi_error_argument")
  expect_error(as.data.frame(s$fit, type = "nope"), class = "sparsevi_error_argument")
  expect_error(as.data.frame(s$fit, n = 0), class = "sparsevi_error_argument")
})

test_that("mixture tables give weights and means", {
  fit <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
  w <- as.data.frame(fit)
  expect_named(w, c("component", "weight", "size"))
  expect_equal(w$weight, unname(fit$weights))
  m <- as.data.frame(fit, type = "means")
  expect_equal(nrow(m), 4)
  expect_equal(m$mean[m$component == 2], unname(fit$means[2, ]))
  expect_equal(m$variable[1:2], c("eruptions", "waiting"))
  expect_error(as.data.frame(fit, type = "x"), class = "sparsevi_error_argument")
})

test_that("lda_to_ldavis returns consistent LDAvis inputs", {
  s <- sim_fit()
  vis <- suppressMessages(lda_to_ldavis(s$fit, s$sim$dtm))
  expect_named(vis, c("phi", "theta", "doc.length", "vocab", "term.frequency"))
  tf <- unname(Matrix::colSums(as_dgCMatrix(s$sim$dtm)))
  expect_equal(dim(vis$phi), c(3L, sum(tf > 0)))
  expect_equal(dim(vis$theta), c(40L, 3L))
  expect_equal(rowSums(vis$phi), rep(1, 3), tolerance = 1e-10)
  expect_equal(rowSums(vis$theta), rep(1, 40), tolerance = 1e-8)
  expect_equal(vis$doc.length, unname(Matrix::rowSums(as_dgCMatrix(s$sim$dtm))))
  expect_equal(vis$term.frequency, tf[tf > 0])
  expect_identical(vis$vocab, s$fit$vocab[tf > 0])
  expect_equal(sum(vis$doc.length), sum(vis$term.frequency))
  expect_error(lda_to_ldavis(list(), s$sim$dtm), class = "sparsevi_error_argument")
  expect_message(two <- lda_to_ldavis(s$fit, s$sim$dtm[1:2, ]), "do not occur in `x`")
  expect_true(all(two$term.frequency > 0))
  expect_equal(dim(two$theta), c(2L, 3L))
})

test_that("a mixture without means refuses type = \"means\"", {
  sim <- simulate_lda(D = 40, V = 30, K = 2, seed = 3)
  fit <- fit_mixture(sim$dtm, K = 2, likelihood = "multinomial", seed = 1,
                     progress = FALSE)
  expect_equal(nrow(as.data.frame(fit)), 2)
  expect_error(as.data.frame(fit, type = "means"), class = "sparsevi_error_argument")
})

test_that("tables survive saveRDS/readRDS and work on every LDA engine", {
  sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 2)
  fit <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 2, seed = 1, progress = FALSE)
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  expect_identical(as.data.frame(back, n = 3), as.data.frame(fit, n = 3))
  expect_equal(nrow(as.data.frame(back, type = "doc_topic", newdata = sim$dtm)), 120)
})

test_that("tidy(), augment() and glance() work through the generics package", {
  skip_if_not_installed("generics")
  sim <- simulate_lda(D = 50, V = 30, K = 3, seed = 5)
  fit <- fit_lda(sim$dtm, K = 3, L = 2, passes = 2, seed = 1, progress = FALSE)
  beta <- generics::tidy(fit)
  expect_identical(names(beta), c("topic", "term", "beta"))
  expect_identical(nrow(beta), 3L * 30L)
  expect_equal(as.vector(tapply(beta$beta, beta$topic, sum)), rep(1, 3), tolerance = 1e-12)
  expect_equal(beta$beta[beta$topic == 2 & beta$term == fit$vocab[7]],
               unname(fit$topic_word[2, 7]))
  expect_equal(generics::tidy(fit, log = TRUE)$beta, log(beta$beta))
  gamma <- generics::tidy(fit, matrix = "gamma")
  expect_identical(names(gamma), c("document", "topic", "gamma"))
  expect_identical(nrow(gamma), 2L * 50L)
  expect_equal(gamma$gamma[gamma$document == sim$dtm$doc_names[4] & gamma$topic == 1],
               fit$doc_topic[4, 1][fit$doc_topic[4, 1] > 0])
  aug <- generics::augment(fit, sim$dtm)
  expect_identical(names(aug), c("document", "term", "count", ".topic"))
  expect_identical(nrow(aug), length(sim$dtm$term))
  # .topic is the argmax of theta_dk beta_kw
  i <- 17
  d <- match(aug$document[i], sim$dtm$doc_names)
  w <- match(aug$term[i], fit$vocab)
  expect_identical(aug$.topic[i],
                   unname(which.max(as.matrix(fit$doc_topic)[d, ] * fit$topic_word[, w])))
  # a long data frame keeps its rows and columns
  long <- data.frame(document = aug$document, term = aug$term, count = aug$count, extra = 1)
  aug2 <- generics::augment(fit, long)
  expect_identical(names(aug2), c("document", "term", "count", "extra", ".topic"))
  expect_identical(aug2$.topic, aug$.topic)
  gl <- generics::glance(fit)
  expect_identical(nrow(gl), 1L)
  expect_identical(gl$laps, 2L)
  mix <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
  tm <- generics::tidy(mix)
  expect_identical(names(tm), c("component", "weight", "size", "mean_eruptions", "mean_waiting"))
  am <- generics::augment(mix, faithful)
  expect_identical(am$.cluster, as.integer(predict(mix, faithful)))
  expect_true(all(am$.probability >= 0.5 & am$.probability <= 1))
  expect_identical(generics::glance(mix)$K, 2L)
  expect_error(generics::augment(fit), class = "sparsevi_error_argument")
})

test_that("lda_to_ldavis() takes split_heldout()'s output and drops absent terms", {
  sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
  sp <- split_heldout(sim$dtm, seed = 1)
  fit <- fit_lda(sp$train, K = 3, passes = 2, seed = 1, progress = FALSE)
  expect_message(vis <- lda_to_ldavis(fit, sp), "left out")
  expect_true(all(vis$term.frequency > 0))
  expect_identical(ncol(vis$phi), length(vis$vocab))
  expect_equal(rowSums(vis$phi), rep(1, 3), tolerance = 1e-12)
  expect_identical(nrow(vis$theta), nrow(sp$train))
  expect_identical(vis$theta, unname(predict(fit)))
  expect_identical(suppressMessages(lda_to_ldavis(fit, sp$train)), vis)
  skip_if_not_installed("LDAvis")
  json <- do.call(LDAvis::createJSON, vis)
  expect_true(is.character(json))
})

test_that("an unnamed training corpus given again reads the kept proportions (doc_key)", {
  sim <- simulate_lda(D = 80, V = 40, K = 3, seed = 1)
  m <- as(as.matrix(sim$dtm), "dgCMatrix")
  rownames(m) <- NULL
  fit <- fit_lda(m, K = 3, passes = 3, seed = 1, progress = FALSE)
  expect_null(rownames(fit$doc_topic))
  expect_match(fit$doc_key, "^[0-9a-f]{16}$")
  kept <- unname(as.matrix(fit$doc_topic))
  # the same documents: the kept proportions, with no inference
  swap_binding("predict.sparsevi_lda", function(...) stop("re-inferred"))
  expect_identical(suppressMessages(lda_to_ldavis(fit, m))$theta, kept)
  aug <- sparsevi:::augment.sparsevi_lda(fit, m)
  d <- 5
  rows <- which(aug$document == unique(aug$document)[d])
  w <- match(aug$term[rows], fit$vocab)
  expect_identical(aug$.topic[rows],
                   unname(apply(kept[d, ] * fit$topic_word[, w, drop = FALSE], 2, which.max)))
  # one count changed, a document fewer, or the fit trained on other
  # documents since (update()): inferred
  m2 <- m
  m2[1, 1] <- m2[1, 1] + 1
  expect_error(suppressMessages(lda_to_ldavis(fit, m2)), "re-inferred")
  expect_error(suppressMessages(lda_to_ldavis(fit, m[-80, ])), "re-inferred")
  expect_error(sparsevi:::augment.sparsevi_lda(fit, m2), "re-inferred")
  up <- update(fit, m2, passes = 1, progress = FALSE)
  expect_false(identical(up$doc_key, fit$doc_key))
  expect_identical(suppressMessages(lda_to_ldavis(up, m2))$theta, unname(as.matrix(up$doc_topic)))
  expect_error(suppressMessages(lda_to_ldavis(up, m)), "re-inferred")
  # a fit without the key (saved by an earlier version) or without
  # proportions infers
  old <- fit
  old$doc_key <- NULL
  expect_error(suppressMessages(lda_to_ldavis(old, m)), "re-inferred")
  none <- fit_lda(m, K = 3, passes = 1, seed = 1, doc_topics = 0, progress = FALSE)
  expect_null(none$doc_key)
})

test_that("augment()'s topic of each pair in C equals max.col() over the scores", {
  rng <- uniform_source(17)
  K <- 6
  D <- 40
  C <- 25
  # sparse proportions with explicit zeros, an empty document and ties
  th <- matrix(round(rng(D * K), 1), D, K)
  th[th < 0.5] <- 0
  th[3, ] <- 0
  th[5, ] <- c(0.5, 0, 0.5, 0, 0, 0)
  theta <- methods::as(Matrix::Matrix(th, sparse = TRUE), "CsparseMatrix")
  theta@x[1] <- 0
  M <- matrix(round(rng(K * C) * 4) + 1, K, C)
  M[, 2] <- 1 # equal columns: ties between a document's topics
  rs <- rowSums(M)
  doc <- rep(seq_len(D), each = 7)
  col <- ((seq_along(doc) * 7L) %% C) + 1L
  for (th_n in 1:2) {
    expect_identical(sparsevi:::lda_pair_topics(theta, M, rs, doc, col, th_n),
                     sparsevi:::lda_pair_topics_r(theta, M, rs, doc, col))
    expect_identical(sparsevi:::lda_pair_topics(theta, M, NULL, doc, col, th_n),
                     sparsevi:::lda_pair_topics_r(theta, M, NULL, doc, col))
  }
  # a dense theta; no pairs
  expect_identical(sparsevi:::lda_pair_topics(th, M, rs, doc, col),
                   sparsevi:::lda_pair_topics_r(th, M, rs, doc, col))
  expect_identical(sparsevi:::lda_pair_topics(theta, M, rs, integer(0), integer(0)), integer(0))
  # a symmetric sparse form (which stores one triangle)
  sym <- Matrix::Matrix(crossprod(th[1:6, ]) + diag(6), sparse = TRUE)
  expect_s4_class(sym, "symmetricMatrix")
  expect_identical(sparsevi:::lda_pair_topics(sym, M, rs, rep(1:6, 3), rep(c(1L, 5L, 9L), 6)),
                   sparsevi:::lda_pair_topics_r(as.matrix(sym), M, rs, rep(1:6, 3),
                                                rep(c(1L, 5L, 9L), 6)))
  # fits of every engine: the topics max.col() gives over topic_word
  sim <- simulate_lda(D = 50, V = 30, K = 3, seed = 5)
  for (loc in c("cvb0", "vb", "ope", "gibbs")) {
    fit <- fit_lda(sim$dtm, K = 3, local = loc, passes = 2, seed = 1, progress = FALSE)
    aug <- sparsevi:::augment.sparsevi_lda(fit, sim$dtm)
    doc_of <- rep.int(seq_len(nrow(sim$dtm)), diff(sim$dtm$doc_ptr))
    ref <- sparsevi:::lda_pair_topics_r(fit$doc_topic, fit$topic_word, NULL, doc_of,
                                        sim$dtm$term + 1L)
    expect_identical(aug$.topic, ref, info = loc)
  }
})
