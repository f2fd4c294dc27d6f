# The sparsevi_lda class: the fit object built from a training state, its
# validator, and the accessors that build large tables when they are read.

# The trace of an LDA fit: the common columns (R/train.R) and the acceptance
# rate of the vb step's restart proposals.
# (bytes_between_workers: what workers that own the topics by word sent each
# other in the lap, R/executor-sharded.R; 0 otherwise: all traffic is then
# the master's, bytes_sent and bytes_received)
lda_trace_extras <- c("restart_accept", "bytes_between_workers")
lda_empty_trace <- function() train_empty_trace(lda_trace_extras)

# Topic-word point estimate of a state as the held-out evaluator reads it
# (completion_score()): the `beta` a point-estimate learner (e.g. ML-OPE)
# keeps, or the posterior mean of the topics, as columns read from the
# store of the sparse kind or from lambda (new_lambda_topics()).
lda_state_topic_word <- function(state) {
  tp <- state$topics
  if (inherits(tp, "lda_topics_beta")) return(tp$beta)
  # the sparse kind kept for a fit (a gibbs store alone, gibbs_sparse_state()):
  # the evaluators read its columns (completion_score())
  if (inherits(tp, "lda_topics_sparse") && is.null(tp$lambda) && !is.null(state$gibbs_eta)) {
    return(new_sparse_topics(tp$sparse, state$gibbs_eta))
  }
  new_lambda_topics(tp$lambda)
}

# Dense topics as the held-out evaluator reads them: lambda and its row sums
# (rowSums(), the sums lda_normalise_rows() divides by), so that
# completion_score() takes the columns of each block of documents' words,
# lambda[, U] / rs, the same values as those columns of topic_word, without
# making the K x V topic_word (1 GB at K = 1000 on 129,289 words).
new_lambda_topics <- function(lambda) {
  if (!is.double(lambda)) storage.mode(lambda) <- "double"
  structure(list(lambda = lambda, rs = rowSums(lambda)), class = "sparsevi_lambda_topics")
}

# lambda / rowSums(lambda), bit for bit (long double row sums column after
# column, as rowSums() adds), in a new table by one pass in C: R's recycled
# division took 0.34 s of a 2.3 s default call at K = 100, V = 129,289. The
# R expression is its reference (test-lda-init.R).
lda_normalise_rows <- function(lambda) {
  .Call(ffi_lda_ope_rows, lambda,
        list(r_sums = TRUE, divide = TRUE, in_place = FALSE, given = FALSE, mark = 0L))
}

# An engine may hold its topics in a form of its own during training (cvb0:
# a lazy store kept across laps); its engine$finish() returns the state with
# its dense lambda, for whatever reads the topics (a fit, a held-out score).
# `in_place` (the end of training only): lambda is built in the store's own
# table (R/lda-store.R), no second K x V table.
lda_finish_state <- function(state, control, in_place = FALSE) {
  finish <- lda_engine(control$local)$finish
  if (is.null(finish)) state else finish(state, control, in_place = in_place)
}

# Above this many K x V entries a table counts as large: a memoized store's
# first fill collects each batch's dense blocks and a memoized fit keeps its
# sums S alone (lda-global.R, lda-vb.R). (A fit keeps its topics as
# `lambda` only at every size and builds the dense `topic_word` when it is
# read, `$.sparsevi_lda`.)
lda_dense_topics_max <- 2^25

new_sparsevi_lda <- function(state, control, x, trace, call, in_place = FALSE) {
  state <- lda_finish_state(state, control, in_place)
  # topic_word is built from lambda when read (`$.sparsevi_lda`), at every
  # size: the fit holds one K x V table, and the call does not pay for a
  # second (at K = 100, V = 129,289 it was a tenth of a default one-pass call)
  tw <- NULL
  if (!is.null(state$topics$beta)) {
    # a point-estimate learner's beta (ML-OPE) is the fit's topic_word
    # itself, named in place at the end of training: one K x V table, not two
    state$topics$beta <- lda_ope_topic_word(state$topics$beta, x$vocab)
    tw <- state$topics$beta
  }
  # the sparse kind of the topics (the gibbs engine's store alone, issue 33):
  # no lambda; `$` builds it when read, the methods read the store
  kind <- if (inherits(state$topics, "lda_topics_sparse") && is.null(state$topics$lambda)) "sparse"
          else "dense"
  # (recorded for the engine too, so that update() keeps the kind)
  if (!is.null(state$topics$sparse)) control$sparse_topics <- identical(kind, "sparse")
  lambda <- if (is.null(state$topics$beta)) state$topics$lambda else NULL
  # the fit holds its topics once, as `lambda`: saveRDS() writes a table once
  # for every list element that refers to it (a K = 1000 fit over 129,289
  # words wrote 2 GB and read back as two tables); lda_train() gives the
  # state its lambda back when training goes on
  if (!is.null(lambda)) state$topics$lambda <- NULL
  structure(
    list(topic_word = tw, lambda = lambda,
         topics_kind = kind,
         alpha = control$alpha, eta = control$eta, K = control$K, vocab = x$vocab,
         local = control$local, global = control$global, L = control$L,
         control = control, trace = trace, n_docs = nrow(x), n_tokens = corpus_tokens(x),
         reused_dead = state$reused, state = state, call = call),
    class = c("sparsevi_lda", "sparsevi_fit")
  )
}

validate_sparsevi_lda <- function(fit) {
  store <- lda_sparse_store(fit)
  if (!is.null(store)) {
    # the sparse kind: the store's dimensions and finite totals, O(K)
    if (length(store$tot) != fit$K || length(store$p) != length(fit$vocab) + 1L ||
        !all(is.finite(store$tot)) || !is.finite(store$scale)) {
      abort("internal error: invalid sparse topics.", "internal")
    }
    return(fit)
  }
  # the stored table, or lambda (a large fit builds topic_word when read);
  # entries are positive, so finite row sums mean finite entries
  tw <- .subset2(fit, "topic_word")
  if (is.null(tw)) tw <- .subset2(fit, "lambda")
  if (is.null(tw)) tw <- lda_fit_topics(fit)$S # lambda when read
  # a large fit's lambda with the row sums its engine tracked for it (SCVB0):
  # those, not another O(K V) pass
  st <- .subset2(fit, "state")
  known <- is.null(.subset2(fit, "topic_word")) && is.matrix(tw) &&
    length(st$tot) == nrow(tw) && !is.null(st$t) && identical(st$tot_t, st$t)
  rs <- if (known) st$tot else if (is.matrix(tw)) rowSums(tw) else NA_real_
  if (!is.matrix(tw) || nrow(tw) != fit$K || ncol(tw) != length(fit$vocab) ||
      !all(is.finite(rs)) ||
      (!is.null(.subset2(fit, "topic_word")) && any(abs(rs - 1) > 1e-8))) {
    abort("internal error: invalid topic-word matrix.", "internal")
  }
  fit
}

# fit$topic_word of a large fit is built from lambda when read (see
# lda_dense_topics_max), and so is fit$lambda of a large memoized fit, which
# keeps its sums S alone (lambda = eta + S); every other field is the list's
# own.
#' @export
`$.sparsevi_lda` <- function(x, name) {
  val <- .subset2(x, name, exact = FALSE)
  if (is.null(val) && identical(name, "lambda")) return(lda_fit_lambda(x))
  if (is.null(val) && identical(name, "topic_word")) {
    lam <- lda_fit_lambda(x)
    if (is.null(lam)) return(NULL)
    val <- lda_normalise_rows(lam)
    dimnames(val) <- list(NULL, .subset2(x, "vocab"))
  }
  val
}

#' @export
`[[.sparsevi_lda` <- function(x, i, ...) {
  if (identical(i, "topic_word") || identical(i, "lambda")) return(`$.sparsevi_lda`(x, i))
  .subset2(x, i, ...)
}

# A fit's lambda: its own, or built from the memoized sums S it keeps
# instead (a large memoized fit, lda_vb_finish()), or from the sparse store
# of a sparse fit (a dense K x V table, built at each read); NULL for ML-OPE
# (beta).
lda_fit_lambda <- function(fit) {
  lam <- .subset2(fit, "lambda")
  if (!is.null(lam)) return(lam)
  store <- lda_sparse_store(fit)
  if (!is.null(store)) return(gibbs_materialise(store, .subset2(fit, "eta")))
  tp <- lda_fit_topics(fit)
  if (is.null(tp$S) || !is.null(tp$beta)) return(NULL)
  lda_topics_lambda(tp, .subset2(fit, "eta"))
}

# A fit's training state, its lambda put back in its topics object (a fit
# holds lambda once, outside its state: new_sparsevi_lda()), as training
# goes on from it (lda_train()); also of a fit saved by an older version.
lda_fit_state <- function(fit) {
  st <- lda_state_topics(.subset2(fit, "state"))
  if (!is.null(st) && is.null(st$topics$lambda) && is.null(st$topics$beta)) {
    st$topics$lambda <- .subset2(fit, "lambda")
  }
  st
}

# The topics object of a fit's state (R/lda-topics.R), also of a fit saved
# by an older version (its topic fields in the state itself).
lda_fit_topics <- function(fit) {
  st <- .subset2(fit, "state")
  tp <- .subset2(st, "topics")
  if (inherits(tp, "lda_topics")) tp else lda_state_topics(st)$topics
}

# ---- the sparse kind of a fit's topics (issue 33) ---------------------------

# The store of a sparse fit (fit$topics_kind "sparse": the gibbs engine's
# lambda = eta + scale (base + x), x sparse and word-major, with its K
# totals; R/lda-gibbs.R), or NULL for a fit with dense topics.
lda_sparse_store <- function(fit) {
  if (!is.list(fit) || !identical(.subset2(fit, "topics_kind"), "sparse")) return(NULL)
  lda_fit_topics(fit)$sparse
}

# Topics held as a store, as the evaluators read them instead of a dense K x
# V topic_word (completion_score(), heldout_loglik_left_to_right(),
# coherence()): the store and eta.
new_sparse_topics <- function(store, eta) {
  structure(list(store = store, eta = as.double(eta)), class = "sparsevi_sparse_topics")
}

# The topics of a fit as the evaluators read them: the sparse topics of a
# sparse fit, else the dense topic_word.
lda_eval_topics <- function(fit) {
  store <- lda_sparse_store(fit)
  if (!is.null(store)) return(new_sparse_topics(store, fit$eta))
  # lambda's columns, else a stored table (a point-estimate learner's beta)
  lda_fit_lambda_topics(fit) %||% fit$topic_word
}

# A fit's topics as lambda over its row sums (new_lambda_topics(): the
# values of topic_word without making the K x V table), or NULL when the
# fit stores its topic_word (a point-estimate learner's beta) or has no
# lambda.
lda_fit_lambda_topics <- function(fit) {
  if (!is.null(.subset2(fit, "topic_word"))) return(NULL)
  lam <- lda_fit_lambda(fit)
  if (is.null(lam)) NULL else new_lambda_topics(lam)
}
