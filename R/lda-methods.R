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

# After training (fit_lda(), update()): attach the held-out documents and
# the training documents' proportions.
lda_keep <- function(fit, x, heldout, n_keep) {
  fit$heldout <- heldout
  fit$control$doc_topics <- n_keep
  fit$doc_topic <- if (n_keep > 0L) lda_doc_topics(fit, x, n_keep) else NULL
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
