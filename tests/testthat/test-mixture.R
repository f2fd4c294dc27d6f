# Tests of fit_mixture() and the mixture kernels.

# The start kept among `cand` (in order) by fit_mixture()'s rule when no
# start has a degenerate component: the highest log-likelihood, except that
# a hierarchical start (after the first n_init) wins within mix_hc_margin
# nats of the best before it.
start_rule <- function(ll, cand, n_init) {
  b <- NULL
  for (i in sort(cand)) {
    margin <- if (i > n_init) mix_hc_margin else 0
    if (is.null(b) || ll[i] > ll[b] - margin) b <- i
  }
  b
}

# Evaluate `code` with the hierarchical start limited to `n` points.
with_hc_max <- function(n, code) {
  old <- options(sparsevi.mix_hc_max = n)
  on.exit(options(old))
  code
}

# Evaluate `code` with short runs of `laps` laps, the best `keep` continued.
with_short <- function(laps, keep, code) {
  old <- options(sparsevi.mix_short_laps = laps, sparsevi.mix_short_keep = keep)
  on.exit(options(old))
  code
}

tiny_data <- function(lik) {
  u <- uniform_source(7)
  if (lik == "multinomial") {
    sim <- simulate_lda(D = 12, V = 9, K = 2, doc_length = 15, seed = 3)
    return(sim$dtm)
  }
  X <- matrix(stats::qnorm(u(40 * 3)), 40, 3)
  X[1:20, ] <- X[1:20, ] + 3
  if (lik == "zm_gaussian") X[, 2] <- X[, 2] * 2
  X
}

# A valid state: summaries of random dense responsibilities.
tiny_state <- function(h, Xd, K) {
  u <- uniform_source(11)
  R <- matrix(u(nrow(Xd) * K), nrow(Xd), K)
  R <- R / rowSums(R)
  ref_summary(h, Xd, R)
}

for (lik in c("gaussian", "zm_gaussian", "diag_gaussian", "multinomial", "tied_gaussian",
             "spherical_gaussian")) {
  for (pr in c("dirichlet", "dp")) {
    test_that(sprintf("%s / %s weights, summaries and objective match the R reference", lik, pr), {
      K <- 4L
      X <- tiny_data(lik)
      data <- mix_data(X, lik, "X")
      h <- mix_hyper(data, lik, pr, alpha = 1.5, gamma = 2, nu = NULL, scale = 0.3,
                     kappa0 = 0.05, eta = 0.2)
      Xd <- if (lik == "multinomial") as.matrix(X) else data$data
      st <- tiny_state(h, Xd, K)
      for (point in c(FALSE, TRUE)) {
        W <- .Call(ffi_mix_weights, data$data, h, st$N, st$S, point, FALSE, 1L)
        Wr <- ref_weights(h, st$N, st$S, Xd, point)
        expect_equal(W, Wr, tolerance = 1e-10)
      }
      dens <- .Call(ffi_mix_weights, data$data, h, st$N, st$S, TRUE, TRUE, 1L)
      Wp <- ref_weights(h, st$N, st$S, Xd, TRUE)
      expect_equal(dens, apply(Wp, 2, function(w) max(w) + log(sum(exp(w - max(w))))),
                   tolerance = 1e-10)
      Wr <- ref_weights(h, st$N, st$S, Xd, FALSE)
      for (L in c(1L, 2L, K)) {
        res <- .Call(ffi_mix_local, data$data, h, st$N, st$S, c(0, data$N), L, 1L, NULL)
        # the same with working memory from a raw vector (as the training loop does)
        expect_identical(.Call(ffi_mix_local, data$data, h, st$N, st$S, c(0, data$N), L, 1L,
                               mix_work(data$N, K, L))[1:3], res[1:3])
        R <- ref_resp(Wr, L)
        ref <- ref_summary(h, Xd, R)
        expect_equal(res$N, ref$N, tolerance = 1e-10)
        expect_equal(as.vector(res$S), as.vector(ref$S), tolerance = 1e-10)
        expect_equal(res$entropy, -sum(R[R > 0] * log(R[R > 0])), tolerance = 1e-10)
      }
      expect_equal(.Call(ffi_mix_objective, h, st$N, st$S), ref_objective(h, st$N, st$S),
                   tolerance = 1e-10)
      # the global step and the point estimates, in C, against plain R
      est <- mix_point_estimates(h, st)
      ref <- ref_point_estimates(h, st$N, st$S)
      expect_setequal(names(est), names(ref))
      for (nm in names(ref)) expect_equal(est[[nm]], ref[[nm]], tolerance = 1e-12)
      new <- ref_summary(h, Xd, ref_resp(Wr, 2L))
      old <- ref_summary(h, Xd, ref_resp(Wr, 1L))
      expect_identical(mix_global_memoized(st, old, new), ref_global_memoized(st, old, new))
      expect_identical(mix_global_memoized(st, NULL, new), ref_global_memoized(st, NULL, new))
      expect_identical(mix_global_stochastic(st, new, 0.3, 2.5),
                       ref_global_stochastic(st, new, 0.3, 2.5))
    })
  }
}

test_that("each likelihood code chooses its own observation table", {
  # the C tables (src/obs-*.c) in the order of R's likelihood codes, with the
  # statistic sizes R allocates for them
  for (i in seq_along(mix_likelihoods)) {
    for (D in c(1L, 3L, 7L)) {
      obs <- .Call(ffi_mix_obs, i - 1L, D)
      expect_identical(obs$name, mix_likelihoods[i])
      expect_identical(obs$stat_size, as.double(mix_stat_size(i - 1L, D)))
      expect_identical(obs$documents, mix_likelihoods[i] == "multinomial")
    }
  }
  expect_identical(vapply(0:5, function(l) .Call(ffi_mix_obs, l, 2L)$spread, 1L),
                   c(1L, 1L, 2L, 0L, 1L, 2L))
  expect_error(.Call(ffi_mix_obs, 6L, 2L), "lik")
  # a dimension whose packed covariance would overflow is refused
  expect_error(.Call(ffi_mix_obs, 0L, 1e6), "46340")
})

test_that("the mixture entry points read the prior by name; a missing entry is named", {
  X <- tiny_data("gaussian")
  data <- mix_data(X, "gaussian", "X")
  h <- mix_hyper(data, "gaussian", "dirichlet", alpha = 1.5, gamma = 2, nu = NULL, scale = 0.3,
                 kappa0 = 0.05, eta = 0.2)
  st <- tiny_state(h, data$data, 3L)
  ref <- .Call(ffi_mix_objective, h, st$N, st$S)
  expect_identical(.Call(ffi_mix_objective, rev(h), st$N, st$S), ref)
  for (nm in c("lik", "prior", "conc", "kappa0", "nu0", "D", "m0", "B0", "logdet_B0")) {
    expect_error(.Call(ffi_mix_objective, h[names(h) != nm], st$N, st$S),
                 sprintf("`%s`", nm), fixed = TRUE)
  }
})

test_that("L = K gives exactly the dense fit; L = 1 is hard assignment", {
  sim <- simulate_mixture(N = 300, D = 2, K = 3, separation = 8, seed = 4)
  f1 <- fit_mixture(sim$X, K = 3, L = 3, seed = 1, passes = 5, progress = FALSE)
  f2 <- fit_mixture(sim$X, K = 3, seed = 1, passes = 5, progress = FALSE)
  expect_identical(f1$state, f2$state)
  f3 <- fit_mixture(sim$X, K = 3, L = 1, seed = 1, passes = 5, progress = FALSE)
  expect_true(all(abs(f3$state$N - round(f3$state$N)) < 1e-9))
})

for (lik in c("gaussian", "zm_gaussian", "diag_gaussian", "multinomial")) {
  test_that(sprintf("memoized and batch ELBO never decrease (%s)", lik), {
    X <- if (lik == "multinomial") simulate_lda(D = 150, V = 40, K = 4, seed = 2)$dtm else
      simulate_mixture(N = 400, D = 3, K = 4, separation = 2, seed = 5)$X
    for (pr in c("dirichlet", "dp")) {
      for (gl in c("memoized", "batch")) {
        for (L in c(1L, 2L, 6L)) {
          fit <- fit_mixture(X, K = 6, likelihood = lik, prior = pr, global = gl, L = L,
                             n_batches = if (gl == "memoized") 4 else NULL, passes = 8,
                             tol = 0, seed = 3, progress = FALSE)
          obj <- fit$trace$objective
          expect_true(all(is.finite(obj)))
          expect_true(all(diff(obj) >= -1e-9 * abs(obj[-1])),
                      label = sprintf("%s %s %s L=%d monotone", lik, pr, gl, L))
        }
      }
    }
  })
}

test_that("well-separated clusters are recovered", {
  sim <- simulate_mixture(N = 1000, D = 3, K = 4, separation = 8, seed = 10)
  for (lik in c("gaussian", "diag_gaussian")) {
    fit <- fit_mixture(sim$X, K = 4, likelihood = lik, seed = 1, progress = FALSE)
    expect_gte(ari(predict(fit, sim$X), sim$cluster), 0.95)
  }
  fit <- fit_mixture(sim$X, K = 4, L = 1, global = "stochastic", n_batches = 5,
                     seed = 1, progress = FALSE)
  expect_gte(ari(predict(fit, sim$X), sim$cluster), 0.95)
  fit <- fit_mixture(sim$X, K = 4, prior = "dp", L = 2, seed = 1, progress = FALSE)
  expect_gte(ari(predict(fit, sim$X), sim$cluster), 0.95)
  # documents from three word distributions that overlap on a few words
  u <- uniform_source(5)
  truth <- rep(1:3, length.out = 150)
  probs <- sapply(1:3, function(k) {
    p <- rep(0.02, 45)
    p[(k - 1) * 15 + 1:15] <- 1
    p / sum(p)
  })
  counts <- t(vapply(truth, function(k) {
    tabulate(findInterval(u(40), cumsum(probs[, k])) + 1L, 45)
  }, numeric(45)))
  colnames(counts) <- sprintf("w%02d", 1:45)
  fm <- fit_mixture(counts, K = 3, likelihood = "multinomial", seed = 1, progress = FALSE)
  expect_gte(ari(predict(fm, counts), truth), 0.95)
  expect_equal(unname(rowSums(fm$topic_word)), rep(1, 3))
  expect_identical(colnames(fm$topic_word), colnames(counts))
})

test_that("the Gaussian fit agrees with mclust's VVV fit on faithful", {
  skip_if_not_installed("mclust")
  fit <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
  mclustBIC <- mclust::mclustBIC # Mclust() looks it up in the caller
  m <- mclust::Mclust(faithful, G = 2, modelNames = "VVV", verbose = FALSE)
  expect_gte(ari(predict(fit, faithful), m$classification), 0.95)
  expect_lt(abs(fit$loglik - m$loglik) / abs(m$loglik), 0.01)
  expect_equal(as.numeric(logLik(fit)), fit$loglik)
  expect_equal(attr(logLik(fit), "df"), m$df)
})

test_that("fits are reproducible by seed and identical across thread counts", {
  sim <- simulate_mixture(N = 700, D = 4, K = 5, seed = 2)
  # two starts: one from the k-means partition, one from seed points
  for (lik in c("gaussian", "zm_gaussian", "diag_gaussian")) {
    a <- fit_mixture(sim$X, K = 8, likelihood = lik, L = 2, n_batches = 3, passes = 4,
                     seed = 9, threads = 1, n_init = 2, progress = FALSE)
    b <- fit_mixture(sim$X, K = 8, likelihood = lik, L = 2, n_batches = 3, passes = 4,
                     seed = 9, threads = 2, n_init = 2, progress = FALSE)
    c <- fit_mixture(sim$X, K = 8, likelihood = lik, L = 2, n_batches = 3, passes = 4,
                     seed = 10, threads = 1, n_init = 2, progress = FALSE)
    expect_identical(a$state, b$state)
    expect_identical(a$trace$objective, b$trace$objective)
    expect_false(identical(a$state, c$state))
  }
  x <- simulate_lda(D = 300, V = 50, K = 4, seed = 3)$dtm
  a <- fit_mixture(x, K = 5, likelihood = "multinomial", L = 2, global = "stochastic",
                   n_batches = 3, passes = 3, seed = 2, threads = 1, progress = FALSE)
  b <- fit_mixture(x, K = 5, likelihood = "multinomial", L = 2, global = "stochastic",
                   n_batches = 3, passes = 3, seed = 2, threads = 2, progress = FALSE)
  expect_identical(a$state, b$state)
  expect_identical(predict(a, x, type = "density", threads = 1),
                   predict(a, x, type = "density", threads = 2))
})

test_that("the two-double and the AVX2 kernels give identical fits", {
  on.exit(.Call(ffi_mix_simd, 1L), add = TRUE)
  # D = 2: statistics with the components in vector lanes (K = 5, not a
  # multiple of the width); D = 7: feature rows, pairs of components
  for (D in c(2L, 7L)) {
    sim <- simulate_mixture(N = 500, D = D, K = 4, seed = D)
    for (lik in c("gaussian", "zm_gaussian")) {
      fit <- function(th) {
        fit_mixture(sim$X, K = 5, likelihood = lik, passes = 3, seed = 2, threads = th,
                    n_init = 1, progress = FALSE)
      }
      expect_identical(.Call(ffi_mix_simd, 0L), 2L)
      a <- fit(1L)
      wide <- .Call(ffi_mix_simd, 1L)
      expect_true(wide %in% c(2L, 4L))
      b <- fit(1L)
      d <- fit(2L)
      expect_identical(a$state, b$state)
      expect_identical(a$trace$objective, b$trace$objective)
      expect_identical(b$state, d$state)
      expect_true(all(diff(b$trace$objective) >= -1e-9 * abs(b$trace$objective[-1])))
    }
  }
})

test_that("dense summaries (L = K) are identical across thread counts", {
  sim <- simulate_mixture(N = 900, D = 5, K = 4, seed = 5)
  for (lik in c("gaussian", "zm_gaussian")) {
    # K odd: the last component of the pairs has no partner
    a <- fit_mixture(sim$X, K = 7, likelihood = lik, n_batches = 2, passes = 3, seed = 3,
                     n_init = 1, threads = 1, progress = FALSE)
    b <- fit_mixture(sim$X, K = 7, likelihood = lik, n_batches = 2, passes = 3, seed = 3,
                     n_init = 1, threads = 2, progress = FALSE)
    expect_identical(a$state, b$state)
    expect_identical(a$trace$objective, b$trace$objective)
  }
  # wide data: feature blocks of fewer than 64 points, and a tail of features
  u <- uniform_source(5)
  X <- matrix(stats::qnorm(u(300 * 40)), 300, 40)
  X[1:150, 1:3] <- X[1:150, 1:3] + 4
  for (lik in c("gaussian", "zm_gaussian")) {
    data <- mix_data(X, lik, "X")
    h <- mix_hyper(data, lik, "dirichlet", alpha = 1, gamma = 1, nu = NULL, scale = 0.5,
                   kappa0 = 0.05, eta = 0.1)
    st <- tiny_state(h, data$data, 3L)
    r1 <- .Call(ffi_mix_local, data$data, h, st$N, st$S, c(0, 300), 3L, 1L, NULL)
    r2 <- .Call(ffi_mix_local, data$data, h, st$N, st$S, c(0, 300), 3L, 2L, NULL)
    expect_identical(r1[1:3], r2[1:3])
    ref <- ref_summary(h, data$data, ref_resp(ref_weights(h, st$N, st$S, data$data), 3L))
    expect_equal(r1$N, ref$N, tolerance = 1e-10)
    expect_equal(as.vector(r1$S), as.vector(ref$S), tolerance = 1e-10)
  }
})

test_that("centring and row permutation in C equal the R computations", {
  u <- uniform_source(3)
  X <- matrix(stats::qnorm(u(500 * 3)), 500, 3) * 10 + 5
  d <- mix_data(X, "gaussian", "X")
  expect_identical(d$center, colMeans(X))
  expect_identical(d$data, unname(sweep(X, 2L, colMeans(X), check.margin = FALSE)))
  expect_identical(d$spread, colMeans(d$data^2))
  z <- mix_data(X, "zm_gaussian", "X")
  expect_identical(z$data, unname(X))
  expect_identical(z$spread, colMeans(X^2))
  expect_identical(z$center, rep(0, 3))
  perm <- order(u(500))
  expect_identical(mix_permute(d, perm)$data, d$data[perm, , drop = FALSE])
  expect_identical(mix_permute(d, perm, threads = 2L)$data, d$data[perm, , drop = FALSE])
  Xi <- matrix(1:12, 4, 3)
  expect_identical(mix_data(Xi, "gaussian", "X")$center, colMeans(Xi))
})

test_that("predict, heldout_loglik, update, summary, plot and saveRDS work", {
  sim <- simulate_mixture(N = 400, D = 2, K = 3, separation = 8, seed = 6)
  tr <- sim$X[1:300, ]
  te <- sim$X[301:400, ]
  fit <- fit_mixture(tr, K = 3, seed = 1, progress = FALSE, heldout = te)
  expect_s3_class(fit, c("sparsevi_mixture", "sparsevi_fit"))
  expect_true(all(is.finite(fit$trace$heldout)))
  R <- predict(fit, te, type = "responsibilities")
  expect_equal(dim(R), c(100L, 3L))
  expect_equal(unname(rowSums(R)), rep(1, 100))
  expect_identical(predict(fit, te), max.col(R, ties.method = "first"))
  d <- predict(fit, te, type = "density", log = TRUE)
  expect_equal(exp(d), predict(fit, te, type = "density"))
  expect_equal(heldout_loglik(fit, te), mean(d))
  expect_equal(fit$trace$heldout[nrow(fit$trace)], mean(d))
  # the density is the mixture density under the point estimates
  dens <- 0
  for (k in 1:3) {
    S <- fit$covariances[, , k]
    Y <- sweep(te, 2, fit$means[k, ])
    dens <- dens + fit$weights[k] * exp(-0.5 * rowSums((Y %*% solve(S)) * Y)) /
      (2 * pi * sqrt(det(S)))
  }
  expect_equal(d, log(dens), tolerance = 1e-10)
  f2 <- update(fit, tr, passes = 2)
  expect_gt(nrow(f2$trace), nrow(fit$trace))
  expect_gte(f2$trace$objective[nrow(f2$trace)], fit$trace$objective[nrow(fit$trace)] - 1e-6)
  expect_output(print(fit), "sparsevi_mixture")
  expect_output(print(summary(fit)), "Components")
  pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(fit, tr))
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  back <- readRDS(path)
  expect_identical(predict(back, te, type = "density", log = TRUE), d)
  # columns are matched by name
  colnames(tr) <- c("a", "b")
  fn <- fit_mixture(tr, K = 3, seed = 1, progress = FALSE)
  te2 <- te
  colnames(te2) <- c("a", "b")
  expect_identical(predict(fn, te2[, c("b", "a")]), predict(fn, te2))
})

test_that("random init, and documents with unknown terms, work", {
  sim <- simulate_mixture(N = 300, D = 2, K = 3, separation = 8, seed = 6)
  fit <- fit_mixture(sim$X, K = 3, init = "random", seed = 2, progress = FALSE)
  expect_true(all(is.finite(fit$trace$objective)))
  x <- simulate_lda(D = 60, V = 30, K = 2, seed = 1)$dtm
  fm <- fit_mixture(x, K = 2, likelihood = "multinomial", seed = 1, progress = FALSE)
  m <- as.matrix(x)[1:5, ]
  colnames(m)[1:2] <- c("new1", "new2")
  m[, 1:2] <- m[, 1:2] + 1
  expect_message(p <- predict(fm, m, type = "density"), "dropped 2 term")
  expect_length(p, 5L)
  f2 <- update(fm, x, passes = 1)
  expect_s3_class(f2, "sparsevi_mixture")
})

test_that("bad input gets classed errors", {
  X <- simulate_mixture(N = 50, D = 3, K = 2, seed = 1)$X
  bad <- X
  bad[3, 2] <- NA
  expect_error(fit_mixture(bad, K = 2), class = "sparsevi_error_data")
  bad[3, 2] <- Inf
  expect_error(fit_mixture(bad, K = 2), class = "sparsevi_error_data")
  expect_error(fit_mixture(X, K = 51), class = "sparsevi_error_argument")
  expect_error(fit_mixture(X, K = 2, L = 3), class = "sparsevi_error_argument")
  expect_error(fit_mixture(X, K = 2, L = 0), class = "sparsevi_error_argument")
  const <- cbind(X, 1)
  expect_error(fit_mixture(const, K = 2), "diag_gaussian", class = "sparsevi_error_data")
  expect_error(fit_mixture(cbind(X, 0), K = 2, likelihood = "zm_gaussian"),
               class = "sparsevi_error_data")
  expect_s3_class(fit_mixture(const, K = 2, likelihood = "diag_gaussian", progress = FALSE,
                              seed = 1), "sparsevi_mixture")
  wide <- matrix(stats::rnorm(5 * 8), 5, 8)
  expect_error(fit_mixture(wide, K = 2), "more columns", class = "sparsevi_error_data")
  fit <- fit_mixture(X, K = 2, seed = 1, progress = FALSE)
  expect_error(predict(fit, X[, 1:2]), class = "sparsevi_error_data")
  colnames(X) <- c("a", "b", "c")
  fit <- fit_mixture(X, K = 2, seed = 1, progress = FALSE)
  Y <- X
  colnames(Y) <- c("a", "b", "z")
  expect_error(predict(fit, Y), "lacks", class = "sparsevi_error_data")
  expect_error(fit_mixture(X, K = 2, likelihood = "t"), class = "sparsevi_error_argument")
  expect_error(fit_mixture(X, K = 2, kappa = 0.4), class = "sparsevi_error_argument")
  expect_error(fit_mixture(X, K = 2, n_batches = 2, batch_size = 3),
               class = "sparsevi_error_argument")
  expect_error(fit_mixture(X, K = 2, bogus = 1), class = "sparsevi_error_argument")
  expect_error(fit_mixture(letters, K = 2), class = "sparsevi_error_data")
})

test_that("plot() draws the data in its own variables, coloured by cluster", {
  pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  fit <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
  expect_invisible(plot(fit, faithful))
  expect_identical(plot(fit, faithful, which = "clusters", vars = c("waiting", "eruptions")), fit)
  expect_identical(plot(fit, faithful, which = c("trace", "clusters", "components")), fit)
  d <- fit_mixture(faithful, K = 2, likelihood = "diag_gaussian", seed = 1, progress = FALSE)
  expect_identical(plot(d, faithful, which = "clusters"), d)
  expect_error(plot(fit, which = "clusters"), class = "sparsevi_error_argument")
  expect_error(plot(fit, faithful, vars = c("waiting", "nope")), class = "sparsevi_error_argument")
  expect_error(plot(fit, faithful, which = "bars"), class = "sparsevi_error_argument")
  x <- simulate_lda(D = 40, V = 20, K = 2, seed = 1)$dtm
  fm <- fit_mixture(x, K = 2, likelihood = "multinomial", seed = 1, progress = FALSE)
  expect_error(plot(fm, x, which = "clusters"), class = "sparsevi_error_argument")
  expect_identical(plot(fm), fm)
})

test_that("a fit that uses all its passes warns; n_init keeps the best start", {
  sim <- simulate_mixture(N = 400, D = 2, K = 4, seed = 6)
  expect_warning(f <- fit_mixture(sim$X, K = 4, passes = 1, tol = 0, seed = 1, progress = FALSE),
                 "did not converge", class = "sparsevi_warning_unconverged")
  expect_false(f$converged)
  expect_no_warning(g <- fit_mixture(sim$X, K = 4, passes = 200, tol = 1e-4, seed = 1,
                                     progress = FALSE))
  expect_true(g$converged)
  # stochastic training has no convergence test: no warning
  expect_no_warning(fit_mixture(sim$X, K = 4, global = "stochastic", passes = 2, seed = 1,
                                progress = FALSE))
  # n_init starts, then (init = "kmeans", N <= 2000) the two hierarchical
  # ones, each run to convergence (no short runs)
  one <- with_hc_max(0, fit_mixture(sim$X, K = 4, passes = 30, tol = 1e-4, seed = 3,
                                    n_init = 1, progress = FALSE))
  expect_length(one$init_objectives, 1L)
  many <- with_short(Inf, 1, fit_mixture(sim$X, K = 4, passes = 30, tol = 1e-4, seed = 3,
                                         n_init = 4, progress = FALSE))
  expect_length(many$init_objectives, 6L)
  expect_identical(many$init_objectives[1], one$trace$objective[nrow(one$trace)])
  # the start kept is the one of highest log-likelihood at its estimates
  expect_length(many$init_loglik, 6L)
  # (or a hierarchical one, the fifth or sixth, if within mix_hc_margin nats
  # of the best before it)
  expect_identical(many$best_init, start_rule(many$init_loglik, 1:6, 4L))
  expect_identical(many$init_loglik[many$best_init], many$loglik)
  expect_identical(many$init_objectives[many$best_init],
                   many$trace$objective[nrow(many$trace)])
  expect_gte(many$loglik, one$loglik - mix_hc_margin)
  again <- fit_mixture(sim$X, K = 4, passes = 30, tol = 1e-4, seed = 3, n_init = 4,
                       threads = 2, progress = FALSE)
  expect_identical(again$state, many$state)
  expect_error(fit_mixture(sim$X, K = 4, n_init = 0), class = "sparsevi_error_argument")
})

test_that("short runs: the best starts after a few laps are continued, each as if run alone", {
  # iris, K = 3: its starts need about 20 laps and reach optima of different
  # log-likelihood (-180.3 and -186.7 among them)
  X <- iris[, 1:4]
  s <- 3
  # every start for exactly s laps: the log-likelihoods the short runs rank
  at_s <- with_short(Inf, 1, suppressWarnings(
    fit_mixture(X, K = 3, seed = 2, passes = s, tol = 0, progress = FALSE)))
  # every start to convergence
  full <- with_short(Inf, 1, fit_mixture(X, K = 3, seed = 2, progress = FALSE))
  expect_length(full$init_loglik, 12L)
  for (keep in 1:2) {
    f <- with_short(s, keep, fit_mixture(X, K = 3, seed = 2, tol = 0, progress = FALSE,
                                         passes = 200))
    g <- with_short(s, keep, fit_mixture(X, K = 3, seed = 2, progress = FALSE))
    expect_identical(g$control$short_laps, s)
    # the starts continued: the best `keep` after s laps by the start rule
    # (log-likelihood; the hierarchical starts, the 11th and 12th, within
    # mix_hc_margin; no component below D + 1 points in these fits)
    ll <- at_s$init_loglik
    cont <- start_rule(ll, 1:12, 10L)
    if (keep == 2) cont <- c(cont, start_rule(ll, setdiff(1:12, cont), 10L))
    # the others keep their short-run log-likelihood
    expect_identical(g$init_loglik[-cont], ll[-cont])
    # a continued start ends where the same start run alone to convergence
    # ends, bit for bit (its log-likelihood and ELBO)
    expect_identical(g$init_loglik[cont], full$init_loglik[cont])
    expect_identical(g$init_objectives[cont], full$init_objectives[cont])
    expect_true(g$best_init %in% cont)
    expect_identical(g$loglik, g$init_loglik[g$best_init])
    expect_true(g$converged)
  }
  # keep = 1 after 3 laps continues the hierarchical start (best at lap 3)
  # and ends at the lower optimum; the full runs find the higher one
  one <- with_short(3, 1, fit_mixture(X, K = 3, seed = 2, progress = FALSE))
  expect_gt(full$loglik, one$loglik + 5)
  # the whole fit of a continued start equals that start run alone: start 1
  # is the fit of n_init = 1 without the hierarchical start
  sim <- simulate_mixture(N = 600, D = 2, K = 3, seed = 4)
  alone <- with_hc_max(0, fit_mixture(sim$X, K = 3, seed = 5, n_init = 1, tol = 1e-9,
                                      progress = FALSE))
  expect_gt(max(alone$trace$lap), 4L) # the pause falls inside its run
  paused <- with_hc_max(0, with_short(2, 2, fit_mixture(sim$X, K = 3, seed = 5, n_init = 2,
                                                        tol = 1e-9, progress = FALSE)))
  expect_identical(paused$best_init, 1L)
  expect_identical(paused$state, alone$state)
  expect_identical(paused$trace$objective, alone$trace$objective)
  expect_identical(paused$trace$lap, alone$trace$lap)
  expect_identical(paused$classification, alone$classification)
  # seeds reproduce the fit; thread counts do not change it
  again <- with_hc_max(0, with_short(2, 2, fit_mixture(sim$X, K = 3, seed = 5, n_init = 2,
                                                       tol = 1e-9, threads = 2,
                                                       progress = FALSE)))
  expect_identical(again$state, paused$state)
  expect_identical(again$init_loglik, paused$init_loglik)
  expect_identical(again$trace$objective, paused$trace$objective)
  # the options are checked
  expect_error(with_short(0, 1, fit_mixture(X, K = 3, seed = 1, progress = FALSE)),
               class = "sparsevi_error_argument")
  expect_error(with_short(5, 1.5, fit_mixture(X, K = 3, seed = 1, progress = FALSE)),
               class = "sparsevi_error_argument")
  # on a cluster, paused and resumed starts give the same fit
  skip_on_cran()
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  on_cl <- suppressMessages(with_short(2, 2, fit_mixture(
    sim$X, K = 3, seed = 5, n_init = 3, n_batches = 4, tol = 1e-9, cluster = cl,
    progress = FALSE)))
  off_cl <- with_short(2, 2, fit_mixture(sim$X, K = 3, seed = 5, n_init = 3, n_batches = 4,
                                         tol = 1e-9, progress = FALSE))
  expect_identical(on_cl$state, off_cl$state)
  expect_identical(on_cl$init_loglik, off_cl$init_loglik)
  expect_identical(on_cl$trace$objective, off_cl$trace$objective)
})


test_that("the default fit is robust to the seed on iris and faithful (issue 23)", {
  X <- iris[, 1:4]
  aris <- vapply(1:10, function(s) {
    expect_no_warning(f <- fit_mixture(X, K = 3, seed = s, progress = FALSE))
    expect_true(f$converged)
    ari(predict(f, X), iris$Species)
  }, numeric(1))
  # Mclust(iris[, 1:4], G = 3) reaches 0.904; the old defaults 0.57 for
  # seeds 2, 4 and 8
  expect_true(all(aris > 0.88))
  # the old defaults (one start from single seed points, alpha = 1,
  # scale = 0.1, 20 laps) are still there, and still seed-dependent
  old <- vapply(1:4, function(s) {
    f <- suppressWarnings(fit_mixture(X, K = 3, seed = s, init = "kmeanspp", n_init = 1,
                                      alpha = 1, scale = 0.1, passes = 20, progress = FALSE))
    ari(predict(f, X), iris$Species)
  }, numeric(1))
  expect_lt(min(old), 0.7)
  cl <- lapply(1:5, function(s) predict(fit_mixture(faithful, K = 2, seed = s,
                                                    progress = FALSE), faithful))
  for (s in 2:5) expect_equal(ari(cl[[1]], cl[[s]]), 1)
  # ten starts by default for small numeric data and the two hierarchical
  # ones, one for documents or stochastic training
  f <- fit_mixture(X, K = 3, seed = 1, progress = FALSE)
  expect_length(f$init_objectives, 12L)
  expect_identical(f$control$init, "kmeans")
  g <- fit_mixture(X, K = 3, seed = 1, global = "stochastic", passes = 2, progress = FALSE)
  expect_length(g$init_objectives, 1L)
})

test_that("fit_mixture(K = 1:5) keeps the best K by BIC, lower is better", {
  X <- as.matrix(faithful)
  m <- fit_mixture(X, K = 1:4, seed = 2, progress = FALSE)
  expect_s3_class(m, "sparsevi_mixture")
  expect_identical(m$bic$K, 1:4)
  expect_identical(m$K, m$bic$K[which.min(m$bic$BIC)])
  # each row is the fit of that K
  f3 <- fit_mixture(X, K = 3, seed = 2, progress = FALSE)
  expect_equal(m$bic$BIC[3], BIC(f3))
  expect_equal(m$bic$loglik[3], f3$loglik)
  expect_equal(BIC(m), min(m$bic$BIC))
  expect_equal(BIC(f3), -2 * f3$loglik + attr(logLik(f3), "df") * log(nrow(X)))
  # faithful: two clusters, as Mclust(faithful, G = 1:4, "VVV") finds
  expect_identical(m$K, 2L)
  out <- capture.output(print(m))
  expect_true(any(grepl("lower is better", out)))
  expect_true(any(grepl("BIC", out)))
  expect_length(grep("^ +[1-4] ", out), 4L)
  # L follows K unless given, and is capped at each K
  mL <- fit_mixture(X, K = 2:3, L = 2, seed = 2, progress = FALSE)
  expect_identical(mL$L, 2L)
  expect_error(fit_mixture(X, K = c(1, 2.5)), class = "sparsevi_error_argument")
  expect_error(fit_mixture(X, K = c(0, 2)), class = "sparsevi_error_argument")
})

test_that("the training points' assignments in C equal the pure-R reference", {
  X <- rbind(as.matrix(iris[, 1:4]), as.matrix(iris[1:5, 1:4])) # ties between rows too
  docs <- simulate_lda(D = 40, V = 30, K = 3, seed = 1)$dtm
  cases <- list(list(X = X, lik = "gaussian", cov = "full"),
                list(X = X, lik = "gaussian", cov = "tied"),
                list(X = X, lik = "gaussian", cov = "diag"),
                list(X = X, lik = "gaussian", cov = "spherical"),
                list(X = X, lik = "zm_gaussian", cov = NULL),
                list(X = docs, lik = "multinomial", cov = NULL))
  for (cs in cases) {
    f <- suppressWarnings(fit_mixture(cs$X, K = 3, likelihood = cs$lik, covariance = cs$cov,
                                      seed = 1, progress = FALSE, passes = 5))
    data <- sparsevi:::mix_data(cs$X, f$likelihood, "X")
    W <- .Call(sparsevi:::ffi_mix_weights, data$data, f$hyper, f$state$N, f$state$S, FALSE,
               FALSE, 1L)
    ref <- ref_assign(W)
    expect_identical(f$classification, ref$classification)
    expect_identical(f$uncertainty, ref$uncertainty)
    expect_identical(unname(f$z), ref$z)
    # the same with two threads, and without z
    for (th in 1:2) {
      a <- .Call(sparsevi:::ffi_mix_assign, data$data, f$hyper, f$state$N, f$state$S,
                 th == 1L, th)
      expect_identical(a$classification, ref$classification)
      expect_identical(a$uncertainty, ref$uncertainty)
      if (th == 1L) expect_identical(a$z, ref$z) else expect_null(a$z)
    }
  }
})

test_that("fitted(), nobs(), predict() without newdata and the mclust fields", {
  X <- iris[, 1:4]
  m <- fit_mixture(X, K = 3, seed = 1, progress = FALSE)
  expect_identical(nobs(m), 150L)
  expect_identical(fitted(m), predict(m, X))
  expect_identical(predict(m), predict(m, X))
  expect_identical(m$classification, predict(m, X))
  expect_equal(m$z, predict(m, X, type = "responsibilities"))
  expect_equal(fitted(m, type = "responsibilities"), m$z)
  expect_equal(m$uncertainty, 1 - apply(m$z, 1L, max))
  expect_identical(m$classification, max.col(m$z, ties.method = "first"))
  expect_error(predict(m, type = "density"), class = "sparsevi_error_argument")
  # in the order of the data, after update() too
  u <- update(m, X[150:1, ], passes = 2, progress = FALSE)
  expect_identical(u$classification, predict(u, X[150:1, ]))
  # documents
  docs <- simulate_lda(D = 40, V = 30, K = 2, seed = 1)$dtm
  d <- suppressWarnings(fit_mixture(docs, K = 2, likelihood = "multinomial", seed = 1,
                                    progress = FALSE))
  expect_identical(fitted(d), predict(d, docs))
  expect_identical(nobs(d), 40L)
  # glance() counts laps as print() does
  if (requireNamespace("generics", quietly = TRUE)) {
    expect_identical(generics::glance(m)$laps, as.integer(max(m$trace$lap)))
    expect_equal(generics::glance(m)$BIC, BIC(m))
  }
  expect_true(any(grepl("BIC", capture.output(print(summary(m))))))
  expect_true(any(grepl(sprintf("%d laps", max(m$trace$lap)), capture.output(print(m)))))
})

test_that("point estimates are the covariance's posterior mean, and the log-likelihood uses them", {
  # one hard partition of swiss (47 points, 6 columns, clusters of 24, 16
  # and 7 points): each component's covariance is B / (N_k + 1) with the
  # Normal-Wishart posterior scale B, nu0 = D + 2 (E[Sigma] = B / (nu - D
  # - 1)), not B / (N_k + nu0) (E[Lambda]^-1, which shrinks the 7-point
  # component to less than half)
  X <- as.matrix(swiss)
  data <- mix_data(X, "gaussian", "X")
  h <- mix_hyper(data, "gaussian", "dirichlet", alpha = 3, gamma = 1, nu = NULL,
                 scale = 0.003, kappa0 = 0.01, eta = 0.1)
  cl <- rep(1:3, c(24, 16, 7))
  st <- mix_partition_state(list(data = data$data), h, cl, 3L)
  est <- mix_point_estimates(h, st)
  D <- ncol(X)
  B0 <- diag(0.003 * (D + 2) * apply(X, 2, function(x) mean((x - mean(x))^2)))
  for (k in 1:3) {
    Y <- data$data[cl == k, , drop = FALSE]
    n <- nrow(Y)
    m <- colSums(Y) / (n + 0.01) # the prior mean is the data mean (0 after centring)
    B <- B0 + crossprod(Y) - (n + 0.01) * tcrossprod(m)
    expect_equal(est$means[k, ], m, tolerance = 1e-12)
    expect_equal(est$covariances[, , k], B / (n + 1), tolerance = 1e-10)
    # close to the MLE's: B0 is weak, the divisor n + 1 instead of n
    expect_lt(max(abs(est$covariances[, , k] * (n + 1) / n - crossprod(sweep(Y, 2, colMeans(Y))) / n)),
              0.05 * max(abs(B)) / n)
  }
  # the fit's log-likelihood is the sum of log densities at these estimates
  f <- fit_mixture(X, K = 3, seed = 1, progress = FALSE)
  dens <- sapply(1:3, function(k) {
    S <- f$covariances[, , k]
    Y <- sweep(X, 2, f$means[k, ])
    q <- rowSums((Y %*% solve(S)) * Y)
    f$weights[k] * exp(-0.5 * q - 0.5 * D * log(2 * pi) -
                         0.5 * as.numeric(determinant(S)$modulus))
  })
  expect_equal(f$loglik, sum(log(rowSums(dens))), tolerance = 1e-10)
  expect_equal(as.numeric(logLik(f)), f$loglik)
})

test_that("tiny data (swiss, trees): the same partition for every seed, without warnings", {
  # two optima of trees are 0.05 nats apart and k-means starts reach either
  # one by seed; the hierarchical start (deterministic) wins ties within
  # mix_hc_margin nats, so every seed gives its partition; on swiss the
  # best start without a degenerate component is reached from every seed
  for (case in list(list(X = swiss, K = 3L), list(X = trees, K = 2L))) {
    fits <- lapply(1:10, function(s) {
      expect_no_warning(f <- fit_mixture(case$X, K = case$K, seed = s, progress = FALSE))
      f
    })
    n_all <- length(fits[[1]]$init_loglik)
    expect_identical(n_all, 12L) # ten starts, then the two hierarchical ones
    for (f in fits) {
      expect_true(f$converged)
      # the same partition (the labels may differ when a k-means start wins)
      expect_equal(ari(f$classification, fits[[1]]$classification), 1)
      expect_identical(f$loglik, f$init_loglik[f$best_init])
      # no component of fewer than D + 1 points (swiss has a start with 6
      # points in 6 dimensions and a higher log-likelihood: not kept)
      expect_false(mix_degenerate(f))
      expect_true(all(table(f$classification) >= ncol(case$X) + 1))
    }
  }
  # the hierarchical start alone does not depend on the seed's order of points
  X <- as.matrix(trees)
  data <- mix_data(X, "gaussian", "X")
  h <- mix_hyper(data, "gaussian", "dirichlet", 2, 1, NULL, 0.003, 0.01, 0.1)
  perm <- c(31:1)
  a <- mix_hc_state(data, list(data = data$data), h, 2L, seq_len(31))
  b <- mix_hc_state(data, list(data = data$data[perm, ]), h, 2L, perm)
  expect_identical(a$N, b$N)
  expect_equal(a$S, b$S, tolerance = 1e-12)
  expect_setequal(a$N, as.double(table(stats::cutree(stats::hclust(stats::dist(
    scale(stats::prcomp(X)$x)), "ward.D2"), 2))))
})

test_that("a start with a component of fewer than D + 1 points loses to one without", {
  # mix_degenerate() by hand: expected sizes against D + 1, full models only
  fit <- list(likelihood = "gaussian", hyper = list(D = 3), sizes = c(10, 4, 20))
  expect_false(mix_degenerate(fit))
  fit$sizes <- c(10, 3.9, 20)
  expect_true(mix_degenerate(fit))
  # exactly D + 1 points, below by rounding: not degenerate
  fit$sizes <- c(10, 4 - 1e-11, 20)
  expect_false(mix_degenerate(fit))
  fit$likelihood <- "diag_gaussian"
  expect_false(mix_degenerate(fit))
  # swiss, K = 3: some starts leave 6 points (D = 6) in a component, with a
  # higher log-likelihood than any start without; the fit keeps the best
  # start without
  f <- fit_mixture(swiss, K = 3, seed = 1, progress = FALSE)
  expect_false(mix_degenerate(f))
  expect_lt(f$loglik, max(f$init_loglik))
  expect_false(f$best_init == which.max(f$init_loglik))
})

test_that("option sparsevi.mix_hc_max turns the hierarchical start off and is checked", {
  X <- as.matrix(faithful)
  f <- with_hc_max(0, fit_mixture(X, K = 2, seed = 1, n_init = 2, progress = FALSE))
  expect_length(f$init_loglik, 2L)
  g <- fit_mixture(X, K = 2, seed = 1, n_init = 2, progress = FALSE)
  expect_length(g$init_loglik, 4L)
  expect_identical(g$init_loglik[1:2], f$init_loglik)
  expect_identical(g$control$hc_starts, c("ward", "model"))
  expect_identical(f$control$hc_starts, "none")
  # no hierarchical start for other inits, K = 1, stochastic training
  expect_length(fit_mixture(X, K = 2, seed = 1, n_init = 2, init = "kmeanspp",
                            progress = FALSE)$init_loglik, 2L)
  expect_length(fit_mixture(X, K = 1, seed = 1, n_init = 2, progress = FALSE)$init_loglik, 2L)
  expect_error(with_hc_max("a", fit_mixture(X, K = 2, seed = 1, progress = FALSE)),
               class = "sparsevi_error_argument")
})

test_that("K: a value that is not a whole number in range is named; duplicates dropped with a message", {
  expect_error(fit_mixture(faithful, K = c(5, Inf), progress = FALSE),
               "K\\[2\\] = Inf", class = "sparsevi_error_argument")
  expect_error(fit_mixture(faithful, K = c(5, 3e9), progress = FALSE),
               "3e\\+09", class = "sparsevi_error_argument")
  expect_error(fit_mixture(faithful, K = 3e9, progress = FALSE), "3e\\+09",
               class = "sparsevi_error_argument")
  expect_error(fit_mixture(faithful, K = c(2, NA), progress = FALSE), "NA",
               class = "sparsevi_error_argument")
  expect_message(f <- fit_mixture(faithful, K = c(2, 2), seed = 1, progress = FALSE),
                 "repeats 2")
  expect_identical(f$K, 2L)
  expect_equal(f$loglik, fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)$loglik)
})

test_that("a K grid names the K of fits that did not converge, and its table says which", {
  w <- NULL
  f <- withCallingHandlers(
    fit_mixture(faithful, K = 1:3, passes = 2, seed = 1, progress = FALSE),
    sparsevi_warning_unconverged = function(cnd) {
      w <<- c(w, conditionMessage(cnd))
      invokeRestart("muffleWarning")
    })
  expect_length(w, 1L) # one warning for the grid, not one per K
  un <- f$bic$K[!f$bic$converged]
  expect_true(length(un) >= 1L)
  for (k in un) expect_match(w, sprintf("K = %d \\(last relative change", k))
  expect_match(w, sprintf("K = %d, chosen by BIC", f$K))
  expect_match(paste(capture.output(print(f)), collapse = "\n"), "converged")
})

test_that("a column in small units beside large ones gives the same fit (issue 39)", {
  # the Wishart prior takes each column's own spread: a column 1e-5 times
  # the others' units changes the log-likelihood by N log(1e5) and nothing
  # else (its spread was floored at 1e-6 of the widest column's, which
  # inflated its prior variance)
  X <- as.matrix(iris[, 1:4])
  X2 <- X
  X2[, 2] <- X2[, 2] * 1e-5
  for (cov in c("full", "tied")) {
    f1 <- fit_mixture(X, K = 3, covariance = cov, seed = 1, progress = FALSE)
    f2 <- fit_mixture(X2, K = 3, covariance = cov, seed = 1, progress = FALSE)
    expect_identical(f2$classification, f1$classification)
    # (within 1e-5: `tol` is relative to the objective, which the units shift)
    expect_equal(f2$loglik, f1$loglik + 150 * log(1e5), tolerance = 1e-5)
    expect_equal(sparsevi:::unpack_lower(f2$hyper$B0, 4)[2, 2],
                 f2$hyper$nu0 * 0.003 * mean((X2[, 2] - mean(X2[, 2]))^2))
  }
})

test_that("extreme scales: overflow and underflow are said, with rescaling, not a constant column", {
  X <- as.matrix(faithful)
  for (lik in c("gaussian", "diag_gaussian")) {
    expect_error(fit_mixture(X * 1e300, K = 2, likelihood = lik, progress = FALSE),
                 "too large.*Rescale", class = "sparsevi_error_scale")
    expect_error(fit_mixture(X * 1e-300, K = 2, likelihood = lik, progress = FALSE),
                 "too small.*Rescale", class = "sparsevi_error_scale")
  }
  expect_error(fit_vdp(X * 1e-160, progress = FALSE), "too small.*Rescale",
               class = "sparsevi_error_scale")
  expect_error(fit_vdp(X * 1e300, progress = FALSE), "too large.*Rescale",
               class = "sparsevi_error_scale")
  # small but representable data fit as the data do: the log-likelihood
  # moves by N D log(c) (the prior and the starts scale with the data)
  f1 <- fit_mixture(X, K = 2, seed = 1, progress = FALSE)
  f2 <- fit_mixture(X * 1e-10, K = 2, seed = 1, progress = FALSE)
  expect_equal(f2$loglik, f1$loglik + nrow(X) * 2 * log(1e10), tolerance = 1e-8)
  expect_identical(f2$classification, f1$classification)
})

test_that("coef() gives the parameters; residuals() and terms() say what to call instead", {
  f <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
  cf <- coef(f)
  expect_named(cf, c("weights", "means", "covariances"))
  expect_identical(cf$means, f$means)
  expect_identical(cf$covariances, f$covariances)
  fd <- fit_mixture(faithful, K = 2, likelihood = "diag_gaussian", seed = 1, progress = FALSE)
  expect_named(coef(fd), c("weights", "means", "variances"))
  expect_error(residuals(f), "fitted\\(fit\\)", class = "sparsevi_error_unsupported")
  expect_error(terms(f), "coef\\(fit\\)", class = "sparsevi_error_unsupported")
  v <- fit_vdp(as.matrix(faithful), seed = 1, progress = FALSE)
  expect_named(coef(v), c("weights", "tail_weight", "means", "covariances"))
  expect_error(terms(v), class = "sparsevi_error_unsupported")
  expect_error(residuals(v), class = "sparsevi_error_unsupported")
})

test_that("predict() and augment() pick the training columns of a data frame by name", {
  f <- fit_mixture(iris[, 1:4], K = 3, seed = 1, progress = FALSE)
  expect_identical(predict(f, iris), predict(f, iris[, 1:4]))
  expect_identical(predict(f, iris[, c(5, 4:1)], type = "density"),
                   predict(f, iris[, 1:4], type = "density"))
  a <- sparsevi:::augment.sparsevi_mixture(f, iris)
  expect_identical(a$Species, iris$Species)
  expect_identical(a$.cluster, predict(f, iris[, 1:4]))
  expect_error(predict(f, iris[, -1]), "Sepal.Length", class = "sparsevi_error_data")
  v <- fit_vdp(iris[, 1:4], seed = 1, progress = FALSE)
  expect_identical(predict(v, iris), predict(v, iris[, 1:4]))
  expect_identical(sparsevi:::augment.sparsevi_vdp(v, iris)$.cluster, predict(v, iris[, 1:4]))
})

test_that("covariance: mclust's names are synonyms, \"diag\" is likelihood = \"diag_gaussian\", \"full\" the default", {
  X <- as.matrix(faithful)
  fit <- function(...) fit_mixture(X, K = 3, seed = 1, progress = FALSE, ...)
  f0 <- fit()
  expect_identical(f0$covariance_type, "full")
  expect_identical(fit(covariance = "full")$loglik, f0$loglik)
  expect_identical(fit(covariance = "VVV")$loglik, f0$loglik)
  ft <- fit(covariance = "tied")
  expect_identical(ft$likelihood, "tied_gaussian")
  expect_identical(fit(covariance = "EEE")$loglik, ft$loglik)
  fd <- fit(covariance = "diag")
  fl <- fit(likelihood = "diag_gaussian")
  expect_identical(fd$loglik, fl$loglik)
  expect_identical(fd$variances, fl$variances)
  expect_identical(fl$covariance_type, "diag")
  expect_identical(fit(covariance = "VVI")$loglik, fd$loglik)
  fs <- fit(covariance = "spherical")
  expect_identical(fit(covariance = "VII")$loglik, fs$loglik)
  # spherical: one variance per component, in every direction
  expect_true(all(apply(fs$variances, 1L, function(v) diff(range(v))) == 0))
  # tied: one covariance for all
  expect_equal(ft$covariances[, , 1], ft$covariances[, , 3])
  expect_error(fit(covariance = "round"), "full", class = "sparsevi_error_argument")
  expect_error(fit(covariance = "tied", likelihood = "diag_gaussian"),
               class = "sparsevi_error_argument")
  expect_error(fit(covariance = "tied", likelihood = "zm_gaussian"),
               class = "sparsevi_error_argument")
  # the zero-mean model keeps its likelihood (its covariance is full)
  fz <- fit(likelihood = "zm_gaussian")
  expect_identical(fz$likelihood, "zm_gaussian")
  expect_identical(fz$covariance_type, "full")
  expect_identical(fit(likelihood = "zm_gaussian", covariance = "VVV")$loglik, fz$loglik)
  expect_error(fit_mixture(simulate_lda(D = 12, V = 9, K = 2, seed = 3)$dtm, K = 2,
                           likelihood = "multinomial", covariance = "full"),
               "documents", class = "sparsevi_error_argument")
  # free parameters as mclust counts them (EEE, VVI, VII at K = 3, D = 2)
  expect_identical(attr(logLik(ft), "df"), 2 + 3 * 2 + 3)
  expect_identical(attr(logLik(fd), "df"), 2 + 3 * 2 + 3 * 2)
  expect_identical(attr(logLik(fs), "df"), 2 + 3 * 2 + 3)
})

test_that("tied and spherical models reduce to the full and diagonal ones where they coincide", {
  X <- as.matrix(faithful)
  # one component: a tied covariance is a full one
  a <- fit_mixture(X, K = 1, seed = 1, progress = FALSE)
  b <- fit_mixture(X, K = 1, covariance = "tied", seed = 1, progress = FALSE)
  expect_equal(b$loglik, a$loglik, tolerance = 1e-12)
  expect_equal(b$trace$objective, a$trace$objective, tolerance = 1e-12)
  expect_equal(b$covariances, a$covariances, tolerance = 1e-12)
  # one dimension: a spherical variance is a diagonal one (K = 3 on the
  # eruptions has a flat likelihood, every start within 1.2 nats; the fit
  # from the model-based start creeps: tol = 1e-5 converges in 200 laps)
  x <- X[, 1, drop = FALSE]
  a <- fit_mixture(x, K = 3, covariance = "diag", seed = 1, tol = 1e-5, progress = FALSE)
  b <- fit_mixture(x, K = 3, covariance = "spherical", seed = 1, tol = 1e-5, progress = FALSE)
  expect_equal(b$loglik, a$loglik, tolerance = 1e-10)
  expect_equal(b$trace$objective, a$trace$objective, tolerance = 1e-10)
  expect_equal(b$variances, a$variances, tolerance = 1e-10)
})

test_that("tied and spherical fits: density and held-out score from their parameters", {
  sim <- simulate_mixture(N = 300, D = 3, K = 3, seed = 5)
  test <- simulate_mixture(N = 50, D = 3, K = 3, seed = 6)$X
  for (cv in c("tied", "spherical")) {
    f <- fit_mixture(sim$X, K = 3, covariance = cv, seed = 1, progress = FALSE)
    cf <- coef(f)
    S <- if (cv == "tied") cf$covariances else
      array(apply(cf$variances, 1L, function(v) diag(v, 3)), c(3, 3, 3))
    dens <- rowSums(sapply(1:3, function(k) {
      Y <- sweep(test, 2, cf$means[k, ])
      Si <- solve(S[, , k])
      cf$weights[k] * exp(-0.5 * rowSums((Y %*% Si) * Y) -
                            0.5 * as.numeric(determinant(2 * pi * S[, , k])$modulus))
    }))
    expect_equal(predict(f, test, type = "density"), dens, tolerance = 1e-10)
    expect_equal(heldout_loglik(f, test), mean(log(dens)), tolerance = 1e-10)
    expect_equal(f$loglik, sum(predict(f, sim$X, type = "density", log = TRUE)),
                 tolerance = 1e-10)
    g <- fit_mixture(sim$X, K = 3, covariance = cv, seed = 1, progress = FALSE,
                     heldout = test, passes = 5, n_init = 1)
    expect_equal(g$trace$heldout[nrow(g$trace)], heldout_loglik(g, test), tolerance = 1e-12)
    # the ELBO never decreases in memoized training
    expect_true(all(diff(g$trace$objective) >= -1e-9 * abs(g$trace$objective[-1])))
  }
})

test_that("K and covariance chosen together by BIC (faithful: tied, K = 3, as Mclust's EEE)", {
  f <- suppressWarnings(fit_mixture(faithful, K = 2:4, covariance = c("VVV", "EEE", "VVI", "VII"),
                                    seed = 1, progress = FALSE))
  expect_identical(f$covariance_type, "tied")
  expect_identical(f$K, 3L)
  expect_named(f$bic, c("K", "covariance", "loglik", "df", "BIC", "objective", "converged"))
  expect_identical(nrow(f$bic), 12L)
  expect_identical(f$bic$covariance[which.min(f$bic$BIC)], "tied")
  # Mclust(faithful): EEE, 3 components, log-likelihood -1126.326, BIC
  # -2314.316 (mclust's sign) with mclust 6.1.3
  # (the weak prior moves the point estimates by about 1e-3 nats)
  expect_equal(f$loglik, -1126.326, tolerance = 1e-5)
  expect_equal(stats::BIC(f), 2314.316, tolerance = 1e-5)
  out <- paste(capture.output(print(f)), collapse = "\n")
  expect_match(out, "covariance \"tied\"")
  expect_match(out, "spherical")
  # the BIC plot, and a grid over one structure keeps the old table
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_silent(plot(f, type = "bic"))
  expect_silent(plot(f, faithful))
  g <- fit_mixture(faithful, K = 1:3, seed = 1, progress = FALSE)
  expect_named(g$bic, c("K", "loglik", "df", "BIC", "objective", "converged"))
  expect_silent(plot(g, which = "bic"))
  expect_error(plot(fit_mixture(faithful, K = 2, seed = 1, progress = FALSE), which = "bic"),
               class = "sparsevi_error_argument")
})

test_that("the BIC choice matches Mclust's on faithful", {
  skip_if_not_installed("mclust")
  mclustBIC <- mclust::mclustBIC # Mclust() looks it up in the caller
  m <- mclust::Mclust(faithful, G = 1:9, modelNames = c("VVV", "EEE", "VVI", "VII"),
                      verbose = FALSE)
  f <- suppressWarnings(fit_mixture(faithful, K = 1:9, covariance = c("VVV", "EEE", "VVI", "VII"),
                                    seed = 1, progress = FALSE))
  expect_identical(f$K, as.integer(m$G))
  expect_identical(names(mix_covariance_synonyms)[match(f$covariance_type, mix_covariance_synonyms)],
                   m$modelName)
  expect_equal(f$loglik, m$loglik, tolerance = 1e-5)
  expect_gte(ari(f$classification, m$classification), 0.99)
})

test_that("tied and spherical fits: the same for any thread count, sparse L, update() and stochastic training", {
  sim <- simulate_mixture(N = 700, D = 4, K = 5, seed = 2)
  for (cv in c("tied", "spherical")) {
    a <- fit_mixture(sim$X, K = 5, covariance = cv, seed = 3, progress = FALSE, n_init = 2,
                     threads = 1)
    b <- fit_mixture(sim$X, K = 5, covariance = cv, seed = 3, progress = FALSE, n_init = 2,
                     threads = 2)
    expect_identical(b$loglik, a$loglik)
    expect_identical(b$means, a$means)
    expect_gte(ari(a$classification, sim$cluster), 0.9)
    s <- fit_mixture(sim$X, K = 5, L = 2, covariance = cv, seed = 3, progress = FALSE)
    expect_true(all(diff(s$trace$objective) >= -1e-9 * abs(s$trace$objective[-1])))
    u <- update(s, sim$X, passes = 2)
    expect_identical(u$covariance_type, cv)
    expect_identical(nrow(u$trace), nrow(s$trace) + 2L)
    st <- fit_mixture(sim$X, K = 5, covariance = cv, global = "stochastic", passes = 5,
                      seed = 3, progress = FALSE)
    expect_true(is.finite(st$loglik))
  }
})

test_that("the hierarchical tree is built once for a K grid, with the same fits", {
  X <- as.matrix(iris[, 1:4])
  rm(list = ls(mix_hc_cache), envir = mix_hc_cache)
  cold <- fit_mixture(X, K = 3, seed = 2, progress = FALSE)
  fit_mixture(faithful, K = 2, seed = 1, progress = FALSE) # another tree in between
  other <- fit_mixture(X, K = 4, seed = 2, progress = FALSE)
  warm <- fit_mixture(X, K = 3, seed = 2, progress = FALSE) # the tree of `other`
  expect_identical(warm$loglik, cold$loglik)
  expect_identical(warm$classification, cold$classification)
  expect_identical(warm$init_loglik, cold$init_loglik)
  g <- fit_mixture(X, K = 3:4, seed = 2, progress = FALSE)
  expect_identical(g$bic$loglik, c(cold$loglik, other$loglik))
})

test_that("option sparsevi.mix_sub_start: the default starts run on a subsample of large data", {
  sim <- simulate_mixture(N = 6000, D = 3, K = 4, seed = 8)
  plain <- fit_mixture(sim$X, K = 4, seed = 1, progress = FALSE)
  expect_null(plain$control$sub_start)
  old <- options(sparsevi.mix_sub_start = 3000, sparsevi.mix_sub_size = 600)
  on.exit(options(old))
  a <- fit_mixture(sim$X, K = 4, seed = 1, progress = FALSE)
  expect_identical(a$control$sub_start, 600L)
  expect_identical(a$control$n_init, 10L) # as many starts as for 600 points
  expect_length(a$init_loglik, 12L)       # and the two hierarchical ones
  expect_gte(ari(a$classification, sim$cluster), 0.95)
  expect_lt(abs(a$loglik - plain$loglik) / abs(plain$loglik), 1e-4)
  expect_true(a$converged)
  expect_identical(fit_mixture(sim$X, K = 4, seed = 1, progress = FALSE)$loglik, a$loglik)
  # given starts, other inits, stochastic training and small data: no subsample
  expect_null(fit_mixture(sim$X, K = 4, seed = 1, n_init = 2, progress = FALSE)$control$sub_start)
  expect_null(fit_mixture(sim$X, K = 4, seed = 1, init = "kmeanspp",
                          progress = FALSE)$control$sub_start)
  expect_null(fit_mixture(sim$X[1:2000, ], K = 4, seed = 1, progress = FALSE)$control$sub_start)
  # a K grid and the other covariance structures
  g <- fit_mixture(sim$X, K = 3:5, covariance = c("full", "spherical"), seed = 1,
                   progress = FALSE)
  expect_identical(g$K, 4L)
  options(sparsevi.mix_sub_start = "a")
  expect_error(fit_mixture(sim$X, K = 2, progress = FALSE), "mix_sub_start",
               class = "sparsevi_error_argument")
})

test_that("a K grid reuses its data between fits: the kept fit equals the one fitted alone", {
  X <- as.matrix(iris[, 1:4])
  g <- fit_mixture(X, K = 2:4, covariance = c("full", "tied"), seed = 2, progress = FALSE)
  s <- fit_mixture(X, K = g$K, covariance = g$covariance_type, seed = 2, progress = FALSE)
  for (nm in c("weights", "means", "covariances", "loglik", "state", "classification",
               "uncertainty", "z", "init_loglik", "best_init")) {
    expect_identical(g[[nm]], s[[nm]])
  }
  expect_false(mix_grid$active)
  expect_null(mix_grid$data)
  # an error inside the grid leaves nothing behind
  expect_error(fit_mixture(X, K = c(2, 500), progress = FALSE), class = "sparsevi_error_argument")
  expect_false(mix_grid$active)
  expect_null(mix_grid$train)
  # documents and the zero-mean model through a grid
  d <- simulate_lda(D = 30, V = 20, K = 3, seed = 3)$dtm
  gd <- fit_mixture(d, K = 2:3, likelihood = "multinomial", seed = 1, progress = FALSE)
  expect_identical(gd$loglik, fit_mixture(d, K = gd$K, likelihood = "multinomial", seed = 1,
                                          progress = FALSE)$loglik)
  gz <- fit_mixture(X, K = 2:3, likelihood = "zm_gaussian", seed = 1, progress = FALSE)
  sz <- fit_mixture(X, K = gz$K, likelihood = "zm_gaussian", seed = 1, progress = FALSE)
  expect_identical(gz$classification, sz$classification)
})
