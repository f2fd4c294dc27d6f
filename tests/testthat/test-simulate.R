test_that("simulate_lda returns a corpus with its planted truth", {
  sim <- simulate_lda(D = 60, V = 40, K = 3, doc_length = 50, seed = 1)
  expect_s3_class(sim$dtm, "sparsevi_dtm")
  expect_identical(dim(sim$dtm), c(60L, 40L))
  expect_identical(dim(sim$topic_word), c(3L, 40L))
  expect_identical(dim(sim$doc_topic), c(60L, 3L))
  expect_equal(rowSums(sim$topic_word), rep(1, 3))
  expect_equal(rowSums(sim$doc_topic), rep(1, 60))
  expect_identical(colnames(sim$topic_word), sim$dtm$vocab)
  expect_true(all(sparsevi:::doc_lengths(sim$dtm) >= 1))
  expect_equal(mean(sparsevi:::doc_lengths(sim$dtm)), 50, tolerance = 0.1)
})

test_that("simulate_lda word frequencies follow the planted topics", {
  sim <- simulate_lda(D = 400, V = 30, K = 2, doc_length = 200, seed = 2)
  emp <- colSums(as.matrix(sim$dtm))
  emp <- emp / sum(emp)
  lens <- sparsevi:::doc_lengths(sim$dtm)
  expected <- colSums(lens * sim$doc_topic %*% sim$topic_word)
  expected <- expected / sum(expected)
  expect_lt(max(abs(emp - expected)), 0.01)
})

test_that("simulate_lda is reproducible and leaves the user's RNG alone", {
  set.seed(10)
  before <- .Random.seed
  a <- simulate_lda(D = 20, V = 15, K = 2, seed = 5)
  expect_identical(.Random.seed, before)
  b <- simulate_lda(D = 20, V = 15, K = 2, seed = 5)
  c <- simulate_lda(D = 20, V = 15, K = 2, seed = 6)
  expect_identical(a, b)
  expect_false(identical(a$dtm, c$dtm))
  set.seed(3)
  d <- simulate_lda(D = 20, V = 15, K = 2)
  set.seed(3)
  e <- simulate_lda(D = 20, V = 15, K = 2)
  expect_identical(d, e)
})

test_that("simulate_lda checks its arguments", {
  expect_error(simulate_lda(D = 0, V = 5, K = 2), class = "sparsevi_error_argument")
  expect_error(simulate_lda(D = 5, V = 1, K = 2), class = "sparsevi_error_argument")
  expect_error(simulate_lda(D = 5, V = 5, K = 2.5), class = "sparsevi_error_argument")
  expect_error(simulate_lda(D = 5, V = 5, K = 2, alpha = -1), class = "sparsevi_error_argument")
  expect_error(simulate_lda(D = 5, V = 5, K = 2, seed = "a"), class = "sparsevi_error_argument")
})

test_that("simulate_mixture returns points with their planted clusters", {
  sim <- simulate_mixture(N = 3000, D = 2, K = 3, separation = 6,
                          weights = c(0.5, 0.3, 0.2), seed = 1)
  expect_identical(dim(sim$X), c(3000L, 2L))
  expect_identical(dim(sim$means), c(3L, 2L))
  expect_identical(dim(sim$covariances), c(2L, 2L, 3L))
  expect_equal(sim$weights, c(0.5, 0.3, 0.2))
  expect_true(all(sim$cluster %in% 1:3))
  expect_equal(as.vector(table(sim$cluster)) / 3000, sim$weights, tolerance = 0.1)
  for (k in 1:3) {
    Xk <- sim$X[sim$cluster == k, , drop = FALSE]
    expect_lt(max(abs(colMeans(Xk) - sim$means[k, ])), 0.15)
    expect_lt(max(abs(stats::cov(Xk) - sim$covariances[, , k])), 0.25)
    expect_true(all(eigen(sim$covariances[, , k], only.values = TRUE)$values > 0))
  }
})

test_that("simulate_mixture is reproducible and checks its arguments", {
  a <- simulate_mixture(N = 50, D = 3, K = 2, seed = 4)
  expect_identical(a, simulate_mixture(N = 50, D = 3, K = 2, seed = 4))
  expect_false(identical(a$X, simulate_mixture(N = 50, D = 3, K = 2, seed = 5)$X))
  expect_error(simulate_mixture(N = 0, D = 2, K = 2), class = "sparsevi_error_argument")
  expect_error(simulate_mixture(N = 10, D = 2, K = 2, weights = c(1, -1)),
               class = "sparsevi_error_argument")
  expect_error(simulate_mixture(N = 10, D = 2, K = 2, separation = -1),
               class = "sparsevi_error_argument")
})
