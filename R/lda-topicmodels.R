# topicmodels' verbs on our fits.
# topicmodels (and modeltools) define posterior(), topics(), perplexity() as
# S4 generics; terms() and logLik() are stats generics whose S3 methods
# (R/lda-methods.R) keep working when topicmodels makes them S4. Our fits are S3
# lists, so the methods are registered when topicmodels is loaded (a hook
# set in .onLoad, or at once if it is loaded already), into a private
# environment: no dependency on topicmodels, nothing written to the user's
# workspace.

topicmodels_env <- new.env(parent = emptyenv())

register_topicmodels_methods <- function(...) {
  if (!isNamespaceLoaded("topicmodels") || isTRUE(topicmodels_env$done)) {
    return(invisible(FALSE))
  }
  where <- new.env(parent = asNamespace("topicmodels"))
  ok <- tryCatch({
    methods::setOldClass(c("sparsevi_lda", "sparsevi_fit"), where = where)
    methods::setMethod("posterior", c("sparsevi_lda", "missing"),
                       function(object, newdata, ...) tm_posterior(object, ...),
                       where = where)
    methods::setMethod("posterior", c("sparsevi_lda", "ANY"),
                       function(object, newdata, ...) tm_posterior(object, newdata, ...),
                       where = where)
    methods::setMethod("topics", "sparsevi_lda",
                       function(x, k = 1L, ...) tm_topics(x, k, ...), where = where)
    for (nd in c("ANY", "matrix", "simple_triplet_matrix", "DocumentTermMatrix")) {
      if (nd == "ANY" || methods::isClass(nd, where = where)) {
        methods::setMethod("perplexity", c("sparsevi_lda", nd),
                           function(object, newdata, ...) tm_perplexity(object, newdata, ...),
                           where = where)
      }
    }
    methods::setMethod("perplexity", c("sparsevi_lda", "missing"),
                       function(object, newdata, ...) tm_perplexity(object, ...),
                       where = where)
    TRUE
  }, error = function(e) {
    warning(warningCondition(
      sprintf("sparsevi could not register its methods for topicmodels' verbs: %s",
              conditionMessage(e)),
      class = c("sparsevi_warning_topicmodels", "sparsevi_warning")))
    FALSE
  })
  topicmodels_env$done <- ok
  topicmodels_env$where <- where
  invisible(ok)
}


# The training documents' proportions without `newdata` (the kept ones:
# truncated unless the fit keeps every topic, and then it says so).
tm_doc_topics <- function(fit, what) {
  kept <- lda_doc_topics_kept(fit)
  if (is.null(fit$doc_topic)) {
    abort(sprintf("%s needs `newdata`: this fit keeps no training-document proportions (`doc_topics = 0`).",
                  what), "argument", call = NULL)
  }
  if (kept < fit$K) {
    message(sprintf("%s: the training documents' proportions kept on the fit, the %d largest of %d topics per document renormalised (give `newdata`, or fit with `doc_topics = K`, for the full posterior).",
                    what, kept, fit$K))
  }
  as.matrix(fit$doc_topic)
}

# posterior(fit, newdata): as topicmodels' posterior(), a list of `terms` (K x
# V topic-word probabilities) and `topics` (D x K document-topic proportions).
tm_posterior <- function(object, newdata, ...) {
  topics <- if (missing(newdata)) tm_doc_topics(object, "posterior(fit)")
            else predict(object, newdata, ...)
  tw <- object$topic_word
  rownames(tw) <- colnames(topics) <- as.character(seq_len(object$K))
  list(terms = tw, topics = topics)
}

# topics(fit, k): as topicmodels' topics(), the most likely topic of each
# document (k = 1, a named integer vector) or its k most likely (a k x D
# matrix). The kept proportions rank each document's `doc_topics` largest
# topics exactly, so k may be at most that many without `newdata`.
tm_topics <- function(x, k = 1L, newdata, ...) {
  k <- check_count(k, "k", min = 1, max = x$K)
  if (missing(newdata)) {
    kept <- lda_doc_topics_kept(x)
    if (k > kept) {
      abort(sprintf("topics(fit, k = %d): the fit keeps only the %d largest topics per training document; give `newdata`, or fit with `doc_topics = K`.",
                    k, kept), "argument", call = NULL)
    }
    if (is.null(x$doc_topic)) {
      abort("topics(fit) needs `newdata`: this fit keeps no training-document proportions (`doc_topics = 0`).",
            "argument", call = NULL)
    }
    theta <- as.matrix(x$doc_topic)
  } else {
    theta <- predict(x, newdata, ...)
  }
  if (k == 1L) {
    out <- max.col(theta, ties.method = "first")
    names(out) <- rownames(theta)
    return(out)
  }
  out <- apply(theta, 1L, function(p) order(-p)[seq_len(k)])
  colnames(out) <- rownames(theta)
  out
}

# perplexity(fit, newdata): exp(-log-likelihood per token) of the documents'
# words under their inferred proportions (the full posterior mean) and the
# fitted topics, as topicmodels' perplexity() on new documents.
tm_perplexity <- function(object, newdata, ...) {
  if (missing(newdata)) {
    abort("perplexity(fit) needs `newdata`, the documents to score (the fit does not keep its training documents); heldout_loglik() scores held-out words of test documents.",
          "argument", call = NULL)
  }
  x <- align_newdata(as_dtm_arg(newdata, "newdata"), object$vocab)
  theta <- predict(object, x, ...)
  tw <- object$topic_word
  doc <- rep.int(seq_len(nrow(x)), diff(x$doc_ptr))
  ll <- 0
  n <- length(x$term)
  for (s in seq(1L, max(1L, n), by = 65536L)) {
    idx <- s:min(n, s + 65535L)
    if (!n) break
    p <- rowSums(theta[doc[idx], , drop = FALSE] *
                   t(tw[, x$term[idx] + 1L, drop = FALSE]))
    ll <- ll + sum(x$count[idx] * log(p))
  }
  exp(-ll / sum(x$count))
}
