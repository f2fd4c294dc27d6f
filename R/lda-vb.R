# The "vb" local step of LDA (notes/math.md §2): dense (L = K) or L-sparse
# responsibilities, restart proposals and the batch summary, computed in C
# (src/lda-vb.c through src/lda-vb-ffi.c).

# fit_lda()'s control hook for the vb step (R/engines.R): the step's own
# controls (lda_vb_control()) and, for stochastic training, the offset of
# the step size when the caller gave no `tau` (vb_stochastic_tau).
lda_vb_fit_control <- function(control, call = caller_call()) {
  if (identical(control$global, "stochastic") && is.null(control$tau)) {
    control$tau <- vb_stochastic_tau
  }
  lda_vb_control(control, call = call)
}

# Stochastic training with the vb step (Hoffman, Blei & Bach's online VB)
# takes the step size rho_t = (16 + t)^-0.6 unless given `tau`: 0.19 at the
# first minibatch (scikit-learn's online LDA starts at 0.20), 0.058 after ten
# laps of ten minibatches. The loop's tau = 1 gives rho = 1 there, so the
# first minibatch's estimate, scaled up D / |B| times, replaced the start,
# and then 0.66, 0.52, ...: the topics followed each minibatch. Measured
# with inst/bench/quality.R on its seven corpora at K = 20, 100 and 200 (10
# laps, minibatches of max(100, D / 10); inst/bench/results/vb-stochastic.txt):
# against tau = 1, tau = 16 raised the held-out score in 19 of 21 cases
# (all 14 at K = 100 and 200, by 0.07-0.33 nats per token; lower by 0.001
# and 0.012 at K = 20) and NPMI in 14 (six of seven at K = 200), and led
# scikit-learn's and gensim's online VB on held-out score on all seven
# corpora at K = 100. tau = 64 raised NPMI a little more at K = 100 and 200
# but lowered the held-out score at K = 20 on all seven corpora (below
# tau = 1 on four); step_scale = 0.5 (a first step of 0.5), kappa = 0.9 or
# minibatches of 500 did worse.
vb_stochastic_tau <- 16

# Resolve and check the vb step's own controls (given through `...` of
# fit_lda()). Returns `control` with the fields filled in.
lda_vb_control <- function(control, call = caller_call()) {
  # (the form of the global step, lazy store or dense, is the registry's
  # choice: engine$global in R/engines.R)
  get <- function(name, default) if (is.null(control[[name]])) default else control[[name]]
  control$max_iter <- check_count(get("max_iter", 100L), "max_iter", min = 1, max = 1e6,
                                  call = call)
  control$tol <- check_positive(get("tol", 0.05), "tol", call = call)
  control$active_eps <- check_number(get("active_eps", 1e-8), "active_eps", lower = 0,
                                     call = call)
  control$select_every <- check_flag(get("select_every", FALSE), "select_every", call = call)
  control$restart_max <- check_count(get("restart_max", 4L), "restart_max", min = 0,
                                     max = 1e4, call = call)
  control$restart_iter <- check_count(get("restart_iter", 10L), "restart_iter", min = 1,
                                      max = 1e4, call = call)
  # with restarts = TRUE: the laps that run restart proposals (the first
  # restart_laps; default every lap)
  control$restart_laps <- check_count(get("restart_laps", 1e6), "restart_laps", min = 0,
                                      max = 1e6, call = call)
  # memoized / batch training stops once a lap moves the ELBO by less than
  # this share of its size (`passes` is then an upper bound); 0 never stops
  # each document's local step starts from its state of the previous lap
  # (issue 20: faster laps, but on kos a lower held-out score, -7.450 against
  # -7.398 cold: a document cannot pick up topics it had no mass on; off)
  control$warm_start <- check_flag(get("warm_start", FALSE), "warm_start", call = call)
  control$converge_tol <- check_number(get("converge_tol", 5e-3), "converge_tol",
                                       lower = 0, call = call)
  # the background topic (?fit_lda, "Background topic"): none by default. On
  # the seven corpora of quality.R at K = 20, 100 and 200 (memoized, 21
  # cases) 0.1, 0.2, 0.3 and 0.5 put NPMI within 0.05 of the default call's
  # in 14, 14, 16 and 15 cases against 15 without, and lowered the held-out
  # score in 17, 20, 21 and 21 (0.3: by 0.01-0.46 nats/token; wikipara20000
  # at K = 100: NPMI 0.123 -> -0.048, its other topics turned to rare
  # words); results/quality.txt, "a background topic for the other engines"
  control$background <- lda_check_background(control$background, 0, call = call)
  control
}

# The options of the vb step, one named list read by name in C
# (src/lda-vb-ffi.c, lda_vb_opts_from_r()): mode (0 lambda, 1 a topic-word matrix, 2 a
# lazy store, then `store` = c(offset, scale, K totals)), L, the iteration
# and restart controls, alpha, tol, active_eps, and whether to return the
# objective terms and the summary. Document completion (R/eval.R) runs the
# same step with its own values.
#
# summary_form: how C accumulates the L-sparse step's summary, 0 its choice
# (by word where that takes less memory than a dense K x batch-vocabulary
# table), 1 the dense table, 2 by word; the sums are the same doubles either
# way (tests hold 1 against 2).
vb_opts <- function(control, mode = 0L, L = control$L, restarts = isTRUE(control$restarts),
                    alpha = control$alpha, objective = FALSE, summary = TRUE, store = NULL,
                    summary_form = 0L, background = control$background %||% 0) {
  list(mode = as.integer(mode), L = as.integer(L), max_iter = as.integer(control$max_iter),
       select_every = as.integer(control$select_every),
       restart_max = if (restarts) as.integer(control$restart_max) else 0L,
       restart_iter = as.integer(control$restart_iter), alpha = as.double(alpha),
       background = as.double(background),
       tol = as.double(control$tol), active_eps = as.double(control$active_eps),
       objective = isTRUE(objective), summary = isTRUE(summary), store = store,
       summary_form = as.integer(summary_form))
}

# Run the vb step on a dtm with topics `topics` (mode 0: Dirichlet parameters
# lambda; mode 1: a topic-word matrix). Returns the raw C result.
lda_vb_call <- function(x, topics, mode, control, threads, L = control$L,
                        restarts = isTRUE(control$restarts), objective = FALSE,
                        summary = TRUE, warm = NULL) {
  .Call(ffi_lda_local_vb, x, ncol(topics), topics,
        vb_opts(control, mode, L, restarts, objective = objective, summary = summary),
        as.integer(threads), warm)
}

# The topics of a state as a local step reads them from a lazy store:
# list(table, read = c(offset, scale, K totals)) with lambda = offset + scale
# X, or NULL when the state's topics are a dense lambda to read in full. The
# store of stochastic, memoized or streaming training (offset eta, or 0 for
# streaming; table "store"); or, while a memoized first lap holds its topics
# fixed, those topics with the totals its store keeps (lambda_tot; table
# "lambda"). The table itself comes from lda_store_table().
lda_store_view <- function(state, control) {
  st <- state$topics$store
  if (is.null(st)) return(NULL)
  if (is.null(state$topics$lambda)) {
    K <- nrow(st$X)
    # (vocab_size: a store of some columns only, lda_columns_store())
    return(list(table = "store",
                read = c(if (is.null(st$offset)) control$eta else st$offset,
                         st$meta[1L], st$meta[2L + seq_len(K)]),
                vocab_size = st$V))
  }
  if (!is.null(st$lambda_tot)) return(list(table = "lambda", read = c(0, 1, st$lambda_tot)))
  NULL
}

#' @noRd
lda_local_vb <- function(batch, state, control, seed, threads) {
  # warm start (issue 20): the batch's documents start from their counts of
  # the previous lap (lda_lap() attaches them to the seed), K x n
  warm <- attr(seed, "warm")
  if (!is.null(warm)) warm <- as.matrix(warm)
  st <- lda_store_view(state, control)
  if (!is.null(st)) {
    # the topics as a lazy store (lambda = offset + scale X): the C step reads
    # the batch's words of X only
    lambda <- lda_store_table(state, st)
    opts <- vb_opts(control, 2L, objective = lda_global_kind(control$global)$memoized,
                    store = as.double(st$read))
    if (!is.null(st$vocab_size)) opts$vocab_size <- as.integer(st$vocab_size)
    res <- .Call(ffi_lda_local_vb, batch, ncol(lambda), lambda, opts,
                 as.integer(threads), warm)
  } else {
    lambda <- state$topics$lambda
    res <- .Call(ffi_lda_local_vb, batch, ncol(lambda), lambda,
                 vb_opts(control, 0L, objective = lda_global_kind(control$global)$memoized),
                 as.integer(threads), warm)
  }
  summary <- new_dgc(i = res$i, p = res$p, x = res$x, Dim = c(nrow(lambda), ncol(lambda)))
  list(summary = summary, doc_topic = res$doc_topic,
       stats = list(objective = sum(res$doc_obj), restart_tries = sum(res$tries),
                    restart_accepts = sum(res$accepts), iters = mean(res$iters)))
}

# predict(method = "vb"): D x K document-topic proportions (posterior mean
# of theta) with the fitted topics held fixed.
lda_infer_vb <- function(fit, dtm, control, seed, threads) {
  ctl <- lda_vb_control(fit$control)
  if (!is.null(control)) ctl[names(control)] <- control
  topics <- if (!is.null(fit$lambda)) fit$lambda else fit$topic_word
  mode <- if (!is.null(fit$lambda)) 0L else 1L
  res <- lda_vb_call(dtm, unname(topics), mode, ctl, threads, L = fit$L,
                     summary = FALSE)
  N <- t(res$doc_topic)
  theta <- (N + fit$alpha) / (rowSums(N) + fit$K * fit$alpha)
  theta
}

# Stochastic, memoized and streaming training keep their topics in a lazy
# store (lda_global_stochastic_lazy(), lda_global_memoized_lazy(),
# lda_global_streaming_lazy(), R/lda-global.R); whatever reads the topics (a
# fit, a held-out score, the moves between laps) gets the dense lambda, and
# memoized training its S.
lda_vb_finish <- function(state, control, in_place = FALSE) {
  st <- state$topics$store
  if (is.null(st)) return(state)
  holds <- lda_step(control)$holds
  if (identical(holds, "lambda")) {
    # (a store made in a new fit's start carries its mark: removed)
    state$topics$lambda <- .Call(ffi_lda_store_release, st$X)
  } else if (identical(holds, "sums")) {
    state$topics$S <- .Call(ffi_lda_store_release, st$X)
    # at the end of training a large fit keeps S alone (one K x V table):
    # its lambda = eta + S is built when read (lda_fit_lambda())
    large <- in_place && as.double(nrow(st$X)) * ncol(st$X) > lda_dense_topics_max
    if (is.null(state$topics$lambda) && !large) {
      state$topics$lambda <- .Call(ffi_lda_lambda_from_stats, st$X, control$eta)
    }
  } else {
    # lambda = eta + scale X (the stochastic step's store)
    state$topics <- lda_topics_finish(state$topics, control$eta, in_place)
    return(state)
  }
  state$topics$store <- NULL
  state
}

# The end of a lap: a memoized store is sealed (the next lap copies it), a
# streaming store becomes lambda (no copy), a stochastic store is kept.
lda_vb_end_lap <- function(state, control) {
  if (is.null(state$topics$store)) return(state)
  switch(lda_step(control)$holds,
         sums = {
           if (isTRUE(state$topics$store$pending)) state <- lda_memo_fill(state)
           state$topics$store$sealed <- TRUE
           state
         },
         lambda = lda_vb_finish(state, control),
         state)
}
