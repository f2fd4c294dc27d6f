# The "vb" local step of LDA (MATH.md section 1): dense (L = K) or L-sparse
# responsibilities, restart proposals and the batch summary, computed in C
# (src/lda-vb.c through src/lda-ffi.c).

# Resolve and check the vb step's own controls (given through `...` of
# fit_lda()). Returns `control` with the fields filled in.
lda_vb_control <- function(control, call = caller_call()) {
  get <- function(name, default) if (is.null(control[[name]])) default else control[[name]]
  # stochastic training: the lazy form of the global step (O(K x batch
  # vocabulary) per minibatch instead of O(K V))
  if (identical(control$global, "stochastic")) control$global_step <- "stochastic_lazy"
  # memoized training: S kept in a store updated at the batch's words
  if (identical(control$global, "memoized")) control$global_step <- "memoized_lazy"
  # streaming training: lambda kept in a store the batch summaries are added to
  if (identical(control$global, "streaming")) control$global_step <- "streaming_lazy"
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
  control
}

vb_int_opts <- function(control, L = control$L, restarts = isTRUE(control$restarts)) {
  as.integer(c(L, control$max_iter, control$select_every,
               if (restarts) control$restart_max else 0L, control$restart_iter))
}

vb_dbl_opts <- function(control, alpha = control$alpha) {
  as.double(c(alpha, control$tol, control$active_eps))
}

# Run the vb step on a dtm with topics `topics` (mode 0: Dirichlet parameters
# lambda; mode 1: a topic-word matrix). Returns the raw C result.
lda_vb_call <- function(x, topics, mode, control, threads, L = control$L,
                        restarts = isTRUE(control$restarts), objective = FALSE,
                        summary = TRUE, warm = NULL) {
  .Call(ffi_lda_local_vb, x$doc_ptr, x$term, x$count, ncol(topics), topics, as.integer(mode),
        vb_int_opts(control, L, restarts), vb_dbl_opts(control),
        c(isTRUE(objective), isTRUE(summary)), as.integer(threads), warm)
}

# The topics of a state as a local step reads them from a lazy store:
# list(table, read = c(offset, scale, K totals)) with lambda = offset + scale
# X, or NULL when the state's topics are a dense lambda to read in full. The
# store of stochastic, memoized or streaming training (offset eta, or 0 for
# streaming; table "store"); or, while a memoized first lap holds its topics
# fixed, those topics with the totals its store keeps (lambda_tot; table
# "lambda"). The table itself comes from lda_store_table().
lda_store_view <- function(state, control) {
  st <- state$vbstore
  if (is.null(st)) return(NULL)
  if (is.null(state$lambda)) {
    K <- nrow(st$X)
    return(list(table = "store",
                read = c(if (is.null(st$offset)) control$eta else st$offset,
                         st$meta[1L], st$meta[2L + seq_len(K)])))
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
    res <- .Call(ffi_lda_local_vb, batch$doc_ptr, batch$term, batch$count, ncol(lambda),
                 lambda, 2L, vb_int_opts(control), c(vb_dbl_opts(control), st$read),
                 c(control$global %in% c("memoized", "batch"), TRUE), as.integer(threads),
                 warm)
  } else {
    lambda <- state$lambda
    res <- .Call(ffi_lda_local_vb, batch$doc_ptr, batch$term, batch$count, ncol(lambda),
                 lambda, 0L, vb_int_opts(control), vb_dbl_opts(control),
                 c(control$global %in% c("memoized", "batch"), TRUE), as.integer(threads),
                 warm)
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
  st <- state$vbstore
  if (is.null(st)) return(state)
  if (identical(control$global_step, "streaming_lazy")) {
    state$lambda <- st$X
  } else if (identical(control$global_step, "memoized_lazy")) {
    state$S <- .Call(ffi_lda_store_release, st$X)
    # at the end of training a large fit keeps S alone (one K x V table):
    # its lambda = eta + S is built when read (lda_fit_lambda())
    large <- in_place && as.double(nrow(st$X)) * ncol(st$X) > lda_dense_topics_max
    if (is.null(state$lambda) && !large) {
      state$lambda <- .Call(ffi_lda_lambda_from_stats, st$X, control$eta)
    }
  } else {
    state$lambda <- lda_store_lambda(st, control$eta, in_place)$lambda
  }
  state$vbstore <- NULL
  state
}

# The end of a lap: a memoized store is sealed (the next lap copies it), a
# streaming store becomes lambda (no copy), a stochastic store is kept.
lda_vb_end_lap <- function(state, control) {
  if (is.null(state$vbstore)) return(state)
  switch(control$global_step %||% "",
         memoized_lazy = {
           if (isTRUE(state$vbstore$pending)) state <- lda_memo_fill(state)
           state$vbstore$sealed <- TRUE
           state
         },
         streaming_lazy = lda_vb_finish(state, control),
         state)
}
