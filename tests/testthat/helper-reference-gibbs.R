# Slow pure-R references of the gibbs engine's kernels (tiny inputs only).

# Exact conditional of one token of word w (1-based) given the other tokens'
# topic counts ndk: (alpha_k + ndk_k) exp(E log beta_kw), normalised.
ref_gibbs_conditional <- function(lambda, alpha, ndk, w) {
  elogb <- digamma(lambda[, w]) - digamma(rowSums(lambda))
  p <- (alpha + ndk) * exp(elogb)
  p / sum(p)
}

# One dense SVI step: lambda <- (1 - rho) lambda + rho (eta + mult N_hat).
ref_dense_svi <- function(lambda, nhat, rho, mult, eta) {
  (1 - rho) * lambda + rho * (eta + mult * nhat)
}

# A store (list(p, k, x, tot, scale)) from a dense K x V non-negative N*.
ref_store <- function(nstar) {
  m <- methods::as(methods::as(Matrix::Matrix(nstar, sparse = TRUE), "CsparseMatrix"),
                   "generalMatrix")
  list(p = as.integer(m@p), k = as.integer(m@i), x = as.double(m@x),
       tot = as.double(rowSums(nstar)), scale = 1)
}

# Left-to-right (eq. 12 of Mimno et al.) consuming the C kernel's uniforms in
# the same order: per document d (1-based) stream stream0 + d - 1; n - 1
# uniforms shuffle the tokens (Fisher-Yates from the end), then one uniform
# per (position, particle).
ref_ltr <- function(beta, alpha, m, particles, seed, stream0) {
  K <- nrow(beta)
  alpha <- rep_len(alpha, K)
  out <- numeric(nrow(m))
  for (d in seq_len(nrow(m))) {
    words <- rep(seq_len(ncol(m)), m[d, ])
    n <- length(words)
    u <- .Call(sparsevi:::ffi_svi_rng_unif, seed, stream0 + d - 1, n - 1 + n * particles)
    pos <- 1L
    if (n > 1) {
      for (i in (n - 1):1) {
        j <- floor(u[pos] * (i + 1)); pos <- pos + 1L
        tmp <- words[i + 1]; words[i + 1] <- words[j + 1]; words[j + 1] <- tmp
      }
    }
    ndk <- matrix(0, K, particles)
    ll <- 0
    for (i in seq_len(n)) {
      p <- 0
      for (r in seq_len(particles)) {
        tt <- (alpha + ndk[, r]) * beta[, words[i]]
        s <- sum(tt)
        p <- p + s / (i - 1 + sum(alpha))
        z <- which(cumsum(tt) > u[pos] * s)[1]; pos <- pos + 1L
        if (is.na(z)) z <- K
        ndk[z, r] <- ndk[z, r] + 1
      }
      ll <- ll + log(p / particles)
    }
    out[d] <- ll
  }
  out
}

# UMass coherence of each topic's top n words against a dense doc x term
# matrix m.
ref_umass <- function(topic_word, m, n) {
  present <- m > 0
  vapply(seq_len(nrow(topic_word)), function(k) {
    top <- order(topic_word[k, ], decreasing = TRUE)[seq_len(n)]
    s <- 0
    for (mm in 2:n) for (l in 1:(mm - 1)) {
      dl <- sum(present[, top[l]])
      if (dl == 0) next
      dml <- sum(present[, top[mm]] & present[, top[l]])
      s <- s + log((dml + 1) / dl)
    }
    s
  }, numeric(1))
}

# Best-match correlation of each true topic with the learned ones.
ref_topic_match <- function(learned, truth) {
  apply(stats::cor(t(truth), t(learned)), 1, max)
}

# A small training loop over the gibbs local and global steps (what fit_lda
# runs), for tests of the engine alone.
ref_gibbs_train <- function(dtm, K, laps = 5, batches = 4, seed = 1, threads = 1L,
                            eta = 0.3, alpha = 0.1, burnin = 3, samples = 2) {
  ns <- asNamespace("sparsevi")
  V <- ncol(dtm)
  D <- nrow(dtm)
  state <- lda_test_state(gibbs = ns$gibbs_store_empty(K, V), t = 0)
  control <- list(eta = eta, alpha = alpha, n_docs = D, burnin = burnin,
                  samples = samples, tau = 1, kappa = 0.6, step_scale = 1,
                  n_batches = batches)
  s <- ns$resolve_seed(seed)
  idx <- split(seq_len(D), rep_len(seq_len(batches), D))
  for (lap in seq_len(laps)) for (b in seq_along(idx)) {
    res <- ns$lda_local_gibbs(ns$dtm_subset(dtm, idx[[b]]), state, control, s, threads)
    state <- ns$lda_global_gibbs(state, res, b, control)
  }
  list(state = state, control = control,
       lambda = ns$gibbs_state_lambda(state, control))
}
