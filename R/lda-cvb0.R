# The SCVB0 engine (Foulds et al. 2013): local step "cvb0", its global step
# and the fold-in used by predict(method = "cvb0"). notes/math.md §4.
# The C lives in src/lda-cvb0.c (kernels) and src/lda-cvb0-ffi.c (glue).

#' Stochastic collapsed variational Bayes (SCVB0) for LDA
#'
#' `fit_lda(x, K)` runs SCVB0 (Foulds, Boyles, DuBois, Smyth and Welling
#' 2013, Algorithm 2 with the clumping of eq. 9), the default engine
#' (`local = "cvb0"`, `global = "stochastic"`). For each minibatch of 100
#' documents, every document's topic counts are updated word type by word
#' type with a document step size
#' \eqn{\rho^\Theta_t = s_d (\tau_d + t)^{-\kappa_d}}; a final pass adds the
#' words' responsibilities to a minibatch estimate of the topic statistics,
#' which the topics average in with \eqn{\rho^\Phi_t = s (\tau + t)^{-\kappa}}.
#' A minibatch's cost does not grow with the vocabulary. SCVB0 has no
#' training objective: give `heldout` to [fit_lda()] to watch a held-out
#' score per lap.
#'
#' The engine's settings are passed through the `...` of [fit_lda()]:
#' * `doc_s` (default 1), `doc_tau` (4), `doc_kappa` (0.9): the document
#'   step schedule; `doc_s / doc_tau^doc_kappa` must be at most 1.
#' * `background`: the weight of the background topic, topic 1, whose
#'   prior in a document of \eqn{N_d} words is \eqn{\alpha + b N_d}
#'   instead of \eqn{\alpha}; default \eqn{K / 200} within 0.3 to 0.5 up
#'   to K = 200, fading above as \eqn{0.5 (500 - K) / 300} to 0 (none, the
#'   paper's model) from K = 500 on. See "Topic quality".
#' * `doc_start`: where each document's topic counts start: `"topics"`
#'   (default) the responsibilities of its words under the current topics,
#'   summed; `"random"` random counts (the paper's); `"uniform"` equal
#'   counts.
#' * `burnin`: burn-in passes over each document before the pass that
#'   updates the topics, 0 to 100, default 0.
#' * `shuffle`: visit each document's words in a random order on every pass
#'   (default `TRUE`).
#' * `infer_passes`: passes over a new document in `predict(fit, newdata)`
#'   (method `"cvb0"`, the default for SCVB0, OPE and vb fits), 1 to 1000,
#'   default 10.
#' * `sparse_rest`: with [fit_lda()]'s `L` below K, how a word's
#'   responsibilities beyond its most likely topics reach the summary:
#'   `"shape"` (default), `"sample"` or `"renormalise"` (see "Sparse
#'   summaries").
#'
#' The fit depends on `seed`
#' and not on `threads`: training gives each thread a range of consecutive
#' documents of the minibatch (each document draws from its own random
#' stream), keeps a word's share apart when an earlier range holds the word
#' too, and adds those shares in document order at the end, as one thread
#' would; the topic update is shared by topics. `predict(fit, newdata)`
#' (method `"cvb0"`, its default for SCVB0, OPE and vb fits) runs the same
#' document updates with the topics fixed, from a seed drawn from the fit's, and
#' returns \eqn{(N^\Theta_d + \alpha) / (N_d + K \alpha)}. The training documents'
#' proportions (`doc_topic`) come from the last lap's document statistics.
#'
#' @section Differences from the paper:
#' The minibatch size, priors (`alpha = 0.1`, `eta = 0.01`), document
#' schedule and clumping follow Foulds et al. Three choices differ by
#' default, each chosen by held-out score (`vignette("benchmarks")`):
#' * the topic schedule is \eqn{(1 + t)^{-0.6}}, not the paper's
#'   \eqn{10 (1000 + t)^{-0.9}}, whose small first steps leave the random
#'   start outweighing the data for hundreds of minibatches when K x V is
#'   large; give `step_scale = 10, tau = 1000, kappa = 0.9` for the
#'   paper's;
#' * `burnin = 0`: no burn-in pass (the paper used one; over several laps
#'   it lowered the held-out score);
#' * each document's topic counts start from its words' responsibilities
#'   under the current topics (`doc_start = "topics"`), not at random, and
#'   the document steps start larger (`doc_tau = 4`, the paper's 10): see
#'   "Topic quality";
#' * topic 1 is a background topic (`background`, see "Topic quality");
#'   the paper's model has none (`background = 0`);
#' * the topic step counter \eqn{t} counts minibatches (global steps), not
#'   documents;
#' * the topics start from Bregman k-means++ seeding over documents;
#'   `init = "random"` starts at random as the paper does. When K x V
#'   exceeds 2^25 entries or 4 times the corpus's tokens, the default start
#'   is `init = "seeded"`: the seed documents' counts plus `eta`, without
#'   the random base that would outweigh the data.
#'
#' @section Topic quality:
#' Each document's words are visited once, and a word's responsibilities
#' come from the document's topic counts as they stand when it is visited.
#' Frequent words then spread their expected counts over many topics and
#' head several of them. Two defaults counter this.
#'
#' *The background topic.* Topic 1 has the prior
#' \eqn{\alpha + b N_d} in a document of \eqn{N_d} words (`background` =
#' \eqn{b}), so every document lends it about \eqn{b / (1 + b)} of its
#' words, and the words common to many documents gather there instead of
#' heading the other topics. It holds a large share of the tokens (27-72%
#' on the corpora we measured): [print()] marks it, and a document's main
#' topic is the largest of its other proportions. Measured with
#' `inst/bench/quality.R` (`inst/bench/results/quality.txt`, "a background
#' topic") on seven corpora at K = 20, 100 and 200 against `background =
#' 0`: topic diversity (distinct words among the topics' top 25) rose in
#' all 21 cases (by 0.08-0.43), NPMI coherence in 15 (it moved by -0.05 to
#' +0.06), and the held-out score fell in 20 (by up to 0.16 nats per
#' token). Above K = 200 its weight fades, to none from K = 500 on: at
#' K = 300 and 400 (\eqn{b} = 1/3 and 1/6) against none, diversity rose in
#' all 14 cases (by 0.02-0.17), NPMI in 10 (it moved by -0.03 to +0.04;
#' it fell on the Wikipedia paragraphs) and the held-out score fell in 12
#' (by up to 0.16); at K = 500 and 1000 a background of 0.3 lowered NPMI
#' on the Wikipedia paragraphs by 0.06 and 0.03 (at K = 1000 on 59,000
#' paragraphs, 0.5 lowered it by 0.05 after ten laps; "the background above
#' K = 200" in the same file). On documents without common words, such as
#' those of [simulate_lda()], topic 1 takes the place of a real topic: give
#' `background = 0` there.
#'
#' *The start.* Each document's topic counts start from its words'
#' responsibilities under the current topics (`doc_start = "topics"`), so
#' every word has the document's context from the first word on:
#' against the paper's random start, diversity rose in 14 of 15 cases (by
#' up to 0.15), NPMI in 12, the held-out score in 10.
#' `doc_start = "random", doc_tau = 10, background = 0` gives the
#' paper's document update. A burn-in pass (`burnin = 1`) sharpens further
#' at a cost in held-out score (0.03-0.35 nats per token on five of seven
#' corpora).
#'
#' *Many topics.* At K = 200 the frequent words still head several small
#' topics: every topic takes a share of every token in the topic update,
#' and in a small topic those shares outweigh its own words. `L = 8,
#' sparse_rest = "renormalise"` keeps only each token's 8 most likely
#' topics in the update (see "Sparse summaries"). On seven corpora at K =
#' 200 diversity then rose on six (0.46 to 0.56 on kos), and the ten most
#' frequent words each sat among the top ten words of 1.4 to 3 times fewer
#' topics on five; but the held-out score fell on all seven (by 0.02 to
#' 0.29 nats per token, most on the shortest documents) and a fit took 2
#' to 3 times the CPU time, so it is not the default.
#' To label topics by the words that set them apart, use
#' `terms(fit, type = "frex")`; `summary(fit, x = corpus)` reports
#' diversity and NPMI coherence.
#'
#' @section Sparse summaries:
#' Give `L` (below K) to [fit_lda()] and each (document, word) entry of a
#' minibatch adds at most `L` values to the minibatch's summary, instead
#' of its count times all K responsibilities. With `sparse_rest = "shape"`
#' (default) an entry keeps its `L` most likely topics exactly and gives
#' the rest of its count as one number, which the topic update spreads
#' over the other topics in proportion to the word's current topics (what
#' the entry would give them if its document's counts were equal across
#' those topics, where they are mostly near 0); a word with K / `L` or more
#' entries in the minibatch, whose column holds all K topics anyway, adds
#' its exact responsibilities. With `"sample"` an entry keeps its `L - 1`
#' most likely topics and puts the rest of its count on one other topic,
#' drawn in proportion (right on average); with `"renormalise"` its `L`
#' most likely topics, scaled up to its whole count. The documents' own
#' topic counts still use all K. The summary is what a cluster's workers
#' send back ([sparsevi_cluster]): at K = 1000 over Wikipedia paragraphs,
#' `L = 32` sends about a tenth of the dense summary's bytes; at K = 100
#' it saves little (0.7 to 1.2 times the dense bytes at `L = 32`), since a
#' minibatch's words there mostly have K / `L` entries or more.
#' Measured (`inst/bench/results/cvb0-sparse.txt`): at K = 100, 10 laps,
#' on seven corpora, `"shape"` with `L = 32` scored within 0.003 nats per
#' token of the dense summary (one corpus 0.013 above it), `L = 16` within
#' 0.025; `"sample"` lost 0.007 to 0.05 at `L = 32` and 0.01 to 0.08 at
#' `L = 16`. One pass over 60,000 Wikipedia paragraphs at K = 1000:
#' `"shape"`, `L = 32`, 0.011 below the dense summary; `"sample"` 0.19
#' below. On one thread an `L` below K costs time (choosing each entry's
#' topics): at K = 100 3.4 to 7.9 times the dense fit's CPU time, at
#' K = 1000 about twice. So the default stays dense
#' (`L` not given, or `L = K`, gives the same fit as before, bit for bit).
#'
#' @name scvb0
#' @references Foulds, J., Boyles, L., DuBois, C., Smyth, P. and Welling, M.
#'   (2013). Stochastic collapsed variational Bayesian inference for latent
#'   Dirichlet allocation. *KDD*.
#' @examples
#' sim <- simulate_lda(D = 200, V = 100, K = 3, doc_length = 60, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, local = "cvb0", global = "stochastic",
#'                passes = 5, seed = 1, threads = 1, progress = FALSE)
#' terms(fit, 5)
#' round(predict(fit, sim$dtm[1:3, ], method = "cvb0", seed = 1), 2)
NULL

# Engine defaults: the paper's priors, minibatches and document schedule; the
# topic schedule rho_t = (1 + t)^-0.6 and no burn-in pass were chosen by
# held-out score on every corpus of ../shared/data (inst/bench/scvb0.R,
# part 6; results/scvb0.txt). The document start ("topics", with doc_tau = 4
# instead of the paper's random start and 10) was chosen on diversity, NPMI
# and held-out score over the seven corpora at K = 20, 100 and 200
# (inst/bench/quality.R; results/quality.txt, the section of 2026-11-26):
# doc_tau = 10 with this start sharpened more but cost up to 0.12 nats per
# token (sotu_chunks), doc_tau = 1 or 2 undid most of the diversity gain.
# The paper's s = 10, tau = 1000, kappa = 0.9
# starts at rho = 0.02 and so keeps most of the (arbitrary) start for
# hundreds of minibatches (-11.7 against -9.9 nats per token at K = 1000
# after one pass of 10 minibatches); a burn-in pass adds each word's own
# responsibility to the document state its summary is computed from, and the
# held-out score then falls lap after lap (sotu_chunks).
cvb0_defaults <- list(alpha = 0.1, eta = 0.01, batch_size = 100L, s = 1,
                      tau = 1, kappa = 0.6, doc_s = 1, doc_tau = 4,
                      doc_kappa = 0.9, burnin = 0L, shuffle = TRUE,
                      doc_start = "topics", background = function(K) cvb0_background(K),
                      infer_passes = 10L, L = NA_integer_,
                      sparse_rest = "shape")

# The default background of K topics (?scvb0, "Topic quality"): K / 200
# within [0.3, 0.5] up to K = 200, then 0.5 (500 - K) / 300, none from
# K = 500 on (no step in K, so fits of neighbouring K, as select() compares,
# differ by little). Measured with
# inst/bench/quality.R on the seven corpora at K = 20, 100 and 200
# (results/quality.txt, "a background topic"): 0.5 at K = 100 met the
# issue-35 targets on six of seven corpora (none without a background), 0.5
# at K = 200 beat 0.3 and 1; at K = 20, 0.5 put the held-out score below
# topicmodels' on three corpora, 0.3 on one. Above K = 200 (results/
# quality.txt, "the background above K = 200"): at K = 300 and 400 the
# taper's 1/3 and 1/6 raised diversity on all seven corpora and NPMI on
# five, while on the Wikipedia paragraphs NPMI fell, more as K grew
# (0.3 at K = 500 and 1000 lowered it by 0.06 and 0.03; inst/bench/
# background.R, 59,000 paragraphs: 0.5 at K = 300 one pass, K = 1000 ten
# laps, by 0.06 and 0.05).
cvb0_background <- function(K) {
  if (K <= 200) min(0.5, max(0.3, K / 200)) else max(0, 0.5 * (500 - K) / 300)
}

# Resolves SCVB0's settings once, when fit_lda() builds its control list
# (fit_lda() calls the engine's `control`, R/engines.R). The engine's topic schedule
# (cvb0_defaults: tau, kappa) and the paper's minibatches of 100 documents replace the
# loop's generic defaults unless the caller of fit_lda() gave them; the
# corpus token count C is recorded for the C / |M| scaling; the global step
# is SCVB0's own, in its lazy form (lda_global_cvb0_lazy, chosen by the
# registry: lda_engine_cvb0(), R/engines.R). The control hook
# receives neither the corpus nor the call, so both are read from fit_lda()'s
# frame (`x`, `call`).
lda_cvb0_control <- function(control, call = caller_call()) {
  env <- parent.frame()
  given <- lda_given(env)
  if (!"tau" %in% given) control$tau <- cvb0_defaults$tau
  if (!"kappa" %in% given) control$kappa <- cvb0_defaults$kappa
  x <- get0("x", envir = env, inherits = FALSE)
  tokens <- if (inherits(x, c("sparsevi_dtm", "sparsevi_source"))) corpus_tokens(x)
  control <- lda_default_batches(control, min(cvb0_defaults$batch_size, control$n_docs), given,
                                 x)
  if (!is.null(tokens)) {
    control$n_tokens <- tokens
    control$n_tokens_docs <- control$n_docs
  }
  for (nm in c("doc_s", "doc_tau", "doc_kappa", "burnin", "shuffle", "infer_passes",
              "doc_start", "sparse_rest")) {
    if (is.null(control[[nm]])) control[[nm]] <- cvb0_defaults[[nm]]
  }
  if (is.null(control$background)) control$background <- cvb0_defaults$background(control$K)
  # the summary's responsibilities per entry: fit_lda()'s `L` when given,
  # else the engine's default (NA: all K, the dense summary)
  if (is.null(control$cvb0_L)) {
    control$cvb0_L <- if ("L" %in% given) control$L else cvb0_defaults$L
  }
  control$cvb0_settings <- cvb0_settings(control, call = call)
  control$burnin <- check_count(control$burnin, "burnin", min = 0, max = 100, call = call)
  control$infer_passes <- check_count(control$infer_passes, "infer_passes", min = 1,
                                      max = 1000, call = call)
  control
}

# The start of init = "seeded" (lda_init_state() calls it with the documents
# Bregman k-means++ chose): lambda = eta plus each topic's chosen document's
# counts, without the near-uniform random base of init = "bregman". With the
# base (about one pseudo-count per word and topic) the first minibatch's
# responsibilities barely tell the topics apart when V is large; without it
# they follow the seeds. One pass over 10,000 wikipara paragraphs (V =
# 129,289, minibatches of 1,000): -9.64 against -10.12 nats per token at
# K = 1000, -8.86 against -9.20 at K = 100; on the six smaller corpora at
# K = 100, 10 laps, the default start scores 0.00 to 0.02 higher (kos: 0.02
# lower) (inst/bench/results/scvb0.txt, part 6).
#
# The start is a topic store (R/lda-store.R), not a dense table: X holds the
# chosen documents' counts and is 0 elsewhere, lambda = eta + X
# (ffi_lda_store_seeded()). The K x V table is never written whole here:
# it comes zero-filled from the system, outside R's heap (src/table.c),
# its pages first touched on the fit's threads (the system zeroes a page
# where it is first touched: up to 2 s a GB on the virtual machine we
# measure on, a fifth of a one-pass K = 1000 call over 60,000 wikipara
# paragraphs, and on one thread whatever `threads` was), and the first
# global step updates this store in place where it used to convert a
# dense start (X = lambda - eta, and its row sums) into one. The
# store is the training loop's own (state$topics$owned, lda_train()): the
# first lap writes it without a copy, as it wrote the dense start.
lda_cvb0_seeded_start <- function(x0, chosen, control, V) {
  s <- lda_seed_counts(x0, chosen)
  threads <- if (is.null(control$threads)) 1L else as.integer(control$threads)
  st <- .Call(ffi_lda_store_seeded, as.integer(control$K), as.integer(V), as.integer(s$k),
              as.integer(s$v), as.double(s$x), threads)
  st$eta <- as.double(control$eta)
  list(topics = new_lda_topics(store = st), t = 0L, tot = lda_store_totals(st), tot_t = 0L)
}

# The pure-R form of the seeded store (the reference of ffi_lda_store_seeded):
# list(X, meta) from the triples of lda_seed_counts().
lda_seeded_store_r <- function(s, K, V) {
  X <- matrix(0, K, V)
  X[cbind(s$k + 1L, s$v + 1L)] <- s$x
  list(X = X, meta = c(1, 0, rowSums(X)))
}

# Settings of the document update, a named list the C glue reads by name:
# alpha, background, doc_s, doc_tau, doc_kappa, passes, shuffle, kernel
# width (internal control$cvb0_kernel: 0, AVX2 where the processor runs it,
# else SSE2; or 2, 4, 8 to ask for SSE2, AVX2, AVX-512; every width gives the
# same bits).
cvb0_settings <- function(control, passes = NULL, call = caller_call()) {
  get <- function(name) {
    v <- control[[name]]
    if (is.null(v)) cvb0_defaults[[name]] else v
  }
  alpha <- check_positive(get("alpha"), "alpha", call = call)
  doc_s <- check_positive(get("doc_s"), "doc_s", call = call)
  doc_tau <- check_number(get("doc_tau"), "doc_tau", lower = 0, call = call)
  doc_kappa <- check_number(get("doc_kappa"), "doc_kappa", lower = 0, upper = 1,
                            lower_open = TRUE, call = call)
  if (doc_s * max(doc_tau, 1e-300)^(-doc_kappa) > 1) {
    abort(sprintf("The first document step size `doc_s / doc_tau^doc_kappa` is %s; it must be at most 1: lower `doc_s` or raise `doc_tau`.",
                  format(doc_s * doc_tau^(-doc_kappa), digits = 3)),
          "argument", call = call)
  }
  if (is.null(passes)) {
    passes <- check_count(get("burnin"), "burnin", min = 0, max = 100, call = call) + 1L
  }
  shuffle <- check_flag(get("shuffle"), "shuffle", call = call)
  kernel <- if (is.null(control$cvb0_kernel)) 0L else as.integer(control$cvb0_kernel)
  doc_start <- check_choice(get("doc_start"), cvb0_doc_starts, "doc_start", call = call)
  # (absent: no background topic; a fit saved before the option existed,
  # or the topics of another engine in predict(method = "cvb0"))
  background <- lda_check_background(control$background, 0, call = call)
  list(alpha = as.double(alpha), background = as.double(background), doc_s = as.double(doc_s),
       doc_tau = as.double(doc_tau), doc_kappa = as.double(doc_kappa),
       passes = as.integer(passes), shuffle = shuffle,
       kernel = kernel, doc_start = match(doc_start, cvb0_doc_starts) - 1L,
       top_L = cvb0_top_L(control$cvb0_L, control$K),
       top_rest = match(check_choice(get("sparse_rest"), cvb0_rests, "sparse_rest",
                                     call = call), cvb0_rests) - 1L)
}

# The sparse summary's forms (top_L < K), in the order of the C code's
# numbering (src/lda-cvb0-kernel.h, cvb0_top() and cvb0_shape()):
# "renormalise" each entry's L largest responsibilities renormalised to its
# count; "sample" its L - 1 largest and the rest of its count on one other
# topic drawn in proportion (unbiased); "shape" its L largest and the rest
# spread over the other topics in proportion to the word's topic column,
# exact for a word with K / L entries or more in the minibatch (its column
# holds K topics anyway). The engine control `sparse_rest`, default
# cvb0_defaults$sparse_rest.
cvb0_rests <- c("renormalise", "sample", "shape")

# The summary's responsibilities per entry as the C settings hold them: L
# when it is below K, else 0 (all K: the dense summary, also for NA or NULL).
cvb0_top_L <- function(L, K) {
  if (is.null(L) || is.na(L) || is.null(K) || L >= K) 0L else as.integer(L)
}

# The starts of a document's topic counts, in the order of the C code's
# numbering (src/lda-cvb0.h: 0, 1, 2).
cvb0_doc_starts <- c("random", "topics", "uniform")

# The options of one call of the local step (ffi_lda_local_cvb0): the
# settings, the first random stream, whether to return a summary, and
# c(shift, scale) when the topics are a lazy store (else NULL).
cvb0_opts <- function(settings, stream_base, summary, affine = NULL, theta = TRUE) {
  c(settings, list(stream_base = as.double(stream_base), summary = summary, affine = affine,
                   theta = theta))
}

# The reusable vectors of one call (each NULL or a vector; see below).
cvb0_buffers <- function(scratch = NULL, marks = NULL, summary = NULL) {
  list(scratch = scratch, marks = marks, summary = summary)
}

# Row sums of lambda (tot_k = NZ_k + V eta) when the state tracks them for
# its current lambda; NULL lets C compute them.
cvb0_totals <- function(state) {
  if (!is.null(state$tot) && identical(state$tot_t, state$t)) state$tot else NULL
}

# A summary of the local step is list(words, x): the batch's distinct words
# (0-based, increasing) and their K x U statistics (column u for words[u]),
# the two vectors the C glue returns; no K x V object is built per
# minibatch; x is a fresh vector of each call, or the buffer the training
# loop gave that call (attr(seed, "summary_buffer"), lda_lap(): it takes it
# back only after the global step has read it), then longer than K x U
# values. cvb0_summary_parts() trims x to K x U values, and also
# accepts a K x V matrix or Matrix (e.g. from a test);
# cvb0_summary_dense() gives the K x V matrix.
#
# With settings top_L = L < K (fit_lda()'s `L`, notes/internals.md) the
# summary is sparse instead: list(words, p, k, v), column u (word words[u])
# holding the topics k[p[u] + 1 .. p[u + 1]] (0-based, increasing) with sums
# v, at most L x (the word's entries in the batch) per column; the store's
# step reads it as it is (lda_store_update()), and a cluster worker sends
# it back so.
cvb0_summary_parts <- function(S, K) {
  if (is.list(S) && !is.object(S) && !is.null(S$r)) {
    abort("internal error: the shape form's summary needs its topics (cvb0_shape_parts()).",
          "internal")
  }
  if (is.list(S) && !is.object(S) && !is.null(S$p)) {
    # a sparse summary (top_L < K, see below): its K x U block
    U <- length(S$words)
    x <- numeric(K * U)
    x[(rep.int(seq_len(U), diff(S$p)) - 1L) * K + S$k + 1L] <- S$v
    return(list(words = S$words, x = x))
  }
  if (is.list(S) && !is.object(S) && !is.null(S$words)) {
    n <- K * length(S$words)
    if (length(S$x) != n) S$x <- S$x[seq_len(n)]
    return(S)
  }
  M <- as.matrix(S)
  storage.mode(M) <- "double"
  w <- which(colSums(M != 0) > 0)
  list(words = as.integer(w - 1L), x = as.double(M[, w, drop = FALSE]))
}

# The shape form's summary (list(words, p, k, v, r), sparse_rest = "shape")
# as list(words, x): column u is r[u] times word words[u]'s topic column
# lambda_kv / tot_k normalised over k, plus its values, floored at 0
# (ffi_lda_cvb0_shape_columns()); lambda = affine[1] + affine[2] X with
# totals tot. The global step reads it so, under the topics before the
# step.
#
# x is the session's buffer (cvb0_cache$shape), longer than K x U values
# (readers take the first K x U): the global step reads it at once, before
# the next minibatch's summary is made. A fresh K x U vector per minibatch
# (24 MB at K = 1000 over Wikipedia paragraphs) made R collect garbage.
cvb0_shape_parts <- function(S, X, affine, tot, threads = 1L) {
  list(words = S$words,
       x = .Call(ffi_lda_cvb0_shape_columns, X, as.double(affine), as.double(tot), S,
                 as.integer(threads), cvb0_shape_buffer(as.double(nrow(X)) * length(S$words))))
}

# The session's buffer of at least n doubles, given up (ffi_svi_give_up) so
# that C may write it.
cvb0_shape_buffer <- function(n) {
  buf <- cvb0_cache$shape
  if (is.null(buf) || length(buf) < n) {
    buf <- .Call(ffi_svi_give_up, numeric(max(ceiling(1.25 * n), 1024)))
    cvb0_cache$shape <- buf
  }
  buf
}

# The stochastic step on the store st (lda_store_update()) with a summary
# in the shape form: the same as cvb0_shape_parts() under the store's
# topics (lambda = offset + scale X) and then lda_store_update(), bit for
# bit, in one C call (ffi_lda_store_update_shape()). On one pass (one
# thread, or two below the store's split) each column is made just before
# it is added, without the K x U values and reading each column once
# (store_update_fill(): at K = 1000 over 10,000 Wikipedia paragraphs, 1.8-2.1
# s a lap against 2.9 s). A split update (several threads) makes them first,
# in the session's buffer.
cvb0_store_update_shape <- function(st, S, offset, rho, mult, t, rescale_below = 1e-100,
                                    threads = 1L) {
  threads <- as.integer(threads)
  buf <- if (threads > 1L) cvb0_shape_buffer(as.double(nrow(st$X)) * length(S$words))
  .Call(ffi_lda_store_update_shape, st$X, st$meta, S,
        list(rho = as.double(rho), mult = as.double(mult),
             rescale_below = as.double(rescale_below), t = as.double(t), threads = threads,
             offset = as.double(offset), tot = as.double(lda_store_totals(st, offset)),
             buf = buf))
}

cvb0_summary_dense <- function(S, K, V) {
  S <- cvb0_summary_parts(S, K)
  M <- matrix(0, K, V)
  M[, S$words + 1L] <- S$x
  M
}

cvb0_cache <- new.env(parent = emptyenv())

# A double vector of at least n elements that the local step's C code may
# overwrite (its scratch: the topic columns of the batch's words), kept for
# the session so that minibatch after
# minibatch reuses the same pages; NULL (C allocates) beyond 64 MB. Only the
# C glue ever reads or writes it. It is a table outside R's heap
# (src/table.c), grown with a quarter to spare: batches of 1,000 Wikipedia
# paragraphs at K = 100 need 28 MB, a little more each time a batch is
# longer than every one before, and each new vector of R's own in a small
# heap cost a collection (0.27 s of collections in a 1 s call).
cvb0_scratch <- function(n) {
  # (at least what an earlier call took, which C reports: an estimate does
  # not see a sparse summary's full columns)
  n <- max(n, cvb0_cache$need %||% 0)
  if (n > 2^23) return(NULL)
  s <- cvb0_cache$scratch
  if (is.null(s) || length(s) < n) {
    s <- .Call(ffi_svi_table_alloc, 1L, as.integer(min(2^23, max(ceiling(1.25 * n), 2^16))))
    # (the package's own: only the C glue writes it)
    s <- .Call(ffi_svi_give_up, s)
    cvb0_cache$scratch <- s
  }
  s
}
# Doubles of scratch one training call of the local step takes
# (ffi_lda_local_cvb0): P (K per distinct word) and, on several threads,
# up to K more per entry (an entry whose word an earlier range of documents
# holds keeps its part of the summary apart until they are added in
# document order);
# the documents' topic counts; per-thread vectors, step tables and
# integer indexes (a few per entry); with a sparse summary (top_L = L < K)
# 1.5 L per entry twice more (each entry's top L, each column's sums) and
# four per entry (the shape form: K for each entry of a word with K / L
# entries or more, which this does not count). More than that is left
# unused; less, and the C allocates the rest.
cvb0_scratch_need <- function(batch, K, settings, threads) {
  nnz <- length(batch$term)
  L <- if (is.null(settings$top_L)) 0L else settings$top_L
  # (a sparse summary: each entry's L topics and values and each column's
  # room, instead of K per entry)
  extra <- if (L > 0L) (3 * L + 4) * nnz + 3 * threads * K else 0
  extra + K * (nnz + nrow(batch)) + (threads + 1) * (2 * K + 64) + 2 * (nnz + 1) * settings$passes +
    3 * nnz + 4096
}

# An integer vector of at least V entries that the local step's C code uses
# to find the batch's distinct words in O(batch) rather than O(V) time (a
# "sparse set": its contents need no cleaning between calls, any values are
# safe); kept for the session, grown when a larger vocabulary comes. Only the
# C glue reads or writes it.
cvb0_marks <- function(V) {
  m <- cvb0_cache$marks
  if (is.null(m) || length(m) < V) {
    m <- .Call(ffi_svi_give_up, rep.int(-1L, max(V, 1024L)))
    cvb0_cache$marks <- m
  }
  m
}

# First random stream of a batch (one stream per document): 2^26 streams per
# global update t, below 2^48 in all.
cvb0_stream_base <- function(state) {
  t <- if (is.null(state$t)) 0 else state$t
  (t %% 2^22) * 2^26
}

# Local step of SCVB0 over one minibatch. The topics are read from the lazy
# store state$topics$store (lambda = eta + scale X) when training keeps one, else
# from the dense state$topics$lambda.
lda_local_cvb0 <- function(batch, state, control, seed, threads) {
  settings <- control$cvb0_settings
  # (a fit saved by an older version holds them as a vector: resolve again)
  if (!is.list(settings)) settings <- cvb0_settings(control)
  st <- state$topics$store
  if (!is.null(st)) {
    lambda <- st$X
    tot <- lda_topics_totals(state$topics)
    affine <- c(st$eta, st$meta[1L])
  } else {
    lambda <- state$topics$lambda
    if (!is.double(lambda)) storage.mode(lambda) <- "double"
    tot <- cvb0_totals(state)
    affine <- NULL
  }
  K <- nrow(lambda)
  V <- ncol(lambda)
  # the documents' topic counts come back only when a hook reads them
  # (lda_lap(): the lap that keeps the training documents' proportions)
  theta <- !isFALSE(attr(seed, "doc_topic", exact = TRUE))
  res <- .Call(ffi_lda_local_cvb0, batch, V, lambda, tot,
               cvb0_opts(settings, cvb0_stream_base(state), TRUE, affine, theta), seed,
               as.integer(threads),
               cvb0_buffers(scratch = cvb0_scratch(cvb0_scratch_need(batch, K, settings, threads)),
                            marks = cvb0_marks(V),
                            summary = attr(seed, "summary_buffer", exact = TRUE)))
  # (what the call took, for the session's scratch; beyond 2^23 doubles C
  # allocates its own, so a larger need is not kept)
  if (!is.null(res$need) && res$need <= 2^23 && res$need > (cvb0_cache$need %||% 0)) {
    cvb0_cache$need <- res$need
  }
  summary <- if (is.null(res$p)) list(words = res$words, x = res$x) else
    res[c("words", "p", "k", "v", if (!is.null(res$r)) "r")]
  list(summary = summary,
       doc_topic = res$theta,
       stats = list(tokens = sum(batch$count), docs = nrow(batch)))
}

# Corpus token count C for the C / |M| scaling: carried in the state, else
# recorded by lda_cvb0_control() (rescaled by the number of documents when
# update() continues on another corpus); as a last resort estimated from the
# minibatch's tokens per document times the number of documents.
cvb0_corpus_tokens <- function(state, control, res) {
  if (!is.null(state$n_tokens)) return(as.double(state$n_tokens))
  if (!is.null(control$n_tokens)) {
    # update() on another corpus changes n_docs: rescale by documents
    d0 <- control$n_tokens_docs
    if (!is.null(d0) && !is.null(control$n_docs) && d0 != control$n_docs) {
      return(control$n_tokens * control$n_docs / d0)
    }
    return(as.double(control$n_tokens))
  }
  docs <- if (is.null(res$stats$docs)) ncol(res$doc_topic) else res$stats$docs
  tokens <- res$stats$tokens
  if (!is.null(control$n_docs) && docs > 0) return(control$n_docs * tokens / docs)
  abort("internal error: the SCVB0 global step needs the corpus token count.", "internal")
}

# Global step of SCVB0 (eqs. 7-8): with lambda = eta + NPhi and tot = NZ + V eta,
# lambda <- (1 - rho) lambda + rho (eta + C / |M| S), tot likewise, where
# rho = s (tau + t)^-kappa. This is the stochastic VB update with the summary
# scaled by corpus tokens over minibatch tokens (not documents).
lda_global_cvb0 <- function(state, res, batch_id, control) {
  g <- cvb0_global_args(state, res, control)
  lambda <- cvb0_state_lambda(state)
  if (!is.double(lambda)) storage.mode(lambda) <- "double"
  tot <- if (is.null(state$topics$store)) cvb0_totals(state) else lda_topics_totals(state$topics)
  state$topics$store <- NULL
  if (is.null(tot)) tot <- rowSums(lambda)
  threads <- if (is.null(control$threads)) 1L else as.integer(control$threads)
  S <- g$S
  if (!is.null(S$r)) S <- cvb0_shape_parts(S, lambda, c(0, 1), tot, threads)
  S <- cvb0_summary_parts(S, nrow(lambda))
  out <- .Call(ffi_lda_global_cvb0, lambda, as.double(tot), g$eta, g$rho, g$mult,
               S$words, S$x, threads)
  state$topics$lambda <- out$lambda
  state$t <- g$t + 1L
  state$tot <- out$tot
  state$tot_t <- state$t
  state$rho <- g$rho
  state
}

# Step size, prior, summary and C / |M| of a global step.
cvb0_global_args <- function(state, res, control) {
  t <- if (is.null(state$t)) 0 else state$t
  s <- if (is.null(control$step_scale)) cvb0_defaults$s else control$step_scale
  tau <- if (is.null(control$tau)) cvb0_defaults$tau else control$tau
  kappa <- if (is.null(control$kappa)) cvb0_defaults$kappa else control$kappa
  eta <- if (is.null(control$eta)) cvb0_defaults$eta else control$eta
  rho <- step_size(t, tau, kappa, s)
  S <- res$summary
  tokens <- res$stats$tokens
  if (is.null(tokens)) {
    tokens <- sum(cvb0_summary_parts(S, if (is.null(control$K)) nrow(res$doc_topic) else control$K)$x)
  }
  mult <- if (tokens > 0) cvb0_corpus_tokens(state, control, res) / tokens else 0
  list(t = t, rho = rho, eta = eta, S = S, mult = mult)
}

# ---- the lazy global step ------------------------------------------------------
#
# The same update as lda_global_cvb0() without rewriting the K x V topics
# every minibatch (notes/math.md §4 and §3.5; the form of the "gibbs" engine's lazy
# update), on the topic store (R/lda-store.R):
#   state$topics$store = list(X, meta, eta),  lambda = eta + scale X,
# meta = c(scale, t, xtot) with xtot the row sums of X and t the number of
# global steps the store has taken. Each minibatch multiplies `scale` by
# (1 - rho) and adds (rho C / |M| / scale) S to the columns of its words
# only. Below `rescale_below` (control$rescale_below, default 1e-100) the
# scale is folded into X in one dense pass.
#
# Lifetime: the store is created by the first global step of a fit (from
# the start's lambda, in place when the fit owns it) or of an update() (a
# copy of the fit's lambda) and then kept across laps, each lap working on
# its own copy (lda_store_lap_start()). lambda is materialised only when
# someone reads the topics: at the end of the fit (lda_cvb0_finish(), which
# the shared loop calls before building the fit, and which drops the store)
# and for the held-out score of a lap. While the store lives, state$topics$lambda is
# NULL (the store is the only copy the local steps and a cluster's workers
# read).
lda_global_cvb0_lazy <- function(state, res, batch_id, control) {
  g <- cvb0_global_args(state, res, control)
  st <- state$topics$store
  if (is.null(st)) {
    st <- cvb0_new_store(state, g$eta)
    state$topics$owned <- NULL
    state$topics$store <- st
    state$topics$lambda <- NULL
  } else {
    # (lda_store_own(): a copy when R shares the table, put in the object)
    if (lda_store_shared(st)) {
      st <- lda_store_copy(st)
      state$topics$store <- st
    }
    # (a seeded start's store, lda_cvb0_seeded_start(): the training loop's own
    # until this first step; from here on each lap copies it)
    if (!is.null(.subset2(state$topics, "owned"))) state$topics$owned <- NULL
  }
  below <- if (is.null(control$rescale_below)) 1e-100 else control$rescale_below
  S <- g$S
  threads <- if (is.null(control$threads)) 1L else control$threads
  if (!is.list(S) || is.object(S) || is.null(S$words)) S <- cvb0_summary_parts(S, nrow(st$X))
  t_new <- g$t + 1L
  # (the shape form: its columns under the topics as they are now, before
  # the step; the same in a cluster, whose master holds these topics)
  if (!is.null(S$r)) {
    cvb0_store_update_shape(st, S, st$eta, g$rho, g$mult, t_new, below, threads)
  } else {
    lda_store_update(st, S, g$rho, g$mult, t_new, below, threads)
  }
  state$t <- t_new
  state$tot <- lda_topics_totals(state$topics)
  state$tot_t <- t_new
  state$rho <- g$rho
  state
}

# ---- topics sharded by word (R/executor-sharded.R) -------------------------
#
# What a sharded fit needs of the engine: whether its owners can take the
# global step (not the shape form: its columns are made under the topics
# at the step, which no one worker holds), a new fit's dense start and its
# totals as its first local steps read them, the lap's store (made from
# that start as the first global step would make it), the size and summary
# of one step on a worker, and the state after a lap's steps, as
# lda_global_cvb0_lazy() leaves it.
cvb0_shard <- list(
  can = function(control) {
    s <- control$cvb0_settings
    if (!is.list(s)) s <- cvb0_settings(control)
    identical(control$global, "stochastic") && !(s$top_L > 0L && s$top_rest == 2L)
  },
  dense = function(state) {
    if (!is.null(state$topics$store)) return(NULL)
    lambda <- state$topics$lambda
    if (!is.double(lambda)) storage.mode(lambda) <- "double"
    tot <- cvb0_totals(state)
    list(lambda = lambda, tot = if (is.null(tot)) .Call(ffi_lda_topic_totals, lambda) else tot)
  },
  store = function(state, control) {
    if (is.null(state$topics$store)) {
      eta <- if (is.null(control$eta)) cvb0_defaults$eta else control$eta
      st <- cvb0_new_store(state, eta)
      state$topics$store <- st
      state$topics$lambda <- NULL
    } else if (lda_store_shared(state$topics$store)) {
      state$topics$store <- lda_store_copy(state$topics$store)
    }
    # (from here on each lap copies the store: lda_store_lap_start())
    if (!is.null(.subset2(state$topics, "owned"))) state$topics$owned <- NULL
    state
  },
  step = function(state, res, control, t, K) {
    state$t <- t
    g <- cvb0_global_args(state, res, control)
    S <- g$S
    if (is.null(S$p)) S <- cvb0_summary_parts(S, K)
    list(rho = g$rho, mult = g$mult, t = g$t + 1,
         rescale_below = if (is.null(control$rescale_below)) 1e-100 else control$rescale_below,
         summary = S)
  },
  after = function(state, t, rho) {
    state$t <- t
    state$tot <- lda_topics_totals(state$topics)
    state$tot_t <- t
    state$rho <- rho
    state
  })

# A new store from a state's dense lambda (and its tracked totals): X =
# lambda - eta, made from the start's table itself when the fit owns it.
cvb0_new_store <- function(state, eta) {
  tot <- cvb0_totals(state)
  if (is.null(tot)) tot <- rowSums(state$topics$lambda)
  t <- if (is.null(state$t)) 0 else state$t
  st <- lda_store_new(state, tot, eta, t, in_place = isTRUE(state$topics$owned))
  st$eta <- as.double(eta)
  st
}

# What SCVB0's local step of the batches with words U (1-based, increasing)
# needs of the state (lda_columns(), R/lda-store.R): the store's columns U,
# or those of the dense lambda with the totals of the whole table.
lda_columns_cvb0 <- function(state, control, U) {
  st <- state$topics$store
  if (!is.null(st)) {
    # (meta + 0: a copy. The view must not hold the master's meta: a vector
    # two lists hold stays shared for R, the master's store would no longer
    # be its own, and every global step would copy the whole K x V table:
    # 48% of the master's time at K = 1000 over wikipara's vocabulary)
    state$topics$store <- list(X = lda_table_columns(st$X, U), meta = st$meta + 0, eta = st$eta,
                               V = ncol(st$X))
    state$topics$lambda <- NULL
  } else {
    lambda <- state$topics$lambda
    if (!is.double(lambda)) storage.mode(lambda) <- "double"
    # the totals lda_local_cvb0() would use, else those its C would sum
    tot <- cvb0_totals(state)
    if (is.null(tot)) tot <- .Call(ffi_lda_topic_totals, lambda)
    state$topics$lambda <- lda_table_columns(lambda, U)
    state$tot <- tot
    state$tot_t <- state$t
  }
  state
}

# The dense lambda of a state (materialised from the lazy store if any).
cvb0_state_lambda <- function(state) lda_topics_lambda(state$topics)

# The state with its dense lambda (and row sums) in place of the store:
# called by the shared loop (R/lda-class.R, lda_finish_state()) before it builds a
# fit or scores held-out documents; `in_place` (the end of training) builds
# lambda in the store's own table.
lda_cvb0_finish <- function(state, control, in_place = FALSE) {
  st <- state$topics$store
  if (is.null(st)) return(state)
  state$topics$store <- NULL
  m <- lda_store_lambda(st, st$eta, in_place)
  state$topics$lambda <- m$lambda
  state$tot <- m$tot
  # the store's own step count
  if (!identical(as.double(state$t), st$meta[2L])) state$t <- as.integer(st$meta[2L])
  state$tot_t <- state$t
  state
}

# Fold-in of new documents with the topics frozen at the fit's topic_word:
# `infer_passes` passes of the document update; returns D x K proportions
# (NTheta_d + alpha) / (N_d + K alpha).
lda_infer_cvb0 <- function(fit, dtm, control, seed, threads) {
  if (is.null(control)) control <- list()
  if (is.null(control$alpha)) control$alpha <- fit$alpha
  passes <- control$infer_passes
  if (is.null(passes)) passes <- fit$control$infer_passes
  if (is.null(passes)) passes <- cvb0_defaults$infer_passes
  passes <- check_count(passes, "infer_passes", min = 1, max = 1000)
  fc <- as.list(fit$control)
  # (a fit saved before doc_start existed was trained with the random start)
  if (is.null(fc$doc_start)) fc$doc_start <- "random"
  settings <- cvb0_settings(utils::modifyList(fc, as.list(control)), passes = passes)
  # the topics as training reads them, lambda over its row sums (the rows
  # of topic_word, which `fit$topic_word` would build as a new K x V table
  # on every call: 1 GB at K = 1000 over 129,289 words); a fit without a
  # lambda (ML-OPE) gives its topic_word
  tw <- .subset2(fit, "lambda")
  if (!is.matrix(tw)) tw <- fit$topic_word
  K <- nrow(tw)
  topic_names <- paste0("topic", seq_len(K))
  if (!is.double(tw)) storage.mode(tw) <- "double"
  if (is.null(seed)) seed <- resolve_seed(NULL)
  # (a block of predict()'s documents: their random streams are numbered
  # from the block's first document, as in one call over all of them)
  first <- attr(dtm, "first_doc", exact = TRUE)
  res <- .Call(ffi_lda_local_cvb0, dtm, ncol(tw), tw, .Call(ffi_lda_topic_totals, tw),
               cvb0_opts(settings, if (is.null(first)) 0 else first, FALSE), seed,
               as.integer(threads),
               cvb0_buffers(marks = cvb0_marks(ncol(tw))))
  theta <- res$theta + settings$alpha
  theta <- t(theta) / colSums(theta)
  dimnames(theta) <- list(dtm$doc_names, topic_names)
  theta
}
