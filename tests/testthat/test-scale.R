# Scale: rounds of batches, training on an R cluster, corpora on disk.

test_that("rounds of batches keep the memoized objective non-decreasing", {
  x <- cluster_corpus()
  fit <- fit_lda(x, local = "vb", K = 4, L = 2, n_batches = 6, sync = 3, passes = 5, seed = 1,
                 progress = FALSE)
  obj <- fit$trace$objective
  expect_true(all(diff(obj) >= -1e-7 * abs(obj[-1])))
  expect_identical(fit$control$sync, 3L)
  expect_error(fit_lda(x, K = 4, sync = 0), class = "sparsevi_error_argument")
})

test_that("user batches and a given initial lambda are honoured and checked", {
  x <- cluster_corpus()
  b <- split(seq_len(120), rep(1:4, each = 30))
  init <- fit_lda(x, local = "vb", K = 4, passes = 1, seed = 3, progress = FALSE)$lambda
  f1 <- fit_lda(x, local = "vb", K = 4, L = 2, batches = b, init = init, passes = 2, seed = 1,
                progress = FALSE)
  f2 <- fit_lda(x, local = "vb", K = 4, L = 2, batches = rev(rev(b)), init = init, passes = 2,
                seed = 1,
                progress = FALSE)
  expect_same_lda(f1, f2)
  expect_identical(f1$control$n_batches, 4L)
  expect_error(fit_lda(x, K = 4, batches = list(1:10)), class = "sparsevi_error_argument")
  expect_error(fit_lda(x, K = 4, batches = b, n_batches = 4),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(x, K = 4, init = init[, -1]), class = "sparsevi_error_argument")
  expect_error(fit_lda(x, K = 4, init = -init), class = "sparsevi_error_argument")
})

test_that("a corpus on disk gives the fit of the same corpus in memory", {
  x <- cluster_corpus()
  src <- uci_source_of(x, 25, shuffle = FALSE)
  expect_s3_class(src, "sparsevi_source")
  expect_identical(dim(src), dim(x))
  expect_length(src$files, 5L)
  expect_equal(sum(src$n_tokens), sum(x$count))
  b <- split(seq_len(120), ceiling(seq_len(120) / 25))
  init <- fit_lda(x, local = "vb", K = 4, passes = 1, seed = 3, progress = FALSE)$lambda
  for (g in c("memoized", "stochastic")) {
    a <- fit_lda(src, local = "vb", K = 4, L = 2, global = g, init = init, passes = 3, seed = 5,
                 progress = FALSE)
    m <- fit_lda(x, local = "vb", K = 4, L = 2, global = g, init = init, batches = b, passes = 3,
                 seed = 5, progress = FALSE)
    expect_same_lda(a, m)
  }
  s1 <- fit_lda(src, local = "vb", K = 4, global = "streaming", init = init, seed = 5,
                progress = FALSE)
  s2 <- fit_lda(x, local = "vb", K = 4, global = "streaming", init = init, batches = b, seed = 5,
                progress = FALSE)
  expect_same_lda(s1, s2)
  expect_error(fit_lda(src, K = 4, n_batches = 2), class = "sparsevi_error_argument")
  expect_error(uci_source(tempfile()), class = "sparsevi_error_file")
})

test_that("a fit from disk starts where the fit in memory does, batches smaller than K", {
  # (the start seeds from the whole corpus's documents, not the first batch:
  # batches of 25 documents and K = 30 used to start at random)
  x <- cluster_corpus()
  src <- uci_source_of(x, 25, shuffle = FALSE)
  b <- split(seq_len(120), ceiling(seq_len(120) / 25))
  same_docs <- function(a, b) {
    f <- c("doc_ptr", "term", "count", "vocab")
    expect_identical(unclass(a)[f], unclass(b)[f])
  }
  same_docs(sparsevi:::source_docs(src), x)
  for (local in c("cvb0", "vb")) {
    a <- fit_lda(src, K = 30, local = local, passes = 2, seed = 4, progress = FALSE)
    m <- fit_lda(x, K = 30, local = local, batches = b, passes = 2, seed = 4, progress = FALSE)
    expect_identical(a$control$init, "bregman")
    expect_same_lda(a, m)
  }
  # a pool of documents (more than bregman_pool(K)): the same documents read
  # from the batches that hold them
  sim <- simulate_lda(D = 5100, V = 40, K = 3, doc_length = 6, seed = 2)$dtm
  big <- uci_source_of(sim, 700, shuffle = FALSE)
  idx <- sort(sample.int(5100, 300))
  same_docs(sparsevi:::source_docs(big, idx), sparsevi:::dtm_subset(sim, idx))
  seed <- sparsevi:::resolve_seed(9)
  same_docs(sparsevi:::lda_start_docs(big, 3L, seed), sparsevi:::lda_start_docs(sim, 3L, seed))
  expect_identical(nrow(sparsevi:::lda_start_docs(sim, 3L, seed)), 5000L)
  # fewer documents than topics: the random start, and the fit says so
  few <- fit_lda(sparsevi:::dtm_subset(x, 1:20), K = 30, passes = 1, seed = 1, progress = FALSE)
  expect_identical(few$control$init, "random")
})

test_that("a shuffled source: batches drawn at random, fits as in memory, doc_topic in the file's order", {
  x <- cluster_corpus()
  ns <- asNamespace("sparsevi")
  src <- uci_source_of(x, 25)
  expect_length(src$files, 5L)
  expect_identical(src$n_docs, c(25L, 25L, 25L, 25L, 20L))
  expect_identical(sort(src$ids), seq_len(120))
  expect_false(identical(src$ids, seq_len(120)))
  rows <- ns$source_rows(src)
  f <- c("doc_ptr", "term", "count")
  for (b in seq_along(rows)) {
    expect_false(is.unsorted(rows[[b]]))
    expect_identical(unclass(ns$source_batch(src, b))[f], unclass(ns$dtm_subset(x, rows[[b]]))[f])
  }
  expect_equal(sum(src$n_tokens), sum(x$count))
  # the same seed, the same batches; another seed, others
  expect_identical(uci_source_of(x, 25)$ids, src$ids)
  expect_false(identical(uci_source_of(x, 25, seed = 2)$ids, src$ids))
  # buckets and staging files smaller than the corpus (several pieces each)
  stage <- uci_source_of(x, 7, shuffle = FALSE)
  parts <- list(files = stage$files, n_docs = stage$n_docs,
                n_entries = vapply(stage$files, function(p) length(readRDS(p)$term), 0))
  small <- ns$source_shuffle(parts, 25L, sparsevi:::resolve_seed(1), stage$dir, bucket_entries = 1500)
  expect_identical(small$ids, src$ids)
  expect_length(list.files(stage$dir, pattern = "^piece"), 0L)
  # a fit from it equals the fit in memory with those batches, its
  # doc_topic in the file's order, and its start from the same documents
  same_docs <- function(a, b) expect_identical(unclass(a)[f], unclass(b)[f])
  same_docs(ns$source_docs(src, c(3L, 40L, 41L, 99L)), ns$dtm_subset(x, c(3L, 40L, 41L, 99L)))
  for (local in c("cvb0", "vb")) {
    a <- fit_lda(src, K = 30, local = local, passes = 2, seed = 4, progress = FALSE)
    m <- fit_lda(x, K = 30, local = local, batches = unname(rows), passes = 2, seed = 4,
                 progress = FALSE)
    expect_same_lda(a, m)
    expect_identical(unname(a$doc_topic), unname(m$doc_topic)) # (the source has no names)
  }
  expect_output(print(src), "shuffled")
  # update() goes on with the same batches, and refuses others
  a <- fit_lda(src, K = 3, local = "vb", passes = 1, seed = 4, progress = FALSE)
  expect_s3_class(update(a, uci_source_of(x, 25), passes = 1), "sparsevi_lda")
  expect_error(update(a, uci_source_of(x, 25, seed = 2), passes = 1),
               class = "sparsevi_error_argument")
  expect_error(uci_source_of(x, 25, shuffle = NA), class = "sparsevi_error_argument")
  expect_error(uci_source_of(x, 25, seed = NULL), class = "sparsevi_error_argument")
})

test_that("a fit from disk takes its own steps within the batch files, as in memory", {
  x <- cluster_corpus()
  ns <- asNamespace("sparsevi")
  src <- uci_source_of(x, 25)
  # steps of at most 10 documents: files of 25 in three, the last of 20 in two
  seed <- ns$resolve_seed(4)
  st <- ns$source_steps(src$n_docs, 10L, seed)
  expect_identical(attr(st, "file"), c(rep(1:4, each = 3L), 5L, 5L))
  expect_identical(lengths(st), c(rep(c(8L, 8L, 9L), 4L), 10L, 10L))
  expect_identical(sort(unlist(st[1:3])), 1:25)
  expect_false(any(vapply(st, is.unsorted, TRUE)))
  # rows drawn at random within a file, not runs of neighbours (a shuffled
  # file keeps its documents in the corpus's order)
  expect_false(identical(unlist(st[1:3]), 1:25))
  expect_identical(ns$source_steps(src$n_docs, 10L, seed), st)
  # each whole file a step when the step is as large
  whole <- ns$source_steps(src$n_docs, 25L, seed)
  expect_identical(attr(whole, "file"), 1:5)
  expect_identical(lapply(whole, identity), lapply(src$n_docs, seq_len))
  rows <- ns$source_step_rows(src, st)
  expect_identical(sort(unlist(rows)), seq_len(120))
  # the reader gives each step's documents, reading a file once for its steps
  reader <- ns$source_step_reader(src, st)
  f <- c("doc_ptr", "term", "count")
  read <- ns$source_gc # (tokens of the files read since the last collection)
  old <- read$tokens
  read$tokens <- 0
  for (b in seq_along(st)) {
    expect_identical(unclass(reader(b))[f], unclass(ns$dtm_subset(x, rows[[b]]))[f])
  }
  expect_equal(read$tokens, sum(src$n_tokens))
  read$tokens <- old
  # a lap visits each file's steps together; memoized laps in order
  ctl <- list(n_batches = length(st), seed = ns$resolve_seed(3), local = "cvb0",
              global = "stochastic")
  ex <- list(groups = attr(st, "file"), sizes = lengths(st))
  for (lap in 1:3) {
    v <- ns$lda_lap_visit(ctl, lap, ex)
    expect_identical(sort(v), seq_along(st))
    g <- attr(st, "file")[v]
    expect_identical(sum(diff(g) != 0), 4L)
  }
  expect_identical(ns$lda_lap_visit(ctl, 1, list(sizes = lengths(st))),
                   order(ns$lda_unif(ctl$seed, 601, length(st))))
  # a memoized fit from disk in steps of 10 equals the fit in memory with
  # those batches, doc_topic in the file's order
  a <- fit_lda(src, K = 4, local = "vb", global = "memoized", batch_size = 10, passes = 2,
               seed = 4, progress = FALSE)
  m <- fit_lda(x, K = 4, local = "vb", global = "memoized", batches = rows, passes = 2,
               seed = 4, progress = FALSE)
  expect_identical(a$control$n_batches, 14L)
  expect_same_lda(a, m)
  expect_identical(unname(a$doc_topic), unname(m$doc_topic))
  # the engines' own minibatches (100 documents) on a source of one file of
  # 120; a fit in steps covers every document in its doc_topic
  one <- uci_source_of(x, 120)
  for (local in c("cvb0", "vb", "ope")) {
    d <- fit_lda(one, K = 4, local = local, passes = 1, seed = 4, progress = FALSE)
    expect_identical(d$control[c("batch_size", "n_batches")], list(batch_size = 100L, n_batches = 2L))
  }
  big <- uci_source_of(x, 60)
  small <- fit_lda(big, K = 4, batch_size = 20, passes = 2, seed = 4, progress = FALSE)
  expect_identical(small$control$n_batches, 6L)
  expect_identical(dim(small$doc_topic), c(120L, 4L))
  expect_true(all(abs(Matrix::rowSums(small$doc_topic) - 1) < 1e-12))
  # update() goes on in the same steps
  expect_identical(update(small, big, passes = 1)$control$n_batches, 6L)
  expect_error(fit_lda(big, K = 4, n_batches = 6), "batch_size",
               class = "sparsevi_error_argument")
  expect_error(fit_lda(big, K = 4, n_batches = 2, batch_size = 20),
               class = "sparsevi_error_argument")
  expect_error(fit_lda(big, K = 4, batch_size = 0), "batch_size",
               class = "sparsevi_error_argument")
  expect_error(fit_lda(big, K = 4, n_batches = NA), "n_batches", class = "sparsevi_error_argument")
})

test_that("coherence, summary, predict and held-out scores take a corpus on disk", {
  x <- cluster_corpus()
  src <- uci_source_of(x, 25) # (shuffled: the file's order comes back)
  fit <- fit_lda(src, K = 4, passes = 2, seed = 1, progress = FALSE)
  # coherence counts batch by batch: NPMI exactly as in memory, UMass up to
  # the order of its sum
  expect_identical(coherence(fit, src), coherence(fit, x))
  expect_identical(coherence(fit, src, n = 5), coherence(fit, x, n = 5))
  expect_equal(coherence(fit, src, "umass"), coherence(fit, x, "umass"), tolerance = 1e-13)
  expect_identical(attr(coherence(fit, src, "umass"), "skipped"),
                   attr(coherence(fit, x, "umass"), "skipped"))
  expect_equal(summary(fit, x = src)$npmi, summary(fit, x = x)$npmi)
  # a reference on disk over other terms: the fit's words matched by name
  other <- uci_source_of(as_dtm(as_dgCMatrix(x)[, rev(seq_len(ncol(x)))]), 50)
  expect_identical(coherence(fit, other), coherence(fit, x))
  # the functions that need every document at once read it whole, in the
  # file's order
  same <- c("doc_ptr", "term", "count", "vocab")
  expect_identical(unclass(as_dtm(src))[same], unclass(x)[same])
  expect_identical(unname(predict(fit, src)), unname(predict(fit, x)))
  expect_identical(heldout_loglik(fit, src, seed = 2), heldout_loglik(fit, x, seed = 2))
})

test_that("batches from disk share a collection until 100,000 tokens are read", {
  ns <- asNamespace("sparsevi")
  src <- uci_source_of(cluster_corpus(), 25)
  read <- ns$source_gc # (tokens read since the last collection)
  old <- read$tokens
  on.exit(read$tokens <- old)
  read$tokens <- 0
  for (b in seq_along(src$files)) ns$source_batch(src, b)
  expect_equal(read$tokens, sum(src$n_tokens))
  read$tokens <- ns$source_collect_tokens - 1
  ns$source_batch(src, 2L)
  expect_equal(read$tokens, src$n_tokens[2])
})

test_that("a fit on a 2-worker cluster equals the fit without one", {
  skip_on_cran()
  skip_if_not_installed("parallel")
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  x <- cluster_corpus()
  for (g in c("memoized", "stochastic")) {
    a <- fit_lda(x, local = "vb", K = 4, L = 2, global = g, n_batches = 4, passes = 3, seed = 9,
                 cluster = cl, sync = 2, progress = FALSE)
    b <- fit_lda(x, local = "vb", K = 4, L = 2, global = g, n_batches = 4, passes = 3, seed = 9,
                 sync = 2, progress = FALSE)
    expect_same_lda(a, b)
    expect_true(all(a$trace$bytes_sent > 0))
    expect_true(all(a$trace$bytes_received > 0))
    expect_identical(b$trace$bytes_sent, rep(0, 3))
  }
  # the other engines on the same cluster (their topics travel by columns,
  # gibbs's as its sparse store's columns)
  a <- fit_lda(x, K = 4, local = "cvb0", batch_size = 30, passes = 2, seed = 2,
               cluster = cl, sync = 2, progress = FALSE)
  b <- fit_lda(x, K = 4, local = "cvb0", batch_size = 30, passes = 2, seed = 2,
               sync = 2, progress = FALSE)
  expect_same_lda(a, b)
  # ... from the seeded start, a store the first lap writes in place
  a <- fit_lda(x, K = 4, local = "cvb0", init = "seeded", batch_size = 30, passes = 2,
               seed = 2, cluster = cl, sync = 2, progress = FALSE)
  b <- fit_lda(x, K = 4, local = "cvb0", init = "seeded", batch_size = 30, passes = 2,
               seed = 2, sync = 2, progress = FALSE)
  expect_same_lda(a, b)
  # ... from disk, in steps within the files (each file read once per worker)
  src <- uci_source_of(x, 60)
  a <- fit_lda(src, K = 4, local = "cvb0", batch_size = 25, passes = 2, seed = 2,
               cluster = cl, sync = 2, progress = FALSE)
  b <- fit_lda(src, K = 4, local = "cvb0", batch_size = 25, passes = 2, seed = 2,
               sync = 2, progress = FALSE)
  expect_identical(a$control$n_batches, 6L)
  expect_same_lda(a, b)
  expect_identical(a$doc_topic, b$doc_topic)
  for (eg in list(c("ope", "ml"), c("ope", "stochastic"), c("gibbs", "stochastic"),
                  c("vb", "streaming"))) {
    a <- fit_lda(x, K = 4, local = eg[1], global = eg[2], n_batches = 4, passes = 1,
                 seed = 3, cluster = cl, sync = 2, progress = FALSE)
    b <- fit_lda(x, K = 4, local = eg[1], global = eg[2], n_batches = 4, passes = 1,
                 seed = 3, sync = 2, progress = FALSE)
    expect_same_lda(a, b)
  }
  expect_error(fit_lda(x, K = 4, cluster = "localhost"), class = "sparsevi_error_argument")
  # by default (sync = 1, whatever the executor) a fit on the cluster equals
  # the default fit without one, restarts on
  for (g in c("memoized", "stochastic")) {
    expect_message(
      a <- fit_lda(x, local = "vb", K = 5, L = 2, global = g, n_batches = 4, passes = 3, seed = 9,
                   restarts = TRUE, cluster = cl, progress = FALSE),
      class = "sparsevi_message_sync")
    b <- fit_lda(x, local = "vb", K = 5, L = 2, global = g, n_batches = 4, passes = 3, seed = 9,
                 restarts = TRUE, progress = FALSE)
    expect_identical(a$control$sync, 1L)
    expect_same_lda(a, b)
    expect_identical(a$trace$restart_accept, b$trace$restart_accept)
    # the restarts did something after the first lap
    expect_true(all(b$trace$restart_accept[-1] > 0))
  }
  expect_message(
    a <- fit_mixture(matrix(c(1:40, (1:40)^1.5), 40), K = 2, n_batches = 4, passes = 2,
                     seed = 1, cluster = cl, progress = FALSE),
    class = "sparsevi_message_sync")
  b <- fit_mixture(matrix(c(1:40, (1:40)^1.5), 40), K = 2, n_batches = 4, passes = 2,
                   seed = 1, progress = FALSE)
  expect_identical(a$state, b$state)
})

test_that("a worker that dies gets a classed error that keeps the last model", {
  skip_on_cran()
  skip_on_os("windows")
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(try(parallel::stopCluster(cl), silent = TRUE), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  x <- cluster_corpus()
  fit <- fit_lda(x, local = "vb", K = 4, L = 2, n_batches = 4, passes = 2, seed = 9, cluster = cl,
                 sync = 2, progress = FALSE)
  pid <- parallel::clusterCall(cl[2], Sys.getpid)[[1]]
  tools::pskill(pid)
  Sys.sleep(0.5)
  err <- tryCatch(update(fit, x, passes = 2, cluster = cl, progress = FALSE),
                  sparsevi_error_worker = function(e) e)
  expect_s3_class(err, "sparsevi_error_worker")
  expect_match(conditionMessage(err), "Worker 2")
  expect_s3_class(err$fit, "sparsevi_lda")
  expect_identical(err$fit$topic_word, fit$topic_word)
  expect_identical(nrow(err$fit$trace), 2L)
})

test_that("fit_mixture on a 2-worker cluster equals the fit without one", {
  skip_on_cran()
  cl <- parallel::makePSOCKcluster(2L)
  on.exit(parallel::stopCluster(cl), add = TRUE)
  parallel::clusterCall(cl, function(p) .libPaths(p), .libPaths())
  sim <- simulate_mixture(N = 600, D = 3, K = 3, seed = 4)
  for (g in c("memoized", "stochastic")) {
    a <- fit_mixture(sim$X, K = 3, L = 2, global = g, n_batches = 4, passes = 4,
                     seed = 2, cluster = cl, sync = 2, progress = FALSE)
    b <- fit_mixture(sim$X, K = 3, L = 2, global = g, n_batches = 4, passes = 4,
                     seed = 2, sync = 2, progress = FALSE)
    expect_identical(a$state, b$state)
    expect_identical(a$trace$objective, b$trace$objective)
  }
  # rounds keep the memoized objective non-decreasing after lap 0
  a <- fit_mixture(sim$X, K = 3, n_batches = 6, sync = 3, passes = 6, seed = 2,
                   progress = FALSE)
  obj <- a$trace$objective
  expect_true(all(diff(obj) >= -1e-9 * abs(obj[-1])))
})
