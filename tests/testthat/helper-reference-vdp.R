# Slow pure-R references for the Fast-VDP engine (tiny data only).

# KL(Beta(a, b) || Beta(a0, b0)).
ref_kl_beta <- function(a, b, a0, b0) {
  lbeta(a0, b0) - lbeta(a, b) + (a - a0) * digamma(a) + (b - b0) * digamma(b) -
    (a + b - a0 - b0) * digamma(a + b)
}

# Log normaliser of Wishart(W, nu) in D dimensions.
ref_wishart_lnB <- function(W, nu) {
  D <- nrow(W)
  -nu / 2 * determinant(W)$modulus - nu * D / 2 * log(2) - D * (D - 1) / 4 * log(pi) -
    sum(lgamma((nu + 1 - seq_len(D)) / 2))
}

# KL(NW(m, beta, W, nu) || NW(m0, beta0, W0, nu0)), term by term from the
# definition E_q[ln q] - E_q[ln p].
ref_kl_nw <- function(m, beta, W, nu, m0, beta0, W0, nu0) {
  D <- length(m)
  L <- sum(digamma((nu + 1 - seq_len(D)) / 2)) + D * log(2) + c(determinant(W)$modulus)
  eq_lnq <- D / 2 * log(beta / (2 * pi)) + L / 2 - D / 2 +
    ref_wishart_lnB(W, nu) + (nu - D - 1) / 2 * L - nu * D / 2
  d <- m - m0
  eq_lnp <- D / 2 * log(beta0 / (2 * pi)) + L / 2 -
    beta0 / 2 * (D / beta + nu * sum(d * (W %*% d))) +
    ref_wishart_lnB(W0, nu0) + (nu0 - D - 1) / 2 * L - nu / 2 * sum(diag(solve(W0) %*% W))
  c(eq_lnq - eq_lnp)
}

# Free energy (eq. 5) of a fit's global parameters on the points X, with
# every point's q(z) at its optimum (eqs. 3, 6): an upper bound-free exact
# evaluation, no tree.
ref_vdp_free_energy <- function(fit, X) {
  post <- fit$posterior
  pr <- fit$prior
  T <- fit$T
  kl <- sum(ref_kl_beta(post$stick_a, post$stick_b, pr$a1, pr$a2))
  W0 <- solve(pr$W0inv)
  for (k in seq_len(T)) {
    kl <- kl + ref_kl_nw(post$m[k, ], post$beta[k], post$W[, , k], post$nu[k],
                         pr$m0, pr$beta0, W0, pr$nu0)
  }
  # S_{n,i} for i <= T, and the tail by summing many tied terms explicitly
  D <- ncol(X)
  a <- post$stick_a
  b <- post$stick_b
  eln1v <- digamma(b) - digamma(a + b)
  elnpi <- digamma(a) - digamma(a + b) + c(0, cumsum(eln1v))[seq_len(T)]
  ell <- function(m, beta, W, nu) {
    Xc <- sweep(X, 2, m)
    L <- sum(digamma((nu + 1 - seq_len(D)) / 2)) + D * log(2) + c(determinant(W)$modulus)
    0.5 * L - D / 2 * log(2 * pi) - D / (2 * beta) - nu / 2 * rowSums((Xc %*% W) * Xc)
  }
  S <- sapply(seq_len(T), function(k) elnpi[k] +
                ell(post$m[k, ], post$beta[k], post$W[, , k], post$nu[k]))
  S <- matrix(S, nrow(X))
  e0 <- ell(pr$m0, pr$beta0, W0, pr$nu0)
  elnv0 <- digamma(pr$a1) - digamma(pr$a1 + pr$a2)
  eln1v0 <- digamma(pr$a2) - digamma(pr$a1 + pr$a2)
  # tail components T+1 .. T+2000 summed term by term (geometric, converges)
  j <- 0:1999
  tail_log <- sum(eln1v) + elnv0 + log(sum(exp(j * eln1v0)))
  S <- cbind(S, tail_log + e0)
  mx <- apply(S, 1, max)
  kl - sum(mx + log(rowSums(exp(S - mx))))
}

# The pure-R predict() of a Fast-VDP fit (the reference for the C routine).
# Per point (rows) and component (columns, tail last): E ln pi + E ln p(x),
# Kurihara et al. eqs. 3-6, and the log predictive densities for eq. 7.
ref_vdp_scores <- function(object, X) {
  post <- object$posterior
  pr <- object$prior
  D <- object$dim
  T <- object$T
  a <- post$stick_a
  b <- post$stick_b
  elnv <- digamma(a) - digamma(a + b)
  eln1v <- digamma(b) - digamma(a + b)
  elnpi <- elnv + c(0, cumsum(eln1v))[seq_len(T)]
  ps0 <- digamma(pr$a1 + pr$a2)
  elnpi_tail <- sum(eln1v) + digamma(pr$a1) - ps0 - log1p(-exp(digamma(pr$a2) - ps0))
  ms <- c(lapply(seq_len(T), function(k) post$m[k, ]), list(pr$m0))
  Ws <- c(lapply(seq_len(T), function(k) post$W[, , k]), list(solve(pr$W0inv)))
  betas <- c(post$beta, pr$beta0)
  nus <- c(post$nu, pr$nu0)
  S <- matrix(0, nrow(X), T + 1L)
  logp <- matrix(0, nrow(X), T + 1L)
  for (k in seq_len(T + 1L)) {
    Xc <- sweep(X, 2L, ms[[k]])
    U <- chol(Ws[[k]])
    quad <- rowSums((Xc %*% t(U))^2)
    logdetW <- 2 * sum(log(diag(U)))
    nu <- nus[k]
    beta <- betas[k]
    elogdet <- sum(digamma((nu + 1 - seq_len(D)) / 2)) + D * log(2) + logdetW
    S[, k] <- 0.5 * elogdet - 0.5 * D * log(2 * pi) - 0.5 * D / beta - 0.5 * nu * quad
    # Student-t predictive: dof nu + 1 - D, precision (dof) beta / (1 + beta) W
    dof <- nu + 1 - D
    sc <- dof * beta / (1 + beta)
    logp[, k] <- lgamma((dof + D) / 2) - lgamma(dof / 2) - 0.5 * D * log(dof * pi) +
      0.5 * (logdetW + D * log(sc)) -
      0.5 * (dof + D) * log1p(sc * quad / dof)
  }
  S <- sweep(S, 2L, c(elnpi, elnpi_tail), `+`)
  list(S = S, logp = logp)
}

ref_vdp_predict <- function(object, X, type = "cluster", log = FALSE) {
  sc <- ref_vdp_scores(object, X)
  if (type == "density") {
    lw <- log(c(object$weights, object$tail_weight))
    L <- sweep(sc$logp, 2L, lw, `+`)
    mx <- apply(L, 1L, max)
    ld <- mx + log(rowSums(exp(L - mx)))
    return(if (log) ld else exp(ld))
  }
  S <- sc$S
  mx <- apply(S, 1L, max)
  R <- exp(S - mx)
  R <- R / rowSums(R)
  colnames(R) <- c(seq_len(object$T), "tail")
  if (type == "responsibilities") return(R)
  cl <- max.col(R, ties.method = "first")
  cl[cl == object$T + 1L] <- NA_integer_
  cl
}
