test_that("every plot type draws to a null device", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 2)
  sp <- split_heldout(sim$dtm, test_frac = 0.2, seed = 1)
  fit <- fit_lda(sp$train, K = 3, passes = 2, seed = 1, heldout = sp$test,
                 progress = FALSE)
  expect_identical(plot(fit), fit)
  expect_identical(plot(fit, type = "trace"), fit)
  expect_identical(plot(fit, type = "words"), fit)
  expect_identical(plot(fit, type = "words", topics = c(1, 3), n = 4), fit)
  expect_identical(plot(fit, type = "documents", newdata = sim$dtm), fit)
  expect_identical(plot(fit, type = "documents", newdata = sim$dtm, docs = c(2, 5),
                        n_topics = 2), fit)
  expect_identical(plot(fit, type = "documents", newdata = sim$dtm,
                        docs = rownames(as_dgCMatrix(sim$dtm))[1:2]), fit)
  sto <- fit_lda(sim$dtm, K = 3, global = "stochastic", passes = 2, seed = 1,
                 progress = FALSE)
  expect_identical(plot(sto), sto)
  mix <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
  expect_identical(plot(mix), mix)
  expect_identical(plot(mix, faithful, which = "components"), mix)
  ms <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
  vdp <- fit_vdp(ms$X, seed = 1, threads = 1, progress = FALSE)
  expect_identical(plot(vdp), vdp)
})

test_that("plot arguments are checked", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 2)
  fit <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE)
  expect_error(plot(fit, type = "bars"), class = "sparsevi_error_argument")
  expect_error(plot(fit, type = "words", topics = 4), class = "sparsevi_error_argument")
  expect_error(plot(fit, type = "words", n = 0), class = "sparsevi_error_argument")
  # without newdata: the training documents kept on the fit, unless it keeps none
  expect_identical(plot(fit, type = "documents"), fit)
  expect_identical(plot(fit, type = "documents", docs = sim$dtm$doc_names[3:4]), fit)
  expect_error(plot(fit, type = "documents", docs = 41), class = "sparsevi_error_argument")
  none <- fit_lda(sim$dtm, K = 3, passes = 1, seed = 1, doc_topics = 0, progress = FALSE)
  expect_error(plot(none, type = "documents"), "doc_topics = 0",
               class = "sparsevi_error_argument")
  # a fit with one K has no choice of K to plot
  expect_error(plot(fit, type = "select"), "several K", class = "sparsevi_error_argument")
  expect_error(plot(fit, type = "documents", newdata = sim$dtm, docs = 99),
               class = "sparsevi_error_argument")
  expect_error(plot(fit, type = "documents", newdata = sim$dtm, docs = "nope"),
               class = "sparsevi_error_argument")
})

test_that("the words panel draws the largest topics first, with an axis label", {
  sim <- simulate_lda(D = 60, V = 30, K = 3, seed = 2)
  fit <- fit_lda(sim$dtm, K = 5, passes = 3, seed = 1, progress = FALSE)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(fit, type = "words", n = 3), fit)
  share <- attr(dead_topics(fit), "share")
  # the default choice: the five largest here, largest first
  topics <- sparsevi:::lda_words_default_topics(share)
  expect_setequal(topics, 1:5)
  panels <- sparsevi:::lda_words_panels(fit, topics, 3, share)
  titles <- vapply(panels, `[[`, "", "main")
  xlabs <- vapply(panels, `[[`, "", "xlab")
  share <- attr(dead_topics(fit), "share")
  expect_true(all(diff(vapply(panels, function(p) share[p$topic], 1)) <= 0))
  expect_equal(unname(panels[[1]]$p), unname(sort(fit$topic_word[panels[[1]]$topic, ], decreasing = TRUE)[1:3]))
  expect_match(titles, "% of tokens\\)$")
  expect_true(all(nzchar(xlabs)))
})

test_that("progress prints lap, elapsed, objective and ETA, and is silent when off", {
  sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 2)
  expect_message(fit_lda(sim$dtm, local = "vb", K = 3, passes = 2, seed = 1, progress = TRUE),
                 "^lap 1/2 +[0-9.]+s +objective -?[0-9.]+ +ETA <= [0-9.]+s")
  expect_silent(fit_lda(sim$dtm, local = "vb", K = 3, passes = 2, seed = 1, progress = FALSE))
  # stochastic training has no objective: the line shows the held-out score
  # when `heldout` is given, and says how to get one when it is not
  sp <- split_heldout(sim$dtm, test_frac = 0.2, seed = 1)
  out <- capture.output(invisible(fit_lda(sp$train, local = "vb", K = 3, global = "stochastic",
                                          passes = 2,
                                          seed = 1, heldout = sp$test, progress = TRUE)),
                        type = "message")
  expect_match(out, "^lap [12]/2 +[0-9.]+s +heldout -[0-9.]+/token +ETA [0-9.]+s")
  expect_false(any(grepl("objective", out)))
  out <- capture.output(invisible(fit_lda(sim$dtm, K = 3, local = "cvb0", passes = 2,
                                          seed = 1, progress = TRUE)),
                        type = "message")
  expect_match(out[1], "no objective for this training \\(give `heldout`")
  expect_match(out[2], "^lap 2/2 +[0-9.]+s +ETA [0-9.]+s$")
  expect_message(fit_mixture(faithful, K = 2, passes = 2, tol = 0.01, seed = 1,
                             progress = TRUE),
                 "^lap 0/2 +[0-9.]+s +objective -?[0-9.]+ +ETA <= [0-9.]+s")
  expect_silent(fit_mixture(faithful, K = 2, passes = 2, tol = 0.01, seed = 1,
                            progress = FALSE))
  # a fast fit's ETA is not rounded to 0 s on every lap (issue 23)
  expect_identical(format_seconds(0.004), "0.004")
  expect_identical(format_seconds(0.1234), "0.12")
  expect_identical(format_seconds(12.34), "12.3")
  ms <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
  out <- capture.output(invisible(fit_vdp(ms$X, seed = 1, threads = 1, progress = TRUE)),
                        type = "message")
  expect_match(out[1], "^split 1 +T = 2/50 +[0-9.]+s +free energy [-0-9.e+]+ .*ETA <= [0-9.]+s")
  out <- capture.output(invisible(fit_vdp(ms$X, seed = 1, threads = 1, progress = FALSE)),
                        type = "message")
  expect_length(out, 0)
})

test_that("mixture plots: pairs view for D > 2, chosen variables, traces by lap", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  X <- iris[, 1:4]
  mix <- fit_mixture(X, K = 3, seed = 1, progress = FALSE)
  # every variable up to six; the user's choice of two or more
  expect_identical(mix_plot_vars(NULL, names(X), 4L), 1:4)
  expect_identical(mix_plot_vars(c("Petal.Width", "Sepal.Length", "Petal.Length"),
                                 names(X), 4L), c(4L, 1L, 3L))
  expect_error(mix_plot_vars(c(1, 1), names(X), 4L), class = "sparsevi_error_argument")
  expect_error(mix_plot_vars(3, names(X), 4L), class = "sparsevi_error_argument")
  # beyond six: the five variables that separate the components most
  set.seed(1)
  n <- 300
  g <- rep(1:3, each = n / 3)
  Z <- matrix(rnorm(n * 9), n, 9)
  for (j in c(2, 5, 7, 8, 9)) Z[, j] <- Z[, j] + 6 * g
  zf <- fit_mixture(Z, K = 3, seed = 1, progress = FALSE)
  expect_identical(mix_plot_vars(NULL, NULL, 9L, zf$means, zf$covariances, zf$weights),
                   c(2L, 5L, 7L, 8L, 9L))
  mfrow <- graphics::par("mfrow")
  expect_identical(plot(mix, X, which = "clusters"), mix)
  expect_identical(plot(mix, X), mix)
  expect_identical(plot(mix, X, which = c("trace", "components", "clusters"),
                        vars = c(1, 3, 4)), mix)
  expect_identical(plot(zf, Z), zf)
  expect_identical(graphics::par("mfrow"), mfrow)
  # the same colour for a component in every panel
  expect_identical(mix_colours(3), grDevices::hcl.colors(3, "Dark 3"))
  v <- fit_vdp(as.matrix(X), seed = 1, threads = 1)
  expect_identical(plot(v, X), v)
  expect_identical(plot(v, X, vars = 1:2), v)
  expect_identical(graphics::par("mfrow"), mfrow)
})

test_that("autoplot() draws every LDA plot type as a ggplot, with plot()'s data", {
  skip_if_not_installed("ggplot2")
  sim <- simulate_lda(D = 60, V = 30, K = 3, seed = 2)
  sp <- split_heldout(sim$dtm, test_frac = 0.2, seed = 1)
  fit <- fit_lda(sp$train, K = 3, passes = 3, seed = 1, progress = FALSE)
  ho <- fit_lda(sp$train, K = 3, local = "vb", passes = 3, seed = 1, heldout = sp$test,
                progress = FALSE)
  pick <- fit_lda(sim$dtm, K = c(2, 3), passes = 2, seed = 1, progress = FALSE)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  plots <- list(ggplot2::autoplot(fit), ggplot2::autoplot(ho),
                ggplot2::autoplot(fit, type = "words", n = 4),
                ggplot2::autoplot(fit, type = "words", topics = c(1, 3)),
                ggplot2::autoplot(fit, type = "documents", docs = 1:5),
                ggplot2::autoplot(fit, type = "documents", newdata = sp$test$observed, n_topics = 2),
                ggplot2::autoplot(pick, type = "select"))
  for (p in plots) {
    expect_s3_class(p, "ggplot")
    expect_silent(ggplot2::ggplot_build(p))
  }
  # the same figures as plot(): seconds per lap without a score ...
  expect_equal(plots[[1]]$data$seconds, diff(c(0, fit$trace$seconds)))
  # ... the objective and held-out score against seconds with them
  expect_equal(plots[[2]]$data$value, c(ho$trace$objective, ho$trace$heldout))
  # top words with their probabilities; documents' proportions sum to 1
  w <- plots[[4]]$data
  expect_equal(w$p[w$rank == 1], apply(fit$topic_word[c(1, 3), ], 1, max))
  d <- plots[[5]]$data
  expect_equal(as.vector(tapply(d$proportion, d$document, sum)), rep(1, 5), tolerance = 1e-6)
  # a two-K grid always ends at an edge: the subtitle says which
  expect_match(plots[[7]]$labels$subtitle,
               if (pick$K == 3L) "grid's upper edge" else "grid's lower edge")
  expect_error(ggplot2::autoplot(fit, type = "select"), class = "sparsevi_error_argument")
})

test_that("every plot type of every fit class draws, in base graphics and ggplot2", {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  # LDA: every type, plot() and autoplot()
  sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 2)
  lda <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1, progress = FALSE)
  pick <- fit_lda(sim$dtm, K = c(2, 3), passes = 2, seed = 1, progress = FALSE)
  for (t in c("trace", "words", "documents")) expect_identical(plot(lda, type = t), lda)
  expect_identical(plot(pick, type = "select"), pick)
  # mixtures: two columns, four columns, a K grid, documents
  mix2 <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
  mix4 <- fit_mixture(iris[, 1:4], K = 3, seed = 1, progress = FALSE)
  grid <- suppressWarnings(fit_mixture(faithful, K = 1:3, seed = 1, progress = FALSE))
  docs <- fit_mixture(sim$dtm, K = 2, likelihood = "multinomial", seed = 1,
                      progress = FALSE)
  types <- c("trace", "clusters", "components", "uncertainty")
  for (t in types) {
    expect_identical(plot(mix2, faithful, which = t), mix2)
    expect_identical(plot(mix4, iris, which = t), mix4)
  }
  expect_identical(plot(mix4, iris, which = types), mix4)
  expect_identical(plot(grid, faithful), grid)
  expect_identical(plot(grid, type = "bic"), grid)
  expect_identical(plot(mix2, which = "components"), mix2)
  expect_identical(plot(docs), docs)
  # Fast-VDP: two columns and four
  ms <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
  vdp2 <- fit_vdp(ms$X, seed = 1, threads = 1)
  vdp4 <- fit_vdp(as.matrix(iris[, 1:4]), seed = 1, threads = 1)
  for (t in c("clusters", "uncertainty", "trace")) {
    expect_identical(plot(vdp2, ms$X, which = t), vdp2)
    expect_identical(plot(vdp4, iris[, 1:4], which = t), vdp4)
  }
  expect_identical(plot(vdp2, ms$X), vdp2)
  expect_identical(plot(vdp4, iris[, 1:4]), vdp4)
  skip_if_not_installed("ggplot2")
  gg <- list(ggplot2::autoplot(lda), ggplot2::autoplot(lda, type = "words"),
             ggplot2::autoplot(lda, type = "documents"),
             ggplot2::autoplot(pick, type = "select"),
             ggplot2::autoplot(mix2), ggplot2::autoplot(grid), ggplot2::autoplot(docs),
             ggplot2::autoplot(mix2, type = "components"))
  for (t in types) {
    gg <- c(gg, list(ggplot2::autoplot(mix2, faithful, type = t),
                     ggplot2::autoplot(mix4, iris, type = t)))
  }
  for (t in c("clusters", "uncertainty", "trace")) {
    gg <- c(gg, list(ggplot2::autoplot(vdp2, ms$X, type = t),
                     ggplot2::autoplot(vdp4, iris[, 1:4], type = t)))
  }
  for (p in gg) {
    expect_s3_class(p, "ggplot")
    expect_no_error(print(p))
  }
})

test_that("mixture and VDP figures: defaults, shared data, integer counts", {
  mix2 <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
  # a flat trace (a fit from a good start) is left out of the default figure
  expect_true(mix_trace_data(mix2)$flat)
  expect_identical(mix_plot_which(mix2, faithful, NULL, TRUE), "clusters")
  expect_identical(mix_plot_which(mix2, NULL, NULL, TRUE), "trace")
  expect_error(mix_plot_which(mix2, NULL, "uncertainty", TRUE), "give `X`",
               class = "sparsevi_error_argument")
  expect_error(mix_plot_which(mix2, faithful, "bic", TRUE), "several",
               class = "sparsevi_error_argument")
  expect_identical(vdp_plot_which(list(dim = 2L), matrix(0, 1, 2), NULL),
                   c("clusters", "trace"))
  # the uncertainty drawn is mclust's, the fit's own
  d <- mix_plot_data(mix2, faithful)
  expect_equal(d$uncertainty, mix2$uncertainty)
  expect_identical(d$cluster, mix2$classification)
  # the same clusters without the N x K responsibilities
  expect_identical(mix_plot_data(mix2, faithful, uncertainty = FALSE)$cluster, d$cluster)
  # its two variables: the two that separate the components most
  mix4 <- fit_mixture(iris[, 1:4], K = 3, seed = 1, progress = FALSE)
  d4 <- mix_plot_data(mix4, iris)
  expect_identical(d4$vars, 1:4)
  expect_identical(d4$names[d4$uvars], c("Petal.Length", "Petal.Width"))
  expect_identical(mix_plot_data(mix4, iris, vars = c(2, 1, 3))$uvars, c(2L, 1L))
  # counts and laps get whole-number ticks
  expect_identical(int_breaks(c(1, 2)), c(1, 2))
  expect_true(all(int_breaks(c(0, 9)) %% 1 == 0))
  expect_identical(gg_count_breaks(c(0.95, 2.05)), 1:2)
  skip_if_not_installed("ggplot2")
  # autoplot() draws plot()'s data
  p <- ggplot2::autoplot(mix2, faithful, type = "uncertainty")
  expect_equal(sort(p$data$uncertainty), sort(mix2$uncertainty))
  p <- ggplot2::autoplot(mix4, iris, type = "clusters")
  expect_identical(nrow(p$data), 6L * 150L) # six pairs of four variables
  ms <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
  vdp <- fit_vdp(ms$X, seed = 1, threads = 1)
  p <- ggplot2::autoplot(vdp, type = "trace")
  expect_equal(p$data$value, c(vdp$trace$free_energy, vdp$trace$T))
  expect_error(ggplot2::autoplot(vdp, type = "components"), class = "sparsevi_error_argument")
})
