# Mixtures (fit_mixture()): the starts (seed points, k-means, hierarchical
# clustering) and the options of the short runs that choose among them.

# Summaries of the K seed points, each a component with one point.
mix_seed_state <- function(train, hyper, seeds) {
  K <- length(seeds)
  D <- hyper$D
  if (hyper$lik == 3L) {
    S <- matrix(0, D, K)
    dp <- train$data[[1L]]
    for (k in seq_len(K)) {
      d <- seeds[k]
      pos <- seq.int(dp[d] + 1L, length.out = dp[d + 1L] - dp[d])
      S[train$data[[2L]][pos] + 1L, k] <- train$data[[3L]][pos]
    }
  } else {
    Xs <- train$data[seeds, , drop = FALSE]
    S <- vapply(seq_len(K), function(k) {
      x <- Xs[k, ]
      switch(hyper$lik + 1L,
             c(x, pack_lower(tcrossprod(x))),
             pack_lower(tcrossprod(x)),
             c(x, x^2),
             NULL,
             c(x, pack_lower(tcrossprod(x))),
             c(x, sum(x^2)))
    }, numeric(mix_stat_size(hyper$lik, D)))
    S <- matrix(S, ncol = K)
  }
  list(N = rep(1, K), S = S)
}

# Summaries of a k-means partition: Hartigan-Wong k-means (stats::kmeans(),
# no random numbers) on the columns scaled to unit variance, started from
# the k-means++ seeds; each component starts holding its cluster's points.
# NULL (fall back to the seed points) for documents, K = 1, or when k-means
# fails (an empty cluster).
mix_kmeans_state <- function(train, hyper, seeds, init_scale) {
  K <- length(seeds)
  if (hyper$lik == 3L || K < 2L) return(NULL)
  Z <- train$data * rep(sqrt(init_scale), each = nrow(train$data))
  km <- tryCatch(suppressWarnings(stats::kmeans(Z, Z[seeds, , drop = FALSE], iter.max = 30L)),
                 error = function(e) NULL)
  if (is.null(km) || any(tabulate(km$cluster, K) == 0L)) return(NULL)
  mix_partition_state(train, hyper, km$cluster, K)
}

# The hierarchical starts: a partition of the data by agglomerative
# hierarchical clustering, cut at K clusters; each component starts holding
# its cluster's points. They use no random numbers, so every seed shares
# them; their cost is quadratic in N, hence only up to
# getOption("sparsevi.mix_hc_max", 2000) points. Two trees
# (mix_hc_kinds()):
# * "model": the model-based agglomeration of mclust's default start
#   (mix_mbhc_tree(): the merge that least raises the unconstrained
#   Gaussian classification criterion, on the data's scaled singular
#   vectors);
# * "ward": Ward's agglomeration (stats::hclust(), "ward.D2") of the
#   whitened data (principal component scores scaled to unit variance,
#   directions of no variance dropped).
# On small data they reach optima of higher likelihood that the k-means
# starts miss (crabs, swiss: inst/bench/results/mixture.txt, part robust).
# The points are in the order of `data`; NULL when a cluster would be empty
# (K above the distinct points) or the data have no variance.
mix_hc_state <- function(data, train, hyper, K, perm, kind = "ward") {
  cl <- if (kind == "model") {
    tree <- mix_mbhc_tree(data$data)
    if (is.null(tree)) return(NULL)
    mix_mbhc_cut(tree, K)
  } else {
    tree <- mix_hc_tree(data$data)
    if (is.null(tree)) return(NULL)
    stats::cutree(tree, K)
  }
  if (any(tabulate(cl, K) == 0L)) return(NULL)
  mix_partition_state(train, hyper, cl[perm], K)
}

# The hierarchical starts that run on N points, in the order they run (the
# last wins ties within mix_hc_margin): getOption("sparsevi.mix_hc_kinds")
# (an internal option for benchmarks), by default both trees.
mix_hc_kinds <- function(N) {
  if (!(N <= mix_hc_max())) return(character(0))
  kinds <- getOption("sparsevi.mix_hc_kinds", c("ward", "model"))
  if (!is.character(kinds) || anyNA(kinds) || !all(kinds %in% c("ward", "model"))) {
    abort("Option `sparsevi.mix_hc_kinds` must hold \"ward\" and/or \"model\".",
          "argument", call = NULL)
  }
  unique(kinds)
}

# The trees of mix_hc_state() (NULL for data without variance). The last
# tree of each kind is kept with its data: a K grid (fit_mixture(X, K =
# 1:9)) cuts one tree at each K, as mclust does, instead of building the
# same tree again (the data are compared exactly, so the tree is the one
# these data give).
mix_hc_cache <- new.env(parent = emptyenv())

mix_hc_tree <- function(X) {
  if (identical(mix_hc_cache$X, X)) return(mix_hc_cache$tree)
  N <- nrow(X)
  sv <- svd(X, nu = 0L)
  keep <- sv$d > sv$d[1L] * 1e-8
  tree <- NULL
  if (any(keep)) {
    Z <- X %*% sv$v[, keep, drop = FALSE]
    Z <- Z * rep(sqrt(N - 1) / sv$d[keep], each = N)
    tree <- stats::hclust(stats::dist(Z), "ward.D2")
  }
  mix_hc_cache$X <- X
  mix_hc_cache$tree <- tree
  tree
}

# The model-based tree (src/mix-hc.c; Fraley 1998, mclust's hc() with its
# defaults, model "VVV" and use "SVD"): the columns scaled to unit
# variance (constant columns dropped), rotated to their singular vectors
# and each scaled by 1 / sqrt(its singular value) (halfway to whitening:
# directions of little variance are stretched, not to unit variance);
# directions without variance dropped. The criterion's regularization
# alpha is the transformed data's mean variance (tr W / (N D)), beta = 1.
# Returns list(merges ((N - 1) x 2: the clusters merged at each step, each
# named by its smallest point, the first kept), cost), or NULL.
mix_mbhc_data <- function(X) {
  N <- nrow(X)
  if (N < 2L) return(NULL)
  sdv <- sqrt(colSums(scale(X, scale = FALSE)^2) / (N - 1))
  ok <- is.finite(sdv) & sdv > 0
  if (!any(ok)) return(NULL)
  Xs <- scale(X[, ok, drop = FALSE], center = TRUE, scale = sdv[ok])
  sv <- svd(Xs, nu = 0L)
  keep <- sv$d > sv$d[1L] * 1e-8
  Z <- Xs %*% sv$v[, keep, drop = FALSE]
  Z <- Z * rep(1 / sqrt(sv$d[keep]), each = N)
  dimnames(Z) <- NULL
  Z
}

mix_mbhc_alpha <- function(Z) max(sum(scale(Z, scale = FALSE)^2) / length(Z), .Machine$double.eps)

mix_mbhc_tree <- function(X) {
  if (identical(mix_hc_cache$Xm, X)) return(mix_hc_cache$mtree)
  Z <- mix_mbhc_data(X)
  tree <- if (!is.null(Z)) .Call(ffi_mix_hc, Z, mix_mbhc_alpha(Z), 1)
  mix_hc_cache$Xm <- X
  mix_hc_cache$mtree <- tree
  tree
}

# The partition of N points into K clusters from a model-based tree: the
# first N - K merges, the clusters numbered in the order of their first
# point.
mix_mbhc_cut <- function(tree, K) {
  N <- nrow(tree$merges) + 1L
  lab <- seq_len(N)
  for (s in seq_len(N - K)) {
    lab[lab == tree$merges[s, 2L]] <- tree$merges[s, 1L]
  }
  match(lab, unique(lab))
}

mix_hc_margin <- 1

# Laps of each start's short run, and the number of starts continued after
# them (fit_mixture() with several starts; options sparsevi.mix_short_laps,
# Inf for full runs, and sparsevi.mix_short_keep). Chosen by measurement
# (inst/bench/mixture.R, part short, on the 22 sets of part robust and the
# mid-size sets of part starts): after 2 to 5 laps the best start is often
# not the best at convergence (iris, geyser); continuing one start after 10
# laps lost optima on GvHD (K = 9: 42 to 414 nats in 3 of 3 seeds), two lost
# 42 nats in 1 of 3 seeds; 20 laps saved little (mid-size fits converge in
# 1 to 70 laps).
mix_short_keep <- function() {
  n <- getOption("sparsevi.mix_short_keep", 2)
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 1 || n != round(n)) {
    abort("Option `sparsevi.mix_short_keep` must be one whole number >= 1 (the starts continued after the short runs).",
          "argument", call = NULL)
  }
  n
}

mix_short_laps <- function() {
  n <- getOption("sparsevi.mix_short_laps", 20)
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 1 || (is.finite(n) && n != round(n))) {
    abort("Option `sparsevi.mix_short_laps` must be one whole number >= 1, or Inf (the laps of each start's short run).",
          "argument", call = NULL)
  }
  n
}

# Does a fit of a full-covariance model have a component of fewer than D + 1
# points (expected counts)? Its points' scatter is singular, so its
# covariance is the prior's in some direction and its likelihood there
# grows as `scale` shrinks (mclust's EM fails on such a component). A
# component of exactly D + 1 points is not: its expected count can fall
# below D + 1 by rounding (mtcars6's 7 points in 6 dimensions, Mclust's own
# partition: 6.999999999991), hence the 1e-6.
mix_degenerate <- function(fit) {
  if (!fit$likelihood %in% c("gaussian", "zm_gaussian")) return(FALSE)
  any(fit$sizes < fit$hyper$D + 1 - 1e-6)
}

mix_hc_max <- function() {
  n <- getOption("sparsevi.mix_hc_max", 2000)
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 0) {
    abort("Option `sparsevi.mix_hc_max` must be one number >= 0 (the most points for the hierarchical start).",
          "argument", call = NULL)
  }
  n
}

# Summaries of a partition `cl` (1..K, in the order of `train`'s rows): each
# component holds its cluster's points.
mix_partition_state <- function(train, hyper, cl, K) {
  # the rows sorted by component once (a stable sort: each component's rows
  # in their order, the same matrices as X[cl == k, ]), then sliced
  n <- tabulate(cl, K)
  Xs <- train$data[order(cl, method = "radix"), , drop = FALSE]
  end <- cumsum(n)
  S <- vapply(seq_len(K), function(k) {
    Xk <- Xs[seq.int(end[k] - n[k] + 1L, length.out = n[k]), , drop = FALSE]
    switch(hyper$lik + 1L,
           c(colSums(Xk), pack_lower(crossprod(Xk))),
           pack_lower(crossprod(Xk)),
           c(colSums(Xk), colSums(Xk^2)),
           NULL,
           c(colSums(Xk), pack_lower(crossprod(Xk))),
           c(colSums(Xk), sum(Xk^2)))
  }, numeric(mix_stat_size(hyper$lik, hyper$D)))
  list(N = as.double(n), S = matrix(S, ncol = K))
}

mix_stat_size <- function(lik, D) {
  switch(lik + 1L, D + D * (D + 1) / 2, D * (D + 1) / 2, 2 * D, D, D + D * (D + 1) / 2,
         D + 1)
}

# The subsample start of large data: with the default starts (`n_init`
# not given, init = "kmeans"), numeric data of more than
# getOption("sparsevi.mix_sub_start", 2e4) points (Inf: never) with
# memoized or batch training run their starts (as many as for data of m
# points, with their short runs, and the hierarchical one) on the first m
# points of the random permutation, m = max(getOption("sparsevi.mix_sub_size", 2000), 20
# K (D + 1)) (at least 20 (D + 1) points a component on average), and only
# the best is trained on all the points, from its state scaled to N points
# (mclust's documented start for large data: its hierarchical start on a
# subsample). Measured (inst/bench/mixture.R, part grid): at N = 1e5, D =
# 10, K = 1:9 it took 1.75 s against 6.22 s for the starts on all the
# points and 14.73 s for Mclust's subsample start, with the same K, ARI and
# log-likelihood; on part starts' 50,000-point set (K = 20, seeds 1..3) it
# was faster in each seed with the same or a higher log-likelihood (seed
# 3: -659019.5 against -679088.3); the sets of part robust (at most 10,000
# points) and GvHD (15,892) are below the threshold. NULL when it does not
# apply.
mix_sub_size <- function(N, D, K, global, lik) {
  thr <- getOption("sparsevi.mix_sub_start", 2e4)
  size <- getOption("sparsevi.mix_sub_size", 2000)
  for (o in list(list(thr, "sparsevi.mix_sub_start"), list(size, "sparsevi.mix_sub_size"))) {
    if (!is.numeric(o[[1L]]) || length(o[[1L]]) != 1L || is.na(o[[1L]]) || o[[1L]] < 1) {
      abort(sprintf("Option `%s` must be one number >= 1.", o[[2L]]), "argument", call = NULL)
    }
  }
  if (lik == 3L || global == "stochastic" || !(N > thr)) return(NULL)
  m <- max(size, 20 * K * (D + 1))
  if (m >= N / 2) return(NULL)
  as.integer(m)
}
