# Fast-VDP (fit_vdp): oracle, invariants, recovery, reproducibility, errors.

vdp_data <- function(N = 600, D = 3, K = 3, separation = 6, seed = 1) {
  simulate_mixture(N = N, D = D, K = K, separation = separation, seed = seed)
}

test_that("the free energy matches the pure-R reference (eq. 5) without the tree", {
  sim <- vdp_data(N = 300, D = 3, K = 3)
  fit <- fit_vdp(sim$X, kdtree = FALSE, seed = 1, threads = 1, progress = FALSE)
  ref <- ref_vdp_free_energy(fit, sim$X)
  # the fit's F has q one step behind the final globals: never below the
  # optimum-q value, and equal to it at convergence
  expect_gte(fit$free_energy, ref - 1e-8 * abs(ref))
  expect_lt(fit$free_energy - ref, 1e-5 * abs(ref))
})

test_that("the tree's free energy (eq. 19) bounds the exact one from above", {
  sim <- vdp_data(N = 800, D = 3, K = 4, separation = 4, seed = 2)
  fit <- fit_vdp(sim$X, kdtree = TRUE, seed = 1, threads = 1, progress = FALSE,
                 expand_sd = 0)
  ref <- ref_vdp_free_energy(fit, sim$X)
  expect_gte(fit$free_energy, ref - 1e-8 * abs(ref))
})

test_that("the free energy never rises: splits, updates and tree expansions", {
  sim <- vdp_data(N = 1500, D = 4, K = 5, separation = 3, seed = 3)
  for (tree in c(TRUE, FALSE)) {
    fit <- fit_vdp(sim$X, kdtree = tree, seed = 2, threads = 1, progress = FALSE)
    tr <- fit$trace
    expect_true(all(diff(tr$free_energy) <= 1e-9 * abs(fit$free_energy)))
    # accepted splits: F at the end of each truncation level decreases with T
    last <- tapply(tr$free_energy, tr$T, utils::tail, 1)
    expect_true(all(diff(last) < 0))
    expect_true(all(diff(tr$T) >= 0))
    if (tree) {
      pre <- which(tr$phase == "pre_expand")
      expect_gt(length(pre), 0)
      expect_true(all(tr$phase[pre + 1] == "expand"))
      expect_true(all(tr$free_energy[pre + 1] <= tr$free_energy[pre]))
      expect_true(all(diff(tr$outer_nodes[tr$phase != "split"]) >= 0 |
                        diff(tr$T[tr$phase != "split"]) != 0))
    }
  }
})

test_that("ten well-separated planted Gaussians are found as ten components", {
  sim <- simulate_mixture(N = 3000, D = 4, K = 10, separation = 8, seed = 11)
  fit <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE)
  expect_equal(fit$T, 10L)
  cl <- predict(fit, sim$X)
  tab <- table(cl, sim$cluster)
  # each planted cluster maps to its own component, nearly without error
  expect_equal(sum(apply(tab, 2, max)) / nrow(sim$X), 1, tolerance = 0.01)
  expect_equal(length(unique(apply(tab, 2, which.max))), 10L)
  expect_lt(fit$tail_weight, 0.01)
})

test_that("with and without the tree the free energies agree within 2%", {
  sim <- simulate_mixture(N = 4000, D = 8, K = 6, separation = 3, seed = 5)
  f_tree <- fit_vdp(sim$X, kdtree = TRUE, seed = 1, threads = 1, progress = FALSE)
  f_flat <- fit_vdp(sim$X, kdtree = FALSE, seed = 1, threads = 1, progress = FALSE)
  ratio <- 1 + (f_tree$free_energy - f_flat$free_energy) / abs(f_flat$free_energy)
  expect_lt(abs(ratio - 1), 0.02)
  expect_lt(f_tree$n_outer_nodes, nrow(sim$X))
})

test_that("fits are reproducible by seed and identical across thread counts", {
  sim <- vdp_data(N = 1200, D = 3, K = 4, separation = 3, seed = 7)
  a <- fit_vdp(sim$X, seed = 42, threads = 1, progress = FALSE)
  b <- fit_vdp(sim$X, seed = 42, threads = 1, progress = FALSE)
  c2 <- fit_vdp(sim$X, seed = 42, threads = 2, progress = FALSE)
  strip <- function(f) f[setdiff(names(f), c("trace", "timings", "control", "call"))]
  expect_identical(strip(a), strip(b))
  expect_identical(strip(a), strip(c2))
  expect_identical(a$trace$free_energy, c2$trace$free_energy)
  fa <- fit_vdp(sim$X, kdtree = FALSE, seed = 3, threads = 1, progress = FALSE)
  fb <- fit_vdp(sim$X, kdtree = FALSE, seed = 3, threads = 2, progress = FALSE)
  expect_identical(strip(fa), strip(fb))
})

test_that("a fit survives saveRDS()/readRDS() and predicts the same", {
  sim <- vdp_data(N = 400, D = 2, K = 3, seed = 8)
  fit <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE)
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  back <- readRDS(path)
  expect_s3_class(back, c("sparsevi_vdp", "sparsevi_mixture", "sparsevi_fit"))
  expect_identical(predict(back, sim$X, type = "density"),
                   predict(fit, sim$X, type = "density"))
  expect_identical(predict(back, sim$X), predict(fit, sim$X))
})

test_that("predict gives responsibilities with the tail, clusters and eq. 7 densities", {
  sim <- vdp_data(N = 500, D = 2, K = 3, seed = 9)
  fit <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE)
  R <- predict(fit, sim$X, type = "responsibilities")
  expect_equal(dim(R), c(500L, fit$T + 1L))
  expect_equal(colnames(R)[fit$T + 1L], "tail")
  expect_equal(unname(rowSums(R)), rep(1, 500), tolerance = 1e-12)
  cl <- predict(fit, sim$X, type = "cluster")
  expect_type(cl, "integer")
  expect_equal(cl, unname(max.col(R[, seq_len(fit$T), drop = FALSE], "first")))
  d <- predict(fit, sim$X, type = "predictive")
  expect_true(all(d > 0))
  expect_equal(log(d), predict(fit, sim$X, type = "predictive", log = TRUE))
  expect_equal(heldout_loglik(fit, sim$X), mean(log(d)))
  expect_equal(sum(fit$weights) + fit$tail_weight, 1)
})

test_that("predict in C matches the pure-R reference, for any thread count", {
  sim <- vdp_data(N = 700, D = 3, K = 4, separation = 3, seed = 12)
  fit <- fit_vdp(sim$X[1:500, ], seed = 1, threads = 1, progress = FALSE)
  X <- sim$X[501:700, ]
  # far points, where the infinite tail takes the responsibility
  X <- rbind(X, matrix(c(1e3, -1e3, 5e2), 2, 3, byrow = TRUE))
  for (type in c("responsibilities", "predictive")) {
    ref <- ref_vdp_predict(fit, X, if (type == "predictive") "density" else type, log = TRUE)
    got1 <- predict(fit, X, type = type, log = TRUE, threads = 1)
    got2 <- predict(fit, X, type = type, log = TRUE, threads = 2)
    expect_equal(got1, ref, tolerance = 1e-10)
    expect_identical(got1, got2)
  }
  expect_identical(predict(fit, X, threads = 1), ref_vdp_predict(fit, X))
  expect_equal(predict(fit, X, type = "predictive"),
               ref_vdp_predict(fit, X, "density"), tolerance = 1e-10)
  expect_error(predict(fit, X, threads = 0), class = "sparsevi_error_argument")
})

test_that("q(z) in C matches the reference on the log scale, under a prior with a1 != a2", {
  # E ln pi (eqs. 3-4) and the tail's sum (eq. 6) show only in the small
  # responsibilities, which a comparison of the probabilities cannot see
  # (waldo compares values far below the tolerance absolutely): compare their
  # logs, with a1 != a2 so that the two Beta parameters cannot be swapped
  sim <- vdp_data(N = 300, D = 2, K = 3, separation = 3, seed = 14)
  fit <- fit_vdp(sim$X, a2 = 3, seed = 1, threads = 1, progress = FALSE)
  X <- rbind(sim$X[1:50, ], cbind(seq(0, 40, by = 0.5), 0))
  got <- predict(fit, X, type = "responsibilities", threads = 1)
  ref <- ref_vdp_predict(fit, X, "responsibilities")
  keep <- got > 1e-300 & ref > 1e-300
  expect_gt(mean(keep[, "tail"]), 0.25)
  expect_equal(log(got[keep]), log(ref[keep]), tolerance = 1e-10)
  expect_equal(predict(fit, X, type = "predictive", log = TRUE),
               ref_vdp_predict(fit, X, "density", log = TRUE), tolerance = 1e-10)
})

test_that("the predictive density (eq. 7, tail included) integrates to one", {
  x <- c(-4, -3.9, -3.5, -3, 0.1, 0.3, 0.5, 1, 2.8, 3, 3.3, 4)
  sim <- simulate_mixture(N = 200, D = 1, K = 2, separation = 8, seed = 4)
  fit <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE)
  f <- function(x) predict(fit, matrix(x, ncol = 1), type = "predictive")
  rng <- range(sim$X)
  span <- diff(rng)
  total <- stats::integrate(f, rng[1] - 200 * span, rng[2] + 200 * span,
                            subdivisions = 2000L, rel.tol = 1e-8)$value
  expect_equal(total, 1, tolerance = 1e-4)
})

test_that("print, summary and plot work", {
  sim <- vdp_data(N = 300, D = 2, K = 2, seed = 10)
  fit <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE)
  expect_output(print(fit), "sparsevi_vdp")
  expect_output(print(summary(fit)), "components")
  expect_s3_class(summary(fit), "summary.sparsevi_vdp")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit), fit)
  # the common trace schema first (R/train.R), Fast-VDP's columns after it
  expect_named(fit$trace, c(sparsevi:::train_trace_columns, "free_energy", "T",
                            "outer_nodes", "phase"))
  expect_equal(dim(fit$covariances), c(2L, 2L, fit$T))
  expect_equal(dim(fit$means), c(fit$T, 2L))
})

test_that("bad input gets classed errors naming the argument", {
  X <- vdp_data(N = 100, D = 2, K = 2)$X
  Xna <- X
  Xna[3, 1] <- NA
  Xinf <- X
  Xinf[2, 2] <- Inf
  Xconst <- cbind(X, 5)
  expect_error(fit_vdp(Xna, progress = FALSE), class = "sparsevi_error_data")
  expect_error(fit_vdp(Xinf, progress = FALSE), class = "sparsevi_error_data")
  expect_error(fit_vdp(Xconst, progress = FALSE), "constant",
               class = "sparsevi_error_data")
  expect_error(fit_vdp(X[1:3, ], progress = FALSE), "too few",
               class = "sparsevi_error_data")
  expect_error(fit_vdp(letters, progress = FALSE), class = "sparsevi_error_argument")
  expect_error(fit_vdp(X, candidates = 0, progress = FALSE), "candidates",
               class = "sparsevi_error_argument")
  expect_error(fit_vdp(X, tol = 2, progress = FALSE), "tol",
               class = "sparsevi_error_argument")
  expect_error(fit_vdp(X, a1 = -1, progress = FALSE), "a1",
               class = "sparsevi_error_argument")
  expect_error(fit_vdp(X, nu0 = 1, progress = FALSE), "nu0",
               class = "sparsevi_error_argument")
  expect_error(fit_vdp(X, cov0 = diag(3), progress = FALSE), "cov0",
               class = "sparsevi_error_argument")
  expect_error(fit_vdp(X, cov0 = -diag(2), progress = FALSE), "positive definite",
               class = "sparsevi_error_data")
  expect_error(fit_vdp(X, leafsize = 3, progress = FALSE), "Unknown",
               class = "sparsevi_error_argument")
  expect_error(fit_vdp(X, kdtree = NA, progress = FALSE), "kdtree",
               class = "sparsevi_error_argument")
  fit <- fit_vdp(X, seed = 1, threads = 1, progress = FALSE)
  expect_error(predict(fit, X[, 1, drop = FALSE]), class = "sparsevi_error_data")
  expect_error(predict(fit, X, type = "topics"), class = "sparsevi_error_argument")
  # without newdata: the training points, from the fit; densities need data
  expect_identical(predict(fit), fitted(fit))
  expect_error(predict(fit, type = "density"), "newdata", class = "sparsevi_error_argument")
})

test_that("predict() without newdata gives the training points, as ?predict.sparsevi_vdp says", {
  sim <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
  fit <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE)
  expect_identical(predict(fit), predict(fit, sim$X))
  expect_equal(predict(fit, type = "responsibilities"),
               predict(fit, sim$X, type = "responsibilities"))
  expect_error(predict(fit, type = "predictive"), "newdata", class = "sparsevi_error_argument")
  # the help page says so (it said `newdata` was required: issue 37)
  rd <- tools::Rd_db("sparsevi")[["predict.sparsevi_vdp.Rd"]]
  skip_if(is.null(rd), "help pages not installed")
  txt <- paste(utils::capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE))),
               collapse = " ")
  expect_false(grepl("newdata. is required", txt))
  expect_match(txt, "training points")
})

test_that("the lazily built tree gives the fit of the tree built at once", {
  # buckets (<= 256 points) are split only when the fit first asks for their
  # children; the nodes and statistics are those of the eager build
  sim <- simulate_mixture(N = 50000, D = 8, K = 4, separation = 6, seed = 14)
  lazy <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE)
  eager <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE, lazy_tree = FALSE)
  expect_identical(lazy$free_energy, eager$free_energy)
  expect_identical(lazy$trace$free_energy, eager$trace$free_energy)
  expect_identical(lazy$n_outer_nodes, eager$n_outer_nodes)
  expect_lt(lazy$n_tree_nodes, eager$n_tree_nodes)
  expect_identical(predict(lazy, sim$X), predict(eager, sim$X))
})

test_that("the tolerances are per point: a change of units changes nothing", {
  # F shifts by N D log(scale) with the units (the default prior scales with
  # the data), so a |F|-relative tolerance would not be unit-free
  sim <- simulate_mixture(N = 1500, D = 3, K = 5, separation = 4, seed = 13)
  for (kd in c(TRUE, FALSE)) {
    f1 <- fit_vdp(sim$X, kdtree = kd, seed = 1, threads = 1, progress = FALSE)
    f2 <- fit_vdp(1000 * sim$X, kdtree = kd, seed = 1, threads = 1, progress = FALSE)
    expect_equal(f2$T, f1$T)
    expect_equal(f2$free_energy - f1$free_energy, 1500 * 3 * log(1000),
                 tolerance = 1e-6)
    expect_identical(predict(f2, 1000 * sim$X), predict(f1, sim$X))
  }
})

test_that("data on extreme scales give the same components (faithful x 1e-100 to 1e100)", {
  # the principal directions of splits and tree nodes are found by power
  # iteration, whose squared norms overflowed at 1e100 (no split: K = 1)
  X <- as.matrix(faithful)
  f1 <- fit_vdp(X, seed = 1, threads = 1, progress = FALSE)
  expect_gt(f1$K, 1L)
  for (s in c(1e-100, 1e-50, 1e50, 1e100)) {
    for (kd in c(TRUE, FALSE)) {
      fs <- fit_vdp(s * X, kdtree = kd, seed = 1, threads = 1, progress = FALSE)
      f0 <- if (kd) f1 else fit_vdp(X, kdtree = FALSE, seed = 1, threads = 1, progress = FALSE)
      expect_identical(fs$K, f0$K)
      expect_identical(fitted(fs), fitted(f0))
      expect_equal(fs$free_energy - f0$free_energy, nrow(X) * 2 * log(s),
                   tolerance = 1e-6)
    }
  }
})

test_that("max_K caps the number of components", {
  sim <- simulate_mixture(N = 800, D = 2, K = 6, separation = 8, seed = 12)
  fit <- fit_vdp(sim$X, max_K = 3, seed = 1, threads = 1, progress = FALSE)
  expect_equal(fit$T, 3L)
})

test_that("VDP on a 2-worker cluster equals the fit with the same batches", {
  skip_on_cran()
  sim <- vdp_data(N = 400, D = 2, K = 3, separation = 5, seed = 13)
  one <- fit_vdp(sim$X, kdtree = FALSE, seed = 4, threads = 1, progress = FALSE)
  two <- fit_vdp(sim$X, kdtree = FALSE, seed = 4, threads = 1, progress = FALSE,
                 n_batches = 2)
  strip <- function(f) f[setdiff(names(f), c("trace", "timings", "control", "call", "cluster"))]
  # batches change only the order of additions
  expect_equal(two$free_energy, one$free_energy, tolerance = 1e-10)
  two2 <- fit_vdp(sim$X, kdtree = FALSE, seed = 4, threads = 2, progress = FALSE,
                  n_batches = 2)
  expect_identical(strip(two2), strip(two))
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  cc <- fit_vdp(sim$X, kdtree = FALSE, seed = 4, threads = 1, progress = FALSE, cluster = cl)
  expect_identical(strip(cc), strip(two))
  expect_identical(cc$trace$free_energy, two$trace$free_energy)
  expect_equal(cc$cluster$workers, 2L)
  expect_gt(cc$cluster$bytes_received, 0)
  # the trace's bytes: each step's share of the traffic (rounds after the
  # last row, e.g. rejected final trials, belong to no row)
  expect_true(all(cc$trace$bytes_sent >= 0) && all(cc$trace$bytes_received >= 0))
  expect_gt(sum(cc$trace$bytes_received), 0)
  expect_lte(sum(cc$trace$bytes_sent), cc$cluster$bytes_sent)
  expect_lte(sum(cc$trace$bytes_received), cc$cluster$bytes_received)
  expect_identical(two$trace$bytes_sent, rep(0, nrow(two$trace)))
  expect_null(two$cluster)
  # the tree variant runs on the master and says so
  expect_warning(ft <- fit_vdp(sim$X, seed = 4, threads = 1, progress = FALSE, cluster = cl),
                 class = "sparsevi_warning_cluster")
  expect_identical(strip(ft), strip(fit_vdp(sim$X, seed = 4, threads = 1, progress = FALSE)))
  expect_error(fit_vdp(sim$X, kdtree = FALSE, cluster = "localhost"),
               class = "sparsevi_error_argument")
  expect_error(fit_vdp(sim$X, kdtree = FALSE, n_batches = 0),
               class = "sparsevi_error_argument")
})

test_that("a VDP worker that dies gives the classed error and the last model", {
  skip_on_cran()
  skip_on_os("windows")
  sim <- vdp_data(N = 400, D = 2, K = 3, separation = 5, seed = 13)
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(try(parallel::stopCluster(cl), silent = TRUE), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  # worker 2 quits on its 25th per-point step, in the middle of the fit
  parallel::clusterCall(cl[2], function(n) {
    ns <- asNamespace("sparsevi")
    orig <- get("vdp_batch_step", envir = ns)
    count <- 0
    unlockBinding("vdp_batch_step", ns)
    assign("vdp_batch_step", function(...) {
      count <<- count + 1
      if (count >= n) quit(save = "no", status = 1)
      orig(...)
    }, envir = ns)
    TRUE
  }, 25)
  err <- tryCatch(fit_vdp(sim$X, kdtree = FALSE, seed = 4, threads = 1, progress = FALSE,
                          cluster = cl),
                  sparsevi_error_worker = function(e) e)
  expect_s3_class(err, "sparsevi_error_worker")
  expect_match(conditionMessage(err), "Worker 2")
  fit <- err$fit
  expect_s3_class(fit, "sparsevi_vdp")
  expect_true(fit$T >= 1)
  expect_true(all(is.finite(fit$trace$free_energy)))
  expect_true(is.finite(fit$free_energy))
  expect_equal(sum(fit$weights) + fit$tail_weight, 1)
  expect_true(all(is.finite(predict(fit, sim$X, type = "density", log = TRUE))))
})

test_that("type = \"density\" means the fitted mixture's density, as for fit_mixture()", {
  sim <- vdp_data(N = 400, D = 2, K = 3, separation = 6, seed = 21)
  fit <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE)
  X <- sim$X[1:50, ]
  dmvn <- function(X, m, S) {
    Y <- sweep(X, 2, m)
    exp(-0.5 * rowSums((Y %*% solve(S)) * Y)) / sqrt(det(2 * pi * S))
  }
  ref <- fit$tail_weight * dmvn(X, fit$prior$m0, fit$prior$cov0)
  for (k in seq_len(fit$T)) {
    ref <- ref + fit$weights[k] * dmvn(X, fit$means[k, ], fit$covariances[, , k])
  }
  expect_equal(predict(fit, X, type = "density"), ref, tolerance = 1e-10)
  expect_equal(predict(fit, X, type = "density", log = TRUE), log(ref), tolerance = 1e-10)
  expect_identical(predict(fit, X, type = "density", threads = 2),
                   predict(fit, X, type = "density", threads = 1))
  # the same number as a fit_mixture() fit with the same point estimates
  # (one component: both are N(x | mean, covariance))
  mix <- fit_mixture(sim$X, K = 1, seed = 1, progress = FALSE)
  expect_equal(predict(mix, X, type = "density"),
               dmvn(X, mix$means[1, ], mix$covariances[, , 1]), tolerance = 1e-10)
  one <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE, max_K = 1)
  expect_equal(predict(one, X, type = "density"),
               one$weights * dmvn(X, one$means[1, ], one$covariances[, , 1]) +
                 one$tail_weight * dmvn(X, one$prior$m0, one$prior$cov0), tolerance = 1e-10)
})

test_that("delete moves can be turned off; caps that stop a fit warn", {
  sim <- vdp_data(N = 600, D = 2, K = 4, separation = 3, seed = 8)
  on <- fit_vdp(sim$X, seed = 2, threads = 1, progress = FALSE)
  off <- fit_vdp(sim$X, seed = 2, threads = 1, progress = FALSE, deletes = FALSE)
  expect_identical(off$splits[["deletes"]], 0L)
  expect_false("delete" %in% off$trace$phase)
  # without deletes T never falls
  expect_true(all(diff(off$trace$T) >= 0))
  expect_identical(off$T, max(off$trace$T))
  expect_true(off$converged)
  expect_error(fit_vdp(sim$X, deletes = NA), class = "sparsevi_error_argument")
  expect_warning(capped <- fit_vdp(sim$X, seed = 2, threads = 1, progress = FALSE, max_K = 2),
                 "max_K", class = "sparsevi_warning_unconverged")
  expect_false(capped$converged)
  expect_warning(fit_vdp(sim$X, seed = 2, threads = 1, progress = FALSE, max_iter = 1),
                 "max_iter", class = "sparsevi_warning_unconverged")
})

test_that("plot() draws a Fast-VDP fit on its data", {
  sim <- vdp_data(N = 300, D = 3, K = 3, separation = 6, seed = 5)
  fit <- fit_vdp(sim$X, seed = 1, threads = 1, progress = FALSE)
  pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(fit, sim$X))
  expect_identical(plot(fit, sim$X, which = "clusters", vars = c(3, 1)), fit)
  expect_identical(plot(fit), fit)
  expect_error(plot(fit, which = "clusters"), class = "sparsevi_error_argument")
  expect_error(plot(fit, sim$X, vars = c(1, 1)), class = "sparsevi_error_argument")
  expect_error(plot(fit, sim$X, vars = 5:6), class = "sparsevi_error_argument")
  expect_error(plot(fit, sim$X[, 1:2]), class = "sparsevi_error")
})

test_that("every generic works on every mixture fit class (issue 23)", {
  X <- as.matrix(iris[, 1:4])
  docs <- simulate_lda(D = 40, V = 30, K = 2, seed = 1)$dtm
  fits <- list(
    gaussian = list(fit_mixture(X, K = 3, seed = 1, progress = FALSE), X),
    diag = list(fit_mixture(X, K = 3, likelihood = "diag_gaussian", seed = 1,
                            progress = FALSE), X),
    multinomial = list(suppressWarnings(fit_mixture(docs, K = 2, likelihood = "multinomial",
                                                    seed = 1, progress = FALSE)), docs),
    vdp = list(fit_vdp(X, seed = 1, threads = 1), X))
  generics_of <- list(
    print = function(f, d) utils::capture.output(print(f)),
    summary = function(f, d) utils::capture.output(print(summary(f))),
    predict = function(f, d) predict(f),
    predict_newdata = function(f, d) predict(f, d),
    responsibilities = function(f, d) predict(f, d, type = "responsibilities"),
    density = function(f, d) predict(f, d, type = "density"),
    logLik = function(f, d) logLik(f), BIC = function(f, d) BIC(f),
    AIC = function(f, d) AIC(f), nobs = function(f, d) nobs(f),
    fitted = function(f, d) fitted(f),
    update = function(f, d) suppressWarnings(update(f, d, progress = FALSE)),
    plot = function(f, d) {
      grDevices::pdf(NULL)
      on.exit(grDevices::dev.off())
      plot(f, if (!inherits(d, "sparsevi_dtm")) d)
    },
    heldout_loglik = function(f, d) heldout_loglik(f, d),
    as.data.frame = function(f, d) as.data.frame(f))
  # the tidy verbs through the generics package when it is installed (Suggests)
  if (requireNamespace("generics", quietly = TRUE)) {
    generics_of <- c(generics_of, list(
      tidy = function(f, d) generics::tidy(f), glance = function(f, d) generics::glance(f),
      augment = function(f, d) generics::augment(f, d)))
  }
  for (cl in names(fits)) {
    f <- fits[[cl]][[1]]
    d <- fits[[cl]][[2]]
    for (g in names(generics_of)) {
      # update() of a VDP fit takes no `progress` for the mixture's sake
      fun <- generics_of[[g]]
      res <- tryCatch(fun(f, d), error = function(e) e)
      expect_false(inherits(res, "error"),
                   label = sprintf("%s() on a %s fit (%s)", g, cl,
                                   if (inherits(res, "error")) conditionMessage(res) else ""))
    }
    expect_identical(nobs(f), nrow(d))
    expect_identical(length(fitted(f)), nrow(d))
    expect_equal(BIC(f), -2 * as.numeric(logLik(f)) + attr(logLik(f), "df") * log(nrow(d)))
  }
})

test_that("a VDP fit has its own logLik, fitted, update and glance", {
  sim <- simulate_mixture(N = 400, D = 2, K = 3, separation = 6, seed = 1)
  v <- fit_vdp(sim$X, seed = 1, threads = 1)
  expect_identical(class(v), c("sparsevi_vdp", "sparsevi_mixture", "sparsevi_fit"))
  ll <- logLik(v)
  expect_equal(as.numeric(ll), sum(predict(v, sim$X, type = "density", log = TRUE)))
  expect_equal(attr(ll, "df"), (v$T - 1) + v$T * (2 + 3))
  expect_identical(attr(ll, "nobs"), 400L)
  expect_identical(fitted(v), predict(v, sim$X))
  expect_equal(fitted(v, type = "responsibilities"),
               predict(v, sim$X, type = "responsibilities"))
  expect_equal(v$uncertainty, 1 - apply(v$z, 1L, max))
  expect_error(predict(v, type = "predictive"), class = "sparsevi_error_argument")
  # update() refits with the fit's settings and the ones given
  u <- suppressWarnings(update(v, sim$X, max_K = 2))
  expect_s3_class(u, "sparsevi_vdp")
  expect_lte(u$T, 2L)
  expect_identical(u$control$seed, 1)
  expect_identical(u$call$max_K, 2)
  again <- update(v, sim$X)
  expect_identical(again$means, v$means)
  expect_error(update(v), class = "sparsevi_error_argument")
  expect_error(update(v, sim$X, K = 3), class = "sparsevi_error_argument")
  expect_error(update(v, sim$X, 3), class = "sparsevi_error_argument")
  skip_if_not_installed("generics")
  gl <- generics::glance(v)
  expect_identical(gl$K, v$T)
  expect_identical(gl$steps, nrow(v$trace))
  expect_equal(gl$loglik, as.numeric(ll))
  expect_equal(gl$BIC, BIC(v))
  au <- generics::augment(v, sim$X)
  expect_identical(au$.cluster, predict(v, sim$X))
})

test_that("ffi_vdp_fit reads its prior and controls by name; a missing one is named", {
  sim <- vdp_data(N = 200, D = 2, K = 2, seed = 4)
  X <- sim$X
  center <- colMeans(X)
  prior <- list(m0 = c(0, 0), beta0 = 0.01, nu0 = 4, W0inv = NULL)
  control <- list(kdtree = TRUE, candidates = 10L, initial_depth = 4L, max_K = 5L,
                  leaf_size = 10L, max_iter = 100L, partial_iter = 20L, progress = FALSE,
                  lazy_tree = TRUE, deletes = TRUE, pair_splits = TRUE, split_cut = 2L,
                  a1 = 1, a2 = 1, tol = 1e-3, update_tol = 1e-4, expand_threshold = 0.05,
                  expand_sd = 1, expand_tol = 1e-4, seed = c(0, 1), threads = 1L, batch_bounds = c(0L, 200L))
  res <- .Call(sparsevi:::ffi_vdp_fit, X, center, prior, control, NULL)
  expect_gte(res$T, 2L)
  # the order of the options does not matter, only their names
  rev_res <- .Call(sparsevi:::ffi_vdp_fit, X, center, rev(prior), rev(control), NULL)
  expect_identical(rev_res$free_energy, res$free_energy)
  expect_identical(rev_res$m, res$m)
  for (nm in names(control)) {
    expect_error(.Call(sparsevi:::ffi_vdp_fit, X, center, prior, control[names(control) != nm],
                       NULL), sprintf("`%s`", nm), fixed = TRUE)
  }
  for (nm in names(prior)) {
    expect_error(.Call(sparsevi:::ffi_vdp_fit, X, center, prior[names(prior) != nm], control,
                       NULL), sprintf("`%s`", nm), fixed = TRUE)
  }
  # a wrong value is named too
  bad <- control
  bad$initial_depth <- 31L
  expect_error(.Call(sparsevi:::ffi_vdp_fit, X, center, prior, bad, NULL), "initial_depth")
})

test_that("the VDP workers' steps read their arguments by name", {
  Xt <- matrix(stats::rnorm(20), 2, 10)
  expect_error(.Call(sparsevi:::ffi_vdp_worker_split_begin, Xt, list(c = 0L), 1L), "`G`",
               fixed = TRUE)
  expect_error(.Call(sparsevi:::ffi_vdp_worker_split_proj, Xt, list(c = 0L), 1L), "`G`",
               fixed = TRUE)
  G <- matrix(0, 4 + 2 + 3, 2)
  expect_error(.Call(sparsevi:::ffi_vdp_worker_split_begin, Xt,
                     list(G = G, c = 0L, mu = c(0, 0), v = c(1, 0)), 1L), "`t`", fixed = TRUE)
  expect_error(.Call(sparsevi:::ffi_vdp_worker_split_iter, Xt,
                     list(act_item = -1L, act_m = 1), list(), 1L), "`act_qi`", fixed = TRUE)
})

test_that("the VDP trace has the common columns with their common meanings", {
  sim <- vdp_data(N = 800, D = 3, K = 3, seed = 6)
  for (tree in c(TRUE, FALSE)) {
    fit <- fit_vdp(sim$X, kdtree = tree, seed = 1, threads = 1, progress = FALSE)
    tr <- fit$trace
    cols <- sparsevi:::train_trace_columns
    expect_identical(names(tr)[seq_along(cols)], cols)
    expect_identical(tr$lap, seq_len(nrow(tr)) - 1L)
    expect_identical(tr$phase[1], "start")
    expect_identical(tr$objective, -tr$free_energy)
    expect_equal(tr$objective[nrow(tr)], -fit$free_energy)
    expect_true(all(is.na(tr$heldout)))
    expect_true(all(diff(tr$seconds) >= 0) && all(diff(tr$cpu_seconds) >= 0))
    expect_true(all(tr$cpu_seconds >= 0))
    expect_lte(max(tr$seconds), fit$timings[["total"]] + 1e-9)
    expect_identical(tr$bytes_sent, rep(0, nrow(tr)))
    expect_identical(tr$bytes_received, rep(0, nrow(tr)))
  }
})
