# Dead ("junk") topics: topics that hold almost no tokens, or repeat the top
# words of a bigger topic. Reported by print()/summary(), listed by
# dead_topics(), removed by prune_topics(), and re-seeded during training by
# fit_lda(reuse_dead = TRUE).

# Share of the tokens each topic holds (sums to 1), from the topics' sizes
# (lda_topic_sizes()) when the caller has them.
lda_topic_share <- function(fit, size = lda_topic_sizes(fit)) {
  size <- pmax(size, 0)
  if (sum(size) <= 0) return(rep(1 / fit$K, fit$K))
  size / sum(size)
}

#' Dead and duplicate topics of a topic model
#'
#' A topic is *dead* when it holds less than `min_share` of the corpus's
#' tokens (its top words are then close to the prior's, and often the same
#' as another dead topic's), and a *duplicate* when at least `overlap` of its
#' `n` top words are among the `n` top words of a bigger topic. Both are
#' "junk": [print()] and [summary()] of a fit report them, `prune_topics()`
#' removes them, and `fit_lda(reuse_dead = TRUE)` re-seeds dead topics
#' during training.
#'
#' @param fit A `sparsevi_lda`.
#' @param min_share Smallest share of the tokens a live topic holds. The
#'   default, `NULL`, is 0.001 (a tenth of a percent) up to K = 100 and a
#'   tenth of the average share, 0.1 / K, above: with 10,000 topics the
#'   average topic holds 0.01% of the tokens. For the default engine
#'   (SCVB0) it is at least 1.5 times the share a topic holds when no
#'   document uses it (see "Unused topics").
#' @param duplicates Also list duplicates of bigger topics (default `TRUE`).
#' @param n,overlap Top words compared, and the share of them in common that
#'   makes a duplicate (defaults 10 and 0.8).
#' @section Unused topics:
#' SCVB0's document step gives every topic a part of every token, so a
#' topic that no document uses does not fall to a share of 0: in a document
#' of \eqn{N_d} words it keeps about \eqn{\alpha / (N_d + K \alpha)} of each
#' token, and over \eqn{D} documents of \eqn{C} tokens in all about
#' \eqn{f = \alpha D / (C + D K \alpha)} of the corpus (the average
#' document's part). On short documents and many topics that floor is
#' large: with \eqn{\alpha} = 0.1 and K = 200, 0.06% of the tokens on 3,087
#' blog posts of 137 words, 0.15% on 19,000 Wikipedia paragraphs of 49,
#' against an average share of 0.3-0.4%; such topics' top words are
#' frequent words the documents lend every topic ("sep oct general aug"),
#' not a theme. The default `min_share` of a fit of that engine is
#' therefore at least \eqn{1.5 f}. Of the seven corpora the package is
#' measured on, at K = 200 it finds 38 such topics on those blog posts, 28
#' on 13,884 paragraphs of State of the Union addresses, 21 on the
#' Wikipedia paragraphs and 1 on 5,440 e-mails; none at K = 20 or 100, nor
#' on the three other corpora. Pruning them changed the held-out score by
#' -0.003, +0.004, +0.028 and -0.001 nats per token (package sources,
#' `inst/bench/results/quality.txt`, "unused topics"). Many unused topics
#' say that fewer topics would do.
#' The other engines' unused topics hold almost nothing (vb keeps each
#' token's L most likely topics, OPE's proportions and Gibbs's draws are
#' sparse), and 0.001 or 0.1 / K applies.
#' @returns The topic numbers (increasing), an integer vector of class
#'   `sparsevi_dead_topics` that prints as a table of each listed topic's
#'   share of the tokens and reason (`"dead"` or `"duplicate of k"`); its
#'   attributes `share` (every topic's share), `reason` and `min_share`
#'   (the share below which a topic was called dead) hold the same.
#'   It can be given to [prune_topics()] as it is.
#' @examples
#' sim <- simulate_lda(D = 80, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 8, passes = 5, seed = 1, progress = FALSE)
#' dead_topics(fit)
#' @importFrom Matrix sparseMatrix
#' @export
dead_topics <- function(fit, min_share = NULL, duplicates = TRUE, n = 10, overlap = 0.8) {
  if (!inherits(fit, "sparsevi_lda")) {
    abort("`fit` must be a topic model from fit_lda().", "argument")
  }
  min_share <- if (is.null(min_share)) lda_dead_share(fit) else
    check_probability(min_share, "min_share")
  duplicates <- check_flag(duplicates, "duplicates")
  n <- check_count(n, "n", min = 1)
  overlap <- check_probability(overlap, "overlap")
  n <- min(n, length(fit$vocab))
  lda_junk(fit, lda_topic_share(fit), if (duplicates) lda_top_words(fit, n), min_share, n,
           overlap)
}

# dead_topics() of a fit whose shares (lda_topic_share()) and n x K top
# words (lda_top_words(); NULL: no duplicates) are already at hand, with
# dead_topics()'s defaults: print() and summary() read both once for
# everything they show (at K = 1000 over 129,289 words each is a pass over
# the 1 GB table).
lda_junk <- function(fit, share, top, min_share = lda_dead_share(fit), n = nrow(top),
                     overlap = 0.8) {
  dead <- which(share < min_share)
  reason <- rep("dead", length(dead))
  if (!is.null(top)) {
    live <- setdiff(order(-share), dead)
    # each live topic's rank by size, and each word's topics (the topics
    # whose top words hold it): a topic's words in common with every bigger
    # topic come from its own words' lists, O(K n) in all (comparing every
    # pair of topics took 6 s at K = 1000)
    rank <- integer(fit$K)
    rank[live] <- seq_along(live)
    # (the words numbered among the top words alone: a factor over the whole
    # vocabulary made 129,289 levels, 0.2 s of print() at K = 1000)
    words <- unique(as.vector(top))
    key <- matrix(match(top, words), nrow = nrow(top))
    holders <- split(rep(seq_len(fit$K), each = n), factor(key, levels = seq_along(words)))
    for (i in seq_along(live)[-1L]) {
      k <- live[i]
      r <- rank[unlist(holders[key[, k]], use.names = FALSE)]
      r <- sort(r[r >= 1L & r < i])
      # the most words in common, the biggest such topic first (a bigger
      # topic with none: the biggest)
      if (length(r)) {
        runs <- rle(r)
        best <- which.max(runs$lengths)
        most <- runs$lengths[best]
        with <- live[runs$values[best]]
      } else {
        most <- 0L
        with <- live[1L]
      }
      if (most >= overlap * n) {
        dead <- c(dead, k)
        reason <- c(reason, sprintf("duplicate of %d", with))
      }
    }
  }
  o <- order(dead)
  structure(as.integer(dead[o]), share = share, reason = reason[o], min_share = min_share,
            class = "sparsevi_dead_topics")
}

# The share below which a topic counts as dead by default: 0.1% up to
# K = 100, a tenth of the average share (0.1 / K) above.
dead_share_default <- function(K) min(0.001, 0.1 / K)

# The share below which a topic of `fit` counts as dead by default
# (dead_topics(min_share = NULL), print(), summary()): dead_share_default(K),
# or, for an engine whose every token lends every topic a part of itself
# (the registry's `prior_share`: SCVB0), prior_floor_factor times the share
# an unused topic keeps (lda_prior_floor()) when that is larger.
lda_dead_share <- function(fit) {
  min_share <- dead_share_default(fit$K)
  if (isTRUE(sparsevi_engines$lda[[fit$local]]$prior_share)) {
    min_share <- max(min_share, prior_floor_factor * lda_prior_floor(fit))
  }
  min_share
}

# How far above the floor (lda_prior_floor()) a topic must be to count as
# used. Measured on the default call at K = 200 (inst/bench/results/
# quality.txt, "unused topics"): the topics under 1.5 times this estimate
# (1.5-1.6 times the exact floor) read as the documents' shared words ("oct
# sep general bush aug sun hours" on kos, "widely accepted documents manner"
# on Wikipedia paragraphs), and removing them raised the held-out score
# where there were many (sotu_chunks +0.004, wikipara20000 +0.028 nats per
# token) or cost little (kos 0.003, spamassassin 0.001).
prior_floor_factor <- 1.5

# The share of the tokens a topic that no document uses keeps under SCVB0
# (?dead_topics, "Unused topics"): in document d it takes about
# alpha / (N_d + K alpha) of each token (its count there is about 0, and its
# words' probabilities about the document's own), sum_d alpha N_d /
# (N_d + K alpha) over the C tokens in all; with the mean length C / D for
# each N_d, alpha D / (C + D K alpha): above the exact sum (N / (N + K alpha)
# is concave), by 1-7% on the shared corpora at K = 200.
lda_prior_floor <- function(fit) {
  D <- as.double(fit$n_docs)
  C <- as.double(fit$n_tokens)
  a <- mean(fit$alpha)
  if (!length(D) || !length(C) || !(D > 0) || !(C > 0) || !(a > 0)) return(0)
  a * D / (C + D * fit$K * a)
}

#' @export
print.sparsevi_dead_topics <- function(x, ...) {
  reason <- attr(x, "reason")
  share <- attr(x, "share")
  k <- as.vector(x)
  if (!length(k)) {
    cat("No dead or duplicate topics.\n")
    return(invisible(x))
  }
  dead <- reason == "dead"
  min_share <- attr(x, "min_share")
  under <- if (is.null(min_share) || !any(dead)) "" else
    sprintf("dead: under %s%% of the tokens; ", format(100 * min_share, digits = 3))
  cat(sprintf("%d dead and %d duplicate of %d topics (%sprune_topics() removes them; print(fit) says whether that costs held-out score):\n",
              sum(dead), sum(!dead), length(share), under))
  tab <- data.frame(topic = k, share = sprintf("%.2f%%", 100 * share[k]), reason = reason)
  print(tab, row.names = FALSE, right = FALSE)
  invisible(x)
}

#' Remove dead or duplicate topics from a topic model
#'
#' Returns the fit without the given topics: their rows of `topic_word` and
#' `lambda`, their columns of the training documents' `doc_topic` (rows
#' renormalised), with `K` (and `L`, if larger) reduced. Training can go
#' on with [update()]: it starts from the remaining topics with a fresh memo
#' (memoized training recomputes every batch's summary on its next lap, as
#' for new documents).
#'
#' Pruning is not free: the removed topics' share of each document goes to
#' the others, and the held-out score can fall, even for topics holding
#' under 0.1% of the tokens. [print()] of a fit with held-out documents
#' (fitted with `heldout`) measures the cost and recommends pruning
#' only when it is negligible; a fit without them is not judged, so measure
#' before you prune: `heldout_loglik(fit, test)` against
#' `heldout_loglik(prune_topics(fit), test)`.
#'
#' @param fit A `sparsevi_lda`.
#' @param topics Topic numbers to remove; default [dead_topics()]`(fit)`.
#'
#' @returns A `sparsevi_lda` with `K - length(topics)` topics, renumbered in
#'   their order; `pruned` records the removed topics' old numbers, and
#'   `prune_info` the lap after which they were pruned and the held-out
#'   score per token before and after (`NA` without held-out documents).
#'   Its `trace` is the training of the model before pruning; [update()]
#'   continues it with the pruned model.
#' @examples
#' sim <- simulate_lda(D = 80, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 8, passes = 5, seed = 1, progress = FALSE)
#' small <- prune_topics(fit)
#' small$K
#' small <- update(small, sim$dtm, passes = 2, progress = FALSE)
#' @export
prune_topics <- function(fit, topics = dead_topics(fit)) {
  if (!inherits(fit, "sparsevi_lda")) {
    abort("`fit` must be a topic model from fit_lda().", "argument")
  }
  topics <- as.vector(topics)
  if (!length(topics)) return(fit)
  if (!is.numeric(topics) || anyNA(topics) || any(topics != round(topics)) ||
      any(topics < 1 | topics > fit$K) || anyDuplicated(topics)) {
    abort(sprintf("`topics` must be distinct topic numbers from 1 to %d.", fit$K),
          "argument")
  }
  keep <- setdiff(seq_len(fit$K), topics)
  if (length(keep) < 2L) {
    abort("Pruning would leave fewer than 2 topics; fit a model with fewer topics instead.",
          "argument")
  }
  control <- fit$control
  K <- length(keep)
  # the remaining topics, as an engine's starting state (the form fit_lda()'s
  # initialisation gives every engine): their Dirichlet parameters, or for a
  # point-estimate learner its topics
  lam <- lda_fit_lambda(fit)
  lambda <- if (!is.null(lam)) lam[keep, , drop = FALSE]
            else unname(fit$topic_word[keep, , drop = FALSE])
  state <- list(topics = new_lda_topics(lambda = unname(lambda)), t = fit$state$t)
  if (lda_step(control)$memoized) state <- lda_memo_reset(state, control, K, length(fit$vocab))
  control$K <- K
  control$L <- min(control$L, K)
  if (!is.null(control$doc_topics)) control$doc_topics <- min(control$doc_topics, K)
  control$init <- "given"
  control$init_lambda <- NULL
  # without topic 1, the background topic (?fit_lda, "Background topic"), no
  # topic takes its prior when training goes on
  if (1L %in% topics && !is.null(control$background)) {
    control$background <- 0
    if (is.list(control$cvb0_settings)) control$cvb0_settings$background <- 0
  }
  out <- fit
  out$K <- K
  out$L <- control$L
  out$control <- control
  out$state <- state
  out$lambda <- if (!is.null(lam)) unname(lambda) else NULL
  # (held once, as a fit holds it: new_sparsevi_lda(); its topic_word is
  # made from it when read, a point-estimate learner's renormalised here)
  if (!is.null(out$lambda)) {
    out$state$topics$lambda <- NULL
    out$topic_word <- NULL
  } else {
    tw <- fit$topic_word[keep, , drop = FALSE]
    out$topic_word <- tw / rowSums(tw)
  }
  if (!is.null(fit$doc_topic)) {
    dt <- fit$doc_topic[, keep, drop = FALSE]
    tot <- Matrix::rowSums(dt)
    dt <- Matrix::Diagonal(x = ifelse(tot > 0, 1 / tot, 0)) %*% dt
    dt <- methods::as(dt, "CsparseMatrix")
    dimnames(dt) <- list(rownames(fit$doc_topic), paste0("topic", seq_len(K)))
    out$doc_topic <- dt
  }
  out$pruned <- c(fit$pruned, sort(topics))
  # what print() needs to stay true of the pruned model: the trace describes
  # the model before pruning (its objective is not recomputed until update()),
  # and the held-out documents, if any, are scored again here
  tr <- fit$trace
  before <- if (nrow(tr)) tr$heldout[nrow(tr)] else NA_real_
  out$prune_info <- list(
    topics = out$pruned, lap = if (nrow(tr)) max(tr$lap) else 0L,
    heldout_before = before,
    heldout_after = if (is.null(fit$heldout)) NA_real_ else
      completion_score(lda_eval_topics(out), out$alpha, fit$heldout, control$threads)
  )
  validate_sparsevi_lda(out)
}

# fit_lda(reuse_dead = TRUE), after a lap: every topic holding less than
# control$dead_share of the tokens is re-seeded from one document, drawn with
# probability proportional to its length from the fit's own stream (lap by
# lap): lambda_k = eta (each word's jittered by about 10%, so that topics
# re-seeded together differ) + the document's counts. Not the Bregman
# start's base of about one pseudo-count per word: among trained topics that
# base (V pseudo-counts, 6,906 on kos) drowned the document's few hundred
# tokens, no document took the topic, it died again in the next lap, and the
# fit ended with topics at eta whose top words were noise (kos, K = 100:
# NPMI 0.169 -> -0.124 with reuse_dead; with this seed 0.182;
# inst/bench/results/quality.txt, "vb's re-seeded topics"). Memoized training forgets the topic's cached
# statistics (its rows of S and of every batch's summary become 0), so the
# next lap's batches fill it from what the new topic explains. The gibbs
# engine's sparse store is re-seeded in its own form instead
# (lda_reuse_dead_gibbs(), R/lda-gibbs.R). Returns the state and the number
# of topics re-seeded.
lda_reuse_dead <- function(state, x, control, lap) {
  if (!is.null(state$topics$sparse)) return(lda_reuse_dead_gibbs(state, x, control, lap))
  V <- ncol(state$topics$lambda)
  size <- rowSums(state$topics$lambda) - V * control$eta
  share <- pmax(size, 0) / max(sum(pmax(size, 0)), .Machine$double.xmin)
  dead <- which(share < control$dead_share)
  if (!length(dead)) return(list(state = state, n = 0L))
  docs <- lda_reuse_docs(x, control, lap, length(dead))
  for (i in seq_along(dead)) {
    k <- dead[i]
    row <- control$eta * gamma100_quantile(lda_unif(control$seed, 5e6 + 1e4 * lap + 2 + i, V))
    w <- docs[[i]]$term + 1L
    row[w] <- row[w] + docs[[i]]$count
    state$topics$lambda[k, ] <- row
    if (!is.null(state$topics$S)) {
      state$topics$S[k, ] <- 0
      for (j in seq_along(state$cache)) {
        if (!is.null(state$cache[[j]])) state$cache[[j]][k, ] <- 0
      }
    }
  }
  list(state = state, n = length(dead))
}

# The n documents that re-seed n dead topics after lap `lap`: each drawn with
# probability proportional to its number of distinct words (long documents
# seed richer topics), from the whole corpus or, on disk, from one batch
# drawn for the lap. A list of list(term = 0-based words, count).
lda_reuse_docs <- function(x, control, lap, n) {
  if (inherits(x, "sparsevi_source")) {
    b <- 1L + floor(lda_unif(control$seed, 5e6 + lap, 1) * length(x$files))
    x <- source_batch(x, b)
  }
  lens <- diff(x$doc_ptr)
  u <- lda_unif(control$seed, 5e6 + 1e4 * lap + 1, n)
  cum <- cumsum(as.double(lens))
  lapply(seq_len(n), function(i) {
    d <- min(nrow(x), findInterval(u[i] * cum[length(cum)], cum) + 1L)
    idx <- x$doc_ptr[d] + seq_len(lens[d])
    list(term = x$term[idx], count = x$count[idx])
  })
}

# fit_lda()'s reuse_dead as a share of the tokens (0: off) for K topics; NULL
# is the engine's default (its registry entry's defaults$reuse_dead, else
# off; off too for a global step the engine cannot re-seed, e.g. ML-OPE),
# TRUE its defaults$dead_share: 0.001 when it has none, NA for
# dead_topics()'s default, dead_share_default(K) (0.001 up to K = 100, a
# tenth of the average share above).
check_reuse_dead <- function(reuse_dead, local, K, global, call = caller_call()) {
  defaults <- lda_engine_defaults[[local]]
  ok <- lda_reuse_dead_ok(local, global)
  if (is.null(reuse_dead)) reuse_dead <- ok && isTRUE(defaults$reuse_dead)
  true_share <- if (is.null(defaults$dead_share)) 0.001 else if (is.na(defaults$dead_share))
    dead_share_default(K) else defaults$dead_share
  share <- if (isFALSE(reuse_dead)) 0 else if (isTRUE(reuse_dead)) true_share else {
    check_number(reuse_dead, "reuse_dead", lower = 0, upper = 1, lower_open = TRUE,
                 call = call)
  }
  if (share > 0 && !lda_engine_can(local, "reuse_dead")) {
    can <- names(Filter(function(e) "reuse_dead" %in% e$can, sparsevi_engines$lda))
    abort(sprintf("`reuse_dead` re-seeds the topics of the %s local steps; drop it for `local = \"%s\"` (prune_topics() works for every engine).",
                  paste0('"', can, '"', collapse = ", "), local), "argument", call = call)
  }
  if (share > 0 && !ok) {
    gl <- sparsevi_engines$lda[[local]]$reuse_dead_globals
    abort(sprintf("`reuse_dead` re-seeds the topics of `local = \"%s\"` with %s only; drop it for `global = \"%s\"` (prune_topics() works for every engine).",
                  local, paste0('`global = "', gl, '"`', collapse = " or "), global),
          "argument", call = call)
  }
  share
}

# Held-out cost of pruning: the largest drop of the held-out score per token
# that print() still calls negligible.
prune_safe_drop <- 0.002

# The held-out score per token of `fit` and of `fit` without `junk`, on the
# fit's own held-out documents; NULL when it has none.
lda_prune_cost <- function(fit, junk) {
  if (!length(junk) || is.null(fit$heldout) || fit$K - length(junk) < 2L) return(NULL)
  threads <- fit$control$threads
  now <- completion_score(lda_eval_topics(fit), fit$alpha, fit$heldout, threads)
  pruned <- suppressWarnings(prune_topics(fit, junk))
  after <- pruned$prune_info$heldout_after
  list(before = now, after = after, drop = now - after)
}
