# Plot helpers of topic models (base graphics only): top words per topic and
# document-topic proportions. plot.sparsevi_lda() in R/lda-methods.R dispatches here.

# Top `n` words of each of `topics`, one horizontal bar chart per topic; by
# default the six largest topics by share of the tokens, largest first, each
# titled with its share.
lda_plot_words <- function(x, topics = NULL, n = 10, ...) {
  K <- x$K
  share <- lda_topic_share(x)
  if (is.null(topics)) topics <- lda_words_default_topics(share)
  if (!is.numeric(topics) || !length(topics) || anyNA(topics) ||
      any(topics < 1 | topics > K | topics != round(topics))) {
    abort(sprintf("`topics` must be topic numbers between 1 and %d.", K), "argument")
  }
  topics <- unique(as.integer(topics))
  n <- check_count(n, "n", min = 1, max = length(x$vocab))
  nt <- length(topics)
  ncol <- min(nt, 3L)
  nrow <- ceiling(nt / ncol)
  op <- graphics::par(mfrow = c(nrow, ncol), mar = c(4, 7, 2, 1), cex = 0.8)
  on.exit(graphics::par(op))
  for (panel in lda_words_panels(x, topics, n, share)) {
    graphics::barplot(rev(panel$p), names.arg = rev(panel$words), horiz = TRUE, las = 1,
                      col = "steelblue", border = NA, main = panel$main,
                      xlab = panel$xlab, ...)
  }
  invisible(x)
}

# The topics lda_plot_words() draws by default: the six largest by share of
# the tokens, largest first.
lda_words_default_topics <- function(share) order(-share)[seq_len(min(6L, length(share)))]

# The panels of lda_plot_words(), in drawing order: each topic's top words,
# their probabilities, title and axis label.
lda_words_panels <- function(x, topics, n, share) {
  tw <- x$topic_word # built when read: once
  lapply(topics, function(k) {
    p <- tw[k, ]
    o <- order(-p)[seq_len(n)]
    list(topic = k, p = p[o], words = x$vocab[o],
         main = sprintf("topic %d (%.1f%% of tokens)", k, 100 * share[k]),
         xlab = "probability of the word in the topic")
  })
}

# Topic proportions of the documents `docs` of `newdata` (inferred), or of
# the training documents (kept on the fit) when `newdata` is NULL, one
# stacked bar per document; the `n_topics` most used topics have their own
# colour, the rest is grey ("other").
lda_plot_documents <- function(x, newdata = NULL, docs = NULL, n_topics = 6, ...) {
  d <- lda_documents_data(x, newdata, docs, n_topics)
  # the title over the whole figure (bars and legend), the legend in a panel
  # of its own with keys as large as its text
  op <- graphics::par(mar = c(4, 7, 1, 1), oma = c(0, 0, 2, 0), xpd = TRUE)
  on.exit(graphics::par(op))
  graphics::layout(matrix(1:2, 1), widths = c(3, 2))
  on.exit(graphics::layout(1), add = TRUE)
  graphics::barplot(d$m, names.arg = d$labels, horiz = TRUE, las = 1, col = d$cols,
                    border = "white", xlab = "topic proportion", xlim = c(0, 1), ...)
  graphics::mtext(d$main, side = 3, outer = TRUE, font = 2, cex = 1.1, line = 0.5)
  graphics::par(mar = c(0, 0, 0, 0))
  graphics::plot.new()
  graphics::legend("left", legend = d$leg, fill = d$cols, border = NA, bty = "n",
                   cex = 0.95, y.intersp = 1.4, title = "topic: top words", title.adj = 0)
  invisible(x)
}

# What plot(type = "documents") and autoplot() draw: `m`, the proportions
# (one row per coloured topic, then "other"; one column per document), the
# documents' `labels`, each row's legend `leg` and colour `cols`, and `main`.
lda_documents_data <- function(x, newdata = NULL, docs = NULL, n_topics = 6) {
  training <- is.null(newdata)
  if (training && is.null(x$doc_topic)) {
    abort("`type = \"documents\"` without `newdata` draws the training documents' proportions, which this fit does not keep (`doc_topics = 0`): give `newdata`, the documents to show.",
          "argument")
  }
  if (!training) newdata <- as_dtm_arg(newdata, "newdata")
  D <- if (training) nrow(x$doc_topic) else nrow(newdata)
  doc_names <- if (training) rownames(x$doc_topic) else newdata$doc_names
  where <- if (training) "the training documents" else "`newdata`"
  if (is.null(docs)) docs <- seq_len(min(D, 8L))
  if (is.character(docs)) {
    idx <- match(docs, doc_names)
    if (anyNA(idx)) {
      abort(sprintf("`docs`: document(s) %s not found in %s.",
                    paste0('"', docs[is.na(idx)], '"', collapse = ", "), where), "argument")
    }
    docs <- idx
  }
  if (!is.numeric(docs) || !length(docs) || anyNA(docs) ||
      any(docs < 1 | docs > D | docs != round(docs))) {
    abort(sprintf("`docs` must be document numbers between 1 and %d, or document names.",
                  D), "argument")
  }
  n_topics <- min(check_count(n_topics, "n_topics", min = 1), x$K)
  theta <- if (training) as.matrix(x$doc_topic[as.integer(docs), , drop = FALSE])
           else predict(x, newdata[as.integer(docs), ], type = "topics")
  kept <- lda_doc_topics_kept(x)
  main <- if (!training) "Document-topic proportions" else if (kept < x$K)
    sprintf("Training documents (top %d of %d topics kept)", kept, x$K) else
    "Training documents' topic proportions"
  labels <- rownames(theta)
  if (is.null(labels)) labels <- as.character(docs)
  keep <- order(-colSums(theta))[seq_len(n_topics)]
  keep <- sort(keep)
  m <- t(theta[, keep, drop = FALSE])
  if (n_topics < x$K) m <- rbind(m, other = pmax(1 - colSums(m), 0))
  tt <- terms(x, 3)
  leg <- sprintf("%d: %s", keep, apply(tt[, keep, drop = FALSE], 2L, paste, collapse = " "))
  cols <- lda_topic_colours(length(keep))
  if (n_topics < x$K) {
    leg <- c(leg, "other topics")
    cols <- c(cols, "grey85")
  }
  list(m = m, labels = labels, leg = leg, cols = cols, main = main)
}

# n colours that differ at a glance: the Okabe-Ito palette (distinct in hue
# and lightness, and for readers with colour-blindness) without its black
# and grey, for up to 7 topics; more take the hues of "Dark 3".
lda_topic_colours <- function(n) {
  oi <- grDevices::palette.colors(9L, "Okabe-Ito")[c(2:8)]
  if (n <= length(oi)) unname(oi[seq_len(n)]) else grDevices::hcl.colors(n, "Dark 3")
}

# ---- mixtures and Fast-VDP fits: the data of every figure -------------------
# Each figure's data is computed once here, for plot() (base graphics,
# drawn below) and autoplot() (R/ggplot.R) alike.

# One colour per component, the same in every panel of a mixture's plot.
mix_colours <- function(K) grDevices::hcl.colors(max(K, 2L), "Dark 3")[seq_len(K)]

# Which columns of the data to draw: names or numbers (two or more). The
# default: every column up to six; beyond, the five along which the
# components' means are most spread relative to their spread within
# components (weighted between-component over within-component variance).
mix_plot_vars <- function(vars, names, D, means = NULL, covs = NULL, weights = NULL,
                          call = caller_call(), top = 5L) {
  if (D < 2L) {
    abort("A clusters plot needs data with at least two columns.", "argument", call = call)
  }
  if (is.null(vars)) {
    if (D <= top || is.null(means)) return(seq_len(min(D, top)))
    if (D <= 6L && top == 5L) return(seq_len(D))
    w <- weights / sum(weights)
    mu <- colSums(w * means)
    between <- colSums(w * sweep(means, 2L, mu)^2)
    within <- if (is.null(covs)) rep(1, D) else
      colSums(w * t(apply(covs, 3L, diag)))
    return(sort(order(-between / pmax(within, .Machine$double.xmin))[seq_len(top)]))
  }
  idx <- if (is.character(vars)) match(vars, names) else vars
  if (length(idx) < 2L || anyNA(idx) || !is.numeric(idx) || any(idx != round(idx)) ||
      any(idx < 1 | idx > D) || anyDuplicated(idx)) {
    abort(sprintf("`vars` must name or number two or more different columns of the data (%s).",
                  if (is.null(names)) sprintf("1 to %d", D)
                  else paste0('"', names, '"', collapse = ", ")),
          "argument", call = call)
  }
  as.integer(idx)
}

# The fitted components of a mixture or Fast-VDP fit as the plots use them:
# means (K x D, original scale), covariances (D x D x K; diagonal ones
# expanded), weights, the components drawn (weight >= 1e-3), their colours
# and legend labels, and the variables' names.
mix_plot_components <- function(x) {
  vdp <- inherits(x, "sparsevi_vdp")
  means <- x$means
  K <- nrow(means)
  D <- ncol(means)
  covs <- if (!is.null(x$covariances)) x$covariances else
    array(apply(x$variances, 1L, function(v) diag(v, D)), c(D, D, K))
  nm <- colnames(means)
  if (is.null(nm)) nm <- paste0("V", seq_len(D))
  used <- x$weights >= 1e-3
  list(means = unname(means), covs = covs, weights = unname(x$weights), used = used,
       cols = mix_colours(K), names = nm, K = K, D = D,
       labels = sprintf("%d (%.2f)", seq_len(K), x$weights), vdp = vdp)
}

# The points of `X` (original scale, the fitted columns) with their most
# responsible component (`NA`: a VDP fit's infinite tail) and uncertainty
# (1 - the largest responsibility, as mclust's; with `uncertainty`, which
# costs the N x K responsibilities), and the variables `vars`
# to draw (`vars`; `uvars`, the two of the uncertainty figure). What the "clusters", "components" and "uncertainty" figures of
# plot() and autoplot() draw.
mix_plot_data <- function(x, X, vars = NULL, uncertainty = TRUE, call = caller_call()) {
  comp <- mix_plot_components(x)
  if (is.null(X)) {
    abort("This figure draws data: give `X`, the training data or new points.", "argument",
          call = call)
  }
  if (comp$vdp) {
    Xo <- vdp_newdata(x, X, call = call)
  } else {
    nd <- mix_newdata(X, mix_fit_data(x), "X")
    Xo <- nd$data + rep(x$center, each = nd$N)
  }
  Xo <- unname(as.matrix(Xo))
  u <- NULL
  if (uncertainty) {
    R <- predict(x, X, type = "responsibilities")
    best <- max.col(R, ties.method = "first")
    u <- 1 - R[cbind(seq_len(nrow(R)), best)]
    rm(R)
    cluster <- best
    cluster[best > comp$K] <- NA_integer_ # the VDP tail
  } else {
    cluster <- predict(x, X) # without the N x K responsibilities
  }
  v <- mix_plot_vars(vars, comp$names, comp$D, comp$means, comp$covs, comp$weights,
                     call = call)
  # the uncertainty figure's two: the first two given, else the two that
  # separate the components most
  uv <- if (is.null(vars)) {
    mix_plot_vars(NULL, comp$names, comp$D, comp$means, comp$covs, comp$weights, top = 2L)
  } else v[1:2]
  c(comp, list(X = Xo, cluster = cluster,
               uncertainty = u, vars = v, uvars = uv))
}

# The ellipse of two standard deviations of a 2 x 2 covariance `C` about
# `mu` (60 points, closed).
mix_ellipse <- function(mu, C) {
  th <- seq(0, 2 * pi, length.out = 60)
  e <- eigen((C + t(C)) / 2, symmetric = TRUE)
  circ <- cbind(cos(th), sin(th)) %*% (t(e$vectors) * (2 * sqrt(pmax(e$values, 0))))
  sweep(circ, 2L, mu, `+`)
}

# The ellipses of the components drawn, in variables a and b: a list, NULL
# for the components not drawn.
mix_ellipses <- function(d, a, b) {
  lapply(seq_len(d$K), function(k) {
    if (!d$used[k]) return(NULL)
    mix_ellipse(d$means[k, c(a, b)], d$covs[c(a, b), c(a, b), k])
  })
}

# The components projected on the first two principal axes of the fitted
# mixture (its total covariance), with the points of `d$X` when given.
mix_components_data <- function(d) {
  w <- d$weights / sum(d$weights)
  mu <- colSums(w * d$means)
  tot <- matrix(0, d$D, d$D)
  for (k in seq_len(d$K)) tot <- tot + w[k] * (d$covs[, , k] + tcrossprod(d$means[k, ] - mu))
  P <- eigen(tot, symmetric = TRUE)$vectors[, 1:2, drop = FALSE]
  M <- sweep(d$means, 2L, mu) %*% P
  ell <- lapply(seq_len(d$K), function(k) {
    if (!d$used[k]) return(NULL)
    mix_ellipse(M[k, ], crossprod(P, d$covs[, , k] %*% P))
  })
  pts <- if (is.null(d$X)) NULL else sweep(d$X, 2L, mu) %*% P
  list(M = M, ellipses = ell, points = pts)
}

# The training trace as plotted: the objective (ELBO), or else the
# held-out log-likelihood, against the lap; `flat` when it shows little
# (at most two laps, or a total change below 0.01% of the objective: a
# fit from a good start), when the default figure leaves it out.
mix_trace_data <- function(x) {
  tr <- x$trace
  use_obj <- any(!is.na(tr$objective))
  y <- if (use_obj) tr$objective else tr$heldout
  ok <- is.finite(y)
  flat <- sum(ok) <= 2L ||
    diff(range(y[ok])) <= 1e-4 * max(1, abs(y[ok][sum(ok)]))
  list(lap = tr$lap, value = if (any(ok)) y else rep(NA_real_, length(y)),
       ylab = if (use_obj) "objective (ELBO)" else "held-out log-likelihood",
       flat = flat)
}

# A Fast-VDP fit's course: free energy and number of components T against
# the step of the fit.
vdp_trace_data <- function(x) {
  tr <- x$trace
  list(step = tr$lap, free_energy = tr$free_energy, T = tr$T)
}

# Integer tick marks over `lim` (for counts and laps).
int_breaks <- function(lim, n = 5) {
  b <- pretty(lim, n)
  b <- unique(b[b == round(b)])
  if (length(b) < 2L) b <- unique(round(seq(lim[1], lim[2], length.out = 2)))
  b
}

# ---- mixtures and Fast-VDP fits: base graphics ------------------------------

# A legend in the right margin of the current panel (set by mix_legend_mar()).
mix_legend_right <- function(lg) {
  usr <- graphics::par("usr")
  graphics::legend(usr[2] + 0.02 * diff(usr[1:2]), usr[4], legend = lg$leg, col = lg$col,
                   pch = lg$pch, lwd = 2, lty = lg$lty, title = lg$title, title.adj = 0,
                   bty = "n", xpd = NA, cex = 0.85, y.intersp = 1.2)
}

# The same legend in a panel of its own (the last of a row of panels).
mix_legend_panel <- function(lg) {
  op <- graphics::par(mar = c(0, 0, 0, 0))
  on.exit(graphics::par(op))
  graphics::plot.new()
  graphics::legend("left", legend = lg$leg, col = lg$col, pch = lg$pch, lwd = 2,
                   lty = lg$lty, title = lg$title, title.adj = 0, bty = "n", xpd = NA,
                   cex = 0.95, y.intersp = 1.3)
}

# Lines of right margin that legend text `leg` (and `title`) needs.
mix_legend_mar <- function(leg, title = "") {
  w <- max(graphics::strwidth(c(leg, title), units = "inches", cex = 0.85))
  ceiling(w / graphics::par("csi") + 2.5)
}

# The points of d in variables a and b coloured by component (tail: grey
# crosses), each component's mean (a cross) and 2-sd ellipse.
mix_panel <- function(d, a, b, axes = TRUE, xlab = d$names[a], ylab = d$names[b],
                      main = "", cex = NULL, ...) {
  ok <- !is.na(d$cluster)
  if (is.null(cex)) cex <- if (nrow(d$X) <= 500L) 0.9 else if (nrow(d$X) <= 5000L) 0.6 else 0.35
  pts <- d$X[, c(a, b), drop = FALSE]
  ell <- mix_ellipses(d, a, b)
  allp <- rbind(pts, do.call(rbind, ell), d$means[d$used, c(a, b), drop = FALSE])
  graphics::plot(allp, type = "n", xlab = xlab, ylab = ylab, main = main, axes = axes, ...)
  if (!axes) graphics::box(col = "grey60")
  graphics::points(pts[ok, , drop = FALSE], pch = 19, cex = cex,
                   col = grDevices::adjustcolor(d$cols[d$cluster[ok]], 0.7))
  if (any(!ok)) graphics::points(pts[!ok, , drop = FALSE], pch = 4, cex = cex, col = "grey40")
  for (k in which(d$used)) graphics::lines(ell[[k]], col = d$cols[k], lwd = 2)
  graphics::points(d$means[d$used, c(a, b), drop = FALSE], pch = 3, cex = 1.6, lwd = 3)
}

# The components' key: a point and the ellipse's line in each colour (a
# grey cross for a VDP fit's tail).
mix_clusters_legend <- function(d) {
  tail <- any(is.na(d$cluster))
  list(leg = c(d$labels[d$used], if (tail) "tail"),
       col = c(d$cols[d$used], if (tail) "grey40"),
       pch = c(rep(19, sum(d$used)), if (tail) 4),
       lty = c(rep(1, sum(d$used)), if (tail) 0), title = "component (weight)")
}

# The clusters figure: two variables, one panel with the legend in its
# right margin; more, a pairs view (lower triangle, names on the diagonal,
# the legend in the upper right corner), on a page of its own.
plot_clusters <- function(d, main = "Clusters", legend = TRUE, ...) {
  lg <- mix_clusters_legend(d)
  vars <- d$vars
  if (length(vars) == 2L) {
    op <- graphics::par(mar = c(4.5, 4.5, 3, if (legend) mix_legend_mar(lg$leg, lg$title) else 1))
    on.exit(graphics::par(op))
    mix_panel(d, vars[1], vars[2], main = main, ...)
    if (legend) mix_legend_right(lg)
    return(invisible())
  }
  p <- length(vars)
  op <- graphics::par(mfrow = c(p, p), mar = c(0.3, 0.3, 0.3, 0.3), oma = c(3, 3.5, 3, 1))
  on.exit(graphics::par(op))
  # mfrow shrinks text for 3 or more rows; tick labels stay readable
  graphics::par(cex = 0.9, mgp = c(2, 0.5, 0), tcl = -0.3)
  for (i in seq_len(p)) {
    for (j in seq_len(p)) {
      if (i == j) {
        graphics::plot.new()
        graphics::box(col = "grey60")
        graphics::text(0.5, 0.5, d$names[vars[i]], cex = 1.1, font = 2)
      } else if (i > j) {
        mix_panel(d, vars[j], vars[i], axes = FALSE, xlab = "", ylab = "",
                  cex = if (nrow(d$X) <= 500L) 0.6 else 0.3, ...)
        if (i == p) graphics::axis(1, cex.axis = 0.85, at = mix_ticks(graphics::par("usr")[1:2]))
        if (j == 1L) graphics::axis(2, cex.axis = 0.85, las = 1, at = mix_ticks(graphics::par("usr")[3:4]))
      } else if (i == 1L && j == p) {
        graphics::plot.new()
        graphics::legend("topright", legend = lg$leg, col = lg$col, pch = lg$pch, bty = "n",
                         lty = lg$lty, lwd = 2, title = lg$title, cex = 1, xpd = NA)
      } else {
        graphics::plot.new()
      }
    }
  }
  graphics::mtext(main, side = 3, outer = TRUE, line = 1, font = 2, cex = 1.2)
  invisible()
}

# mclust's uncertainty plot: the points in the two `uvars`, larger
# and darker the less sure their component is (1 - largest
# responsibility), and beside it the sorted uncertainties of all points.
plot_uncertainty <- function(d, ...) {
  a <- d$uvars[1]
  b <- d$uvars[2]
  u <- d$uncertainty
  umax <- max(u, 0.01)
  ok <- !is.na(d$cluster)
  col <- rep("grey40", length(u))
  col[ok] <- d$cols[d$cluster[ok]]
  op <- graphics::par(mar = c(4.5, 4.5, 3, 1))
  on.exit(graphics::par(op))
  graphics::layout(matrix(1:2, 1), widths = c(3, 2))
  on.exit(graphics::layout(1), add = TRUE)
  o <- order(u) # the most uncertain points on top
  graphics::plot(d$X[, c(a, b)], type = "n", xlab = d$names[a], ylab = d$names[b],
                 main = "Uncertainty of the clustering", ...)
  graphics::points(d$X[o, a], d$X[o, b], pch = 19, cex = 0.4 + 2 * u[o] / umax,
                   col = mix_alpha(col[o], 0.25 + 0.7 * u[o] / umax))
  graphics::par(mar = c(4.5, 4, 3, 1))
  s <- sort(u, decreasing = TRUE)
  graphics::plot(seq_along(s), s, type = "l", col = "grey60", xlab = "point (sorted)",
                 ylab = "1 - largest responsibility", main = "Sorted",
                 ylim = c(0, umax), cex.lab = 0.9)
  graphics::points(seq_along(s), s, pch = 19, cex = 0.5, col = col[order(-u)])
  # the sizes' key where the sorted profile has fallen: off the data
  graphics::legend("topright", legend = sprintf("%.2g", umax * c(0.1, 0.5, 1)),
                   pt.cex = 0.4 + 2 * c(0.1, 0.5, 1), pch = 19, col = "grey30",
                   title = "point size", title.adj = 0, bty = "n", cex = 0.9,
                   y.intersp = 1.3, inset = c(0.04, 0))
  invisible()
}

# The components on the fitted mixture's first two principal axes.
plot_components <- function(d, legend = TRUE, ...) {
  pc <- mix_components_data(d)
  lg <- mix_clusters_legend(d)
  op <- graphics::par(mar = c(4.5, 4.5, 3, if (legend) mix_legend_mar(lg$leg, lg$title) else 1))
  on.exit(graphics::par(op))
  allp <- rbind(do.call(rbind, pc$ellipses), pc$points)
  graphics::plot(allp, type = "n", xlab = "PC1", ylab = "PC2", main = "Components", ...)
  if (!is.null(pc$points)) {
    ok <- !is.na(d$cluster)
    graphics::points(pc$points[ok, , drop = FALSE], pch = 19,
                     cex = if (nrow(pc$points) <= 500L) 0.9 else 0.5,
                     col = grDevices::adjustcolor(d$cols[d$cluster[ok]], 0.6))
  }
  for (k in which(d$used)) graphics::lines(pc$ellipses[[k]], col = d$cols[k], lwd = 2)
  graphics::points(pc$M[d$used, , drop = FALSE], pch = 3, cex = 1.6, lwd = 3)
  if (legend) mix_legend_right(lg)
  invisible()
}

# A mixture's training trace (integer laps).
plot_mix_trace <- function(td, ...) {
  graphics::plot(td$lap, td$value, type = "b", pch = 20, xlab = "lap", ylab = td$ylab,
                 main = "Training trace", xaxt = "n", ...)
  graphics::axis(1, at = int_breaks(range(td$lap)))
}

# A Fast-VDP fit's course, two panels: free energy and T (integer ticks).
plot_vdp_trace <- function(td, ...) {
  graphics::plot(td$step, td$free_energy, type = "b", pch = 20, xlab = "step",
                 ylab = "free energy", main = "Free energy", xaxt = "n", ...)
  graphics::axis(1, at = int_breaks(range(td$step)))
  graphics::plot(td$step, td$T, type = "s", lwd = 2, xlab = "step", ylab = "T",
                 main = "Components (T)", xaxt = "n", yaxt = "n", ...)
  graphics::axis(1, at = int_breaks(range(td$step)))
  graphics::axis(2, at = int_breaks(range(td$T)), las = 1)
}

# About four tick marks inside the range `lim` of a small pairs panel.
mix_ticks <- function(lim) {
  b <- pretty(lim, 3)
  b[b >= lim[1] & b <= lim[2]]
}

# Colours `col` with opacities `alpha` (one each).
mix_alpha <- function(col, alpha) {
  m <- grDevices::col2rgb(col) / 255
  grDevices::rgb(m[1, ], m[2, ], m[3, ], alpha)
}
