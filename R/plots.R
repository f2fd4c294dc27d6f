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
  if (!training) newdata <- as_dtm(newdata)
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

# ---- mixtures: the data in its own variables, coloured by cluster ---------

# One colour per component, the same in every panel of a mixture's plot.
mix_colours <- function(K) grDevices::hcl.colors(max(K, 2L), "Dark 3")[seq_len(K)]

# Which columns of the data to draw: names or numbers (two or more). The
# default: every column up to six; beyond, the five along which the
# components' means are most spread relative to their spread within
# components (weighted between-component over within-component variance).
mix_plot_vars <- function(vars, names, D, means = NULL, covs = NULL, weights = NULL,
                          call = caller_call()) {
  if (D < 2L) {
    abort("A clusters plot needs data with at least two columns.", "argument", call = call)
  }
  if (is.null(vars)) {
    if (D <= 6L || is.null(means)) return(seq_len(min(D, 6L)))
    w <- weights / sum(weights)
    mu <- colSums(w * means)
    between <- colSums(w * sweep(means, 2L, mu)^2)
    within <- if (is.null(covs)) rep(1, D) else
      colSums(w * t(apply(covs, 3L, diag)))
    return(sort(order(-between / pmax(within, .Machine$double.xmin))[1:5]))
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

# Points of X (original scale) coloured by `cluster` (NA: a VDP fit's
# infinite tail, grey crosses), with each component's mean (a cross) and
# the ellipse of two standard deviations of its covariance. Two variables:
# one panel with a legend; more: a pairs view (lower triangle, the
# variables' names on the diagonal, the legend above), on a page of its own.
plot_clusters <- function(X, cluster, means, covs, weights, vars, main, ...) {
  K <- nrow(means)
  cols <- mix_colours(K)
  nm <- colnames(X)
  if (is.null(nm)) nm <- paste0("V", seq_len(ncol(X)))
  used <- weights >= 1e-3
  cex <- if (nrow(X) <= 500L) 1 else if (nrow(X) <= 5000L) 0.7 else 0.4
  ok <- !is.na(cluster)
  pt_col <- grDevices::adjustcolor(cols[cluster[ok]], 0.7)
  th <- seq(0, 2 * pi, length.out = 60)
  panel <- function(a, b, axes = TRUE, xlab = nm[a], ylab = nm[b], main = "", ...) {
    v <- c(a, b)
    pts <- X[, v, drop = FALSE]
    ell <- lapply(seq_len(K), function(k) {
      if (is.null(covs) || !used[k]) return(NULL)
      C <- covs[v, v, k]
      e <- eigen((C + t(C)) / 2, symmetric = TRUE)
      circ <- cbind(cos(th), sin(th)) %*% (t(e$vectors) * (2 * sqrt(pmax(e$values, 0))))
      sweep(circ, 2L, means[k, v], `+`)
    })
    allp <- rbind(pts, do.call(rbind, ell), means[used, v, drop = FALSE])
    graphics::plot(allp, type = "n", xlab = xlab, ylab = ylab, main = main, axes = axes, ...)
    if (!axes) graphics::box(col = "grey60")
    graphics::points(pts[ok, , drop = FALSE], pch = 19, cex = cex, col = pt_col)
    if (any(!ok)) graphics::points(pts[!ok, , drop = FALSE], pch = 4, cex = cex, col = "grey40")
    for (k in which(used)) {
      if (!is.null(ell[[k]])) graphics::lines(ell[[k]], col = cols[k], lwd = 2)
    }
    graphics::points(means[used, v, drop = FALSE], pch = 3, cex = 1.6, lwd = 3)
  }
  leg <- sprintf("%d (%.2f)", which(used), weights[used])
  leg_col <- cols[used]
  if (any(!ok)) {
    leg <- c(leg, "tail")
    leg_col <- c(leg_col, "grey40")
  }
  if (length(vars) == 2L) {
    panel(vars[1], vars[2], main = main, ...)
    graphics::legend("topright", legend = leg, col = leg_col, pch = c(rep(19, sum(used)),
                     if (any(!ok)) 4), bg = grDevices::adjustcolor("white", 0.7),
                     title = "component (weight)", cex = 0.8)
    return(invisible())
  }
  p <- length(vars)
  op <- graphics::par(mfrow = c(p, p), mar = c(0.4, 0.4, 0.4, 0.4), oma = c(2, 2, 3, 2))
  on.exit(graphics::par(op))
  for (i in seq_len(p)) {
    for (j in seq_len(p)) {
      if (i == j) {
        graphics::plot.new()
        graphics::box(col = "grey60")
        graphics::text(0.5, 0.5, nm[vars[i]], cex = 1.2)
      } else if (i > j) {
        panel(vars[j], vars[i], axes = FALSE, xlab = "", ylab = "", ...)
        if (i == p) graphics::axis(1, cex.axis = 0.7)
        if (j == 1L) graphics::axis(2, cex.axis = 0.7)
      } else if (i == 1L && j == p) {
        graphics::plot.new()
        graphics::legend("center", legend = leg, col = leg_col,
                         pch = c(rep(19, sum(used)), if (any(!ok)) 4), bty = "n",
                         title = "component (weight)", cex = 1.1, pt.cex = 1.4)
      } else {
        graphics::plot.new()
      }
    }
  }
  graphics::mtext(main, side = 3, outer = TRUE, line = 1, font = 2)
  invisible()
}
