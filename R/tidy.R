# Long ("tidy") tables of fitted models, and the inputs LDAvis expects.
# Plain base R: no dependency on tidytext, dplyr or LDAvis.

#' A fitted model as a long (tidy) data frame
#'
#' For a topic model, `type = "topic_word"` gives one row per (topic, term):
#' the form `tidytext::tidy()` gives for other topic models, ready for
#' `merge()`, `aggregate()` or dplyr. `type = "doc_topic"` infers the topic
#' proportions of the documents in `newdata` (with [predict()]) and gives one
#' row per (document, topic).
#'
#' For a mixture, `type = "weights"` gives one row per component (`component`,
#' `weight`, `size`) and `type = "means"` one row per (component, variable)
#' (`component`, `variable`, `mean`).
#'
#' @param x A `sparsevi_lda` or `sparsevi_mixture` (including
#'   `sparsevi_vdp`) fit.
#' @param row.names,optional Unused; part of the generic's signature.
#' @param type For a topic model: `"topic_word"` (default) or
#'   `"doc_topic"`. For a mixture: `"weights"` (default) or `"means"`.
#' @param n For `"topic_word"`: `NULL` (default, every term) or the number of
#'   most probable terms kept per topic (1 to the vocabulary size).
#' @param newdata For `"doc_topic"`: the documents, anything [as_dtm()]
#'   accepts (required).
#' @param ... For `"doc_topic"`: passed to [predict.sparsevi_lda()]
#'   (`method`, `seed`, `threads`, controls).
#' @returns A data frame. `"topic_word"`: columns `topic` (integer), `term`
#'   (character) and `beta` (the probability of the term in the topic),
#'   sorted by topic and decreasing `beta`. `"doc_topic"`: columns
#'   `document` (document name, or its row number as text), `topic`
#'   (integer) and `gamma` (the topic's proportion in the document).
#'   `"weights"`: `component` (integer), `weight`, `size` (expected number
#'   of points). `"means"`: `component`, `variable` (column name) and `mean`.
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 1, progress = FALSE)
#' head(as.data.frame(fit, n = 5))
#' head(as.data.frame(fit, type = "doc_topic", newdata = sim$dtm[1:2, ]))
#' @export
as.data.frame.sparsevi_lda <- function(x, row.names = NULL, optional = FALSE, ...,
                                       type = c("topic_word", "doc_topic"), n = NULL,
                                       newdata = NULL) {
  type <- check_choice(type, c("topic_word", "doc_topic"), "type")
  if (type == "topic_word") {
    V <- length(x$vocab)
    n <- if (is.null(n)) V else check_count(n, "n", min = 1, max = V)
    tw <- x$topic_word
    rows <- lapply(seq_len(x$K), function(k) {
      o <- order(-tw[k, ])[seq_len(n)]
      data.frame(topic = k, term = x$vocab[o], beta = tw[k, o],
                 stringsAsFactors = FALSE)
    })
    out <- do.call(rbind, rows)
    rownames(out) <- NULL
    return(out)
  }
  if (is.null(newdata)) {
    abort("`type = \"doc_topic\"` needs `newdata`, the documents whose topic proportions to infer (e.g. the training corpus).",
          "argument")
  }
  theta <- predict(x, newdata, type = "topics", ...)
  D <- nrow(theta)
  docs <- rownames(theta)
  if (is.null(docs)) docs <- as.character(seq_len(D))
  out <- data.frame(document = rep(docs, times = x$K),
                    topic = rep(seq_len(x$K), each = D),
                    gamma = as.vector(theta), stringsAsFactors = FALSE)
  out <- out[order(match(out$document, docs), out$topic), , drop = FALSE]
  rownames(out) <- NULL
  out
}

#' @rdname as.data.frame.sparsevi_lda
#' @examples
#' mix <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
#' as.data.frame(mix)
#' as.data.frame(mix, type = "means")
#' @export
as.data.frame.sparsevi_mixture <- function(x, row.names = NULL, optional = FALSE, ...,
                                           type = c("weights", "means")) {
  type <- check_choice(type, c("weights", "means"), "type")
  K <- length(x$weights)
  if (type == "weights") {
    size <- if (is.null(x$sizes)) rep(NA_real_, K) else as.numeric(x$sizes)
    return(data.frame(component = seq_len(K), weight = as.numeric(x$weights),
                      size = size))
  }
  if (is.null(x$means)) {
    abort(sprintf("This mixture (likelihood \"%s\") has no component means; use `type = \"weights\"`.",
                  format(x$likelihood)), "argument")
  }
  m <- x$means
  vars <- colnames(m)
  if (is.null(vars)) vars <- paste0("V", seq_len(ncol(m)))
  out <- data.frame(component = rep(seq_len(nrow(m)), times = ncol(m)),
                    variable = rep(vars, each = nrow(m)),
                    mean = as.vector(m), stringsAsFactors = FALSE)
  out <- out[order(out$component), , drop = FALSE]
  rownames(out) <- NULL
  out
}

#' Inputs for LDAvis
#'
#' Collects what `LDAvis::createJSON()` needs to draw an interactive view of
#' a topic model: topic-word and document-topic matrices, document lengths,
#' vocabulary and term frequencies. sparsevi does not depend on LDAvis; pass
#' the result on with `do.call(LDAvis::createJSON, lda_to_ldavis(fit, x))`.
#'
#' @param fit A `sparsevi_lda`.
#' @param x The corpus (anything [as_dtm()] accepts), usually the training
#'   documents; aligned to the fitted vocabulary by term name.
#' @param ... Passed to [predict.sparsevi_lda()] (`method`, `seed`,
#'   `threads`).
#' @returns A list with `phi` (K x V topic-word probabilities, rows sum to
#'   1), `theta` (D x K document-topic proportions, rows sum to 1),
#'   `doc.length` (tokens per document, length D), `vocab` (length V) and
#'   `term.frequency` (count of each term in `x`, length V). LDAvis needs
#'   every term frequency to be positive: pass the training corpus (a
#'   message says how many fitted terms do not occur in `x`).
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 1, progress = FALSE)
#' vis <- lda_to_ldavis(fit, sim$dtm)
#' str(vis)
#' # if (requireNamespace("LDAvis")) LDAvis::serVis(do.call(LDAvis::createJSON, vis))
#' @export
lda_to_ldavis <- function(fit, x, ...) {
  if (!inherits(fit, "sparsevi_lda")) {
    abort("`fit` must be a topic model from `fit_lda()`.", "argument")
  }
  x <- align_newdata(as_dtm(x), fit$vocab)
  theta <- predict(fit, x, type = "topics", ...)
  # a document without any known term gets uniform proportions from
  # predict(); LDAvis divides by the document lengths, so keep them positive
  len <- doc_lengths(x)
  freq <- numeric(length(fit$vocab))
  tf <- rowsum(x$count, x$term + 1L, reorder = TRUE)
  freq[as.integer(rownames(tf))] <- tf[, 1L]
  if (any(freq == 0)) {
    message(sprintf("%s of the %s fitted terms do not occur in `x` (term frequency 0); LDAvis expects the training corpus.",
                    fmt_int(sum(freq == 0)), fmt_int(length(freq))))
  }
  phi <- fit$topic_word
  dimnames(phi) <- NULL
  list(phi = phi, theta = unname(theta), doc.length = as.numeric(len),
       vocab = fit$vocab, term.frequency = freq)
}
