# The typed topics object of a training state (R/lda-topics.R): each kind's
# methods against each other on tiny data, and the loop's states hold their
# topics only in it.

topics_fixture <- function(K = 3, V = 7, eta = 0.05) {
  lam <- matrix(eta + uniform_source(4)(K * V) * 3, K, V)
  ns <- asNamespace("sparsevi")
  st <- ns$lda_store_new(lda_test_state(lambda = lam + 0), rowSums(lam), eta, 0)
  list(lam = lam, eta = eta,
       kinds = list(
         dense = ns$new_lda_topics(lambda = lam),
         store = ns$new_lda_topics(store = st),
         sparse = ns$new_lda_topics(sparse = ns$gibbs_store_from_lambda(lam, eta)),
         beta = ns$new_lda_topics(beta = lam / rowSums(lam))))
}

test_that("each kind's class names its kind, and follows its fields", {
  f <- topics_fixture()
  ns <- asNamespace("sparsevi")
  for (k in names(f$kinds)) {
    tp <- f$kinds[[k]]
    expect_identical(class(tp), c(paste0("lda_topics_", k), "lda_topics"), info = k)
    expect_identical(ns$lda_topics_kind(tp), k, info = k)
  }
  # setting a field retypes the object: a store dropped leaves the dense kind
  tp <- f$kinds$store
  tp$lambda <- f$lam
  expect_s3_class(tp, "lda_topics_store")
  tp$store <- NULL
  expect_s3_class(tp, "lda_topics_dense")
  tp$beta <- f$lam / rowSums(f$lam)
  expect_s3_class(tp, "lda_topics_beta")
  expect_output(print(tp), "lda_topics: beta")
})

test_that("columns, lambda and totals of every kind agree", {
  f <- topics_fixture()
  ns <- asNamespace("sparsevi")
  U <- c(2L, 5L, 7L)
  for (k in names(f$kinds)) {
    tp <- f$kinds[[k]]
    lam <- ns$lda_topics_lambda(tp, f$eta)
    want <- if (k == "beta") f$lam / rowSums(f$lam) else f$lam
    expect_equal(lam, want, tolerance = 1e-13, ignore_attr = TRUE, info = k)
    # the columns are those of lambda, whichever form holds them
    expect_equal(ns$lda_topics_columns(tp, U, f$eta), lam[, U], tolerance = 1e-14,
                 ignore_attr = TRUE, info = k)
    expect_equal(ns$lda_topics_totals(tp, f$eta), rowSums(lam), tolerance = 1e-13, info = k)
  }
  # the dense kind's columns are lambda's own, bit for bit
  expect_identical(ns$lda_topics_columns(f$kinds$dense, U), f$lam[, U])
  # the dense kind with memoized sums S alone: lambda = eta + S
  S <- pmax(f$lam - f$eta, 0)
  tp <- ns$new_lda_topics(S = S)
  expect_equal(ns$lda_topics_lambda(tp, f$eta), f$eta + S, tolerance = 1e-15,
               ignore_attr = TRUE)
  # a memoized first lap: its store fills while the local steps read the
  # held topics and the totals the store keeps of them
  pend <- ns$new_lda_topics(lambda = f$lam, store = list(lambda_tot = rowSums(f$lam) + 1))
  expect_identical(ns$lda_topics_lambda(pend), f$lam)
  expect_identical(ns$lda_topics_totals(pend), rowSums(f$lam) + 1)
  expect_identical(ns$lda_topics_columns(pend, U), f$lam[, U])
})

test_that("a copy of the topics is independent of the original", {
  f <- topics_fixture()
  ns <- asNamespace("sparsevi")
  tp <- f$kinds$store
  before <- tp$store$X + 0
  cp <- ns$lda_topics_copy(tp)
  expect_false(identical(.Internal(address(cp$store$X)), .Internal(address(tp$store$X))))
  S <- list(words = 1L, x = c(1, 2, 3))
  ns$lda_store_add(cp$store, S, 1)
  expect_identical(tp$store$X, before)
  expect_equal(cp$store$X[, 2], before[, 2] + 1:3)
  # into a spare table: the copy is written there, and the original's table
  # becomes the spare for a later lap
  spare <- new.env()
  spare$store <- ns$lda_give_up(matrix(0, 3, 7))
  dest <- .Internal(address(spare$store))
  orig <- .Internal(address(tp$store$X))
  cp2 <- ns$lda_topics_copy(tp, spare)
  expect_identical(.Internal(address(cp2$store$X)), dest)
  expect_identical(.Internal(address(spare$store)), orig)
  expect_identical(as.vector(cp2$store$X), as.vector(before))
  # the other kinds are never written in place: their copy is themselves
  for (k in c("dense", "sparse", "beta")) {
    expect_identical(ns$lda_topics_copy(f$kinds[[k]]), f$kinds[[k]], info = k)
  }
  # ... and R copies them on write: a global step on the copy leaves the original
  dense <- ns$lda_topics_copy(f$kinds$dense)
  dense$lambda[1, 1] <- 99
  expect_identical(f$kinds$dense$lambda, f$lam)
  expect_s3_class(dense, "lda_topics_dense")
})

test_that("finishing each kind gives the same dense topics", {
  f <- topics_fixture()
  ns <- asNamespace("sparsevi")
  for (k in names(f$kinds)) {
    fin <- ns$lda_topics_finish(f$kinds[[k]], f$eta)
    want <- if (k == "beta") f$lam / rowSums(f$lam) else f$lam
    expect_equal(ns$lda_topics_lambda(fin, f$eta), want, tolerance = 1e-13,
                 ignore_attr = TRUE, info = k)
    expect_true(k %in% c("sparse", "beta") || inherits(fin, "lda_topics_dense"), info = k)
    expect_null(fin$owned)
  }
  # the sparse kind kept for a large gibbs fit: the store alone
  kept <- ns$lda_topics_finish(f$kinds$sparse, f$eta, keep_sparse = TRUE)
  expect_null(kept$lambda)
  expect_s3_class(kept, "lda_topics_sparse")
})

test_that("a state of an older version has its topic fields moved into the object", {
  ns <- asNamespace("sparsevi")
  lam <- matrix(1:6 + 0.5, 2)
  old <- list(lambda = lam, S = lam - 0.5, t = 4L, start_owned = TRUE, gibbs = NULL)
  new <- ns$lda_state_topics(old)
  expect_null(new$lambda)
  expect_null(new$S)
  expect_null(new$start_owned)
  expect_identical(new$t, 4L)
  expect_identical(new$topics$lambda, lam)
  expect_identical(new$topics$S, lam - 0.5)
  expect_true(new$topics$owned)
  expect_identical(ns$lda_state_topics(new), new)
  # update() on a fit saved with the old fields gives the same model
  sim <- simulate_lda(D = 60, V = 25, K = 3, doc_length = 20, seed = 3)
  fit <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 2, progress = FALSE)
  saved <- unclass(fit)
  st <- saved$state
  for (nm in names(unclass(st$topics))) st[[nm]] <- st$topics[[nm]]
  st$topics <- NULL
  saved$state <- st
  class(saved) <- class(fit)
  expect_identical(update(saved, sim$dtm, passes = 1, progress = FALSE)$topic_word,
                   update(fit, sim$dtm, passes = 1, progress = FALSE)$topic_word)
})

test_that("no state a lap returns holds its topics outside the object", {
  ns <- asNamespace("sparsevi")
  seen <- new.env()
  seen$bad <- character()
  seen$kinds <- character()
  orig <- get("lda_lap", envir = ns)
  utils::assignInNamespace("lda_lap", function(state, ...) {
    out <- orig(state, ...)
    s <- out$state
    seen$bad <- c(seen$bad, intersect(names(s), c("lambda", "store", "gibbs", "beta", "S",
                                                  "start_owned")))
    seen$kinds <- c(seen$kinds, class(s$topics)[1L])
    out
  }, ns = "sparsevi")
  on.exit(utils::assignInNamespace("lda_lap", orig, ns = "sparsevi"))
  sim <- simulate_lda(D = 40, V = 20, K = 3, doc_length = 15, seed = 6)
  combos <- lda_combinations[lda_combinations$supported, ]
  fits <- list()
  for (i in seq_len(nrow(combos))) {
    fits[[i]] <- suppressWarnings(fit_lda(sim$dtm, K = 3, local = combos$local[i],
                                          global = combos$global[i], passes = 2, seed = 1,
                                          progress = FALSE))
  }
  expect_length(seen$bad, 0L)
  expect_true(all(seen$kinds %in% paste0("lda_topics_", c("dense", "store", "sparse", "beta"))))
  expect_true(all(c("lda_topics_dense", "lda_topics_store", "lda_topics_sparse") %in% seen$kinds))
  # nor does a fit's state; ML-OPE's fit holds the beta kind, its topic_word
  for (i in seq_along(fits)) {
    s <- fits[[i]]$state
    expect_length(intersect(names(s), c("lambda", "store", "gibbs", "beta", "S", "start_owned")),
                  0L)
    expect_s3_class(s$topics, "lda_topics")
    expect_null(s$topics$store)
    expect_null(s$topics$owned)
  }
  ml <- fits[[which(combos$global == "ml")]]
  expect_s3_class(ml$state$topics, "lda_topics_beta")
  expect_identical(ml$state$topics$beta, ml$topic_word)
})
