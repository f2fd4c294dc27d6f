# Table-driven bad-input suite (issue 11): every exported function and
# argument gets hostile values, each of which must raise a classed
# `sparsevi_error_*` (never a crash, a hang, a base R error or a silent NaN).

bad_tiny <- function() simulate_lda(D = 8, V = 10, K = 2, doc_length = 12, seed = 1)$dtm
bad_points <- function() simulate_mixture(N = 30, D = 2, K = 2, seed = 1)$X

bad_input_count <- new.env()
bad_input_count$table <- 0L
bad_input_count$special <- 0L

# Hostile values by kind of argument.
bad_values <- list(
  count = list(NA, NA_real_, NaN, Inf, -1, 0.5, "a", c(2, 3), numeric(0), NULL, list(2)),
  # K of fit_lda() and fit_mixture(): several values choose among them, so a
  # vector is valid but not one with a bad element
  counts = list(NA, NA_real_, NaN, Inf, -1, 0.5, "a", c(2, NA), c(0, 2), c(2, 0.5), numeric(0),
                NULL, list(2)),
  positive = list(NA, NaN, Inf, -Inf, -1, 0, 1e300, "a", c(1, 2), numeric(0), NULL),
  nonneg = list(NA, NaN, Inf, -Inf, -1, "a", c(1, 2), numeric(0)),
  kappa = list(NA, NaN, Inf, -1, 0, 1.5, "a", c(0.6, 0.7)),
  probability = list(NA, NaN, Inf, -1, 0, 1, 1.5, "a", c(0.1, 0.2), numeric(0)),
  # a weight in [0, 1], both ends allowed
  unit = list(NA, NaN, Inf, -1, 1.5, "a", c(0.1, 0.2), numeric(0)),
  flag = list(NA, 1, "yes", c(TRUE, FALSE), logical(0), NULL),
  choice = list("zzz", NA_character_, 1, character(0), NULL),
  seed = list(NA, NaN, Inf, 0.5, "a", c(1, 2), 2^60),
  threads = list(NA, 0, -1, 1.5, "a", c(1, 2), Inf),
  stopwords = list(NA, 1, c(TRUE, FALSE), list("a"), sum)
)

# Each row: a function, a valid argument list, and the kind of each argument
# to attack (NULL kinds are skipped).
bad_table <- function() {
  tiny <- bad_tiny()
  X <- bad_points()
  fit_l <- fit_lda(tiny, K = 2, passes = 1, seed = 1, progress = FALSE)
  fit_m <- fit_mixture(X, K = 2, passes = 1, seed = 1, progress = FALSE)
  fit_v <- fit_vdp(X, seed = 1, progress = FALSE, max_iter = 5)
  sp <- split_heldout(tiny, n_test = 2, seed = 1)
  dw <- tempfile()
  writeLines(c("2", "3", "3", "1 1 2", "1 3 1", "2 2 4"), dw)
  list(
    list(fun = fit_lda, name = "fit_lda", args = list(x = tiny, K = 2, passes = 1, seed = 1, progress = FALSE),
         kinds = list(K = "counts", L = "count", alpha = "positive", eta = "positive",
                      n_batches = "count", batch_size = "count", passes = "count",
                      restarts = "flag", init = "choice", tau = "nonneg",
                      kappa = "kappa", seed = "seed", threads = "threads",
                      progress = "flag", local = "choice", global = "choice")),
    list(fun = fit_mixture, name = "fit_mixture", args = list(X = X, K = 2, passes = 1, seed = 1, progress = FALSE),
         kinds = list(K = "counts", L = "count", likelihood = "choice", prior = "choice",
                      global = "choice", n_batches = "count", batch_size = "count",
                      passes = "count", init = "choice", alpha = "positive",
                      gamma = "positive", scale = "positive", kappa0 = "positive",
                      eta = "positive", tau = "nonneg", kappa = "kappa",
                      tol = "nonneg", seed = "seed", threads = "threads",
                      progress = "flag")),
    list(fun = fit_vdp, name = "fit_vdp", args = list(X = X, seed = 1, progress = FALSE, max_iter = 5),
         kinds = list(kdtree = "flag", candidates = "count", a1 = "positive",
                      a2 = "positive", beta0 = "positive", initial_depth = "count",
                      tol = "probability", max_K = "count", seed = "seed",
                      threads = "threads", progress = "flag", max_iter = "count",
                      leaf_size = "count")),
    list(fun = split_heldout, name = "split_heldout", args = list(x = tiny, n_test = 2, seed = 1),
         kinds = list(n_test = "count", observed_frac = "probability", by = "choice",
                      seed = "seed")),
    list(fun = simulate_lda, name = "simulate_lda", args = list(D = 3, V = 5, K = 2, doc_length = 5, seed = 1),
         kinds = list(D = "count", V = "count", K = "count", doc_length = "positive",
                      alpha = "positive", eta = "positive", seed = "seed")),
    list(fun = simulate_mixture, name = "simulate_mixture", args = list(N = 10, D = 2, K = 2, seed = 1),
         kinds = list(N = "count", D = "count", K = "count", separation = "nonneg",
                      seed = "seed")),
    list(fun = predict, name = "predict", args = list(object = fit_l, newdata = tiny, seed = 1),
         kinds = list(type = "choice", method = "choice", seed = "seed",
                      threads = "threads")),
    list(fun = update, name = "update", args = list(object = fit_l, x = tiny, passes = 1, progress = FALSE),
         kinds = list(passes = "count", progress = "flag")),
    list(fun = predict, name = "predict", args = list(object = fit_m, newdata = X),
         kinds = list(type = "choice", threads = "threads")),
    list(fun = update, name = "update", args = list(object = fit_m, X = X, passes = 1, progress = FALSE),
         kinds = list(passes = "count", progress = "flag")),
    list(fun = predict, name = "predict", args = list(object = fit_v, newdata = X),
         kinds = list(type = "choice", log = "flag")),
    list(fun = heldout_loglik, name = "heldout_loglik", args = list(object = fit_l, test = sp$test),
         kinds = list(method = "choice")),
    list(fun = heldout_loglik, name = "heldout_loglik", args = list(object = fit_m, newdata = X),
         kinds = list(threads = "threads")),
    list(fun = heldout_loglik_left_to_right,
         args = list(fit = fit_l, test = sp$test, particles = 2, seed = 1),
         kinds = list(particles = "count", seed = "seed", threads = "threads")),
    list(fun = coherence, name = "coherence", args = list(object = fit_l, reference = tiny, n = 3),
         kinds = list(measure = "choice", n = "count")),
    list(fun = terms, name = "terms", args = list(x = fit_l, n = 3), kinds = list(n = "count")),
    list(fun = terms, name = "terms", args = list(x = fit_l, n = 3, type = "frex"),
         kinds = list(n = "count", frexw = "unit", threads = "threads")),
    list(fun = image_patches, name = "image_patches", args = list(img = matrix(stats::runif(256), 16, 16)),
         kinds = list(size = "count", stride = "count", remove_mean = "flag")),
    list(fun = sparsevi_threads, name = "sparsevi_threads", args = list(threads = 1), kinds = list(threads = "threads")),
    list(fun = read_uci_bow, name = "read_uci_bow", args = list(docword = dw),
         kinds = list(chunk_size = "count")),
    list(fun = uci_source, name = "uci_source", args = list(docword = dw),
         kinds = list(batch_size = "count", chunk_size = "count")),
    list(fun = as_dtm, name = "as_dtm.list", args = list(x = list(c("a", "b"), c("b", "c"))),
         kinds = list(min_doc_freq = "count")),
    list(fun = as_dtm, name = "as_dtm.character",
         args = list(x = c("the cat sat", "a dog ran")),
         kinds = list(stopwords = "stopwords", min_chars = "count", min_doc_freq = "count")),
    list(fun = as_dtm, name = "as_dtm.matrix", args = list(x = matrix(1, 2, 2)),
         kinds = list(docs_in = "choice"))
  )
}

expect_classed <- function(expr, label) {
  res <- tryCatch({
    withCallingHandlers(force(expr), warning = function(w) invokeRestart("muffleWarning"),
                       message = function(m) invokeRestart("muffleMessage"))
    "no error"
  }, sparsevi_error = function(e) "ok", error = function(e) conditionMessage(e))
  expect(identical(res, "ok"), sprintf("%s: %s", label, res))
  1L
}

test_that("every argument of every exported function refuses hostile values with a classed error", {
  n <- 0L
  for (row in bad_table()) {
    for (arg in names(row$kinds)) {
      for (v in bad_values[[row$kinds[[arg]]]]) {
        # NULL means "use the default" for arguments whose default is NULL
        if (is.null(v) && arg %in% c("seed", "n_batches", "batch_size", "L", "alpha", "eta", "restarts",
                                      "local", "global", "type", "measure", "method", "max_iter", "n_test",
                                      "docs_in",
                                      "leaf_size")) next
        args <- row$args
        args[arg] <- list(v)
        n <- n + expect_classed(do.call(row$fun, args),
                                sprintf("%s(%s = %s)", row$name, arg,
                                        paste(deparse(v), collapse = "")))
      }
    }
  }
  bad_input_count$table <- n
  expect_gt(n, 300)
})

test_that("hostile corpora, data and dimensions give classed errors", {
  tiny <- bad_tiny()
  X <- bad_points()
  empty <- new_sparsevi_dtm(c(0L, 0L, 0L), integer(0), numeric(0), letters[1:4])
  fit_l <- fit_lda(tiny, K = 3, passes = 1, seed = 1, progress = FALSE)
  fit_m <- fit_mixture(X, K = 2, passes = 1, seed = 1, progress = FALSE)
  other <- as_dtm(matrix(1, 2, 3, dimnames = list(NULL, c("zz1", "zz2", "zz3"))))
  wide <- as_dtm(Matrix::sparseMatrix(i = 1:2, j = c(1, 50000), x = 1, dims = c(2, 50000)))
  cases <- list(
    # corpora
    fit_lda = function() fit_lda(empty, K = 2, progress = FALSE),
    fit_lda_K1 = function() fit_lda(tiny, K = 1, progress = FALSE),
    fit_lda_K_gt_V = function() fit_lda(tiny, K = 11, progress = FALSE),
    fit_lda_L0 = function() fit_lda(tiny, K = 3, L = 0, progress = FALSE),
    fit_lda_L_gt_K = function() fit_lda(tiny, K = 3, L = 4, progress = FALSE),
    fit_lda_alpha0 = function() fit_lda(tiny, K = 3, alpha = 0, progress = FALSE),
    fit_lda_eta_huge = function() fit_lda(tiny, K = 3, eta = 1e300, progress = FALSE),
    fit_lda_KxV = function() fit_lda(wide, K = 48000, progress = FALSE),
    fit_lda_list = function() fit_lda(list(1, 2), K = 2, progress = FALSE),
    fit_lda_null = function() fit_lda(NULL, K = 2, progress = FALSE),
    fit_lda_fun = function() fit_lda(sum, K = 2, progress = FALSE),
    fit_lda_negcount = function() fit_lda(matrix(c(-1, 2, 3, 4), 2), K = 2, progress = FALSE),
    fit_lda_nacount = function() fit_lda(matrix(c(NA, 2, 3, 4), 2), K = 2, progress = FALSE),
    fit_lda_noninteger_engine = function() fit_lda(tiny, K = 2, local = "zzz", progress = FALSE),
    fit_lda_bad_combo = function() fit_lda(tiny, K = 2, local = "cvb0", global = "memoized",
                                           progress = FALSE),
    fit_lda_dots = function() fit_lda(tiny, K = 2, bogus = 1, progress = FALSE),
    fit_lda_heldout = function() fit_lda(tiny, K = 2, heldout = "x", progress = FALSE),
    fit_lda_malformed = function() fit_lda(structure(list(doc_ptr = c(0L, 3L), term = 0:2,
                                                          count = c(1, 1, 1), vocab = c("a", "b")),
                                                     class = "sparsevi_dtm"), K = 2,
                                           progress = FALSE),
    predict_mismatch = function() predict(fit_l, other),
    predict_bad_newdata = function() predict(fit_l, "not a corpus at all 123"),
    predict_null = function() predict(fit_l, NULL),
    update_mismatch = function() update(fit_l, other, progress = FALSE),
    heldout_bad = function() heldout_loglik(fit_l, list(1)),
    ltr_bad = function() heldout_loglik_left_to_right(fit_l, NULL),
    coherence_bad = function() coherence(fit_l, other, n = 3),
    coherence_umass_bad = function() coherence_umass(matrix(1, 2, 7), tiny, n = 2),
    coherence_umass_na = function() coherence_umass(matrix(NA_real_, 2, 10), tiny, n = 2),
    mix_multinomial_empty = function() fit_mixture(empty, K = 2, likelihood = "multinomial",
                                                   progress = FALSE),
    split_empty = function() split_heldout(empty, n_test = 1),
    split_too_many = function() split_heldout(tiny, n_test = 100),
    as_dtm_fun = function() as_dtm(sum),
    as_dtm_df = function() as_dtm(data.frame(a = 1)),
    read_missing = function() read_uci_bow(tempfile()),
    read_pgm_missing = function() read_pgm(tempfile()),
    # Gaussian data
    mix_single = function() fit_mixture(X[1, , drop = FALSE], K = 1, progress = FALSE),
    mix_K_gt_N = function() fit_mixture(X, K = 31, progress = FALSE),
    mix_K0 = function() fit_mixture(X, K = 0, progress = FALSE),
    mix_L_gt_K = function() fit_mixture(X, K = 2, L = 3, progress = FALSE),
    mix_nan = function() fit_mixture(rbind(X, c(NaN, 1)), K = 2, progress = FALSE),
    mix_inf = function() fit_mixture(rbind(X, c(Inf, 1)), K = 2, progress = FALSE),
    mix_char = function() fit_mixture(matrix("a", 5, 2), K = 2, progress = FALSE),
    mix_empty = function() fit_mixture(matrix(0, 0, 2), K = 1, progress = FALSE),
    mix_zero_cols = function() fit_mixture(matrix(0, 5, 0), K = 1, progress = FALSE),
    mix_duplicated = function() fit_mixture(X[rep(1, 30), ], K = 2, progress = FALSE),
    mix_predict_dim = function() predict(fit_m, X[, 1, drop = FALSE]),
    mix_predict_nan = function() predict(fit_m, rbind(X, NA)),
    mix_update_dim = function() update(fit_m, cbind(X, 1), progress = FALSE),
    vdp_single = function() fit_vdp(X[1, , drop = FALSE], progress = FALSE),
    vdp_singular = function() fit_vdp(cbind(X[, 1], 2 * X[, 1]), progress = FALSE),
    vdp_duplicated = function() fit_vdp(X[rep(1, 30), ], progress = FALSE),
    vdp_nan = function() fit_vdp(rbind(X, NaN), progress = FALSE),
    vdp_m0 = function() fit_vdp(X, m0 = c(1, NA), progress = FALSE),
    vdp_nu0 = function() fit_vdp(X, nu0 = 1, progress = FALSE),
    vdp_cov0 = function() fit_vdp(X, cov0 = diag(c(1, -1)), progress = FALSE),
    vdp_dots = function() fit_vdp(X, bogus = 2, progress = FALSE),
    image_small = function() image_patches(matrix(1, 3, 3), size = 8),
    image_na = function() image_patches(matrix(NA_real_, 16, 16)),
    sim_mix_weights = function() simulate_mixture(10, 2, 2, weights = c(-1, 2))
  )
  for (nm in names(cases)) expect_classed(cases[[nm]](), nm)
  bad_input_count$special <- length(cases)
})

test_that("the bad-input suite tried enough cases", {
  n <- bad_input_count$table + bad_input_count$special
  # printed so that the count can be quoted (inst/bench/results/reliability.txt)
  message(sprintf("bad inputs tried: %d", n))
  expect_gt(n, 800)
})

test_that("errors inside a K grid name the user's call and describe the user's input (issue 36, item 6)", {
  x <- simulate_lda(D = 60, V = 30, K = 3, doc_length = 30, seed = 1)$dtm
  # an error raised by a fit of the grid: the user's call, not a deparsed
  # fit_lda() with its body and the corpus
  err <- expect_error(fit_lda(x, K = c(2, 3), passes = 1, seed = 1, progress = FALSE,
                              not_a_control = 1),
                      class = "sparsevi_error_argument")
  cl <- conditionCall(err)
  expect_identical(cl[[1]], as.name("fit_lda"))
  expect_lt(sum(nchar(deparse(cl))), 200)
  expect_false(grepl("function (", paste(capture.output(print(err)), collapse = ""), fixed = TRUE))
  # the user's input, not the 90% split
  expect_error(fit_lda(x, K = c(2, 3), n_batches = 60, progress = FALSE),
               "`n_batches` = 60 .* 54 training documents \\(of the 60 in `x`",
               class = "sparsevi_error_argument")
  expect_error(fit_lda(x, K = c(2, 3), batches = list(1:30, 31:60), progress = FALSE),
               "`batches` names documents of `x` \\(60 of them\\)", class = "sparsevi_error_argument")
  expect_error(fit_lda(x, K = c(2, 3), init = matrix(1, 2, 30), progress = FALSE),
               "one K .* several K \\(2, 3\\)", class = "sparsevi_error_argument")
})

test_that("a K grid says each warning and note once (issue 36, item 9)", {
  x <- simulate_lda(D = 60, V = 30, K = 3, doc_length = 30, seed = 1)$dtm
  ws <- character(0)
  withCallingHandlers(
    fit_lda(x, K = c(2, 3), local = "vb", global = "streaming", passes = 3, seed = 1, progress = FALSE),
    warning = function(w) {
      ws <<- c(ws, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  expect_length(grep("single pass", ws), 1L)
})

test_that("the whole split as test data, and a one-term corpus, say what to do (issue 36, item 9)", {
  x <- simulate_lda(D = 60, V = 30, K = 3, doc_length = 30, seed = 1)$dtm
  sp <- split_heldout(x, seed = 1)
  fit <- fit_lda(sp$train, K = 3, passes = 1, seed = 1, progress = FALSE)
  expect_error(heldout_loglik(fit, sp), "`test = sp\\$test`", class = "sparsevi_error_argument")
  expect_error(fit_lda(sp$train, K = 3, passes = 1, heldout = sp, progress = FALSE),
               "`heldout` is the whole split .* `heldout = sp\\$test`",
               class = "sparsevi_error_argument")
  one <- as_dtm(rep(list(c("a", "a"), "a", c("a", "a", "a")), 4))
  for (K in list(2, c(2, 3))) {
    expect_error(fit_lda(one, K = K, progress = FALSE), "`x` has 1 term in its vocabulary",
                 class = "sparsevi_error_data")
  }
})

test_that("a corpus given under another name than `x` is named in its error; errors show the user's call", {
  x <- simulate_lda(D = 30, V = 20, K = 2, seed = 1)$dtm
  fit <- fit_lda(x, K = 2, passes = 2, seed = 1, progress = FALSE)
  named <- function(expr, arg) {
    e <- tryCatch(expr, error = identity)
    expect_s3_class(e, "sparsevi_error_input")
    expect_match(conditionMessage(e), sprintf("^`%s` must be a document-term matrix", arg))
    # the call shown is not the conversion's internal one
    expect_false(grepl("as_dtm", deparse(conditionCall(e))[1]))
  }
  named(predict(fit, 42), "newdata")
  named(heldout_loglik(fit, 42), "test")
  named(fit_lda(x, K = 2, passes = 1, heldout = 42, progress = FALSE), "heldout")
  named(coherence(fit, 42), "reference")
  named(terms(fit, type = "lift", corpus = 42), "corpus")
  named(coherence_umass(fit$topic_word, 42), "reference")
  # a token list's element errors too
  e <- tryCatch(predict(fit, list(1, 2)), error = identity)
  expect_match(conditionMessage(e), "token list `newdata`", fixed = TRUE)
  # errors of other classes keep their class
  m <- matrix(c(1, NA, 2, 3), 2, dimnames = list(NULL, x$vocab[1:2]))
  expect_error(predict(fit, m), "^`newdata` contains NA", class = "sparsevi_error_count")
  # `x` itself keeps its name
  e <- tryCatch(fit_lda(42, K = 2), error = identity)
  expect_match(conditionMessage(e), "^`x` must be a document-term matrix")

  # the evaluators' errors show the call the user made, directly or through
  # the generic
  called <- function(expr, fun) {
    e <- tryCatch(expr, error = identity)
    expect_s3_class(e, "sparsevi_error")
    expect_identical(conditionCall(e)[[1]], as.name(fun))
  }
  # called directly, and from inside a function of the user's (the caller's
  # call was shown before: `g()` here, NULL at top level)
  g <- function() heldout_loglik_left_to_right(fit, x, particles = 0)
  called(g(), "heldout_loglik_left_to_right")
  called(heldout_loglik_left_to_right(fit, 42), "heldout_loglik_left_to_right")
  h <- function() coherence_umass(matrix(NA_real_, 2, 20), x)
  called(h(), "coherence_umass")
  # through heldout_loglik(): its method's call (as R shows a method's
  # errors), for both evaluators, not the evaluator's internal one
  called(heldout_loglik(fit, x, method = "left_to_right", particles = 0),
         "heldout_loglik.sparsevi_lda")
  called(heldout_loglik(fit, x, observed_frac = 2), "heldout_loglik.sparsevi_lda")
})
