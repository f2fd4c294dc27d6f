# Slow pure-R references of the mixture kernels (src/mix-local.c,
# src/obs-*.c), written from notes/math.md §8 for tiny inputs.

ref_unpack <- function(p, D) {
  M <- matrix(0, D, D)
  M[upper.tri(M, diag = TRUE)] <- p
  M + t(M) - diag(diag(M), D)
}

ref_lmvgamma <- function(a, D) D * (D - 1) / 4 * log(pi) + sum(lgamma(a - (seq_len(D) - 1) / 2))

# E[ln pi_k] (point = FALSE) or ln E[pi_k].
ref_alloc <- function(h, Nk, point) {
  K <- length(Nk)
  if (h$prior == 0L) {
    a <- h$conc / K + Nk
    return(if (point) log(a / sum(a)) else digamma(a) - digamma(sum(a)))
  }
  rest <- sum(Nk) - cumsum(Nk)
  a <- 1 + Nk
  b <- h$conc + rest
  if (point) {
    lv <- log(a / (a + b)); l1v <- log(b / (a + b))
  } else {
    lv <- digamma(a) - digamma(a + b); l1v <- digamma(b) - digamma(a + b)
  }
  lv[K] <- 0
  lv + c(0, cumsum(l1v)[-K])
}

# Per-component posterior (list per k).
ref_posterior <- function(h, Nk, S) {
  D <- h$D
  lapply(seq_along(Nk), function(k) {
    s <- S[, k]
    n <- Nk[k]
    switch(h$lik + 1L, {
      kap <- h$kappa0 + n
      m <- (h$kappa0 * h$m0 + s[1:D]) / kap
      B <- ref_unpack(h$B0, D) + ref_unpack(s[-(1:D)], D) + h$kappa0 * tcrossprod(h$m0) -
        kap * tcrossprod(m)
      list(kappa = kap, m = m, B = B, nu = h$nu0 + n)
    }, {
      list(m = rep(0, D), B = ref_unpack(h$B0, D) + ref_unpack(s, D), nu = h$nu0 + n)
    }, {
      kap <- h$kappa0 + n
      m <- (h$kappa0 * h$m0 + s[1:D]) / kap
      a <- h$nu0 / 2 + n / 2
      b <- h$b0 + 0.5 * (s[D + 1:D] + h$kappa0 * h$m0^2 - kap * m^2)
      list(kappa = kap, m = m, a = a, b = b)
    }, {
      list(lambda = h$eta + s)
    }, {
      # tied: this component's mean; the shared B and nu are filled below
      kap <- h$kappa0 + n
      m <- (h$kappa0 * h$m0 + s[1:D]) / kap
      list(kappa = kap, m = m, scatter = ref_unpack(s[-(1:D)], D) +
             h$kappa0 * tcrossprod(h$m0) - kap * tcrossprod(m))
    }, {
      # spherical: one Gamma(nu0 D / 2 + n D / 2, b) precision per component,
      # b0 the diagonal prior's per-dimension b0 summed
      kap <- h$kappa0 + n
      m <- (h$kappa0 * h$m0 + s[1:D]) / kap
      a <- h$nu0 * D / 2 + n * D / 2
      b <- sum(h$b0) + 0.5 * (s[D + 1] + h$kappa0 * sum(h$m0^2) - kap * sum(m^2))
      list(kappa = kap, m = m, a = a, b = b)
    })
  })
}

# ref_posterior(), with the tied model's shared Wishart posterior: B = B0 +
# the components' scatters, nu = nu0 + N, on every component.
ref_posterior_all <- function(h, Nk, S) {
  post <- ref_posterior(h, Nk, S)
  if (h$lik != 4L) return(post)
  B <- ref_unpack(h$B0, h$D) + Reduce(`+`, lapply(post, `[[`, "scatter"))
  lapply(post, function(p) c(p, list(B = B, nu = h$nu0 + sum(Nk))))
}

# K x N log-weights for data X (rows = points; already centred as in the fit)
# or, for the multinomial, a dense count matrix.
ref_weights <- function(h, Nk, S, X, point = FALSE) {
  D <- h$D
  post <- ref_posterior_all(h, Nk, S)
  lw <- ref_alloc(h, Nk, point)
  W <- sapply(seq_along(Nk), function(k) {
    p <- post[[k]]
    if (h$lik == 3L) {
      lam <- p$lambda
      lb <- if (point) log(lam / sum(lam)) else digamma(lam) - digamma(sum(lam))
      return(as.vector(X %*% lb))
    }
    Y <- sweep(X, 2, p$m)
    if (h$lik == 5L) {
      prec <- (if (point) ref_point_divisor(p$a, 1) else p$a) / p$b
      c0 <- if (point) D / 2 * (log(prec) - log(2 * pi)) else
        D / 2 * (digamma(p$a) - log(p$b) - log(2 * pi)) - D / (2 * p$kappa)
      return(c0 - 0.5 * prec * rowSums(Y^2))
    }
    if (h$lik == 2L) {
      prec <- (if (point) ref_point_divisor(p$a, 1) else p$a) / p$b
      q <- as.vector(Y^2 %*% prec)
      c0 <- if (point) sum(-0.5 * log(2 * pi) + 0.5 * log(prec)) else
        sum(-0.5 * log(2 * pi) + 0.5 * (digamma(p$a) - log(p$b)) - 0.5 / p$kappa)
      return(c0 - 0.5 * q)
    }
    P <- (if (point) ref_point_divisor(p$nu, D + 1) else p$nu) * solve(p$B)
    q <- rowSums((Y %*% P) * Y)
    if (point) {
      c0 <- -D / 2 * log(2 * pi) + 0.5 * as.numeric(determinant(P)$modulus)
    } else {
      elogdet <- sum(digamma((p$nu + 1 - seq_len(D)) / 2)) + D * log(2) -
        as.numeric(determinant(p$B)$modulus)
      c0 <- -D / 2 * log(2 * pi) + 0.5 * elogdet
      if (h$lik %in% c(0L, 4L)) c0 <- c0 - D / (2 * p$kappa)
    }
    c0 - 0.5 * q
  })
  W <- matrix(W, ncol = length(Nk))
  t(sweep(W, 2, lw, `+`))
}

# Top-L responsibilities (N x K) from a K x N weight matrix.
ref_resp <- function(W, L) {
  t(apply(W, 2, function(w) {
    keep <- order(-w, seq_along(w))[seq_len(L)]
    r <- numeric(length(w))
    r[keep] <- exp(w[keep] - max(w[keep]))
    r / sum(r)
  }))
}

# Summaries (N, S) of responsibilities R (N x K) for data X.
ref_summary <- function(h, X, R) {
  D <- h$D
  S <- sapply(seq_len(ncol(R)), function(k) {
    r <- R[, k]
    switch(h$lik + 1L,
           c(colSums(r * X), crossprod(X, r * X)[upper.tri(diag(D), diag = TRUE)]),
           crossprod(X, r * X)[upper.tri(diag(D), diag = TRUE)],
           c(colSums(r * X), colSums(r * X^2)),
           colSums(r * X),
           c(colSums(r * X), crossprod(X, r * X)[upper.tri(diag(D), diag = TRUE)]),
           c(colSums(r * X), sum(r * X^2)))
  })
  list(N = colSums(R), S = matrix(S, ncol = ncol(R)))
}

# ELBO without the entropy term, at the conjugate posterior.
ref_objective <- function(h, Nk, S) {
  K <- length(Nk)
  D <- h$D
  if (h$prior == 0L) {
    a <- h$conc / K
    alloc <- lgamma(h$conc) - lgamma(h$conc + sum(Nk)) + sum(lgamma(a + Nk) - lgamma(a))
  } else {
    rest <- sum(Nk) - cumsum(Nk)
    k <- seq_len(K - 1)
    alloc <- sum(lbeta(1 + Nk[k], h$conc + rest[k]) + log(h$conc))
  }
  post <- ref_posterior_all(h, Nk, S)
  if (h$lik == 4L) {
    # tied: each component's mean, and the shared Wishart once
    p <- post[[1L]]
    obs <- sum(-Nk * D / 2 * log(pi) + D / 2 * log(h$kappa0 / (h$kappa0 + Nk))) +
      h$nu0 / 2 * h$logdet_B0 - p$nu / 2 * as.numeric(determinant(p$B)$modulus) +
      ref_lmvgamma(p$nu / 2, D) - ref_lmvgamma(h$nu0 / 2, D)
    return(alloc + obs)
  }
  obs <- sum(vapply(seq_len(K), function(k) {
    p <- post[[k]]
    n <- Nk[k]
    switch(h$lik + 1L, {
      -n * D / 2 * log(pi) + D / 2 * log(h$kappa0 / p$kappa) +
        h$nu0 / 2 * h$logdet_B0 - p$nu / 2 * as.numeric(determinant(p$B)$modulus) +
        ref_lmvgamma(p$nu / 2, D) - ref_lmvgamma(h$nu0 / 2, D)
    }, {
      -n * D / 2 * log(pi) + h$nu0 / 2 * h$logdet_B0 -
        p$nu / 2 * as.numeric(determinant(p$B)$modulus) +
        ref_lmvgamma(p$nu / 2, D) - ref_lmvgamma(h$nu0 / 2, D)
    }, {
      a0 <- h$nu0 / 2
      sum(-n / 2 * log(2 * pi) + 0.5 * log(h$kappa0 / p$kappa) + a0 * log(h$b0) -
            p$a * log(p$b) + lgamma(p$a) - lgamma(a0))
    }, {
      V <- length(p$lambda)
      sum(lgamma(p$lambda)) - lgamma(sum(p$lambda)) - V * lgamma(h$eta) + lgamma(V * h$eta)
    }, NULL, {
      a0 <- h$nu0 * D / 2
      b0 <- sum(h$b0)
      -n * D / 2 * log(2 * pi) + D / 2 * log(h$kappa0 / p$kappa) + a0 * log(b0) -
        p$a * log(p$b) + lgamma(p$a) - lgamma(a0)
    })
  }, numeric(1)))
  alloc + obs
}

# Adjusted Rand index of two labellings.
ari <- function(a, b) {
  tab <- table(a, b)
  c2 <- function(x) sum(x * (x - 1) / 2)
  n <- sum(tab)
  idx <- c2(tab)
  ea <- c2(rowSums(tab)) * c2(colSums(tab)) / (n * (n - 1) / 2)
  mx <- (c2(rowSums(tab)) + c2(colSums(tab))) / 2
  (idx - ea) / (mx - ea)
}

# The global step: memoized swap of one batch's summaries (old = NULL in lap
# 0) and the stochastic blend, as plain R arithmetic.
ref_global_memoized <- function(state, old, new) {
  if (is.null(old)) old <- list(N = 0, S = 0)
  list(N = pmax(state$N - old$N + new$N, 0), S = state$S - old$S + new$S)
}

ref_global_stochastic <- function(state, new, rho, w) {
  list(N = (1 - rho) * state$N + rho * w * new$N, S = (1 - rho) * state$S + rho * w * new$S)
}

# The point estimates' covariance is the posterior mean of Sigma, B / (nu -
# D - 1) (full), b / (a - 1) (diagonal), where defined with room to spare
# (nu - D - 1 >= 1, a - 1 >= 1); else B / min(nu, 1) (b / min(a, 1)).
# `shift` is D + 1 (full) or 1 (diagonal).
ref_point_divisor <- function(nu, shift) {
  if (nu - shift >= 1) nu - shift else min(nu, 1)
}

# Point estimates: posterior-mean weights, and per component the posterior
# mean with the covariance's posterior mean B / (nu - D - 1) (full), the
# variances' b / (a - 1) (diagonal) (see ref_point_divisor()) or the mean
# word distribution (multinomial).
ref_point_estimates <- function(h, Nk, S) {
  K <- length(Nk)
  D <- h$D
  if (h$prior == 0L) {
    w <- (h$conc / K + Nk) / (h$conc + sum(Nk))
  } else {
    rest <- pmax(sum(Nk) - cumsum(Nk), 0)
    ev <- (1 + Nk) / (1 + Nk + h$conc + rest)
    ev[K] <- 1
    w <- ev * c(1, cumprod(1 - ev)[-K])
  }
  post <- ref_posterior_all(h, Nk, S)
  out <- list(weights = w)
  if (h$lik == 3L) {
    out$topic_word <- t(vapply(post, function(p) p$lambda / sum(p$lambda), numeric(D)))
    return(out)
  }
  out$means <- t(vapply(post, function(p) p$m, numeric(D)))
  if (h$lik %in% c(2L, 5L)) {
    # spherical: one variance, repeated in each dimension
    out$variances <- t(vapply(post, function(p) rep_len(p$b / ref_point_divisor(p$a, 1), D),
                              numeric(D)))
  } else {
    out$covariances <- array(vapply(post, function(p) p$B / ref_point_divisor(p$nu, D + 1),
                                    numeric(D * D)),
                             c(D, D, K))
  }
  out
}

# The training points' assignments from a K x N weight matrix W (as
# fit_mixture() formed them in R before ffi_mix_assign): the first most
# responsible component, 1 minus its responsibility, the N x K
# responsibilities.
ref_assign <- function(W) {
  W <- t(W)
  k <- max.col(W, ties.method = "first")
  R <- exp(W - W[cbind(seq_along(k), k)])
  R <- R / rowSums(R)
  list(classification = k, uncertainty = 1 - R[cbind(seq_along(k), k)], z = R)
}

# Model-based agglomerative hierarchical clustering (src/mix-hc.c), naively:
# every pair's merge cost recomputed at every step from the clusters'
# points. The criterion of a cluster of n points with scatter W is
# n log(|W / n| + beta (tr W + alpha) / n), |W / n| = 0 while n <= D; each
# step merges the pair of lowest T(merged) - T(a) - T(b) (ties: the pair
# (a, b), a > b, of lowest a, then lowest b). Returns the (N - 1) x 2
# matrix of merges (clusters named by their smallest point, kept first)
# and the costs.
ref_mbhc <- function(Z, alpha, beta = 1) {
  N <- nrow(Z)
  D <- ncol(Z)
  term <- function(idx) {
    n <- length(idx)
    Y <- Z[idx, , drop = FALSE]
    W <- crossprod(sweep(Y, 2L, colMeans(Y)))
    det <- if (n > D) max(det(W / n), 0) else 0
    n * log(det + beta * (sum(diag(W)) + alpha) / n)
  }
  members <- as.list(seq_len(N))
  merges <- matrix(0L, N - 1L, 2L)
  cost <- numeric(N - 1L)
  for (s in seq_len(N - 1L)) {
    best <- NULL
    live <- which(!vapply(members, is.null, TRUE))
    for (a in live) for (b in live[live < a]) {
      cst <- term(c(members[[a]], members[[b]])) - term(members[[a]]) - term(members[[b]])
      if (is.null(best) || cst < best[3]) best <- c(a, b, cst)
    }
    merges[s, ] <- as.integer(best[2:1])
    cost[s] <- best[3]
    members[[best[2]]] <- c(members[[best[2]]], members[[best[1]]])
    members[best[1]] <- list(NULL)
  }
  list(merges = merges, cost = cost)
}
