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

test_that("topic_word from lambda in C is lambda / rowSums(lambda), bit for bit", {
  set.seed(3)
  for (dims in list(c(1L, 5L), c(7L, 300L), c(40L, 2000L))) {
    lam <- matrix(rexp(prod(dims)) * 10^runif(prod(dims), -3, 3), dims[1], dims[2])
    got <- sparsevi:::lda_normalise_rows(lam)
    expect_identical(got, lam / rowSums(lam))
    # a new table: lambda is left as it was
    expect_false(identical(got, lam))
  }
  named <- matrix(1:6 + 0.5, 2, 3, dimnames = list(NULL, c("a", "b", "c")))
  expect_identical(sparsevi:::lda_normalise_rows(named), named / rowSums(named))
  # a fit's topic_word, eager (small) and built when read (large) alike
  sim <- simulate_lda(D = 30, V = 40, K = 3, seed = 1)
  fit <- fit_lda(sim$dtm, K = 3, seed = 1, passes = 2, progress = FALSE)
  expect_identical(unname(fit$topic_word), unname(fit$lambda / rowSums(fit$lambda)))
})

test_that("the seeded start's store in C equals its R form, and its lambda the seeded table", {
  x <- simulate_lda(D = 60, V = 50, K = 4, seed = 5)$dtm
  chosen <- c(4L, 18L, 1L, 42L, 60L) # documents, one per topic
  s <- sparsevi:::lda_seed_counts(x, chosen)
  ref <- sparsevi:::lda_seeded_store_r(s, 5L, 50L)
  for (th in c(1L, 2L)) {
    # (on 2 threads the table's pages are first touched by both: same values)
    got <- .Call(sparsevi:::ffi_lda_store_seeded, 5L, 50L, as.integer(s$k), as.integer(s$v),
                 s$x, th)
    expect_identical(got$X + 0, ref$X)
    expect_identical(got$meta[1:2], c(1, 0))
    expect_equal(got$meta, ref$meta, tolerance = 1e-14)
  }
  # a table of several pages (4 KB each): every entry but the seeds 0
  s2 <- list(k = c(0L, 6L, 2L), v = c(0L, 1999L, 1000L), x = c(3, 1, 2))
  big <- .Call(sparsevi:::ffi_lda_store_seeded, 7L, 2000L, s2$k, s2$v, s2$x, 2L)
  expect_identical(big$X + 0, sparsevi:::lda_seeded_store_r(s2, 7L, 2000L)$X)
  # lambda = eta + X: eta plus each topic's chosen document's counts
  table <- matrix(0.01, 5, 50)
  at <- cbind(s$k + 1L, s$v + 1L)
  table[at] <- table[at] + s$x
  st <- sparsevi:::lda_cvb0_seeded_start(x, chosen, list(K = 5L, eta = 0.01), 50L)
  expect_null(st$topics$lambda)
  expect_identical(sparsevi:::lda_store_lambda(st$topics$store, 0.01)$lambda + 0, table)
  expect_equal(st$tot, rowSums(table), tolerance = 1e-14)
  expect_error(.Call(sparsevi:::ffi_lda_store_seeded, 5L, 50L, 5L, 0L, 1, 1L),
               "outside the table")
  expect_error(.Call(sparsevi:::ffi_lda_store_seeded, 5L, 50L, 0L, 0L, -1, 1L),
               "non-negative")
})

test_that("SCVB0 and gibbs start seeded by default only on large tables", {
  for (local in c("cvb0", "gibbs")) {
    expect_identical(sparsevi:::lda_default_init(local, 1000, 129289), "seeded")
    expect_identical(sparsevi:::lda_default_init(local, 100, 129289), "bregman")
    expect_identical(sparsevi:::lda_default_init(local, 1000, 2^25 / 1000), "bregman")
    # ... or when the random base (K x V pseudo-counts) would outweigh the
    # corpus's tokens 4 to 1 (issue 20; gibbs: issue 33)
    expect_identical(sparsevi:::lda_default_init(local, 100, 129289, tokens = 2.6e6), "seeded")
    expect_identical(sparsevi:::lda_default_init(local, 100, 13119, tokens = 491657), "bregman")
  }
  # engines without the rule keep the Bregman start at any size
  expect_identical(sparsevi:::lda_default_init("vb", 1000, 129289), "bregman")
  expect_identical(sparsevi:::lda_default_init("ope", 1000, 129289), "bregman")
  sim <- simulate_lda(D = 60, V = 40, K = 3, doc_length = 30, seed = 3)
  f <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 1, seed = 1, progress = FALSE)
  expect_identical(f$control$init, "bregman")
  wide <- simulate_lda(D = 60, V = 2000, K = 3, doc_length = 10, seed = 3)$dtm
  expect_gt(6 * ncol(wide), 4 * sum(wide$count))
  for (local in c("cvb0", "gibbs")) {
    expect_identical(fit_lda(wide, K = 6, local = local, passes = 1, seed = 1,
                             progress = FALSE)$control$init, "seeded")
    # unless the caller chose a start
    expect_identical(fit_lda(wide, K = 6, local = local, passes = 1, seed = 1,
                             init = "bregman", progress = FALSE)$control$init, "bregman")
  }
  expect_identical(fit_lda(wide, K = 6, passes = 1, seed = 1, progress = FALSE)$control$init,
                   "seeded")
  expect_identical(fit_lda(wide, K = 6, local = "vb", passes = 1, seed = 1,
                           progress = FALSE)$control$init, "bregman")
})
