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

# the columns the aesthetics above name (for R CMD check)
utils::globalVariables(c("lap", "seconds", "value", "p", "key", "proportion", "document",
                         "topic", "K"))
