# Plot helpers of topic models (base graphics only): top words per topic and
# document-topic proportions. plot.sparsevi_lda() in R/lda.R dispatches here.

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
  lapply(topics, function(k) {
    p <- x$topic_word[k, ]
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
  cols <- grDevices::hcl.colors(length(keep), "Dark 3")
  if (n_topics < x$K) {
    leg <- c(leg, "other topics")
    cols <- c(cols, "grey85")
  }
  op <- graphics::par(mar = c(4, 7, 2, 1), xpd = TRUE)
  on.exit(graphics::par(op))
  graphics::layout(matrix(1:2, 1), widths = c(3, 2))
  on.exit(graphics::layout(1), add = TRUE)
  graphics::barplot(m, names.arg = labels, horiz = TRUE, las = 1, col = cols,
                    border = NA, xlab = "topic proportion", xlim = c(0, 1),
                    main = main, ...)
  graphics::par(mar = c(0, 0, 0, 0))
  graphics::plot.new()
  graphics::legend("center", legend = leg, fill = cols, border = NA, bty = "n",
                   cex = 0.8, title = "topic: top words")
  invisible(x)
}

# ---- mixtures: the data in its own variables, coloured by cluster ---------

# Which two columns of the data to draw: names or numbers, default the first
# two.
mix_plot_vars <- function(vars, names, D, call = caller_call()) {
  if (D < 2L) {
    abort("A clusters plot needs data with at least two columns.", "argument", call = call)
  }
  if (is.null(vars)) return(1:2)
  idx <- if (is.character(vars)) match(vars, names) else vars
  if (length(idx) != 2L || anyNA(idx) || !is.numeric(idx) || any(idx != round(idx)) ||
      any(idx < 1 | idx > D) || idx[1] == idx[2]) {
    abort(sprintf("`vars` must name or number two different columns of the data (%s).",
                  if (is.null(names)) sprintf("1 to %d", D)
                  else paste0('"', names, '"', collapse = ", ")),
          "argument", call = call)
  }
  as.integer(idx)
}

# Points of X (original scale) in the columns `vars`, coloured by `cluster`,
# with each component's mean (a cross) and, given its covariance on those
# columns, the ellipse of two standard deviations.
plot_clusters <- function(X, cluster, means, covs, weights, vars, main, ...) {
  K <- nrow(means)
  cols <- grDevices::hcl.colors(max(K, 2L), "Dark 3")
  nm <- colnames(X)
  if (is.null(nm)) nm <- paste0("V", seq_len(ncol(X)))
  pts <- X[, vars, drop = FALSE]
  th <- seq(0, 2 * pi, length.out = 60)
  ell <- lapply(seq_len(K), function(k) {
    if (is.null(covs) || weights[k] < 1e-3) return(NULL)
    C <- covs[vars, vars, k]
    e <- eigen((C + t(C)) / 2, symmetric = TRUE)
    circ <- cbind(cos(th), sin(th)) %*% (t(e$vectors) * (2 * sqrt(pmax(e$values, 0))))
    sweep(circ, 2L, means[k, vars], `+`)
  })
  allp <- rbind(pts, do.call(rbind, ell), means[, vars, drop = FALSE])
  graphics::plot(allp, type = "n", xlab = nm[vars[1]], ylab = nm[vars[2]], main = main, ...)
  ok <- !is.na(cluster)
  graphics::points(pts[ok, , drop = FALSE], pch = 20, cex = 0.6,
                   col = grDevices::adjustcolor(cols[(cluster[ok] - 1L) %% length(cols) + 1L],
                                                0.6))
  if (any(!ok)) graphics::points(pts[!ok, , drop = FALSE], pch = 4, cex = 0.6, col = "grey40")
  for (k in seq_len(K)) {
    if (!is.null(ell[[k]])) graphics::lines(ell[[k]], col = cols[(k - 1L) %% length(cols) + 1L],
                                            lwd = 2)
  }
  used <- weights >= 1e-3
  graphics::points(means[used, vars, drop = FALSE], pch = 3, cex = 1.5, lwd = 3)
  invisible()
}
