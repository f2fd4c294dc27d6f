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
  elnpi <- vapply(seq_len(T), ref_vdp_elnpi, numeric(1), a = a, b = b, a1 = pr$a1,
                  a2 = pr$a2)
  ell <- function(m, beta, W, nu) {
    Xc <- sweep(X, 2, m)
    L <- sum(digamma((nu + 1 - seq_len(D)) / 2)) + D * log(2) + c(determinant(W)$modulus)
    0.5 * L - D / 2 * log(2 * pi) - D / (2 * beta) - nu / 2 * rowSums((Xc %*% W) * Xc)
  }
  S <- sapply(seq_len(T), function(k) elnpi[k] +
                ell(post$m[k, ], post$beta[k], post$W[, , k], post$nu[k]))
  S <- matrix(S, nrow(X))
  e0 <- ell(pr$m0, pr$beta0, W0, pr$nu0)
  # the tail components T+1, T+2, ... summed term by term
  S <- cbind(S, ref_vdp_log_tail(a, b, pr$a1, pr$a2) + e0)
  mx <- apply(S, 1, max)
  kl - sum(mx + log(rowSums(exp(S - mx))))
}

# ---- the stick-breaking weights --------------------------------------------
# These are written from the definitions, one stick at a time, and share no
# code or closed forms with the package: pi_i = v_i prod_{j < i} (1 - v_j),
# with q(v_i) = Beta(stick_a[i], stick_b[i]) for the T fitted components and
# every stick past T at its prior Beta(a1, a2).

# The Beta(a, b) distribution of stick i: the fit's for i <= T, else the
# prior's.
ref_stick <- function(i, a, b, a1, a2) {
  if (i <= length(a)) c(a[i], b[i]) else c(a1, a2)
}

# E[ln pi_i] = E[ln v_i] + sum_{j < i} E[ln(1 - v_j)], with, for
# v ~ Beta(a, b), E[ln v] = psi(a) - psi(a + b) and
# E[ln(1 - v)] = psi(b) - psi(a + b).
ref_vdp_elnpi <- function(i, a, b, a1, a2) {
  ab <- ref_stick(i, a, b, a1, a2)
  total <- digamma(ab[1]) - digamma(ab[1] + ab[2])
  j <- 1
  while (j < i) {
    ab <- ref_stick(j, a, b, a1, a2)
    total <- total + digamma(ab[2]) - digamma(ab[1] + ab[2])
    j <- j + 1
  }
  total
}

# ln sum_{i > T} exp(E[ln pi_i]): the tail's share in q(z), summed term by
# term (i = T + 1, T + 2, ...) until a term no longer changes the sum.
# Quadratic in the number of terms (each E[ln pi_i] is summed afresh): for
# priors with a2 of a few units at most, as in the tests.
ref_vdp_log_tail <- function(a, b, a1, a2) {
  T <- length(a)
  first <- ref_vdp_elnpi(T + 1, a, b, a1, a2)
  s <- 0
  i <- T + 1
  repeat {
    term <- exp(ref_vdp_elnpi(i, a, b, a1, a2) - first)
    s <- s + term
    if (term < 1e-20 * s || i > T + 1e5) break
    i <- i + 1
  }
  first + log(s)
}

# E[pi_i] = E[v_i] prod_{j < i} E[1 - v_j] (the sticks are independent under
# q), E[v] = a / (a + b), for i = 1..T; the tail has the rest, 1 - sum.
ref_vdp_weights <- function(a, b) {
  T <- length(a)
  w <- numeric(T)
  for (i in seq_len(T)) {
    w[i] <- a[i] / (a[i] + b[i])
    for (j in seq_len(i - 1)) w[i] <- w[i] * b[j] / (a[j] + b[j])
  }
  c(w, 1 - sum(w))
}

# ---- one Gaussian component under its Normal-Wishart posterior -------------
# q(mu, Lambda) = N(mu | m, (beta Lambda)^-1) Wishart(Lambda | W, nu).

# E[ln N(x | mu, Lambda^-1)] for one point x:
#   1/2 E[ln |Lambda|] - D/2 ln(2 pi) - 1/2 E[(x - mu)' Lambda (x - mu)],
# E[ln |Lambda|] = sum_{d=1}^D psi((nu + 1 - d) / 2) + D ln 2 + ln |W|,
# E[(x - mu)' Lambda (x - mu)] = D / beta + nu (x - m)' W (x - m).
ref_nw_expected_loglik <- function(x, m, beta, W, nu) {
  D <- length(x)
  e_logdet <- D * log(2) + c(determinant(W, logarithm = TRUE)$modulus)
  for (d in 1:D) e_logdet <- e_logdet + digamma((nu + 1 - d) / 2)
  dx <- x - m
  e_quad <- D / beta + nu * c(t(dx) %*% W %*% dx)
  0.5 * e_logdet - D / 2 * log(2 * pi) - 0.5 * e_quad
}

# ln E[N(x | mu, Lambda^-1)]: the multivariate Student-t density with
# dof = nu + 1 - D degrees of freedom, location m and precision
# P = dof beta / (1 + beta) W:
#   Gamma((dof + D) / 2) / Gamma(dof / 2) |P|^(1/2) / (dof pi)^(D/2)
#     (1 + (x - m)' P (x - m) / dof)^(-(dof + D) / 2).
ref_nw_log_predictive <- function(x, m, beta, W, nu) {
  D <- length(x)
  dof <- nu + 1 - D
  P <- (dof * beta / (1 + beta)) * W
  dx <- x - m
  lgamma((dof + D) / 2) - lgamma(dof / 2) +
    0.5 * c(determinant(P, logarithm = TRUE)$modulus) - D / 2 * log(dof * pi) -
    (dof + D) / 2 * log(1 + c(t(dx) %*% P %*% dx) / dof)
}

# ---- predict ---------------------------------------------------------------

# The pure-R predict() of a Fast-VDP fit (the reference for the C routine),
# one point and one component at a time. Per point (rows) and component
# (columns, the tail last):
# - S: ln of q(z = i) up to a constant (Kurihara et al., eqs. 3-4),
#   S_i = E[ln pi_i] + E[ln p(x | eta_i)]; for the tail, ln of the sum over
#   i > T, where every component has the prior's parameters;
# - logp: ln E[p(x | eta_i)], the predictive density of each component
#   (the tail's under the prior), and logw: ln E[pi_i] (the tail's
#   1 - sum_{i <= T} E[pi_i]), the two parts of eq. 7.
ref_vdp_scores <- function(object, X) {
  post <- object$posterior
  pr <- object$prior
  T <- object$T
  a <- post$stick_a
  b <- post$stick_b
  comp <- function(k) {
    if (k <= T) {
      list(m = post$m[k, ], beta = post$beta[k], W = post$W[, , k], nu = post$nu[k])
    } else {
      list(m = pr$m0, beta = pr$beta0, W = solve(pr$W0inv), nu = pr$nu0)
    }
  }
  log_mix <- numeric(T + 1)
  for (k in seq_len(T)) log_mix[k] <- ref_vdp_elnpi(k, a, b, pr$a1, pr$a2)
  log_mix[T + 1] <- ref_vdp_log_tail(a, b, pr$a1, pr$a2)
  S <- matrix(0, nrow(X), T + 1)
  logp <- matrix(0, nrow(X), T + 1)
  for (k in seq_len(T + 1)) {
    ck <- comp(k)
    for (n in seq_len(nrow(X))) {
      x <- X[n, ]
      S[n, k] <- log_mix[k] + ref_nw_expected_loglik(x, ck$m, ck$beta, ck$W, ck$nu)
      logp[n, k] <- ref_nw_log_predictive(x, ck$m, ck$beta, ck$W, ck$nu)
    }
  }
  list(S = S, logp = logp, logw = log(ref_vdp_weights(a, b)))
}

# ln sum_k exp(v_k), without overflow.
ref_log_sum_exp <- function(v) max(v) + log(sum(exp(v - max(v))))

# type: "cluster", "responsibilities" (q(z), eq. 3, the tail last) or
# "density" (the predictive density, eq. 7).
ref_vdp_predict <- function(object, X, type = "cluster", log = FALSE) {
  sc <- ref_vdp_scores(object, X)
  N <- nrow(X)
  if (type == "density") {
    ld <- numeric(N)
    for (n in seq_len(N)) ld[n] <- ref_log_sum_exp(sc$logw + sc$logp[n, ])
    return(if (log) ld else exp(ld))
  }
  R <- matrix(0, N, ncol(sc$S))
  for (n in seq_len(N)) R[n, ] <- exp(sc$S[n, ] - ref_log_sum_exp(sc$S[n, ]))
  colnames(R) <- c(seq_len(object$T), "tail")
  if (type == "responsibilities") return(R)
  cl <- integer(N)
  for (n in seq_len(N)) cl[n] <- which.max(R[n, ]) # the first largest
  cl[cl == object$T + 1L] <- NA_integer_
  cl
}

# The spread test's estimate (src/vdp.c, vdp_spread_loss) of the free energy
# per point that a node's points lose by sharing one q, from one competitor
# whose score difference over the points is N(margin, sd^2):
# E[softplus(-delta)] - softplus(-margin), by the probit approximation of the
# sigmoid, with the second-order term where |margin| > 3 when larger.
ref_vdp_spread_loss <- function(margin, sd) {
  k0 <- sqrt(8 / pi)
  ramp <- function(mu, k) {
    t <- mu / k
    k * (t * stats::pnorm(t) + stats::dnorm(t))
  }
  m <- abs(margin)
  gap <- ramp(-m, sqrt(sd^2 + k0^2)) - ramp(-m, k0)
  p <- 1 / (1 + exp(pmin(m, 700)))
  out <- ifelse(m <= 3, gap, pmax(gap, 0.5 * sd^2 * p * (1 - p)))
  ifelse(sd > 0, out, 0)
}

# The exact loss the estimate stands for, by numerical integration.
ref_vdp_spread_loss_exact <- function(margin, sd) {
  softplus <- function(x) ifelse(x > 0, x + log1p(exp(-x)), log1p(exp(x)))
  mapply(function(m, s) {
    stats::integrate(function(z) softplus(-(m + s * z)) * stats::dnorm(z), -Inf, Inf,
                     rel.tol = 1e-10)$value - softplus(-m)
  }, margin, sd)
}
