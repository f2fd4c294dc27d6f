# The topic store (R/lda-store.R, src/lda-store.c): one type for SCVB0,
# stochastic / memoized vb and ML-OPE; in-place writes only to a store no one
# else holds; no buffer shared between calls; a lap on its own copy.

store_lambda0 <- function(K, V, seed) {
  matrix(0.05 + uniform_source(seed)(K * V), K, V)
}

# The two sizes of the thread tests, below and above 524,288 values (K x
# words), where two threads stop making the shape form's columns in one
# pass (the store update splits only from three threads on, above 8,192):
# K, U words spread over V, and a start lambda.
store_split_cases <- function(seed) {
  lapply(list(c(K = 40, U = 300, V = 500), c(K = 160, U = 3400, V = 3600)), function(d) {
    list(K = d[["K"]], U = d[["U"]], V = d[["V"]], lam = store_lambda0(d[["K"]], d[["V"]], seed),
         words = as.integer(floor(seq(0, d[["V"]] - 1, length.out = d[["U"]]))))
  })
}

# A fit of the lap-copy tests: 160 documents, 4 batches a lap.
store_fit <- function(local, global, passes) {
  sim <- simulate_lda(D = 160, V = 40, K = 3, doc_length = 30, seed = 8)
  fit_lda(sim$dtm, K = 3, local = local, global = global, passes = passes,
          batch_size = 40, seed = 3, progress = FALSE)
}

# Wraps the namespace's function `name` so that it fails from its `after`-th
# call on (never, for Inf) and counts its calls; env$restore() puts it back.
counted <- function(name, after = Inf) {
  ns <- asNamespace("sparsevi")
  orig <- get(name, ns)
  env <- new.env()
  env$calls <- 0
  utils::assignInNamespace(name, function(...) {
    env$calls <- env$calls + 1
    if (env$calls >= after) stop("injected failure")
    orig(...)
  }, ns = "sparsevi")
  env$restore <- function() utils::assignInNamespace(name, orig, ns = "sparsevi")
  env
}

# store_fit() with lda_store_update() (every stochastic global step's write)
# failing from its `fail_at`-th call on: the fit it returns ended
# interrupted, with a warning.
interrupted_store_fit <- function(local, global, passes, fail_at) {
  interrupted_store_fit_with(function() store_fit(local, global, passes), fail_at)
}

# The same for any fit `make()`.
interrupted_store_fit_with <- function(make, fail_at) {
  fails <- counted("lda_store_update", fail_at)
  on.exit(fails$restore())
  expect_warning(fit <- make(), class = "sparsevi_warning_interrupted")
  expect_identical(fit$ended, "interrupted")
  fit
}

test_that("a store holds lambda = eta + scale X and its update is the dense step", {
  K <- 3
  V <- 12
  lam <- store_lambda0(K, V, 1)
  eta <- 0.05
  state <- lda_test_state(lambda = lam)
  st <- sparsevi:::lda_store_new(state, rowSums(lam), eta, 0)
  expect_identical(st$X, lam - eta)
  expect_identical(st$meta, c(1, 0, rowSums(lam) - V * eta))
  # the dense lambda back, and the copy-free form of the same
  m <- sparsevi:::lda_store_lambda(st, eta)
  expect_equal(m$lambda, lam, tolerance = 1e-15)
  expect_equal(m$tot, rowSums(lam), tolerance = 1e-14)
  # one stochastic step on words 2 and 7 (0-based): (1 - rho) N + rho mult S
  S <- list(words = c(2L, 7L), x = uniform_source(2)(2 * K))
  dense <- matrix(0, K, V)
  dense[, c(3, 8)] <- S$x
  # (the expectations above held X: the store's own copy is written)
  st <- sparsevi:::lda_store_own(st)
  sparsevi:::lda_store_update(st, S, rho = 0.3, mult = 4, t = 1)
  want <- eta + 0.7 * (lam - eta) + 0.3 * 4 * dense
  got <- sparsevi:::lda_store_lambda(st, eta)
  expect_equal(got$lambda, want, tolerance = 1e-12)
  expect_equal(got$tot, rowSums(want), tolerance = 1e-12)
  expect_identical(st$meta[2], 1)
  # the memoized form: X = max(S, 0), additions clipped at 0
  mst <- sparsevi:::lda_store_counts(NULL, 0, K, V)
  sparsevi:::lda_store_add(mst, S, 1)
  sparsevi:::lda_store_add(mst, list(words = 2L, x = rep(10, K)), -1)
  want <- pmax(dense - cbind(matrix(0, K, 2), 10, matrix(0, K, V - 3)), 0)
  expect_identical(mst$X, want)
  expect_equal(mst$meta[-(1:2)], rowSums(want), tolerance = 1e-14)
})

test_that("the store update gives the same bits on 1, 2 and 3 threads, split or not", {
  # three threads split the update above 8,192 values (K x words), one and
  # two run the one pass: two summaries above that, each on 1, 2 and 3
  # threads
  for (cs in store_split_cases(5)) {
    K <- cs$K
    U <- cs$U
    V <- cs$V
    lam <- cs$lam
    words <- cs$words
    S <- list(words = words, x = uniform_source(6)(K * U) * 3)
    run <- function(threads) {
      st <- sparsevi:::lda_store_new(lda_test_state(lambda = lam), rowSums(lam), 0.05, 0)
      st <- sparsevi:::lda_store_own(st)
      sparsevi:::lda_store_update(st, S, rho = 0.3, mult = 4, t = 1, threads = threads)
      sparsevi:::lda_store_update(st, S, rho = 0.2, mult = 2, t = 2, threads = threads)
      list(X = st$X + 0, meta = st$meta + 0)
    }
    one <- run(1L)
    expect_identical(run(2L), one)
    expect_identical(run(3L), one)
    # (and it is the update: lambda = eta + scale X against the dense form)
    dense <- matrix(0, K, V)
    dense[, words + 1L] <- S$x
    want <- 0.05 + 0.8 * (0.7 * (lam - 0.05) + 0.3 * 4 * dense) + 0.2 * 2 * dense
    expect_equal(0.05 + one$meta[1] * one$X, want, tolerance = 1e-12, ignore_attr = TRUE)
  }
})

test_that("the shape form's update is its columns then the update, bit for bit, on any threads", {
  # cvb0_store_update_shape() makes each column as it adds it (one pass) or
  # all of them first (a split update, a dense rescaling step): the same
  # bits as cvb0_shape_parts() and then lda_store_update()
  set.seed(9)
  for (cs in store_split_cases(7)) {
    K <- cs$K
    U <- cs$U
    lam <- cs$lam
    words <- cs$words
    rng <- uniform_source(8)
    n <- rep_len(c(0L, 1L, 3L, 5L), U)
    k <- unlist(lapply(seq_len(U), function(u) sort(sample.int(K, n[u])) - 1L))
    # tails of 0 (a full column) and values below 0 (the floor at 0)
    S <- list(words = words, p = c(0L, cumsum(n)), k = as.integer(k),
              v = rng(sum(n)) * 4 - 1, r = ifelse(seq_len(U) %% 7 == 0, 0, rng(U) * 3))
    run <- function(threads, fused, below = 1e-100) {
      st <- sparsevi:::lda_store_new(lda_test_state(lambda = lam), rowSums(lam), 0.05, 0)
      st <- sparsevi:::lda_store_own(st)
      for (step in 1:3) {
        rho <- c(0.3, 0.2, 0.1)[step]
        if (fused) {
          sparsevi:::cvb0_store_update_shape(st, S, 0.05, rho, 4, step, below, threads)
        } else {
          parts <- sparsevi:::cvb0_shape_parts(S, st$X, c(0.05, st$meta[1L]),
                                               sparsevi:::lda_store_totals(st, 0.05), threads)
          parts$x <- parts$x[seq_len(K * U)]
          sparsevi:::lda_store_update(st, parts, rho, 4, step, below, threads)
        }
      }
      list(X = st$X + 0, meta = st$meta + 0)
    }
    want <- run(1L, FALSE)
    for (threads in 1:3) expect_identical(run(threads, TRUE), want)
    # a dense rescaling step at every step (the scale falls below 0.95)
    dense <- run(1L, FALSE, below = 0.95)
    expect_identical(dense$meta[1], 1)
    for (threads in 1:2) expect_identical(run(threads, TRUE, below = 0.95), dense)
    expect_equal(dense$X, want$X * want$meta[1], tolerance = 1e-12)
  }
})

test_that("in-place writes refuse a store R shares; the global steps copy it first", {
  K <- 3
  V <- 10
  lam <- store_lambda0(K, V, 3)
  state <- lda_test_state(lambda = lam)
  st <- sparsevi:::lda_store_new(state, rowSums(lam), 0.05, 0)
  held <- st$X # a second reference: MAYBE_SHARED
  snap <- held + 0
  S <- list(words = 4L, x = rep(1, K))
  expect_error(sparsevi:::lda_store_update(st, S, 0.5, 1, 1), "shared")
  expect_error(sparsevi:::lda_store_add(st, S, 1), "shared")
  expect_identical(held, snap)
  # a global step given such a store writes a copy, never the shared table
  res <- list(summary = Matrix::sparseMatrix(i = 1:K, j = rep(5, K), x = 1, dims = c(K, V)),
              doc_topic = matrix(1, K, 2))
  ctl <- list(eta = 0.05, n_docs = 10, tau = 1, kappa = 0.6, step_scale = 1)
  s0 <- lda_test_state(lambda = NULL, t = 0L, store = st)
  s1 <- sparsevi:::lda_global_stochastic_lazy(s0, res, 1L, ctl)
  expect_identical(held, snap)
  expect_false(isTRUE(all.equal(s1$topics$store$X[, 5], snap[, 5])))
  # a store no one else holds is written in place (no copy per minibatch)
  addr <- .Internal(address(s1$topics$store$X))
  s2 <- sparsevi:::lda_global_stochastic_lazy(s1, res, 1L, ctl)
  expect_identical(.Internal(address(s2$topics$store$X)), addr)
  # the UCI parser's in-place outputs likewise
  doc <- integer(4)
  term <- doc
  expect_error(.Call(sparsevi:::ffi_dtm_parse_uci, charToRaw("1\n2\n1\n1 1 1\n"), TRUE,
                     .Call(sparsevi:::ffi_dtm_uci_state), doc, term, double(4), 0),
               "shared")
})

test_that("the start is given up to the store in place, a user's matrix never", {
  K <- 3
  V <- 8
  lam <- store_lambda0(K, V, 4)
  state <- lda_test_state(lambda = lam + 0)
  st <- sparsevi:::lda_store_new(state, rowSums(lam), 0.05, 0, in_place = TRUE)
  # the state's table is the store's now, and says so
  expect_true(sparsevi:::lda_store_consumed(state))
  expect_identical(.Internal(address(st$X)), .Internal(address(state$topics$lambda)))
  back <- sparsevi:::lda_store_lambda(st, 0.05, in_place = TRUE)
  expect_identical(.Internal(address(back$lambda)), .Internal(address(st$X)))
  expect_equal(back$lambda, lam, tolerance = 1e-15)
  expect_null(attr(back$lambda, "sparsevi_owned"))
  # fit_lda() with a start of its own ends with the same fit as before, and a
  # matrix the user gives as the start is left alone
  sim <- simulate_lda(D = 120, V = 30, K = 3, doc_length = 30, seed = 5)
  M <- matrix(0.5 + uniform_source(6)(3 * 30), 3, 30)
  snap <- M + 0
  for (eng in c("cvb0", "vb")) {
    f <- fit_lda(sim$dtm, K = 3, local = eng, global = if (eng == "vb") "stochastic",
                 init = M, passes = 2, batch_size = 40, seed = 2, progress = FALSE)
    expect_identical(M, snap)
    expect_true(all(is.finite(f$lambda)))
  }
})

test_that("a lap works on its own copy: a failure mid-lap keeps the last lap intact", {
  fit <- store_fit
  for (cfg in list(list("cvb0", NULL), list("vb", "stochastic"), list("ope", "ml"))) {
    one <- fit(cfg[[1]], cfg[[2]], 1)
    # 4 batches a lap: the 7th store update fails, after lap 2 has written
    # two minibatches to its store
    two <- interrupted_store_fit(cfg[[1]], cfg[[2]], 2, fail_at = 7)
    expect_identical(two$topic_word, one$topic_word)
    expect_identical(two$lambda, one$lambda)
  }
})

test_that("later laps copy into the table the lap before last started from, and a failure keeps the last lap", {
  sim <- simulate_lda(D = 160, V = 40, K = 3, doc_length = 30, seed = 8)
  fit <- store_fit
  for (cfg in list(list("cvb0", NULL), list("vb", "stochastic"), list("ope", "ml"))) {
    three <- fit(cfg[[1]], cfg[[2]], 3)
    # 5 laps: lap 2 copies into a new table, lap 3 into lap 1's store (made
    # by its global step from the fit's own start), laps 4 and 5 into those
    copies <- counted("lda_store_copy")
    five <- tryCatch(fit(cfg[[1]], cfg[[2]], 5), finally = copies$restore())
    expect_identical(copies$calls, 1, label = cfg[[1]])
    # update() continues from the fit's topics: the fit it was given is left
    # as it was (its tables are never recycled)
    keep <- three$topic_word + 0
    up <- update(three, sim$dtm, passes = 4, progress = FALSE)
    expect_identical(three$topic_word, keep)
    # the same fit as with no copies at all (every store kept on disk)
    old_opt <- options(sparsevi.snapshot_bytes = 0)
    five_disk <- tryCatch(fit(cfg[[1]], cfg[[2]], 5), finally = options(old_opt))
    expect_identical(five$lambda, five_disk$lambda)
    expect_identical(five$trace$objective, five_disk$trace$objective)
    # a failure in lap 4, which writes into lap 2's table: lap 3's fit
    # comes back intact
    four <- interrupted_store_fit(cfg[[1]], cfg[[2]], 4, fail_at = 15)
    expect_identical(four$lambda, three$lambda, label = paste(cfg[[1]], "lap 4 failed"))
    expect_null(attr(four$lambda, "sparsevi_owned"))
    expect_null(attr(five$lambda, "sparsevi_owned"))
  }
})

test_that("a seeded start is a store the first lap writes in place; later laps keep the last one safe", {
  sim <- simulate_lda(D = 160, V = 40, K = 3, doc_length = 30, seed = 8)
  fit <- function(passes) {
    fit_lda(sim$dtm, K = 3, local = "cvb0", init = "seeded", passes = passes,
            batch_size = 40, seed = 3, progress = FALSE)
  }
  one <- fit(1)
  # lap 1 takes no copy of the start (4 batches a lap), each later lap one
  copies <- counted("lda_store_copy")
  three <- tryCatch(fit(3), finally = copies$restore())
  expect_identical(copies$calls, 1)
  # the start is never snapshotted; the stores of later laps are, and the
  # fit is the same
  old <- options(sparsevi.snapshot_bytes = 0)
  three_disk <- tryCatch(fit(3), finally = options(old))
  expect_identical(three_disk$lambda, three$lambda)
  # a failure in lap 2 (its 6th global step): lap 1's fit, intact
  two <- interrupted_store_fit_with(function() fit(2), fail_at = 6)
  expect_identical(two$lambda, one$lambda)
  # a failure in lap 1 wrote the start: an error, no fit from it
  fails <- counted("lda_store_update", 2)
  expect_error(tryCatch(fit(2), finally = fails$restore()), "injected failure")
  # ... and a worker's error in lap 1 carries no fit either (lda_train()'s
  # on_worker_error builds one only from a state no lap has written)
  st <- sparsevi:::lda_init_state(sim$dtm, one$control)
  expect_false(sparsevi:::lda_store_consumed(st))
  st$topics$owned <- TRUE
  expect_true(sparsevi:::lda_store_consumed(st))
  # the seeded store, read as a dense start, gives the same fit up to rounding
  # (X - eta + eta): the start as a given matrix
  st <- sparsevi:::lda_init_state(sim$dtm, one$control)
  dense_start <- sparsevi:::cvb0_state_lambda(st) + 0
  given <- fit_lda(sim$dtm, K = 3, local = "cvb0", init = dense_start, passes = 1,
                   batch_size = 40, seed = 3, progress = FALSE)
  expect_equal(given$lambda + 0, one$lambda + 0, tolerance = 1e-12)
})

test_that("a large store is kept on disk, not copied: a failed lap is read back from it", {
  fit <- store_fit
  before <- list.files(tempdir(), pattern = "^sparsevi-")
  # every store counts as large: each lap after the first starts with a
  # snapshot instead of a copy
  old <- options(sparsevi.snapshot_bytes = 0)
  on.exit(options(old), add = TRUE)
  cfgs <- list(list("cvb0", NULL, "lda_store_update", 7),
               list("vb", "stochastic", "lda_store_update", 7),
               list("ope", "ml", "lda_store_update", 7),
               # memoized: lap 1 fills the store with 4 adds, lap 2 takes 2 per
               # batch (the old summary out, the new in)
               list("vb", "memoized", "lda_store_add", 8))
  for (cfg in cfgs) {
    options(sparsevi.snapshot_bytes = 2^40)
    one <- fit(cfg[[1]], cfg[[2]], 1)
    three_mem <- fit(cfg[[1]], cfg[[2]], 3)
    options(sparsevi.snapshot_bytes = 0)
    copies <- counted("lda_store_copy")
    three_disk <- tryCatch(fit(cfg[[1]], cfg[[2]], 3), finally = copies$restore())
    # the same fit, and no lap copied its store
    expect_identical(three_disk$topic_word, three_mem$topic_word, label = cfg[[1]])
    expect_identical(three_disk$trace$objective, three_mem$trace$objective)
    expect_identical(copies$calls, 0)
    # a failure in lap 2, after it has written to the store in place
    failing <- counted(cfg[[3]], cfg[[4]])
    tryCatch(
      expect_warning(two <- fit(cfg[[1]], cfg[[2]], 2),
                     class = "sparsevi_warning_interrupted"),
      finally = failing$restore())
    expect_gt(failing$calls, cfg[[4]] - 1)
    expect_identical(two$ended, "interrupted")
    expect_identical(two$topic_word, one$topic_word, label = paste(cfg[[1]], cfg[[2]]))
    expect_identical(two$lambda, one$lambda)
  }
  # the snapshot files are gone with their fits
  expect_identical(list.files(tempdir(), pattern = "^sparsevi-"), before)
  options(sparsevi.snapshot_bytes = "big")
  expect_error(fit("cvb0", NULL, 2), class = "sparsevi_error_argument")
  # "auto": disk only for a table above a quarter of the available memory
  options(sparsevi.snapshot_bytes = "auto")
  lim <- sparsevi:::lda_snapshot_bytes()
  expect_true(is.infinite(lim) || (lim > 0 && lim < 2^60))
})

test_that("a local step's summary is its own vector, never a buffer the next one reuses", {
  sim <- simulate_lda(D = 90, V = 70, K = 3, doc_length = 25, seed = 19)
  K <- 4
  st <- lda_test_state(lambda = store_lambda0(K, 70, 9), t = 0)
  ctl <- list(alpha = 0.1, eta = 0.01, sync = 1L)
  b1 <- sparsevi:::dtm_subset(sim$dtm, 1:40)
  b2 <- sparsevi:::dtm_subset(sim$dtm, 41:60)
  r1 <- sparsevi:::lda_local_cvb0(b1, st, ctl, c(0, 1), 1L)
  keep <- r1$summary$x + 0
  expect_length(r1$summary$x, K * length(r1$summary$words))
  r2 <- sparsevi:::lda_local_cvb0(b2, st, ctl, c(0, 2), 1L)
  expect_identical(r1$summary$x, keep)
  expect_false(identical(.Internal(address(r1$summary$x)), .Internal(address(r2$summary$x))))
})

test_that("memoized training builds its store in the start's table; a large fit keeps S alone", {
  sim <- simulate_lda(D = 160, V = 50, K = 3, doc_length = 30, seed = 11)
  fit <- function(passes) {
    fit_lda(sim$dtm, local = "vb", K = 3, L = 2, global = "memoized", n_batches = 4,
            passes = passes,
            seed = 2, progress = FALSE)
  }
  small <- fit(2)
  expect_false(is.null(.subset2(small, "lambda")))
  expect_null(attr(small$state$topics$S, "sparsevi_owned"))
  # the size above which a fit holds one table: lowered so a small fit is
  # "large"
  ns <- asNamespace("sparsevi")
  old <- get("lda_dense_topics_max", ns)
  utils::assignInNamespace("lda_dense_topics_max", 10, ns = "sparsevi")
  on.exit(utils::assignInNamespace("lda_dense_topics_max", old, ns = "sparsevi"), add = TRUE)
  large <- fit(2)
  expect_null(.subset2(large, "lambda"))
  expect_null(.subset2(large, "topic_word"))
  expect_null(large$state$topics$lambda)
  # lambda and topic_word when read: the same bits as the fit that holds them
  expect_identical(large$lambda, small$lambda)
  expect_identical(large[["lambda"]], small$lambda)
  expect_equal(large$topic_word, small$topic_word, tolerance = 1e-15)
  expect_identical(large$trace$objective, small$trace$objective)
  expect_identical(terms(large, 5), terms(small, 5))
  # update() continues from the same state as from the fit that holds lambda
  u <- update(large, sim$dtm, passes = 1, progress = FALSE)
  expect_identical(u$lambda, update(small, sim$dtm, passes = 1, progress = FALSE)$lambda)
})

test_that("a failed snapshot write returns the lap the warning names (issue 36, item 3)", {
  sim <- simulate_lda(D = 160, V = 40, K = 3, doc_length = 30, seed = 8)
  fit <- function(passes) {
    fit_lda(sim$dtm, K = 3, local = "cvb0", init = "seeded", passes = passes,
            batch_size = 40, seed = 3, progress = FALSE)
  }
  old <- options(sparsevi.snapshot_bytes = 0)
  on.exit(options(old))
  two <- fit(2)
  # lap 3's snapshot cannot be written: lap 2's state is untouched in memory,
  # not the lap 1 state an earlier snapshot holds
  fails <- counted("lda_store_protect", 3)
  w <- NULL
  three <- tryCatch(withCallingHandlers(fit(3), warning = function(w0) {
    w <<- w0
    invokeRestart("muffleWarning")
  }), finally = fails$restore())
  expect_s3_class(w, "sparsevi_warning_interrupted")
  expect_match(conditionMessage(w), "during lap 3 .*after lap 2")
  expect_identical(three$lambda, two$lambda)
  expect_identical(three$trace$lap, 1:2)
})

test_that("a snapshot that cannot be written gives the system's reason (issue 36, item 9)", {
  lam <- matrix(1, 3, 12)
  st <- sparsevi:::lda_store_new(lda_test_state(lambda = lam), rowSums(lam), 0.05, 0)
  files <- new.env()
  files$store <- file.path(tempdir(), "no-such-dir", "snap.bin")
  old <- options(sparsevi.snapshot_bytes = 0)
  on.exit(options(old))
  reason <- tryCatch(file.create(paste0(files$store, ".part")),
                     warning = function(w) sub(".*reason '([^']*)'.*", "\\1", conditionMessage(w)))
  err <- expect_error(sparsevi:::lda_store_protect(lda_test_state(store = st), files),
                      class = "sparsevi_error_io")
  expect_match(conditionMessage(err), reason, fixed = TRUE)
  expect_match(conditionMessage(err), "sparsevi.snapshot_bytes = Inf", fixed = TRUE)
})

# ---- a store sharded by word ----------------------------------------------------

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
