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
