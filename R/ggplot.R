# autoplot() methods for ggplot2 users (ggplot2 is in Suggests): the same
# figures as plot(), as ggplot objects that can be themed and faceted.
# Registered through NAMESPACE (`S3method(ggplot2::autoplot, ...)`, R's
# delayed registration for a generic of a package that may not be
# installed), so no .onLoad hook is needed.

#' ggplot2 figures of a topic model
#'
#' With ggplot2 installed, `ggplot2::autoplot(fit)` draws what
#' [plot()][plot.sparsevi_lda] draws, as a ggplot object you can theme,
#' facet and add layers to: the training trace, the top words of topics,
#' documents' topic proportions, or the choice of K.
#'
#' @param object A `sparsevi_lda`.
#' @param type,topics,n,newdata,docs,n_topics As in
#'   [plot()][plot.sparsevi_lda].
#' @param ... Unused.
#' @returns A `ggplot` object.
#' @examples
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#'   fit <- fit_lda(sim$dtm, K = 3, passes = 4, seed = 1, progress = FALSE)
#'   ggplot2::autoplot(fit)
#'   ggplot2::autoplot(fit, type = "words", n = 5)
#'   ggplot2::autoplot(fit, type = "documents", docs = 1:5)
#' }
#' @exportS3Method ggplot2::autoplot
autoplot.sparsevi_lda <- function(object, type = c("trace", "words", "documents", "select"),
                                  topics = NULL, n = 10, newdata = NULL, docs = NULL,
                                  n_topics = 6, ...) {
  check_ggplot2()
  type <- check_choice(type, c("trace", "words", "documents", "select"), "type")
  switch(type,
         trace = lda_gg_trace(object),
         words = lda_gg_words(object, topics, n),
         documents = lda_gg_documents(object, newdata, docs, n_topics),
         select = lda_gg_select(object))
}

check_ggplot2 <- function(call = caller_call()) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    abort("autoplot() needs the ggplot2 package: install.packages(\"ggplot2\"), or use plot().",
          "dependency", call = call)
  }
  invisible(TRUE)
}

lda_gg_trace <- function(x) {
  tr <- x$trace
  has_obj <- any(!is.na(tr$objective))
  has_ho <- any(!is.na(tr$heldout))
  if (!has_obj && !has_ho) {
    d <- data.frame(lap = tr$lap, seconds = diff(c(0, tr$seconds)))
    return(ggplot2::ggplot(d, ggplot2::aes(lap, seconds)) +
             ggplot2::geom_col(fill = "grey55", width = 0.3) +
             ggplot2::scale_x_continuous(breaks = tr$lap) +
             ggplot2::labs(x = "lap", y = "seconds", title = "Training time per lap",
                           subtitle = sprintf("no objective (%s):\nfit with `heldout` to plot a held-out score per lap",
                                              lda_no_objective_reason(x))))
  }
  parts <- list(
    if (has_obj) data.frame(seconds = tr$seconds, value = tr$objective,
                            panel = "Training objective (ELBO)"),
    if (has_ho) data.frame(seconds = tr$seconds, value = tr$heldout,
                           panel = "Held-out log-lik per token"))
  d <- do.call(rbind, parts)
  d$panel <- factor(d$panel, unique(d$panel))
  ggplot2::ggplot(d, ggplot2::aes(seconds, value)) +
    ggplot2::geom_line() + ggplot2::geom_point() +
    ggplot2::facet_wrap(~panel, scales = "free_y") +
    ggplot2::labs(x = "seconds", y = NULL)
}

lda_gg_words <- function(x, topics, n) {
  share <- lda_topic_share(x)
  if (is.null(topics)) topics <- lda_words_default_topics(share)
  if (!is.numeric(topics) || !length(topics) || anyNA(topics) ||
      any(topics < 1 | topics > x$K | topics != round(topics))) {
    abort(sprintf("`topics` must be topic numbers between 1 and %d.", x$K), "argument")
  }
  n <- check_count(n, "n", min = 1, max = length(x$vocab))
  panels <- lda_words_panels(x, unique(as.integer(topics)), n, share)
  d <- do.call(rbind, lapply(panels, function(p) {
    data.frame(panel = sprintf("topic %d (%.1f%%)", p$topic, 100 * share[p$topic]),
               word = p$words, p = p$p,
               # a word may be top in several topics: one level per panel
               key = paste(p$words, p$topic, sep = "\r"),
               rank = seq_along(p$words))
  }))
  d$panel <- factor(d$panel, unique(d$panel))
  d$key <- factor(d$key, rev(unique(d$key)))
  ggplot2::ggplot(d, ggplot2::aes(p, key)) +
    ggplot2::geom_col(fill = "steelblue") +
    ggplot2::facet_wrap(~panel, scales = "free_y") +
    ggplot2::scale_y_discrete(labels = function(k) sub("\r.*$", "", k)) +
    ggplot2::labs(x = "probability of the word in the topic", y = NULL,
                  title = "Top words (share of the tokens)")
}

lda_gg_documents <- function(x, newdata, docs, n_topics) {
  dd <- lda_documents_data(x, newdata, docs, n_topics)
  m <- dd$m
  d <- data.frame(document = rep(dd$labels, each = nrow(m)),
                  topic = rep(dd$leg, times = ncol(m)),
                  proportion = as.vector(m))
  d$document <- factor(d$document, rev(unique(dd$labels)))
  d$topic <- factor(d$topic, dd$leg)
  ggplot2::ggplot(d, ggplot2::aes(proportion, document, fill = topic)) +
    ggplot2::geom_col(position = ggplot2::position_stack(reverse = TRUE)) +
    ggplot2::scale_fill_manual(values = stats::setNames(dd$cols, dd$leg)) +
    ggplot2::labs(x = "topic proportion", y = NULL, fill = "topic: top words",
                  title = dd$main)
}

lda_gg_select <- function(x) {
  sel <- x$select
  if (is.null(sel)) {
    abort("`type = \"select\"` plots the choice of K: fit with several K, e.g. `fit_lda(x, K = c(10, 20, 40))`.",
          "argument")
  }
  panels <- c("Held-out (validation)", "Coherence (mean UMass)",
              "Training seconds")
  d <- data.frame(K = rep(sel$K, 3), value = c(sel$heldout, sel$coherence, sel$seconds),
                  panel = factor(rep(panels, each = nrow(sel)), panels),
                  chosen = rep(sel$chosen, 3))
  edge <- select_edge(sel)
  ggplot2::ggplot(d, ggplot2::aes(K, value)) +
    ggplot2::geom_line() + ggplot2::geom_point() +
    ggplot2::geom_point(data = d[d$chosen, ], shape = 1, size = 5, stroke = 1.2,
                        colour = "firebrick") +
    ggplot2::facet_wrap(~panel, scales = "free_y") +
    ggplot2::labs(x = "number of topics K", y = NULL,
                  title = sprintf("K = %d chosen", sel$K[sel$chosen]),
                  subtitle = if (!is.null(edge)) sprintf("at the grid's %s edge: widen the grid",
                                                         if (sel$K[sel$chosen] == max(sel$K)) "upper" else "lower"))
}

#' ggplot2 figures of a mixture or Fast-VDP fit
#'
#' With ggplot2 installed, `ggplot2::autoplot(fit, X)` draws a figure of
#' [plot()][plot.sparsevi_mixture] as a ggplot object you can theme, facet
#' and add layers to, from the same data: the clusters in the data's own
#' variables (a facet per pair of variables for more than two), the
#' uncertainty of each point's component (the points sized and shaded by
#' it; plot() adds the sorted profile beside them), the components on the
#' first two principal axes, the BIC against K, or the training trace (for
#' a Fast-VDP fit, the free energy and the number of components against
#' the step).
#'
#' @param object A `sparsevi_mixture` or `sparsevi_vdp` fit.
#' @param X Data of the fitted form (the training data, or new points), for
#'   `"clusters"` and `"uncertainty"`; optional for `"components"`.
#' @param type One figure: `"clusters"` (the default with `X`),
#'   `"uncertainty"`, `"components"` (not for Fast-VDP fits), `"bic"` (a
#'   mixture fit that chose by BIC; the default without `X` for those) or
#'   `"trace"` (the default without `X`).
#' @param vars Variables to draw, as in [plot()][plot.sparsevi_mixture].
#' @param ... Unused.
#' @returns A `ggplot` object.
#' @examples
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   fit <- fit_mixture(iris[, 1:4], K = 3, seed = 1, progress = FALSE)
#'   ggplot2::autoplot(fit, iris[, 1:4])
#'   ggplot2::autoplot(fit, iris[, 1:4], type = "uncertainty",
#'                     vars = c("Petal.Length", "Petal.Width"))
#'   sim <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
#'   vfit <- fit_vdp(sim$X, seed = 1, threads = 1)
#'   ggplot2::autoplot(vfit, sim$X)
#'   ggplot2::autoplot(vfit, type = "trace")
#' }
#' @exportS3Method ggplot2::autoplot
autoplot.sparsevi_mixture <- function(object, X = NULL, type = NULL, vars = NULL, ...) {
  check_ggplot2()
  numeric_data <- !is.null(object$means) && object$hyper$D >= 2L
  if (is.null(type)) {
    type <- if (!is.null(X) && numeric_data) "clusters" else
      if (!is.null(object$bic)) "bic" else "trace"
  }
  type <- check_choice(type, c("clusters", "uncertainty", "components", "bic", "trace"),
                       "type")
  type <- mix_plot_which(object, X, type, numeric_data)
  if (!length(type)) {
    abort("`type = \"components\"` needs numeric data with at least two columns.", "argument")
  }
  switch(type,
         trace = mix_gg_trace(mix_trace_data(object)),
         bic = mix_gg_bic(object$bic),
         clusters = mix_gg_clusters(mix_plot_data(object, X, vars, uncertainty = FALSE)),
         uncertainty = mix_gg_uncertainty(mix_plot_data(object, X, vars)),
         components = mix_gg_components(if (is.null(X)) mix_plot_components(object)
                                        else mix_plot_data(object, X, uncertainty = FALSE)))
}

#' @rdname autoplot.sparsevi_mixture
#' @exportS3Method ggplot2::autoplot
autoplot.sparsevi_vdp <- function(object, X = NULL, type = NULL, vars = NULL, ...) {
  check_ggplot2()
  if (is.null(type)) type <- if (!is.null(X) && object$dim >= 2L) "clusters" else "trace"
  type <- check_choice(type, c("clusters", "uncertainty", "trace"), "type")
  type <- vdp_plot_which(object, X, type)
  switch(type,
         trace = vdp_gg_trace(vdp_trace_data(object)),
         clusters = mix_gg_clusters(mix_plot_data(object, X, vars, uncertainty = FALSE)),
         uncertainty = mix_gg_uncertainty(mix_plot_data(object, X, vars)))
}

# integer breaks for ggplot2 scales (counts, laps)
gg_int_breaks <- function(lim) int_breaks(lim)

# breaks of a facet that may hold counts: whole numbers where pretty ones
# are not (a range of a few units), else the pretty ones
gg_count_breaks <- function(lim) {
  b <- pretty(lim)
  if (all(b == round(b))) return(b)
  ints <- seq(ceiling(lim[1]), floor(lim[2]))
  if (length(ints) >= 2L && length(ints) <= 10L) ints else b
}

# the points, means and 2-sd ellipses of d, one facet per pair of `vars`
# (lower triangle) when there are more than two
mix_gg_clusters <- function(d) {
  v <- d$vars
  pairs <- if (length(v) == 2L) matrix(v, 1L) else {
    g <- expand.grid(j = seq_along(v), i = seq_along(v))
    g <- g[g$i > g$j, ]
    cbind(v[g$j], v[g$i])
  }
  lab <- function(x) factor(d$names[x], d$names[v])
  comp_lab <- c(d$labels, "tail")
  cl <- ifelse(is.na(d$cluster), d$K + 1L, d$cluster)
  pts <- ell <- mns <- list()
  for (r in seq_len(nrow(pairs))) {
    a <- pairs[r, 1]
    b <- pairs[r, 2]
    pts[[r]] <- data.frame(xvar = lab(a), yvar = lab(b), x = d$X[, a], y = d$X[, b],
                           component = comp_lab[cl])
    e <- mix_ellipses(d, a, b)
    ell[[r]] <- do.call(rbind, lapply(which(d$used), function(k) {
      data.frame(xvar = lab(a), yvar = lab(b), x = e[[k]][, 1], y = e[[k]][, 2],
                 component = comp_lab[k])
    }))
    mns[[r]] <- data.frame(xvar = lab(a), yvar = lab(b), x = d$means[d$used, a],
                           y = d$means[d$used, b])
  }
  pts <- do.call(rbind, pts)
  ell <- do.call(rbind, ell)
  mns <- do.call(rbind, mns)
  lev <- c(d$labels[d$used], if (any(is.na(d$cluster))) "tail")
  pts$component <- factor(pts$component, lev)
  ell$component <- factor(ell$component, lev)
  cols <- stats::setNames(c(d$cols, "grey40")[match(lev, comp_lab)], lev)
  p <- ggplot2::ggplot(pts, ggplot2::aes(x, y, colour = component)) +
    ggplot2::geom_point(alpha = 0.7, size = if (nrow(d$X) <= 500L) 1.6 else 0.8) +
    ggplot2::geom_path(data = ell, linewidth = 0.9) +
    ggplot2::geom_point(data = mns, colour = "black", shape = 3, size = 4, stroke = 1.4) +
    ggplot2::scale_colour_manual(values = cols) +
    ggplot2::labs(colour = "component (weight)", title = "Clusters")
  if (length(v) == 2L) {
    p + ggplot2::labs(x = d$names[v[1]], y = d$names[v[2]])
  } else {
    p + ggplot2::facet_grid(yvar ~ xvar, scales = "free") +
      ggplot2::labs(x = NULL, y = NULL)
  }
}

# the points in the two `uvars`, sized and shaded by uncertainty
mix_gg_uncertainty <- function(d) {
  a <- d$uvars[1]
  b <- d$uvars[2]
  comp_lab <- c(d$labels, "tail")
  cl <- ifelse(is.na(d$cluster), d$K + 1L, d$cluster)
  lev <- c(d$labels[d$used], if (any(is.na(d$cluster))) "tail")
  pts <- data.frame(x = d$X[, a], y = d$X[, b], uncertainty = d$uncertainty,
                    component = factor(comp_lab[cl], lev))
  pts <- pts[order(pts$uncertainty), ] # the most uncertain on top
  cols <- stats::setNames(c(d$cols, "grey40")[match(lev, comp_lab)], lev)
  ggplot2::ggplot(pts, ggplot2::aes(x, y, colour = component, size = uncertainty,
                                    alpha = uncertainty)) +
    ggplot2::geom_point() +
    ggplot2::scale_colour_manual(values = cols) +
    ggplot2::scale_size_continuous(range = c(0.6, 4)) +
    ggplot2::scale_alpha_continuous(range = c(0.3, 0.95)) +
    ggplot2::labs(x = d$names[a], y = d$names[b], colour = "component (weight)",
                  size = "uncertainty", alpha = "uncertainty",
                  title = "Uncertainty of the clustering",
                  subtitle = "1 - largest responsibility: larger and darker, less sure")
}

mix_gg_components <- function(d) {
  pc <- mix_components_data(d)
  lev <- d$labels[d$used]
  ell <- do.call(rbind, lapply(which(d$used), function(k) {
    data.frame(x = pc$ellipses[[k]][, 1], y = pc$ellipses[[k]][, 2], component = d$labels[k])
  }))
  ell$component <- factor(ell$component, lev)
  cols <- stats::setNames(d$cols[d$used], lev)
  p <- ggplot2::ggplot(ell, ggplot2::aes(x, y, colour = component))
  if (!is.null(pc$points)) {
    ok <- !is.na(d$cluster)
    pts <- data.frame(x = pc$points[ok, 1], y = pc$points[ok, 2],
                      component = factor(d$labels[d$cluster[ok]], lev))
    p <- p + ggplot2::geom_point(data = pts, alpha = 0.6,
                                 size = if (nrow(pts) <= 500L) 1.6 else 0.8)
  }
  p + ggplot2::geom_path(linewidth = 0.9) +
    ggplot2::geom_point(data = data.frame(x = pc$M[d$used, 1], y = pc$M[d$used, 2]),
                        colour = "black", shape = 3, size = 4, stroke = 1.4) +
    ggplot2::scale_colour_manual(values = cols) +
    ggplot2::labs(x = "PC1", y = "PC2", colour = "component (weight)", title = "Components")
}

mix_gg_bic <- function(tab) {
  d <- data.frame(K = tab$K, BIC = tab$BIC, converged = tab$converged,
                  covariance = if (is.null(tab$covariance)) "BIC" else tab$covariance)
  d <- d[is.finite(d$BIC), ]
  best <- d[which.min(d$BIC), ]
  ggplot2::ggplot(d, ggplot2::aes(K, BIC, colour = covariance)) +
    ggplot2::geom_line(linewidth = 0.9) +
    ggplot2::geom_point(ggplot2::aes(shape = converged), size = 2.5, stroke = 1) +
    ggplot2::geom_point(data = best, shape = 1, size = 7, stroke = 1, colour = "black") +
    ggplot2::scale_shape_manual(values = c(`TRUE` = 19, `FALSE` = 1)) +
    ggplot2::scale_colour_manual(values = mix_colours(max(2L, length(unique(d$covariance))))) +
    ggplot2::scale_x_continuous(breaks = sort(unique(d$K))) +
    ggplot2::labs(x = "K", y = "BIC (lower is better)", title = "BIC against K",
                  colour = NULL, shape = "converged")
}

mix_gg_trace <- function(td) {
  ggplot2::ggplot(data.frame(lap = td$lap, value = td$value), ggplot2::aes(lap, value)) +
    ggplot2::geom_line() + ggplot2::geom_point() +
    ggplot2::scale_x_continuous(breaks = gg_int_breaks) +
    ggplot2::labs(x = "lap", y = td$ylab, title = "Training trace")
}

vdp_gg_trace <- function(td) {
  panels <- c("free energy", "components (T)")
  d <- data.frame(step = rep(td$step, 2), value = c(td$free_energy, td$T),
                  panel = factor(rep(panels, each = length(td$step)), panels))
  ggplot2::ggplot(d, ggplot2::aes(step, value)) +
    ggplot2::geom_line(data = d[d$panel == panels[1], ]) +
    ggplot2::geom_point(data = d[d$panel == panels[1], ]) +
    ggplot2::geom_step(data = d[d$panel == panels[2], ], linewidth = 0.9) +
    ggplot2::facet_wrap(~panel, scales = "free_y") +
    ggplot2::scale_x_continuous(breaks = gg_int_breaks) +
    # whole numbers on both panels (T is a count), unless a range is tiny
    ggplot2::scale_y_continuous(breaks = gg_count_breaks) +
    ggplot2::labs(x = "step", y = NULL, title = "Course of the fit")
}

# the columns the aesthetics above name (for R CMD check)
utils::globalVariables(c("lap", "seconds", "value", "p", "key", "proportion", "document",
                         "topic", "K", "x", "y", "component", "uncertainty", "BIC",
                         "covariance", "converged", "step"))
