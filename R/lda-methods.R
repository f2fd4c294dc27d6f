# What a fit keeps besides its topics: the topic proportions of its training
# documents (sparse, the top few topics of each) and the held-out documents it
# scores after every lap, so that predict(fit), tidy(fit, "gamma") and
# update(fit) need nothing more from the user.

# Documents per block when inferring the training documents' proportions:
# a dense block of theta is block x K doubles, whatever the corpus size.
doc_topic_block <- 4096L

# The training documents' proportions: for each document the `n_keep` topics
# of largest posterior mean theta, renormalised to sum to 1, as a D x K
# dgCMatrix. Inferred with the fitted topics held fixed, by the engine's own
# method (predict()'s code path), in blocks of documents; the seed is the
# fit's, so the result is reproducible and does not depend on `threads`.
lda_doc_topics <- function(fit, x, n_keep) {
  K <- fit$K
  n_keep <- min(as.integer(n_keep), K)
  fun <- lda_fun("lda_infer_", fit$local)
  if (is.null(fun)) fun <- lda_infer_vb
  blocks <- if (inherits(x, "sparsevi_source")) {
    lapply(seq_along(x$files), function(b) list(source = b))
  } else {
    starts <- seq(1L, max(1L, nrow(x)), by = doc_topic_block)
    lapply(starts, function(s) list(rows = s:min(nrow(x), s + doc_topic_block - 1L)))
  }
  parts <- vector("list", length(blocks))
  names_all <- vector("list", length(blocks))
  for (i in seq_along(blocks)) {
    xb <- if (!is.null(blocks[[i]]$source)) source_batch(x, blocks[[i]]$source)
          else dtm_subset(x, blocks[[i]]$rows)
    seed <- floor(lda_unif(fit$control$seed, 3e6 + i, 2) * 4294967296)
    theta <- fun(fit, xb, NULL, seed, fit$control$threads)
    top <- .Call(ffi_svi_select_top, t(theta), n_keep, 0L) # n_keep x n, 1-based
    n <- nrow(theta)
    row <- rep(seq_len(n), each = n_keep)
    val <- theta[cbind(row, as.vector(top))]
    val <- val / rep(rowsum(val, row, reorder = FALSE)[, 1L], each = n_keep)
    parts[[i]] <- list(i = row, j = as.vector(top), x = val, n = n)
    names_all[[i]] <- xb$doc_names
  }
  offs <- c(0L, cumsum(vapply(parts, `[[`, 1L, "n")))
  D <- offs[length(offs)]
  docs <- unlist(names_all, use.names = FALSE)
  if (length(docs) != D) docs <- NULL
  Matrix::sparseMatrix(
    i = unlist(lapply(seq_along(parts), function(k) parts[[k]]$i + offs[k]), use.names = FALSE),
    j = unlist(lapply(parts, `[[`, "j"), use.names = FALSE),
    x = unlist(lapply(parts, `[[`, "x"), use.names = FALSE),
    dims = c(D, K), dimnames = list(docs, paste0("topic", seq_len(K)))
  )
}

# The training documents' proportions as training goes (issue 20): after
# each batch's local step, the `doc_topics` largest proportions of each of
# its documents, from the step's own document-topic state (vb, cvb0, gibbs:
# counts plus alpha; ope: theta), renormalised like lda_doc_topics(). The
# last lap's are the fit's doc_topic, so that nothing is re-inferred after
# training. Returns list(env, add), add(res, b) the hook of lda_lap(); add is
# NULL when no proportions are kept.
lda_kept_parts <- function(x, members, control) {
  n_keep <- control$doc_topics
  if (is.null(n_keep)) n_keep <- min(control$L, control$K)
  n_keep <- min(as.integer(n_keep), control$K)
  if (n_keep < 1L) return(list(env = NULL, add = NULL))
  rows <- if (inherits(x, "sparsevi_source")) {
    offs <- c(0L, cumsum(as.integer(x$n_docs)))
    lapply(seq_along(x$n_docs), function(b) offs[b] + seq_len(x$n_docs[b]))
  } else members
  env <- new.env(parent = emptyenv())
  env$n_keep <- n_keep
  env$D <- nrow(x)
  env$parts <- lapply(rows, function(r) if (length(r)) NULL else list(i = integer(0),
                                                                       j = integer(0),
                                                                       x = numeric(0)))
  alpha <- if (identical(control$local, "ope")) 0 else control$alpha
  add <- function(res, b) {
    w <- res$doc_topic
    n <- length(rows[[b]])
    if (is.null(w) || !is.matrix(w) || ncol(w) != n) return(invisible())
    if (alpha != 0) w <- w + alpha
    top <- .Call(ffi_svi_select_top, w, n_keep, 0L) # n_keep x n, 1-based
    col <- rep(seq_len(n), each = n_keep)
    val <- w[cbind(as.vector(top), col)]
    val <- val / rep(rowsum(val, col, reorder = FALSE)[, 1L], each = n_keep)
    env$parts[[b]] <- list(i = rep(rows[[b]], each = n_keep), j = as.vector(top), x = val)
    invisible()
  }
  list(env = env, add = add)
}

# The kept proportions as a D x K dgCMatrix, or NULL unless every batch's
# are there with `n_keep` topics each.
lda_kept_matrix <- function(kept, x, K, n_keep) {
  if (!is.environment(kept) || !identical(kept$n_keep, as.integer(n_keep)) ||
      any(vapply(kept$parts, is.null, TRUE)) || !identical(kept$D, nrow(x))) {
    return(NULL)
  }
  docs <- x$doc_names
  if (length(docs) != nrow(x)) docs <- NULL
  Matrix::sparseMatrix(
    i = unlist(lapply(kept$parts, `[[`, "i"), use.names = FALSE),
    j = unlist(lapply(kept$parts, `[[`, "j"), use.names = FALSE),
    x = unlist(lapply(kept$parts, `[[`, "x"), use.names = FALSE),
    dims = c(nrow(x), K), dimnames = list(docs, paste0("topic", seq_len(K)))
  )
}

# After training (fit_lda(), update()): attach the held-out documents and
# the training documents' proportions: those of the last lap's local steps
# when training kept them (lda_kept_parts()), else inferred with the fitted
# topics held fixed (lda_doc_topics()).
lda_keep <- function(fit, x, heldout, n_keep) {
  kept <- .subset2(fit, "kept")
  fit$kept <- NULL
  fit$heldout <- heldout
  fit$control$doc_topics <- n_keep
  fit$doc_topic <- if (n_keep > 0L) {
    m <- lda_kept_matrix(kept, x, fit$K, min(as.integer(n_keep), fit$K))
    if (is.null(m)) lda_doc_topics(fit, x, n_keep) else m
  }
  fit
}

check_doc_topics <- function(doc_topics, K, call = caller_call()) {
  if (isFALSE(doc_topics)) return(0L)
  check_count(doc_topics, "doc_topics", min = 0, max = K, call = call)
}

# update() of any fit: only the named arguments of its method, so a typo or
# a setting that cannot change (alpha, K ...) is an error, not ignored.
check_update_dots <- function(..., valid, call = caller_call()) {
  dots <- list(...)
  if (!length(dots)) return(invisible(TRUE))
  nm <- names(dots)
  if (is.null(nm)) nm <- rep("", length(dots))
  shown <- ifelse(nzchar(nm), paste0("`", nm, "`"), "an unnamed argument")
  abort(sprintf("update() does not take %s. Valid arguments: %s. Settings of the model itself (K, alpha, the engine ...) are fixed: fit a new model to change them.",
                paste(unique(shown), collapse = ", "), paste0("`", valid, "`", collapse = ", ")),
        "argument", call = call)
}
