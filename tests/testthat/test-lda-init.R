# LDA's random start filled in C (src/lda-init.c) against its R reference.

test_that("the C random start equals the R formula on the same uniforms", {
  x <- simulate_lda(D = 20, V = 37, K = 3, seed = 1)$dtm
  seed <- c(0, 12345)
  got <- sparsevi:::lda_init_random(x, 5L, 0.3, seed)
  u <- sparsevi:::lda_unif(seed, 902, 5 * 37)
  ref <- matrix(0.3 + sparsevi:::gamma100_quantile(u), 5, 37)
  expect_identical(got, ref)
  expect_true(all(got >= 0.3))
  # near-uniform: Gamma(100, 100) has mean 1 and sd 0.1
  big <- sparsevi:::lda_init_random(simulate_lda(D = 5, V = 2000, K = 2, seed = 2)$dtm, 50L,
                                    0.1, seed)
  expect_equal(mean(big - 0.1), 1, tolerance = 0.01)
  expect_equal(stats::sd(as.vector(big)), 0.1, tolerance = 0.05)
})

test_that("Bregman seeding draws from a random pool on large corpora", {
  sim <- simulate_lda(D = 80, V = 40, K = 3, seed = 2)
  full <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, progress = FALSE, doc_topics = 0)
  expect_identical(sparsevi:::bregman_pool(3), 5000L)
  expect_identical(sparsevi:::bregman_pool(1000), 10000L)
  old <- sparsevi:::bregman_pool
  utils::assignInNamespace("bregman_pool", function(K) 20L, ns = "sparsevi")
  on.exit(utils::assignInNamespace("bregman_pool", old, ns = "sparsevi"))
  a <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, progress = FALSE, doc_topics = 0)
  b <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, threads = 2, progress = FALSE,
               doc_topics = 0)
  expect_identical(a$topic_word, b$topic_word)
  expect_false(identical(a$topic_word, full$topic_word))
})
