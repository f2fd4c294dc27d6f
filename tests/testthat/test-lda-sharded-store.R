# A topic store sharded by word (src/lda-store.c, store_update_owner();
# R/executor-sharded.R): owner r of W holds the columns of the words v with
# v %% W == r as its own table, local column v %/% W, and the whole store's
# meta. Each owner's step on its part of a summary, given the row sums of
# the whole summary, must leave its columns and meta bit for bit as the
# whole store's step leaves them.

# A whole store of K x V topics (its table given up, so that it is written in
# place however often the test reads it) and its W shards.
sharded_stores <- function(K, V, W, seed) {
  lam <- matrix(0.05 + uniform_source(seed)(K * V), K, V)
  st <- sparsevi:::lda_store_new(lda_test_state(lambda = lam), rowSums(lam), 0.05, 0)
  st <- sparsevi:::lda_store_own(st)
  sparsevi:::lda_give_up(st$X)
  shards <- lapply(seq_len(W) - 1L, function(r) {
    X <- st$X[, shard_columns(V, W, r), drop = FALSE]
    list(X = sparsevi:::lda_give_up(X), meta = st$meta + 0)
  })
  list(whole = st, shards = shards)
}

# Owner r's columns of the whole table (1-based).
shard_columns <- function(V, W, r) seq.int(r + 1L, V, by = W)

# A random summary of K topics over some of V words (0-based, increasing):
# dense list(words, x) or sparse list(words, p, k, v), each word with a
# random set of topics (some with none).
random_summary <- function(K, V, sparse, rng, share = 0.5) {
  words <- which(rng(V) < share) - 1L
  U <- length(words)
  if (!sparse) return(list(words = words, x = 3 * rng(K * U)))
  on <- matrix(rng(K * U) < 0.4, K, U)
  n <- colSums(on)
  list(words = words, p = c(0L, as.integer(cumsum(n))),
       k = as.integer(row(on)[on] - 1L), v = 2 * rng(sum(on)))
}

# Owner r's part of the summary S: its words as local columns.
shard_part <- function(S, K, W, r) {
  at <- which(S$words %% W == r)
  words <- as.integer(S$words[at] %/% W)
  if (is.null(S$p)) {
    return(list(words = words, x = as.vector(matrix(S$x, K)[, at, drop = FALSE])))
  }
  n <- S$p[at + 1L] - S$p[at]
  e <- unlist(lapply(at, function(u) seq_len(S$p[u + 1L] - S$p[u]) + S$p[u]))
  list(words = words, p = c(0L, as.integer(cumsum(n))), k = S$k[e], v = S$v[e])
}

# One step of the whole store and of every shard (given the whole
# summary's row sums); expects the same new scale everywhere.
sharded_step <- function(ss, S, K, W, rho, mult, t, below, threads) {
  sc <- sparsevi:::lda_store_update(ss$whole, S, rho, mult, t, below, threads)
  ssum <- .Call(sparsevi:::ffi_lda_summary_rowsums, S, K)
  for (r in seq_len(W) - 1L) {
    sh <- ss$shards[[r + 1L]]
    part <- shard_part(S, K, W, r)
    got <- .Call(sparsevi:::ffi_lda_store_update_owner, sh$X, sh$meta, part$words, part,
                 list(rho = as.double(rho), mult = as.double(mult),
                      rescale_below = as.double(below), t = as.double(t),
                      threads = as.integer(threads), ssum = ssum))
    expect_identical(got, sc)
  }
}

# Every shard's columns and meta against the whole store's.
expect_shards_match <- function(ss, V, W) {
  for (r in seq_len(W) - 1L) {
    sh <- ss$shards[[r + 1L]]
    expect_identical(as.vector(sh$X), as.vector(ss$whole$X[, shard_columns(V, W, r)]))
    expect_identical(sh$meta, ss$whole$meta)
  }
}

test_that("a sharded store's owners step their columns as the whole store does", {
  K <- 7
  V <- 23
  W <- 3
  ss <- sharded_stores(K, V, W, 11)
  for (r in seq_len(W) - 1L) {
    expect_identical(dim(ss$shards[[r + 1L]]$X), c(7L, length(shard_columns(V, W, r))))
  }
  rng <- uniform_source(12)
  # dense and sparse summaries on 1 and 2 threads; steps 3 and 4 fall below
  # rescale_below (dense rescaling, one with each form), step 8 has rho = 1
  steps <- list(
    list(sparse = FALSE, rho = 0.3, mult = 4, below = 1e-100, threads = 1L),
    list(sparse = TRUE, rho = 0.2, mult = 2, below = 1e-100, threads = 2L),
    list(sparse = FALSE, rho = 0.4, mult = 3, below = 0.5, threads = 2L),
    list(sparse = TRUE, rho = 0.1, mult = 5, below = 0.95, threads = 1L),
    list(sparse = FALSE, rho = 0.25, mult = 1.5, below = 1e-100, threads = 1L),
    list(sparse = TRUE, rho = 0.35, mult = 7, below = 1e-100, threads = 2L),
    list(sparse = FALSE, rho = 0.15, mult = 2.5, below = 1e-100, threads = 2L),
    list(sparse = TRUE, rho = 1, mult = 3, below = 1e-100, threads = 1L),
    list(sparse = FALSE, rho = 0.05, mult = 9, below = 1e-100, threads = 1L)
  )
  for (i in seq_along(steps)) {
    s <- steps[[i]]
    S <- random_summary(K, V, s$sparse, rng)
    sharded_step(ss, S, K, W, s$rho, s$mult, i, s$below, s$threads)
    expect_shards_match(ss, V, W)
  }
  # (the steps did rescale: the scale is back to 1 after step 8)
  expect_identical(ss$whole$meta[1], 1 - 0.05)
})

test_that("owners match the whole store where its update is split over two threads", {
  # above 524,288 values (K x words) two threads split the dense update and
  # sum the topics in blocks (store_update()); the sparse columns go
  # parallel above 8,192 entries. One owner (W = 1) gets the whole summary
  # and splits its columns too.
  K <- 160
  V <- 3600
  for (W in c(1L, 3L)) {
    ss <- sharded_stores(K, V, W, 21)
    rng <- uniform_source(22)
    S <- random_summary(K, V, FALSE, rng, share = 0.95)
    expect_gt(K * length(S$words), 524288)
    sharded_step(ss, S, K, W, 0.3, 4, 1, 1e-100, 2L)
    expect_shards_match(ss, V, W)
    S <- random_summary(K, V, TRUE, rng, share = 0.95)
    expect_gt(length(S$v), 8192)
    sharded_step(ss, S, K, W, 0.2, 2, 2, 1e-100, 2L)
    expect_shards_match(ss, V, W)
  }
})

test_that("a summary's row sums are added in word order", {
  K <- 7
  rng <- uniform_source(31)
  S <- random_summary(K, 40, FALSE, rng)
  # (x may hold more than K values per word: the first K x U are read)
  S2 <- list(words = S$words, x = c(S$x, 1e300))
  x <- matrix(S$x, K)
  s <- numeric(K)
  for (u in seq_len(ncol(x))) s <- s + x[, u]
  expect_identical(.Call(sparsevi:::ffi_lda_summary_rowsums, S, K), s)
  expect_identical(.Call(sparsevi:::ffi_lda_summary_rowsums, S2, K), s)
  S <- random_summary(K, 40, TRUE, rng)
  s <- numeric(K)
  for (e in seq_along(S$v)) s[S$k[e] + 1L] <- s[S$k[e] + 1L] + S$v[e]
  expect_identical(.Call(sparsevi:::ffi_lda_summary_rowsums, S, K), s)
  # no words: zeros
  expect_identical(.Call(sparsevi:::ffi_lda_summary_rowsums,
                         list(words = integer(0), x = numeric(0)), K), numeric(K))
})

test_that("the owner update refuses a missing or malformed ssum and bad summaries", {
  K <- 7
  V <- 23
  ss <- sharded_stores(K, V, 3, 41)
  sh <- ss$shards[[1]]
  part <- list(words = c(0L, 3L), x = rep(1, 2 * K))
  opts <- list(rho = 0.3, mult = 1, rescale_below = 1e-100, t = 1, threads = 1L)
  meta0 <- sh$meta + 0
  X0 <- as.vector(sh$X)
  owner <- function(part, opts) {
    .Call(sparsevi:::ffi_lda_store_update_owner, sh$X, sh$meta, part$words, part, opts)
  }
  expect_error(owner(part, opts), "internal error: option `ssum` is missing")
  expect_error(owner(part, c(opts, list(ssum = numeric(K - 1)))), "internal error")
  expect_error(owner(part, c(opts, list(ssum = as.integer(1:K)))), "internal error")
  ok <- c(opts, list(ssum = numeric(K)))
  # a word outside the owner's columns, words not increasing, too few values
  expect_error(owner(list(words = 8L, x = rep(1, K)), ok), "internal error")
  expect_error(owner(list(words = c(3L, 0L), x = rep(1, 2 * K)), ok), "internal error")
  expect_error(owner(list(words = c(0L, 3L), x = rep(1, K)), ok), "internal error")
  expect_error(owner(list(words = 0L, p = c(0L, 1L), k = 7L, v = 1), ok), "internal error")
  expect_error(.Call(sparsevi:::ffi_lda_summary_rowsums,
                     list(words = 0L, p = c(0L, 1L), k = 9L, v = 1), K), "internal error")
  expect_error(.Call(sparsevi:::ffi_lda_summary_rowsums, list(words = 0L), K),
               "internal error")
  # nothing was written
  expect_identical(sh$meta, meta0)
  expect_identical(as.vector(sh$X), X0)
  # a shared, unflagged table is refused
  X <- ss$whole$X[, 1:8] + 0
  Y <- X
  expect_error(.Call(sparsevi:::ffi_lda_store_update_owner, X, sh$meta + 0, part$words, part, ok),
               "shared")
})
