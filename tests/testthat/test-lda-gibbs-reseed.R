# fit_lda(local = "gibbs", reuse_dead = ) (issue 35): dead topics of the
# sparse store re-seeded from documents between laps, in the store's own form.

test_that("re-seeding the store in C matches the pure-R form", {
  ns <- asNamespace("sparsevi")
  set.seed(3)
  K <- 6
  V <- 9
  nstar <- matrix(rpois(K * V, 0.7) * runif(K * V), K, V)
  nstar[, 4] <- 0 # a word no topic holds
  nstar[5, ] <- 0 # a topic with no entries
  store <- ref_store(nstar)
  store$scale <- 0.37
  store$base <- 0.8
  dead <- c(2L, 5L, 6L)
  docs <- list(list(term = c(0L, 3L, 8L), count = c(2, 1, 5)),
               list(term = c(3L, 4L), count = c(1, 3)),
               list(term = 8L, count = 4))
  seed <- ns$gibbs_seed_entries(dead, docs, K, V)
  got <- .Call(ns$ffi_lda_gibbs_reseed, store, as.integer(dead - 1L), seed)
  ref <- ns$gibbs_store_reseed_r(store, dead, seed)
  expect_identical(got$p, ref$p)
  expect_identical(got$k, ref$k)
  expect_identical(got$x, ref$x)
  expect_equal(got$tot, ref$tot, tolerance = 1e-14)
  expect_identical(got$scale, 0.37)
  expect_identical(got$base, 0.8)
  # the dense lambda: the live topics untouched, each dead topic its seed
  # document's counts over the smoothing every topic shares
  eta <- 0.2
  before <- ns$gibbs_materialise(store, eta)
  after <- ns$gibbs_materialise(got, eta)
  expect_identical(after[-dead, ], before[-dead, ])
  for (i in seq_along(dead)) {
    want <- rep(eta + 0.37 * 0.8, V)
    want[docs[[i]]$term + 1L] <- want[docs[[i]]$term + 1L] + docs[[i]]$count
    expect_equal(after[dead[i], ], want, tolerance = 1e-12)
  }
  # no dead topic: the same store
  none <- .Call(ns$ffi_lda_gibbs_reseed, store, integer(0),
                list(p = integer(V + 1L), k = integer(0), x = double(0)))
  expect_identical(none[c("p", "k", "x")], store[c("p", "k", "x")])
})

reseed_fit <- function(...) {
  sim <- simulate_lda(D = 200, V = 60, K = 3, doc_length = 50, seed = 1)
  fit_lda(sim$dtm, K = 12, local = "gibbs", passes = 4, batch_size = 50, seed = 1,
          progress = FALSE, ...)
}

test_that("gibbs re-seeds its dead topics between laps, the same across threads and kinds", {
  plain <- reseed_fit(reuse_dead = FALSE)
  expect_false(plain$control$reuse_dead)
  # (0.06 of the tokens: half the average share of 12 topics)
  r <- reseed_fit(reuse_dead = 0.06)
  expect_identical(r$control$dead_share, 0.06)
  expect_length(r$state$reused, 3L)
  expect_true(all(r$state$reused > 0))
  expect_false(identical(r$lambda, plain$lambda))
  expect_identical(reseed_fit(reuse_dead = 0.06, threads = 2)$lambda, r$lambda)
  # the last lap's draws are not kept in the fit; update() re-seeds too
  expect_null(r$state$lap_tokens)
  sim <- simulate_lda(D = 200, V = 60, K = 3, doc_length = 50, seed = 1)
  up <- update(r, sim$dtm, passes = 2, progress = FALSE)
  expect_length(up$state$reused, 4L)
  expect_gt(up$state$reused[4], 0L)
  # the sparse kind re-seeds its store alone: the same fit
  orig <- get("gibbs_sparse_topics_above", envir = asNamespace("sparsevi"))
  utils::assignInNamespace("gibbs_sparse_topics_above", 0, ns = "sparsevi")
  on.exit(utils::assignInNamespace("gibbs_sparse_topics_above", orig, ns = "sparsevi"))
  s <- reseed_fit(reuse_dead = 0.06)
  expect_identical(s$topics_kind, "sparse")
  expect_identical(s$state$reused, r$state$reused)
  expect_identical(s$lambda, r$lambda)
  # the default (reuse_dead = NULL: TRUE, 0.001 of the tokens) finds no dead
  # topic on this corpus: the plain fit
  d <- reseed_fit()
  expect_true(d$control$reuse_dead)
  expect_identical(d$control$dead_share, 0.001)
  expect_identical(d$lambda, plain$lambda)
  # TRUE is dead_topics()'s default share: a tenth of the average above K = 100
  wide <- fit_lda(simulate_lda(D = 30, V = 400, K = 2, seed = 1)$dtm, K = 400, local = "gibbs",
                  passes = 1, seed = 1, progress = FALSE)
  expect_identical(wide$control$dead_share, 0.1 / 400)
  # (vb's default stays off)
  vb <- fit_lda(simulate_lda(D = 30, V = 20, K = 2, seed = 1)$dtm, K = 2, local = "vb",
                passes = 1, seed = 1, progress = FALSE)
  expect_false(vb$control$reuse_dead)
})

test_that("a dead gibbs topic is one with a small share of the sampled tokens", {
  ns <- asNamespace("sparsevi")
  sim <- simulate_lda(D = 40, V = 20, K = 2, doc_length = 30, seed = 2)
  K <- 4
  V <- 20
  nstar <- matrix(0, K, V)
  nstar[1, 1:10] <- 50
  nstar[2, 11:20] <- 50
  nstar[3, 5] <- 0.4 # 0.04% of the sampled tokens
  store <- ref_store(nstar)
  store$base <- 1 # the shared base does not count
  state <- list(topics = ns$new_lda_topics(sparse = store), t = 10L)
  control <- list(dead_share = 0.001, seed = ns$resolve_seed(7), eta = 0.2, local = "gibbs", K = K)
  res <- ns$lda_reuse_dead_gibbs(state, sim$dtm, control, lap = 1L)
  expect_identical(res$n, 2L) # topic 3 and the empty topic 4
  tot <- res$state$topics$sparse$tot
  expect_identical(tot[1:2], c(500, 500))
  expect_true(all(tot[3:4] >= 1))
  expect_identical(dim(res$state$topics$lambda), c(4L, 20L))
  expect_identical(res$state$tot, ns$lda_topics_totals(res$state$topics, 0.2))
  # after a lap, the tokens each topic drew in it decide (and are reset):
  # topic 1 holds half the store but drew 0.05% of the lap's tokens
  state$lap_tokens <- c(0.5, 500, 300, 200)
  res <- ns$lda_reuse_dead_gibbs(state, sim$dtm, control, lap = 2L)
  expect_identical(res$n, 1L)
  expect_null(res$state$lap_tokens)
  tot <- res$state$topics$sparse$tot
  expect_identical(tot[2:4], store$tot[2:4])
  expect_lt(tot[1], 500)
  # the error names the engines that re-seed
  expect_error(fit_lda(sim$dtm, K = 3, local = "cvb0", reuse_dead = TRUE),
               "\"gibbs\"", class = "sparsevi_error_argument")
})
