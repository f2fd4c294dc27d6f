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
  fun <- lda_engine(fit$local)$infer
  if (is.null(fun)) fun <- lda_infer_vb
  blocks <- if (inherits(x, "sparsevi_source")) {
    at <- source_rows(x)
    lapply(seq_along(x$files), function(b) list(source = b, at = at[[b]]))
  } else {
    starts <- seq(1L, max(1L, nrow(x)), by = doc_topic_block)
    lapply(starts, function(s) list(rows = s:min(nrow(x), s + doc_topic_block - 1L)))
  }
  parts <- vector("list", length(blocks))
  rows <- vector("list", length(blocks))
  names_all <- vector("list", length(blocks))
  D <- 0L
  for (i in seq_along(blocks)) {
    xb <- if (!is.null(blocks[[i]]$source)) source_batch(x, blocks[[i]]$source)
          else dtm_subset(x, blocks[[i]]$rows)
    seed <- floor(lda_unif(fit$control$seed, 3e6 + i, 2) * 4294967296)
    theta <- fun(fit, xb, NULL, seed, fit$control$threads)
    parts[[i]] <- .Call(ffi_lda_top_share, t(theta), n_keep, 0)
    rows[[i]] <- if (!is.null(blocks[[i]]$at)) blocks[[i]]$at else D + seq_len(nrow(theta))
    D <- D + nrow(theta)
    names_all[[i]] <- xb$doc_names
  }
  docs <- unlist(names_all, use.names = FALSE)
  if (length(docs) != D) docs <- NULL
  if (!is.null(docs)) docs <- docs[order(unlist(rows, use.names = FALSE))]
  lda_kept_dgc(parts, rows, D, K, n_keep, docs)
}

# The top `L` of each column of the K x n matrix W + alpha, over their sum:
# list(j, x), document t's L topics (1-based, decreasing) and shares at
# t L + 1 .. t L + L. The R form of ffi_lda_top_share() (the reference of
# its test).
lda_top_share_r <- function(W, L, alpha) {
  W <- W + alpha
  top <- .Call(ffi_svi_select_top, W, as.integer(L), 0L) # L x n, 1-based
  col <- rep(seq_len(ncol(W)), each = L)
  val <- W[cbind(as.vector(top), col)]
  list(j = as.vector(top), x = unname(val / rep(rowsum(val, col, reorder = FALSE)[, 1L], each = L)))
}

# The D x K dgCMatrix of kept proportions: parts[[b]] from
# ffi_lda_top_share() for the documents rows[[b]] (every row once), L each;
# the slots are built in C (ffi_lda_kept_csc()).
lda_kept_dgc <- function(parts, rows, D, K, L, docs = NULL) {
  s <- .Call(ffi_lda_kept_csc, parts, lapply(rows, as.integer), as.integer(D),
             as.integer(K), as.integer(L))
  methods::new("dgCMatrix", i = s$i, p = s$p, x = s$x, Dim = c(as.integer(D), as.integer(K)),
               Dimnames = list(docs, paste0("topic", seq_len(K))))
}

# The R form of lda_kept_dgc() (the reference of its test).
lda_kept_csc_r <- function(parts, rows, D, K, L, docs = NULL) {
  Matrix::sparseMatrix(
    i = rep(unlist(rows, use.names = FALSE), each = L),
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
  rows <- if (inherits(x, "sparsevi_source")) source_step_rows(x, members) else members
  env <- new.env(parent = emptyenv())
  env$n_keep <- n_keep
  env$D <- nrow(x)
  env$rows <- rows
  env$parts <- lapply(rows, function(r) if (length(r)) NULL else list(j = integer(0),
                                                                       x = numeric(0)))
  alpha <- if (lda_engine_can(control$local, "proportions")) 0 else control$alpha
  add <- function(res, b) {
    w <- res$doc_topic
    if (inherits(w, "sparsevi_top_share")) {
      # (made where the batch ran, lda_result_top_share(): the same values)
      if (identical(attr(w, "n"), length(rows[[b]]))) env$parts[[b]] <- list(j = w$j, x = w$x)
      return(invisible())
    }
    if (is.null(w) || ncol(w) != length(rows[[b]])) return(invisible())
    part <- lda_top_share(w, n_keep, alpha)
    if (!is.null(part)) env$parts[[b]] <- part
    invisible()
  }
  list(env = env, add = add, top = c(n_keep, alpha))
}

# A local step's result with its documents' proportions as add() of
# lda_kept_parts() keeps them, where the step ran: the n_keep largest of
# each document's (w + alpha), renormalised (top = c(n_keep, alpha)). A
# worker of a sharded fit sends this instead of the K x n matrix (8 MB
# for 1,000 documents at K = 1000, against about 100 KB at n_keep = 8).
lda_result_top_share <- function(res, top) {
  w <- res$doc_topic
  if (is.null(w) || inherits(w, "sparsevi_top_share")) return(res)
  part <- lda_top_share(w, as.integer(top[1L]), top[2L])
  if (is.null(part)) return(res)
  res$doc_topic <- structure(part, class = "sparsevi_top_share", n = ncol(w))
  res
}

# Each column's n_keep largest (w + alpha), renormalised (list(j, x), as
# ffi_lda_top_share() gives): w a dense K x n matrix, or a dgCMatrix (the
# gibbs engine's counts), read without its dense form, with the same result.
lda_top_share <- function(w, n_keep, alpha) {
  if (inherits(w, "dgCMatrix")) {
    return(.Call(ffi_lda_top_share_csc, w@p, w@i, w@x, nrow(w), as.integer(n_keep),
                 as.double(alpha)))
  }
  if (!is.matrix(w)) return(NULL)
  if (!is.double(w)) storage.mode(w) <- "double"
  .Call(ffi_lda_top_share, w, n_keep, alpha)
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
  lda_kept_dgc(kept$parts, kept$rows, nrow(x), K, n_keep, docs)
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
  fit$doc_key <- if (!is.null(fit$doc_topic) && inherits(x, "sparsevi_dtm")) dtm_key(x)
  fit
}

# Whether the corpus x (a sparsevi_dtm on the fit's vocabulary) holds the
# documents of the fit's doc_topic, in order: the same document names, or
# the same fingerprint (dtm_key()) as the corpus the fit kept them for.
lda_training_docs <- function(fit, x) {
  dt <- .subset2(fit, "doc_topic")
  if (is.null(dt) || nrow(x) != nrow(dt)) return(FALSE)
  if (!is.null(x$doc_names) && identical(x$doc_names, rownames(dt))) return(TRUE)
  key <- .subset2(fit, "doc_key")
  is.character(key) && identical(dtm_key(x), key)
}

check_doc_topics <- function(doc_topics, K, call = caller_call()) {
  if (isFALSE(doc_topics)) return(0L)
  check_count(doc_topics, "doc_topics", min = 0, max = K, call = call)
}
