# Evaluation shared by every engine (MATH.md section 7): the heldout_loglik()
# generic with dispatch by method name (heldout_loglik_<method>()), document
# completion in C (src/eval-completion.c), and the coherence() generic with
# dispatch by measure (coherence_<measure>()).

#' Held-out log-likelihood of test documents
#'
#' For topic models, `method = "completion"` (Hughes & Sudderth, App. E)
#' fits each test document's topic proportions on its observed words with
#' the topics fixed at `fit$topic_word` (dense VB), then scores its held-out
#' words by `log sum_k theta_k beta_kv`, averaged per held-out token. Other
#' methods (e.g. `"left_to_right"`) are added by other engines.
#'
#' @param object A fitted model (`sparsevi_lda`, or a mixture fit).
#' @param ... Arguments of the method.
#' @returns The mean held-out log-likelihood per token (a number), with
#'   attributes `tokens` (held-out tokens scored) and `per_doc` (each test
#'   document's total held-out log-likelihood); for topic models it has class
#'   `sparsevi_score`, which prints as one line (`as.numeric()` gives the
#'   bare number).
#' @examples
#' sim <- simulate_lda(D = 80, V = 40, K = 3, seed = 1)
#' sp <- split_heldout(sim$dtm, n_test = 10, seed = 1)
#' fit <- fit_lda(sp$train, K = 3, passes = 3, seed = 1)
#' heldout_loglik(fit, sp$test)
#' @export
heldout_loglik <- function(object, ...) {
  UseMethod("heldout_loglik")
}

#' @rdname heldout_loglik
#' @param test Test documents: a `sparsevi_heldout` from [split_heldout()]
#'   (already split into observed and held-out parts), or any corpus, then
#'   split here with `observed_frac`, `by` and `seed`. Terms are matched to
#'   the fitted vocabulary by name.
#' @param method `"completion"` (default) or a method added by another
#'   engine, such as `"left_to_right"`. For `"completion"`, `...` takes
#'   `observed_frac` (observed fraction of each document when `test` is a
#'   plain corpus, in (0, 1), default 0.8), `by` (`"types"`, the default, or
#'   `"tokens"`: how a plain corpus is split), `seed` (`NULL` or a whole
#'   number, for that split) and `threads`.
#' @export
heldout_loglik.sparsevi_lda <- function(object, test, method = "completion", ...) {
  method <- check_string(method, "method")
  fun <- lda_fun("heldout_loglik_", method)
  if (is.null(fun)) {
    abort(sprintf("`method = \"%s\"` is not available; use \"completion\".", method),
          "argument")
  }
  fun(object, test, ...)
}

# Method "completion" of heldout_loglik() for topic models.
heldout_loglik_completion <- function(object, test, observed_frac = 0.8,
                                      by = c("types", "tokens"), seed = NULL,
                                      threads = getOption("sparsevi.threads", 1L), ...) {
  ho <- as_heldout(test, object$vocab, observed_frac, by, seed)
  threads <- sparsevi_threads(threads)
  completion_score(object$topic_word, object$alpha, ho, threads, details = TRUE)
}

# Bring test documents to a sparsevi_heldout over the fitted vocabulary.
as_heldout <- function(test, vocab, observed_frac = 0.8, by = c("types", "tokens"),
                       seed = NULL, call = caller_call()) {
  if (!inherits(test, "sparsevi_heldout")) {
    x <- as_dtm(test)
    observed_frac <- check_probability(observed_frac, "observed_frac", call = call)
    by <- check_choice(by, c("types", "tokens"), "by", call = call)
    test <- split_observed(x, observed_frac, by, resolve_seed(seed, call = call))
  }
  obs <- dtm_align(test$observed, vocab)
  held <- dtm_align(test$heldout, vocab)
  total <- sum(test$observed$count) + sum(test$heldout$count)
  if (total > 0 && obs$dropped_tokens + held$dropped_tokens >= total) {
    abort("The test documents share no term with the fitted vocabulary: they must use the same vocabulary (terms are matched by name).",
          "vocab", call = call)
  }
  test$observed <- obs$x
  test$heldout <- held$x
  test$dropped <- max(obs$dropped, held$dropped)
  test
}

# Completion score of a topic-word matrix (K x V, rows sum to 1) on a
# sparsevi_heldout over the same vocabulary.
completion_score <- function(topic_word, alpha, heldout, threads = 1L, details = FALSE,
                             max_iter = 100L, tol = 0.05) {
  tw <- unname(topic_word)
  storage.mode(tw) <- "double"
  K <- nrow(tw)
  obs <- heldout$observed
  held <- heldout$heldout
  res <- .Call(ffi_lda_completion, obs$doc_ptr, obs$term, obs$count, held$doc_ptr,
               held$term, held$count, ncol(tw), tw,
               as.integer(c(K, max_iter, 0L, 0L, 1L)), as.double(c(alpha, tol, 0)),
               as.integer(threads))
  val <- sum(res$loglik) / sum(res$tokens)
  if (details) {
    attr(val, "tokens") <- sum(res$tokens)
    attr(val, "per_doc") <- res$loglik
    class(val) <- "sparsevi_score"
  }
  val
}

#' @export
print.sparsevi_score <- function(x, digits = 4, ...) {
  per_doc <- attr(x, "per_doc")
  cat(sprintf("Held-out log-likelihood: %s per token (%s tokens, %s documents)\n",
              format(unclass(x)[1L], digits = digits, nsmall = digits),
              format(attr(x, "tokens"), big.mark = ","),
              format(length(per_doc), big.mark = ",")))
  cat("Per-document totals: attr(, \"per_doc\"); the number alone: as.numeric().\n")
  invisible(x)
}

#' Topic coherence
#'
#' Mean coherence of each topic's top `n` words, from document
#' co-occurrences in a reference corpus: `"npmi"` (normalised pointwise
#' mutual information, Than & Doan App. B; from -1 to 1, higher is better)
#' or `"umass"` (Mimno et al. 2011; at most 0 on the training corpus, closer
#' to 0 is better). Each measure is a function `coherence_<measure>()`
#' provided by its engine; both return the same type.
#'
#' @param object A `sparsevi_lda` (or a K x V topic-word matrix with the
#'   vocabulary as column names).
#' @param reference A reference corpus, anything [as_dtm()] accepts.
#' @param measure `"npmi"` or `"umass"`.
#' @param n Number of top words per topic (default 10).
#' @param ... Unused.
#' @returns A `sparsevi_coherence`: a numeric vector of length K, the
#'   coherence of each topic (arithmetic such as `mean()` works on it;
#'   `as.numeric()` gives the bare numbers, and `[` a plain numeric vector),
#'   with attributes `measure`, `n`, `mean` (the mean over topics),
#'   `top_words` (n x K: the words scored, term names when the topics have
#'   them) and, for `"umass"`, `skipped` (per topic, pairs skipped because
#'   the higher-ranked word never occurs in `reference`). It prints as one
#'   line per topic.
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 1, progress = FALSE)
#' coh <- coherence(fit, sim$dtm, measure = "umass", n = 5)
#' coh
#' mean(coh)
#' @export
coherence <- function(object, reference, measure = c("npmi", "umass"), n = 10, ...) {
  UseMethod("coherence")
}

#' @export
coherence.default <- function(object, reference, measure = c("npmi", "umass"), n = 10,
                              ...) {
  measure <- check_choice(measure, c("npmi", "umass"), "measure")
  n <- check_count(n, "n", min = 2)
  tw <- if (is.matrix(object)) object else object$topic_word
  if (!is.matrix(tw) || is.null(colnames(tw))) {
    abort("`object` must be a fitted topic model or a topic-word matrix with the vocabulary as column names.",
          "argument")
  }
  fun <- lda_fun("coherence_", measure)
  if (is.null(fun)) {
    abort(sprintf("The coherence measure \"%s\" is not available in this version of sparsevi.",
                  measure), "engine")
  }
  ref <- dtm_align(as_dtm(reference), colnames(tw))$x
  if (length(ref$term) == 0L) {
    abort("`reference` shares no terms with the fitted vocabulary; give a reference corpus over the same terms.",
          "vocab")
  }
  fun(tw, ref, n)
}

# The one type every coherence measure returns (coherence(), coherence_umass(),
# coherence_npmi()): per-topic values with what was scored riding along.
new_sparsevi_coherence <- function(values, measure, n, top_words, ...) {
  values <- as.double(values)
  structure(values, measure = measure, n = as.integer(n),
            mean = if (length(values)) mean(values) else NA_real_,
            top_words = top_words, ..., class = "sparsevi_coherence")
}

#' @export
print.sparsevi_coherence <- function(x, ...) {
  measure <- attr(x, "measure")
  v <- as.vector(unclass(x))
  cat(sprintf("%s coherence of the top %d words of %d topics; mean %.4f\n",
              if (is.null(measure)) "Topic" else toupper(measure), attr(x, "n"), length(v),
              mean(v)))
  tw <- attr(x, "top_words")
  for (k in seq_along(v)) {
    words <- if (is.character(tw)) paste(utils::head(tw[, k], 5L), collapse = " ") else ""
    cat(sprintf("  topic %3d  %7.4f  %s\n", k, v[k], words))
  }
  invisible(x)
}

# Subsetting gives plain numbers: the attributes describe all K topics.
#' @export
`[.sparsevi_coherence` <- function(x, i) {
  as.vector(unclass(x))[i]
}
