# The "gibbs" engine: Gibbs sampling within stochastic variational inference
# with sparse lazy updates (Mimno, Hoffman & Blei 2012). Kernels:
# src/lda-gibbs.c, src/lda-gibbs-global.c; glue: src/lda-gibbs-ffi.c. The
# paper's two evaluators, left-to-right held-out probability and UMass
# coherence, are in R/eval.R (src/eval-ltr.c, src/eval-umass.c).

#' Gibbs sampling within stochastic variational inference
#'
#' `fit_lda(x, K, local = "gibbs")` fits LDA by the hybrid algorithm of
#' Mimno, Hoffman & Blei (2012): for each minibatch, every document's topic
#' assignments are Gibbs-sampled given the current topics (`burnin` sweeps
#' discarded, `samples` sweeps averaged into sparse topic-word counts), then
#' the topics take a stochastic step,
#' lambda <- (1 - rho_t) lambda + rho_t (eta + (D / |B|) N_hat).
#' The topics are stored sparsely and a draw's cost grows with the number
#' of topics in the document and word, not with K: use it for many topics
#' (hundreds to thousands). Documents are sampled in parallel (`threads`);
#' the fit depends on `seed` only. Counts must be whole numbers.
#'
#' @section Controls (through `...` of [fit_lda()]):
#' - `burnin`: Gibbs sweeps discarded per document, a whole number >= 0
#'   (default 3).
#' - `samples`: sweeps averaged into the summary, a whole number >= 1
#'   (default 2). The paper finds 3 to 5 sweeps in all enough.
#' - `rescale_below`: a numerical safeguard of the sparse store, in (0, 1)
#'   (default 1e-100).
#' - `step_scale`: the s of the step size `rho_t = s (tau + t)^-kappa`
#'   (default 0.2; 1 from the empty `init = "sparse"` start and from the
#'   `"seeded"` start of large tables; see
#'   "Differences from the paper (why these defaults)").
#' - `background`: the weight \eqn{b} of a background topic, topic 1, whose
#'   prior in a document of \eqn{N_d} tokens is \eqn{\alpha + b N_d}
#'   (default 0, none; see [fit_lda()], "Background topic"). Here it takes
#'   over: on the seven corpora of `inst/bench/quality.R` at K = 20, 100
#'   and 200, `background = 0.3` brought NPMI within 0.05 of the default
#'   call's in 15 of 21 cases instead of 8, but topic 1 drew 57-99% of the
#'   tokens, most other topics died and were re-seeded every lap, and the
#'   held-out score fell in 20 cases, by up to 0.42 nats per token; 0.05
#'   and 0.15 did the same, less (`inst/bench/results/quality.txt`, "a
#'   background topic for the other engines").
#'
#' Defaults of the engine: `alpha = 0.1`, `eta = 0.2` (the paper recommends
#' eta between 0.2 and 0.5: small eta makes early random choices stick).
#' `predict(fit, newdata, method = "gibbs")` samples new documents' topics
#' with the fitted topics fixed; [heldout_loglik()] with
#' `method = "left_to_right"` and [coherence()] with `measure = "umass"` are
#' the paper's evaluations and work for any LDA fit.
#' @section Dead topics:
#' By default (`fit_lda(reuse_dead = NULL)`, which is `TRUE` here) a topic
#' that drew less than 0.1% of the tokens sampled in a lap (above K = 100,
#' a tenth of the average share, `0.1 / K`, as [dead_topics()]) is dead, and is
#' re-seeded before the next lap from one training document drawn with
#' probability proportional to its length: its topic-word counts are
#' replaced by that document's counts (over the smoothing every topic
#' shares). A topic the sampler stops drawing otherwise keeps the decayed
#' remains of what it last drew, and its top words are rare words. The share
#' counts the lap's draws, not the topic's decayed total: the step size
#' falls from lap to lap, so a new topic that documents do draw holds a
#' small total for several laps. `reuse_dead = 0.003` (a share) re-seeds
#' more (at K = 100 it cost held-out score on spamassassin),
#' `reuse_dead = FALSE` never; a one-pass fit is never re-seeded (it
#' has no lap after the first). Measured at K = 100 on seven corpora (10
#' passes): NPMI of the top ten words is within 0.05 of the default call
#' `fit_lda(x, K)` on five corpora instead of three (kos 0.113 to 0.186,
#' spamassassin 0.183 to 0.244, poliblog 0.116 to 0.123; nips and
#' moviereviews stay within), and rises but still misses on sotu (0.032 to
#' 0.061: its topics repeat rather than die) and 20,000 Wikipedia
#' paragraphs (-0.136 to 0.030); the held-out score stays within 0.005
#' nats per token or rises (spamassassin +0.11). At K = 200: kos 0.104 to
#' 0.180, spamassassin 0.131 to 0.269, poliblog 0.095 to 0.109; at K = 1000
#' on kos -0.396 to 0.184 (held-out +0.04); at K = 20 few topics die (kos
#' 0.073 to 0.120, none on poliblog and spamassassin; kos still misses by
#' 0.07). The re-seeding
#' works on the sparse store in place (no K x V table) and the fit stays
#' the same for any number of threads.
#' @section Sparse topics:
#' When K x V exceeds 2^25 entries, the fit keeps its topics as the sparse
#' store it trained with (`fit$topics_kind` is `"sparse"`, `fit$lambda` is
#' not stored): lambda = eta + scale (base + x), x the (topic, word) entries
#' sampled, word-major, with the K topic totals. [heldout_loglik()] (both
#' methods), [predict()], [terms()], `print()`, `summary()`, [coherence()],
#' `as.data.frame(fit, n = )` and `augment()` read only the entries they
#' need. Reading `fit$lambda` or `fit$topic_word` (or `coef(fit)`,
#' `tidy(fit)`, [prune_topics()]) builds the **dense** K x V table (8 bytes
#' per entry) at each read.
#' @section Differences from the paper (why these defaults):
#' Mimno, Hoffman & Blei train with minibatches of 100 documents, the step
#' size `(tau + t)^-0.6` with an offset `tau` of 3,000 or more, and random
#' initial topics. Here, by default:
#' * `tau = 1` (as for SCVB0 and OPE) and `step_scale = 0.2`: the
#'   step size is `rho_t = 0.2 (1 + t)^-0.6`, so the first step keeps 80% of
#'   the start. With `step_scale = 1` the first minibatch's step (rho = 1)
#'   replaced the start: the topics that minibatch barely sampled were left
#'   near eta, drew rare words, and many never recovered (on kos at
#'   K = 100, 42 of 100 topics held under a quarter of the mean topic
#'   size); NPMI fell far below the other engines'. On the six corpora
#'   at K = 100 (10 passes) that start from Bregman seeding, 0.2 raised
#'   NPMI on four (kos -0.096 to 0.113, moviereviews -0.270 to 0.155,
#'   spamassassin 0.045 to 0.183, nips 0.072 to 0.101) and lowered it on
#'   two (poliblog -0.009, sotu -0.019), and raised the held-out score on
#'   all six (by 0.04 to 0.17 nats per token); on kos at K = 200 NPMI rose
#'   from -0.218 to 0.104. With few topics it costs readability: at
#'   K = 5, 10 and 20 on the seven corpora, `step_scale = 1` gave higher
#'   NPMI in 18 of 21 cases and higher diversity in all 21, at a cost in
#'   held-out score in 17 (up to 0.18 nats per token;
#'   `inst/bench/results/quality.txt`, "gibbs's step size for few
#'   topics"): give `step_scale = 1` for 20 topics or fewer if topics that
#'   read well matter more than the held-out score. The `"seeded"` start
#'   of large tables keeps `step_scale = 1`:
#'   its topics are their seed documents alone, and there 0.2 cost 0.10
#'   nats per token (wikipara, 20,000 paragraphs, K = 100; NPMI -0.136 to
#'   0.047). Give `step_scale = 1` for the paper's step sizes,
#'   `tau = 3000` for the paper's smallest offset (it gave higher UMass
#'   coherence, but more dead topics);
#' * minibatches of `max(100, D / 10)` documents: give `batch_size = 100`;
#' * the start is Bregman k-means++ seeding: each topic is `eta + 1` plus
#'   the counts of one chosen document, held sparsely, so the start costs
#'   no K x V table; when K x V exceeds 2^25 entries or 4 times the
#'   corpus's tokens, the start is `init = "seeded"`, the chosen documents'
#'   counts plus `eta` without the base of 1, whose K x V pseudo-counts
#'   would hide the seed documents (on 59,000 Wikipedia paragraphs at
#'   K = 1000 the topics were then mostly rare words); `init = "random"`
#'   starts at random as in the paper (a dense K x V table);
#' * `burnin = 3` and `samples = 2` sweeps per document (the paper's 3 to 5
#'   sweeps in all); `kappa = 0.6`;
#' * `eta = 0.2`, below the value of about 0.4 that the paper found best on
#'   its corpora; the large-K default call (more than 2^28 topic-word
#'   entries) uses `eta = 0.01`, which scored higher after one pass over a
#'   large vocabulary. A smaller eta at every K trades corpora: on the
#'   seven corpora at K = 20, 100 and 200, `eta = 0.05` and `0.01` raised
#'   NPMI in 11 and 6 of 21 cases and the held-out score in 11 and 11,
#'   but cost 0.11 to 0.30 nats per token on 20,000 Wikipedia paragraphs
#'   at K = 100 and 200, and brought gibbs within 0.05 NPMI of the default
#'   call in 8 and 10 cases against 8 (`inst/bench/results/quality.txt`,
#'   "gibbs's topic-word prior eta").
#' The paper compares the hybrid with online VB whose document steps have
#' no restarts. `fit_lda(local = "vb", global = "stochastic")` runs each
#' document to convergence (`tol`, at most `max_iter` iterations) with
#' restart proposals by default: give `restarts = FALSE` for the paper's
#' baseline (both are rows of the comparison in `vignette("benchmarks")`).
#' `vignette("benchmarks")` gives the measurements behind these choices.
#'
#' @name lda_gibbs
#' @examples
#' sim <- simulate_lda(D = 60, V = 40, K = 3, doc_length = 40, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, local = "gibbs", passes = 3, batch_size = 20,
#'                burnin = 3, samples = 2, seed = 1)
#' terms(fit, 5)
#' coherence(fit, sim$dtm, measure = "umass", n = 5)
NULL

# ---- the sparse topic-word store -------------------------------------------
#
# lambda_kv = eta + scale * (base + x_kv) with x stored word-major and sparse
# (the slots of a K x V dgCMatrix: p, k = row index, x), tot = per-topic sums
# of x, scale the running product prod_t (1 - rho_t) (Appendix A, eq. 19) and
# base a part shared by every (topic, word) pair, decayed like x (the uniform
# base of the Bregman start; 0 otherwise). The sampler reads eta + scale *
# base as its smoothing, so a base costs nothing per draw.

gibbs_store_empty <- function(K, V, base = 0) {
  list(p = integer(V + 1L), k = integer(0L), x = double(0L), tot = double(K),
       scale = 1, base = as.double(base))
}

# fit_lda(init = "sparse"): the start as an empty store (lambda = eta), no
# dense K x V table.
lda_gibbs_sparse_start <- function(control, V) {
  list(topics = new_lda_topics(sparse = gibbs_store_empty(control$K, V)), t = 0L)
}

# fit_lda(init = "seeded") (issue 20): each topic is eta plus the counts of
# the document Bregman k-means++ chose for it, held as a sparse store:
# O(K + picked tokens), not O(K V). Measured on kos (3 laps, one split):
# held-out -7.657 against -7.648 of the dense bregman start at K = 100,
# -7.766 against -7.868 at K = 1000 (inst/bench/results/gibbs-k.txt); but on
# 30,000 wikipara paragraphs at K = 100 (one pass, tau = 1000) -9.73 against
# -9.27, its topics near their seed documents (UMass -760 against -523;
# inst/bench/results/paper-mimno.txt), so it is not the default.
lda_gibbs_seeded_start <- function(x0, chosen, control, V) {
  K <- control$K
  s <- lda_seed_counts(x0, chosen)
  o <- order(s$v, s$k)
  tot <- vapply(split(s$x, factor(s$k, levels = seq_len(K) - 1L)), sum, 0, USE.NAMES = FALSE)
  store <- list(p = c(0L, cumsum(tabulate(s$v + 1L, nbins = V))), k = as.integer(s$k[o]),
                x = s$x[o], tot = tot, scale = 1, base = 0)
  list(topics = new_lda_topics(sparse = store), t = 0L)
}

# fit_lda(init = "bregman"), the default (issue 20): the Bregman seeding of
# lda_init_bregman() held sparsely. There each topic is a near-uniform random
# base (Gamma(100, 100) draws, mean 1, sd 0.1) plus the counts of the
# document chosen for it, a dense K x V table whose store was half of a
# one-pass fit at K = 1000 on 1,000 kos documents (and kept every later
# minibatch dense at tau > 1). Here the base is its mean, 1, held as the
# store's shared `base`: the topics are eta + 1 + the chosen documents'
# counts, O(K + picked tokens) to build and sparse to sample; what is lost is
# the base's +-10% noise, which the chosen documents' counts dwarf.
lda_gibbs_bregman_start <- function(x0, chosen, control, V) {
  st <- lda_gibbs_seeded_start(x0, chosen, control, V)
  st$topics$sparse$base <- gibbs_bregman_base
  st
}

# The mean of lda_init_bregman()'s near-uniform base (its Gamma(100, 100)
# draws).
gibbs_bregman_base <- 1

# What a gibbs local step of the batches with words U (1-based,
# increasing) needs of the state (lda_columns(), R/lda-store.R): the sparse
# store's columns U, with the totals and the vocabulary size of the whole
# (its smoothing V eta): the same draws as on the whole store.
lda_columns_gibbs <- function(state, control, U) {
  state$topics$sparse <- gibbs_store_columns(gibbs_state_store(state, control), U)
  state$topics$lambda <- NULL
  state
}

# The columns U (1-based, increasing) of a store, for a cluster worker whose
# batches hold those words only (lda_columns_gibbs()): the
# entries of those columns, the totals of the whole store and, as a seventh
# element, its vocabulary size, which the sampler's smoothing (V eta) reads
# instead of the number of columns.
gibbs_store_columns <- function(store, U) {
  from <- store$p[U]
  n <- store$p[U + 1L] - from
  idx <- sequence(n, from = from + 1L)
  list(p = c(0L, as.integer(cumsum(n))), k = store$k[idx], x = store$x[idx], tot = store$tot,
       scale = store$scale, base = store$base %||% 0, vocab = as.double(length(store$p) - 1L))
}

# A store from a dense K x V lambda (every entry must be >= eta).
gibbs_store_from_lambda <- function(lambda, eta, call = caller_call()) {
  store <- gibbs_store_dense(lambda, eta)
  if (is.null(store)) {
    abort(paste0("The \"gibbs\" engine stores lambda - eta sparsely and needs every ",
                 "topic-word parameter lambda to be at least eta; start from ",
                 "fit_lda()'s own initialisation (init = \"bregman\" or \"random\")."),
          "engine", call = call)
  }
  store
}

# The same store, or NULL when some lambda is below eta: in C, one pass over
# lambda (issue 20: the R form, with its O(K V) temporaries, was 64% of a
# one-pass fit at K = 1000 on 1,000 kos documents); CSC slots, word-major,
# topics increasing within a word.
gibbs_store_dense <- function(lambda, eta) {
  if (!is.double(lambda)) storage.mode(lambda) <- "double"
  .Call(ffi_lda_gibbs_store_dense, lambda, as.double(eta))
}

# The pure-R form of gibbs_store_from_lambda() (the reference of its C).
gibbs_store_from_lambda_r <- function(lambda, eta) {
  nstar <- lambda - eta
  if (any(nstar < -1e-12 * pmax(1, abs(lambda)))) return(NULL)
  nstar[nstar < 0] <- 0
  K <- nrow(lambda)
  V <- ncol(lambda)
  nz <- which(nstar > 0)
  col <- (nz - 1L) %/% K
  list(p = c(0L, cumsum(tabulate(col + 1L, nbins = V))), k = as.integer((nz - 1L) %% K),
       x = as.double(nstar[nz]), tot = as.double(rowSums(nstar)), scale = 1, base = 0)
}

# Dense K x V lambda from a store.
gibbs_materialise <- function(store, eta) {
  .Call(ffi_lda_gibbs_materialise, store, as.double(eta))
}

# ---- controls -------------------------------------------------------------

# Validated engine controls; engine controls arrive through fit_lda()'s `...`
# into `control`. `background` (0) the weight of the background topic
# (topic 1's prior alpha + background x N_d; none by default, for the
# measured reason ?lda_gibbs gives); `burnin` (3) and `samples` (2) are the
# Gibbs sweeps per document (discarded, saved); `rescale_below` (1e-100)
# the threshold of the running product prod (1 - rho_t) below which the
# store is rescaled.
gibbs_control <- function(control = list(), call = caller_call()) {
  burnin <- control$burnin %||% 3L
  samples <- control$samples %||% 2L
  rescale_below <- control$rescale_below %||% 1e-100
  list(
    background = lda_check_background(control$background, 0, call = call),
    burnin = check_count(burnin, "burnin", min = 0, max = 1e4, call = call),
    samples = check_count(samples, "samples", min = 1, max = 1e4, call = call),
    rescale_below = check_number(rescale_below, "rescale_below", lower = 0,
                                 upper = 1, lower_open = TRUE, upper_open = TRUE,
                                 call = call)
  )
}

# Called by fit_lda() for local = "gibbs": checks the engine controls. (The
# sparse lazy implementation of the stochastic global step, lda_global_gibbs(),
# is chosen by the registry: lda_engine_gibbs() in R/engines.R.)
lda_gibbs_control <- function(control, call = caller_call()) {
  ctl <- gibbs_control(control, call = call)
  control[names(ctl)] <- ctl
  # the default step_scale (NA in the engine's defaults, R/engines.R)
  if (is.null(control$step_scale) || is.na(control$step_scale)) {
    control$step_scale <- gibbs_step_scale(control$init)
  }
  control
}

# The default step_scale of the engine (issue 35): 0.2 from a start that
# holds a base under its documents' counts ("bregman", "random", a given
# lambda), whose first step (rho = 0.2 at tau = 1) then keeps 80% of the
# start; 1 from the empty "sparse" start, which has nothing to keep (there
# a small step slowed the breaking of its symmetry: 3 passes on a simulated
# corpus recovered the planted topics at correlation 0.69 instead of
# 0.997), and from the "seeded" start of large tables (lda_default_init()),
# whose topics are their seed documents alone: there 0.2 cost 0.096 nats per
# token on wikipara20000 at K = 100, and the large-K default call (issue
# 33: K = 1000 readability, K = 10,000 on all of wikipara) was measured at 1.
# Measured at K = 100 on seven corpora: inst/bench/results/quality.txt.
gibbs_step_scale <- function(init) if (isTRUE(init %in% c("sparse", "seeded"))) 1 else 0.2

gibbs_alpha <- function(alpha, K) {
  if (length(alpha) == 1L) rep(as.double(alpha), K) else as.double(alpha)
}

# Stream ids of the local step: a range of 2^20 blocks per global update,
# offset from the other engines' streams.
gibbs_stream <- function(t) 2^51 + as.double(t) * 2^20

# ---- the local step -------------------------------------------------------

# The "gibbs" local step on one batch: returns list(summary = K x V
# dgCMatrix of the batch's averaged topic-word counts (not scaled),
# doc_topic = K x Db dgCMatrix of the documents' average topic counts (a
# document holds few of K topics: a dense block was 80 KB per document at
# K = 10,000), stats).
lda_local_gibbs <- function(batch, state, control, seed, threads) {
  ctl <- gibbs_control(control)
  if (any(batch$count != round(batch$count))) {
    abort("The \"gibbs\" engine samples a topic per token and needs whole-number counts; round the counts or use local = \"vb\".",
          "count")
  }
  store <- gibbs_state_store(state, control)
  K <- length(store$tot)
  alpha <- gibbs_alpha(control$alpha, K)
  res <- .Call(ffi_lda_local_gibbs, batch, length(store$p) - 1L, store,
               list(eta = as.double(control$eta), alpha = alpha, burnin = ctl$burnin,
                    samples = ctl$samples, stream0 = gibbs_stream(state$t %||% 0),
                    background = ctl$background),
               seed, as.integer(threads))
  V <- length(store$p) - 1L
  summary <- new_dgc(i = res$k, p = res$p, x = res$x, Dim = c(K, V))
  dt <- res$doc_topic
  doc_topic <- new_dgc(i = dt$k, p = dt$p, x = dt$x, Dim = c(K, length(dt$p) - 1L))
  st <- res$stats
  draws <- sum(st[1:4])
  frac <- function(i) if (draws > 0) st[i] / draws else NA_real_
  list(
    summary = summary,
    doc_topic = doc_topic,
    stats = list(
      tokens = st[6],
      word_doc_fraction = frac(1),
      word_alpha_fraction = frac(2),
      doc_fraction = frac(3),
      alpha_fraction = frac(4),
      entries_per_draw = frac(5)
    )
  )
}

# The store of a state: kept in state$topics$sparse; built from state$topics$lambda the
# first time (lambda = eta everywhere gives the empty store).
gibbs_state_store <- function(state, control) {
  if (!is.null(state$topics$sparse)) return(state$topics$sparse)
  gibbs_store_from_lambda(state$topics$lambda, control$eta)
}

# ---- re-seeding dead topics (fit_lda(reuse_dead = TRUE), issue 35) ----------
#
# A gibbs topic's counts are sampled: a topic that the documents stop
# drawing keeps only the decayed remains of earlier steps, its head the rare
# words of the few tokens it last drew. It is dead when it drew less than
# control$dead_share of the tokens sampled in the lap just ended (summed by
# lda_global_gibbs() into state$lap_tokens). Not the store's totals: the
# step size falls from lap to lap, so a re-seeded topic that the documents
# do draw still holds a small share of the decayed totals a lap later, and
# was re-seeded again (on kos at K = 100, 41 to 48 topics per lap, NPMI
# 0.160 against 0.186 by the lap's draws; inst/bench/results/quality.txt).
# Each dead topic gets the counts of a document drawn as for vb
# (lda_reuse_docs(), R/topics.R): lambda_k = eta + scale base + the
# document's counts, written into the store (its entries replaced, the
# other topics untouched; O(entries + seed tokens), no K x V table). The
# dense lambda of a small fit is then built again from the store.
lda_reuse_dead_gibbs <- function(state, x, control, lap) {
  store <- state$topics$sparse
  K <- length(store$tot)
  V <- length(store$p) - 1L
  drawn <- state$lap_tokens %||% pmax(store$tot, 0)
  state$lap_tokens <- NULL
  if (!(sum(drawn) > 0)) return(list(state = state, n = 0L))
  dead <- which(drawn / sum(drawn) < control$dead_share)
  if (!length(dead)) return(list(state = state, n = 0L))
  docs <- lda_reuse_docs(x, control, lap, length(dead))
  seed <- gibbs_seed_entries(dead, docs, K, V)
  state$topics$sparse <- .Call(ffi_lda_gibbs_reseed, store, as.integer(dead - 1L), seed)
  # the lap's end again: the dense lambda and the row sums from the new store
  state$topics$lambda <- NULL
  state <- lda_gibbs_end_lap(state, control)
  list(state = state, n = length(dead))
}

# The seed documents' counts as a K x V word-major CSC list(p, k, x) (topic
# dead[i] holds docs[[i]]), topics increasing within a word.
gibbs_seed_entries <- function(dead, docs, K, V) {
  k <- rep.int(as.integer(dead - 1L), vapply(docs, function(d) length(d$term), 1L))
  v <- unlist(lapply(docs, `[[`, "term"), use.names = FALSE)
  cnt <- as.double(unlist(lapply(docs, `[[`, "count"), use.names = FALSE))
  o <- order(v, k)
  list(p = c(0L, cumsum(tabulate(v + 1L, nbins = V))), k = k[o], x = cnt[o])
}

# The pure-R form of ffi_lda_gibbs_reseed() (the reference of its C): the
# store without the entries of the topics `dead` (1-based), with the seed's
# entries (gibbs_seed_entries()) divided by the store's scale in their place.
gibbs_store_reseed_r <- function(store, dead, seed) {
  V <- length(store$p) - 1L
  v0 <- rep.int(seq_len(V) - 1L, diff(store$p))
  keep <- !(store$k %in% (dead - 1L))
  v1 <- rep.int(seq_len(V) - 1L, diff(seed$p))
  v <- c(v0[keep], v1)
  k <- c(store$k[keep], seed$k)
  x <- c(store$x[keep], seed$x * (1 / store$scale))
  o <- order(v, k)
  K <- length(store$tot)
  tot <- vapply(split(x[o], factor(k[o], levels = seq_len(K) - 1L)), sum, 0, USE.NAMES = FALSE)
  list(p = c(0L, cumsum(tabulate(v + 1L, nbins = V))), k = as.integer(k[o]), x = x[o],
       tot = tot, scale = store$scale, base = store$base)
}

# ---- the sparse lazy global step ------------------------------------------

# lambda <- (1 - rho_t) lambda + rho_t (eta + (D / |B|) N_hat), applied
# lazily on the sparse store state$topics$sparse. The dense state$topics$lambda that the
# loop and the fitted object read is materialised at the end of each lap
# (lda_gibbs_end_lap(), once per lap, not per minibatch); within a lap it is
# NULL.
lda_global_gibbs <- function(state, res, batch_id, control) {
  ctl <- gibbs_control(control)
  store <- gibbs_state_store(state, control)
  t <- state$t %||% 0L
  rho <- step_size(t, control$tau %||% 1, control$kappa %||% 0.6, control$step_scale %||% 1)
  mult <- control$n_docs / max(1, ncol(res$doc_topic))
  S <- res$summary
  batch <- list(p = S@p, k = S@i, x = S@x)
  state$topics$sparse <- .Call(ffi_lda_global_gibbs, store, batch, as.double(rho),
                               as.double(mult), as.double(ctl$rescale_below))
  state$t <- t + 1L
  if (!is.null(state$topics$lambda)) state$topics$lambda <- NULL
  # fit_lda(reuse_dead = ): the tokens each topic drew in this lap
  # (lda_reuse_dead_gibbs() reads and resets them between laps)
  if (isTRUE(control$reuse_dead)) {
    state$lap_tokens <- (state$lap_tokens %||% 0) + Matrix::rowSums(S)
  }
  state
}

# The state with its dense lambda for whatever reads the topics (a fit, a
# held-out score), materialised from the store if the lap has not done so.
lda_gibbs_finish <- function(state, control, in_place = FALSE) {
  # (the end of training, the one finish in place: the fit keeps no count of
  # its last lap's draws, so that update() starts its own; lda_reuse_dead_gibbs())
  if (isTRUE(in_place)) state$lap_tokens <- NULL
  if (is.null(state$topics$lambda) && !is.null(state$topics$sparse)) {
    # the sparse kind: the store is the topics (lda_state_topic_word() reads
    # it without a dense table)
    if (gibbs_sparse_kind(control, state$topics$sparse)) return(gibbs_sparse_state(state, control))
    state$topics <- lda_topics_finish(state$topics, control$eta)
  }
  state
}

# Called by the loop after the last batch of each lap.
lda_gibbs_end_lap <- function(state, control) {
  if (!is.null(state$topics$sparse)) {
    if (gibbs_sparse_kind(control, state$topics$sparse)) return(gibbs_sparse_state(state, control))
    state$topics$lambda <- gibbs_materialise(state$topics$sparse, control$eta)
    # and its row sums, V (eta + scale base) + scale (the store's topic
    # totals), O(K): the fit's validation then makes no pass over lambda
    # (0.29 s of a 4.2 s one-pass call at K = 1000, V = 129,289)
    state$tot <- lda_topics_totals(state$topics, control$eta)
    state$tot_t <- state$t
  }
  state
}

# ---- the sparse kind of a fit's topics (issue 33) ---------------------------
#
# Above this many K x V entries, a gibbs fit
# keeps its topics as the sparse store alone (fit$topics_kind "sparse"): no
# dense lambda at the end of a lap or of training; whatever reads the topics
# reads the store (R/lda-class.R, R/eval.R, R/lda-methods.R). At K = 10,000
# and V = 129,289 one dense table is 10.3 GB.
gibbs_sparse_topics_above <- 2^25

# TRUE when a fit keeps the sparse kind: as the fit recorded it
# (control$sparse_topics, new_sparsevi_lda(): update() keeps the choice),
# else by size (the store gives K and V).
gibbs_sparse_kind <- function(control, store) {
  if (is.logical(control$sparse_topics)) return(isTRUE(control$sparse_topics))
  as.double(length(store$tot)) * (length(store$p) - 1) > gibbs_sparse_topics_above
}

# The state of the sparse kind: no dense lambda; lambda's row sums from the
# store's totals (O(K), as lda_gibbs_end_lap() sets them), and eta, for
# lda_state_topic_word() (R/lda-class.R) to read the store.
gibbs_sparse_state <- function(state, control) {
  state$topics <- lda_topics_finish(state$topics, control$eta, keep_sparse = TRUE)
  state$tot <- lda_topics_totals(state$topics, control$eta)
  state$tot_t <- state$t
  state$gibbs_eta <- control$eta
  state
}

# Columns U (1-based word numbers) of a store's topics without the dense
# table: what = "lambda" (the values of gibbs_materialise()), "beta" (lambda
# over its row sums) or "x" (the stored entries alone). K x length(U).
gibbs_store_cols <- function(store, eta, U, what = c("lambda", "beta", "x")) {
  mode <- match(match.arg(what), c("lambda", "beta", "x")) - 1L
  .Call(ffi_lda_gibbs_columns, store, as.double(eta), as.integer(U) - 1L, mode)
}

# The n words of largest lambda per topic of a store (n x K, 1-based, best
# first, ties by word order), with their lambda and the K row sums.
gibbs_store_top <- function(store, eta, n) {
  .Call(ffi_lda_gibbs_top, store, as.double(eta), as.integer(n))
}

# predict(method = "vb") of a sparse fit: lda_infer_vb()'s inference with the
# topics read as a store (lambda = eta' + scale x, eta' = eta + scale base,
# row sums over the whole vocabulary) at the documents' words only; the same
# digamma arguments as the dense lambda's, row sums added in another order.
lda_infer_vb_sparse <- function(fit, dtm, control, seed, threads) {
  store <- lda_sparse_store(fit)
  ctl <- lda_vb_control(fit$control)
  if (!is.null(control)) ctl[names(control)] <- control
  U <- sort(unique(dtm$term)) + 1L
  X <- gibbs_store_cols(store, fit$eta, U, "x")
  d <- dtm
  d$term <- match(dtm$term, U - 1L) - 1L
  opts <- vb_opts(ctl, 2L, fit$L, isTRUE(ctl$restarts), summary = FALSE,
                  store = c(fit$eta + store$scale * store$base, store$scale, store$tot))
  opts$vocab_size <- length(store$p) - 1L
  res <- .Call(ffi_lda_local_vb, d, length(U), X, opts, as.integer(threads), NULL)
  N <- t(res$doc_topic)
  (N + fit$alpha) / (rowSums(N) + fit$K * fit$alpha)
}

# Dense lambda of a state (materialised from the store when needed).
gibbs_state_lambda <- function(state, control) lda_topics_lambda(state$topics, control$eta)

# ---- predict(method = "gibbs") --------------------------------------------

# D x K topic proportions of new documents by the Gibbs sampler with the
# fitted topics fixed: (alpha + average N_dk over the saved sweeps) /
# (N_d + K alpha). Controls: burnin, samples, background (default: the fit's).
lda_infer_gibbs <- function(fit, dtm, control, seed, threads) {
  given <- fit$control[intersect(c("burnin", "samples", "background"), names(fit$control))]
  given[names(control)] <- control
  ctl <- gibbs_control(given)
  if (any(dtm$count != round(dtm$count))) {
    abort("The \"gibbs\" method samples a topic per token and needs whole-number counts.",
          "count")
  }
  eta <- fit$eta
  store <- lda_fit_topics(fit)$sparse
  if (is.null(store)) {
    lambda <- gibbs_fit_lambda(fit)
    store <- gibbs_store_dense(lambda, eta)
    if (is.null(store)) {
      # the sampler reads lambda as eta + non-negative counts; a fit whose
      # lambda dips below its eta in places (Online-OPE's stochastic steps
      # and re-seeded topics) is read with the largest eta that keeps every
      # count non-negative, which gives the same topics (the extra pass over
      # lambda only then)
      eta <- min(lambda)
      if (!(eta > 0)) {
        abort("This fit's topic-word parameters are not all positive, which the \"gibbs\" method needs; use `method = \"cvb0\"` or \"vb\".",
              "argument")
      }
      store <- gibbs_store_from_lambda(lambda, eta)
    }
  }
  K <- length(store$tot)
  alpha <- gibbs_alpha(fit$alpha, K)
  res <- .Call(ffi_lda_local_gibbs, dtm, length(store$p) - 1L, store,
               list(eta = as.double(eta), alpha = alpha, burnin = ctl$burnin,
                    samples = ctl$samples, stream0 = 2^50, background = ctl$background),
               seed, as.integer(threads))
  dt <- res$doc_topic
  N <- matrix(0, K, length(dt$p) - 1L)
  N[cbind(dt$k + 1L, rep.int(seq_len(ncol(N)), diff(dt$p)))] <- dt$x
  theta <- t(N + alpha)
  theta / rowSums(theta)
}

# A dense lambda for a fit of any engine (lambda, or topics scaled to the
# training tokens for point-estimate learners).
gibbs_fit_lambda <- function(fit) {
  if (!is.null(fit$lambda)) return(fit$lambda)
  fit$eta + fit$topic_word * fit$n_tokens / fit$K
}
