# Global steps of LDA (notes/math.md §3). Each takes the state, the local
# step's result for one batch and the batch's id, and returns the new state.
# The arithmetic runs in C (src/lda-global.c through src/lda-global-ffi.c).

# Memoized: S <- S - S_b(old) + S_b(new); lambda = eta + S.
# Until every batch has been cached once (the first lap of a fit, or of
# update() on another corpus) the topics keep their value and only S
# accumulates, so every batch's first local step sees the same topics, as
# in a batch lap; lambda = eta + S from the moment the cache is complete.
# Setting lambda = eta + S after each first-lap batch instead (topics fitted
# to the batches seen so far) settled in poorer optima on kos and nips_f20
# (K = 100, L = 8: held-out -7.4854 vs -7.4563 after 20 laps on kos, -7.3806
# vs -7.3516 after 10 on nips_f20; inst/bench/results/lda-sparse.txt).
lda_global_memoized <- function(state, res, batch_id, control) {
  old <- state$cache[[batch_id]]
  S <- state$topics$S %||% matrix(0, nrow(res$summary), ncol(res$summary)) # none yet: zeros
  out <- .Call(ffi_lda_global_memoized, S, old, res$summary, control$eta)
  state$topics$S <- out$S
  state$cache[batch_id] <- list(res$summary)
  if (!any(vapply(state$cache, is.null, TRUE))) state$topics$lambda <- out$lambda
  state$doc_obj[batch_id] <- res$stats$objective
  state$t <- state$t + 1L
  state
}

# The same step for the "vb" and "ope" local steps (their default for
# memoized training, set by lda_vb_control() and lda_ope_control()),
# O(K x batch vocabulary) per batch instead of O(K V): S lives in a store
# (state$topics$store: X = max(S, 0), meta = c(1, t, row sums of X)) updated IN PLACE at
# the words of the batch's old and new summaries, and once every batch is
# cached the local step reads lambda = eta + X from it instead of a dense
# lambda. The store outlives its lap, sealed (lda_vb_end_lap()): the next lap
# works on a copy made at its first batch, so the state of the last completed
# lap stays intact if a lap fails, and no dense lambda is built between laps
# (the objective reads the store; lda_vb_finish() builds S and lambda for
# whatever reads the topics). A new fit starts without S (an empty store).
# Until the cache is complete (first lap) the topics keep their value, as in
# lda_global_memoized(), and the store keeps their totals (lambda_tot).
lda_global_memoized_lazy <- function(state, res, batch_id, control) {
  st <- state$topics$store
  if ((is.null(st) && is.null(state$topics$S) && !is.null(state$topics$lambda)) ||
      isTRUE(st$pending)) {
    # a new fit's first lap: the topics are the start's, held fixed, and the
    # summaries are cached; the store is built from the cache at the end of
    # the lap (lda_memo_fill()), in the start's own table, so the start and
    # the store are never two K x V tables at once
    if (is.null(st)) {
      state$topics$store <- list(lambda_tot = .Call(ffi_lda_topic_totals, state$topics$lambda),
                                 t0 = as.double(state$t), pending = TRUE)
    }
    state$cache[batch_id] <- list(res$summary)
    state$doc_obj[batch_id] <- res$stats$objective
    state$t <- state$t + 1L
    return(state)
  }
  if (!is.null(st) && isTRUE(st$sealed) && !is.null(state$snapshots$store)) {
    # a large store kept safe on disk (lda_store_protect()): the lap goes
    # on in its table, the same values as the copy below
    .Call(ffi_lda_store_recount, st$X, st$meta, list(t = as.double(state$t)))
    st$sealed <- NULL
    if (!is.null(state$topics$lambda)) {
      st$lambda_tot <- .Call(ffi_lda_topic_totals, state$topics$lambda)
    }
    state$topics$store <- st
    state$topics$S <- NULL
  } else if (is.null(st) || isTRUE(st$sealed)) {
    from <- if (!is.null(st)) st$X else state$topics$S
    st <- lda_store_counts(from, state$t, nrow(res$summary), ncol(res$summary))
    # topics held fixed while the cache fills (first lap): their totals, so
    # that the local steps read only the batch's words of them
    if (!is.null(state$topics$lambda)) {
      st$lambda_tot <- .Call(ffi_lda_topic_totals, state$topics$lambda)
    }
    state$topics$store <- st
    state$topics$S <- NULL
  } else if (lda_store_shared(st)) {
    # (lda_store_own(): a copy when R shares the table, put in the object)
    st <- lda_store_copy(st)
    state$topics$store <- st
  }
  K <- nrow(st$X)
  old <- state$cache[[batch_id]]
  if (!is.null(old)) {
    b <- lda_summary_blocks(old, K)
    lda_store_add(st, b, -1)
  }
  b <- lda_summary_blocks(res$summary, K)
  lda_store_add(st, b, 1)
  state$cache[batch_id] <- list(res$summary)
  if (!any(vapply(state$cache, is.null, TRUE))) state$topics$lambda <- NULL
  state$doc_obj[batch_id] <- res$stats$objective
  state$t <- state$t + 1L
  state
}

# The end of a new fit's first memoized lap (lda_vb_end_lap()): the store
# from the cached summaries, added batch by batch in the order the global
# steps met them (the same sums, bit for bit, as adding each at its step),
# into the start's table itself when the fit owns it and the cache is
# complete (the topics are then eta + X, the start is no longer read).
lda_memo_fill <- function(state) {
  pend <- state$topics$store
  complete <- !any(vapply(state$cache, is.null, TRUE))
  K <- length(pend$lambda_tot)
  st <- if (complete && isTRUE(state$topics$owned)) {
    lda_store_empty_from_start(state, pend$t0)
  } else {
    lda_store_counts(NULL, pend$t0, K, ncol(state$topics$lambda))
  }
  if (!complete) st$lambda_tot <- pend$lambda_tot
  # (a large table: each batch's K x (batch vocabulary) blocks freed at once)
  collect <- as.double(K) * ncol(st$X) > lda_dense_topics_max
  for (b in seq_along(state$cache)) {
    if (is.null(state$cache[[b]])) next
    lda_store_add(st, lda_summary_blocks(state$cache[[b]], K), 1)
    if (collect) gc(verbose = FALSE, full = FALSE)
  }
  state$topics$store <- st
  if (complete) {
    state$topics$lambda <- NULL
    state$topics$owned <- NULL
  }
  state
}

# Batch: memoized with a single batch holding every document.
lda_global_batch <- function(state, res, batch_id, control) {
  lda_global_memoized(state, res, 1L, control)
}

# The step size rho_t = s (tau + t)^(-kappa) (step_size(), R/train.R).
lda_rho <- function(t, control) {
  step_size(t, control$tau, control$kappa, control$step_scale)
}

# Stochastic (SVI): lambda <- (1 - rho) lambda + rho (eta + D / |B| S_B).
lda_global_stochastic <- function(state, res, batch_id, control) {
  rho <- lda_rho(state$t, control)
  scale <- control$n_docs / max(1, ncol(res$doc_topic))
  state$topics$lambda <- .Call(ffi_lda_global_stochastic, state$topics$lambda, res$summary,
                               control$eta, rho, scale)
  state$t <- state$t + 1L
  state
}

# The same step on a lazy store, for the "vb" local step (its default for
# stochastic training, set by lda_vb_control()): lambda = eta + scale X with
# X (K x V) and meta = c(scale, t, row sums of X) kept between minibatches and
# updated IN PLACE by C (the topic store, R/lda-store.R, as SCVB0's): a
# minibatch multiplies scale by 1 - rho and adds rho (D / |B|) S / scale to
# its words' columns, O(K x its vocabulary) instead of rewriting K x V. The
# store is made from the dense lambda at the first step of a lap that has
# none (after a fit, update() or the moves between laps) and dropped by
# lda_vb_finish() whenever the topics are read. Each lap works on its own
# copy (lda_store_lap_start()).
lda_global_stochastic_lazy <- function(state, res, batch_id, control) {
  rho <- lda_rho(state$t, control)
  mult <- control$n_docs / max(1, ncol(res$doc_topic))
  st <- state$topics$store
  if (is.null(st)) {
    st <- lda_store_new(state, rowSums(state$topics$lambda), control$eta, state$t,
                        in_place = isTRUE(state$topics$owned))
    state$topics$owned <- NULL
    state$topics$store <- st
    state$topics$lambda <- NULL
  } else if (lda_store_shared(st)) {
    # (lda_store_own(): a copy when R shares the table, put in the object)
    st <- lda_store_copy(st)
    state$topics$store <- st
  }
  # (OPE's shape form, list(words, p, k, v, r): each word's tail spread over
  # its topic column as it stands, cvb0_store_update_shape())
  if (is.list(res$summary) && !is.null(res$summary$r)) {
    cvb0_store_update_shape(st, res$summary, lda_store_offset(st, control$eta), rho, mult,
                            state$t + 1L, threads = control$threads %||% 1L)
  } else {
    lda_store_update(st, lda_summary_blocks(res$summary, nrow(st$X)), rho, mult, state$t + 1L)
  }
  state$t <- state$t + 1L
  state
}

# Streaming (Broderick et al.): lambda <- lambda + S_B.
lda_global_streaming <- function(state, res, batch_id, control) {
  state$topics$lambda <- .Call(ffi_lda_global_streaming, state$topics$lambda, res$summary)
  state$t <- state$t + 1L
  state
}

# The same step for the "vb" local step (its default for streaming training,
# set by lda_vb_control()), O(K x batch vocabulary) per batch: lambda lives in
# a store (state$topics$store: X = lambda, meta = c(1, t, row sums), offset 0, so the vb
# step reads lambda = 0 + X) that each batch's summary is added to IN PLACE.
# As for memoized training, a lap copies lambda into its store at its first
# batch and lda_vb_end_lap() hands the store back as lambda.
lda_global_streaming_lazy <- function(state, res, batch_id, control) {
  st <- state$topics$store
  if (is.null(st)) {
    # (a new fit's start, given up: the store in its own table, no second
    # K x V table, as lda_store_new(in_place = TRUE))
    if (isTRUE(state$topics$owned)) lda_give_up(state$topics$lambda)
    st <- .Call(ffi_lda_store_counts, state$topics$lambda,
                list(t = as.double(state$t), K = NULL, V = NULL,
                     in_place = isTRUE(state$topics$owned), keep = 1L))
    state$topics$owned <- NULL
    st$offset <- 0
    state$topics$store <- st
    state$topics$lambda <- NULL
  } else if (lda_store_shared(st)) {
    # (lda_store_own(): a copy when R shares the table, put in the object)
    st <- lda_store_copy(st)
    state$topics$store <- st
  }
  b <- lda_summary_blocks(res$summary, nrow(st$X))
  lda_store_add(st, b, 1)
  state$t <- state$t + 1L
  state
}

# The exact ELBO of memoized / batch training (NA for other global steps).
# A memoized store (lda_global_memoized_lazy()) with its topics lambda = eta +
# X is read in place (the topic terms with S = X); a state whose topics are
# not yet eta + S (a first lap with batches never cached) is made dense.
lda_objective <- function(state, control) {
  if (!lda_step(control)$memoized || anyNA(state$doc_obj)) return(NA_real_)
  st <- state$topics$store
  if (!is.null(st) && is.null(state$topics$lambda)) {
    return(sum(state$doc_obj) + .Call(ffi_lda_elbo_topics, NULL, st$X, control$eta,
                                      control$threads))
  }
  state <- lda_finish_state(state, control)
  if (is.null(state$topics$S)) return(NA_real_)
  sum(state$doc_obj) + .Call(ffi_lda_elbo_topics, state$topics$lambda, state$topics$S, control$eta,
                             control$threads)
}

# Empirical Bayes eta (fit_lda(eta = "learn")), between laps of the "vb"
# local step: the eta that maximises the bound with the local factors fixed
# (src/lda-eb.c: Minka's fixed point on the Polya likelihood of the expected
# counts), and lambda = eta + counts for it. Memoized and batch training keep
# the counts S; stochastic and streaming training's lambda - eta is their
# running estimate of them.
lda_learn_eta <- function(state, control) {
  S <- if (!is.null(state$topics$S)) state$topics$S else pmax(state$topics$lambda - control$eta, 0)
  eb <- .Call(ffi_lda_eb_eta, S, control$eta, 500L, 1e-7)
  state$topics$lambda <- eb[1L] + pmax(S, 0)
  list(state = state, eta = eb[1L], iters = as.integer(eb[2L]))
}

# The eta a learned eta starts from: 0.5 (the tuned default) for
# vocabularies up to 5,000 terms, less for larger ones, so that the prior's
# total mass V * eta stays at 2,500 pseudo-counts per topic.
eta_learn_start <- function(V) min(0.5, 2500 / V)
