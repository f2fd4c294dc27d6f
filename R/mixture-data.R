# Mixtures (fit_mixture()): the data, validated and converted for C, and the prior.

# ---- data ------------------------------------------------------------------

# Validate and convert data for C: numeric data become a double matrix
# (centred for the Gaussian and diagonal models); documents a CSR list.
mix_data <- function(X, likelihood, arg, threads = 1L, call = caller_call()) {
  if (likelihood == "multinomial") {
    x <- as_dtm_arg(X, arg, call)
    if (nrow(x) < 1L) abort(sprintf("`%s` has no documents.", arg), "data", call = call)
    check_nonempty_dtm(x, arg, call = call)
    return(list(lik = 3L, N = nrow(x), D = length(x$vocab), dtm = x,
                data = list(x$doc_ptr, x$term, x$count), columns = x$vocab,
                center = NULL, init_scale = NULL))
  }
  if (is.data.frame(X)) {
    ok <- vapply(X, is.numeric, logical(1))
    if (!all(ok)) {
      abort(sprintf("`%s` has non-numeric columns (%s); drop or encode them.", arg,
                    paste(names(X)[!ok], collapse = ", ")), "data", call = call)
    }
    X <- as.matrix(X)
  }
  if (is.numeric(X) && is.null(dim(X))) X <- matrix(X, ncol = 1L)
  if (!is.matrix(X) || !is.numeric(X)) {
    abort(sprintf("`%s` must be a numeric matrix or data frame with points in rows, not %s.",
                  arg, describe(X)), "data", call = call)
  }
  if (nrow(X) < 1L || ncol(X) < 1L) {
    abort(sprintf("`%s` is empty: it needs at least one row and one column.", arg), "data",
          call = call)
  }
  if (!is.double(X)) storage.mode(X) <- "double"
  # one pass in C: the finiteness check, column means, the centred copy and
  # its column mean squares (the same values as colMeans() and sweep())
  cc <- .Call(ffi_mix_center, X, likelihood == "zm_gaussian", as.integer(threads))
  if (!is.null(cc$bad)) {
    abort(sprintf("`%s` contains NA, NaN or Inf (first at row %d, column %d); remove or impute those values.",
                  arg, cc$bad[1L], cc$bad[2L]), "data", call = call)
  }
  check_magnitude(X, cc$center, arg, call = call, range = cc$range)
  lik <- match(likelihood, mix_likelihoods) - 1L
  v <- cc$spread
  list(lik = lik, N = nrow(X), D = ncol(X), data = cc$Xc,
       columns = colnames(X), center = cc$center, spread = v,
       init_scale = 1 / pmax(v, max(v) * 1e-12, .Machine$double.xmin))
}

mix_check_covariance <- function(data, likelihood, call = caller_call()) {
  if (!likelihood %in% c("gaussian", "zm_gaussian", "tied_gaussian")) return(invisible())
  if (data$D > data$N) {
    abort(sprintf("`X` has more columns (%d) than rows (%d), too few points for a full covariance: use covariance = \"diag\" (likelihood = \"diag_gaussian\") or \"spherical\", or reduce the dimension (e.g. with prcomp()).",
                  data$D, data$N), "data", call = call)
  }
  # relative to the widest column only: data on any scale that
  # check_magnitude() lets through are judged alike
  const <- which(data$spread <= 1e-12 * max(data$spread))
  if (length(const)) {
    nm <- if (is.null(data$columns)) as.character(const[1L]) else data$columns[const[1L]]
    what <- if (likelihood == "zm_gaussian") "is all zero" else "is constant"
    abort(sprintf("Column %s of `X` %s, so a full covariance is singular: drop that column or use covariance = \"diag\" (likelihood = \"diag_gaussian\").",
                  nm, what), "data", call = call)
  }
  invisible()
}

# Test data aligned to the training data's columns (or vocabulary).
mix_newdata <- function(newdata, data, arg, call = caller_call()) {
  likelihood <- mix_likelihoods[data$lik + 1L]
  if (likelihood == "multinomial") {
    x <- as_dtm_arg(newdata, arg, call)
    al <- dtm_align(x, data$columns)
    out <- list(lik = 3L, N = nrow(al$x), D = data$D,
                data = list(al$x$doc_ptr, al$x$term, al$x$count),
                dropped = al$dropped, dropped_tokens = al$dropped_tokens)
    return(out)
  }
  newdata <- pick_columns(newdata, data$columns, arg, call)
  if (is.data.frame(newdata)) newdata <- as.matrix(newdata)
  if (is.numeric(newdata) && is.null(dim(newdata)) && data$D == length(newdata)) {
    newdata <- matrix(newdata, nrow = 1L, dimnames = list(NULL, names(newdata)))
  }
  if (!is.matrix(newdata) || !is.numeric(newdata)) {
    abort(sprintf("`%s` must be a numeric matrix or data frame like the training data, not %s.",
                  arg, describe(newdata)), "data", call = call)
  }
  cols <- data$columns
  if (!is.null(cols) && !is.null(colnames(newdata))) {
    m <- match(cols, colnames(newdata))
    if (anyNA(m)) {
      abort(sprintf("`%s` lacks the training column(s) %s; give it the same columns as the training data.",
                    arg, paste(cols[is.na(m)], collapse = ", ")), "data", call = call)
    }
    newdata <- newdata[, m, drop = FALSE]
  } else if (ncol(newdata) != data$D) {
    abort(sprintf("`%s` has %d columns but the model was fitted to %d; give it the same columns as the training data.",
                  arg, ncol(newdata), data$D), "data", call = call)
  }
  if (anyNA(newdata) || any(!is.finite(newdata))) {
    abort(sprintf("`%s` contains NA, NaN or Inf; remove or impute those values.", arg),
          "data", call = call)
  }
  storage.mode(newdata) <- "double"
  Xc <- sweep(newdata, 2L, data$center, check.margin = FALSE)
  list(lik = data$lik, N = nrow(Xc), D = data$D, data = unname(Xc), dropped = 0L)
}

# A data frame given for prediction keeps the training columns, picked by
# name before any conversion, so other columns (a label such as iris's
# Species) are ignored, as predict methods do; a missing one is named.
pick_columns <- function(newdata, cols, arg, call = caller_call()) {
  if (!is.data.frame(newdata) || is.null(cols)) return(newdata)
  miss <- setdiff(cols, names(newdata))
  if (length(miss)) {
    abort(sprintf("`%s` lacks the training column(s) %s; give it the same columns as the training data.",
                  arg, paste(miss, collapse = ", ")), "data", call = call)
  }
  newdata[cols]
}

# Values whose squares overflow or underflow double precision (covariances,
# their determinants and the squared distances are formed from squares of
# the centred values): a classed error that says so and suggests rescaling,
# where the fit would otherwise call a column constant or fail in a
# factorisation. Per column of X (finite): the largest distance from
# `center` and the range (`range`: the columns' smallest and largest values,
# 2 x D, when the caller has them, as ffi_mix_center gives them).
mix_magnitude_max <- 1e150
mix_magnitude_min <- 1e-140

check_magnitude <- function(X, center, arg, call = caller_call(), range = NULL) {
  D <- ncol(X)
  if (is.null(center)) center <- numeric(D)
  dev <- spread <- numeric(D)
  for (j in seq_len(D)) {
    r <- if (is.null(range)) base::range(X[, j]) else range[, j]
    dev[j] <- max(abs(r - center[j]))
    spread[j] <- r[2L] - r[1L]
  }
  name <- function(j) {
    nm <- colnames(X)
    if (is.null(nm)) as.character(j) else nm[j]
  }
  big <- which(dev > mix_magnitude_max)
  if (length(big)) {
    j <- big[which.max(dev[big])]
    abort(sprintf("The values of `%s` are too large for double precision: column %s lies up to %.3g from its mean, so its squares (and the covariances) overflow. Rescale the data first, e.g. with scale(%s), or divide by 1e%d.",
                  arg, name(j), dev[j], arg, floor(log10(dev[j]))), c("scale", "data"),
          call = call)
  }
  small <- which(spread > 0 & spread < mix_magnitude_min)
  if (length(small)) {
    j <- small[which.min(spread[small])]
    abort(sprintf("The values of `%s` are too small for double precision: column %s varies by only %.3g, so its squares (and the covariances) underflow and it would look constant. Rescale the data first, e.g. with scale(%s), or multiply by 1e%d.",
                  arg, name(j), spread[j], arg, -floor(log10(spread[j]))), c("scale", "data"),
          call = call)
  }
  invisible()
}

mix_permute <- function(data, perm, threads = 1L) {
  if (data$lik == 3L) {
    x <- dtm_subset(data$dtm, perm)
    return(list(lik = 3L, N = data$N, D = data$D, data = list(x$doc_ptr, x$term, x$count)))
  }
  # rows gathered in C, column by column (the same values as X[perm, ])
  list(lik = data$lik, N = data$N, D = data$D,
       data = .Call(ffi_mix_rows, data$data, as.double(perm), as.integer(threads)))
}

mix_n_batches <- function(N, n_batches, batch_size, global, call = caller_call()) {
  if (!is.null(n_batches) && !is.null(batch_size)) {
    abort("Give at most one of `n_batches` and `batch_size`.", "argument", call = call)
  }
  if (global == "batch") return(1L)
  if (!is.null(n_batches)) return(check_count(n_batches, "n_batches", max = N, call = call))
  if (!is.null(batch_size)) {
    bs <- check_count(batch_size, "batch_size", call = call)
    return(as.integer(ceiling(N / min(bs, N))))
  }
  as.integer(max(1, min(20, N %/% 2000)))
}

# ---- prior -----------------------------------------------------------------

pack_lower <- function(M) M[upper.tri(M, diag = TRUE)]

unpack_lower <- function(p, D) {
  M <- matrix(0, D, D)
  M[upper.tri(M, diag = TRUE)] <- p
  M + t(M) - diag(diag(M), D)
}

mix_hyper <- function(data, likelihood, prior, alpha, gamma, nu, scale, kappa0, eta,
                      call = caller_call()) {
  D <- data$D
  # full and tied covariances: a Wishart prior on the precision; diagonal
  # and spherical: Gamma priors on the precisions (spherical pools the
  # per-dimension b0, see src/obs-spherical.c)
  full <- likelihood %in% c("gaussian", "zm_gaussian", "tied_gaussian")
  if (is.null(nu)) {
    nu <- if (full) D + 2 else 3
  } else {
    nu <- check_number(nu, "nu", lower = if (full) D - 1 else 0, lower_open = TRUE,
                       call = call)
  }
  h <- list(lik = data$lik, prior = if (prior == "dp") 1L else 0L,
            conc = if (prior == "dp") gamma else alpha, kappa0 = kappa0, nu0 = nu,
            eta = eta, m0 = NULL, B0 = NULL, b0 = NULL, logdet_B0 = 0, D = D)
  if (likelihood == "multinomial") return(h)
  v <- pmax(data$spread, max(data$spread) * 1e-6)
  if (!any(v > 0)) v <- rep(1, D)
  if (full) {
    # each column's own spread, not floored at 1e-6 of the widest column's
    # (as the diagonal models' Gamma priors are, for constant columns, which
    # mix_check_covariance() refuses here): the floor inflated the prior of
    # columns in small units beside large ones (state.x77's Illiteracy
    # beside its Area; rock): median log-likelihoods 157 and 14 nats below
    # Mclust's at the same K, against 1.6 and 0.1 below without it
    # (inst/bench/results/mixture.txt, part 5b, issue 39)
    if (all(data$spread > 0)) v <- data$spread
    B0 <- nu * scale * v
    h$B0 <- pack_lower(diag(B0, D))
    h$logdet_B0 <- sum(log(B0))
  } else {
    h$b0 <- nu / 2 * scale * v
  }
  if (likelihood != "zm_gaussian") h$m0 <- rep(0, D)
  h
}
