# The OPE engine: Algorithm 1 against pure-R references, its summaries, the
# ML-OPE update, NPMI, and the OPE learners inside fit_lda().

ope_fixture <- function() {
  sim <- simulate_lda(D = 40, V = 30, K = 4, doc_length = 60, seed = 1)
  list(sim = sim, x = sim$dtm, lambda = sim$topic_word + 0.01)
}

doc_entries <- function(x, d) {
  if (x$doc_ptr[d + 1] > x$doc_ptr[d]) (x$doc_ptr[d] + 1):x$doc_ptr[d + 1] else integer(0)
}

test_that("OPE kernel reproduces the pure-R Algorithm 1 draw for draw", {
  f <- ope_fixture()
  seed <- sparsevi:::resolve_seed(7)
  for (alpha in c(0.3, 1, 2)) {
    res <- sparsevi:::ope_run(f$x, f$lambda, alpha = alpha, iter = 20, eps = 1e-10,
                              seed = seed, stream0 = 5, threads = 1L)
    ref <- ref_ope_block(f$x, f$lambda, alpha, 20, 1e-10, seed, 5)
    expect_equal(res$theta, ref$theta, tolerance = 1e-12)
    expect_equal(res$f_start, ref$f_start, tolerance = 1e-12)
    expect_equal(res$f_end, ref$f_end, tolerance = 1e-12)
  }
  expect_equal(colSums(res$theta), rep(1, nrow(f$x)), tolerance = 1e-12)
  expect_true(all(res$theta >= 1e-10))
})

test_that("for alpha >= 1 OPE reaches the projected-gradient maximum", {
  f <- ope_fixture()
  beta <- f$lambda / rowSums(f$lambda)
  seed <- sparsevi:::resolve_seed(3)
  docs <- 1:8
  for (alpha in c(1, 1.5, 3)) {
    map <- vapply(docs, function(d) {
      i <- doc_entries(f$x, d)
      ref_ope_map(beta, f$x$term[i] + 1L, f$x$count[i], alpha, 1e-10)$f
    }, 0)
    gap <- function(T) {
      res <- sparsevi:::ope_run(f$x, f$lambda, alpha = alpha, iter = T, seed = seed)
      map - res$f_end[docs]
    }
    g500 <- gap(500)
    g5000 <- gap(5000)
    # never above the maximum (up to the reference's own accuracy) ...
    expect_true(all(g5000 > -1e-6))
    # ... within 1e-3 relative of it, and converging at about the O(1/T) rate
    expect_lt(max(g5000 / abs(map)), 1e-3)
    expect_lt(max(g5000), max(g500) / 3)
  }
})

test_that("for alpha < 1 OPE improves on its starting point on nearly every document", {
  sim <- simulate_lda(D = 200, V = 60, K = 8, doc_length = 80, alpha = 0.2, seed = 2)
  res <- sparsevi:::ope_run(sim$dtm, sim$topic_word + 1e-3, alpha = 1 / 8, iter = 50,
                            seed = sparsevi:::resolve_seed(4))
  frac <- mean(res$f_end > res$f_start)
  expect_gte(frac, 0.95)
})

test_that("OPE summaries match their definitions", {
  f <- ope_fixture()
  seed <- sparsevi:::resolve_seed(9)
  beta <- f$lambda / rowSums(f$lambda)
  m <- as.matrix(f$x)
  r_theta <- sparsevi:::ope_run(f$x, f$lambda, 0.5, 30, summary = "theta", seed = seed)
  expect_equal(r_theta$summary, r_theta$theta %*% m, tolerance = 1e-12,
               ignore_attr = TRUE)
  r_phi <- sparsevi:::ope_run(f$x, f$lambda, 0.5, 30, summary = "phi", seed = seed)
  expect_equal(r_phi$theta, r_theta$theta)
  S <- matrix(0, nrow(beta), ncol(beta))
  for (d in seq_len(nrow(m))) {
    for (v in which(m[d, ] > 0)) {
      phi <- r_phi$theta[, d] * beta[, v]
      S[, v] <- S[, v] + m[d, v] * phi / sum(phi)
    }
  }
  expect_equal(r_phi$summary, S, tolerance = 1e-12, ignore_attr = TRUE)
  # phi summaries conserve tokens
  expect_equal(sum(r_phi$summary), sum(m), tolerance = 1e-10)
})

test_that("OPE is reproducible by seed and identical for 1 and 2 threads", {
  sim <- simulate_lda(D = 300, V = 50, K = 5, doc_length = 40, seed = 5)
  lam <- sim$topic_word + 0.01
  s <- sparsevi:::resolve_seed(11)
  a <- sparsevi:::ope_run(sim$dtm, lam, 0.2, 50, summary = "phi", seed = s, threads = 1L)
  b <- sparsevi:::ope_run(sim$dtm, lam, 0.2, 50, summary = "phi", seed = s, threads = 2L)
  c <- sparsevi:::ope_run(sim$dtm, lam, 0.2, 50, summary = "phi", seed = s, threads = 1L)
  expect_identical(a, b)
  expect_identical(a, c)
  d <- sparsevi:::ope_run(sim$dtm, lam, 0.2, 50, summary = "phi",
                          seed = sparsevi:::resolve_seed(12))
  expect_false(identical(a$theta, d$theta))
})

test_that("ML-OPE update mixes the old topics with the normalised summary", {
  set.seed(1)
  beta <- matrix(runif(12), 3, 4)
  beta <- beta / rowSums(beta)
  S <- matrix(rpois(12, 3) + 0.5, 3, 4)
  out <- .Call(sparsevi:::ffi_lda_global_ml, beta, S, 0.3)
  expect_equal(out, 0.7 * beta + 0.3 * S / rowSums(S))
  expect_equal(rowSums(out), rep(1, 3))
})

test_that("NPMI matches a brute-force computation", {
  sim <- simulate_lda(D = 60, V = 25, K = 3, doc_length = 15, seed = 6)
  tw <- sim$topic_word
  m <- as.matrix(sim$dtm)
  for (n in c(2L, 5L, 10L)) {
    ours <- sparsevi:::coherence_npmi(tw, sim$dtm, n)
    ref <- ref_npmi(tw, m, n)
    expect_equal(ours$per_topic, ref$per_topic, tolerance = 1e-12)
    expect_equal(ours$mean, ref$mean, tolerance = 1e-12)
  }
  two <- sparsevi:::coherence_npmi(tw, sim$dtm, 10L, threads = 2L)
  expect_identical(two, sparsevi:::coherence_npmi(tw, sim$dtm, 10L))
  # a pair that never co-occurs scores -1; one always together scores 1
  x <- as_dtm(matrix(c(1, 1, 0, 0,
                       1, 1, 0, 0,
                       0, 0, 1, 1), 3, 4, byrow = TRUE,
                     dimnames = list(NULL, c("a", "b", "c", "d"))))
  tw2 <- matrix(c(0.5, 0.4, 0.05, 0.05,
                  0.45, 0.05, 0.45, 0.05), 2, 4, byrow = TRUE,
                dimnames = list(NULL, c("a", "b", "c", "d")))
  r <- sparsevi:::coherence_npmi(tw2, x, 2L)
  expect_equal(r$per_topic[2], -1)
  expect_equal(r$per_topic[1], log((2 / 3) / (2 / 3)^2) / -log(2 / 3))
})

test_that("NPMI matches words by name against another vocabulary", {
  sim <- simulate_lda(D = 60, V = 25, K = 3, doc_length = 15, seed = 6)
  m <- as.matrix(sim$dtm)
  perm <- rev(seq_len(ncol(m)))
  ref_x <- as_dtm(m[, perm])
  expect_equal(sparsevi:::coherence_npmi(sim$topic_word, ref_x, 5L)$per_topic,
               sparsevi:::coherence_npmi(sim$topic_word, sim$dtm, 5L)$per_topic)
})
