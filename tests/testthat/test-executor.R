# Training through a future plan (cluster = "future" or a plan object) and the
# wire format of the cluster executor.

test_that("a fit under a sequential future plan equals the fit without one", {
  skip_if_not_installed("future")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  x <- cluster_corpus()
  for (g in c("memoized", "stochastic")) {
    a <- fit_lda(x, local = "vb", K = 4, L = 2, global = g, n_batches = 4, passes = 3, seed = 9,
                 cluster = "future", progress = FALSE)
    b <- fit_lda(x, local = "vb", K = 4, L = 2, global = g, n_batches = 4, passes = 3, seed = 9,
                 progress = FALSE)
    expect_same_lda(a, b)
    # no persistent workers: each round's batches travel with the globals
    expect_true(all(a$trace$bytes_sent > 0))
    expect_true(all(a$trace$bytes_received > 0))
  }
  expect_identical(a$control$sync, 1L)
  # a plan object, used for this fit only
  future::plan(future::sequential)
  a <- fit_lda(x, local = "vb", K = 4, L = 2, n_batches = 4, passes = 2, seed = 3,
               cluster = future::tweak(future::sequential), progress = FALSE)
  b <- fit_lda(x, local = "vb", K = 4, L = 2, n_batches = 4, passes = 2, seed = 3, progress = FALSE)
  expect_same_lda(a, b)
  expect_s3_class(future::plan(), "sequential")
  sim <- simulate_mixture(N = 300, D = 2, K = 3, seed = 4)
  a <- fit_mixture(sim$X, K = 3, n_batches = 3, passes = 3, seed = 2, cluster = "future",
                   progress = FALSE)
  b <- fit_mixture(sim$X, K = 3, n_batches = 3, passes = 3, seed = 2, progress = FALSE)
  expect_identical(a$state, b$state)
})

test_that("a fit under a multisession plan keeps batches on the workers and equals the fit without one", {
  skip_on_cran()
  skip_if_not_installed("future")
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  # the workers must find this sparsevi
  invisible(future::value(future::future(.libPaths(p), globals = list(p = .libPaths()))))
  x <- cluster_corpus()
  for (g in c("memoized", "stochastic")) {
    a <- fit_lda(x, local = "vb", K = 4, L = 2, global = g, n_batches = 4, passes = 3, seed = 9,
                 cluster = "future", sync = 2, progress = FALSE)
    b <- fit_lda(x, local = "vb", K = 4, L = 2, global = g, n_batches = 4, passes = 3, seed = 9,
                 sync = 2, progress = FALSE)
    expect_same_lda(a, b)
    expect_identical(a$control$sync, 2L)
  }
  # batches stay on the workers: a round sends the globals only, so less
  # than sending the corpus again
  task <- fit_lda(x, local = "vb", K = 4, L = 2, global = "stochastic", n_batches = 4, sync = 2,
                  passes = 3, seed = 9, cluster = future::tweak(future::sequential),
                  progress = FALSE)
  expect_same_lda(a, task)
  expect_true(all(a$trace$bytes_sent < task$trace$bytes_sent))
  # the plan still works for futures afterwards
  expect_s3_class(future::plan(), "multisession")
  expect_identical(future::value(future::future(1 + 1)), 2)
})

test_that("bad cluster arguments give classed errors", {
  x <- cluster_corpus()
  expect_error(fit_lda(x, K = 4, cluster = "futures"), class = "sparsevi_error_argument")
  expect_error(fit_lda(x, K = 4, cluster = list()), class = "sparsevi_error_argument")
  expect_error(fit_mixture(matrix(rnorm(40), 20), K = 2, cluster = 2),
               class = "sparsevi_error_argument")
})

test_that("the executor counts the bytes it serialises and sends", {
  skip_on_cran()
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  x <- cluster_corpus()
  fit <- fit_lda(x, local = "vb", K = 4, L = 2, n_batches = 4, passes = 2, seed = 9, cluster = cl,
                 sync = 2, progress = FALSE)
  # each round sends the globals once to each of its 2 workers (here the
  # batches hold nearly every word: nearly all the columns travel)
  view <- sparsevi:::lda_local_view(fit$state)
  one <- length(serialize(view, NULL, xdr = FALSE))
  expect_true(all(fit$trace$bytes_sent > 2 * one))
  expect_true(all(fit$trace$bytes_sent < 4 * one + 40000))
  # batches are freed on the workers when the fit ends
  left <- parallel::clusterCall(cl, function() length(ls(sparsevi:::worker_store)))
  expect_identical(unlist(left), c(0L, 0L))
})

test_that("a worker's batches travel with one copy of the corpus's terms and arrive whole", {
  ns <- asNamespace("sparsevi")
  x <- cluster_corpus()
  batches <- lapply(list(1:5, 6:12, 13:20), function(d) ns$dtm_subset(x, d))
  apart <- ns$batches_apart(batches)
  expect_identical(apart$terms, x$vocab)
  expect_true(all(vapply(apart$batches, function(b) is.null(b$vocab), TRUE)))
  expect_identical(lapply(apart$batches, names), lapply(batches, names))
  # (the payload: one copy of the terms, where each batch carried them)
  expect_lt(length(ns$wire(apart)), length(ns$wire(batches)) - length(ns$wire(x$vocab)))
  # the worker's store holds the batches as they were
  token <- "test_batches_apart"
  on.exit(rm(list = token, envir = ns$worker_store), add = TRUE)
  do.call(ns$cluster_worker_init, c(list(token = token, ids = c(2L, 4L, 5L)), apart))
  expect_identical(get(token, envir = ns$worker_store)$batches[c(2L, 4L, 5L)], batches)
  # batches of other terms, or of other kinds, travel whole
  other <- batches
  other[[2]]$vocab <- paste0(other[[2]]$vocab, "_")
  expect_identical(ns$batches_apart(other), list(batches = other, terms = NULL))
  rows <- list(matrix(1, 2, 2), matrix(2, 2, 2))
  expect_identical(ns$batches_apart(rows), list(batches = rows, terms = NULL))
})

test_that("a worker receives only the topic columns of its batches' words", {
  skip_on_cran()
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  sv <- split_vocab_corpus()
  # the same documents in batches that each hold both halves of the words
  mixed <- list(c(1:10, 41:50), c(11:20, 51:60), c(21:30, 61:70), c(31:40, 71:80))
  for (local in c("vb", "cvb0", "gibbs")) {
    args <- list(sv$x, K = 20, local = local, passes = 2, seed = 4, sync = 2,
                 progress = FALSE)
    if (local == "vb") args$L <- 3
    a <- do.call(fit_lda, c(args, list(batches = sv$batches, cluster = cl)))
    b <- do.call(fit_lda, c(args, list(batches = sv$batches)))
    expect_same_lda(a, b)
    m <- do.call(fit_lda, c(args, list(batches = mixed, cluster = cl)))
    # each worker gets half of the topic columns instead of all of them, and
    # returns its summaries over them (gibbs's summaries are sparse counts of
    # the sampled topics whatever the columns: as many either way)
    expect_true(all(a$trace$bytes_sent < 0.65 * m$trace$bytes_sent))
    if (local != "gibbs") {
      expect_true(all(a$trace$bytes_received < 0.8 * m$trace$bytes_received))
    }
  }
  # two batches of a worker in one round (sync = 4): the union of their words
  args <- list(sv$x, K = 20, L = 3, global = "stochastic", batches = sv$batches, passes = 2,
               seed = 5, sync = 4, progress = FALSE)
  expect_same_lda(do.call(fit_lda, c(args, list(cluster = cl))), do.call(fit_lda, args))
})

test_that("a cluster's rounds leave the master's topic store its own: no copy per global step", {
  skip_on_cran()
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  # the store's copies (lda_store_copy(): a K x V table each) counted
  copies <- 0
  orig <- sparsevi:::lda_store_copy
  utils::assignInNamespace("lda_store_copy", function(st) {
    copies <<- copies + 1
    orig(st)
  }, ns = "sparsevi")
  on.exit(utils::assignInNamespace("lda_store_copy", orig, ns = "sparsevi"), add = TRUE)
  x <- cluster_corpus()
  for (extra in list(list(local = "cvb0"), list(local = "cvb0", L = 2),
                     list(local = "vb", global = "stochastic", L = 3),
                     list(local = "ope", global = "ml"))) {
    args <- c(list(x, K = 6, batch_size = 20, sync = 2, passes = 2, seed = 3,
                   progress = FALSE), extra)
    copies <- 0
    b <- do.call(fit_lda, args)
    local_copies <- copies
    copies <- 0
    a <- do.call(fit_lda, c(args, list(cluster = cl)))
    # (12 global steps: one copy each was the fault)
    expect_identical(copies, local_copies)
    expect_lte(copies, 2)
    expect_same_lda(a, b)
  }
})

test_that("results over a worker's columns go back to the whole vocabulary", {
  sv <- split_vocab_corpus()
  x <- sv$x
  batch <- sparsevi:::dtm_subset(x, c(3L, 50L))
  cols <- sparsevi:::batch_columns(batch)
  expect_identical(cols$vocab, sort(unique(batch$term)) + 1L)
  U <- sort(c(cols$vocab, c(1L, 399L)[!c(1L, 399L) %in% cols$vocab]))
  inside <- sparsevi:::batch_in_columns(batch, cols, U)
  expect_identical(U[inside$term + 1L] - 1L, batch$term)
  expect_identical(ncol(inside), length(U))
  # what a worker gets of a K x V table: its columns U
  m <- matrix(runif(5 * 400), 5, 400)
  expect_identical(sparsevi:::lda_table_columns(m, U), m[, U, drop = FALSE])
  # a sparse summary over U, and list(words, x), back in V = 400 columns
  set.seed(2)
  S <- Matrix::rsparsematrix(5, length(U), 0.4)
  full <- sparsevi:::lda_columns_result(list(summary = S), U, 400L)$summary
  dense <- matrix(0, 5, 400)
  dense[, U] <- as.matrix(S)
  expect_identical(dim(full), c(5L, 400L))
  expect_identical(as.matrix(full), dense)
  # the blocks the global steps read (C) against their R reference
  blocks <- sparsevi:::lda_summary_blocks(full, 5L)
  expect_identical(blocks, sparsevi:::lda_summary_blocks_r(full, 5L))
  expect_identical(blocks$words, as.integer(U[diff(S@p) > 0] - 1L))
  empty <- Matrix::sparseMatrix(i = integer(0), j = integer(0), x = numeric(0), dims = c(5, 7))
  expect_identical(sparsevi:::lda_summary_blocks(empty, 5L),
                   list(words = integer(0), x = numeric(0)))
  parts <- list(words = c(0L, 2L), x = runif(10))
  back <- sparsevi:::lda_columns_result(list(summary = parts), U, 400L)$summary
  expect_identical(back$words, as.integer(U[c(1L, 3L)] - 1L))
  expect_identical(back$x, parts$x)
})

test_that("wire() writes the bytes of serialize(xdr = FALSE), and they read back", {
  wire <- sparsevi:::wire
  sim <- simulate_lda(D = 8, V = 12, K = 2, seed = 1)
  fit <- fit_lda(sim$dtm, K = 2, passes = 1, seed = 1, progress = FALSE)
  # (an environment whose parents end at base: the test's own frames are
  # not part of what is compared)
  e <- new.env(parent = baseenv())
  e$v <- 1:3
  f <- local(function(x) x + v, e)
  objs <- list(NULL, 1, "a", NA, list(), -0, c(a = 1.5, b = NA, c = Inf),
               # what the executor sends: a namespace function (by reference), a
               # closure with its environment, shared environments, S3 and S4 objects
               list(fun = sparsevi:::lda_batch_step, f = f, e = e, e2 = e,
                    dtm = sim$dtm, fit = fit, m = Matrix::Matrix(diag(3), sparse = TRUE)),
               # a payload larger than a serialisation chunk
               list(x = matrix(stats::runif(3e5), 300), i = seq_len(1e5), r = as.raw(1:255)))
  for (o in objs) {
    w <- wire(o)
    expect_identical(w, serialize(o, NULL, xdr = FALSE))
    back <- unserialize(w)
    expect_identical(serialize(back, NULL, xdr = FALSE), w)
  }
})

test_that("the compact wire form of doubles unpacks to identical values", {
  pack <- sparsevi:::pack_doubles
  unpack <- sparsevi:::unpack_doubles
  set.seed(1)
  m <- matrix(0.1, 30, 100, dimnames = list(NULL, paste0("w", 1:100)))
  m[sample(length(m), 900)] <- runif(900, 0.1, 5)
  p <- pack(list(state = list(lambda = m, t = 3L), control = list(K = 30, alpha = 0.5)))
  expect_s3_class(p$state$lambda, "sparsevi_packed")
  expect_lt(length(serialize(p, NULL)), 0.7 * length(serialize(m, NULL)))
  expect_identical(unpack(p), list(state = list(lambda = m, t = 3L),
                                   control = list(K = 30, alpha = 0.5)))
  # lengths not a multiple of 8, zeros as fill, vectors left whole
  v <- c(rep(0, 1500), runif(1001))
  expect_identical(unpack(pack(v)), v)
  neg <- v
  neg[3] <- -0
  expect_false(inherits(pack(neg), "sparsevi_packed"))
  expect_identical(1 / unpack(pack(neg))[3], -Inf)
  dense <- runif(5000)
  expect_identical(pack(dense), dense)
  na <- c(rep(1, 2000), NA)
  expect_identical(unpack(pack(na)), na)
  expect_identical(pack(1:5000), 1:5000)
})

test_that("a sparse summary's full columns travel without their topics, unpacked identical", {
  pack <- sparsevi:::pack_doubles
  unpack <- sparsevi:::unpack_doubles
  K <- 20L
  # columns: full (K), 3 topics, empty, full, the first 10 topics (a full
  # column of 10), topics 0..8 but one missing, full
  cols <- list(0:19, c(2L, 5L, 11L), integer(0), 0:19, 0:9, c(0:7, 9L), 0:19)
  S <- list(words = c(1L, 4L, 6L, 7L, 9L, 12L, 30L),
            p = c(0L, cumsum(lengths(cols))), k = unlist(cols),
            v = runif(sum(lengths(cols))), r = runif(7))
  p <- pack(list(summary = S, doc_topic = matrix(1, 2, 2)))
  expect_identical(p$summary$k_full, c(0L, 3L, 4L, 6L))
  expect_identical(p$summary$k, c(2L, 5L, 11L, 0:7, 9L))
  expect_lt(length(serialize(p$summary, NULL)), length(serialize(S, NULL)) - 4 * 60)
  expect_identical(unpack(p), list(summary = S, doc_topic = matrix(1, 2, 2)))
  # no full column: as it was
  few <- list(words = 0:1, p = c(0L, 2L, 3L), k = c(1L, 3L, 0L), v = runif(3))
  expect_identical(pack(few), few)
  # a list that only looks like one keeps its elements
  other <- list(p = 1:3, kept = 1L)
  expect_identical(unpack(pack(other)), other)
  # malformed input is refused, not read out of bounds
  expect_error(.Call(sparsevi:::ffi_wire_pack_columns, c(0L, 100L, 5L), 0:4, 8L),
               "malformed")
  expect_error(.Call(sparsevi:::ffi_wire_unpack_columns, c(0L, 3L), 0L, 5L), "packed")
})
