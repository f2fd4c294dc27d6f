# Plot helpers of topic models (base graphics only): top words per topic and
# document-topic proportions. plot.sparsevi_lda() in R/lda.R dispatches here.

# Top `n` words of each of `topics`, one horizontal bar chart per topic.
lda_plot_words <- function(x, topics = NULL, n = 10, ...) {
  K <- x$K
  if (is.null(topics)) {
    size <- lda_topic_sizes(x)
    topics <- sort(order(-size)[seq_len(min(6L, K))])
  }
  if (!is.numeric(topics) || !length(topics) || anyNA(topics) ||
      any(topics < 1 | topics > K | topics != round(topics))) {
    abort(sprintf("`topics` must be topic numbers between 1 and %d.", K), "argument")
  }
  topics <- unique(as.integer(topics))
  n <- check_count(n, "n", min = 1, max = length(x$vocab))
  nt <- length(topics)
  ncol <- min(nt, 3L)
  nrow <- ceiling(nt / ncol)
  op <- graphics::par(mfrow = c(nrow, ncol), mar = c(3, 7, 2, 1), cex = 0.8)
  on.exit(graphics::par(op))
  for (k in topics) {
    p <- x$topic_word[k, ]
    o <- order(-p)[seq_len(n)]
    graphics::barplot(rev(p[o]), names.arg = rev(x$vocab[o]), horiz = TRUE, las = 1,
                      col = "steelblue", border = NA, main = sprintf("topic %d", k),
                      xlab = "", ...)
  }
  invisible(x)
}

# Topic proportions of the documents `docs` of `newdata`, one stacked bar per
# document; the `n_topics` most used topics have their own colour, the rest
# is grey ("other").
lda_plot_documents <- function(x, newdata = NULL, docs = NULL, n_topics = 6, ...) {
  if (is.null(newdata)) {
    abort("`type = \"documents\"` needs `newdata`, the documents to show (e.g. `newdata = corpus[1:5, ]`).",
          "argument")
  }
  newdata <- as_dtm(newdata)
  D <- nrow(newdata)
  if (is.null(docs)) docs <- seq_len(min(D, 8L))
  if (is.character(docs)) {
    idx <- match(docs, newdata$doc_names)
    if (anyNA(idx)) {
      abort(sprintf("`docs`: document(s) %s not found in `newdata`.",
                    paste0('"', docs[is.na(idx)], '"', collapse = ", ")), "argument")
    }
    docs <- idx
  }
  if (!is.numeric(docs) || !length(docs) || anyNA(docs) ||
      any(docs < 1 | docs > D | docs != round(docs))) {
    abort(sprintf("`docs` must be document numbers between 1 and %d, or document names.",
                  D), "argument")
  }
  n_topics <- min(check_count(n_topics, "n_topics", min = 1), x$K)
  theta <- predict(x, newdata[as.integer(docs), ], type = "topics")
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
                    main = "Document-topic proportions", ...)
  graphics::par(mar = c(0, 0, 0, 0))
  graphics::plot.new()
  graphics::legend("center", legend = leg, fill = cols, border = NA, bty = "n",
                   cex = 0.8, title = "topic: top words")
  invisible(x)
}
