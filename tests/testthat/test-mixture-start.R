# The model-based hierarchical start of fit_mixture() (src/mix-hc.c,
# mix_mbhc_tree() in R/mixture-start.R).

test_that("the model-based agglomeration's C kernel matches the R reference", {
  set.seed(1)
  cases <- list(
    matrix(rnorm(24), 12, 2),
    # three groups: clusters grow past D points, so the determinant counts
    rbind(matrix(rnorm(21, 0, 0.3), 7, 3), matrix(rnorm(21, 3, 0.5), 7, 3),
          matrix(rnorm(15, c(-3, 0, 2), 1), 5, 3, byrow = TRUE)),
    # one column: clusters of more than one point use the determinant
    matrix(c(rnorm(8), rnorm(6, 5)), 14, 1))
  for (Z in cases) {
    alpha <- mix_mbhc_alpha(Z)
    got <- .Call(ffi_mix_hc, Z, alpha, 1)
    want <- ref_mbhc(Z, alpha)
    expect_identical(got$merges, want$merges)
    expect_equal(got$cost, want$cost, tolerance = 1e-10)
  }
  # beta scales the trace term
  Z <- cases[[2]]
  expect_identical(.Call(ffi_mix_hc, Z, 0.5, 2)$merges, ref_mbhc(Z, 0.5, 2)$merges)
  # hostile arguments: internal errors, not crashes
  expect_error(.Call(ffi_mix_hc, Z[1, , drop = FALSE], 1, 1), "internal error")
  expect_error(.Call(ffi_mix_hc, Z, -1, 1), "internal error")
  expect_error(.Call(ffi_mix_hc, Z, 1, NA_real_), "internal error")
  Z[3, 2] <- NaN
  expect_error(.Call(ffi_mix_hc, Z, 1, 1), "internal error")
})

test_that("the model-based tree: its data, its cuts, and duplicated points", {
  X <- as.matrix(swiss)
  Z <- mix_mbhc_data(X)
  # the columns scaled, rotated and each scaled by 1 / sqrt(its singular value)
  sv <- svd(scale(X))
  expect_equal(abs(Z), abs(scale(X) %*% sv$v %*% diag(1 / sqrt(sv$d))), tolerance = 1e-10,
               ignore_attr = TRUE)
  # a constant column and a direction of no variance (a sum of two
  # columns) are dropped
  Y <- cbind(X[, 1:3], 7, X[, 1] + X[, 2])
  expect_identical(ncol(mix_mbhc_data(Y)), 3L)
  expect_null(mix_mbhc_data(matrix(1, 5, 2)))
  tree <- mix_mbhc_tree(X)
  expect_identical(dim(tree$merges), c(46L, 2L))
  expect_true(all(tree$merges[, 1] < tree$merges[, 2]))
  # cuts: K clusters numbered by their first point, nested as K falls
  prev <- NULL
  for (K in 6:1) {
    cl <- mix_mbhc_cut(tree, K)
    expect_identical(sort(unique(cl)), seq_len(K))
    expect_identical(cl[!duplicated(cl)], seq_len(K))
    if (!is.null(prev)) expect_true(all(tapply(cl, prev, function(v) length(unique(v))) == 1L))
    prev <- cl
  }
  expect_identical(mix_mbhc_cut(tree, 47), seq_len(47))
  # duplicated points merge before anything else (their merge lowers the
  # criterion)
  D <- rbind(X, X[5, ], X[9, ])
  m <- mix_mbhc_tree(D)$merges
  expect_setequal(list(m[1, ], m[2, ]), list(c(5L, 48L), c(9L, 49L)))
})

test_that("the model-based start does not depend on the order of the points", {
  X <- as.matrix(USArrests)
  data <- mix_data(X, "gaussian", "X")
  h <- mix_hyper(data, "gaussian", "dirichlet", 3, 1, NULL, 0.003, 0.01, 0.1)
  perm <- rev(seq_len(50))
  a <- mix_hc_state(data, list(data = data$data), h, 3L, seq_len(50), "model")
  b <- mix_hc_state(data, list(data = data$data[perm, ]), h, 3L, perm, "model")
  expect_identical(a$N, b$N)
  expect_equal(a$S, b$S, tolerance = 1e-12)
  # its partition: the tree of the data in the original order, cut at 3
  cl <- mix_mbhc_cut(mix_mbhc_tree(data$data), 3L)
  expect_identical(sort(a$N), sort(as.double(tabulate(cl, 3L))))
})

test_that("option sparsevi.mix_hc_kinds chooses the hierarchical starts and is checked", {
  X <- as.matrix(faithful)
  both <- fit_mixture(X, K = 2, seed = 1, n_init = 2, progress = FALSE)
  expect_identical(both$control$hc_starts, c("ward", "model"))
  old <- options(sparsevi.mix_hc_kinds = "ward")
  on.exit(options(old))
  ward <- fit_mixture(X, K = 2, seed = 1, n_init = 2, progress = FALSE)
  expect_length(ward$init_loglik, 3L)
  expect_identical(ward$init_loglik, both$init_loglik[1:3])
  options(sparsevi.mix_hc_kinds = "model")
  model <- fit_mixture(X, K = 2, seed = 1, n_init = 2, progress = FALSE)
  expect_identical(model$init_loglik, both$init_loglik[c(1:2, 4)])
  options(sparsevi.mix_hc_kinds = "average")
  expect_error(fit_mixture(X, K = 2, seed = 1, progress = FALSE),
               class = "sparsevi_error_argument")
})

test_that("small data: the model-based start reaches the partition of mclust's start", {
  # swiss (47 points, D = 6, K = 3), LifeCycleSavings (50 points, D = 5,
  # K = 2) and six columns of mtcars (32 points, D = 6, K = 3, a component
  # of D + 1 points): every seed keeps the fit from the model-based start
  # (the 12th), which the k-means and Ward starts miss
  # (inst/bench/results/mixture.txt)
  mt <- mtcars[, c("mpg", "disp", "hp", "drat", "wt", "qsec")]
  for (case in list(list(X = swiss, K = 3L), list(X = LifeCycleSavings, K = 2L),
                    list(X = mt, K = 3L))) {
    cl0 <- mix_mbhc_cut(mix_mbhc_tree(as.matrix(case$X)), case$K)
    for (s in 1:3) {
      f <- fit_mixture(case$X, K = case$K, seed = s, progress = FALSE)
      expect_identical(f$best_init, 12L)
      expect_gt(ari(f$classification, cl0), 0.8)
    }
  }
})
