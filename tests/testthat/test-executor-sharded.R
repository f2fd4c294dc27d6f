# Topics sharded by word over persistent workers (R/executor-sharded.R):
# the fits equal the local ones with the same sync, bit for bit (dense and
# sparse summaries, a new fit, update(), the kept proportions, held-out
# scores within a lap), the workers exchange the columns among
# themselves, and a worker that dies mid-lap stops the fit with the last
# completed model and leaves the others free.

test_that("a summary cut by owner holds each word's values once, as its owner's column", {
  split_c <- function(S, K, W) .Call(sparsevi:::ffi_lda_shard_split, S, K, W)
  for (shard_split_summary in list(sparsevi:::shard_split_summary_r, split_c)) {
    K <- 3L
    S <- list(words = c(0L, 2L, 3L, 7L), x = as.double(1:12))
    parts <- shard_split_summary(S, K, 2L)
    expect_identical(parts[[1]], list(words = c(0L, 1L), x = as.double(c(1:3, 4:6))))
    expect_identical(parts[[2]], list(words = c(1L, 3L), x = as.double(c(7:9, 10:12))))
    Sp <- list(words = c(1L, 4L, 5L), p = c(0L, 2L, 2L, 3L), k = c(0L, 2L, 1L),
               v = c(0.5, 1.5, 2))
    parts <- shard_split_summary(Sp, K, 3L)
    expect_identical(parts[[1]], list(words = integer(0), p = 0L, k = integer(0),
                                      v = double(0)))
    expect_identical(parts[[2]], list(words = c(0L, 1L), p = c(0L, 2L, 2L), k = c(0L, 2L),
                                      v = c(0.5, 1.5)))
    expect_identical(parts[[3]], list(words = 1L, p = c(0L, 1L), k = 1L, v = 2))
  }
  # C against R on random summaries: dense (x longer than K x U, as a
  # reused buffer is) and sparse, 1 to 5 owners, a word for no owner
  set.seed(11)
  for (i in 1:30) {
    K <- sample(1:6, 1)
    W <- sample(1:5, 1)
    words <- sort(sample(0:40, sample(0:12, 1)))
    U <- length(words)
    S <- list(words = words, x = runif(K * U + sample(0:3, 1)))
    expect_identical(split_c(S, K, W), sparsevi:::shard_split_summary_r(S, K, W))
    n <- sample(0:K, U, replace = TRUE)
    k <- unlist(lapply(n, function(m) sort(sample(K, m)) - 1L))
    Sp <- list(words = words, p = c(0L, as.integer(cumsum(n))), k = as.integer(k),
               v = runif(length(k)))
    expect_identical(split_c(Sp, K, W), sparsevi:::shard_split_summary_r(Sp, K, W))
  }
  # malformed summaries are errors, not crashes
  expect_error(split_c(list(words = c(2L, 1L), x = double(6)), 3L, 2L), "increasing")
  expect_error(split_c(list(words = 1:2, x = double(5)), 3L, 2L), "K values")
  expect_error(split_c(list(words = 1:2, p = c(0L, 2L, 1L), k = 0L, v = 1), 3L, 2L),
               "malformed")
  expect_error(split_c(list(words = 1:2, p = c(0L, 1L, 3L), k = 0:1, v = c(1, 1)), 3L, 2L),
               "malformed")
})

# A random K x V table with some +0, up to `neg_zero` -0 and up to `nan`
# NaN entries (the values a taken shard must carry as they are).
random_table <- function(K, V, neg_zero = 0L, nan = 0L) {
  X <- matrix(runif(K * V), K, V)
  X[sample(K * V, sample(0:(K * V), 1))] <- 0
  X[sample(K * V, sample(0:neg_zero, 1))] <- -0
  X[sample(K * V, sample(0:nan, 1))] <- NaN
  X
}

test_that("a worker's columns travel as the table or its entries other than +0, exactly", {
  take_c <- function(X, W, w) sparsevi:::lda_shard_take(X, W, w)
  take_r <- function(X, W, w) sparsevi:::shard_take_r(X, sparsevi:::shard_words(w, ncol(X), W))
  cols_c <- function(s) .Call(sparsevi:::ffi_lda_shard_columns, s)
  put_c <- function(X, s, W, w) .Call(sparsevi:::ffi_lda_shard_put, X, s, W, w - 1L)
  # by hand: 2 of 3 columns of a 3 x 5 table, words 2 and 4, mostly +0
  X <- matrix(0, 3, 5)
  X[2, 2] <- 1.5
  X[3, 4] <- -0
  X[1, 4] <- NaN
  for (take in list(take_r, take_c)) {
    expect_identical(take(X, 2L, 2L), list(K = 3L, n = 2L, p = c(0, 1, 3), i = c(1L, 0L, 2L),
                                           x = c(1.5, NaN, -0)))
    # a shard with more than 2/3 of its entries other than +0 comes whole
    expect_identical(take(X + 1, 2L, 1L), X[, c(1, 3, 5)] + 1)
    expect_identical(take(X, 7L, 7L), list(K = 3L, n = 0L, p = 0, i = integer(0),
                                           x = double(0)))
  }
  # C against R, and back: random tables with +0, -0 and NaN, 1 to 4 owners
  set.seed(12)
  for (i in 1:40) {
    K <- sample(1:6, 1)
    V <- sample(1:15, 1)
    W <- sample(1:4, 1)
    X <- random_table(K, V, neg_zero = 2L, nan = 1L)
    Y <- sparsevi:::lda_give_up(matrix(runif(K * V), K, V))
    for (w in seq_len(W)) {
      s <- take_c(X, W, w)
      expect_identical(s, take_r(X, W, w))
      m <- cols_c(s)
      expect_identical(m, X[, sparsevi:::shard_words(w, V, W), drop = FALSE])
      expect_identical(1 / m, 1 / X[, sparsevi:::shard_words(w, V, W), drop = FALSE])
      put_c(Y, s, W, w)
    }
    expect_identical(1 / as.vector(Y), 1 / as.vector(X))
  }
  # a runner's columns gathered from its own table and the owners' shards:
  # C against R (and the shards' matrices: ffi_lda_shard_columns())
  gather_c <- function(...) .Call(sparsevi:::ffi_lda_shard_gather, ...)
  for (i in 1:30) {
    K <- sample(1:5, 1)
    V <- sample(2:12, 1)
    n <- sample(0:10, 1)
    X <- random_table(K, V, neg_zero = 1L)
    who <- sample(0:2, n, replace = TRUE) # (0: this worker's own columns)
    own_at <- which(who == 0L)
    own_cols <- sample(V, length(own_at), replace = TRUE)
    from <- setdiff(unique(who), 0L)
    at <- lapply(from, function(o) which(who == o))
    parts <- lapply(at, function(a) {
      sparsevi:::lda_columns_take(random_table(K, V), sample(V, length(a), replace = TRUE))
    })
    for (p in parts) expect_identical(cols_c(p), sparsevi:::shard_columns_r(p))
    got <- gather_c(n, X, as.integer(own_cols), own_at, parts, at)
    want <- sparsevi:::shard_gather_r(n, X, own_cols, own_at, parts, at)
    expect_identical(got, want)
    expect_identical(1 / got, 1 / want)
  }
  X <- matrix(1, 2, 3)
  expect_error(gather_c(3L, X, 1:2, c(1L, 1L), list(), list()), "once each")
  expect_error(gather_c(3L, X, 1:2, 1:2, list(), list()), "once each")
  expect_error(gather_c(2L, X, c(1L, 4L), 1:2, list(), list()), "outside")
  expect_error(gather_c(2L, X, 1L, 1L, list(matrix(0, 2, 2)), list(2L)), "number of columns")
  expect_error(gather_c(2L, X, 1L, 1L, list(matrix(0, 3, 1)), list(2L)), "")
  # malformed shards are errors, not crashes
  X <- matrix(0, 3, 4)
  Y <- sparsevi:::lda_give_up(matrix(1, 3, 4))
  bad <- list(K = 3L, n = 2L, p = c(0, 2, 1), i = c(0L, 1L), x = c(1, 1))
  expect_error(cols_c(bad), "malformed")
  expect_error(cols_c(list(K = 3L, n = 2L, p = c(0, 1, 2), i = c(0L, 3L), x = c(1, 1))),
               "malformed")
  expect_error(cols_c(list(K = 3L, n = 1L, p = c(0, 2), i = c(1L, 1L), x = c(1, 1))),
               "malformed")
  expect_error(put_c(Y, list(K = 3L, n = 1L, p = c(0, 0), i = integer(0), x = double(0)), 2L, 1L),
               "wrong number of columns")
  expect_error(put_c(Y, list(K = 2L, n = 2L, p = c(0, 0, 0), i = integer(0), x = double(0)),
                     2L, 1L), "wrong shape")
  expect_error(.Call(sparsevi:::ffi_lda_columns_take, X, c(1L, 5L)), "outside")
  expect_error(.Call(sparsevi:::ffi_lda_columns_take, X, c(0L, 1L)), "outside")
})

test_that("a batch's kept proportions made where it ran equal those the master makes", {
  set.seed(5)
  x <- simulate_lda(D = 30, V = 40, K = 3, doc_length = 10, seed = 5)$dtm
  members <- list(1:12, 13:30)
  for (K in c(3L, 50L)) {
    control <- list(doc_topics = 8L, L = 8L, K = K, local = "cvb0", alpha = 0.1)
    w <- matrix(stats::rexp(K * 18), K, 18)
    w[sample.int(length(w), 20)] <- 0
    here <- sparsevi:::lda_kept_parts(x, members, control)
    there <- sparsevi:::lda_kept_parts(x, members, control)
    expect_identical(here$top, c(min(8, K), 0.1))
    res <- list(doc_topic = w, stats = list(tokens = 1))
    here$add(res, 2L)
    small <- sparsevi:::lda_result_top_share(res, there$top)
    expect_s3_class(small$doc_topic, "sparsevi_top_share")
    if (K > 8L) expect_lt(length(serialize(small, NULL)), length(serialize(res, NULL)) / 2)
    there$add(small, 2L)
    expect_identical(there$env$parts, here$env$parts)
    # (another batch's size is not taken)
    there$add(small, 1L)
    expect_null(there$env$parts[[1]])
  }
})

test_that("a round's batches run one to a worker where the round allows it", {
  runners <- sparsevi:::shard_runners
  # each at home when the homes differ; a second batch of the same home to
  # the idle worker
  expect_identical(runners(c(2L, 1L), 2L), c(2L, 1L))
  expect_identical(runners(c(1L, 1L), 2L), c(1L, 2L))
  expect_identical(runners(c(2L, 2L), 2L), c(2L, 1L))
  expect_identical(runners(c(3L, 3L, 3L, 1L), 4L), c(3L, 2L, 4L, 1L))
  # more batches than workers: at most ceiling(n / W) each, at home first
  r <- runners(c(1L, 1L, 1L, 1L, 2L), 2L)
  expect_identical(r, c(1L, 1L, 1L, 2L, 2L))
  set.seed(3)
  for (i in 1:50) {
    W <- sample(2:5, 1)
    home <- sample(W, sample(1:9, 1), replace = TRUE)
    r <- runners(home, W)
    # no worker runs more than its share (the round takes its busiest
    # worker's time), and each runs its own batches up to it
    cap <- ceiling(length(home) / W)
    expect_identical(max(tabulate(r, W)), as.integer(cap))
    expect_identical(pmin(tabulate(home[r == home], W), cap), pmin(tabulate(home, W), cap))
  }
})

test_that("fits on workers that own the topics by word equal the local fits", {
  skip_on_cran()
  skip_if_not_installed("mirai")
  w <- sparsevi_workers(2)
  on.exit(close(w), add = TRUE)
  x <- cluster_corpus()
  base <- list(x, K = 4, n_batches = 4, passes = 3, seed = 9, sync = 2, progress = FALSE)
  # the default engine with its seeded start, a random start, a sparse summary
  for (args in list(list(), list(init = "random"),
                    list(L = 2, sparse_rest = "renormalise", init = "random"))) {
    args <- c(base, args)
    a <- do.call(fit_lda, c(args, list(cluster = w)))
    b <- do.call(fit_lda, args)
    expect_same_lda(a, b)
    expect_identical(a$doc_topic, b$doc_topic)
    expect_true(all(a$trace$bytes_sent > 0) && all(a$trace$bytes_received > 0))
  }
  # update() on the same workers, and a round of three batches on two workers
  expect_same_lda(update(a, x, passes = 2, cluster = w, progress = FALSE),
                  update(b, x, passes = 2, progress = FALSE))
  args <- c(base[names(base) != "sync"], list(sync = 3, init = "random"))
  expect_same_lda(do.call(fit_lda, c(args, list(cluster = w))), do.call(fit_lda, args))
  # a corpus on disk, in steps within its files
  src <- uci_source_of(x, 60)
  args <- list(src, K = 4, batch_size = 25, passes = 2, seed = 9, sync = 2, progress = FALSE)
  a <- do.call(fit_lda, c(args, list(cluster = w)))
  b <- do.call(fit_lda, args)
  expect_identical(a$control$n_batches, 6L)
  expect_same_lda(a, b)
  expect_identical(a$doc_topic, b$doc_topic)
  # held-out scores within a lap gather the columns without changing the fit
  sp <- split_heldout(x, n_test = 24, seed = 1)
  args <- c(list(sp$train, K = 4, n_batches = 4, passes = 2, seed = 3, sync = 2,
                 progress = FALSE, heldout = sp$test, heldout_every = 2))
  a <- do.call(fit_lda, c(args, list(cluster = w)))
  b <- do.call(fit_lda, args)
  expect_same_lda(a, b)
  expect_gt(nrow(a$learning_curve), 2L) # (scores within the laps too)
  expect_identical(a$learning_curve$heldout, b$learning_curve$heldout)
  # nothing of the fits is left on the workers
  left <- lapply(w, function(wk) {
    mirai::mirai(ls(asNamespace("sparsevi")$worker_store), .compute = wk$profile)[]
  })
  expect_identical(left, list(character(0), character(0)))
})

test_that("the master's link carries the topics once a lap, not every round", {
  skip_on_cran()
  skip_if_not_installed("mirai")
  sharded <- sparsevi_workers(2)
  on.exit(close(sharded), add = TRUE)
  star <- sparsevi_workers(2, shard_topics = FALSE)
  on.exit(close(star), add = TRUE)
  x <- cluster_corpus()
  args <- list(x, K = 4, n_batches = 8, passes = 2, seed = 9, sync = 2, progress = FALSE,
               init = "random")
  a <- do.call(fit_lda, c(args, list(cluster = sharded)))
  b <- do.call(fit_lda, c(args, list(cluster = star)))
  expect_same_lda(a, b)
  expect_false(identical(a$trace$bytes_sent, b$trace$bytes_sent))
  expect_true(all(a$trace$bytes_between_workers > 0))
  expect_identical(b$trace$bytes_between_workers, c(0, 0))
  # the first lap sends the workers the topics; the second finds them there
  # (only the rounds' batch numbers and seeds go out, and the documents of
  # the batches run away from the worker that holds them), and each lap
  # takes them back (K = 50: the table is 8 K V = 24,000 bytes)
  a <- do.call(fit_lda, c(args[names(args) != "K"], list(K = 50, cluster = sharded)))
  table_bytes <- 8 * 50 * ncol(x)
  expect_gt(a$trace$bytes_sent[1], table_bytes)
  expect_lt(a$trace$bytes_sent[2], table_bytes / 2)
  expect_true(all(a$trace$bytes_received > table_bytes))
  # the last lap keeps the documents' proportions: the workers send their
  # top shares, not K x n matrices (8 K D bytes: 36,000 here)
  expect_lt(a$trace$bytes_received[2] - a$trace$bytes_received[1], 8 * 50 * nrow(x) / 2)
  expect_identical(a$doc_topic, do.call(fit_lda, c(args[names(args) != "K"],
                                                   list(K = 50, cluster = star)))$doc_topic)
  # a new fit's seeded start is +0 but for its seed documents' counts, and
  # goes out as those (a tenth of the table over 600 words)
  y <- simulate_lda(D = 120, V = 600, K = 4, doc_length = 40, seed = 22)$dtm
  seeded <- list(y, K = 50, n_batches = 8, passes = 1, seed = 9, sync = 2, progress = FALSE)
  a <- do.call(fit_lda, c(seeded, list(cluster = sharded)))
  expect_identical(a$control$init, "seeded")
  expect_lt(a$trace$bytes_sent[1], 8 * 50 * ncol(y) / 4)
  expect_same_lda(a, do.call(fit_lda, seeded))
  # with L topics per summary entry the topics stay mostly +0, and so do
  # the columns the owners send each round
  seeded$passes <- 2
  sparse <- c(seeded, list(L = 2, sparse_rest = "renormalise"))
  b <- do.call(fit_lda, c(sparse, list(cluster = sharded)))
  expect_same_lda(b, do.call(fit_lda, sparse))
  expect_lt(b$trace$bytes_between_workers[2], a$trace$bytes_between_workers[1] / 4)
  # the other engines keep their topics on the master
  args$local <- "vb"
  expect_same_lda(do.call(fit_lda, c(args, list(cluster = sharded))),
                  do.call(fit_lda, c(args, list(cluster = star))))
  expect_error(sparsevi_workers(2, shard_topics = NA), class = "sparsevi_error_argument")
})

test_that("a worker that dies mid-lap stops a sharded fit with the last completed model", {
  skip_on_cran()
  skip_if_not_installed("mirai")
  w <- sparsevi_workers(2)
  on.exit(close(w), add = TRUE)
  x <- cluster_corpus()
  args <- list(x, K = 4, n_batches = 4, passes = 3, seed = 9, sync = 2, progress = FALSE,
               init = "random")
  # worker 2 dies at its fourth round (the second lap)
  break_worker(w[[2]], "die", 4, step = "shard_worker_round")
  err <- tryCatch(do.call(fit_lda, c(args, list(cluster = w))), error = function(e) e)
  expect_s3_class(err, "sparsevi_error_worker")
  expect_s3_class(err$fit, "sparsevi_lda")
  expect_identical(nrow(err$fit$trace), 1L)
  one <- do.call(fit_lda, c(args[names(args) != "passes"], list(passes = 1)))
  expect_identical(err$fit$topic_word, one$topic_word)
  # the worker still alive was told to stop waiting: it answers at once
  alive <- mirai::mirai(TRUE, .compute = w[[1]]$profile)
  t0 <- proc.time()[["elapsed"]]
  expect_true(isTRUE(alive[]))
  expect_lt(proc.time()[["elapsed"]] - t0, 10)
})
