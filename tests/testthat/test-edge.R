# Numeric edge cases (issue 11): extreme documents, priors, K, counts and
# degenerate point clouds. No NaN or Inf may appear in any fit, trace or
# prediction (NA is allowed where a quantity was not computed).

# Every double inside x (recursing into lists and attributes-free matrices)
# is neither NaN nor infinite; returns the offending paths.
non_finite_paths <- function(x, path = "fit") {
  if (is.list(x)) {
    out <- character(0)
    for (i in seq_along(x)) {
      nm <- names(x)[i]
      if (is.null(nm) || !nzchar(nm)) nm <- as.character(i)
      out <- c(out, non_finite_paths(x[[i]], paste0(path, "$", nm)))
    }
    return(out)
  }
  if (is.double(x) && any(is.nan(x) | is.infinite(x))) return(path)
  character(0)
}

expect_all_finite <- function(x, label = "object") {
  bad <- non_finite_paths(x, label)
  expect(length(bad) == 0L, sprintf("NaN or Inf in: %s", paste(bad, collapse = ", ")))
}

edge_tiny <- function() simulate_lda(D = 10, V = 12, K = 3, doc_length = 20, seed = 2)$dtm

test_that("a document of a million tokens gives finite fits and predictions", {
  x <- edge_tiny()
  x$count[x$doc_ptr[1] + 1L] <- 1e6
  for (loc in c("vb", "cvb0")) {
    fit <- fit_lda(x, K = 3, local = loc, passes = 2, seed = 1, progress = FALSE)
    expect_all_finite(unclass(fit), loc)
    p <- predict(fit, x, seed = 1)
    expect_all_finite(p, "predict")
    expect_equal(unname(rowSums(p)), rep(1, nrow(x)), tolerance = 1e-8)
  }
  # the Gibbs engine expands tokens: keep that one to 1e5
  x$count[x$doc_ptr[1] + 1L] <- 1e5
  fit <- fit_lda(x, K = 3, local = "gibbs", passes = 1, seed = 1, progress = FALSE)
  expect_all_finite(unclass(fit), "gibbs")
})

test_that("alpha and eta of 1e-6 give finite fits, traces and predictions", {
  x <- edge_tiny()
  for (loc in c("vb", "cvb0", "gibbs")) {
    fit <- fit_lda(x, K = 3, local = loc, alpha = 1e-6, eta = 1e-6, passes = 2, seed = 1,
                   progress = FALSE)
    expect_all_finite(unclass(fit), loc)
    expect_all_finite(predict(fit, x, seed = 1), paste(loc, "predict"))
  }
  sp <- split_heldout(x, n_test = 3, seed = 1)
  fit <- fit_lda(sp$train, K = 3, alpha = 1e-6, eta = 1e-6, passes = 2, seed = 1,
                 progress = FALSE)
  expect_all_finite(heldout_loglik(fit, sp$test), "heldout")
})

test_that("K = 2000 on a 2000-term vocabulary gives a finite fit", {
  x <- simulate_lda(D = 12, V = 2000, K = 2, doc_length = 30, seed = 3)$dtm
  fit <- fit_lda(x, K = 2000, L = 4, passes = 1, seed = 1, progress = FALSE)
  expect_all_finite(unclass(fit), "K2000")
  p <- predict(fit, x[1:2, ], seed = 1)
  expect_all_finite(p, "predict")
  expect_equal(dim(p), c(2L, 2000L))
})

test_that("counts of 1e9 give finite fits", {
  x <- edge_tiny()
  x$count <- x$count * 1e8 # up to about 1e9
  expect_gte(max(x$count), 1e8)
  fit <- fit_lda(x, K = 3, passes = 2, seed = 1, progress = FALSE)
  expect_all_finite(unclass(fit), "vb")
  expect_all_finite(predict(fit, x, seed = 1), "predict")
  fm <- fit_mixture(x, K = 2, likelihood = "multinomial", passes = 2, seed = 1,
                    progress = FALSE)
  expect_all_finite(unclass(fm), "multinomial mixture")
})

test_that("near-duplicate points and tiny variances give finite Gaussian fits", {
  u <- uniform_source(5)
  base <- matrix(stats::qnorm(u(60 * 2)), 60, 2)
  near_dup <- base[rep(1:3, 20), ] + 1e-9 * matrix(stats::qnorm(u(120)), 60, 2)
  tiny_var <- base * 1e-8
  singular <- cbind(base[, 1], 2 * base[, 1] + 1e-12 * base[, 2])
  for (nm in c("near_dup", "tiny_var", "singular")) {
    X <- get(nm)
    for (lik in c("gaussian", "diag_gaussian")) {
      fm <- tryCatch(fit_mixture(X, K = 3, likelihood = lik, passes = 3, seed = 1,
                                 progress = FALSE),
                     sparsevi_error = function(e) NULL)
      if (is.null(fm)) next # a classed refusal is acceptable
      expect_all_finite(unclass(fm), paste(nm, lik))
      expect_all_finite(predict(fm, X, type = "responsibilities"), paste(nm, lik, "predict"))
      expect_all_finite(heldout_loglik(fm, X), paste(nm, lik, "heldout"))
    }
    fv <- tryCatch(suppressWarnings(fit_vdp(X, seed = 1, progress = FALSE, max_iter = 20)),
                   sparsevi_error = function(e) NULL)
    if (!is.null(fv)) {
      expect_all_finite(unclass(fv), paste(nm, "vdp"))
      expect_all_finite(predict(fv, X, type = "density", log = TRUE), paste(nm, "vdp predict"))
    }
  }
})

test_that("a single point and K = 1 give finite mixtures", {
  X <- simulate_mixture(N = 20, D = 2, K = 1, seed = 4)$X
  fm <- fit_mixture(X, K = 1, passes = 2, seed = 1, progress = FALSE)
  expect_all_finite(unclass(fm), "K1")
  expect_all_finite(predict(fm, X[1, , drop = FALSE], type = "density"), "one point")
})
