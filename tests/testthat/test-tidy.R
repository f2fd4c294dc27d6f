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
  expect_equal(dim(vis$phi), c(3L, 30L))
  expect_equal(dim(vis$theta), c(40L, 3L))
  expect_equal(rowSums(vis$phi), rep(1, 3), tolerance = 1e-10)
  expect_equal(rowSums(vis$theta), rep(1, 40), tolerance = 1e-8)
  expect_equal(vis$doc.length, unname(Matrix::rowSums(as_dgCMatrix(s$sim$dtm))))
  expect_equal(vis$term.frequency, unname(Matrix::colSums(as_dgCMatrix(s$sim$dtm))))
  expect_equal(sum(vis$doc.length), sum(vis$term.frequency))
  expect_error(lda_to_ldavis(list(), s$sim$dtm), class = "sparsevi_error_argument")
  expect_message(two <- lda_to_ldavis(s$fit, s$sim$dtm[1:2, ]), "do not occur in `x`")
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
