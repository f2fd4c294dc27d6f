test_that("svi_digamma matches digamma() to 1e-12 relative over (1e-8, 1e8)", {
  x <- c(10^seq(-8, 8, length.out = 4001), 1.4616321449683623 + c(-0.06, -0.04, 0.01, 0.049),
         0.5, 1, 2, 9.999, 10, 10.001, 1e-6, 1.1e-6)
  ours <- .Call(sparsevi:::ffi_svi_special, x, 0L)
  ref <- digamma(x)
  rel <- abs(ours - ref) / pmax(abs(ref), 1e-300)
  expect_lt(max(rel), 1e-12)
})

test_that("svi_digamma is accurate next to its root", {
  x0 <- 1.4616321449683623
  x <- x0 + c(-0.049, -0.01, -1e-4, 1e-4, 0.01, 0.049)
  ours <- .Call(sparsevi:::ffi_svi_special, x, 0L)
  # absolute error at the level of double rounding of the argument
  expect_lt(max(abs(ours - digamma(x))), 1e-15)
  # relative to R's digamma() (itself rounded near its root) away from it
  far <- abs(x - x0) >= 0.01
  expect_lt(max(abs(ours - digamma(x))[far] / abs(digamma(x))[far]), 1e-12)
})

test_that("svi_lgamma matches lgamma() to 1e-12 relative over (1e-8, 1e8)", {
  x <- c(10^seq(-8, 8, length.out = 4001), 11.99, 12, 12.01)
  x <- x[abs(x - 1) > 1e-3 & abs(x - 2) > 1e-3] # zeros of lgamma: absolute below
  ours <- .Call(sparsevi:::ffi_svi_special, x, 1L)
  ref <- lgamma(x)
  expect_lt(max(abs(ours - ref) / abs(ref)), 1e-12)
  near <- c(1 + 1e-4, 2 - 1e-4)
  expect_lt(max(abs(.Call(sparsevi:::ffi_svi_special, near, 1L) - lgamma(near))), 1e-15)
})

test_that("svi exp matches exp() to 1e-14 relative", {
  x <- c(seq(-700, 700, length.out = 20001), 0, -1e-300, 1e-10)
  ours <- .Call(sparsevi:::ffi_svi_special, x, 2L)
  expect_lt(max(abs(ours - exp(x)) / exp(x)), 1e-14)
})

test_that("top-L selection agrees with sorting, with and without ties", {
  ref_top <- function(w, L) order(-w, seq_along(w))[seq_len(L)]
  streams <- sparsevi:::uniform_source(3)
  for (K in c(1, 2, 5, 17, 100, 1000)) {
    W <- matrix(streams(K * 20), K, 20)
    for (L in unique(pmin(K, c(1, 2, 4, 8, K)))) {
      got <- .Call(sparsevi:::ffi_svi_select_top, W, as.integer(L), 0L)
      want <- apply(W, 2, ref_top, L = L)
      expect_identical(got, matrix(as.integer(want), L))
    }
  }
  # many ties: values from a tiny set; lower index wins among equals
  W <- matrix(round(streams(300 * 10) * 3), 300, 10)
  for (L in c(1, 3, 50, 299)) {
    got <- .Call(sparsevi:::ffi_svi_select_top, W, as.integer(L), 0L)
    want <- apply(W, 2, ref_top, L = L)
    expect_identical(got, matrix(as.integer(want), L))
  }
  expect_identical(.Call(sparsevi:::ffi_svi_select_top, W, 5L, 1L),
                   .Call(sparsevi:::ffi_svi_select_top, W, 5L, 0L))
})

test_that("random streams depend on seed and stream only", {
  a <- .Call(sparsevi:::ffi_svi_rng_unif, c(0, 42), 7, 1000)
  b <- .Call(sparsevi:::ffi_svi_rng_unif, c(0, 42), 7, 1000)
  c <- .Call(sparsevi:::ffi_svi_rng_unif, c(0, 42), 8, 1000)
  expect_identical(a, b)
  expect_false(identical(a, c))
  expect_true(all(a > 0 & a < 1))
  # roughly uniform: a Kolmogorov-Smirnov test at a fixed seed
  expect_gt(suppressWarnings(ks.test(a, "punif")$p.value), 0.001)
})

test_that("threads default to the option and are capped under check", {
  withr_opt <- options(sparsevi.threads = 1L)
  on.exit(options(withr_opt))
  expect_identical(sparsevi_threads(), 1L)
  expect_error(sparsevi_threads(0), class = "sparsevi_error_argument")
  expect_error(sparsevi_threads(NA), class = "sparsevi_error_argument")
  expect_error(sparsevi_threads("two"), class = "sparsevi_error_argument")
  expect_lte(sparsevi_threads(2), 2L)
})

test_that("a child of fork() runs on one thread, after its parent used two", {
  skip_on_os("windows")
  skip_if_not(.Call(sparsevi:::ffi_svi_threads_info)[[1L]] == 1L, "built without OpenMP")
  sim <- simulate_lda(D = 120, V = 60, K = 3, seed = 1)
  # the parent starts OpenMP's thread pool
  f0 <- fit_lda(sim$dtm, K = 3, local = "vb", passes = 2, seed = 1, threads = 2,
                progress = FALSE)
  expect_identical(.Call(sparsevi:::ffi_svi_threads_info)[[2L]], 0L)
  # and the package's own threads (src/pool.c: SCVB0's local step)
  c0 <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, threads = 2, progress = FALSE)
  # in the child, two threads would wait forever for GCC's pool; a timeout
  # keeps a regression from hanging the tests
  job <- parallel::mcparallel({
    f <- fit_lda(sim$dtm, K = 3, local = "vb", passes = 2, seed = 1, threads = 2,
                 progress = FALSE)
    g <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, threads = 2, progress = FALSE)
    list(threads = sparsevi_threads(2),
         same = identical(f$lambda, f0$lambda) && identical(g$topic_word, c0$topic_word))
  })
  res <- parallel::mccollect(job, wait = FALSE, timeout = 60)
  if (is.null(res)) tools::pskill(job$pid)
  expect_false(is.null(res))
  res <- res[[1L]]
  expect_identical(res$threads, 1L)
  expect_true(res$same)
})

test_that("seeds are validated and do not touch the user's RNG", {
  set.seed(1)
  before <- .Random.seed
  s <- sparsevi:::resolve_seed(123)
  expect_identical(.Random.seed, before)
  expect_identical(s, c(0, 123))
  expect_error(sparsevi:::resolve_seed(1.5), class = "sparsevi_error_argument")
  expect_error(sparsevi:::resolve_seed(NA), class = "sparsevi_error_argument")
})
