# Evaluation shared by every engine (notes/math.md §7), next to its kernels
# src/eval-*.c: the heldout_loglik() generic with dispatch by method name
# (the table lda_heldout_methods()), document completion
# (src/eval-completion.c) and left-to-right (src/eval-ltr.c); the coherence()
# generic with dispatch by measure (the table coherence_measures()), NPMI
# (src/eval-npmi.c) and UMass (src/eval-umass.c).

# The evaluators by name: a new method or measure is a function and a line
# here (tables built at use, so that their functions may live anywhere).
lda_heldout_methods <- function() {
  list(completion = heldout_loglik_completion, left_to_right = heldout_ltr)
}

coherence_measures <- function() {
  list(npmi = coherence_npmi, umass = coherence_umass_score)
}

# The evaluator `name` of `table`, or NULL.
evaluator <- function(table, name) {
  if (!is.character(name) || length(name) != 1L || is.na(name)) return(NULL)
  table[[name]]
}

#' Held-out log-likelihood of test documents
#'
#' For topic models, `method = "completion"` (Hughes & Sudderth, App. E)
#' fits each test document's topic proportions on its observed words with
#' the topics fixed at `fit$topic_word` (dense VB), then scores its held-out
#' words by `log sum_k theta_k beta_kv`, averaged per held-out token. Other
#' methods: `"left_to_right"` (Mimno, Hoffman & Blei).
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
  fun <- evaluator(lda_heldout_methods(), method)
  if (is.null(fun)) {
    abort(sprintf("`method = \"%s\"` is not available; use \"completion\".", method),
          "argument")
  }
  # (each method's errors name this call, the user's)
  fun(object, test, ..., call = sys.call())
}

# Method "completion" of heldout_loglik() for topic models.
heldout_loglik_completion <- function(object, test, observed_frac = 0.8,
                                      by = c("types", "tokens"), seed = NULL,
                                      threads = getOption("sparsevi.threads", 1L), ...,
                                      call = caller_call()) {
  ho <- as_heldout(test, object$vocab, observed_frac, by, seed, call = call)
  threads <- sparsevi_threads(threads)
  completion_score(lda_eval_topics(object), object$alpha, ho, threads, details = TRUE)
}

# Bring test documents to a sparsevi_heldout over the fitted vocabulary.
as_heldout <- function(test, vocab, observed_frac = 0.8, by = c("types", "tokens"),
                       seed = NULL, call = caller_call(), arg = "test") {
  # the whole list split_heldout() returns, not its test part
  if (is_heldout_split(test)) {
    abort(sprintf("%s is the whole split from split_heldout() (its training and test parts): give its test part, e.g. `%s = sp$test` for `sp <- split_heldout(x)`.",
                  arg_label(arg), arg), "argument", call = call)
  }
  if (!inherits(test, "sparsevi_heldout")) {
    x <- as_dtm_arg(test, arg, call)
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
# sparsevi_heldout over the same vocabulary; or of topics whose columns are
# made block by block (completion_score_blocks()): the sparse kind's store
# (new_sparse_topics()) or a dense lambda (new_lambda_topics()).
completion_score <- function(topic_word, alpha, heldout, threads = 1L, details = FALSE,
                             max_iter = 100L, tol = 0.05) {
  if (inherits(topic_word, "sparsevi_sparse_topics")) {
    store <- topic_word$store
    return(completion_score_blocks(function(U) gibbs_store_cols(store, topic_word$eta, U, "beta"),
                                   length(store$tot), alpha, heldout, threads, details,
                                   max_iter, tol))
  }
  if (inherits(topic_word, "sparsevi_lambda_topics")) {
    lambda <- topic_word$lambda
    rs <- topic_word$rs
    return(completion_score_blocks(function(U) lambda[, U, drop = FALSE] / rs, nrow(lambda),
                                   alpha, heldout, threads, details, max_iter, tol))
  }
  tw <- unname(topic_word)
  storage.mode(tw) <- "double"
  K <- nrow(tw)
  res <- .Call(ffi_lda_completion, heldout$observed, heldout$heldout, ncol(tw), tw,
               completion_opts(K, alpha, max_iter, tol), as.integer(threads))
  completion_value(res$loglik, res$tokens, details)
}

# The settings of the completion kernel: the dense vb step (L = K), no
# restarts.
completion_opts <- function(K, alpha, max_iter, tol) {
  list(L = K, max_iter = as.integer(max_iter), select_every = 0L, restart_max = 0L,
       restart_iter = 1L, alpha = as.double(alpha), tol = as.double(tol), active_eps = 0)
}

# The score per token from the documents' log-likelihoods and tokens, with
# them as attributes when `details`.
completion_value <- function(loglik, tokens, details) {
  val <- sum(loglik) / sum(tokens)
  if (details) {
    attr(val, "tokens") <- sum(tokens)
    attr(val, "per_doc") <- loglik
    class(val) <- "sparsevi_score"
  }
  val
}

# The same score for topics of which only some columns are made at a time
# (the sparse kind of a fit, issue 33: new_sparse_topics(); a dense lambda,
# new_lambda_topics()), without their K x V topic_word: documents in blocks
# whose words x K stay under lda_dense_topics_max entries, each scored as
# above on cols(U), the K x |U| topic-word columns of its own words U (the
# same kernel; each document's score depends on its own words only). From
# lambda the columns are those of topic_word, so the score is the same;
# from a sparse store, equal up to the order of lambda's row sums (~1e-15
# relative).
completion_score_blocks <- function(cols, K, alpha, heldout, threads = 1L, details = FALSE,
                                    max_iter = 100L, tol = 0.05) {
  obs <- heldout$observed
  held <- heldout$heldout
  opts <- completion_opts(K, alpha, max_iter, tol)
  ll <- tokens <- numeric(nrow(obs))
  for (r in sparse_doc_blocks(list(obs, held), K)) {
    part <- dtm_blocks_compact(list(dtm_subset(obs, r), dtm_subset(held, r)))
    res <- .Call(ffi_lda_completion, part$x[[1L]], part$x[[2L]], length(part$U),
                 cols(part$U), opts, as.integer(threads))
    ll[r] <- res$loglik
    tokens[r] <- res$tokens
  }
  completion_value(ll, tokens, details)
}

# Consecutive blocks of the documents of `parts` (dtms of the same documents)
# whose entries (an upper bound of their words) x K stay under `entries`
# (at least one document per block).
sparse_doc_blocks <- function(parts, K, entries = lda_dense_topics_max) {
  D <- length(parts[[1L]]$doc_ptr) - 1L
  if (D < 1L) return(list())
  words <- Reduce(`+`, lapply(parts, function(x) as.double(diff(x$doc_ptr))))
  id <- pmax(1, ceiling(cumsum(words) * K / entries))
  id <- cumsum(c(TRUE, diff(id) != 0))
  unname(split(seq_len(D), id))
}

# dtms over their own words: U (1-based, increasing: the words' order is
# kept) and the dtms with terms renumbered into U.
dtm_blocks_compact <- function(parts) {
  U <- sort(unique(unlist(lapply(parts, `[[`, "term"), use.names = FALSE)))
  list(U = U + 1L, x = lapply(parts, function(x) {
    x$term <- match(x$term, U) - 1L
    x$vocab <- NULL
    x
  }))
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
#' to 0 is better). Both return the same type.
#'
#' @param object A `sparsevi_lda` (or a K x V topic-word matrix with the
#'   vocabulary as column names).
#' @param reference A reference corpus, anything [as_dtm()] accepts. A
#'   corpus on disk from [uci_source()] is counted batch by batch, one batch
#'   in memory at a time, with the same result as in memory.
#' @param measure `"npmi"` or `"umass"`.
#' @param n Number of top words per topic (default 10): for a fit, those
#'   `terms(fit, n)` lists; for a matrix, each row's `n` largest (ties by
#'   word order).
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
  # a corpus on disk: the counts batch by batch (coherence_source())
  if (inherits(reference, "sparsevi_source")) {
    return(coherence_source(object, reference, measure, n))
  }
  # a fit: its top words as terms() gives them (the store's, or each row of
  # lambda's: no K x V topic_word built, 5.8 s of a 24 s call at K = 1000)
  if (inherits(object, "sparsevi_lda")) return(coherence_fit(object, reference, measure, n))
  tw <- coherence_topic_word(object)
  fun <- evaluator(coherence_measures(), measure)
  if (is.null(fun)) {
    abort(sprintf("The coherence measure \"%s\" is not available in this version of sparsevi.",
                  measure), "engine")
  }
  ref <- dtm_align(as_dtm_arg(reference, "reference"), colnames(tw))$x
  if (length(ref$term) == 0L) {
    abort("`reference` shares no terms with the fitted vocabulary; give a reference corpus over the same terms.",
          "vocab")
  }
  fun(tw, ref, n)
}

# The topic-word matrix of coherence()'s `object` (a dense fit or a matrix
# named by the vocabulary).
coherence_topic_word <- function(object) {
  tw <- if (is.matrix(object)) object else object$topic_word
  if (!is.matrix(tw) || !is.numeric(tw) || anyNA(tw) || is.null(colnames(tw))) {
    abort("`object` must be a fitted topic model or a topic-word matrix with the vocabulary as column names.",
          "argument")
  }
  tw
}

# coherence() on a corpus on disk (a uci_source()): the same measures from
# document counts of the topics' top words and of their pairs, summed batch
# by batch (the counts add up over documents; one batch in memory at a
# time). NPMI equals the score on the corpus in memory exactly (the same
# counts); UMass up to the order of its sum (it is the C kernel's formula,
# from these counts).
coherence_source <- function(object, src, measure, n) {
  if (inherits(object, "sparsevi_lda")) {
    vocab <- object$vocab
    n <- min(as.integer(n), length(vocab))
    top <- lda_top_words(object, n)
  } else {
    tw <- coherence_topic_word(object)
    vocab <- colnames(tw)
    n <- min(as.integer(n), ncol(tw))
    top <- coherence_top(tw, n)
  }
  if (!any(vocab %in% src$vocab)) {
    abort("`reference` shares no terms with the fitted vocabulary; give a reference corpus over the same terms.",
          "vocab")
  }
  if (identical(measure, "npmi")) return(coherence_npmi(NULL, src, n, top = top, vocab = vocab))
  pp <- coherence_pairs(t(top), vocab, src$vocab)
  counts <- coherence_counts(pp$index, src, 1L)
  umass_from_counts(top, pp, counts, vocab, n)
}

# UMass (src/eval-umass.c's sum, in its order) of the n x K top words `top`
# from the document counts of coherence_counts() over the pairs `pp` of
# coherence_pairs(): for each topic, the sum over ranks m > l of
# log((D(v_m, v_l) + 1) / D(v_l)), pairs whose higher-ranked word is in no
# document skipped and counted.
umass_from_counts <- function(top, pp, counts, vocab, n) {
  # every topic's pairs (rank l < m) in the kernel's order, m then l
  m <- rep.int(seq_len(n), seq_len(n) - 1L)
  l <- sequence(seq_len(n) - 1L)
  u <- matrix(match(top, pp$words), nrow = n) # n x K word numbers
  ul <- u[l, , drop = FALSE]
  um <- u[m, , drop = FALSE]
  U <- length(pp$words)
  both <- counts$pair_freq[match((pmin(ul, um) - 1) * U + pmax(ul, um), pp$ukey)]
  dl <- counts$doc_freq[ul]
  term <- matrix(log((both + 1) / dl), nrow = length(l))
  term[dl == 0] <- 0
  # added one pair after another, from 0, as the kernel does
  score <- double(ncol(top))
  for (i in seq_along(l)) score <- score + term[i, ]
  skipped <- as.integer(colSums(matrix(dl == 0, nrow = length(l))))
  new_sparsevi_coherence(score, "umass", n, matrix(vocab[top], nrow = n), skipped = skipped)
}

# coherence() of a fit: the measures on the topics' top words
# (lda_top_words(): from the store of a sparse fit, else from each row of
# the stored topics), with the vocabulary aligned as for a matrix.
coherence_fit <- function(fit, reference, measure, n) {
  vocab <- fit$vocab
  ref <- dtm_align(as_dtm_arg(reference, "reference"), vocab)$x
  if (length(ref$term) == 0L) {
    abort("`reference` shares no terms with the fitted vocabulary; give a reference corpus over the same terms.",
          "vocab")
  }
  n <- min(as.integer(n), length(vocab))
  top <- lda_top_words(fit, n)
  if (identical(measure, "umass")) return(coherence_umass_top(top, vocab, ref, n))
  coherence_npmi(NULL, ref, n, top = top, vocab = vocab)
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

# ---- NPMI coherence (Than & Doan; kernel src/eval-npmi.c) -----------------

# NPMI coherence (Than & Doan App. B; Bouma 2009) of the top `n` words of each
# topic, with document co-occurrence probabilities from `reference_dtm`
# (coherence(fit, reference, measure = "npmi") aligns it to the fit first):
#   NPMI(t) = mean over pairs i < j of ln(P(wi, wj) / (P(wi) P(wj))) / -ln P(wi, wj).
# A pair that never co-occurs scores -1 (the limit as P(wi, wj) -> 0); a pair
# present in every document scores 1.
coherence_npmi <- function(topic_word, reference_dtm, n = 10L, threads = 1L, top = NULL,
                           vocab = colnames(topic_word)) {
  if (is.null(top)) {
    n <- min(as.integer(n), ncol(topic_word))
    top <- coherence_top(topic_word, n)
  } else {
    # given: n x K word numbers, best first (a sparse fit's, lda_top_words())
    n <- nrow(top)
  }
  K <- ncol(top)
  top <- t(top)
  pp <- coherence_pairs(top, vocab, reference_dtm$vocab)
  counts <- coherence_counts(pp$index, reference_dtm, threads)
  D <- nrow(reference_dtm)
  p1 <- counts$doc_freq / D
  p12 <- counts$pair_freq / D
  pair_npmi <- npmi_value(p12, p1[pp$ua], p1[pp$ub])
  per_pair <- pair_npmi[match(pp$key, pp$ukey)]
  per_topic <- if (n >= 2L) {
    as.vector(tapply(per_pair, factor(pp$pairs[, 3L], levels = seq_len(K)), mean))
  } else {
    rep(NA_real_, K)
  }
  # the coherence() type (R/eval.R): one value per topic; the top words
  # (n x K, one column per topic, as terms() and UMass) ride along
  new_sparsevi_coherence(per_topic, "npmi", n,
                         t(if (!is.null(vocab)) matrix(vocab[top], K, n) else top))
}

# The n x K top words (best first) of each row of a K x V topic-word matrix.
# One pass over the table in C (src/select.c), ties by word order as
# order(decreasing = TRUE) gives them: order() per row took 18 s at K = 1000,
# V = 129,289.
coherence_top <- function(topic_word, n) {
  if (!is.double(topic_word)) storage.mode(topic_word) <- "double"
  .Call(ffi_svi_top_rows, topic_word, as.integer(n), NULL, NULL)
}

# The word pairs the coherence measures count, for the K x n top words
# `top` (word numbers of `vocab`) on a reference over `ref_vocab`: the
# words (sorted) and each topic's pairs a < b (pairs: a, b, topic), made
# unique (ukey; ua, ub their words), with the index the counting kernel
# takes (src/eval-npmi.c): word_map (reference term -> word - 1, or -1) and
# each word's partners.
coherence_pairs <- function(top, vocab, ref_vocab) {
  K <- nrow(top)
  n <- ncol(top)
  words <- sort(unique(as.vector(top)))
  U <- length(words)
  # the reference's term indices of the words of interest (by name when both
  # have a vocabulary)
  ref_idx <- if (!is.null(vocab)) match(vocab[words], ref_vocab) else words
  word_map <- rep(-1L, length(ref_vocab))
  ok <- !is.na(ref_idx)
  if (!any(ok)) {
    abort("`reference` shares none of the topics' top words; give a reference corpus over the fitted vocabulary.",
          "vocab")
  }
  word_map[ref_idx[ok]] <- which(ok) - 1L
  # all pairs (a < b in word order) of each topic's top words, made unique
  tu <- matrix(match(top, words), K, n)
  pairs <- if (n >= 2L) {
    cmb <- utils::combn(n, 2L)
    do.call(rbind, lapply(seq_len(K), function(k) {
      a <- tu[k, cmb[1L, ]]
      b <- tu[k, cmb[2L, ]]
      cbind(pmin(a, b), pmax(a, b), k)
    }))
  } else {
    matrix(integer(0), 0L, 3L)
  }
  key <- (pairs[, 1L] - 1) * U + pairs[, 2L]
  ukey <- unique(key)
  P <- length(ukey)
  ua <- (ukey - 1) %/% U + 1
  ub <- (ukey - 1) %% U + 1
  o <- order(ua, ub)
  adj_ptr <- c(0L, cumsum(tabulate(ua, nbins = U)))
  list(words = words, pairs = pairs, key = key, ukey = ukey, ua = ua, ub = ub,
       index = list(word_map = word_map, adj_ptr = as.integer(adj_ptr),
                    adj_partner = as.integer(ub[o] - 1L), adj_pair = as.integer(o - 1L),
                    n_pairs = as.integer(P)))
}

# Documents of `reference` holding each word and each pair of
# coherence_pairs()'s index: list(doc_freq, pair_freq). A corpus on disk is
# counted batch by batch and the counts added (whole numbers: exact).
coherence_counts <- function(index, reference, threads) {
  if (!inherits(reference, "sparsevi_source")) {
    return(.Call(ffi_eval_npmi_counts, reference, index, as.integer(threads)))
  }
  out <- NULL
  for (b in seq_along(reference$files)) {
    part <- .Call(ffi_eval_npmi_counts, source_batch(reference, b), index, as.integer(threads))
    out <- if (is.null(out)) part else {
      list(doc_freq = out$doc_freq + part$doc_freq, pair_freq = out$pair_freq + part$pair_freq)
    }
  }
  out
}

# Topic diversity (Dieng, Ruiz & Blei 2020): distinct words among all
# topics' n most probable (ties by word order), over n K; from 1/K (every
# topic has the same top words) to 1. summary() reports it with n = 25.
# `topics`: a fit (a sparse one reads its store's top entries, no dense
# table) or a K x V topic-word matrix.
topic_diversity <- function(topics, n = 25L) {
  top_diversity(lda_top_words(if (is.matrix(topics)) list(topic_word = topics) else topics, n))
}

# topic_diversity() of the n x K top words `top` (lda_top_words()).
top_diversity <- function(top) length(unique(as.vector(top))) / length(top)

npmi_value <- function(p12, pa, pb) {
  out <- log(p12 / (pa * pb)) / -log(p12)
  out[p12 <= 0] <- -1
  out[p12 >= 1] <- 1
  out
}

# ---- left-to-right held-out probability (Mimno, Hoffman & Blei; src/eval-ltr.c)

#' Left-to-right held-out log probability
#'
#' Estimates the log probability of whole test documents under a fitted
#' topic model by the left-to-right sequential sampler (Wallach et al.
#' 2009; Mimno, Hoffman & Blei 2012, eq. 12), with the topics fixed at the
#' fit's `topic_word`. Each document's tokens are visited in a random order
#' (a bag of words has none); at each position the probability of the word
#' given the earlier ones is averaged over `particles` particles, each of
#' which then samples the token's topic. Usually called as
#' `heldout_loglik(fit, test, method = "left_to_right")`.
#'
#' @param fit A `sparsevi_lda` fit (any engine): its `topic_word`, `alpha`
#'   and `vocab` are used.
#' @param test Test documents: a `sparsevi_dtm` or anything [as_dtm()]
#'   accepts, or a `sparsevi_heldout` from [split_heldout()] (its observed
#'   and held-out parts are scored together, as whole documents). Aligned to
#'   the fit's vocabulary by term name; unknown terms are dropped with a
#'   message.
#' @param particles Number of particles, a whole number >= 1 (default 10).
#' @param seed `NULL` (draw from R's random number generator) or a whole
#'   number.
#' @param threads Number of threads (default `getOption("sparsevi.threads",
#'   1L)`); the result does not depend on it.
#' @param ... Ignored.
#' @returns The log probability per token over all test tokens, a number,
#'   with attributes `tokens` (number of tokens scored), `per_doc` (each
#'   document's log probability) and `doc_tokens` (each document's length),
#'   like the other [heldout_loglik()] methods.
#' @examples
#' sim <- simulate_lda(D = 30, V = 40, K = 3, doc_length = 30, seed = 1)
#' fit <- list(topic_word = sim$topic_word, alpha = 0.1,
#'             vocab = sim$dtm$vocab)
#' heldout_loglik_left_to_right(fit, sim$dtm[1:5, ], particles = 5, seed = 1)
#' @export
heldout_loglik_left_to_right <- function(fit, test, particles = 10L, seed = NULL,
                                         threads = getOption("sparsevi.threads", 1L),
                                         ...) {
  heldout_ltr(fit, test, particles, seed, threads, call = sys.call())
}

# heldout_loglik_left_to_right(), and method "left_to_right" of
# heldout_loglik(): its errors name `call`, the user's.
heldout_ltr <- function(fit, test, particles = 10L, seed = NULL,
                        threads = getOption("sparsevi.threads", 1L), ...,
                        call = caller_call()) {
  particles <- check_count(particles, "particles", min = 1, max = 1e5, call = call)
  threads <- sparsevi_threads(threads)
  store <- lda_sparse_store(fit)
  if (!is.null(store)) return(ltr_sparse(fit, store, test, particles, seed, threads, call))
  beta <- fit$topic_word
  if (!is.matrix(beta) || !is.numeric(beta) || anyNA(beta) || any(beta < 0)) {
    abort("`fit` must be a topic-model fit with a numeric K x V `topic_word` matrix.",
          "argument", call = call)
  }
  vocab <- fit$vocab %||% colnames(beta)
  dtm <- ltr_test_dtm(test, call)
  if (!is.null(vocab)) {
    al <- dtm_align(dtm, vocab)
    if (al$dropped > 0L) {
      message(sprintf("Dropped %d test terms (%s tokens) not in the fitted vocabulary.",
                      al$dropped, format(al$dropped_tokens)))
    }
    dtm <- al$x
  } else if (ncol(dtm) != ncol(beta)) {
    abort("`test` has a different vocabulary size from the fit and no term names to align by.",
          "vocab", call = call)
  }
  if (any(dtm$count != round(dtm$count))) {
    abort("Left-to-right evaluation samples a topic per token and needs whole-number counts in `test`.",
          "count", call = call)
  }
  K <- nrow(beta)
  alpha <- gibbs_alpha(fit$alpha %||% 0.1, K)
  if (length(alpha) != K) {
    abort("`fit$alpha` must have length 1 or K.", "argument", call = call)
  }
  seed <- resolve_seed(seed, call = call)
  storage.mode(beta) <- "double"
  res <- .Call(ffi_eval_ltr, dtm, ncol(beta), beta,
               list(alpha = alpha, particles = particles, stream0 = 2^52), seed, threads)
  tok <- res$tokens
  structure(sum(res$loglik) / max(1, sum(tok)), tokens = sum(tok),
            per_doc = res$loglik, doc_tokens = tok)
}

# Left-to-right for a sparse fit (issue 33): documents in blocks, each on the
# beta columns of its own words (sparse_doc_blocks()); document d keeps its
# stream (2^52 + d - 1), so the scores are those of one call on the dense
# topic_word up to the order of lambda's row sums.
ltr_sparse <- function(fit, store, test, particles, seed, threads, call) {
  dtm <- ltr_test_dtm(test, call)
  al <- dtm_align(dtm, fit$vocab)
  if (al$dropped > 0L) {
    message(sprintf("Dropped %d test terms (%s tokens) not in the fitted vocabulary.",
                    al$dropped, format(al$dropped_tokens)))
  }
  dtm <- al$x
  if (any(dtm$count != round(dtm$count))) {
    abort("Left-to-right evaluation samples a topic per token and needs whole-number counts in `test`.",
          "count", call = call)
  }
  K <- length(store$tot)
  alpha <- gibbs_alpha(fit$alpha %||% 0.1, K)
  if (length(alpha) != K) {
    abort("`fit$alpha` must have length 1 or K.", "argument", call = call)
  }
  seed <- resolve_seed(seed, call = call)
  ll <- tok <- numeric(nrow(dtm))
  for (r in sparse_doc_blocks(list(dtm), K)) {
    part <- dtm_blocks_compact(list(dtm_subset(dtm, r)))
    beta <- gibbs_store_cols(store, fit$eta, part$U, "beta")
    res <- .Call(ffi_eval_ltr, part$x[[1L]], length(part$U), beta,
                 list(alpha = alpha, particles = particles, stream0 = 2^52 + (r[1L] - 1)),
                 seed, threads)
    ll[r] <- res$loglik
    tok[r] <- res$tokens
  }
  structure(sum(ll) / max(1, sum(tok)), tokens = sum(tok), per_doc = ll, doc_tokens = tok)
}

ltr_test_dtm <- function(test, call) {
  if (inherits(test, "sparsevi_heldout")) {
    a <- as_dgCMatrix(test$observed)
    b <- as_dgCMatrix(test$heldout)
    if (!identical(test$observed$vocab, test$heldout$vocab)) {
      b <- as_dgCMatrix(dtm_align(test$heldout, test$observed$vocab)$x)
    }
    m <- a + b
    dimnames(m) <- list(test$observed$doc_names, test$observed$vocab)
    return(as_dtm(methods::as(m, "CsparseMatrix")))
  }
  as_dtm_arg(test, "test", call)
}

# ---- UMass coherence (Mimno et al. 2011; src/eval-umass.c) ----------------

#' UMass topic coherence
#'
#' For each topic, the UMass coherence of its `n` most probable words
#' v_1, ..., v_n (Mimno et al. 2011): the sum over pairs l < m of
#' log((D(v_m, v_l) + 1) / D(v_l)), where D counts the reference documents
#' containing a word (or both words). Values closer to zero are better.
#' Usually called as `coherence(fit, reference, measure = "umass")`.
#'
#' @param topic_word A K x V matrix of topic-word probabilities (rows are
#'   topics) with the vocabulary as column names, e.g. `fit$topic_word`.
#' @param reference The reference corpus: a `sparsevi_dtm` or anything
#'   [as_dtm()] accepts, aligned to `colnames(topic_word)` by term name (the
#'   training corpus is the usual choice).
#' @param n Number of top words per topic, a whole number from 2 to V
#'   (default 10).
#' @returns A `sparsevi_coherence`, the type [coherence()] returns for every
#'   measure: the coherence of each topic (a numeric vector of length K) with
#'   attributes `measure` (`"umass"`), `n`, `mean`, `top_words` (n x K matrix
#'   of the words scored, term names when `topic_word` has them) and
#'   `skipped` (per topic, pairs skipped because the higher-ranked word never
#'   occurs in `reference`).
#' @examples
#' sim <- simulate_lda(D = 50, V = 40, K = 3, doc_length = 30, seed = 1)
#' tw <- sim$topic_word
#' colnames(tw) <- sim$dtm$vocab
#' coherence_umass(tw, sim$dtm, n = 5)
#' @export
coherence_umass <- function(topic_word, reference, n = 10L) {
  coherence_umass_score(topic_word, reference, n, call = sys.call())
}

# coherence_umass(), and measure "umass" of coherence(): its errors name
# `call`, the user's.
coherence_umass_score <- function(topic_word, reference, n = 10L, call = caller_call()) {
  if (!is.matrix(topic_word) || !is.numeric(topic_word) || anyNA(topic_word)) {
    abort("`topic_word` must be a numeric K x V matrix.", "argument", call = call)
  }
  V <- ncol(topic_word)
  n <- check_count(n, "n", min = 2, max = V, call = call)
  ref <- as_dtm_arg(reference, "reference", call)
  vocab <- colnames(topic_word)
  if (!is.null(vocab)) {
    ref <- dtm_align(ref, vocab)$x
  } else if (ncol(ref) != V) {
    abort("`reference` must have the same vocabulary as `topic_word` (give `topic_word` column names to align by term).",
          "vocab", call = call)
  }
  coherence_umass_top(coherence_top(topic_word, n), vocab, ref, n, V)
}

# UMass of given top words (n x K word numbers, best first) on a reference
# over the same V words.
coherence_umass_top <- function(top, vocab, ref, n, V = length(vocab)) {
  res <- .Call(ffi_eval_umass, ref$doc_ptr, ref$term, ref$count, V, top - 1L)
  words <- if (is.null(vocab)) top else matrix(vocab[top], nrow = n)
  new_sparsevi_coherence(res$score, "umass", n, words, skipped = res$skipped)
}
