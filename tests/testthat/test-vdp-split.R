# Where fit_vdp() cuts a split candidate across its principal axis (issue 38):
# the weighted two-means threshold of the items' projections, against its
# pure-R reference, and the row-order defect of the cut through the mean.

# The reference of vdp_split_cut() (src/vdp.c): sort the projections p (ties
# by position), and take the cut between two consecutive distinct values
# that maximises sl^2 / wl + sr^2 / wr (weighted sums and weights below and
# above the cut); returns the smallest projection above it, 0 when all are
# equal. The running sums are formed one addition at a time in sorted order,
# as in C (cumsum() would add in long double).
ref_vdp_split_cut <- function(p, w) {
  o <- order(p, seq_along(p))
  p <- p[o]
  w <- w[o]
  n <- length(p)
  acc <- function(x) Reduce(`+`, x, accumulate = TRUE)
  W <- acc(w)[n]
  S <- acc(w * p)[n]
  wl <- acc(w)
  sl <- acc(w * p)
  best <- -Inf
  t <- 0
  for (j in seq_len(n - 1L)) {
    if (!(p[j + 1L] > p[j])) next
    wr <- W - wl[j]
    sr <- S - sl[j]
    if (!(wl[j] > 0) || !(wr > 0)) next
    b <- sl[j]^2 / wl[j] + sr^2 / wr
    if (b > best) {
      best <- b
      t <- p[j + 1L]
    }
  }
  t
}

split_cut_c <- function(p, w) .Call(sparsevi:::ffi_vdp_split_cut, as.double(p), as.double(w))

test_that("the two-means threshold in C matches the pure-R reference", {
  set.seed(11)
  for (i in 1:30) {
    n <- sample(c(2:12, 50, 200), 1)
    p <- stats::rnorm(n)
    if (i %% 3 == 0) p <- round(p, 1) # ties
    w <- stats::runif(n) * sample(c(1, 10, 100), n, replace = TRUE)
    expect_identical(split_cut_c(p, w), ref_vdp_split_cut(p, w))
  }
  # all projections equal: no cut, the mean (0)
  expect_identical(split_cut_c(c(1, 1, 1), c(1, 2, 3)), 0)
  expect_identical(split_cut_c(2, 1), 0)
})

test_that("the two-means threshold cuts between clusters in a row, not through the middle one", {
  set.seed(3)
  p <- c(stats::rnorm(100, -20), stats::rnorm(100, 0), stats::rnorm(100, 20))
  w <- rep(1, 300)
  within <- function(t, w) {
    l <- p < t
    sum(w[l] * (p[l] - stats::weighted.mean(p[l], w[l]))^2) +
      sum(w[!l] * (p[!l] - stats::weighted.mean(p[!l], w[!l]))^2)
  }
  t <- split_cut_c(p - mean(p), w) + mean(p)
  # the mean of the projections is in the middle cluster, which the cut
  # through the mean halves; the threshold is between two clusters
  side <- p >= t
  expect_true(all(side[101:200] == side[101]))
  expect_true(xor(all(side[1:100] == side[101]), all(side[201:300] == side[101])))
  # and it leaves the least within-side sum of squares of all cuts
  cuts <- sort(p)[-1]
  expect_equal(within(t, w), min(vapply(cuts, within, 0, w = w)))
  expect_lt(within(t, w), within(mean(p), w))
  # weights count: a heavy cluster on the right takes the cut to its side
  w2 <- c(rep(1, 200), rep(10, 100))
  t2 <- split_cut_c(p, w2)
  expect_true(all(p[1:200] < t2) && all(p[201:300] >= t2))
  expect_equal(within(t2, w2), min(vapply(cuts, within, 0, w = w2)))
})

# Three Gaussian clusters in a row along the diagonal (8 dimensions), rows
# sorted by cluster: the cut through the mean halves the middle cluster, and
# the fit through the mean stops at T = 1 (issue 38: before the fix,
# fit_vdp() gave T = 1 on these rows, with and without paper = TRUE, and 3
# with the rows reversed or shuffled).
three_in_a_row <- function(n = 1000, D = 8, seed = 1) {
  set.seed(seed)
  matrix(stats::rnorm(3 * n * D), 3 * n) + rep(c(0, 3, 6), each = n)
}

test_that("the fit does not depend on the order of the rows (three clusters in a row)", {
  X <- three_in_a_row()
  set.seed(5)
  orders <- list(sorted = seq_len(nrow(X)), reversed = rev(seq_len(nrow(X))),
                 shuffled = sample(nrow(X)))
  for (nm in names(orders)) {
    Y <- X[orders[[nm]], ]
    expect_identical(fit_vdp(Y, seed = 1, threads = 1)$T, 3L, label = nm)
    expect_identical(fit_vdp(Y, seed = 1, threads = 1, paper = TRUE)$T, 3L, label = nm)
    expect_identical(fit_vdp(Y, seed = 1, threads = 1, split_cut = "two-means")$T, 3L,
                     label = nm)
    expect_identical(fit_vdp(Y, kdtree = FALSE, seed = 1, threads = 1)$T, 3L, label = nm)
  }
  # the paper's cut through the mean misses the split on the sorted rows (the
  # defect this guards against; main before the fix gave the same)
  # (one split at a time: a pair of splits finds the three from there too)
  expect_identical(fit_vdp(X, seed = 1, threads = 1, split_cut = "mean",
                           pair_splits = FALSE)$T, 1L)
  expect_identical(fit_vdp(X, seed = 1, threads = 1, split_cut = "mean")$T, 3L)
  expect_identical(fit_vdp(X, seed = 1, threads = 1)$control$split_cut, "fallback")
  expect_error(fit_vdp(X, split_cut = "median"), class = "sparsevi_error_argument")
  # update() takes the setting and carries it
  f <- fit_vdp(X, seed = 1, threads = 1, split_cut = "mean", pair_splits = FALSE)
  expect_identical(update(f, X, seed = 1)$T, 1L)
  expect_identical(update(f, X, split_cut = "fallback")$T, 3L)
})

test_that("every split cut gives fits identical across thread counts", {
  set.seed(21)
  X <- matrix(stats::rnorm(3000 * 4), 3000) + 4 * matrix(stats::rnorm(5 * 4), 5)[rep(1:5, 600), ]
  strip <- function(f) f[setdiff(names(f), c("trace", "timings", "call", "control"))]
  for (cut in c("fallback", "two-means")) for (tree in c(TRUE, FALSE)) {
    f1 <- fit_vdp(X, kdtree = tree, seed = 3, threads = 1, split_cut = cut)
    f2 <- fit_vdp(X, kdtree = tree, seed = 3, threads = 2, split_cut = cut)
    expect_identical(strip(f2), strip(f1))
    expect_identical(f2$trace$free_energy, f1$trace$free_energy)
    expect_gte(f1$T, 2L)
  }
})

# Three clusters in a row in 16 dimensions: under the default prior, two
# components (one cluster and the merged pair) have a higher free energy
# than one, and three a lower one than either, so one split at a time stops
# at T = 1 (issue 38). A pair of splits, kept only when the two together
# lower the free energy, finds the three.
test_that("a pair of splits crosses the barrier that one split at a time stops at", {
  X <- three_in_a_row(n = 500, D = 16)
  lab <- rep(1:3, each = 500)
  one <- fit_vdp(X, seed = 1, threads = 1, pair_splits = FALSE)
  expect_identical(one$T, 1L)
  # the fit's free energy is the pure-R reference's at its globals
  expect_equal(ref_vdp_free_energy(one, X), one$free_energy, tolerance = 1e-8)
  strip <- function(f) f[setdiff(names(f), c("trace", "timings", "call", "control", "cluster"))]
  for (tree in c(TRUE, FALSE)) {
    f <- fit_vdp(X, kdtree = tree, seed = 1, threads = 1)
    expect_true(f$control$pair_splits)
    expect_identical(f$T, 3L)
    expect_lt(f$free_energy, one$free_energy - 100)
    cl <- predict(f, X, type = "cluster")
    expect_identical(length(unique(paste(cl, lab))), 3L) # the planted clusters
    expect_identical(f$splits[["accepted"]], 2L)
    # the same bits on two threads
    expect_identical(strip(fit_vdp(X, kdtree = tree, seed = 1, threads = 2)), strip(f))
  }
  v <- fit_vdp(X, kdtree = FALSE, seed = 1, threads = 1)
  expect_equal(ref_vdp_free_energy(v, X), v$free_energy, tolerance = 1e-8)
  # no room for two more components: the pair is not tried
  expect_identical(fit_vdp(X, seed = 1, threads = 1, max_K = 2)$T, 1L)
  expect_warning(f3 <- fit_vdp(X, seed = 1, threads = 1, max_K = 3),
                 class = "sparsevi_warning_unconverged")
  expect_identical(f3$T, 3L)
  # the paper mode splits one at a time; the setting given explicitly wins
  expect_false(fit_vdp(X, seed = 1, threads = 1, paper = TRUE)$control$pair_splits)
  expect_identical(fit_vdp(X, seed = 1, threads = 1, paper = TRUE, pair_splits = TRUE)$T, 3L)
  expect_error(fit_vdp(X, pair_splits = "yes"), class = "sparsevi_error_argument")
  expect_identical(update(one, X, pair_splits = TRUE)$T, 3L)
})

test_that("a pair of splits on workers gives the fit with the same batches", {
  skip_on_cran()
  X <- three_in_a_row(n = 500, D = 16)
  two <- fit_vdp(X, kdtree = FALSE, seed = 1, threads = 1, n_batches = 2)
  expect_identical(two$T, 3L)
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  cc <- fit_vdp(X, kdtree = FALSE, seed = 1, threads = 1, cluster = cl)
  strip <- function(f) f[setdiff(names(f), c("trace", "timings", "call", "control", "cluster"))]
  expect_identical(strip(cc), strip(two))
  expect_identical(cc$trace$free_energy, two$trace$free_energy)
})

test_that("a pair of splits makes no component smaller than a Gaussian's parameters", {
  # 34 of the 43 rows of USJudgeRatings (12 columns; the first fold of
  # inst/bench/vdp-prior.R's cross-validation): the free energy there
  # favours 22 components of one or two rows, which a pair of splits would
  # reach from T = 1 (held-out -65 nats per point against -1.8); a pair only
  # makes components of at least D (D + 3) / 2 = 90 points, so none is tried
  X <- as.matrix(datasets::USJudgeRatings)
  set.seed(11)
  fold <- sample(rep_len(1:5, nrow(X)))
  f <- fit_vdp(X[fold != 1, ], seed = 1, threads = 1)
  expect_identical(f$T, 1L)
  expect_identical(f$splits[["accepted"]], 0L)
  expect_identical(f$free_energy,
                   fit_vdp(X[fold != 1, ], seed = 1, threads = 1, pair_splits = FALSE)$free_energy)
})
