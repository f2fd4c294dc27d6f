# The OPE engine (Than & Doan, "Guaranteed inference in topic models"):
# the "ope" local step of fit_lda() (Algorithm 1: online MAP estimation of each
# document's topic mixture), the ML-OPE global step "ml", OPE inference for new
# documents (predict(..., method = "ope")) and NPMI coherence (App. B).
# The computation is in src/lda-ope.c and src/eval-npmi.c (glue: src/lda-ope-ffi.c).
#
# Learners:
#   local = "ope", global = "ml"          ML-OPE:  beta <- (1 - rho) beta + rho beta_hat,
#                                          beta_hat_kv proportional to sum_d n_dv theta_dk
#   local = "ope", global = "stochastic"  Online-OPE: SVI update of lambda with the
#                                          phi summary (phi_dvk ~ theta_dk beta_kv), D/|B|
#   local = "ope", global = "streaming"   Streaming-OPE: lambda <- lambda + phi summary
#   local = "ope", global = "memoized"    lambda = eta + sum of cached phi summaries
# In every case OPE reads topics as beta = lambda with rows normalised (for ML-OPE
# the state's lambda holds beta itself, whose rows already sum to one).

#' OPE: guaranteed MAP inference of topic mixtures, and its learners
#'
#' Than & Doan's online maximum a posteriori estimation (OPE, Algorithm 1)
#' infers a document's topic mixture by maximising
#' `f(theta) = sum_v n_v log sum_k theta_k beta_kv + (alpha - 1) sum_k log theta_k`
#' over the simplex. Each iteration draws the likelihood or the prior part
#' at random and steps towards the vertex with the largest component of the
#' averaged gradient; the iterate converges at rate O(1/T) to a local
#' maximum (the global one when `alpha >= 1`). It needs no digamma or exp.
#'
#' OPE is the local step `local = "ope"` of [fit_lda()], with the paper's
#' learners as global steps:
#' * `global = "stochastic"` (default): Online-OPE, the SVI update of
#'   `lambda` (Alg. 3), re-seeding dead topics between laps
#'   (`reuse_dead`, see "Default learner").
#' * `global = "ml"`: ML-OPE, topics updated directly on the simplex
#'   (Alg. 2); the fit has `lambda = NULL`, and its topic sizes are the
#'   expected tokens of each topic.
#' * `global = "streaming"`: Streaming-OPE, `lambda <- lambda + S_B`
#'   (Alg. 4).
#' * `global = "memoized"`: `lambda = eta + sum_b S_b` over cached batch
#'   summaries (no ELBO is recorded: OPE maximises another objective).
#'
#' Defaults: `alpha = eta = 1 / K`. Controls, through `...` of [fit_lda()]
#' or of [predict()][predict.sparsevi_lda]:
#' * `ope_iter`: iterations T of Algorithm 1 per document, 1 to 1e6
#'   (default 50).
#' * `ope_eps`: interior margin of the simplex, in (0, 1 / K) (default
#'   `min(1e-10, 0.01 / K)`).
#' * `background`: the weight \eqn{b} of the background topic, topic 1,
#'   whose prior in a document of \eqn{N_d} words is \eqn{\alpha + b N_d}:
#'   `f` gains \eqn{b N_d \log \theta_1}. Default 0.1 up to K = 200, 0
#'   above (see "Background topic" here and in [fit_lda()]).
#'
#' `predict(fit, newdata, method = "ope")` infers new documents' mixtures
#' with the topics of any LDA fit; `seed` makes it reproducible, whatever
#' `threads`. Without `method`, predict() of an Online-OPE fit uses SCVB0's
#' fold-in instead: on the seven benchmark corpora it completed held-out
#' documents better than OPE's own inference in every case, by 0.01 to
#' 0.25 nats per token (`inst/bench/predict.R`). The paper's evaluations
#' work for any LDA fit:
#' `coherence(fit, reference, measure = "npmi")` (App. B) and
#' `heldout_loglik(fit, test, method = "completion", by = "tokens",
#' observed_frac = 0.7)`, the log predictive probability (App. A).
#'
#' @section Default learner:
#' Online-OPE with re-seeding is the default because it gave better topics
#' than ML-OPE on the corpora measured. Seven corpora, K = 20, 100 and 200,
#' 10 laps, one held-out split each: 21 cases, all scored the same way.
#' * The held-out score was higher in 20 of the 21 cases, by up to 0.32
#'   nats per token (0.007 lower in the other).
#' * Diversity was higher in all 21 cases, by 0.04 to 0.20.
#' * NPMI of the top ten words was higher in 19 of the 21.
#' * NPMI was within 0.05 of the default engine's (SCVB0) in 19 cases;
#'   ML-OPE was within 0.05 in 14.
#'
#' Online-OPE's minibatches are capped at 500 documents (see "Differences
#' from the paper"). This changes the corpora of more than 5,000 documents.
#' In the 9 such cases above the held-out score rose in 8. On 19,000
#' Wikipedia paragraphs the NPMI gap to SCVB0 at K = 100 and 200 halved
#' (0.14 to 0.06, 0.12 to 0.07).
#'
#' Under ML-OPE a corpus's most frequent words head a large share of the
#' topics. Re-seeding replaces topics that draw less than 0.1% of the
#' tokens in a lap. It matters where such topics would die, at K = 100 to
#' 200 (kos, K = 200: NPMI 0.08 without re-seeding, 0.15 with).
#'
#' To use ML-OPE, give `global = "ml"`. To turn re-seeding off, give
#' `reuse_dead = FALSE`.
#'
#' @section Background topic:
#' Up to K = 200, topic 1 is a background topic by default (`background =
#' 0.1`), as in the default engine ([scvb0]). Against `background = 0`, on
#' the same seven corpora at K = 20, 100 and 200 (Online-OPE, 21 cases;
#' `inst/bench/results/quality.txt`, "a background topic for the other
#' engines"): NPMI within 0.05 of the default engine's in 19 cases instead
#' of 13; diversity higher in all 21 (by 0.03-0.49) and NPMI in 18; the
#' held-out score lower in 17 (by up to 0.13 nats per token), yet above
#' the default engine's in 15. Topic 1 held 18-59% of the tokens. Larger
#' weights (0.2, 0.3, 0.5) met the NPMI mark in 18 cases, with lower
#' held-out scores. Above K = 200 there is none by default: at K = 300 (four
#' corpora) 0.1 raised NPMI by 0.006-0.052 and cost 0.03-0.22 nats per
#' token, and without it Online-OPE was within 0.05 NPMI of the default
#' engine on all four (which then had no background topic at K = 300).
#'
#' @section Differences from the paper:
#' Than & Doan use `kappa = 0.9`, `tau = 1`, minibatches of 5,000
#' documents, `alpha = eta = 1 / K`, T = 50 and random initial topics. Here,
#' by default:
#' * `kappa = 0.6` (as for every stochastic step): give `kappa = 0.9`;
#' * minibatches of `max(100, D / 10)` documents, at most 500 for
#'   Online-OPE: on a corpus of fewer than 5,000 documents one paper-sized
#'   minibatch is the whole corpus, and ML-OPE would make one update per
#'   lap; on large corpora Online-OPE's topics were more coherent with
#'   more, smaller minibatches (19,000 Wikipedia paragraphs at K = 100:
#'   NPMI 0.03 with 1,900 documents a minibatch, 0.11 with 500). Give
#'   `batch_size = 5000` for the paper's;
#' * Online-OPE, not ML-OPE, with dead topics re-seeded (see "Default
#'   learner"): give `global = "ml"` for ML-OPE;
#' * topics seeded by Bregman k-means++: give `init = "random"`;
#' * topic 1 is a background topic up to K = 200 (see "Background topic"):
#'   give `background = 0` for the paper's model;
#' * as in the authors' public code, the step size of Algorithm 1 is
#'   `1 / (t + 1)` rather than `1 / t` (the random start stays among the
#'   averaged iterates), and the likelihood part is counted once before the
#'   first random pick; words no topic can emit are left out of the
#'   objective. No setting restores the text's version;
#' * held-out scores ([heldout_loglik()]) infer each test document's
#'   proportions by the package's VB fold-in for every engine, OPE
#'   included, on one split of each document's words; the paper splits each
#'   test document 70:30 and averages five random splits.
#' `vignette("benchmarks")` compares OPE with the paper's measurements.
#'
#' @section Sparse summaries:
#' Give `L` (below K) to [fit_lda()] and each document adds at most `L`
#' values per word to its minibatch's summary instead of K, which is what a
#' cluster's workers send back ([sparsevi_cluster]). The documents'
#' proportions are those OPE found, whatever `L` (the fit's `doc_topic`
#' keeps `doc_topics` of each, by default `L`).
#'
#' OPE's proportions are nearly sparse but never exactly: Frank-Wolfe moves
#' towards one vertex per iteration, and at K = 100 a document ends with
#' 1.0 to 1.5 topics it picked on average, but its random starting point
#' keeps a share 1 / (T + 1) of its mass spread over all K topics, so every
#' proportion is positive. Off its picked topics a document's proportions
#' are that start's remnant: noise about their mean. So with Online-OPE
#' (`global = "stochastic"`, the default) and ML-OPE (`"ml"`) a document
#' keeps its `L` largest proportions and the others are replaced by their
#' mean (the "shape" form). A word's summary is then one weight times a
#' column the global step has anyway (1 / K on every topic for ML-OPE; the
#' word's topic column, normalised, for Online-OPE) plus at most `L` values
#' per document: exact for those proportions. Measured at K = 100 on seven
#' corpora (10 laps, held-out score as a mean over 3 seeds,
#' `inst/bench/results/ope-sparse.txt`), against the dense summary:
#' Online-OPE with `L = 4` is within 0.01 nats per token on all seven
#' (-0.008 to +0.021), with `L = 8` too (-0.006 to +0.011); ML-OPE with
#' `L = 4` on six (sotu_chunks -0.0103), with `L = 8` on all seven (-0.007
#' to +0.005). The dense fit itself moves by up to 0.06 from one seed to
#' the next. NPMI and diversity move by less than 0.02, the whole fit's CPU
#' time by 0.88 to 1.37 times. At `L = 4` a minibatch's summary holds 21%
#' to 38% of the dense one's bytes (35% to 59% at `L = 8`); on two cluster
#' workers (nips_f20, ML-OPE) the master received 18.5 MB a lap at `L = 4`
#' instead of 43 MB.
#'
#' Streaming and memoized OPE add summaries and take them back laps apart,
#' under other topics, so they keep the sampled form: the document's
#' `L - 1` largest proportions as they are and the rest of its mass on one
#' topic drawn from the others in proportion to their shares (unbiased).
#' `options(sparsevi.ope_sparse_rest = )`, set before the fit, chooses the
#' form: 2 shape (ML- and Online-OPE only), 1 sampled, 0 the `L` largest
#' proportions rescaled to sum to one. The default stays dense (`L` not
#' given, or `L = K`, gives the same fit as before, bit for bit): on one
#' machine a sparse summary saves nothing.
#'
#' @name ope
#' @references Than, K. and Doan, T. Guaranteed inference in topic models.
#' @examples
#' sim <- simulate_lda(D = 100, V = 40, K = 3, seed = 1)
#' fit <- fit_lda(sim$dtm, K = 3, local = "ope", global = "ml", kappa = 0.9,
#'                passes = 3, seed = 1, progress = FALSE)
#' round(predict(fit, sim$dtm[1:3, ], method = "ope", seed = 1), 2)
#' coherence(fit, sim$dtm, measure = "npmi", n = 5)
#' heldout_loglik(fit, sim$dtm[1:20, ], method = "completion", by = "tokens",
#'                observed_frac = 0.7, seed = 1)
NULL

# Stream ids of OPE blocks: the loop hands each (lap, batch) its own seed;
# block b of a batch draws from stream ope_stream_offset + b of that seed.
ope_stream_offset <- 0x4F5045 * 2^20 # "OPE"

# Settings of Algorithm 1 from a control list (engine-specific controls
# reach `control` through fit_lda()'s `...`).
ope_settings <- function(control, K, call = caller_call()) {
  iter <- control$ope_iter %||% 50L
  eps <- control$ope_eps %||% min(1e-10, 0.01 / K)
  iter <- check_count(iter, "ope_iter", min = 1, max = 1e6, call = call)
  eps <- check_number(eps, "ope_eps", lower = 0, upper = 1 / K, lower_open = TRUE,
                      upper_open = TRUE, call = call)
  list(iter = iter, eps = eps)
}

# Called by fit_lda() for local = "ope": validates and fills the OPE controls.
# Every learner keeps its topics in a lazy store between batches, so that a
# batch costs O(K x its vocabulary): ML-OPE and Online-OPE the store of
# stochastic steps (scale X, updated at the batch's words; lda_global_ml_lazy(),
# lda_global_stochastic_lazy()), Streaming- and memoized OPE the store their
# summaries are added to (lda_global_streaming_lazy(), lda_global_memoized_lazy()).
# The registry chooses these steps (lda_engine_ope(), R/engines.R).
#
# fit_lda()'s `L` counts for OPE only when given (its default, min(8, K), is
# the vb step's): control$ope_L is then L, and each document's summary keeps
# L topics (ope_run(top_L = )); NA (not given, or L = K) keeps the dense
# summary. control$ope_sparse_rest: 2 (the default for global "ml" and
# "stochastic") the shape form: each document's L largest proportions as
# their excess over the mean of its others, and that mean as a tail
# weight per word (ope_doc_shape(), src/lda-ope.c); 1 (the default for
# "streaming" and "memoized") the rest of a document's mass sampled onto one
# topic; 0 the top L renormalised (options(sparsevi.ope_sparse_rest), read
# when the fit starts; ?ope).
lda_ope_control <- function(control, call = caller_call()) {
  env <- parent.frame()
  s <- ope_settings(control, control$K, call = call)
  control$ope_iter <- s$iter
  control$ope_eps <- s$eps
  given <- lda_given(env)
  x <- get0("x", envir = env, inherits = FALSE)
  if (identical(control$global, "stochastic")) {
    control <- lda_default_batches(control, ope_batch_size(control$n_docs), given, x)
  }
  if (is.null(control$ope_L)) {
    control$ope_L <- if ("L" %in% given) control$L else NA_integer_
  }
  control$ope_L <- ope_top_L(control$ope_L, control$K)
  control$background <- lda_check_background(control$background, ope_background(control$K),
                                             call = call)
  if (is.null(control$ope_sparse_rest)) {
    shape_ok <- control$global %in% ope_shape_globals
    rest <- getOption("sparsevi.ope_sparse_rest")
    control$ope_sparse_rest <- if (is.null(rest)) {
      if (shape_ok) 2L else 1L
    } else {
      check_count(rest, "options(sparsevi.ope_sparse_rest)", min = 0, max = 2, call = call)
    }
    if (control$ope_sparse_rest == 2L && !shape_ok) {
      abort(sprintf("`options(sparsevi.ope_sparse_rest = 2)` (the shape form of the sparse summaries) works with `global = \"ml\"` or `\"stochastic\"`, not \"%s\": set the option to 1 (sampled) or 0 (renormalised) for this learner.",
                    control$global),
            "argument", call = call)
    }
  }
  control
}

# OPE's default background: 0.1 up to K = 200, none above, as measured in
# ?ope, "Background topic" (results/quality.txt, "a background topic for
# the other engines"; above K = 200 none: at K = 300 0.1 cost 0.03-0.22
# nats per token).
ope_background <- function(K) if (K > 200) 0 else 0.1

# The learners whose global step reads the shape form of the sparse
# summaries (sparse_rest 2): it spreads each word's tail under the topics as
# they stand at the step, which memoized and streaming training, adding and
# taking back summaries laps apart, do not keep.
ope_shape_globals <- c("ml", "stochastic")

# ML-OPE's shape-form summary (list(words, p, k, v, r), ope_doc_shape() in
# src/lda-ope.c) as list(words, x): column u is r[u] / K on every topic plus
# its sums.
ope_shape_blocks <- function(S, K) {
  U <- length(S$words)
  x <- rep(S$r / K, each = K)
  i <- (rep.int(seq_len(U), diff(S$p)) - 1L) * K + S$k + 1L
  x[i] <- x[i] + S$v
  list(words = S$words, x = x)
}

# Online-OPE's default minibatch (global "stochastic", no batches given):
# the loop's max(100, D / 10) documents, at most ope_batch_max. D / 10 keeps
# 10 updates a lap whatever the corpus, too few for a stochastic learner on
# a large one: on 19,000 Wikipedia paragraphs at K = 100 minibatches of
# 1,900 gave NPMI 0.029 and 500 gave 0.111 (60,000 paragraphs: 0.081 and
# 0.140; held-out +0.045 and +0.055 nats per token). Below 5,000 documents
# (D / 10 under 500) nothing changes: there minibatches of 200 rather than
# D / 10 moved held-out by -0.012 (kos) and +0.014 (poliblog5k)
# (inst/bench/results/quality.txt, "Online-OPE's minibatches").
ope_batch_max <- 500L
ope_batch_size <- function(D) {
  as.integer(max(1, min(D, max(100, ceiling(D / 10)), ope_batch_max)))
}

# The summary's topics per document as C takes them: L when it is below K,
# else 0 (all K: the dense summary, also for NA or NULL).
ope_top_L <- function(L, K) {
  if (is.null(L) || is.na(L) || L >= K) 0L else as.integer(L)
}

# OPE for every document of `x` given topics `lambda` (K x V, rows normalised
# inside C, at the batch's words only). `store`: NULL, or c(offset, scale, K
# totals) when `lambda` is the X of a lazy store (beta_kv proportional to
# offset + scale X_kv). `summary`: "none", "theta" (ML-OPE) or "phi"
# (Online/Streaming). Returns list(theta = K x D proportions, summary = a
# sparse K x V dgCMatrix over the batch's words, or NULL, f_start, f_end):
# the objective f(theta) at the start and at the end of each document.
# top_L = L in 1 .. K - 1 makes the summary sparse (fit_lda(L = )): each
# document counts only L topics (ope_doc_top() in src/lda-ope.c):
# sparse_rest = 1 its L - 1 largest proportions and the rest of its mass on
# one topic drawn from the others in proportion to theta (unbiased), 0 its
# L largest proportions divided by their sum; the summary is then
# list(words, p, k, v) in either form (word words[u] has the sums
# v[p[u] + 1 .. p[u + 1]] at topics k, 0-based), the form the store's sparse
# update reads (lda_store_update()). sparse_rest = 2, the shape form: its L
# largest proportions as their excess over the mean of the others, and
# list(words, p, k, v, r) with r[u] the word's tail weight: its column is
# r[u] / K on every topic plus its sums for "theta" (ope_shape_blocks()),
# r[u] times its normalised topic column plus its sums for "phi"
# (cvb0_shape_parts(), in the global step).
# form = "blocks" gives the summary as list(words, x) instead: the batch's
# words (0-based) and their K values each, the form the learners' store
# updates read (lda_summary_blocks()), which C builds in place of the batch's
# topics (src/lda-ope-ffi.c): no second K x (batch vocabulary) table, no row
# indices, no copy.
ope_run <- function(x, lambda, alpha, iter = 50L, eps = 1e-10,
                    summary = c("none", "theta", "phi"), seed, stream0 = 0,
                    threads = 1L, store = NULL, vocab_size = NULL,
                    form = c("sparse", "blocks"), top_L = 0L, sparse_rest = 1L,
                    background = 0) {
  form <- match.arg(form)
  mode <- match(match.arg(summary), c("none", "theta", "phi")) - 1L
  if (!is.double(lambda)) storage.mode(lambda) <- "double"
  opts <- list(alpha = as.double(alpha), iter = as.integer(iter), eps = as.double(eps),
               background = as.double(background), mode = mode, stream0 = as.double(stream0),
               store = if (is.null(store)) NULL else as.double(store))
  if (!is.null(vocab_size)) opts$vocab_size <- as.integer(vocab_size)
  if (top_L > 0L) {
    opts$top_L <- as.integer(top_L)
    opts$sparse_rest <- as.integer(sparse_rest)
  }
  res <- .Call(ffi_lda_local_ope, x, lambda, opts, seed, as.integer(threads))
  S <- res$summary
  if (!is.null(S) && form == "sparse" && is.null(S$p)) S <- ope_blocks_dgc(S, nrow(lambda), ncol(lambda))
  list(theta = res$theta, summary = S, f_start = res$f_start, f_end = res$f_end)
}

# A list(words, x) summary as a sparse K x V dgCMatrix (its non-zero values).
ope_blocks_dgc <- function(S, K, V) {
  nz <- S$x != 0
  cnt <- integer(V)
  cnt[S$words + 1L] <- as.integer(.colSums(nz, K, length(S$words)))
  new_dgc(i = rep.int(seq_len(K) - 1L, length(S$words))[nz], p = c(0L, cumsum(cnt)),
          x = S$x[nz], Dim = c(as.integer(K), as.integer(V)))
}

# Topics OPE reads: beta of a point-estimate learner (ML-OPE keeps it in
# state$topics$beta), else the lazy store of the global steps (lda_ope_control(),
# lda_store_view()): the table (lda_store_table(): never inside a list) and
# `store` = c(offset, scale, totals), else lambda (normalised per topic in C).
ope_topics <- function(state, control) {
  if (!is.null(state$topics$beta)) return(list(table = "beta", store = NULL))
  st <- lda_store_view(state, control)
  if (!is.null(st)) return(list(table = st$table, store = st$read, vocab_size = st$vocab_size))
  list(table = "lambda", store = NULL)
}

# Local step "ope" of fit_lda(): see the loop contract in R/lda-train.R. The
# summary is S_kv = sum_d n_dv theta_dk for ML-OPE (global "ml") and the phi
# summary S_kv = sum_d n_dv phi_dvk for the variational globals.
lda_local_ope <- function(batch, state, control, seed, threads) {
  tp <- ope_topics(state, control)
  topics <- if (tp$table == "beta") state$topics$beta else lda_store_table(state, tp)
  s <- ope_settings(control, nrow(topics))
  summary <- if (lda_global_kind(control$global)$point) "theta" else "phi"
  res <- ope_run(batch, topics, control$alpha, s$iter, s$eps, summary, seed,
                 ope_stream_offset, threads, store = tp$store, vocab_size = tp$vocab_size,
                 form = "blocks", top_L = control$ope_L %||% 0L,
                 sparse_rest = control$ope_sparse_rest %||% 1L,
                 background = control$background %||% 0)
  D <- nrow(batch)
  list(
    summary = res$summary,
    doc_topic = res$theta,
    stats = list(
      # The MAP objective sum_d f(theta_d) is no ELBO term, so memoized OPE
      # records no ELBO (the loop's objective is NA); it is kept here instead.
      objective = NA_real_,
      ope_objective = sum(res$f_end),
      # expected tokens of each topic in the batch, sum_d n_d theta_dk: ML-OPE
      # has no lambda, so its topic sizes come from these (lda_global_ml)
      topic_mass = as.vector(res$theta %*% doc_lengths(batch)),
      ope_objective_start = sum(res$f_start),
      ope_improved = if (D > 0) mean(res$f_end > res$f_start) else NA_real_
    )
  )
}

# Global step "ml" (ML-OPE, Than & Doan Alg. 2): the topics themselves are
# updated on the simplex, beta <- (1 - rho_t) beta + rho_t beta_hat, with
# rho_t = s (tau + t)^(-kappa). beta starts as the initial lambda normalised.
# Alg. 2 counts updates from t = 1, and so do we here (the variational
# globals count from 0): with tau = 1, rho = 1 at t = 0 would replace beta by
# the first minibatch's beta_hat, which is exactly zero for every word that
# minibatch lacks, and ML-OPE has no eta to smooth it back.
lda_global_ml <- function(state, res, batch_id, control) {
  t <- state$t %||% 0
  rho <- step_size(t + 1, control$tau %||% 1, control$kappa %||% 0.9,
                   control$step_scale %||% 1)
  beta <- state$topics$beta %||% lda_normalise_rows(state$topics$lambda)
  summary <- res$summary
  if (inherits(summary, "Matrix")) summary <- as.matrix(summary)
  if (is.list(summary) && !is.null(summary$r)) summary <- ope_shape_blocks(summary, nrow(beta))
  if (is.list(summary)) summary <- cvb0_summary_dense(summary, nrow(beta), ncol(beta))
  state$topics$beta <- .Call(ffi_lda_global_ml, unname(beta), summary, as.double(rho))
  state <- ope_topic_mass(state, res, rho, control)
  state$t <- t + 1L
  state
}

# ML-OPE's step on a lazy store (the default, set by lda_ope_control()):
# beta = scale X with rows normalised when read, X and meta = c(scale, t, row
# sums of X) kept between minibatches (state$topics$store, offset 0) and updated IN PLACE:
# scale <- (1 - rho) scale and X[, batch words] += rho beta_hat / scale, as
# SCVB0's store does (the topic store, R/lda-store.R), O(K x batch vocabulary). A topic the
# batch never touched shrinks with the others and, normalised, keeps its row,
# as in lda_global_ml(). The store is made from beta or the initial lambda at
# the first step that has none and dropped by lda_ope_finish() whenever the
# topics are read; each lap works on its own copy (lda_store_lap_start()).
lda_global_ml_lazy <- function(state, res, batch_id, control) {
  t <- state$t %||% 0
  rho <- step_size(t + 1, control$tau %||% 1, control$kappa %||% 0.9,
                   control$step_scale %||% 1)
  st <- state$topics$store
  if (is.null(st)) {
    # a new table (never the beta of a fit being updated): the rows of beta,
    # or of the initial lambda, normalised (R's b0 / rowSums(b0), in C). A
    # new fit's start, given up to the store (state$topics$owned, R/lda-start.R),
    # is normalised in its own table and marked as the store's, as
    # lda_store_new(in_place = TRUE) does: no second K x V table.
    own <- is.null(state$topics$beta) && isTRUE(state$topics$owned)
    if (is.null(state$topics$beta) && !is.double(state$topics$lambda)) {
      storage.mode(state$topics$lambda) <- "double"
    }
    # (X only in the store: its update writes in place, R/lda-store.R)
    X <- .Call(ffi_lda_ope_rows,
               if (is.null(state$topics$beta)) state$topics$lambda else state$topics$beta,
               list(r_sums = TRUE, divide = TRUE, in_place = own, given = own,
                    mark = if (own) 1L else 0L))
    state$topics$owned <- NULL
    st <- list(X = X, meta = NULL, offset = 0)
    rm(X)
    st$meta <- c(1, as.double(t), rowSums(st$X))
    state$topics$store <- st
    state$topics$beta <- NULL
    state$topics$lambda <- NULL
  } else if (lda_store_shared(st)) {
    # (lda_store_own(): a copy when R shares the table, put in the object)
    st <- lda_store_copy(st)
    state$topics$store <- st
  }
  K <- nrow(st$X)
  # the shape form: K values per word, then as the dense summary below
  if (is.list(res$summary) && !is.null(res$summary$r)) {
    res$summary <- ope_shape_blocks(res$summary, K)
  }
  if (is.list(res$summary) && !is.object(res$summary) && !is.null(res$summary$p)) {
    # a sparse summary (fit_lda(L = )): beta_hat is its rows normalised too,
    # and the store adds it entry by entry
    S <- res$summary
    S$v <- S$v * ope_inverse_sums(S$v, S$k, K)[S$k + 1L]
    lda_store_update(st, S, rho, 1, t + 1L)
    state <- ope_topic_mass(state, res, rho, control)
    state$t <- t + 1L
    return(state)
  }
  # beta_hat: the summary's rows normalised, in the summary's own values (R's
  # x * ifelse(rs > 0, 1 / rs, 0) with rs = rowSums(); the summary is this
  # step's to use up: no copy of K x the batch vocabulary)
  b <- lda_summary_blocks(res$summary, K)
  b$x <- .Call(ffi_lda_ope_rows, b$x,
               list(K = K, r_sums = TRUE, divide = FALSE, in_place = TRUE, given = FALSE,
                    mark = 0L))
  lda_store_update(st, b, rho, 1, t + 1L)
  state <- ope_topic_mass(state, res, rho, control)
  state$t <- t + 1L
  state
}

# 1 / (the sum of v over each topic k, 0-based), or 0 for a topic without
# any: a sparse summary's row sums, inverted.
ope_inverse_sums <- function(v, k, K) {
  rs <- numeric(K)
  if (length(v)) {
    g <- rowsum(v, k, reorder = TRUE)
    rs[as.integer(rownames(g)) + 1L] <- g[, 1L]
  }
  ifelse(rs > 0, 1 / rs, 0)
}

# Topic sizes of ML-OPE: expected tokens per topic in the corpus, the batch's
# sum_d n_d theta_dk scaled by D / |B|, averaged with the same steps as beta
# (the first batch sets it).
ope_topic_mass <- function(state, res, rho, control) {
  mass <- res$stats$topic_mass
  if (!is.null(mass)) {
    mass <- mass * control$n_docs / max(1, ncol(res$doc_topic))
    state$topic_mass <- if (is.null(state$topic_mass)) mass else
      (1 - rho) * state$topic_mass + rho * mass
  }
  state
}

# Whatever reads the topics gets them dense: beta for ML-OPE (rows of scale X
# normalised), lambda (and memoized S) for the variational learners
# (lda_vb_finish()).
lda_ope_finish <- function(state, control, in_place = FALSE) {
  st <- state$topics$store
  if (is.null(st)) return(state)
  if (!identical(lda_step(control)$holds, "beta")) return(lda_vb_finish(state, control, in_place))
  # (as ffi_lda_normalise_rows(); in the store's table at the end of training,
  # in_place: the store ends here, no second K x V table)
  X <- st$X
  st <- NULL
  state$topics$store <- NULL
  # (in place, beta stays marked as the store's own until the fit names it:
  # lda_ope_topic_word())
  state$topics$beta <- .Call(ffi_lda_ope_rows, X,
                      list(r_sums = FALSE, divide = FALSE, in_place = isTRUE(in_place),
                           given = FALSE, mark = if (isTRUE(in_place)) 1L else -1L))
  state
}

# ML-OPE's beta as the fit's topic_word, with the vocabulary as column names
# (new_sparsevi_lda(), R/lda-class.R): the table lda_ope_finish(in_place = TRUE)
# built in the store's own is named in place (the fit's topic_word and
# state$topics$beta are then one table), any other is copied.
lda_ope_topic_word <- function(beta, vocab) {
  .Call(ffi_lda_ope_topic_word, beta, list(NULL, vocab))
}

# The end of a lap: as for the vb step (lda_vb_end_lap()).
lda_ope_end_lap <- function(state, control) lda_vb_end_lap(state, control)

# Topic sizes of an OPE fit for print() and summary(): ML-OPE has no lambda,
# so its sizes are the expected tokens per topic kept by lda_global_ml
# (state$topic_mass); the variational learners use lambda (NULL here).
lda_topic_sizes_ope <- function(fit) {
  if (is.null(fit$lambda)) fit$state$topic_mass else NULL
}

# predict(fit, newdata, type = "topics", method = "ope"): OPE inference of each
# document's topic mixture with the topics fixed at fit$topic_word.
lda_infer_ope <- function(fit, dtm, control, seed, threads) {
  tw <- fit$topic_word # built when read: once
  K <- nrow(tw)
  control <- control %||% list()
  s <- ope_settings(control, K)
  alpha <- control$alpha %||% fit$alpha
  res <- ope_run(dtm, tw, alpha, s$iter, s$eps, "none", seed,
                 ope_stream_offset, threads,
                 background = control$background %||% fit$control$background %||% 0)
  theta <- t(res$theta)
  dimnames(theta) <- list(dtm$doc_names, rownames(tw))
  theta
}
