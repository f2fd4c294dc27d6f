# Fast-VDP (fit_vdp()): the fitted object and its methods.

new_sparsevi_vdp <- function(res, X, center, prior, control, call) {
  T <- res$T
  D <- ncol(X)
  a <- res$stick_a
  b <- res$stick_b
  ev <- a / (a + b)
  e1v <- b / (a + b)
  weights <- ev * cumprod(c(1, e1v))[seq_len(T)]
  tail_weight <- prod(e1v)
  m <- t(res$m + center)
  colnames(m) <- colnames(X)
  covs <- array(0, c(D, D, T), dimnames = list(colnames(X), colnames(X), NULL))
  for (k in seq_len(T)) covs[, , k] <- sym_inverse(res$W[, , k]) / res$nu[k]
  phases <- c("update", "split", "pre_expand", "expand", "start", "delete")
  tr <- res$trace
  # the common trace schema (train_trace_columns, R/train.R): a "lap" is a
  # step of the fit (0: the start), the objective the ELBO (= -free energy);
  # no held-out score; bytes per step are filled in by fit_vdp() with a
  # cluster. Fast-VDP's own columns follow.
  n_tr <- length(tr$step)
  trace <- data.frame(lap = tr$step - 1L, seconds = tr$seconds,
                      cpu_seconds = tr$cpu_seconds, objective = -tr$free_energy,
                      heldout = rep(NA_real_, n_tr), bytes_sent = rep(0, n_tr),
                      bytes_received = rep(0, n_tr), free_energy = tr$free_energy,
                      T = tr$T, outer_nodes = tr$outer_nodes,
                      phase = phases[tr$phase + 1L], stringsAsFactors = FALSE)
  stopifnot(identical(names(trace)[seq_along(train_trace_columns)], train_trace_columns))
  out <- list(
    weights = weights, tail_weight = tail_weight, means = m, covariances = covs,
    T = T, K = T, sizes = res$N, free_energy = res$free_energy, trace = trace,
    n_outer_nodes = res$n_items,
    timings = c(tree = res$seconds[1], fit = res$seconds[2],
                total = res$seconds[1] + res$seconds[2],
                tree_cpu = res$seconds[3], fit_cpu = res$seconds[4]),
    splits = c(tried = res$splits_tried, accepted = res$splits_accepted,
               deletes = res$deletes_accepted),
    n_tree_nodes = res$n_nodes,
    posterior = list(m = m, beta = res$beta, nu = res$nu, W = res$W,
                     stick_a = a, stick_b = b),
    prior = prior, n = nrow(X), dim = D, colnames = colnames(X),
    control = control, call = call)
  class(out) <- c("sparsevi_vdp", "sparsevi_mixture", "sparsevi_fit")
  validate_sparsevi_vdp(out)
}

# The training points' assignments (classification, NA where the infinite
# tail is the most responsible; uncertainty; the N x (T + 1)
# responsibilities z when N (T + 1) <= mix_z_max) and the log-likelihood at
# the point estimates (the plug-in density of predict(type = "density")).
# Two passes over the points in C (responsibilities, plug-in density); the
# cluster is the first largest responsibility, as predict(type = "cluster")
# takes the first largest score.
vdp_add_assignments <- function(fit, X, threads) {
  R <- predict(fit, X, type = "responsibilities", threads = threads)
  best <- max.col(R, ties.method = "first")
  fit$uncertainty <- 1 - R[cbind(seq_len(nrow(R)), best)]
  best[best == fit$T + 1L] <- NA_integer_
  fit$classification <- best
  fit$z <- if (as.double(nrow(R)) * ncol(R) <= mix_z_max) R else NULL
  rm(R)
  fit$loglik <- sum(predict(fit, X, type = "density", log = TRUE, threads = threads))
  fit
}

validate_sparsevi_vdp <- function(x) {
  stopifnot(length(x$weights) == x$T, nrow(x$means) == x$T,
            dim(x$covariances)[3] == x$T,
            abs(sum(x$weights) + x$tail_weight - 1) < 1e-8)
  x
}

#' @export
print.sparsevi_vdp <- function(x, ...) {
  cat(sprintf("<sparsevi_vdp> %s: %d components in %d dimensions from %d points\n",
              if (isTRUE(x$control$kdtree)) "Fast-VDP (kd-tree)" else "VDP",
              x$T, x$dim, x$n))
  cat(sprintf("  free energy %.6g; tail weight %.3g; %d outer nodes; %.2f s\n",
              x$free_energy, x$tail_weight, x$n_outer_nodes, x$timings[["total"]]))
  if (!is.null(x$loglik)) {
    cat(sprintf("  log-likelihood %.6g; BIC %.6g (lower is better)\n", x$loglik,
                stats::BIC(x)))
  }
  w <- utils::head(round(x$weights, 3), 10)
  cat("  weights:", paste(format(w), collapse = " "), if (x$T > 10) "..." else "", "\n")
  invisible(x)
}

#' @export
summary.sparsevi_vdp <- function(object, ...) {
  comp <- data.frame(component = seq_len(object$T), weight = object$weights,
                     size = object$sizes)
  out <- list(method = if (isTRUE(object$control$kdtree)) "Fast-VDP" else "VDP",
              T = object$T, n = object$n, dim = object$dim,
              free_energy = object$free_energy, tail_weight = object$tail_weight,
              components = comp, n_outer_nodes = object$n_outer_nodes,
              timings = object$timings, splits = object$splits)
  class(out) <- "summary.sparsevi_vdp"
  out
}

#' @export
print.summary.sparsevi_vdp <- function(x, ...) {
  cat(sprintf("%s fit: %d points, %d dimensions, %d components\n", x$method, x$n,
              x$dim, x$T))
  cat(sprintf("free energy: %.8g   tail weight: %.3g\n", x$free_energy, x$tail_weight))
  cat(sprintf("outer nodes: %d   splits accepted/tried: %d/%d\n", x$n_outer_nodes,
              x$splits[["accepted"]], x$splits[["tried"]]))
  cat(sprintf("seconds: tree %.3f, fit %.3f\n", x$timings[["tree"]], x$timings[["fit"]]))
  print(x$components, row.names = FALSE, digits = 4)
  invisible(x)
}

# Per-component constants for ffi_vdp_predict (components, then the tail,
# which scores with the prior): means, upper Cholesky factors U of the
# Wishart scales W = U'U, and the coefficients of
#   S_k = E ln pi_k + E ln p(x | k) = a_k - s_k quad_k                 (eqs. 3-6)
#   ln w_k + ln t_k(x) = c_k - e_k log1p(r_k quad_k)                    (eq. 7)
# with quad_k = (x - m_k)' W_k (x - m_k); the Student-t predictive has
# dof nu + 1 - D and precision beta / (1 + beta) (dof) W. O(T D^3).
vdp_predict_params <- function(object) {
  post <- object$posterior
  pr <- object$prior
  D <- object$dim
  T <- object$T
  a <- post$stick_a
  b <- post$stick_b
  elnv <- digamma(a) - digamma(a + b)
  eln1v <- digamma(b) - digamma(a + b)
  elnpi <- c(elnv + c(0, cumsum(eln1v))[seq_len(T)], 0)
  ps0 <- digamma(pr$a1 + pr$a2)
  elnpi[T + 1L] <- sum(eln1v) + digamma(pr$a1) - ps0 - log1p(-exp(digamma(pr$a2) - ps0))
  lw <- log(c(object$weights, object$tail_weight))
  K1 <- T + 1L
  M <- matrix(0, D, K1)
  U <- array(0, c(D, D, K1))
  par <- matrix(0, K1, 5L)
  for (k in seq_len(K1)) {
    if (k <= T) {
      m <- post$m[k, ]
      W <- post$W[, , k]
      beta <- post$beta[k]
      nu <- post$nu[k]
    } else {
      m <- pr$m0
      W <- sym_inverse(pr$W0inv)
      beta <- pr$beta0
      nu <- pr$nu0
    }
    Uk <- chol_upper(W)
    logdetW <- 2 * sum(log(abs(diag(Uk))))
    elogdet <- sum(digamma((nu + 1 - seq_len(D)) / 2)) + D * log(2) + logdetW
    dof <- nu + 1 - D
    sc <- dof * beta / (1 + beta)
    M[, k] <- m
    U[, , k] <- Uk
    par[k, ] <- c(elnpi[k] + 0.5 * elogdet - 0.5 * D * log(2 * pi) - 0.5 * D / beta,
                  0.5 * nu,
                  lw[k] + lgamma((dof + D) / 2) - lgamma(dof / 2) - 0.5 * D * log(dof * pi) +
                    0.5 * (logdetW + D * log(sc)),
                  0.5 * (dof + D),
                  sc / dof)
  }
  list(M = M, U = U, par = par)
}

#' Predict with a Fast-VDP fit
#'
#' @param object A `sparsevi_vdp` fit from [fit_vdp()].
#' @param newdata A numeric matrix or data frame with the fitted columns
#'   (points in rows; a data frame's columns are matched by name, others
#'   ignored). Missing: the training points, from the assignments the fit
#'   keeps (`type = "cluster"`, or `"responsibilities"` when N (T + 1) <=
#'   5e6; a fit with
#'   `paper = TRUE` or `assignments = FALSE` keeps none), as [fitted()];
#'   `"density"` and `"predictive"` need `newdata`, since the fit keeps no
#'   data.
#' @param type `"cluster"` (the component with the largest responsibility;
#'   `NA` where the infinite tail has it), `"responsibilities"` (N x (T + 1)
#'   matrix q(z), eq. 3, the last column the tail), `"density"` (the density
#'   of each point under the fitted mixture with its point estimates,
#'   \eqn{\sum_k w_k N(x | \mu_k, \Sigma_k)} over the fit's `weights`,
#'   `means` and `covariances`, plus the tail's `tail_weight` times
#'   N(`m0`, `cov0`): the same meaning as for [fit_mixture()] fits), or
#'   `"predictive"` (the posterior predictive density, eq. 7: a mixture of
#'   Student-t densities, tail included; [heldout_loglik()] averages its
#'   log).
#' @param log For `type = "density"` or `"predictive"`, return the log
#'   density (default `FALSE`).
#' @param threads Number of threads (default `getOption("sparsevi.threads",
#'   1)`); results do not depend on it.
#' @param ... Unused.
#' @returns An integer vector, a matrix or a numeric vector, by `type`.
#' @examples
#' sim <- simulate_mixture(N = 300, D = 2, K = 2, separation = 6, seed = 2)
#' fit <- fit_vdp(sim$X, seed = 1, threads = 1)
#' head(predict(fit, sim$X, type = "responsibilities"))
#' head(predict(fit, sim$X, type = "density", log = TRUE))
#' table(predict(fit)) # the training points
#' @export
predict.sparsevi_vdp <- function(object, newdata,
                                 type = c("cluster", "responsibilities", "density",
                                          "predictive"),
                                 log = FALSE,
                                 threads = getOption("sparsevi.threads", 1L), ...) {
  type <- check_choice(type, c("cluster", "responsibilities", "density", "predictive"),
                       "type")
  log <- check_flag(log, "log")
  threads <- sparsevi_threads(threads)
  if (missing(newdata)) {
    if (type %in% c("cluster", "responsibilities")) return(mix_predict_training(object, type))
    abort(sprintf("`type = \"%s\"` needs `newdata`: the fit keeps no data.", type), "argument")
  }
  X <- vdp_newdata(object, newdata)
  # the per-point work (quadratic forms, q(z), eq. 7 with the tail, the
  # plug-in Gaussian mixture) runs in C
  if (type == "density") {
    p <- vdp_plugin_params(object)
    out <- .Call(ffi_vdp_predict, X, p$M, p$U, p$par, 3L, threads)
    return(if (log) out else exp(out))
  }
  p <- vdp_predict_params(object)
  code <- match(type, c("cluster", "responsibilities", "predictive")) - 1L
  out <- .Call(ffi_vdp_predict, X, p$M, p$U, p$par, code, threads)
  if (type == "predictive") return(if (log) out else exp(out))
  if (type == "responsibilities") {
    colnames(out) <- c(seq_len(object$T), "tail")
    return(out)
  }
  out[out == object$T + 1L] <- NA_integer_
  out
}

vdp_newdata <- function(object, newdata, call = caller_call()) {
  # a data frame's training columns by name (extra columns ignored)
  newdata <- pick_columns(newdata, object$colnames, "newdata", call)
  X <- check_vdp_data(newdata, "newdata", D = object$dim, call = call)
  if (!is.null(object$colnames) && !is.null(colnames(X))) {
    if (!setequal(colnames(X), object$colnames)) {
      abort("The column names of `newdata` differ from those of the fitted data.",
            "data", call = call)
    }
    X <- X[, object$colnames, drop = FALSE]
  }
  X
}

#' Held-out log-likelihood of a Fast-VDP fit
#'
#' @param object A `sparsevi_vdp` fit.
#' @param newdata Numeric matrix of test points (rows), the fitted columns.
#' @param ... Unused.
#' @returns The mean over test points of the log predictive density (eq. 7 of
#'   Kurihara et al., the infinite tail included), in nats per point.
#' @examples
#' sim <- simulate_mixture(N = 400, D = 2, K = 3, separation = 6, seed = 3)
#' fit <- fit_vdp(sim$X[1:300, ], seed = 1, threads = 1)
#' heldout_loglik(fit, sim$X[301:400, ])
#' @export
heldout_loglik.sparsevi_vdp <- function(object, newdata, ...) {
  mean(predict(object, newdata, type = "predictive", log = TRUE))
}

#' Methods for Fast-VDP fits
#'
#' A `sparsevi_vdp` fit has the methods of a mixture fit, each its own:
#' `logLik()` is the log-likelihood of the training points at the point
#' estimates (the plug-in density of `predict(type = "density")`, the tail
#' included) with `df` = (T - 1) + T (D + D (D + 1) / 2) for T components
#' with full covariances, so `BIC()` and `AIC()` work (R's sign: lower is
#' better); `nobs()` the number of training points; `fitted()` their
#' components (`NA` where the infinite tail is the most responsible), as
#' `predict(fit)` without `newdata`; `update()` fits the model again, to the
#' data `X`, with the settings of the fit except those given (`max_K`,
#' `tol`, the priors, the controls of [fit_vdp()]): a Fast-VDP fit grows
#' from one component, so there is no state to continue from.
#'
#' @param object A `sparsevi_vdp` fit.
#' @param X Data with the fitted columns.
#' @param type For `fitted()`: `"cluster"` or `"responsibilities"`.
#' @param ... For `update()`: arguments of [fit_vdp()] to change; else
#'   unused.
#' @returns `logLik()`: a `"logLik"` object; `nobs()`: a whole number;
#'   `fitted()`: an integer vector or a matrix; `update()`: a new
#'   `sparsevi_vdp` fit.
#' @examples
#' sim <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
#' fit <- fit_vdp(sim$X, seed = 1, threads = 1)
#' logLik(fit)
#' BIC(fit)
#' table(fitted(fit), sim$cluster)
#' fit2 <- update(fit, sim$X, max_K = 2)
#' fit2$T
#' @name sparsevi_vdp_methods
NULL

#' @rdname sparsevi_vdp_methods
#' @export
logLik.sparsevi_vdp <- function(object, ...) {
  if (is.null(object$loglik)) {
    abort("This fit keeps no log-likelihood of its training points (fitted with `paper = TRUE` or `assignments = FALSE`): refit with `assignments = TRUE`, or score data with heldout_loglik(fit, X).",
          "argument")
  }
  T <- object$T
  D <- object$dim
  structure(object$loglik, df = (T - 1) + T * (D + D * (D + 1) / 2), nobs = object$n,
            class = "logLik")
}

#' @rdname sparsevi_vdp_methods
#' @export
nobs.sparsevi_vdp <- function(object, ...) object$n

#' @rdname sparsevi_vdp_methods
#' @export
fitted.sparsevi_vdp <- function(object, type = c("cluster", "responsibilities"), ...) {
  type <- check_choice(type, c("cluster", "responsibilities"), "type")
  predict(object, type = type)
}

#' @rdname sparsevi_vdp_methods
#' @export
update.sparsevi_vdp <- function(object, X, ...) {
  if (missing(X)) {
    abort("`X`, the data to fit again, is missing (the fit does not keep them).", "argument")
  }
  dots <- list(...)
  if (length(dots) && (is.null(names(dots)) || any(!nzchar(names(dots))))) {
    abort("update() takes named arguments of fit_vdp() only.", "argument")
  }
  bad <- setdiff(names(dots), c(setdiff(names(formals(fit_vdp)), c("X", "...")),
                                "leaf_size", "max_iter", "partial_iter", "update_tol",
                                "expand_threshold", "expand_sd", "expand_tol", "n_batches", "lazy_tree",
                                "deletes", "split_cut", "pair_splits"))
  if (length(bad)) {
    abort(sprintf("update() of a Fast-VDP fit does not take %s: give arguments of fit_vdp() (e.g. `max_K`, `tol`, `seed`).",
                  paste0("`", bad, "`", collapse = ", ")), "argument")
  }
  # the settings the original call gave, with their values as fitted
  given <- setdiff(names(as.list(object$call))[-1L], c("X", "", names(dots)))
  carried <- list()
  for (nm in given) {
    v <- if (!is.null(object$prior[[nm]])) object$prior[[nm]] else object$control[[nm]]
    if (!is.null(v)) carried[[nm]] <- v
  }
  fit <- do.call(fit_vdp, c(list(X), carried, dots))
  cl <- object$call
  for (nm in names(dots)) cl[[nm]] <- dots[[nm]]
  fit$call <- cl
  fit
}

# Constants for ffi_vdp_predict's plug-in density (type 3): per component
# (then the tail, at the prior's mean and expected covariance) the mean, the
# upper Cholesky factor U of the precision Sigma^-1 = U'U, and
# S_k = ln w_k - D/2 ln(2 pi) + ln|U| - quad / 2.
vdp_plugin_params <- function(object) {
  D <- object$dim
  T <- object$T
  K1 <- T + 1L
  M <- matrix(0, D, K1)
  U <- array(0, c(D, D, K1))
  par <- matrix(0, K1, 5L)
  w <- c(object$weights, object$tail_weight)
  for (k in seq_len(K1)) {
    if (k <= T) {
      m <- object$means[k, ]
      Sigma <- object$covariances[, , k]
    } else {
      m <- object$prior$m0
      Sigma <- object$prior$cov0
    }
    Uk <- chol_upper(sym_inverse(Sigma))
    M[, k] <- m
    U[, , k] <- Uk
    par[k, 1:2] <- c(log(w[k]) - 0.5 * D * log(2 * pi) + sum(log(abs(diag(Uk)))), 0.5)
  }
  list(M = M, U = U, par = par)
}

#' Plot a Fast-VDP fit: its data by cluster, and the course of the fit
#'
#' With data `X`, draws the points in the data's own variables coloured by
#' their most likely component (points the infinite tail claims as grey
#' crosses), with each component's mean, the ellipse of two standard
#' deviations of its covariance and a legend beside the panel (`which =
#' "clusters"`): one panel for two variables, a pairs view (on a page of its
#' own) for more, as for [plot.sparsevi_mixture()]. `which = "uncertainty"`
#' draws how sure each point's component is, as for
#' [plot.sparsevi_mixture()]. The course of the fit (`which = "trace"`) is
#' two panels against the step of the fit: the free energy and the number
#' of components T. The clusters come first: with two variables beside the
#' trace, with more on the page before it. [ggplot2::autoplot()] draws the
#' same figures with ggplot2.
#'
#' @param x A `sparsevi_vdp` fit.
#' @param X Optional data with the fitted columns (the training data, or
#'   new points) to draw.
#' @param which Any of `"clusters"` and `"uncertainty"` (both need `X` and
#'   at least two columns) and `"trace"`. Default `c("clusters", "trace")`
#'   with `X`, else `"trace"`.
#' @param vars For `"clusters"` and `"uncertainty"`: two or more variables
#'   to draw, by name or number; default every one up to six, beyond that
#'   the five along which the components are most separated.
#' @param type A synonym of `which`.
#' @param ... Passed to [graphics::plot()].
#' @returns `x`, invisibly.
#' @seealso [autoplot.sparsevi_vdp()] for the same figures with ggplot2.
#' @examples
#' sim <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
#' fit <- fit_vdp(sim$X, seed = 1, threads = 1)
#' plot(fit, sim$X)
#' plot(fit, sim$X, which = "uncertainty")
#' plot(fit)
#' @export
plot.sparsevi_vdp <- function(x, X = NULL, which = NULL, vars = NULL, type = NULL, ...) {
  which <- vdp_plot_which(x, X, if (is.null(which)) type else which)
  d <- if (any(c("clusters", "uncertainty") %in% which)) {
    mix_plot_data(x, X, vars, uncertainty = "uncertainty" %in% which)
  }
  pairs_view <- "clusters" %in% which && length(d$vars) > 2L
  if ("clusters" %in% which && !pairs_view && "trace" %in% which) {
    # the clusters large on the left, free energy and T stacked beside them
    graphics::layout(matrix(c(1L, 1L, 2L, 3L), 2L), widths = c(3.4, 2))
    on.exit(graphics::layout(1))
    plot_clusters(d, ...)
    op <- graphics::par(mar = c(4, 4.5, 2.5, 1))
    plot_vdp_trace(vdp_trace_data(x), ...)
    graphics::par(op)
  } else {
    if ("clusters" %in% which) plot_clusters(d, ...)
    if ("trace" %in% which) {
      op <- graphics::par(mfrow = c(1L, 2L))
      plot_vdp_trace(vdp_trace_data(x), ...)
      graphics::par(op)
    }
  }
  if ("uncertainty" %in% which) plot_uncertainty(d, ...)
  invisible(x)
}

# The figures plot() and autoplot() draw for a Fast-VDP fit: `which` as
# given (checked), or the default.
vdp_plot_which <- function(x, X, which, call = caller_call()) {
  if (is.null(which)) which <- if (is.null(X) || x$dim < 2L) "trace" else c("clusters", "trace")
  panels <- c("clusters", "uncertainty", "trace")
  if (!is.character(which) || !length(which) || anyNA(which) || !all(which %in% panels)) {
    abort(sprintf("`which` must hold some of %s.", paste0('"', panels, '"', collapse = ", ")),
          "argument", call = call)
  }
  for (w in intersect(c("clusters", "uncertainty"), which)) {
    if (is.null(X)) abort(sprintf("`which = \"%s\"` draws data: give `X`.", w), "argument",
                          call = call)
  }
  panels[panels %in% which]
}

# Inverse of a symmetric positive (semi)definite matrix: through its Cholesky
# factor, or, when it is numerically singular (near-duplicate points give a
# Wishart scale with a huge condition number), through its eigen-decomposition
# with eigenvalues floored at 1e-14 of the largest.
# These two stay in R on purpose (issue 21): they run once per component
# after a fit (covariances of the result, the predictor's factors), not in
# any loop, and what they add over the C Cholesky of src/linalg.c is the
# eigen-decomposition fallback for a numerically singular scale, which is
# LAPACK's (base R's chol/chol2inv/eigen); the fit itself inverts and
# factors only in C (gauss_nw_posterior, src/obs-gauss.c).
sym_inverse <- function(W) {
  W <- (W + t(W)) / 2
  inv <- tryCatch(chol2inv(chol(W)), error = function(e) NULL)
  if (!is.null(inv) && all(is.finite(inv))) return(inv)
  e <- eigen(W, symmetric = TRUE)
  v <- pmax(e$values, max(e$values) * 1e-14, .Machine$double.xmin)
  e$vectors %*% (t(e$vectors) / v)
}

# An upper triangular U with U'U = W: the Cholesky factor, or, when W is
# numerically singular, the R of a QR decomposition of the eigen-based
# square root with eigenvalues floored as in sym_inverse().
chol_upper <- function(W) {
  W <- (W + t(W)) / 2
  U <- tryCatch(chol(W), error = function(e) NULL)
  if (!is.null(U) && all(is.finite(U))) return(U)
  e <- eigen(W, symmetric = TRUE)
  v <- pmax(e$values, max(e$values) * 1e-14, .Machine$double.xmin)
  qr.R(qr(sqrt(v) * t(e$vectors), tol = 0)) # tol = 0: no column pivoting
}
