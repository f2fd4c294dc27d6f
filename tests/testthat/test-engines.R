# The engine registry (R/engines.R): engines as objects holding the
# functions the training loop calls, and options crossing into C by name.

test_that("every LDA engine holds the functions the loop calls", {
  eng <- sparsevi:::lda_engines()
  expect_setequal(names(eng), names(sparsevi:::sparsevi_engines$lda))
  ns <- asNamespace("sparsevi")
  for (name in names(eng)) {
    e <- eng[[name]]
    expect_identical(e$name, name)
    expect_true(is.function(e$local))
    expect_true(is.function(e$infer))
    # one global step (a function) and one label per global it pairs with
    expect_identical(names(e$global), e$globals)
    expect_identical(names(e$global_step), e$globals)
    expect_true(all(vapply(e$global, is.function, TRUE)))
    for (f in c("control", "finish", "end_lap", "topic_sizes")) {
      expect_true(is.null(e[[f]]) || is.function(e[[f]]), label = paste(name, f))
    }
    expect_true(all(names(e$start) %in% c("sparse", "seeded")))
    # the functions are the namespace's own (they travel to cluster workers
    # by reference), found under their names by grep
    expect_identical(environment(e$local), ns)
    expect_identical(e$local, get(paste0("lda_local_", name), envir = ns))
    expect_identical(e$infer, get(paste0("lda_infer_", name), envir = ns))
    # the label of each global step names that step's function
    for (g in e$globals) {
      expect_identical(e$global[[g]], get(paste0("lda_global_", e$global_step[[g]]), envir = ns),
                       label = paste(name, g))
    }
  }
  expect_null(sparsevi:::lda_engine("bogus"))
  expect_null(sparsevi:::lda_engine(NA_character_))
})

test_that("a fit records the global step the registry chose and runs it", {
  sim <- simulate_lda(D = 30, V = 20, K = 2, seed = 1)
  for (i in seq_len(nrow(lda_combinations))) {
    loc <- lda_combinations$local[i]
    glob <- lda_combinations$global[i]
    fit <- suppressWarnings(fit_lda(sim$dtm, K = 2, local = loc, global = glob, passes = 1,
                                    seed = 1, progress = FALSE, doc_topics = 0))
    expect_identical(fit$control$global_step,
                     sparsevi:::lda_engine(loc)$global_step[[glob]])
  }
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
  expect_identical(sparsevi:::lda_engine_defaults$vb,
                   list(global = "memoized", alpha = 0.1, eta = 0.01, step_scale = 1))
  expect_identical(sparsevi:::lda_engine_defaults$cvb0$step_scale, 10)
  expect_identical(sparsevi:::lda_engine_controls$ope, c("ope_iter", "ope_eps", "step_scale"))
  expect_identical(sparsevi:::lda_engine_controls$gibbs,
                   c("burnin", "samples", "rescale_below", "step_scale"))
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
