# The start of an LDA fit: the first training state, from a given table, a
# Bregman k-means++ pick of documents (the default) or random topics.

lda_init_state <- function(x, control) {
  K <- control$K
  if (control$init == "sparse") {
    # the engine holds its start itself, sparsely (gibbs: an empty store,
    # lambda = eta everywhere; the first minibatch's samples break the tie)
    return(lda_engine(control$local)$start$sparse(control, ncol(x)))
  }
  x0 <- if (control$init %in% c("bregman", "seeded")) lda_start_docs(x, control$K, control$seed)
  seeded <- lda_engine(control$local)$start[[control$init]]
  if (control$init %in% c("bregman", "seeded") && !is.null(seeded)) {
    # the engine holds the seeding itself, sparsely (gibbs: eta plus each
    # topic's chosen document, and for "bregman" a uniform base held as one
    # number, no dense K x V table)
    return(seeded(x0, lda_bregman_pick(x0, K, control$eta, control$seed), control, ncol(x)))
  }
  lambda <- switch(control$init,
    given = control$init_lambda,
    bregman = lda_init_bregman(x0, K, control$eta, control$seed),
    random = lda_init_random(x, K, control$eta, control$seed)
  )
  state <- list(topics = new_lda_topics(lambda = lambda), t = 0L)
  lda_memo_start(state, control, K, ncol(x))
}

# The start fit_lda() records and runs: a Bregman or seeded start picks K
# documents, so with fewer documents than topics it is the random start.
lda_start_kind <- function(init, D, K) {
  if (D < K && init %in% c("bregman", "seeded")) "random" else init
}

# The documents a Bregman or seeded start picks from: all of them, or, above
# bregman_pool(K), a random pool of that many (k-means++ costs O(K nnz)), in
# corpus order. A corpus on disk gives the documents the same corpus in
# memory gives: the batches that hold them are read once, each keeping only
# its own (source_docs()), so a fit from disk starts where the fit in memory
# does, whatever the batches' size. (It used to seed from the first batch,
# and from batches smaller than K at random: 9,000 Wikipedia paragraphs on
# disk in batches of 100, one pass, held-out -10.24 -> -9.77 nats per token
# at K = 1000 (12.3 -> 4.2 s, no K x V random draws), -9.58 -> -9.31 at
# K = 200, -9.18 -> -9.12 at K = 50; inst/bench/results/scale.txt, "The
# start of a fit from disk".)
lda_start_docs <- function(x, K, seed) {
  D <- nrow(x)
  idx <- if (D > bregman_pool(K)) sort(order(lda_unif(seed, 903, D))[seq_len(bregman_pool(K))])
  if (inherits(x, "sparsevi_source")) return(source_docs(x, idx))
  if (is.null(idx)) x else dtm_subset(x, idx)
}

# The start a fit takes when the caller gave no `init`: "seeded" (the chosen
# documents' counts plus eta, no random base) for an engine whose registry
# entry has a `seeded_start` rule, when the topics have more than
# rule$above entries (2^25, a 256 MB table) or when the base's
# pseudo-counts (about one per word and topic, K x V in all) would outweigh
# the corpus's tokens more than rule$ratio (4) to 1; else "bregman".
# With the base, the first minibatch barely tells the topics apart when V is
# large; without it they follow their seed documents. Measured:
# - SCVB0, one pass over 60,000 wikipara paragraphs (V = 129,289), K = 1000:
#   -8.95 nats per token seeded, -9.53 from the Bregman start (and no K x V
#   random draws: 4.1 of 15.5 CPU s of training there); K = 100, 10 laps on
#   wikipara20000 (K V / tokens = 6.4): -8.4102 against -8.4185;
#   moviereviews (2.7), the largest ratio of the six other corpora: -8.2844
#   against -8.2805, so those keep the Bregman start
#   (inst/bench/results/scvb0.txt part 6, cvb0-stop.txt);
# - gibbs (issue 33), 59,000 wikipara paragraphs (V = 85,936), K = 1000, one
#   pass, eta = 0.01: held-out -9.29 against -9.49, NPMI 0.096 against -0.390
#   (its topics were mostly rare words); K = 100, 10 laps on wikipara20000:
#   -9.18 against -9.26, NPMI -0.136 against -0.291 (quality.txt, issue 33
#   section). On the corpora below the ratio the Bregman start scored 0.02 to
#   0.10 higher for gibbs, so the rule is not "seeded everywhere".
lda_default_init <- function(local, K, V, tokens = NULL) {
  rule <- sparsevi_engines$lda[[local]]$seeded_start
  if (is.null(rule)) return("bregman")
  kv <- as.double(K) * V
  if (kv > rule$above) return("seeded")
  if (!is.null(tokens) && tokens > 0 && kv > rule$ratio * tokens) return("seeded")
  "bregman"
}

# The memo of a memoized step's start (lda_step(control)$memoized): an empty
# cache of batch summaries and objective terms, and for the dense form the
# K x V sums S (a store of sums starts empty, lda_global_memoized_lazy()).
# Any other step's state is returned as it is.
lda_memo_start <- function(state, control, K, V) {
  step <- lda_step(control)
  if (!step$memoized) return(state)
  if (identical(step$holds, "dense")) state$topics$S <- matrix(0, K, V)
  state$cache <- vector("list", control$n_batches)
  state$doc_obj <- rep(NA_real_, control$n_batches)
  state
}

# A fresh memo for memoized training that goes on from dense topics (update()
# on other documents, prune_topics()): sums S at zero in every form (a store
# of sums is made from them at its first step), an empty cache.
lda_memo_reset <- function(state, control, K, V) {
  state$topics$S <- matrix(0, K, V)
  state$cache <- vector("list", control$n_batches)
  state$doc_obj <- rep(NA_real_, control$n_batches)
  state
}


check_init_lambda <- function(init, K, V, call = caller_call()) {
  if (!is.numeric(init) || !identical(dim(init), c(as.integer(K), as.integer(V))) ||
      anyNA(init) || any(!is.finite(init)) || any(init <= 0)) {
    abort(sprintf("A matrix `init` must be K x V (%d x %s) with positive finite entries (initial topic parameters).",
                  K, fmt_int(V)), "argument", call = call)
  }
  storage.mode(init) <- "double"
  unname(init)
}


# Documents the Bregman seeding draws from: all of a corpus up to 10 per
# topic (at least 5,000), else a random pool of that many (its cost is
# O(K nnz) of the pool: at K = 1000 over 60,000 Wikipedia paragraphs the
# whole corpus took most of a one-pass fit's time).
bregman_pool <- function(K) max(5000L, 10L * as.integer(K))

# Bregman k-means++ over documents (Hughes & Sudderth section 6): the first
# document at random, each next with probability proportional to its smallest
# KL divergence from the smoothed word distributions of those chosen;
# lambda_k = the random init's near-uniform lambda plus the counts of the k-th
# chosen document (seeding lambda_k with eta + counts alone made topics so
# peaked that training stalled in poor optima on kos and nips).
lda_init_bregman <- function(x, K, eta, seed) {
  # a near-uniform base (as the random init) keeps every word in every topic
  # from the start; each topic then leans towards its chosen document
  # (the pick first: its O(V) temporaries per topic are collected before the
  # K x V table exists, not left beside it; separate streams, same result)
  chosen <- lda_bregman_pick(x, K, eta, seed)
  lambda <- lda_init_random(x, K, eta, seed)
  s <- lda_seed_counts(x, chosen)
  at <- cbind(s$k + 1L, s$v + 1L)
  lambda[at] <- lambda[at] + s$x
  lambda
}

# The counts of the documents the Bregman pick chose, topic k from the k-th:
# triples k (0-based topic), v (0-based word), x (count), topic by topic and,
# within a topic, in the document's word order. A document's words are
# distinct, so each (k, v) occurs once. Every seeded start reads them:
# lda_init_bregman(), lda_gibbs_seeded_start(), lda_cvb0_seeded_start().
lda_seed_counts <- function(x, chosen) {
  n <- x$doc_ptr[chosen + 1L] - x$doc_ptr[chosen]
  idx <- sequence(n, from = x$doc_ptr[chosen] + 1L)
  list(k = rep.int(seq_along(chosen) - 1L, n), v = x$term[idx], x = as.double(x$count[idx]))
}

# The K documents Bregman k-means++ picks (in topic order), in C through an
# inverted index: each topic costs O(D + the entries sharing a word with
# its document), not O(nnz) (issue 20: the R form below was a third of a
# one-pass gibbs fit at K = 1000 on 1,000 kos documents). The documents of
# the R form (its KL values may differ from the R form's in the last bits,
# which can change a pick only where a draw falls exactly on a boundary).
lda_bregman_pick <- function(x, K, eta, seed) {
  lens <- doc_lengths(x)
  p <- as.double(x$count / lens[rep.int(seq_len(nrow(x)), diff(x$doc_ptr))])
  self <- .Call(ffi_dtm_doc_dot, x$doc_ptr, x$term, p * log(p), rep(1, ncol(x)))
  .Call(ffi_lda_bregman_pick, x, ncol(x), as.integer(K), as.double(eta), p, self,
        as.double(lens), lda_unif(seed, 901, K))
}

# The pure-R form of lda_bregman_pick() (the reference of its C).
lda_bregman_pick_r <- function(x, K, eta, seed) {
  D <- nrow(x)
  V <- ncol(x)
  lens <- doc_lengths(x)
  doc_of <- rep.int(seq_len(D), diff(x$doc_ptr))
  p <- x$count / lens[doc_of]
  doc_dot <- function(w, v) .Call(ffi_dtm_doc_dot, x$doc_ptr, x$term, w, v)
  self <- doc_dot(p * log(p), rep(1, V)) # sum_j p_j log p_j
  u <- lda_unif(seed, 901, K)
  mind <- ifelse(lens > 0, Inf, 0)
  chosen <- integer(0)
  smooth <- eta
  # (the same values as before, without per-topic ifelse() and O(V)
  # allocations: at K = 1000 the pick was a tenth of a one-pass default fit)
  logmu <- double(V)
  for (k in seq_len(K)) {
    fin <- is.finite(mind)
    w <- if (k == 1L || !any(fin & mind > 0)) {
      as.double(lens > 0 & !(seq_len(D) %in% chosen))
    } else {
      w <- mind
      w[!fin] <- 0
      w
    }
    if (sum(w) <= 0) w <- as.double(!(seq_len(D) %in% chosen))
    if (sum(w) <= 0) w <- rep(1, D)
    d <- min(D, findInterval(u[k] * sum(w), cumsum(w)) + 1L)
    while (w[d] <= 0 && d > 1L) d <- d - 1L
    chosen <- c(chosen, d)
    idx <- (x$doc_ptr[d] + 1L):x$doc_ptr[d + 1L]
    idx <- idx[idx > x$doc_ptr[d]]
    terms <- x$term[idx] + 1L
    cnt <- x$count[idx]
    nc <- sum(cnt)
    logmu[] <- log(smooth / (nc + V * smooth))
    logmu[terms] <- log((smooth + cnt) / (nc + V * smooth))
    cross <- doc_dot(p, logmu)
    kl <- pmax(self - cross, 0)
    kl[lens == 0] <- 0
    mind <- pmin(mind, kl)
    mind[chosen] <- 0
  }
  chosen
}

# Random fallback: lambda_kv ~ Gamma(100, rate 100), near-uniform topics
# with the symmetry broken by small noise (as Hoffman et al.'s online LDA).
# The Gamma quantiles come from the Wilson-Hilferty transform of normal ones
# (abs. error < 2e-3 at shape 100): qgamma() itself took ~1 us per entry, 13 s
# for K = 100 over a 129k-term vocabulary. Filled in C in one pass
# (src/lda-init.c); gamma100_quantile() is its R reference.
lda_init_random <- function(x, K, eta, seed) {
  .Call(ffi_lda_init_random, seed, 902, as.integer(K), ncol(x), as.double(eta))
}

gamma100_quantile <- function(u) {
  c9 <- 1 / 900
  z <- pmax(1 - c9 + stats::qnorm(u) * sqrt(c9), 0)
  z * z * z
}
