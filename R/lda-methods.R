# The methods of sparsevi_lda fits: print, summary, terms, predict, plot,
# update and logLik.

#' @export
print.sparsevi_lda <- function(x, ...) {
  tr <- x$trace
  pi <- x$prune_info
  cat(sprintf("<sparsevi_lda> %d topics, %s documents, %s tokens, %s terms\n", x$K,
              fmt_int(x$n_docs), fmt_int(x$n_tokens), fmt_int(length(x$vocab))))
  cat(sprintf("  engine: %s; %d laps in %.2fs\n", lda_engine_label(x), nrow(tr),
              if (nrow(tr)) max(tr$seconds) else 0))
  # the default call chose this engine for its size (lda_default_engine())
  if (!is.null(x$control$engine_reason)) cat(sprintf("  (%s)\n", x$control$engine_reason))
  if (identical(x$topics_kind, "sparse")) {
    cat(sprintf("  topics held sparsely: %s (topic, word) entries of %s; fit$lambda and fit$topic_word build the dense K x V table when read\n",
                fmt_int(length(lda_fit_topics(x)$sparse$x)),
                fmt_int(as.double(x$K) * length(x$vocab))))
  }
  if (!is.null(x$select)) print_select(x$select, x$K)
  if (!is.null(x$ended)) {
    cat(sprintf("  training ended: %s\n", switch(x$ended,
      converged = "converged (a lap moved the ELBO by less than converge_tol; `passes` is an upper bound)",
      passes = "after the `passes` laps",
      interrupted = "interrupted (the fit of the last completed lap)",
      x$ended)))
  }
  # every figure below is of this object: after prune_topics(), the trace's
  # last row describes the model before pruning
  pruned_now <- !is.null(pi) && nrow(tr) && max(tr$lap) == pi$lap
  if (pruned_now) {
    cat(sprintf("  pruned topics %s (old numbers) after lap %d; the objective is recomputed by update()\n",
                paste(pi$topics, collapse = ", "), pi$lap))
    if (!is.na(pi$heldout_after)) {
      cat(sprintf("  held-out log-likelihood per token: %.4f (before pruning: %.4f)\n",
                  pi$heldout_after, pi$heldout_before))
    }
  } else {
    if (nrow(tr) && !is.na(tr$objective[nrow(tr)])) {
      cat(sprintf("  final objective: %s\n", format(tr$objective[nrow(tr)], digits = 10)))
    } else if (nrow(tr) && all(is.na(tr$heldout))) {
      cat(sprintf("  no objective (%s): fit with `heldout` to score each lap\n",
                  lda_no_objective_reason(x)))
    }
    if (nrow(tr) && !is.na(tr$heldout[nrow(tr)])) {
      cat(sprintf("  held-out log-likelihood per token: %.4f\n", tr$heldout[nrow(tr)]))
    }
  }
  kept <- lda_doc_topics_kept(x)
  if (!is.null(x$doc_topic) && kept < x$K) {
    cat(sprintf("  training documents' proportions (predict(fit)): the %d largest of %d per document, renormalised\n",
                kept, x$K))
  }
  # (the sizes and the top words once: dead_topics() and terms() would each
  # read the K x V table again)
  size <- lda_topic_sizes(x)
  words <- lda_top_words(x, 10L)
  junk <- lda_junk(x, lda_topic_share(x, size), words)
  top <- setdiff(order(-size), junk)[seq_len(min(5L, x$K - length(junk)))]
  # every topic under dead_topics()'s share (at K >= 1000 the average share
  # 1 / K is below it): the largest ones all the same
  if (!length(top)) top <- order(-size)[seq_len(min(5L, x$K))]
  # (the first six of each topic's ten best words are its six best: terms(x, 6))
  tt <- lda_terms_matrix(x, words[seq_len(min(6L, nrow(words))), , drop = FALSE])
  cat("  largest topics:\n")
  bg <- lda_background_topic(x)
  for (k in top) {
    cat(sprintf("   %3d (%4.1f%%%s): %s\n", k, 100 * size[k] / sum(size),
                if (identical(k, bg)) ", background" else "", paste(tt[, k], collapse = " ")))
  }
  if (!is.na(bg)) {
    cat(sprintf("  topic %d is the background topic: words common to many documents (fit_lda(background = 0) for none)\n",
                bg))
  }
  print_junk(junk, lda_prune_cost(x, junk), lda_can_suggest_reseed(x))
  invisible(x)
}

# The background topic of a fit trained with `background` > 0 (topic 1,
# ?fit_lda, "Background topic"), NA otherwise or once prune_topics()
# removed it (it then sets `background` to 0).
lda_background_topic <- function(fit) {
  b <- fit$control$background
  if (is.null(b) || !(b > 0)) NA_integer_ else 1L
}

# The engine as print() and summary() name it: the method (the registry's
# `label`), then the local and global steps; L only where the local step
# uses it (the "vb" step's top-L responsibilities).
lda_engine_label <- function(fit) {
  label <- sparsevi_engines$lda[[fit$local]]$label
  steps <- if (lda_engine_can(fit$local, "top_L")) {
    sprintf("local \"vb\" (L = %d), global \"%s\"", fit$L, fit$global)
  } else {
    sprintf("local \"%s\", global \"%s\"", fit$local, fit$global)
  }
  if (is.null(label)) steps else sprintf("%s: %s", label, steps)
}

# Why a fit's trace has no objective (its `objective` column is NA).
lda_no_objective_reason <- function(fit) {
  if (lda_engine_can(fit$local, "elbo")) {
    return(sprintf("global \"%s\" computes none; \"memoized\" and \"batch\" do", fit$global))
  }
  sprintf("%s has no training objective", sparsevi_engines$lda[[fit$local]]$label)
}

# Whether print() and summary() point to fit_lda(reuse_dead = TRUE): the
# engine can re-seed dead topics and this fit did not (gibbs does by default).
lda_can_suggest_reseed <- function(fit) {
  lda_reuse_dead_ok(fit$local, fit$global) && !isTRUE(fit$control$reuse_dead)
}

# Dead and duplicate topics, as print() and summary() report them; pruning
# is recommended only when the held-out documents show it costs (almost)
# nothing (`cost`, from lda_prune_cost(); NULL: not measured). `reseed`:
# also point to fit_lda(reuse_dead = TRUE) (lda_can_suggest_reseed()).
print_junk <- function(junk, cost = NULL, reseed = FALSE) {
  if (!length(junk)) return(invisible())
  reason <- attr(junk, "reason")
  K <- length(attr(junk, "share"))
  min_share <- attr(junk, "min_share") %||% dead_share_default(K)
  junk <- as.vector(junk)
  dead <- junk[reason == "dead"]
  dup <- junk[reason != "dead"]
  list_topics <- function(k, label = NULL) {
    shown <- utils::head(k, 12L)
    txt <- if (is.null(label)) as.character(shown) else sprintf("%d (%s)", shown, utils::head(label, 12L))
    paste0(paste(txt, collapse = ", "), if (length(k) > 12L) ", ..." else "")
  }
  if (length(dead)) {
    cat(sprintf("  dead topics (under %s%% of the tokens each): %s\n",
                format(100 * min_share, digits = 3), list_topics(dead)))
  }
  if (length(dup)) {
    of <- sub("duplicate ", "", reason[reason != "dead"])
    cat(sprintf("  duplicate topics (top words of a bigger topic): %s\n", list_topics(dup, of)))
  }
  reseed <- if (reseed && length(dead)) "; fit_lda(..., reuse_dead = TRUE) re-seeds dead topics while training" else ""
  if (is.null(cost)) {
    cat(sprintf("    prune_topics(fit) removes them, at a held-out cost not measured (fit with `heldout` to measure it)%s\n",
                reseed))
  } else if (cost$drop <= prune_safe_drop) {
    cat(sprintf("    prune_topics(fit) removes them safely: held-out score %.4f -> %.4f per token\n",
                cost$before, cost$after))
  } else {
    cat(sprintf("    pruning them would lower the held-out score by %.4f per token (%.4f -> %.4f): keep them%s\n",
                cost$drop, cost$before, cost$after, reseed))
  }
  invisible()
}

lda_topic_sizes <- function(fit) {
  # an engine may say how big its topics are (ML-OPE has no lambda)
  hook <- lda_engine(fit$local)$topic_sizes
  size <- if (!is.null(hook)) hook(fit)
  if (!is.null(size)) return(size)
  # a sparse fit: lambda's row sums less V eta from the store's totals, O(K)
  store <- lda_sparse_store(fit)
  if (!is.null(store)) return(store$scale * (length(fit$vocab) * store$base + store$tot))
  # (the row sums in C: rowSums() took 0.7 s of a 1,000 x 129,289 lambda,
  # this one pass 0.18 s)
  lam <- fit$lambda
  if (is.null(lam)) return(rep(1, fit$K))
  if (!is.matrix(lam) || !is.double(lam)) return(rowSums(lam) - length(fit$vocab) * fit$eta)
  .Call(ffi_lda_topic_totals, lam) - length(fit$vocab) * fit$eta
}

#' Summary of a topic model
#'
#' What [print()] shows, and for every topic its share of the tokens and top
#' words, with two measures of topic quality beside the held-out score:
#' * **diversity**: the share of distinct words among all topics' 25 most
#'   probable (from 1/K, every topic the same, to 1; Dieng, Ruiz & Blei
#'   2020). Computed from the topics alone.
#' * **coherence** (NPMI of each topic's 10 most probable words, see
#'   [coherence()]): it needs documents, which a fit does not keep, so it is
#'   reported when `x` is given, normally the training corpus (document
#'   co-occurrences on the training documents, as in `coherence(fit, x)`).
#'   Each topic's NPMI is then shown beside its words.
#'
#' @param object A `sparsevi_lda`.
#' @param x `NULL` (default) or a corpus (anything [as_dtm()] accepts, terms
#'   matched by name): the reference documents of the NPMI coherence,
#'   normally the training corpus; a corpus on disk ([uci_source()]) is
#'   read batch by batch.
#' @param ... Unused.
#' @returns A `summary.sparsevi_lda` (a list, printed as a table): besides
#'   the fields of the fit it describes, `diversity` (a number), `npmi` (the
#'   mean over topics, `NA` without `x`) and `coherence` (the per-topic
#'   [coherence()] result, `NULL` without `x`).
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 1, progress = FALSE)
#' summary(fit)
#' summary(fit, x = sim$dtm) # with coherence on the training documents
#' @export
summary.sparsevi_lda <- function(object, x = NULL, ...) {
  tr <- object$trace
  size <- lda_topic_sizes(object)
  # (each topic's 25 best words once, for the diversity, and their first ten
  # for the top terms and the duplicates: a pass over the K x V table each)
  top25 <- lda_top_words(object, 25L)
  words <- top25[seq_len(min(10L, nrow(top25))), , drop = FALSE]
  pi <- object$prune_info
  if (!is.null(pi) && nrow(tr) && max(tr$lap) == pi$lap) {
    # pruned since the last lap: the trace describes the model before pruning
    tr$objective[nrow(tr)] <- NA_real_
    tr$heldout[nrow(tr)] <- pi$heldout_after
  }
  out <- structure(list(K = object$K, L = object$L, local = object$local, global = object$global,
                 n_docs = object$n_docs, n_tokens = object$n_tokens, ended = object$ended,
                 laps = nrow(tr), seconds = if (nrow(tr)) max(tr$seconds) else 0,
                 objective = if (nrow(tr)) tr$objective[nrow(tr)] else NA_real_,
                 heldout = if (nrow(tr)) tr$heldout[nrow(tr)] else NA_real_,
                 restart_accept = mean(tr$restart_accept, na.rm = TRUE),
                 topic_share = size / sum(size),
                 top_terms = lda_terms_matrix(object, words),
                 junk = lda_junk(object, lda_topic_share(object, size), words),
                 prune_info = object$prune_info, select = object$select,
                 doc_topics = lda_doc_topics_kept(object)),
            class = "summary.sparsevi_lda")
  out$prune_cost <- lda_prune_cost(object, out$junk)
  out$suggest_reseed <- lda_can_suggest_reseed(object)
  out$diversity <- top_diversity(top25)
  out$coherence <- if (!is.null(x)) coherence(object, x, measure = "npmi", n = 10L)
  out$npmi <- if (is.null(out$coherence)) NA_real_ else mean(out$coherence)
  out
}

#' @export
print.summary.sparsevi_lda <- function(x, ...) {
  cat(sprintf("LDA with %d topics (%s)\n", x$K, lda_engine_label(x)))
  cat(sprintf("%s documents, %s tokens; %d laps, %.2f seconds%s\n", fmt_int(x$n_docs),
              fmt_int(x$n_tokens), x$laps, x$seconds,
              if (is.null(x$ended)) "" else sprintf(" (ended: %s)", x$ended)))
  obj <- if (!is.null(x$prune_info) && is.na(x$objective)) {
    "not recomputed since pruning"
  } else if (is.na(x$objective)) {
    sprintf("none (%s)", lda_no_objective_reason(x))
  } else {
    format(x$objective, digits = 10)
  }
  cat(sprintf("objective: %s; held-out: %s%s\n", obj, format(x$heldout, digits = 5),
              if (lda_engine_can(x$local, "restarts")) {
                sprintf("; restart acceptance: %s", format(x$restart_accept, digits = 3))
              } else ""))
  if (!is.null(x$diversity)) {
    cat(sprintf("topic quality: diversity %s (distinct words among the topics' top 25); %s\n",
                format(x$diversity, digits = 3),
                if (is.null(x$coherence)) {
                  "coherence: give the training corpus, summary(fit, x = corpus), for NPMI"
                } else {
                  sprintf("NPMI coherence %s (top 10 words, mean over topics)",
                          format(x$npmi, digits = 3))
                }))
  }
  if (!is.null(x$select)) print_select(x$select, x$K)
  o <- order(-x$topic_share)
  reason <- attr(x$junk, "reason")
  coh <- if (!is.null(x$coherence)) as.vector(unclass(x$coherence))
  for (k in o) {
    j <- match(k, x$junk)
    cat(sprintf("%3d %5.1f%%  %s%s%s\n", k, 100 * x$topic_share[k],
                if (is.null(coh)) "" else sprintf("%6.3f  ", coh[k]),
                paste(x$top_terms[, k], collapse = " "),
                if (is.na(j)) "" else sprintf("  [%s]", reason[j])))
  }
  print_junk(x$junk, x$prune_cost, isTRUE(x$suggest_reseed))
  invisible(x)
}

#' Top terms of each topic
#'
#' `type = "prob"` (default) lists each topic's most probable words. The
#' most probable words are often frequent words that several topics share;
#' the two other types, as in the stm package's `labelTopics()`, favour the
#' words that set a topic apart:
#' * `"frex"` (Bischof & Airoldi 2012): the weighted harmonic mean of a
#'   word's rank in the topic by probability (frequency, \eqn{\beta_{kv}})
#'   and by exclusivity (\eqn{\beta_{kv} / \sum_j \beta_{jv}}), each rank
#'   as an empirical CDF over the vocabulary (ties share their mean rank):
#'   \eqn{1 / (w / F + (1 - w) / E)} with `w = frexw` the weight of
#'   frequency (0.5). This is stm's `calcfrex()` without word counts, i.e.
#'   without the James-Stein shrinkage of exclusivity that `labelTopics()`
#'   adds.
#' * `"lift"`: \eqn{\beta_{kv} / p_v}, with \eqn{p_v} the word's share of
#'   the tokens of `corpus` (stm's `calclift()`), or, without `corpus`, of
#'   the fitted model (\eqn{\sum_k s_k \beta_{kv}} with \eqn{s_k} the
#'   topics' shares of the tokens). Lift ranks rare words high.
#'
#' @param x A `sparsevi_lda`.
#' @param n Number of terms per topic (default 10).
#' @param type `"prob"` (default), `"frex"` or `"lift"`.
#' @param frexw For `"frex"`: the weight of frequency, in \[0, 1\]
#'   (default 0.5; 1 gives the `"prob"` order, 0 exclusivity alone).
#' @param corpus For `"lift"`: `NULL` (the model's word shares) or the
#'   training corpus (anything [as_dtm()] accepts, terms matched by name),
#'   whose word shares are used.
#' @param threads For `"frex"`: threads sharing the topics (default
#'   `getOption("sparsevi.threads", 1L)`); the words do not depend on it.
#' @param ... Unused.
#' @returns A character matrix, `n` rows (best first), one column per
#'   topic.
#' @references Bischof, J. and Airoldi, E. (2012). Summarizing topical
#'   content with word frequency and exclusivity. *ICML*.
#'   Roberts, M., Stewart, B. and Tingley, D. (2019). stm: An R package for
#'   structural topic models. *Journal of Statistical Software* 91(2).
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 1)
#' terms(fit, 4)
#' terms(fit, 4, type = "frex")
#' terms(fit, 4, type = "lift", corpus = sim$dtm)
#' @export
terms.sparsevi_lda <- function(x, n = 10, type = c("prob", "frex", "lift"), frexw = 0.5,
                               corpus = NULL, threads = getOption("sparsevi.threads", 1L),
                               ...) {
  n <- check_count(n, "n", min = 1)
  n <- min(n, length(x$vocab))
  type <- check_choice(type, c("prob", "frex", "lift"), "type")
  idx <- switch(type,
    prob = lda_top_words(x, n),
    frex = {
      frexw <- check_number(frexw, "frexw", lower = 0, upper = 1)
      threads <- sparsevi_threads(threads)
      # frex_row() and top_by_score() below: the same words, in R
      tp <- lda_terms_topics(x)
      .Call(ffi_lda_terms_frex, tp$lambda, tp$rs, n, frexw, threads)
    },
    lift = {
      # each row's top n of topic_word[k, ] / p, one pass in C;
      # top_by_score() with tw[k, ] / p in R gives the same words
      tp <- lda_terms_topics(x)
      .Call(ffi_svi_top_rows, tp$lambda, n, lda_word_shares(x, tp$lambda, tp$rs, corpus),
            tp$rs)
    })
  lda_terms_matrix(x, idx)
}

# The topics terms() ranks: lambda with its row sums rs, the values of
# topic_word without making the K x V table (lda_fit_lambda_topics()), or
# a stored topic_word (a point-estimate learner's) as it is, rs NULL.
lda_terms_topics <- function(fit) {
  lda_fit_lambda_topics(fit) %||% list(lambda = lda_fit_topic_word(fit), rs = NULL)
}

# terms()'s n x K matrix of words from the n x K word numbers idx.
lda_terms_matrix <- function(fit, idx) {
  out <- matrix(fit$vocab[idx], ncol = fit$K)
  colnames(out) <- paste0("topic", seq_len(fit$K))
  out
}

# A fit's K x V topic-word matrix (rows sum to 1), unnamed.
lda_fit_topic_word <- function(fit) {
  tw <- .subset2(fit, "topic_word")
  if (is.null(tw)) tw <- fit$topic_word
  tw <- unname(as.matrix(tw))
  storage.mode(tw) <- "double"
  tw
}

# The n best words of each topic (n x K indices, best first, ties by word
# order) by score(tw, k, colsums), computed one topic at a time (O(V) memory
# beyond the topics): the R form of terms()'s "frex" and "lift" (the
# reference of their tests).
top_by_score <- function(tw, n, score) {
  cs <- colSums(tw)
  out <- vapply(seq_len(nrow(tw)), function(k) {
    order(-score(tw, k, cs))[seq_len(n)]
  }, integer(n))
  matrix(out, nrow = n)
}

# FREX of one topic's words (stm's calcfrex() without word counts): beta the
# topic's probabilities, colsums the column sums of the K x V topics; a word
# no topic holds (column sum 0) has exclusivity 0. The R form of
# ffi_lda_terms_frex() (src/lda-terms.c), which ranks by a radix sort: 33 ms
# a rank() here at V = 129,289, 7.9 s for terms(fit, type = "frex") at
# K = 100.
frex_row <- function(beta, colsums, w) {
  V <- length(beta)
  freq <- rank(beta, ties.method = "average") / V
  excl <- beta / colsums
  excl[colsums == 0] <- 0
  excl <- rank(excl, ties.method = "average") / V
  1 / (w / freq + (1 - w) / excl)
}

# Each word's share of the tokens: of `corpus` when given (terms matched by
# name; words absent from it get the smallest positive share), else of the
# model (topic sizes times topics, the topics tw / rs: lambda over its row
# sums, or topic_word itself when rs is NULL).
lda_word_shares <- function(fit, tw, rs = NULL, corpus = NULL, call = caller_call()) {
  if (!is.null(corpus)) {
    cx <- dtm_align(as_dtm_arg(corpus, "corpus", call), fit$vocab)$x
    cnt <- tabulate_weighted(cx$term + 1L, cx$count, length(fit$vocab))
    if (sum(cnt) <= 0) {
      abort("`corpus` shares no terms with the fitted vocabulary.", "vocab", call = call)
    }
    p <- cnt / sum(cnt)
    p[p <= 0] <- min(p[p > 0])
    return(p)
  }
  size <- lda_topic_sizes(fit)
  s <- size / sum(size)
  # colSums(topic_word * s) a block of words at a time: the same sums
  # without a K x V table (at K = 1000 on 129,289 words, 1 GB and 3 s here)
  p <- numeric(ncol(tw))
  step <- max(1L, 2^20 %/% nrow(tw))
  for (j0 in seq(1L, ncol(tw), by = step)) {
    j <- j0:min(ncol(tw), j0 + step - 1L)
    block <- tw[, j, drop = FALSE]
    if (!is.null(rs)) block <- block / rs
    p[j] <- colSums(block * s)
  }
  p[p <= 0] <- min(c(p[p > 0], 1e-300))
  p
}

tabulate_weighted <- function(i, w, n) {
  out <- numeric(n)
  if (length(i)) {
    s <- rowsum(as.double(w), i)
    out[as.integer(rownames(s))] <- s[, 1L]
  }
  out
}

# The n most probable words of each topic (indices, n x K, best first; ties
# by word order, as order() gives), by a partial sort per topic. A large fit
# that builds topic_word when read is ranked by lambda (the same order within
# a topic) without building it.
lda_top_words <- function(fit, n) {
  # a sparse fit: from the store's entries, by lambda, ties by word order
  store <- lda_sparse_store(fit)
  if (!is.null(store)) {
    n <- min(as.integer(n), length(store$p) - 1L)
    return(gibbs_store_top(store, .subset2(fit, "eta"), n)$word)
  }
  tw <- .subset2(fit, "topic_word")
  if (is.null(tw)) tw <- lda_fit_lambda(fit)
  if (!is.matrix(tw) || !is.double(tw)) {
    tw <- as.matrix(tw)
    storage.mode(tw) <- "double"
  }
  # one pass over the K x V table in C (src/select.c): apply() over its rows
  # transposed it first, 2 s of print() at K = 100 on 60,000 paragraphs
  .Call(ffi_svi_top_rows, tw, min(as.integer(n), ncol(tw)), NULL, NULL)
}

#' Document-topic proportions of new documents
#'
#' With `newdata`, infers each document's topic proportions with the fitted
#' topics held fixed: the full posterior mean, every one of the K topics.
#' Without `newdata`, returns the training documents' proportions stored on
#' the fit (`fit$doc_topic`). **These are truncated**: by default the fit
#' keeps only each document's `doc_topics = L` largest proportions,
#' renormalised to sum to 1 (8 non-zero entries per row by default). For the full
#' posterior of the training documents, fit with `doc_topics = K`, or call
#' `predict(fit, training_corpus)`; `type = "full"` asks for the full
#' posterior and is an error when the fit keeps only a truncated one.
#'
#' @param object A `sparsevi_lda`.
#' @param newdata A corpus, anything [as_dtm()] accepts. Its terms are
#'   matched to the fitted vocabulary by name; unknown terms are dropped
#'   (with a message saying how many). Missing: the training documents'
#'   proportions kept on the fit (see above).
#' @param type `"topics"` (default): D x K proportions (truncated to the
#'   kept topics when `newdata` is missing and the fit keeps fewer than K per
#'   document); `"full"`: the full posterior, every topic (without
#'   `newdata`, only from a fit with `doc_topics = K`).
#' @param method Inference method: the local step of an engine with the
#'   topics fixed, `"vb"`, `"cvb0"`, `"ope"` or `"gibbs"`. The default,
#'   `NULL`, is `"cvb0"` (SCVB0's fold-in, which also gives a default fit's
#'   kept training proportions) for fits of the SCVB0, OPE and vb engines
#'   that hold their topics as a dense `lambda`, and `"vb"` for the others
#'   (the gibbs engine, ML-OPE, sparse topics). Why: predicting the
#'   held-out words of test documents of seven corpora at K = 20, 100 and
#'   200 (`inst/bench/predict.R`), the fold-in did best of the four methods
#'   for every SCVB0 and Online-OPE fit and for 13 of 21 vb fits (at most
#'   0.013 nats per token behind vb in the others), taking 1.8 to 12 times
#'   less time than vb; for gibbs fits vb did best in 17 of 21.
#' @param seed `NULL` or a whole number, for the randomised methods (the
#'   fold-in visits each document's words in a random order). `NULL` takes
#'   one from the fit's own seed, so that the same fit predicts the same
#'   proportions every time.
#' @param threads Number of threads.
#' @param sparse `FALSE` (default): a dense matrix; `TRUE`: a sparse
#'   `dgCMatrix`.
#' @param ... Controls of the method (e.g. `max_iter`).
#' @returns A D x K matrix of topic proportions (rows sum to 1). How many
#'   topics per training document a fit keeps is `fit$control$doc_topics`
#'   (`print(fit)` says it too).
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, L = 2, passes = 3, seed = 1)
#' round(predict(fit, sim$dtm[1:3, ]), 2) # full posterior
#' head(predict(fit)) # training documents: the 2 largest per document
#' full <- fit_lda(sim$dtm, K = 3, L = 2, passes = 3, seed = 1, doc_topics = 3)
#' head(predict(full, type = "full"))
#' @export
predict.sparsevi_lda <- function(object, newdata, type = "topics", method = NULL,
                                 seed = NULL, threads = getOption("sparsevi.threads", 1L),
                                 sparse = FALSE, ...) {
  type <- check_choice(type, c("topics", "full"), "type")
  sparse <- check_flag(sparse, "sparse")
  if (missing(newdata)) {
    if (is.null(object$doc_topic)) {
      abort("This fit keeps no training-document proportions (fitted with `doc_topics = 0`, or by an older version): give `newdata`.",
            "argument")
    }
    kept <- lda_doc_topics_kept(object)
    if (type == "full" && kept < object$K) {
      abort(sprintf("This fit keeps only the %d largest of %d topic proportions per training document (`doc_topics = %d`): for the full posterior give the training documents as `newdata`, or fit with `doc_topics = K`.",
                    kept, object$K, kept), "argument")
    }
    return(if (sparse) object$doc_topic else as.matrix(object$doc_topic))
  }
  method <- if (is.null(method)) lda_predict_method(object) else check_string(method, "method")
  fun <- lda_engine(method)$infer
  if (is.null(fun)) {
    abort(sprintf("`method = \"%s\"` is not available for LDA predictions; use \"vb\".",
                  method), "argument")
  }
  # a sparse fit: vb inference reads the store's columns of the documents'
  # words (lda_infer_vb_sparse(), R/lda-gibbs.R), not a dense lambda
  if (identical(method, "vb") && !is.null(lda_sparse_store(object))) fun <- lda_infer_vb_sparse
  x <- align_newdata(as_dtm_arg(newdata, "newdata"), object$vocab)
  threads <- sparsevi_threads(threads)
  seed <- if (is.null(seed)) lda_predict_seed(object) else resolve_seed(seed)
  ctl <- list(...)
  ctl <- if (length(ctl)) ctl else NULL
  blocks <- if (method %in% c("vb", "cvb0")) predict_blocks(x, object$K) else list(NULL)
  theta <- if (length(blocks) == 1L) {
    fun(object, x, ctl, seed, threads)
  } else {
    # blocks of documents, so that Ctrl-C is answered between them (one
    # call over 10,000 documents took 9.5 s to answer); vb inference is
    # per document, and the fold-in's documents keep their random streams
    # (numbered from the block's first document), so the proportions are
    # those of one call, bit for bit
    do.call(rbind, lapply(blocks, function(r) {
      xb <- dtm_subset(x, r)
      attr(xb, "first_doc") <- r[1L] - 1L
      fun(object, xb, ctl, seed, threads)
    }))
  }
  dimnames(theta) <- list(x$doc_names, paste0("topic", seq_len(object$K)))
  if (sparse) methods::as(theta, "CsparseMatrix") else theta
}

# predict()'s method when none is given: SCVB0's fold-in for a fit of
# SCVB0, Online-OPE or vb that holds a dense lambda, vb inference for the
# rest (gibbs fits, whose topics the fold-in completed worse; sparse and
# ML-OPE fits, which hold no lambda to read). inst/bench/results/predict.txt
# has the measurements behind it.
lda_predict_method <- function(fit) {
  # (a sparse fit keeps no lambda: fit$topics_kind "sparse")
  if (is.matrix(.subset2(fit, "lambda")) && fit$local %in% c("cvb0", "ope", "vb")) "cvb0" else "vb"
}

# predict()'s seed when none is given: one drawn from the fit's seed (as the
# kept proportions' are, lda_doc_topics()), so that a fit predicts the same
# proportions every time; a fit without one draws from R's generator.
lda_predict_seed <- function(fit) {
  s <- fit$control$seed
  if (!is.numeric(s) || length(s) != 2L || anyNA(s)) return(resolve_seed(NULL))
  floor(lda_unif(s, 4e6, 2) * 4294967296)
}

# Work (document-term entries x K) per block of predict(): about 0.4 s of
# vb inference on one core.
predict_block_work <- 2e6

# The rows of `x` in consecutive blocks of about predict_block_work each
# (at least one document per block).
predict_blocks <- function(x, K) {
  D <- nrow(x)
  if (D < 2L) return(list(seq_len(D)))
  work <- as.double(diff(x$doc_ptr)) * K
  id <- pmax(1, ceiling(cumsum(work) / predict_block_work))
  id <- cumsum(c(TRUE, diff(id) != 0))
  unname(split(seq_len(D), id))
}

# How many topics per training document the fit keeps in doc_topic.
lda_doc_topics_kept <- function(fit) {
  kept <- fit$control$doc_topics
  if (is.null(kept)) kept <- min(fit$L, fit$K)
  as.integer(min(kept, fit$K))
}

align_newdata <- function(x, vocab, call = caller_call()) {
  al <- dtm_align(x, vocab)
  if (al$dropped > 0) {
    message(sprintf("%s term%s of `newdata` (%s tokens) not in the fitted vocabulary dropped.",
                    fmt_int(al$dropped), if (al$dropped == 1) "" else "s",
                    fmt_int(al$dropped_tokens)))
  }
  if (sum(x$count) > 0 && al$dropped_tokens >= sum(x$count)) {
    abort("None of the terms of `newdata` is in the fitted vocabulary: check that it comes from the same kind of corpus and tokenisation.",
          "vocab", call = call)
  }
  al$x
}

#' Plot a topic model: training trace, top words, document topics
#'
#' `type = "trace"` (the default) draws the objective (left) and the
#' held-out log-likelihood per token (right, when recorded) against seconds
#' of training; a fit with neither (SCVB0 without `heldout`) draws the
#' seconds of each lap. `type = "words"` draws the `n` most probable words of each
#' chosen topic as bar charts (x axis: the word's probability in the
#' topic). `type = "documents"` draws the topic proportions of chosen
#' documents as stacked bars, with a legend giving each topic's top words:
#' of `newdata` (inferred), or without it of the training documents (the
#' proportions kept on the fit, see [predict()][predict.sparsevi_lda]).
#' `type = "select"` (a fit with several K) draws the held-out score,
#' coherence and training time of each K, the chosen K circled.
#' @param x A `sparsevi_lda`.
#' @param type `"trace"` (default), `"words"`, `"documents"` or `"select"`.
#' @param topics For `"words"`: topic numbers (1 to K) to draw; default
#'   the (at most) six largest topics by share of the tokens, drawn largest
#'   first (the panel titles give each share).
#' @param n For `"words"`: words per topic, default 10 (1 to the vocabulary
#'   size).
#' @param newdata For `"documents"`: `NULL` (default: the training
#'   documents, from the proportions kept on the fit), or a corpus, anything
#'   [as_dtm()] accepts, aligned to the fitted vocabulary by term name.
#' @param docs For `"documents"`: document numbers or names (in `newdata`,
#'   or among the training documents); default the first (at most) eight.
#' @param n_topics For `"documents"`: how many topics (the most used in the
#'   chosen documents) get their own colour, default 6; the rest are drawn
#'   together as "other topics".
#' @param ... Passed to [graphics::plot()] (`"trace"`) or
#'   [graphics::barplot()] (`"words"`, `"documents"`).
#' @returns `x`, invisibly.
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 4, seed = 1, progress = FALSE)
#' plot(fit)
#' plot(fit, type = "words", n = 5)
#' plot(fit, type = "documents", docs = 1:5) # training documents
#' plot(fit, type = "documents", newdata = sim$dtm[1:5, ])
#' @export
plot.sparsevi_lda <- function(x, type = c("trace", "words", "documents", "select"),
                              topics = NULL, n = 10, newdata = NULL, docs = NULL,
                              n_topics = 6, ...) {
  type <- check_choice(type, c("trace", "words", "documents", "select"), "type")
  if (type == "words") return(lda_plot_words(x, topics = topics, n = n, ...))
  if (type == "select") return(lda_plot_select(x, ...))
  if (type == "documents") {
    return(lda_plot_documents(x, newdata = newdata, docs = docs, n_topics = n_topics, ...))
  }
  tr <- x$trace
  has_obj <- any(!is.na(tr$objective))
  has_ho <- any(!is.na(tr$heldout))
  n <- max(1L, has_obj + has_ho)
  old <- graphics::par(mfrow = c(1, n))
  on.exit(graphics::par(old))
  if (has_obj) {
    graphics::plot(tr$seconds, tr$objective, type = "b", xlab = "seconds",
                   ylab = "objective (ELBO)", main = "Training objective", ...)
  }
  if (has_ho) {
    # (with scores within the laps, fit_lda(heldout_every = ), all of them)
    hp <- x$learning_curve
    if (!is.null(hp) && nrow(hp)) tr <- hp
    graphics::plot(tr$seconds, tr$heldout, type = "b", xlab = "seconds",
                   ylab = "held-out log-lik per token", main = "Held-out score", ...)
  }
  if (!has_obj && !has_ho) {
    # nothing to watch but time: seconds per lap (not cumulative), with a
    # word on how to get a score
    per_lap <- diff(c(0, tr$seconds)) # the trace's seconds are cumulative
    graphics::plot(tr$lap, per_lap, type = "h", lwd = 8, lend = 1, col = "grey55",
                   xlab = "lap", ylab = "seconds", ylim = c(0, max(per_lap, 1e-3) * 1.08),
                   xaxt = "n", main = "Training time per lap", ...)
    graphics::axis(1, at = tr$lap)
    graphics::mtext(sprintf("no objective (%s): fit with `heldout` to plot a held-out score per lap",
                            lda_no_objective_reason(x)), side = 3, line = 0.2, cex = 0.75)
  }
  invisible(x)
}

#' Continue training a topic model
#'
#' @param object A `sparsevi_lda`.
#' @param x The corpus (for memoized training, the same documents as the
#'   fit; other documents start a new memo from the fitted topics).
#' @param passes Number of further laps (default 5).
#' @param progress Print a line per lap.
#' @param heldout As in [fit_lda()]. Missing (the default): the held-out
#'   documents given when the model was fitted (its `heldout`), scored
#'   after every lap again; `NULL` to score none.
#' @param cluster `NULL`, workers from [sparsevi_workers()] or a cluster
#'   from [parallel::makePSOCKcluster()], as in [fit_lda()]; the rounds are
#'   those of the fit (its `sync`).
#' @param heldout_every As in [fit_lda()]. Missing (the default): the
#'   fit's own setting when held-out documents are scored; `NULL` for none.
#'   The new scores are added to `learning_curve`.
#' @param ... Nothing else: any other argument (a misspelt one, or a setting
#'   of the model such as `alpha`) is an error of class
#'   `sparsevi_error_argument`.
#' @returns The updated `sparsevi_lda`; its trace continues the old one.
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 2, seed = 1)
#' fit <- update(fit, sim$dtm, passes = 2)
#' fit$trace
#' @export
update.sparsevi_lda <- function(object, x, passes = 5, progress = interactive(),
                                heldout, cluster = NULL, heldout_every, ...) {
  check_update_dots(..., valid = c("x", "passes", "progress", "heldout", "cluster",
                                   "heldout_every"))
  if (missing(x)) {
    abort("`x`, the corpus to continue training on, is missing (the fit does not keep its documents).",
          "argument")
  }
  cluster <- check_cluster(cluster)
  if (inherits(x, "sparsevi_source")) {
    if (!identical(x$vocab, object$vocab)) {
      abort("`x`, a corpus on disk, must have the fitted vocabulary.", "vocab")
    }
    if (source_n_steps(x$n_docs, object$control$batch_size) != object$control$n_batches ||
        (!is.null(object$control$source_batches) &&
         !identical(source_batches_key(x), object$control$source_batches))) {
      abort("`x`, a corpus on disk, must have the batches the model was fitted on: the same uci_source() call (its `batch_size`, `shuffle` and `seed`).",
            "argument")
    }
  } else {
    x <- align_newdata(as_dtm(x), object$vocab)
  }
  passes <- check_count(passes, "passes", min = 1)
  progress <- check_flag(progress, "progress")
  if (missing(heldout)) heldout <- object$heldout
  heldout <- if (is.null(heldout)) NULL else as_heldout(heldout, object$vocab, seed = 1)
  # (the fit's own setting, unless given; it needs held-out documents)
  if (missing(heldout_every)) {
    heldout_every <- if (!is.null(heldout)) object$control$heldout_every
  }
  heldout_every <- lda_check_heldout_every(heldout_every, heldout)
  state <- lda_state_topics(object$state)
  control <- object$control
  control$heldout_every <- heldout_every
  if (!is.null(state$cache) && control$n_docs != nrow(x)) {
    # new documents: a fresh memo, starting from the fitted topics
    control$n_docs <- nrow(x)
    b <- lda_resolve_batches(nrow(x), control$global, NULL,
                             if (lda_step(control)$one_batch) NULL else control$batch_size)
    control$n_batches <- b$n_batches
    control$batch_size <- b$batch_size
    state <- lda_memo_reset(state, control, control$K, ncol(x))
  }
  control$n_docs <- nrow(x)
  object$control <- control
  object$state <- state
  fit <- lda_train(object, x, passes, progress, heldout, cluster)
  n_keep <- if (is.null(control$doc_topics)) min(control$L, control$K) else control$doc_topics
  lda_keep(fit, x, heldout, n_keep)
}

#' Log-likelihood of a topic model
#'
#' Without `newdata`, the score the fit itself can give: the training
#' objective (the ELBO, a lower bound on the log-likelihood of the training
#' documents) for memoized or batch training with `local = "vb"`; otherwise
#' the held-out log-likelihood of the documents given as `heldout` to
#' [fit_lda()]. A fit with neither (e.g. the default SCVB0 fit without
#' `heldout`) has no such score: an error of class `sparsevi_error_loglik`
#' says what to call. With `newdata`, the held-out log-likelihood of those
#' documents by document completion, as [heldout_loglik()] computes it.
#'
#' @param object A `sparsevi_lda`.
#' @param newdata Test documents: a `sparsevi_heldout` from
#'   [split_heldout()], or a corpus (then split into observed and held-out
#'   words as [heldout_loglik()] does).
#' @param ... Passed to [heldout_loglik()] with `newdata` (e.g. `seed`,
#'   `observed_frac`).
#' @returns A `logLik` object: the total log-likelihood, with attributes
#'   `nobs` (the tokens scored), `df` (K (V - 1)), `type` (`"objective"` or
#'   `"heldout"`) and `per_token`.
#' @examples
#' sim <- simulate_lda(D = 80, V = 40, K = 3, seed = 1)
#' sp <- split_heldout(sim$dtm, test_frac = 0.2, seed = 1)
#' fit <- fit_lda(sp$train, K = 3, passes = 3, seed = 1, progress = FALSE)
#' logLik(fit, sp$test)
#' vb <- fit_lda(sp$train, K = 3, local = "vb", passes = 3, seed = 1, progress = FALSE)
#' logLik(vb) # the ELBO
#' @export
logLik.sparsevi_lda <- function(object, newdata, ...) {
  df <- object$K * (length(object$vocab) - 1)
  heldout_ll <- function(score) {
    tokens <- attr(score, "tokens")
    structure(as.numeric(score) * tokens, df = df, nobs = tokens, type = "heldout",
              per_token = as.numeric(score), class = "logLik")
  }
  if (!missing(newdata)) return(heldout_ll(heldout_loglik(object, newdata, ...)))
  tr <- object$trace
  val <- if (nrow(tr)) tr$objective[nrow(tr)] else NA_real_
  pi <- object$prune_info
  # pruned since the last lap: the trace's objective is the unpruned model's
  if (!is.null(pi) && nrow(tr) && max(tr$lap) == pi$lap) val <- NA_real_
  if (!is.na(val)) {
    return(structure(val, df = df, nobs = object$n_tokens, type = "objective",
                     per_token = val / object$n_tokens, class = "logLik"))
  }
  if (!is.null(object$heldout)) {
    return(heldout_ll(completion_score(lda_eval_topics(object), object$alpha, object$heldout,
                                       object$control$threads, details = TRUE)))
  }
  why <- if (!is.null(pi) && nrow(tr) && max(tr$lap) == pi$lap) {
    "its objective is not recomputed since prune_topics(); update() does"
  } else {
    lda_no_objective_reason(object)
  }
  abort(sprintf("This fit has no log-likelihood of its own (%s) and no held-out documents. Score test documents with `logLik(fit, newdata)` or `heldout_loglik(fit, test)` (from split_heldout()), or fit with `heldout`.",
                why), "loglik")
}

#' Model generics of a topic model: fitted proportions, coefficients, nobs
#'
#' The model-fit generics of R's stats package, for an LDA fit.
#' `fitted()` gives the training documents' topic proportions, as
#' `predict(fit)` does (the largest `doc_topics` per document that the fit
#' keeps); `coef()` the topic-word distributions `fit$topic_word` (K x V,
#' rows sum to 1); `nobs()` the number of training tokens, the observations
#' of the likelihood (as `logLik()`'s `nobs`; the documents are
#' `fit$n_docs`). A topic model has no residuals: `residuals()` is an error
#' that says how to judge the fit instead ([heldout_loglik()],
#' [coherence()], `logLik()`).
#'
#' @param object A `sparsevi_lda` fit.
#' @param ... Passed to `predict()` by `fitted()` (e.g. `sparse = TRUE`);
#'   unused by the others.
#' @returns `fitted()`: a D x K matrix of proportions; `coef()`: a K x V
#'   matrix; `nobs()`: a whole number.
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, passes = 3, seed = 1, progress = FALSE)
#' head(fitted(fit))
#' dim(coef(fit))
#' nobs(fit)
#' @name lda_generics
#' @importFrom stats coef residuals
#' @export
fitted.sparsevi_lda <- function(object, ...) {
  if (is.null(object$doc_topic)) {
    abort("This fit keeps no training-document proportions (fitted with `doc_topics = 0`): call predict(fit, newdata = <the training documents>) for them.",
          "method")
  }
  predict(object, ...)
}

#' @rdname lda_generics
#' @export
coef.sparsevi_lda <- function(object, ...) {
  object$topic_word
}

#' @rdname lda_generics
#' @export
nobs.sparsevi_lda <- function(object, ...) {
  object$n_tokens
}

#' @rdname lda_generics
#' @export
residuals.sparsevi_lda <- function(object, ...) {
  abort("A topic model has no residuals. To judge the fit use heldout_loglik(fit, test) (held-out log-likelihood per token), coherence(fit, x) or logLik(fit); fitted(fit) gives the document-topic proportions.",
        "method")
}
