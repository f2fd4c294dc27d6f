# The topics of an LDA training state: one typed object, state$topics, that
# the training loop (R/lda-train.R), the global steps (R/lda-global.R), each
# engine's R file and the fit constructor (R/lda-class.R) read and write
# instead of fields of the state.
#
# An object of class c("lda_topics_<kind>", "lda_topics"): a list with the
# fields below (absent fields are NULL). Its kind says which table the local
# steps read, and follows from the fields (lda_topics_kind()); the `$<-`
# method sets a field and the class with it, so the class always names the
# kind the fields hold.
#
#   kind "beta"    beta: ML-OPE's topics (K x V, rows sum to 1): its fit's
#                  form and an update()'s start; its laps hold them as a
#                  store whose normalised rows they are.
#   kind "store"   store: the lazy affine topic store of R/lda-store.R,
#                  list(X, meta, eta or offset, ...), lambda = offset +
#                  scale X. While a new memoized fit's first lap holds its
#                  start fixed, lambda holds those topics too (the table
#                  the local steps read) and the store is pending (no X
#                  yet) or fills (lambda_tot: the totals of lambda).
#   kind "sparse"  sparse: the gibbs engine's sparse lazy store,
#                  list(p, k, x, tot, scale, base) (R/lda-gibbs.R); after a
#                  lap, lambda may hold its dense value too.
#   kind "dense"   lambda: the dense K x V table; S: the memoized sums
#                  (lambda = eta + S) when memoized training keeps them (a
#                  large memoized fit keeps S alone).
#   owned          TRUE while the topics are a new fit's start that the
#                  training loop alone holds (lda_train()): the first global
#                  step may then turn its table into a store in place (the
#                  C guard src/own.c then checks the table's own flag).
#
# Methods (S3 generics on the class, each with a method per kind):
#   lda_topics_lambda(tp, eta)      the dense K x V lambda the local steps read
#   lda_topics_columns(tp, U, eta)  lambda[, U] (U 1-based word numbers) without
#                                   the dense table where the kind allows
#   lda_topics_totals(tp, eta)      the K row sums of lambda
#   lda_topics_copy(tp, spare)      a lap's own copy of the topics (a store is
#                                   copied, into a spare table when given)
#   lda_topics_finish(tp, eta, ...) the topics in a fit's form: dense (lambda),
#                                   beta, or the sparse kind kept for a large
#                                   gibbs fit (keep_sparse = TRUE)
# Code run per minibatch reads fields with .subset2(): `$` on a classed list
# first looks for an S3 method, a fraction of a microsecond each time.
# eta: the prior of a store or sparse store that does not carry its offset
# (control$eta). The engines' own finishing (engine$finish, which also sets
# the step count and totals the fit records) and their cluster views
# (engine$columns) are written on these fields.
#
# Saved fits from older versions hold the topics as fields of the state
# itself (lambda, S, store, gibbs, beta and start_owned): lda_state_topics()
# moves them into the object (the start of lda_train(), update(), the fit's
# readers).

# A topics object of the given fields.
new_lda_topics <- function(lambda = NULL, S = NULL, store = NULL, sparse = NULL, beta = NULL,
                           owned = NULL) {
  tp <- list(lambda = lambda, S = S, store = store, sparse = sparse, beta = beta, owned = owned)
  tp <- tp[!vapply(tp, is.null, TRUE)]
  class(tp) <- lda_topics_class(tp)
  tp
}

# The kind of the fields of a topics object (or a list of them).
lda_topics_kind <- function(tp) {
  if (!is.null(tp$beta)) return("beta")
  if (!is.null(tp$store)) return("store")
  if (!is.null(tp$sparse)) return("sparse")
  "dense"
}

lda_topics_class <- function(tp) lda_topics_classes[[lda_topics_kind(tp)]]
lda_topics_classes <- lapply(c(dense = "dense", store = "store", sparse = "sparse", beta = "beta"),
                             function(k) c(paste0("lda_topics_", k), "lda_topics"))

# Setting a field keeps the class in step with the kind. (A few global
# steps per minibatch set a field: this stays a few microseconds.)
#' @export
`$<-.lda_topics` <- function(x, name, value) {
  oldClass(x) <- NULL
  x[[name]] <- value
  oldClass(x) <- if (!is.null(x[["beta"]])) lda_topics_classes$beta
                 else if (!is.null(x[["store"]])) lda_topics_classes$store
                 else if (!is.null(x[["sparse"]])) lda_topics_classes$sparse
                 else lda_topics_classes$dense
  x
}

#' @export
print.lda_topics <- function(x, ...) {
  cat(sprintf("<lda_topics: %s; fields %s>\n", lda_topics_kind(x),
              paste(names(unclass(x)), collapse = ", ")))
  invisible(x)
}

# A state with its topics as the object: a state from an older version (the
# topic fields in the state itself) has them moved into it.
lda_state_topics <- function(state) {
  if (is.null(state) || inherits(state$topics, "lda_topics")) return(state)
  old <- c("lambda", "S", "store", "gibbs", "beta", "start_owned")
  f <- state[intersect(old, names(state))]
  state[intersect(old, names(state))] <- NULL
  state$topics <- new_lda_topics(lambda = f$lambda, S = f$S, store = f$store,
                                 sparse = f$gibbs, beta = f$beta,
                                 owned = if (isTRUE(f$start_owned)) TRUE)
  state
}

# ---- lambda ------------------------------------------------------------------

lda_topics_lambda <- function(tp, eta = NULL) UseMethod("lda_topics_lambda")

#' @export
lda_topics_lambda.lda_topics_dense <- function(tp, eta = NULL) {
  if (!is.null(tp$lambda)) return(tp$lambda)
  if (is.null(tp$S)) return(NULL)
  .Call(ffi_lda_lambda_from_stats, tp$S, eta)
}

#' @export
lda_topics_lambda.lda_topics_store <- function(tp, eta = NULL) {
  if (!is.null(tp$lambda)) return(tp$lambda) # a memoized first lap's fixed topics
  st <- tp$store
  lda_store_lambda(st, lda_store_offset(st, eta))$lambda
}

#' @export
lda_topics_lambda.lda_topics_sparse <- function(tp, eta = NULL) {
  if (!is.null(tp$lambda)) return(tp$lambda)
  gibbs_materialise(tp$sparse, eta)
}

#' @export
lda_topics_lambda.lda_topics_beta <- function(tp, eta = NULL) tp$beta

# The offset of a store: its own (eta for SCVB0's, offset for the others),
# else the prior.
lda_store_offset <- function(st, eta) {
  if (!is.null(st$eta)) st$eta else if (!is.null(st$offset)) st$offset else eta
}

# ---- columns -----------------------------------------------------------------

lda_topics_columns <- function(tp, U, eta = NULL) UseMethod("lda_topics_columns")

#' @export
lda_topics_columns.default <- function(tp, U, eta = NULL) {
  lam <- lda_topics_lambda(tp, eta)
  if (!is.double(lam)) storage.mode(lam) <- "double"
  lda_table_columns(lam, U)
}

#' @export
lda_topics_columns.lda_topics_store <- function(tp, U, eta = NULL) {
  if (!is.null(tp$lambda)) return(NextMethod())
  st <- tp$store
  lda_store_offset(st, eta) + st$meta[1L] * lda_table_columns(st$X, U)
}

#' @export
lda_topics_columns.lda_topics_sparse <- function(tp, U, eta = NULL) {
  if (!is.null(tp$lambda)) return(NextMethod())
  gibbs_store_cols(tp$sparse, eta, U, "lambda")
}

# ---- totals ------------------------------------------------------------------

lda_topics_totals <- function(tp, eta = NULL) UseMethod("lda_topics_totals")

#' @export
lda_topics_totals.default <- function(tp, eta = NULL) {
  lam <- lda_topics_lambda(tp, eta)
  if (!is.double(lam)) storage.mode(lam) <- "double"
  .Call(ffi_lda_topic_totals, lam)
}

# (read once or twice per minibatch: fields by .subset2(), which skips the
# S3 dispatch `$` tries on a classed list)
#' @export
lda_topics_totals.lda_topics_store <- function(tp, eta = NULL) {
  st <- .subset2(tp, "store")
  if (!is.null(.subset2(tp, "lambda"))) return(st$lambda_tot %||% NextMethod())
  lda_store_totals(st, lda_store_offset(st, eta))
}

#' @export
lda_topics_totals.lda_topics_sparse <- function(tp, eta = NULL) {
  st <- tp$sparse
  (length(st$p) - 1) * (eta + st$scale * st$base) + st$scale * st$tot
}

# ---- copy --------------------------------------------------------------------

lda_topics_copy <- function(tp, spare = NULL) UseMethod("lda_topics_copy")

# Dense, beta and sparse topics are never written in place (their global
# steps return new tables): R's copy on write keeps the original.
#' @export
lda_topics_copy.default <- function(tp, spare = NULL) tp

# A store's own copy (lda_store_lap_start(), R/lda-store.R): into the
# table `spare$store` when it fits, which this call then replaces by the
# original's table, given up for a later lap's copy. A store the loop keeps
# safe on disk or sealed (a memoized store copied by its first batch) is the
# lap's as it is.
#' @export
lda_topics_copy.lda_topics_store <- function(tp, spare = NULL) {
  st <- tp$store
  if (is.null(st$X) || isTRUE(st$sealed)) return(tp)
  dest <- if (!is.null(spare)) spare$store
  tp$store <- if (is.matrix(dest) && identical(dim(dest), dim(st$X))) {
    lda_store_copy_into(st, dest)
  } else {
    lda_store_copy(st)
  }
  # this lap's starting table: free once this lap has completed, kept for a
  # later lap's copy as the package's own (ffi_lda_store_copy_into() writes
  # only a table so flagged)
  if (!is.null(spare)) spare$store <- lda_give_up(st$X)
  tp
}

# ---- finish ------------------------------------------------------------------

lda_topics_finish <- function(tp, eta = NULL, in_place = FALSE, keep_sparse = FALSE) {
  UseMethod("lda_topics_finish")
}

#' @export
lda_topics_finish.lda_topics_dense <- function(tp, eta = NULL, in_place = FALSE,
                                               keep_sparse = FALSE) {
  tp
}

#' @export
lda_topics_finish.lda_topics_beta <- function(tp, eta = NULL, in_place = FALSE,
                                              keep_sparse = FALSE) {
  tp
}

# lambda = offset + scale X, in the store's own table when in_place.
#' @export
lda_topics_finish.lda_topics_store <- function(tp, eta = NULL, in_place = FALSE,
                                               keep_sparse = FALSE) {
  st <- tp$store
  if (is.null(tp$lambda)) {
    tp$lambda <- lda_store_lambda(st, lda_store_offset(st, eta), in_place)$lambda
  }
  tp$store <- NULL
  tp$owned <- NULL
  tp
}

# The dense lambda from the sparse store, or the sparse kind itself.
#' @export
lda_topics_finish.lda_topics_sparse <- function(tp, eta = NULL, in_place = FALSE,
                                                keep_sparse = FALSE) {
  if (keep_sparse) {
    tp$lambda <- NULL
    return(tp)
  }
  if (is.null(tp$lambda)) tp$lambda <- gibbs_materialise(tp$sparse, eta)
  tp
}
