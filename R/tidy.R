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
    store <- lda_sparse_store(x)
    if (!is.null(store) && n < V) {
      # a sparse fit: each topic's n most probable terms from the store (no
      # K x V table); beta = lambda over its row sums
      top <- gibbs_store_top(store, x$eta, n)
      out <- data.frame(topic = rep(seq_len(x$K), each = n),
                        term = x$vocab[as.vector(top$word)],
                        beta = as.vector(t(t(top$lambda) / top$row_sums)),
                        stringsAsFactors = FALSE)
      return(out)
    }
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
#'   documents, or the output of [split_heldout()] (its `train` part is
#'   used); aligned to the fitted vocabulary by term name. For the fit's own
#'   training documents (the same names, or without names the same
#'   documents in the same order) the proportions kept on the fit
#'   (`doc_topic`) are used; other documents are inferred with [predict()].
#' @param ... Passed to [predict.sparsevi_lda()] (`method`, `seed`,
#'   `threads`).
#' @returns A list with `phi` (K x V topic-word probabilities, rows sum to
#'   1), `theta` (D x K document-topic proportions, rows sum to 1),
#'   `doc.length` (tokens per document, length D), `vocab` (length V) and
#'   `term.frequency` (count of each term in `x`, length V). LDAvis needs
#'   every term frequency to be positive: fitted terms absent from `x` are
#'   left out of `phi` (whose rows are renormalised), `vocab` and
#'   `term.frequency`, with a message saying how many.
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
  # split_heldout()'s output: its training documents
  if (is.list(x) && !is.object(x) && inherits(x$train, "sparsevi_dtm")) x <- x$train
  x <- align_newdata(as_dtm(x), fit$vocab)
  theta <- if (!...length() && lda_training_docs(fit, x)) {
    as.matrix(fit$doc_topic) # the training documents: kept on the fit
  } else {
    predict(fit, x, type = "topics", ...)
  }
  # a document without any known term gets uniform proportions from
  # predict(); LDAvis divides by the document lengths, so keep them positive
  len <- doc_lengths(x)
  freq <- numeric(length(fit$vocab))
  tf <- rowsum(x$count, x$term + 1L, reorder = TRUE)
  freq[as.integer(rownames(tf))] <- tf[, 1L]
  phi <- fit$topic_word
  dimnames(phi) <- NULL
  keep <- freq > 0
  if (!all(keep)) {
    # LDAvis needs every term frequency positive (a split's training part
    # keeps the whole vocabulary): drop the absent terms, renormalise phi
    message(sprintf("%s of the %s fitted terms do not occur in `x` (term frequency 0) and are left out.",
                    fmt_int(sum(!keep)), fmt_int(length(freq))))
    phi <- phi[, keep, drop = FALSE]
    phi <- phi / rowSums(phi)
  }
  list(phi = phi, theta = unname(theta), doc.length = as.numeric(len),
       vocab = fit$vocab[keep], term.frequency = freq[keep])
}

#' Tidy, augment and glance methods for the generics of broom and tidytext
#'
#' The `tidy()`, `augment()` and `glance()` verbs topicmodels users know
#' from tidytext and broom. sparsevi registers these methods for the
#' generics of the `generics` package without depending on it: they are
#' available as soon as broom, tidytext or generics is loaded (e.g.
#' `library(tidytext)`), and return plain data frames.
#'
#' For a topic model, `tidy(x, matrix = "beta")` gives one row per (topic,
#' term) with the term's probability in the topic; `matrix = "gamma"` gives
#' the training documents' topic proportions kept on the fit (its
#' `doc_topic`: the `doc_topics` largest per document, see [fit_lda()]; the
#' others are 0 and left out). `augment(x, data)` adds to each (document,
#' term) pair of `data` its most likely topic, `.topic` = argmax over k of
#' theta_dk beta_kw, with theta the proportions of the fit's training
#' documents when `data` holds exactly those documents (by name, or without
#' names the same documents in the same order), else inferred with
#' [predict()].
#'
#' For a mixture, `tidy(x)` gives one row per component (`component`,
#' `weight`, `size`, and the means of numeric data as columns); `augment(x,
#' data)` adds the most likely component `.cluster` and its responsibility
#' `.probability` to each row of `data`; `glance(x)` counts `laps` as
#' print() does (the laps after lap 0) and adds `loglik` and `BIC` (R's
#' sign: lower is better). A Fast-VDP fit's `glance()` has `K` (its T), `n`,
#' `steps`, `seconds`, `free_energy`, `loglik`, `BIC`, `tail_weight` and
#' `converged`; its `augment()` gives `.cluster = NA` to points the
#' infinite tail claims.
#'
#' @param x A `sparsevi_lda` or `sparsevi_mixture` (including `sparsevi_vdp`).
#' @param matrix For a topic model: `"beta"` (topic-word, default) or
#'   `"gamma"` (document-topic).
#' @param log For `"beta"`: give `log(beta)` instead (as tidytext does).
#' @param data For `augment()`: a topic model's documents (anything
#'   [as_dtm()] accepts; a long data frame of (document, term, count) or (document, term) rows keeps
#'   its rows and columns), or a mixture's data (as for [predict()]).
#' @param ... Unused for `tidy()` and `glance()`; for a topic model's
#'   `augment()`, passed to [predict.sparsevi_lda()].
#' @returns A data frame. Topic model: `tidy(matrix = "beta")` has `topic`,
#'   `term`, `beta`; `tidy(matrix = "gamma")` has `document`, `topic`,
#'   `gamma`; `augment()` has `document`, `term`, `count` (or the columns of
#'   a data frame given) and `.topic`; `glance()` one row with `K`,
#'   `n_docs`, `n_tokens`, `laps`, `seconds`, `objective` (the ELBO of
#'   memoized or batch training with `local = "vb"`; `NA` for the default
#'   engine, SCVB0, and every other, which have no training objective:
#'   fit with `heldout` for `heldout`), `heldout`.
#'   Mixture: `tidy()` has `component`, `weight`, `size` and one column per
#'   variable's mean; `augment()` has the columns of `data`, `.cluster` and
#'   `.probability`; `glance()` one row with `K`, `n`, `laps`, `seconds`,
#'   `objective`, `heldout`, `converged`.
#' @name sparsevi_tidiers
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 1, progress = FALSE)
#' if (requireNamespace("generics", quietly = TRUE)) {
#'   head(generics::tidy(fit))
#'   head(generics::tidy(fit, matrix = "gamma"))
#'   head(generics::augment(fit, sim$dtm))
#'   generics::glance(fit)
#'   mix <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
#'   generics::tidy(mix)
#'   head(generics::augment(mix, faithful))
#' }
NULL

#' @rdname sparsevi_tidiers
#' @exportS3Method generics::tidy
tidy.sparsevi_lda <- function(x, matrix = c("beta", "gamma"), log = FALSE, ...) {
  matrix <- check_choice(matrix, c("beta", "gamma"), "matrix")
  log <- check_flag(log, "log")
  if (matrix == "beta") {
    tw <- x$topic_word
    out <- data.frame(topic = rep(seq_len(x$K), times = length(x$vocab)),
                      term = rep(x$vocab, each = x$K),
                      beta = as.vector(tw), stringsAsFactors = FALSE)
    if (log) out$beta <- log(out$beta)
    return(out)
  }
  if (is.null(x$doc_topic)) {
    abort("This fit keeps no training-document proportions (fitted with `doc_topics = 0`, or by an older version): use as.data.frame(fit, type = \"doc_topic\", newdata = ) instead.",
          "argument")
  }
  dt <- methods::as(x$doc_topic, "TsparseMatrix")
  docs <- rownames(dt)
  if (is.null(docs)) docs <- as.character(seq_len(nrow(dt)))
  o <- order(dt@i, dt@j)
  data.frame(document = docs[dt@i[o] + 1L], topic = dt@j[o] + 1L, gamma = dt@x[o],
             stringsAsFactors = FALSE)
}

#' @rdname sparsevi_tidiers
#' @exportS3Method generics::augment
augment.sparsevi_lda <- function(x, data, ...) {
  if (missing(data)) {
    abort("`data`, the documents whose words to assign to topics, is missing (the fit does not keep its documents).",
          "argument")
  }
  frame <- if (is.data.frame(data)) data else NULL
  dtm <- align_newdata(as_dtm_arg(data, "data"), x$vocab)
  theta <- if (lda_training_docs(x, dtm)) {
    x$doc_topic
  } else {
    predict(x, dtm, sparse = TRUE, ...)
  }
  doc_of <- rep.int(seq_len(nrow(dtm)), diff(dtm$doc_ptr))
  term <- dtm$term + 1L
  # a sparse fit: the beta columns of the documents' words only (no K x V
  # table); a dense one: lambda over its row sums, read in place
  store <- lda_sparse_store(x)
  U <- if (!is.null(store)) sort(unique(term))
  tw <- if (is.null(store)) lda_terms_topics(x) else
    list(lambda = gibbs_store_cols(store, x$eta, U, "beta"), rs = NULL)
  col <- if (is.null(store)) term else match(term, U)
  threads <- sparsevi_threads(list(...)$threads %||% getOption("sparsevi.threads", 1L))
  topic <- lda_pair_topics(theta, tw$lambda, tw$rs, doc_of, col, threads)
  docs <- dtm$doc_names
  if (is.null(docs)) docs <- as.character(seq_len(nrow(dtm)))
  if (is.null(frame)) {
    return(data.frame(document = docs[doc_of], term = x$vocab[term], count = dtm$count,
                      .topic = topic, stringsAsFactors = FALSE))
  }
  # the user's rows, each with the topic of its (document, term) pair
  key <- paste(docs[doc_of], x$vocab[term], sep = "\r")
  dcol <- pick_column(frame, NULL, c("document", "doc", "doc_id", "id"), 1L, "document",
                      sys.call())
  tcol <- pick_column(frame, NULL, c("term", "word", "token", "feature"), 2L, "term",
                      sys.call())
  fkey <- paste(as.character(frame[[dcol]]), as.character(frame[[tcol]]), sep = "\r")
  frame$.topic <- topic[match(fkey, key)]
  frame
}

# The topic of each (document, word) pair: the k of largest theta[d, k]
# beta[k, w], the first on ties, for pairs doc (1-based documents, rows of
# theta) and col (1-based columns of M; beta = M over its row sums rs, or M
# itself when rs is NULL). theta a D x K matrix, sparse or dense. One pass
# in C over each document's topics (ffi_lda_pair_topics()); the same
# topics as lda_pair_topics_r(), max.col() over the pairs' scores.
lda_pair_topics <- function(theta, M, rs, doc, col, threads = 1L) {
  # (general: a symmetric or triangular form would store part of its entries)
  tt <- Matrix::t(methods::as(methods::as(theta, "CsparseMatrix"), "generalMatrix"))
  if (!is.double(M)) storage.mode(M) <- "double"
  .Call(ffi_lda_pair_topics, tt@p, tt@i, as.double(tt@x), M,
        if (is.null(rs)) NULL else as.double(rs), as.integer(doc) - 1L, as.integer(col) - 1L,
        as.integer(threads))
}

# The pure-R form of lda_pair_topics() (its reference in the tests), in
# blocks of pairs that keep the pairs x K scores small.
lda_pair_topics_r <- function(theta, M, rs, doc, col) {
  tw <- if (is.null(rs)) M else M / rs
  topic <- integer(length(doc))
  for (s in seq(1L, max(1L, length(doc)), by = 65536L)) {
    if (!length(doc)) break
    idx <- s:min(length(doc), s + 65535L)
    score <- as.matrix(theta[doc[idx], , drop = FALSE]) * t(tw[, col[idx], drop = FALSE])
    topic[idx] <- max.col(score, ties.method = "first")
  }
  topic
}

#' @rdname sparsevi_tidiers
#' @exportS3Method generics::glance
glance.sparsevi_lda <- function(x, ...) {
  tr <- x$trace
  last <- if (nrow(tr)) tr[nrow(tr), ] else NULL
  data.frame(K = x$K, n_docs = x$n_docs, n_tokens = x$n_tokens, laps = nrow(tr),
             seconds = if (nrow(tr)) max(tr$seconds) else 0,
             objective = if (is.null(last)) NA_real_ else last$objective,
             heldout = if (is.null(last)) NA_real_ else last$heldout)
}

#' @rdname sparsevi_tidiers
#' @exportS3Method generics::tidy
tidy.sparsevi_mixture <- function(x, ...) {
  out <- as.data.frame(x, type = "weights")
  if (!is.null(x$means)) {
    m <- x$means
    vars <- colnames(m)
    if (is.null(vars)) vars <- paste0("V", seq_len(ncol(m)))
    means <- as.data.frame(unname(m))
    names(means) <- paste0("mean_", vars)
    out <- cbind(out, means)
  }
  out
}

#' @rdname sparsevi_tidiers
#' @exportS3Method generics::augment
augment.sparsevi_mixture <- function(x, data, ...) {
  if (missing(data)) {
    abort("`data`, the points to assign to components, is missing (the fit does not keep its data).",
          "argument")
  }
  resp <- predict(x, data, type = "responsibilities")
  out <- if (is.data.frame(data)) data else as.data.frame(as.matrix(data))
  out$.cluster <- max.col(resp, ties.method = "first")
  out$.probability <- resp[cbind(seq_len(nrow(resp)), out$.cluster)]
  out
}

#' @rdname sparsevi_tidiers
#' @exportS3Method generics::glance
glance.sparsevi_mixture <- function(x, ...) {
  tr <- x$trace
  last <- if (nrow(tr)) tr[nrow(tr), ] else NULL
  # laps after lap 0 (which fills the memoized caches), as print() counts them
  data.frame(K = length(x$weights), n = if (is.null(x$n)) NA_integer_ else x$n,
             laps = if (nrow(tr)) as.integer(max(tr$lap)) else 0L,
             seconds = if (nrow(tr)) max(tr$seconds) else 0,
             objective = if (is.null(last) || is.null(last$objective)) NA_real_
                         else last$objective,
             heldout = if (is.null(last) || is.null(last$heldout)) NA_real_
                       else last$heldout,
             converged = if (is.null(x$converged)) NA else x$converged,
             loglik = if (is.null(x$loglik)) NA_real_ else x$loglik,
             BIC = if (is.null(x$loglik)) NA_real_ else stats::BIC(x))
}

#' @rdname sparsevi_tidiers
#' @exportS3Method generics::glance
glance.sparsevi_vdp <- function(x, ...) {
  tr <- x$trace
  data.frame(K = x$T, n = x$n, steps = nrow(tr), seconds = x$timings[["total"]],
             free_energy = x$free_energy, loglik = if (is.null(x$loglik)) NA_real_ else x$loglik,
             BIC = if (is.null(x$loglik)) NA_real_ else stats::BIC(x),
             tail_weight = x$tail_weight,
             converged = if (is.null(x$converged)) NA else x$converged)
}

#' @rdname sparsevi_tidiers
#' @exportS3Method generics::augment
augment.sparsevi_vdp <- function(x, data, ...) {
  if (missing(data)) {
    abort("`data`, the points to assign to components, is missing (the fit does not keep its data).",
          "argument")
  }
  resp <- predict(x, data, type = "responsibilities")
  out <- if (is.data.frame(data)) data else as.data.frame(as.matrix(data))
  k <- max.col(resp, ties.method = "first")
  out$.probability <- resp[cbind(seq_len(nrow(resp)), k)]
  k[k > x$T] <- NA_integer_ # the infinite tail
  out$.cluster <- k
  out[c(setdiff(names(out), c(".cluster", ".probability")), ".cluster", ".probability")]
}
