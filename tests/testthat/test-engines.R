# The engine registry (R/engines.R): engines as objects holding the
# functions the training loop calls, and options crossing into C by name.

test_that("every LDA engine holds the functions the loop calls", {
  eng <- sparsevi:::lda_engines()
  expect_setequal(names(eng), names(sparsevi:::sparsevi_engines$lda))
  ns <- asNamespace("sparsevi")
  for (name in names(eng)) {
    e <- eng[[name]]
    expect_true(sparsevi:::validate_lda_engine(e))
    expect_identical(e$name, name)
    expect_true(is.function(e$local))
    expect_true(is.function(e$infer))
    # one global step (a function) and one label per global it pairs with
    expect_identical(names(e$global), e$globals)
    expect_identical(names(e$holds), e$globals)
    expect_true(all(vapply(e$global, is.function, TRUE)))
    for (f in c("control", "finish", "end_lap", "topic_sizes")) {
      expect_true(is.null(e[[f]]) || is.function(e[[f]]), label = paste(name, f))
    }
    expect_true(all(names(e$start) %in% c("sparse", "seeded", "bregman")))
    # the functions are the namespace's own (they travel to cluster workers
    # by reference), found under their names by grep
    expect_identical(environment(e$local), ns)
    expect_identical(e$local, get(paste0("lda_local_", name), envir = ns))
    expect_identical(e$infer, get(paste0("lda_infer_", name), envir = ns))
    # each global step is a namespace function, and its global a descriptor
    for (g in e$globals) {
      expect_identical(environment(e$global[[g]]), ns, label = paste(name, g))
      expect_true(is.list(sparsevi:::lda_global_kind(g)), label = g)
    }
  }
  # a broken entry is an internal error
  broken <- eng$vb
  broken$global <- broken$global[-1]
  expect_error(sparsevi:::validate_lda_engine(broken), class = "sparsevi_error_internal")
  broken <- eng$gibbs
  broken$start$dense <- broken$start$sparse
  expect_error(sparsevi:::validate_lda_engine(broken), class = "sparsevi_error_internal")
  expect_null(sparsevi:::lda_engine("bogus"))
  expect_null(sparsevi:::lda_engine(NA_character_))
})

test_that("the loop calls the engine's global step from the registry", {
  sim <- simulate_lda(D = 30, V = 20, K = 2, seed = 1)
  ns <- asNamespace("sparsevi")
  orig <- get("lda_global_gibbs", envir = ns)
  calls <- 0
  utils::assignInNamespace("lda_global_gibbs", function(state, res, batch_id, control) {
    calls <<- calls + 1
    orig(state, res, batch_id, control)
  }, ns = "sparsevi")
  on.exit(utils::assignInNamespace("lda_global_gibbs", orig, ns = "sparsevi"))
  fit_lda(sim$dtm, K = 2, local = "gibbs", n_batches = 3, passes = 2, seed = 1,
          progress = FALSE, doc_topics = 0)
  expect_identical(calls, 6)
})

test_that("lda_combinations and the engine tables keep their values", {
  expect_identical(lda_combinations, data.frame(
    local = c(rep("vb", 4), rep("ope", 4), "cvb0", "gibbs"),
    global = c("memoized", "stochastic", "streaming", "batch", "ml", "stochastic",
               "streaming", "memoized", "stochastic", "stochastic"),
    supported = TRUE, stringsAsFactors = FALSE))
  expect_identical(sparsevi:::lda_available(),
                   paste0(lda_combinations$local, " x ", lda_combinations$global))
  vb <- sparsevi:::lda_engine_defaults$vb
  expect_identical(vb[c("global", "eta", "step_scale")],
                   list(global = "memoized", eta = 0.01, step_scale = 1))
  # vb's alpha: 10 / K within [0.1, 0.5]
  expect_identical(vapply(c(2, 20, 40, 50, 100, 200, 1000), vb$alpha, 0),
                   c(0.5, 0.5, 0.25, 0.2, 0.1, 0.1, 0.1))
  expect_identical(sparsevi:::lda_engine_defaults$cvb0$step_scale, 1)
  expect_identical(sparsevi:::lda_engine_controls$ope,
                   c("ope_iter", "ope_eps", "step_scale", "background"))
  expect_identical(sparsevi:::lda_engine_controls$gibbs,
                   c("burnin", "samples", "rescale_below", "step_scale", "background"))
})

test_that("the evaluators are found by name in their tables", {
  expect_identical(names(sparsevi:::lda_heldout_methods()), c("completion", "left_to_right"))
  expect_identical(names(sparsevi:::coherence_measures()), c("npmi", "umass"))
  expect_null(sparsevi:::evaluator(sparsevi:::coherence_measures(), "bogus"))
  sim <- simulate_lda(D = 30, V = 20, K = 3, seed = 1)
  fit <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, progress = FALSE)
  expect_error(heldout_loglik(fit, sim$dtm, method = "bogus"),
               class = "sparsevi_error_argument")
})

test_that("the executor runs a step given as a function or by name", {
  ex <- sparsevi:::new_executor(NULL, 2L, function(b) b * 10, c(1L, 1L))
  step <- function(batch, per, k) batch + per + k
  a <- sparsevi:::executor_run(ex, 1:2, step, list(k = 1), per = list(1, 2))
  expect_identical(a$results, list(12, 23))
  # by name (the mixture engines' steps): pack_doubles(batch, min_length, min_fill)
  b <- sparsevi:::executor_run(ex, 2L, "pack_doubles", list(min_fill = 0), per = list(1L))
  expect_s3_class(b$results[[1]], "sparsevi_packed")
})

test_that("no LDA or evaluator entry point takes more than 8 arguments", {
  routines <- getDLLRegisteredRoutines(getLoadedDLLs()[["sparsevi"]], addNames = TRUE)$.Call
  n_args <- vapply(routines, function(r) r$numParameters, 1L)
  lda <- n_args[grepl("^ffi_(lda|eval)_", names(n_args))]
  expect_gt(length(lda), 20)
  expect_true(all(lda <= 8), label = paste(names(lda)[lda > 8], collapse = ", "))
})

# Calls `entry` with `args`, after dropping option `drop` from the named
# list args[[at]]: the error must be an internal error naming the option.
expect_missing_option <- function(entry, args, at, drop) {
  args[[at]][[drop]] <- NULL
  err <- tryCatch(do.call(.Call, c(list(entry), args)), error = function(e) e)
  expect_s3_class(err, "error")
  expect_match(conditionMessage(err), sprintf("internal error: option `%s` is missing", drop),
               fixed = TRUE, label = drop)
}

test_that("a missing option in a direct .Call is an internal error naming it", {
  sim <- simulate_lda(D = 8, V = 15, K = 3, seed = 1)
  x <- sim$dtm
  lambda <- sim$topic_word * 50 + 0.1
  ns <- asNamespace("sparsevi")
  # the vb step: first a call that works, then each option taken out
  ctl <- sparsevi:::lda_vb_control(list(alpha = 0.1, L = 2L))
  vb_args <- list(x, 15L, lambda, sparsevi:::vb_opts(ctl), 1L, NULL)
  ok <- do.call(.Call, c(list(ns$ffi_lda_local_vb), vb_args))
  expect_identical(dim(ok$doc_topic), c(3L, 8L))
  for (nm in c("mode", "L", "max_iter", "select_every", "restart_max", "restart_iter",
               "alpha", "tol", "active_eps", "objective", "summary", "summary_form")) {
    expect_missing_option(ns$ffi_lda_local_vb, vb_args, 4L, nm)
  }
  # mode 2 (a lazy store) needs `store`
  st <- vb_args
  st[[4]]$mode <- 2L
  expect_missing_option(ns$ffi_lda_local_vb, st, 4L, "store")
  # completion
  sp <- split_heldout(x, n_test = 4, seed = 1)
  tw <- sim$topic_word
  comp <- list(sp$test$observed, sp$test$heldout, 15L, tw,
               list(L = 3L, max_iter = 50L, select_every = 0L, restart_max = 0L,
                    restart_iter = 1L, alpha = 0.1, tol = 0.05, active_eps = 0), 1L)
  expect_length(do.call(.Call, c(list(ns$ffi_lda_completion), comp))$loglik, 4L)
  expect_missing_option(ns$ffi_lda_completion, comp, 5L, "max_iter")
  # OPE
  ope <- list(x, lambda, list(alpha = 0.1, iter = 5L, eps = 1e-10, mode = 0L, stream0 = 0,
                              store = NULL), c(0, 1), 1L)
  expect_identical(dim(do.call(.Call, c(list(ns$ffi_lda_local_ope), ope))$theta), c(3L, 8L))
  for (nm in c("alpha", "iter", "eps", "mode", "stream0", "store")) {
    expect_missing_option(ns$ffi_lda_local_ope, ope, 3L, nm)
  }
  # Gibbs
  store <- sparsevi:::gibbs_store_from_lambda(lambda, 0.1)
  gibbs <- list(x, 15L, store, list(eta = 0.1, alpha = rep(0.1, 3), burnin = 1L,
                                    samples = 1L, stream0 = 0), c(0, 1), 1L)
  # (the documents' counts as CSC slots: a column pointer per document, + 1)
  expect_length(do.call(.Call, c(list(ns$ffi_lda_local_gibbs), gibbs))$doc_topic$p, 9L)
  for (nm in c("eta", "alpha", "burnin", "samples", "stream0")) {
    expect_missing_option(ns$ffi_lda_local_gibbs, gibbs, 4L, nm)
  }
  # left-to-right
  ltr <- list(x, 15L, tw, list(alpha = rep(0.1, 3), particles = 2L, stream0 = 0), c(0, 1), 1L)
  expect_length(do.call(.Call, c(list(ns$ffi_eval_ltr), ltr))$loglik, 8L)
  for (nm in c("alpha", "particles", "stream0")) {
    expect_missing_option(ns$ffi_eval_ltr, ltr, 4L, nm)
  }
  # SCVB0
  settings <- sparsevi:::cvb0_settings(list(alpha = 0.1))
  cvb0 <- list(x, 15L, lambda, NULL, sparsevi:::cvb0_opts(settings, 0, TRUE), c(0, 1), 1L,
               sparsevi:::cvb0_buffers())
  expect_identical(dim(do.call(.Call, c(list(ns$ffi_lda_local_cvb0), cvb0))$theta), c(3L, 8L))
  for (nm in c("alpha", "doc_s", "doc_tau", "doc_kappa", "passes", "shuffle", "kernel",
               "stream_base", "summary", "affine")) {
    expect_missing_option(ns$ffi_lda_local_cvb0, cvb0, 5L, nm)
  }
  expect_missing_option(ns$ffi_lda_local_cvb0, cvb0, 8L, "marks")
  # NPMI counts: the word pairs by name
  npmi <- list(x, list(word_map = c(0L, 1L, rep(-1L, 13)), adj_ptr = c(0L, 1L, 1L),
                       adj_partner = 1L, adj_pair = 0L, n_pairs = 1L), 1L)
  expect_length(do.call(.Call, c(list(ns$ffi_eval_npmi_counts), npmi))$pair_freq, 1L)
  expect_missing_option(ns$ffi_eval_npmi_counts, npmi, 2L, "adj_partner")
  # a corpus without its parts
  bad <- vb_args
  bad[[1]] <- unclass(x)[c("doc_ptr", "count")]
  err <- tryCatch(do.call(.Call, c(list(ns$ffi_lda_local_vb), bad)), error = function(e) e)
  expect_match(conditionMessage(err), "option `term` is missing", fixed = TRUE)
})

test_that("fits through the named options do not depend on the thread count", {
  # each engine against its pure-R reference is in test-lda-vb.R, test-lda-cvb0.R,
  # test-lda-ope.R and test-lda-gibbs.R; here: threads and a second run agree bit for
  # bit through the new calls
  sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 3)
  for (loc in c("vb", "ope", "cvb0", "gibbs")) {
    a <- fit_lda(sim$dtm, K = 3, local = loc, passes = 2, seed = 4, progress = FALSE,
                 threads = 1)
    b <- fit_lda(sim$dtm, K = 3, local = loc, passes = 2, seed = 4, progress = FALSE,
                 threads = 2)
    expect_identical(a$topic_word, b$topic_word, label = loc)
  }
})

test_that("a SCVB0 fit saved with positional settings still updates the same", {
  sim <- simulate_lda(D = 60, V = 30, K = 3, seed = 5)
  fit <- fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 1, seed = 2, progress = FALSE)
  expect_true(is.list(fit$control$cvb0_settings))
  old <- fit
  # as a fit made before the options went by name held them
  old$control$cvb0_settings <- unname(unlist(fit$control$cvb0_settings))
  expect_identical(update(old, sim$dtm, passes = 1, progress = FALSE)$topic_word,
                   update(fit, sim$dtm, passes = 1, progress = FALSE)$topic_word)
})
