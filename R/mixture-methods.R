# Mixtures (fit_mixture()): the fitted object and its methods.

# ---- the fitted object -----------------------------------------------------

# Point estimates (posterior means) of weights and component parameters,
# computed in C (src/mix-global.c) from the global summaries.
mix_point_estimates <- function(hyper, state) {
  p <- .Call(ffi_mix_point, hyper, state$N, state$S)
  out <- list(weights = p$weights)
  switch(hyper$lik + 1L,
         out[c("means", "covariances")] <- p[c("means", "spread")],
         out[c("means", "covariances")] <- p[c("means", "spread")],
         out[c("means", "variances")] <- p[c("means", "spread")],
         out$topic_word <- p$means,
         out[c("means", "covariances")] <- p[c("means", "spread")],
         out[c("means", "variances")] <- p[c("means", "spread")])
  out
}

new_sparsevi_mixture <- function(res, data, hyper, control, likelihood, prior, K, call,
                                 threads) {
  est <- mix_point_estimates(hyper, res$state)
  cols <- data$columns
  comp <- sprintf("c%d", seq_len(K))
  fit <- list(weights = stats::setNames(est$weights, comp))
  if (!is.null(est$means)) {
    fit$means <- sweep(est$means, 2L, data$center, `+`)
    dimnames(fit$means) <- list(comp, cols)
  }
  if (!is.null(est$covariances)) {
    fit$covariances <- est$covariances
    dimnames(fit$covariances) <- list(cols, cols, comp)
  }
  if (!is.null(est$variances)) {
    fit$variances <- est$variances
    dimnames(fit$variances) <- list(comp, cols)
  }
  if (!is.null(est$topic_word)) {
    fit$topic_word <- est$topic_word
    dimnames(fit$topic_word) <- list(comp, cols)
  }
  fit$sizes <- stats::setNames(res$state$N, comp)
  fit$likelihood <- likelihood
  fit$covariance_type <- names(mix_covariances)[match(likelihood, mix_covariances)]
  if (likelihood == "zm_gaussian") fit$covariance_type <- "full"
  fit$prior <- prior
  fit$K <- K
  fit$L <- control$L
  fit$n <- data$N
  fit$loglik <- sum(.Call(ffi_mix_weights, data$data, hyper, res$state$N, res$state$S,
                          TRUE, TRUE, as.integer(threads)))
  fit$state <- res$state
  fit$hyper <- hyper
  fit$center <- data$center
  fit$columns <- cols
  fit$control <- control
  fit$trace <- res$trace
  fit$converged <- res$converged
  fit$call <- call
  class(fit) <- c("sparsevi_mixture", "sparsevi_fit")
  fit
}

# The data-layer description of a fit (what mix_newdata() needs).
mix_fit_data <- function(object) {
  list(lik = object$hyper$lik, D = object$hyper$D, columns = object$columns,
       center = object$center)
}

#' @export
print.sparsevi_mixture <- function(x, ...) {
  cat(sprintf("<sparsevi_mixture> %s, %s prior: K = %d components, L = %d, %s training\n",
              x$likelihood, x$prior, x$K, x$L, x$control$global))
  cat(sprintf("  %s points x %d %s; %d laps in %.2fs%s\n", fmt_int(x$n), x$hyper$D,
              if (x$likelihood == "multinomial") "terms" else "dimensions",
              max(x$trace$lap), max(x$trace$seconds),
              if (isTRUE(x$converged)) " (converged)" else ""))
  last <- x$trace[nrow(x$trace), ]
  if (!is.na(last$objective)) cat(sprintf("  objective (ELBO): %.6g\n", last$objective))
  if (!is.na(last$heldout)) cat(sprintf("  held-out log-likelihood: %.6g per point\n", last$heldout))
  cat(sprintf("  log-likelihood: %.6g\n", x$loglik))
  if (!is.null(x$bic)) {
    b <- x$bic
    by_cov <- !is.null(b$covariance)
    cat(sprintf("  %s chosen by BIC (-2 logLik + df log n, lower is better; mclust's sign is the opposite): K = %d%s\n",
                if (by_cov) "K and covariance" else "K", x$K,
                if (by_cov) sprintf(", covariance \"%s\"", x$covariance_type) else ""))
    tab <- data.frame(K = b$K, BIC = round(b$BIC, 2), loglik = round(b$loglik, 2),
                      df = b$df, converged = b$converged,
                      best = ifelse(seq_len(nrow(b)) == which.min(b$BIC), "*", ""))
    if (by_cov) tab <- cbind(covariance = b$covariance, tab)
    cat(paste0("    ", utils::capture.output(print(tab, row.names = FALSE)), collapse = "\n"),
        "\n")
  }
  o <- order(x$weights, decreasing = TRUE)
  top <- utils::head(o, 8L)
  cat("  largest weights: ",
      paste(sprintf("%s %.3f", names(x$weights)[top], x$weights[top]), collapse = ", "),
      if (length(o) > 8L) ", ..." else "", "\n", sep = "")
  invisible(x)
}

#' @export
summary.sparsevi_mixture <- function(object, ...) {
  comp <- data.frame(component = names(object$weights), weight = unname(object$weights),
                     size = unname(object$sizes), stringsAsFactors = FALSE)
  out <- list(likelihood = object$likelihood, prior = object$prior, K = object$K,
              L = object$L, n = object$n, loglik = object$loglik,
              components = comp[order(comp$weight, decreasing = TRUE), ],
              trace = object$trace, converged = object$converged,
              BIC = stats::BIC(object), bic = object$bic)
  class(out) <- "summary.sparsevi_mixture"
  out
}

#' @export
print.summary.sparsevi_mixture <- function(x, ...) {
  cat(sprintf("Mixture: %s likelihood, %s prior, K = %d, L = %d, %s points\n", x$likelihood,
              x$prior, x$K, x$L, fmt_int(x$n)))
  cat(sprintf("Log-likelihood at the posterior means: %.6g; BIC %.6g (-2 logLik + df log n, lower is better)\n",
              x$loglik, x$BIC))
  if (!is.null(x$bic)) {
    cat("BIC of each K:\n")
    print(x$bic, row.names = FALSE, digits = 6)
  }
  cat("Components (by weight):\n")
  print(utils::head(x$components, 20L), row.names = FALSE, digits = 4)
  if (nrow(x$components) > 20L) cat(sprintf("... and %d more\n", nrow(x$components) - 20L))
  invisible(x)
}

#' Predict with a fitted mixture
#'
#' @param object A `sparsevi_mixture`.
#' @param newdata Data of the same form as the training data (same columns,
#'   matched by name when both have names; documents are aligned to the
#'   fitted vocabulary by term name, and unknown terms are dropped with a
#'   message). Missing: the training points, from what the fit keeps
#'   (`classification`, and `z` for `type = "responsibilities"`; the fit
#'   keeps no data, so `type = "density"` needs `newdata`).
#' @param type `"cluster"` (default: the most responsible component of each
#'   point), `"responsibilities"` (N x K matrix, rows sum to 1, from the
#'   variational weights) or `"density"` (the density of each point under the
#'   fitted mixture with its point estimates, \eqn{\sum_k w_k p(x | \theta_k)}
#'   over the fit's `weights` and component parameters (posterior means):
#'   the same meaning as for [fit_vdp()] fits).
#' @param log For `type = "density"`: the log density (default `FALSE`).
#' @param threads Number of threads.
#' @param ... Unused.
#' @returns An integer vector, a matrix or a numeric vector as `type` says.
#' @examples
#' sim <- simulate_mixture(N = 200, D = 2, K = 2, seed = 2)
#' fit <- fit_mixture(sim$X, K = 2, seed = 1, progress = FALSE)
#' head(predict(fit, sim$X, type = "responsibilities"))
#' @export
predict.sparsevi_mixture <- function(object, newdata,
                                     type = c("cluster", "responsibilities", "density"),
                                     log = FALSE,
                                     threads = getOption("sparsevi.threads", 1L), ...) {
  type <- check_choice(type, c("cluster", "responsibilities", "density"), "type")
  log <- check_flag(log, "log")
  threads <- sparsevi_threads(threads)
  if (missing(newdata)) return(mix_predict_training(object, type))
  test <- mix_newdata(newdata, mix_fit_data(object), "newdata")
  if (isTRUE(test$dropped > 0)) {
    message(sprintf("predict(): dropped %d term(s) (%s tokens) absent from the fitted vocabulary.",
                    test$dropped, format(test$dropped_tokens)))
  }
  st <- object$state
  if (type == "density") {
    out <- .Call(ffi_mix_weights, test$data, object$hyper, st$N, st$S, TRUE, TRUE,
                 as.integer(threads))
    return(if (log) out else exp(out))
  }
  W <- .Call(ffi_mix_weights, test$data, object$hyper, st$N, st$S, FALSE, FALSE,
             as.integer(threads))
  if (type == "cluster") return(max.col(t(W), ties.method = "first"))
  m <- apply(W, 2L, max)
  R <- exp(sweep(W, 2L, m))
  R <- t(R) / colSums(R)
  colnames(R) <- names(object$weights)
  R
}

# predict() of the training points, from the assignments kept on the fit.
mix_predict_training <- function(object, type, call = caller_call()) {
  if (is.null(object$classification)) {
    abort("This fit keeps no assignments of its training points (a Fast-VDP fit with `paper = TRUE` or `assignments = FALSE`, or a fit of an older version): give `newdata`, the training data.",
          "argument", call = call)
  }
  if (type == "cluster") return(object$classification)
  if (type == "responsibilities") {
    if (is.null(object$z)) {
      abort(sprintf("The fit does not keep the responsibilities of its %s training points (kept up to N * K = %s): give `newdata`, the training data.",
                    fmt_int(object$n), format(mix_z_max, big.mark = ",")), "argument",
            call = call)
    }
    return(object$z)
  }
  abort("`type = \"density\"` needs `newdata`: the fit keeps no data.", "argument",
        call = call)
}

#' Fitted values, observation count and assignments of a mixture fit
#'
#' `fitted()` gives the component of each training point (the most
#' responsible one; `type = "responsibilities"` the N x K matrix), in the
#' order of the training data, the same as `predict(fit)` without
#' `newdata`. mclust users find the same on the fit as `fit$classification`,
#' `fit$uncertainty` (1 minus the largest responsibility) and `fit$z` (the
#' responsibilities, kept when N * K is at most 5 million). `nobs()` is the
#' number of training points, the `n` of [BIC()].
#'
#' @param object A `sparsevi_mixture` or `sparsevi_vdp` fit.
#' @param type `"cluster"` (default) or `"responsibilities"`.
#' @param ... Unused.
#' @returns `fitted()`: an integer vector (`NA` for points a VDP fit's
#'   infinite tail claims) or a matrix; `nobs()`: a whole number.
#' @examples
#' fit <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
#' table(fitted(fit))
#' nobs(fit)
#' summary(fit$uncertainty)
#' @importFrom stats fitted nobs
#' @export
fitted.sparsevi_mixture <- function(object, type = c("cluster", "responsibilities"), ...) {
  type <- check_choice(type, c("cluster", "responsibilities"), "type")
  predict(object, type = type)
}

#' @rdname fitted.sparsevi_mixture
#' @export
nobs.sparsevi_mixture <- function(object, ...) object$n

#' @rdname heldout_loglik
#' @param newdata Test data of the same form as the training data.
#' @param threads Number of threads.
#' @export
heldout_loglik.sparsevi_mixture <- function(object, newdata,
                                            threads = getOption("sparsevi.threads", 1L),
                                            ...) {
  mean(predict(object, newdata, type = "density", log = TRUE, threads = threads))
}

#' Coefficients of a mixture fit; what it has no residuals or terms of
#'
#' `coef()` gives the fitted parameters (posterior means): the mixing
#' `weights`, and for Gaussian mixtures the `means` (K x D) with the
#' `covariances` (D x D x K) or, for diagonal models, the `variances` (K x
#' D); for multinomial mixtures the `topic_word` distributions (K x V); for
#' [fit_vdp()] fits also the `tail_weight` of the infinite tail.
#' A mixture has no residuals (there is no response: see [fitted()],
#' `fit$uncertainty` or `predict(fit, X, type = "density")`) and no terms
#' (those are the top terms of an LDA fit's topics, [terms.sparsevi_lda()]):
#' `residuals()` and `terms()` give errors of class
#' `sparsevi_error_unsupported` that say what to call instead.
#'
#' @param object A `sparsevi_mixture` or `sparsevi_vdp` fit.
#' @param x A `sparsevi_mixture` or `sparsevi_vdp` fit.
#' @param ... Unused.
#' @returns `coef()`: a named list of the parameters.
#' @examples
#' fit <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
#' str(coef(fit))
#' @importFrom stats coef residuals terms
#' @export
coef.sparsevi_mixture <- function(object, ...) {
  fields <- c("weights", "tail_weight", "means", "covariances", "variances", "topic_word")
  object <- unclass(object)
  object[intersect(fields, names(object))]
}

#' @rdname coef.sparsevi_mixture
#' @export
residuals.sparsevi_mixture <- function(object, ...) {
  abort("A mixture has no residuals (it models the points, with no response to predict): use fitted(fit) or predict(fit, X) for the components, fit$uncertainty for how sure each assignment is, or predict(fit, X, type = \"density\") for each point's density.",
        "unsupported")
}

#' @rdname coef.sparsevi_mixture
#' @export
terms.sparsevi_mixture <- function(x, ...) {
  abort("A mixture has no model terms (terms() gives the top terms of an LDA fit's topics): use coef(fit) for its weights, means and covariances (their dimnames name the variables).",
        "unsupported")
}

#' @export
logLik.sparsevi_mixture <- function(object, ...) {
  K <- object$K
  D <- object$hyper$D
  # free parameters as mclust counts them (VVV, EEE, VVI, VII): the tied
  # covariance once, the others per component
  per <- switch(object$likelihood, gaussian = D + D * (D + 1) / 2,
                zm_gaussian = D * (D + 1) / 2, diag_gaussian = 2 * D,
                multinomial = D - 1, tied_gaussian = D, spherical_gaussian = D + 1)
  shared <- if (object$likelihood == "tied_gaussian") D * (D + 1) / 2 else 0
  structure(object$loglik, df = (K - 1) + K * per + shared, nobs = object$n,
            class = "logLik")
}

#' Continue training a fitted mixture
#'
#' Runs more memoized, stochastic or batch laps from the fitted posterior,
#' on the same or on new data of the same form.
#'
#' @param object A `sparsevi_mixture`.
#' @param X Data (same form and columns as the training data).
#' @param passes Number of further laps (>= 1), default 5.
#' @param heldout Optional test data, scored after every lap. Missing (the
#'   default): the `heldout` data given when the model was fitted (kept on
#'   the fit as `heldout`); `NULL` to score none.
#' @param progress Print one line per lap?
#' @param cluster `NULL`, workers from [sparsevi_workers()] or a cluster
#'   from [parallel::makePSOCKcluster()], as in [fit_mixture()].
#' @param ... Nothing else: any other argument (a misspelt one, or a setting
#'   of the model such as `K`) is an error of class
#'   `sparsevi_error_argument`.
#' @returns The updated `sparsevi_mixture`; its `trace` continues the old one.
#' @importFrom stats update logLik
#' @examples
#' sim <- simulate_mixture(N = 200, D = 2, K = 2, seed = 3)
#' fit <- fit_mixture(sim$X, K = 2, passes = 2, seed = 1, progress = FALSE)
#' fit <- update(fit, sim$X, passes = 3)
#' nrow(fit$trace)
#' @export
update.sparsevi_mixture <- function(object, X, passes = 5, heldout,
                                    progress = interactive(), cluster = NULL, ...) {
  check_update_dots(..., valid = c("X", "passes", "heldout", "progress", "cluster"))
  if (missing(X)) {
    abort("`X`, the data to continue training on, is missing (the fit does not keep them).",
          "argument")
  }
  if (missing(heldout)) heldout <- object$heldout
  cluster <- check_cluster(cluster)
  passes <- check_count(passes, "passes")
  progress <- check_flag(progress, "progress")
  likelihood <- object$likelihood
  fd <- mix_fit_data(object)
  if (likelihood == "multinomial") {
    nd <- mix_newdata(X, fd, "X")
    data <- list(lik = 3L, N = nd$N, D = fd$D, columns = fd$columns, center = NULL,
                 dtm = new_sparsevi_dtm(nd$data[[1L]], nd$data[[2L]], nd$data[[3L]],
                                        fd$columns),
                 data = nd$data)
  } else {
    nd <- mix_newdata(X, fd, "X")
    data <- list(lik = fd$lik, N = nd$N, D = fd$D, columns = fd$columns,
                 center = fd$center, data = nd$data)
  }
  test <- if (is.null(heldout)) NULL else mix_newdata(heldout, fd, "heldout")
  control <- object$control
  control$passes <- passes
  control$n_batches <- min(control$n_batches, data$N)
  perm <- order(.Call(ffi_svi_rng_unif, control$seed, 2 + nrow(object$trace),
                      as.double(data$N)))
  train <- mix_permute(data, perm, control$threads)
  res <- mix_train(train, object$hyper, object$state, control, test, progress, fresh = FALSE,
                   cluster = cluster)
  old <- object$trace
  tr <- res$trace
  tr$lap <- tr$lap + max(old$lap)
  tr$seconds <- tr$seconds + max(old$seconds)
  if (!is.null(old$cpu_seconds)) tr$cpu_seconds <- tr$cpu_seconds + max(old$cpu_seconds)
  res$trace <- trace_bind(old, tr)
  fit <- new_sparsevi_mixture(res, data, object$hyper, control, likelihood, object$prior,
                              object$K, object$call, control$threads)
  fit$heldout <- heldout
  fit <- mix_add_assignments(fit, data)
  mix_warn_unconverged(res, control)
  fit
}

#' Plot a fitted mixture
#'
#' Draws the clusters found in the data, how sure each point's assignment
#' is, the components, the choice of K, or the training trace. Each
#' component has the same colour in every figure; [ggplot2::autoplot()]
#' draws the same figures with ggplot2.
#'
#' * `"clusters"` (needs `X`): the points in the data's own variables,
#'   coloured by their most likely component, each component's mean (a
#'   cross) and the ellipse of two standard deviations of its covariance,
#'   with a legend of the components and their weights beside the panel.
#'   One panel for two variables, a pairs view (every pair, on a page of
#'   its own) for more. `vars` chooses the variables; by default every one
#'   up to six, beyond that the five along which the components are most
#'   separated (between-component over within-component variance).
#' * `"uncertainty"` (needs `X`): as mclust's uncertainty plot, the points
#'   in the first two of `vars`, larger and darker the less sure their
#'   component is (the uncertainty, 1 minus the largest responsibility), and
#'   beside them every point's uncertainty, sorted (on a page of its own).
#' * `"components"`: the components projected on the first two principal
#'   axes of the fitted mixture, with the points of `X` when given.
#' * `"bic"` (a fit that chose K, or K and the covariance structure, by
#'   BIC): the BIC of every fit against K, one line per covariance
#'   structure, the chosen fit ringed (mclust's BIC plot, with R's sign:
#'   lower is better).
#' * `"trace"`: the objective (or the held-out log-likelihood) against the
#'   lap.
#'
#' By default: without `X`, the trace (the BIC for a fit that chose by
#' BIC); with `X`, the clusters, after the BIC for a fit that chose by BIC,
#' and after the trace when the trace shows something (more than two laps
#' and a change of more than 0.01% of the objective; a fit from a good
#' start is flat from its first lap).
#'
#' @param x A `sparsevi_mixture`.
#' @param X Optional data of the fitted form (the training data, or new
#'   points) to draw.
#' @param which Which figures: any of `"trace"`, `"bic"`, `"clusters"`,
#'   `"components"` and `"uncertainty"` (default as above).
#' @param type A synonym of `which` (`plot(fit, type = "bic")`).
#' @param vars For `"clusters"` and `"uncertainty"`: two or more variables
#'   to draw, by name or number (default as above).
#' @param ... Passed to [graphics::plot()].
#' @returns `x`, invisibly.
#' @seealso [autoplot.sparsevi_mixture()] for the same figures with ggplot2.
#' @examples
#' fit <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
#' plot(fit, faithful)
#' plot(fit, faithful, which = "uncertainty")
#' plot(fit, faithful, which = "clusters", vars = c("waiting", "eruptions"))
#' iris_fit <- fit_mixture(iris[, 1:4], K = 3, seed = 1, progress = FALSE)
#' plot(iris_fit, iris[, 1:4], which = "clusters")
#' plot(iris_fit, iris[, 1:4], which = "components")
#' grid <- fit_mixture(faithful, K = 1:3, seed = 1, progress = FALSE)
#' plot(grid, type = "bic")
#' @export
plot.sparsevi_mixture <- function(x, X = NULL, which = NULL, vars = NULL, type = NULL,
                                  ...) {
  numeric_data <- !is.null(x$means) && x$hyper$D >= 2L
  which <- mix_plot_which(x, X, if (is.null(which)) type else which, numeric_data)
  d <- if (is.null(X) || !numeric_data) {
    if (numeric_data) mix_plot_components(x)
  } else {
    mix_plot_data(x, X, if (any(c("clusters", "uncertainty") %in% which)) vars,
                  uncertainty = "uncertainty" %in% which)
  }
  # a pairs view and the uncertainty figure take a page each, after the
  # others; in a row of panels the components' key is a panel of its own
  pairs_view <- "clusters" %in% which && length(d$vars) > 2L
  row <- setdiff(which, c("uncertainty", if (pairs_view) "clusters"))
  key_panel <- length(row) >= 2L && any(c("clusters", "components") %in% row)
  if (length(row) >= 2L) {
    op <- graphics::par(no.readonly = TRUE)[c("mar", "cex")]
    graphics::layout(matrix(seq_len(length(row) + key_panel), 1L),
                     widths = c(rep(3, length(row)), if (key_panel) 1.7))
    graphics::par(cex = 0.83) # layout() shrinks text to 0.66 for three columns
    on.exit({graphics::layout(1); graphics::par(op)})
  }
  if ("trace" %in% which) plot_mix_trace(mix_trace_data(x), ...)
  if ("bic" %in% which) mix_plot_bic(x$bic, ...)
  if ("clusters" %in% which && !pairs_view) plot_clusters(d, legend = !key_panel, ...)
  if ("components" %in% which) plot_components(d, legend = !key_panel, ...)
  if (key_panel) mix_legend_panel(mix_clusters_legend(d))
  if (length(row) >= 2L) {
    graphics::layout(1)
    graphics::par(op)
  }
  if (pairs_view) plot_clusters(d, ...)
  if ("uncertainty" %in% which) plot_uncertainty(d, ...)
  invisible(x)
}

# The figures plot() and autoplot() draw for a mixture fit: `which` as
# given (checked), or the default.
mix_plot_which <- function(x, X, which, numeric_data, call = caller_call()) {
  panels <- c("trace", "bic", "clusters", "components", "uncertainty")
  if (is.null(which)) {
    # the trace only where it shows something: not a flat one beside data
    which <- if (is.null(X) || !numeric_data) "trace" else
      c(if (!mix_trace_data(x)$flat) "trace", "clusters")
    if (!is.null(x$bic)) which <- c("bic", setdiff(which, "trace"))
  }
  if (!is.character(which) || !length(which) || anyNA(which) || !all(which %in% panels)) {
    abort(sprintf("`which` must hold some of %s.", paste0('"', panels, '"', collapse = ", ")),
          "argument", call = call)
  }
  if ("bic" %in% which && is.null(x$bic)) {
    abort("`which = \"bic\"` draws the BIC of a choice among fits: this fit has one K and one covariance (fit with several, e.g. K = 1:9).",
          "argument", call = call)
  }
  for (w in intersect(c("clusters", "uncertainty"), which)) {
    if (is.null(X) || !numeric_data) {
      abort(if (is.null(X)) sprintf("`which = \"%s\"` draws data: give `X`.", w)
            else sprintf("`which = \"%s\"` needs numeric data with at least two columns (a multinomial mixture has none: see `which = \"trace\"`).", w),
            "argument", call = call)
    }
  }
  if (!numeric_data) which <- setdiff(which, "components")
  panels[panels %in% which]
}

# The BIC of a choice among fits (fit$bic: K, BIC, converged, and
# covariance when several structures were fitted) against K, one line per
# covariance structure, the chosen fit (lowest BIC) ringed; open points for
# fits that did not converge. The one BIC plot of K grids and of the
# covariance choice.
mix_plot_bic <- function(tab, ...) {
  cov <- if (is.null(tab$covariance)) rep("", nrow(tab)) else tab$covariance
  groups <- unique(cov)
  cols <- mix_colours(max(2L, length(groups)))[seq_along(groups)]
  ok <- is.finite(tab$BIC)
  graphics::plot(range(tab$K), range(tab$BIC[ok]), type = "n", xaxt = "n", xlab = "K",
                 ylab = "BIC (lower is better)", main = "BIC against K", ...)
  graphics::axis(1L, at = sort(unique(tab$K)))
  for (g in seq_along(groups)) {
    i <- which(cov == groups[g] & ok)
    i <- i[order(tab$K[i])]
    graphics::lines(tab$K[i], tab$BIC[i], col = cols[g], lwd = 2)
    graphics::points(tab$K[i], tab$BIC[i], col = cols[g], lwd = 2,
                     pch = ifelse(tab$converged[i], 19, 1))
  }
  best <- which.min(tab$BIC)
  graphics::points(tab$K[best], tab$BIC[best], cex = 2.6, lwd = 2)
  leg <- if (length(groups) > 1L) {
    syn <- names(mix_covariance_synonyms)[match(groups, mix_covariance_synonyms)]
    sprintf("%s (%s)", groups, syn)
  } else "BIC"
  if (!all(tab$converged)) {
    leg <- c(leg, "did not converge")
    cols <- c(cols, "black")
  }
  # the corner with the fewest points, to keep the legend off the lines
  xm <- mean(range(tab$K))
  ym <- mean(range(tab$BIC[ok]))
  corners <- c("topright", "topleft", "bottomright", "bottomleft")
  hits <- c(sum(tab$K[ok] >= xm & tab$BIC[ok] >= ym), sum(tab$K[ok] <= xm & tab$BIC[ok] >= ym),
            sum(tab$K[ok] >= xm & tab$BIC[ok] <= ym), sum(tab$K[ok] <= xm & tab$BIC[ok] <= ym))
  graphics::legend(corners[which.min(hits)], legend = leg, col = cols, lwd = 2,
                   pch = c(rep(19, length(groups)), if (!all(tab$converged)) 1),
                   bg = grDevices::adjustcolor("white", 0.8), cex = 0.8)
  invisible()
}
