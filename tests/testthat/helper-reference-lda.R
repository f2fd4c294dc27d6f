# Slow pure-R references of the LDA kernels (notes/math.md §2-§3), written from
# the equations, for oracle tests on tiny corpora.

ref_elogb <- function(lambda) digamma(lambda) - digamma(rowSums(lambda))

# Top-L of w among candidate indices cand (larger first, lower index on ties).
ref_top <- function(w, cand, L) {
  cand <- sort(cand)
  o <- order(-w[cand], cand)
  cand[o[seq_len(min(L, length(cand)))]]
}

# One document: terms (1-based), counts; Elogb K x V. Returns N, the K x nw
# responsibilities and the objective terms. background b: topic 1's prior is
# alpha + b N_d.
ref_vb_doc <- function(terms, counts, Elogb, alpha, L, tol = 0.05, max_iter = 100,
                       eps = 1e-8, select_every = FALSE, restart_max = 0,
                       restart_iter = 10, warm = NULL, background = 0) {
  K <- nrow(Elogb)
  a <- rep(alpha, K)
  a[1] <- alpha + background * sum(counts)
  dense <- L >= K
  nw <- length(terms)
  lw <- Elogb[, terms, drop = FALSE]
  # sweep: responsibilities given log prior weights over candidates
  sweep <- function(st, prior, cand, select) {
    R <- matrix(0, K, nw)
    for (j in seq_len(nw)) {
      w <- lw[, j] + prior
      if (dense) {
        sel <- cand
      } else if (select || is.null(st$sel[[j]])) {
        sel <- ref_top(w, cand, L)
      } else {
        sel <- intersect(st$sel[[j]], cand)
        if (!length(sel)) sel <- ref_top(w, cand, L)
      }
      st$sel[[j]] <- sel
      r <- exp(w[sel] - max(w[sel]))
      R[sel, j] <- r / sum(r)
    }
    st$R <- R
    Nnew <- as.vector(R %*% counts)
    # (dense: over every topic, a banned one's lost mass included, as in C)
    delta <- if (dense) max(abs(Nnew - st$N)) else max(abs(Nnew - st$N)[cand])
    st$N <- Nnew
    if (!dense) st$act <- cand[Nnew[cand] > eps]
    st$delta <- delta
    st
  }
  run <- function(st, n_iter, ban = integer(0), sel_every = select_every) {
    for (it in seq_len(n_iter)) {
      cand <- if (dense) setdiff(seq_len(K), ban) else setdiff(st$act, ban)
      prior <- rep(-Inf, K)
      prior[cand] <- digamma(a[cand] + st$N[cand])
      select <- if (identical(sel_every, "proposal")) it == 1 else
        (sel_every || it <= 5 || it %% 10 == 0)
      st <- sweep(st, prior, cand, select)
      st$iters <- it
      if (st$delta < tol) break
    }
    st
  }
  objective <- function(st) {
    R <- st$R
    pos <- R > 0
    rlogr <- ifelse(pos, R * log(ifelse(pos, R, 1)), 0)
    rel <- ifelse(pos, R * lw, 0)
    dir <- lgamma(sum(a)) - lgamma(sum(a) + sum(counts)) +
      sum(ifelse(st$N > 0, lgamma(a + st$N) - lgamma(a), 0))
    list(H = dir - sum(counts * colSums(rlogr)),
         Ld = dir + sum(counts * colSums(rel - rlogr)))
  }
  if (!is.null(warm) && any(warm > 0)) {
    # warm start: the previous counts, every topic a candidate, then iterate
    st <- list(N = warm, act = seq_len(K), sel = vector("list", nw), iters = 0)
    st <- run(st, max_iter)
  } else {
    st <- list(N = rep(0, K), act = seq_len(K), sel = vector("list", nw), iters = 0)
    st <- sweep(st, rep(0, K), seq_len(K), TRUE)
    st$iters <- 0
    st <- run(st, max_iter)
  }
  tries <- 0
  accepts <- 0
  if (restart_max > 0) {
    tried <- integer(0)
    cur_obj <- objective(st)$Ld
    for (t in seq_len(restart_max)) {
      cand <- if (dense) seq_len(K) else st$act
      big <- cand[st$N[cand] > tol]
      left <- setdiff(big, tried)
      if (length(big) < 2 || !length(left)) break
      kb <- left[order(st$N[left], left)][1]
      tried <- c(tried, kb)
      prop <- st
      if (!dense) prop$act <- setdiff(prop$act, kb)
      prop <- run(prop, restart_iter, ban = kb,
                  sel_every = if (select_every) TRUE else "proposal")
      tries <- tries + 1
      po <- objective(prop)$Ld
      if (po > cur_obj) {
        st <- prop
        cur_obj <- po
        accepts <- accepts + 1
      }
    }
  }
  ob <- objective(st)
  list(N = st$N, R = st$R, H = ob$H, Ld = ob$Ld, iters = st$iters, tries = tries,
       accepts = accepts)
}

# A batch: doc_topic (K x D), summary S (K x V) and sum of H.
ref_vb_batch <- function(x, lambda, alpha, L, ..., warm = NULL) {
  Elogb <- ref_elogb(lambda)
  K <- nrow(lambda)
  D <- nrow(x)
  S <- matrix(0, K, ncol(lambda))
  Nmat <- matrix(0, K, D)
  H <- numeric(D)
  tries <- accepts <- 0
  for (d in seq_len(D)) {
    idx <- seq.int(x$doc_ptr[d] + 1L, length.out = x$doc_ptr[d + 1L] - x$doc_ptr[d])
    terms <- x$term[idx] + 1L
    counts <- x$count[idx]
    res <- ref_vb_doc(terms, counts, Elogb, alpha, L, ...,
                      warm = if (!is.null(warm)) warm[, d])
    Nmat[, d] <- res$N
    S[, terms] <- S[, terms] + sweep(res$R, 2, counts, `*`)
    H[d] <- res$H
    tries <- tries + res$tries
    accepts <- accepts + res$accepts
  }
  list(doc_topic = Nmat, summary = S, H = H, tries = tries, accepts = accepts)
}

# The C local step with explicit controls.
c_vb_batch <- function(x, lambda, alpha, L, tol = 0.05, max_iter = 100, eps = 1e-8,
                       select_every = FALSE, restart_max = 0, restart_iter = 10,
                       threads = 1L, warm = NULL, background = 0) {
  control <- list(max_iter = max_iter, tol = tol, active_eps = eps,
                  select_every = select_every, restart_max = restart_max,
                  restart_iter = restart_iter, alpha = alpha, restarts = restart_max > 0,
                  background = background)
  res <- sparsevi:::lda_vb_call(x, lambda, 0L, control, threads, L = L,
                                restarts = restart_max > 0, objective = TRUE, warm = warm)
  S <- if (is.null(res$summary)) {
    as.matrix(sparsevi:::new_dgc(i = res$i, p = res$p, x = res$x, Dim = dim(lambda)))
  } else {
    res$summary
  }
  list(doc_topic = res$doc_topic, summary = S, H = res$doc_obj, tries = sum(res$tries),
       accepts = sum(res$accepts), raw = res)
}

# Greedy matching of estimated to true topics: repeatedly pair the closest
# (true, estimated) topics by L1 distance. Returns the distances of the pairs
# in the order of the true topics.
match_topics_l1 <- function(est, truth) {
  K <- nrow(truth)
  dist <- matrix(0, K, nrow(est))
  for (i in seq_len(K)) for (j in seq_len(nrow(est))) dist[i, j] <- sum(abs(truth[i, ] - est[j, ]))
  out <- rep(NA_real_, K)
  dd <- dist
  for (step in seq_len(K)) {
    m <- which(dd == min(dd), arr.ind = TRUE)[1, ]
    out[m[1]] <- dist[m[1], m[2]]
    dd[m[1], ] <- Inf
    dd[, m[2]] <- Inf
  }
  out
}

# Document completion with topics fixed at beta (K x V): dense VB fold-in on
# the observed part, then the mean held-out log-likelihood per token.
ref_completion <- function(beta, alpha, observed, heldout, tol = 0.05, max_iter = 100) {
  K <- nrow(beta)
  total <- 0
  ntok <- 0
  for (d in seq_len(nrow(observed))) {
    io <- seq.int(observed$doc_ptr[d] + 1L, length.out = observed$doc_ptr[d + 1L] - observed$doc_ptr[d])
    terms <- observed$term[io] + 1L
    counts <- observed$count[io]
    N <- rep(0, K)
    prior <- rep(0, K)
    for (it in 0:max_iter) {
      W <- beta[, terms, drop = FALSE] * exp(prior)
      R <- sweep(W, 2, colSums(W), `/`)
      Nnew <- as.vector(R %*% counts)
      delta <- max(abs(Nnew - N))
      N <- Nnew
      prior <- digamma(alpha + N)
      if (it > 0 && delta < tol) break
    }
    theta <- (alpha + N) / (K * alpha + sum(counts))
    ih <- seq.int(heldout$doc_ptr[d] + 1L, length.out = heldout$doc_ptr[d + 1L] - heldout$doc_ptr[d])
    for (e in ih) {
      total <- total + heldout$count[e] * log(sum(theta * beta[, heldout$term[e] + 1L]))
      ntok <- ntok + heldout$count[e]
    }
  }
  total / ntok
}
