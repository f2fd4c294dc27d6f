# Mixture models with L-sparse posteriors (Hughes & Sudderth): the training
# loop (local step in C -> batch summary -> memoized / stochastic / batch
# global step), the fitted object and its methods. The kernels are in
# src/mix-local.c (local step, summaries), src/mix-global.c (global step,
# point estimates), src/mix-init.c (centring, seeding) and src/obs-*.c;
# src/mix-ffi.c is their glue. R keeps only the order of batches and laps and
# the memoized caches.

mix_likelihoods <- c("gaussian", "zm_gaussian", "diag_gaussian", "multinomial")

#' Fit a mixture model with sparse variational posteriors
#'
#' Fits a finite (Dirichlet) or truncated Dirichlet-process mixture by
#' variational inference in which each point's responsibilities are the
#' optimal **L-sparse** ones: the L largest of its K weights, renormalised
#' (Hughes and Sudderth). With `L = K` this is ordinary dense mean-field VB.
#' Responsibilities below \eqn{2^{-53}} times a point's largest (beneath
#' rounding in their sum) are set to zero and the rest renormalised; the
#' objective uses the entropy of these responsibilities, so it stays exact.
#' Training sweeps over batches of points: memoized (exact, cached batch
#' summaries; the objective never decreases), stochastic (step size
#' \eqn{(\tau + t)^{-\kappa}}) or batch.
#'
#' Priors default to data-scaled values. Gaussian models use the column
#' variances `v` (or, for `"zm_gaussian"`, the column mean squares):
#' a Wishart prior with `nu = D + 2` degrees of freedom and scale matrix
#' `B0 = nu * scale * diag(v)`, so a component's prior covariance is about
#' `scale` times the data's; `"gaussian"` adds a Normal prior on the mean
#' centred on the data mean with `kappa0` pseudo-points. The fitted
#' `covariances` (and `predict()`, `loglik`) are the posterior means of the
#' covariances, \eqn{B_k / (\nu_k - D - 1)}{B_k / (nu_k - D - 1)} with
#' \eqn{\nu_k = \nu + N_k}{nu_k = nu + N_k} (the variances', \eqn{b / (a -
#' 1)}, for `"diag_gaussian"`), close to the maximum-likelihood ones
#' (\eqn{N_k + 1} in place of \eqn{N_k} with the default `nu`). `"diag_gaussian"`
#' uses per dimension a Gamma(`nu / 2`, `nu / 2 * scale * v`) prior on the
#' precision (default `nu = 3`). `"multinomial"` clusters documents (any
#' input [as_dtm()] accepts) with a Dirichlet(`eta`) prior on each
#' component's word distribution; its densities leave out the multinomial
#' coefficient.
#'
#' Training starts from K clusters: by default k-means++ seeds refined by
#' k-means on the scaled columns, each component holding its cluster's
#' points (with `init = "kmeanspp"` or `"random"`, or for documents, each
#' component holds its one seed point). With the default `init = "kmeans"`
#' on up to 2,000 points (option `sparsevi.mix_hc_max`), one more start
#' follows, deterministic, as mclust's default: Ward's hierarchical
#' clustering ([stats::hclust()]) of the whitened data (principal component
#' scores scaled to unit variance) cut at K clusters. Several starts are
#' short runs (emEM): each trains for 20 laps, and only the best two are
#' continued to convergence (see `n_init`). The defaults (k-means
#' and seed-point starts, ten for small data, and the hierarchical one, kept
#' by log-likelihood; a uniform Dirichlet prior on the weights; a weak
#' covariance prior; up to 200 laps) were chosen by measurement against
#' mclust on eight real data sets and checked on fourteen more
#' (`inst/bench/mixture.R`, part `robust`; results in
#' `inst/bench/results/mixture.txt`).
#' Lap 0 visits every batch once, the
#' globals after each batch coming from the batches seen so far; it fills the
#' memoized caches, and laps 1 to `passes` follow (the objective is
#' non-decreasing from lap 0 on). Stochastic training starts from the seeds directly. The trace's
#' `objective` is the evidence lower bound (without the multinomial
#' coefficient), exact for memoized and batch training; the held-out score
#' is [heldout_loglik()].
#'
#' @param X Data: a numeric matrix or data frame with points in rows; for
#'   `likelihood = "multinomial"`, a corpus in any form [as_dtm()] accepts.
#' @param K Number of components, 1 <= K <= number of points; or several
#'   (e.g. `K = 1:9`, as `Mclust(G = 1:9)`): a fit for each, the one with
#'   the best BIC kept, with the table of all in `bic`. BIC here follows
#'   R's [BIC()]: \eqn{-2 \log L + df \log n} with the log-likelihood at the
#'   point estimates, **lower is better** (mclust's BIC is the negative:
#'   higher is better).
#' @param likelihood One of `"gaussian"` (full covariance, default),
#'   `"zm_gaussian"` (zero-mean, full covariance), `"diag_gaussian"`,
#'   `"multinomial"`.
#' @param prior `"dirichlet"` (default; symmetric Dirichlet with total
#'   concentration `alpha`) or `"dp"` (stick-breaking, truncated at K, with
#'   concentration `gamma`).
#' @param L Number of nonzero responsibilities per point, 1..K; default K
#'   (dense).
#' @param global `"memoized"` (default), `"stochastic"` or `"batch"`.
#' @param n_batches,batch_size Number of batches, or points per batch (give
#'   at most one). Default: one batch per 2,000 points, at most 20.
#'   `global = "batch"` always uses one batch.
#' @param passes Maximum number of passes over the data (laps), default 200
#'   (fits stop earlier once the objective's relative change is below `tol`).
#' @param init `"kmeans"` (default for numeric data: k-means++ seeding, then
#'   Hartigan-Wong k-means, [stats::kmeans()], on the columns scaled to unit
#'   variance; each component starts from its cluster's points; plus the
#'   hierarchical start on small data, see `n_init`),
#'   `"kmeanspp"` (k-means++ seeding with a divergence matching the
#'   likelihood; each component starts from its one seed point; also what
#'   `"kmeans"` does for documents) or `"random"` (K distinct random points).
#' @param alpha Dirichlet total concentration (> 0), default `K` (a uniform
#'   Dirichlet(1, ..., 1) prior on the weights).
#' @param gamma DP concentration (> 0), default 1.
#' @param nu Prior degrees of freedom: default D + 2 (full covariance) or 3
#'   (diagonal); must exceed D - 1.
#' @param scale Prior covariance scale relative to the data's (> 0),
#'   default 0.003.
#' @param kappa0 Prior pseudo-count of the mean (> 0), default 0.01.
#' @param eta Dirichlet prior of multinomial components (> 0), default 0.1.
#' @param tau,kappa Stochastic step size \eqn{(\tau + t)^{-\kappa}}:
#'   `tau >= 0` (default 1), `kappa` in (0.5, 1] (default 0.6).
#' @param tol Memoized/batch training stops when the objective's relative
#'   change over a lap is below `tol` (>= 0, default 1e-6).
#'   A memoized or batch fit that uses all `passes` first warns (class
#'   `sparsevi_warning_unconverged`) with the last relative change.
#' @param seed `NULL` or a whole number, for reproducible fits.
#' @param threads Number of threads (default
#'   `getOption("sparsevi.threads", 1)`); results do not depend on it.
#' @param progress Print one line per lap? Default `interactive()`.
#' @param heldout Optional test data of the same form as `X`; its held-out
#'   log-likelihood is recorded after every lap.
#' @param cluster `NULL`, or a cluster from [parallel::makePSOCKcluster()]:
#'   each batch of points is sent once to a worker and stays there; every
#'   round the workers run the C local step on their batches and return only
#'   the batch summaries. The fit equals the fit without a cluster (for the
#'   same `sync`, which does not depend on the cluster). `"future"` (the current `future::plan()`) or a future plan
#'   object work too; see [sparsevi_cluster].
#' @param sync Batches whose local steps share one set of global parameters
#'   (a round, run in parallel on a cluster). Default 1, with or without a
#'   cluster, so a fit on a cluster equals the fit without one; set it to the
#'   number of workers to run a round's batches in parallel.
#' @param n_init Number of starts: each seeds and trains the mixture anew
#'   (the first from `seed`, the others from streams derived from it), and
#'   the fit with the highest log-likelihood at its point estimates is kept
#'   (as mclust keeps the EM fit of highest likelihood: the ELBO's prior
#'   terms can prefer a fit that leaves a component nearly empty). With
#'   `init = "kmeans"`, odd starts begin from the k-means partition and even
#'   ones from the k-means++ seed points alone (k-means tends to reach the
#'   same partition from every seeding). With `init = "kmeans"`, K >= 2,
#'   memoized or batch training and at most
#'   `getOption("sparsevi.mix_hc_max", 2000)` points, one more start follows
#'   the `n_init`: the hierarchical one (see Details), which uses no random
#'   numbers and is kept unless another start's log-likelihood is higher by
#'   more than one nat (a likelihood ratio below e is no evidence for either
#'   start; so small data give the same fit for every seed). For full
#'   covariances, a start whose components all hold at least D + 1 points
#'   (expected counts) is kept over any start that leaves fewer in one
#'   (whose covariance is then the prior's in some direction). Default, for
#'   numeric data with memoized or batch training: 10 starts up to 10,000
#'   points, 3 up to 100,000, else 1; 1 for documents and stochastic
#'   training. Several starts with memoized or batch training are short
#'   runs (the emEM strategy of Biernacki, Celeux and Govaert, 2003): each
#'   trains for `getOption("sparsevi.mix_short_laps", 20)` laps (fewer if
#'   it converges), the best `getOption("sparsevi.mix_short_keep", 2)` of
#'   them by the rules above are continued to convergence, each exactly as
#'   if it had been run alone (the same fit, bit for bit), and the best of
#'   those is kept. `options(sparsevi.mix_short_laps = Inf)` runs every
#'   start to convergence. These defaults were chosen by measurement
#'   (`inst/bench/mixture.R`, parts `short`, `robust` and `starts`): they
#'   keep the agreement with mclust of the full runs on every set of more
#'   than 50 points (on USArrests, 50 points, 6 seeds of 10 agree against 7),
#'   at about 0.8 times their cost on mid-size data (median 2.25 against 2.84
#'   times one start; 10 laps would save more, 2.00, but agree on only 2
#'   USArrests seeds).
#' @param ... Unused; must be empty.
#' @returns A `c("sparsevi_mixture", "sparsevi_fit")` object, a list with
#'   `weights` (K mixing weights, posterior means), `means` (K x D; numeric
#'   data), `covariances` (D x D x K array, full models; posterior means) or `variances`
#'   (K x D, diagonal model), `topic_word` (K x V, rows sum to 1;
#'   multinomial), `sizes` (expected number of points per component),
#'   `likelihood`, `prior`, `K`, `L`, `loglik` (training log-likelihood at
#'   the point estimates), `n` (number of points), `state` (the global
#'   summaries `N` and `S` the posterior is computed from), `hyper` (prior
#'   hyperparameters), `center` (column means removed before fitting),
#'   `columns` (column names or vocabulary), `control` (settings, with
#'   `init_seconds`, the time of the seeding, and `short_laps`, the laps of
#'   the short runs, `NA` without them),
#'   `trace` (data frame: `lap`, `seconds` (training time since the start of
#'   the loop, held-out scoring excluded), `objective` (the ELBO; `NA` for
#'   stochastic training), `heldout`, and the lap's `local_seconds` and
#'   `summary_seconds` spent in the local step and the summary step),
#'   `converged`, `heldout` (the `heldout` data, scored again by [update()]),
#'   `init_objectives` (the final objective of each start, the `n_init` and
#'   then the hierarchical one if it ran:
#'   the ELBO, or for stochastic training the log-likelihood at the point
#'   estimates; for a start not continued after its short run, the value at
#'   its end), `init_loglik` (each start's log-likelihood at its point
#'   estimates, likewise), `best_init` (the start kept: the one of highest
#'   `init_loglik`, or the hierarchical one within one nat of it, among the
#'   starts without a component of fewer than D + 1 points if there are
#'   any, among the starts continued),
#'   `classification`,
#'   `uncertainty` and `z` (the training points' most responsible component,
#'   1 minus its responsibility, and the N x K responsibilities, kept when
#'   N * K <= 5e6; see [fitted.sparsevi_mixture()]), `bic` (with several
#'   `K`: a data frame of `K`, `loglik`, `df`, `BIC`, `objective`,
#'   `converged`, one row per K) and `call`.
#' @section Differences from the paper:
#' Hughes & Sudderth's mixtures (their Sec. 3 and experiments), and what
#' this function does differently by default, with the setting that restores
#' the paper's choice:
#' * **Start.** The paper seeds by Bregman k-means++ (for Gaussians, plain
#'   k-means++ on the data) once per run and reports the best of many runs.
#'   Here the default starts from the k-means partition and from k-means++
#'   seed points alternately, ten starts up to 10,000 points (three up to
#'   100,000), then on up to 2,000 points from Ward's hierarchical
#'   clustering (as mclust starts from its hierarchical clustering), runs
#'   each for 20 laps, continues the best two to convergence, and
#'   keeps the start of highest log-likelihood, because one start gave
#'   seed-dependent answers (iris: adjusted Rand index 0.90 or 0.57 by seed)
#'   where mclust does not (`inst/bench/results/mixture.txt`, part
#'   `robust`). Paper: `init = "kmeanspp", n_init = 1`.
#' * **Responsibility floor.** Within the L kept entries, responsibilities
#'   below \eqn{2^{-53}} times a point's largest are set to zero and the rest
#'   renormalised (beneath rounding in their sum); the objective uses the
#'   entropy of the responsibilities in use, so it stays exact. The paper's
#'   top-L step has no floor. No setting removes it; `L = K` is the dense
#'   step with the same floor.
#' * **Priors.** A uniform Dirichlet on the weights (`alpha = K`) and a weak
#'   data-scaled Normal-Wishart (`scale = 0.003`, `nu = D + 2`); the paper
#'   does not fix these for its mixtures. Give `alpha`, `scale`, `nu` to
#'   change them. Point estimates are posterior means (of the weights, means
#'   and covariances).
#' * **First memoized lap.** Lap 0 fills the memoized caches with the
#'   globals after each batch coming from the batches seen so far, as the
#'   paper's first memoized lap does; stopping is by the objective's relative
#'   change (`tol`) within at most `passes` laps, where the paper runs a
#'   fixed number of laps (`tol = 0` stops only at a lap that leaves the
#'   objective unchanged).
#' @examples
#' sim <- simulate_mixture(N = 300, D = 2, K = 3, seed = 1)
#' fit <- fit_mixture(sim$X, K = 3, seed = 1, progress = FALSE)
#' fit
#' table(predict(fit, sim$X), sim$cluster)
#' @export
fit_mixture <- function(X, K,
                        likelihood = c("gaussian", "zm_gaussian", "diag_gaussian",
                                       "multinomial"),
                        prior = c("dirichlet", "dp"), L = K,
                        global = c("memoized", "stochastic", "batch"),
                        n_batches = NULL, batch_size = NULL, passes = 200,
                        init = c("kmeans", "kmeanspp", "random"), alpha = NULL, gamma = 1,
                        nu = NULL, scale = 0.003, kappa0 = 0.01, eta = 0.1,
                        tau = 1, kappa = 0.6, tol = 1e-6, seed = NULL,
                        threads = getOption("sparsevi.threads", 1L),
                        progress = interactive(), heldout = NULL, cluster = NULL,
                        sync = NULL, n_init = NULL, ...) {
  call <- match.call()
  check_dots_empty(...)
  if (is.numeric(K) && length(K) > 1L) {
    # several K: fit each, keep the best by BIC
    args <- mget(setdiff(names(formals(fit_mixture)), "..."), environment())
    return(mix_select_K(args, K, missing(L), call))
  }
  cluster <- check_cluster(cluster)
  sync <- resolve_sync(sync, cluster)
  likelihood <- check_choice(likelihood, mix_likelihoods, "likelihood")
  prior <- check_choice(prior, c("dirichlet", "dp"), "prior")
  global <- check_choice(global, sparsevi_engines$mixture$globals, "global")
  init <- check_choice(init, c("kmeans", "kmeanspp", "random"), "init")
  threads <- sparsevi_threads(threads)
  data <- mix_data(X, likelihood, "X", threads)
  N <- data$N
  K <- check_count(K, "K")
  if (K > N) {
    abort(sprintf("`K` (%d) exceeds the number of points (%d): use K <= %d.", K, N, N),
          "argument")
  }
  L <- check_count(L, "L", min = 1, max = K)
  passes <- check_count(passes, "passes", min = 0)
  # several starts where they are cheap: numeric data, memoized or batch
  # training (measured in inst/bench/mixture.R, part robust)
  if (is.null(n_init)) {
    n_init <- if (likelihood == "multinomial" || global == "stochastic") 1L
              else if (N <= 10000) 10L else if (N <= 100000) 3L else 1L
  }
  n_init <- check_count(n_init, "n_init", min = 1, max = 1000)
  if (is.null(alpha)) alpha <- K
  alpha <- check_positive(alpha, "alpha")
  gamma <- check_positive(gamma, "gamma")
  scale <- check_positive(scale, "scale")
  kappa0 <- check_positive(kappa0, "kappa0")
  eta <- check_positive(eta, "eta")
  tau <- check_number(tau, "tau", lower = 0)
  kappa <- check_number(kappa, "kappa", lower = 0.5, upper = 1, lower_open = TRUE)
  tol <- check_number(tol, "tol", lower = 0)
  progress <- check_flag(progress, "progress")
  mix_check_covariance(data, likelihood)
  hyper <- mix_hyper(data, likelihood, prior, alpha, gamma, nu, scale, kappa0, eta)
  B <- mix_n_batches(N, n_batches, batch_size, global)
  test <- if (is.null(heldout)) NULL else mix_newdata(heldout, data, "heldout")
  seed2 <- resolve_seed(seed)

  perm <- order(.Call(ffi_svi_rng_unif, seed2, 1, as.double(N)))
  train <- mix_permute(data, perm, threads)
  # n_init starts: the first from the fit's seed (so n_init = 1 is the plain
  # fit), the others from seeds of their own streams, and with init =
  # "kmeans" on up to mix_hc_max() points the hierarchical start last; the
  # start of highest log-likelihood at its point estimates is kept
  best <- NULL
  # init = "kmeans" on small numeric data: one more start, deterministic,
  # from a hierarchical clustering (mix_hc_state())
  hc <- init == "kmeans" && data$lik != 3L && K >= 2L && global != "stochastic" &&
    N <= mix_hc_max()
  n_all <- n_init + hc
  scores <- lls <- numeric(n_all)
  # short runs (emEM, Biernacki, Celeux & Govaert 2003): with several starts
  # of memoized or batch training, each runs mix_short_laps() laps (or
  # fewer, when it converges), they are ranked by the rule below, and only
  # the best is continued to convergence (mix_train()'s pause and resume:
  # the same fit as that start run alone)
  short <- if (n_all > 1L && global != "stochastic") mix_short_laps() else Inf
  if (short >= passes) short <- NULL
  runs <- vector("list", n_all)
  # the start kept: the highest log-likelihood at the point estimates (as
  # mclust's EM); the ELBO's prior terms can prefer a start that leaves a
  # component nearly empty (iris, K = 3), which a user who fixed K does
  # not want
  # The hierarchical start (last) also wins ties within `mix_hc_margin`
  # nats: a likelihood ratio below e is no evidence for either start, and
  # the deterministic start makes small data's fit the same for every
  # seed (trees: two optima 0.05 apart, reached by different seeds)
  # Before both: a start whose components all hold at least D + 1 points
  # (mix_degenerate()) beats one that does not, whose covariance is the
  # prior's in some direction (swiss: 6 points in 6 dimensions, a
  # log-likelihood 7 nats above mclust's that no maximum-likelihood fit
  # reaches)
  better <- function(i, best) {
    margin <- if (i > n_init) mix_hc_margin else 0
    degen <- runs[[i]]$degen
    is.null(best) || (best$degen && !degen) ||
      (best$degen == degen && lls[i] > lls[best$i] - margin)
  }
  for (i in seq_len(n_all)) {
    seed_i <- if (i == 1L) seed2 else floor(.Call(ffi_svi_rng_unif, seed2, 4000 + i, 2) *
                                               4294967296)
    t_init <- proc.time()[["elapsed"]]
    state <- if (i > n_init) mix_hc_state(data, train, hyper, K, perm)
    seeds <- NULL
    if (is.null(state)) {
      seeds <- .Call(ffi_mix_init, train$data, hyper$lik, hyper$D, K, init != "random",
                     data$init_scale, seed_i, threads)
    }
    # init = "kmeans": odd starts from the k-means partition, even ones from
    # the k-means++ seed points alone (k-means lands in one basin from every
    # seeding; single points reach others, and the ELBO picks among them)
    if (is.null(state) && init == "kmeans" && i %% 2L == 1L) {
      state <- mix_kmeans_state(train, hyper, seeds, data$init_scale)
    }
    if (is.null(state)) state <- mix_seed_state(train, hyper, seeds)
    control <- list(L = L, global = global, n_batches = B, passes = passes, init = init,
                    tau = tau, kappa = kappa, tol = tol, seed = seed2, threads = threads,
                    sync = sync, init_seconds = proc.time()[["elapsed"]] - t_init,
                    n_init = n_init)
    res <- mix_train(train, hyper, state, control, test, progress, fresh = TRUE,
                     cluster = cluster, stop_after = short)
    fit <- new_sparsevi_mixture(res, data, hyper, control, likelihood, prior, K, call,
                                threads)
    obj <- res$trace$objective[is.finite(res$trace$objective)]
    scores[i] <- if (length(obj)) obj[length(obj)] else fit$loglik
    lls[i] <- fit$loglik
    runs[[i]] <- list(fit = fit, res = res, degen = mix_degenerate(fit))
    if (better(i, best)) best <- list(i = i, degen = runs[[i]]$degen)
    if (isTRUE(res$interrupted)) break # the user asked to stop: no further starts
  }
  # the best mix_short_keep() starts after the short runs (by the same
  # rule), each continued to convergence, and the best of them kept
  done <- seq_len(i)
  if (!is.null(short) && !isTRUE(runs[[i]]$res$interrupted)) {
    keep <- best$i
    while (length(keep) < min(mix_short_keep(), length(done))) {
      nxt <- NULL
      for (j in setdiff(done, keep)) if (better(j, nxt)) nxt <- list(i = j, degen = runs[[j]]$degen)
      keep <- c(keep, nxt$i)
    }
    best <- NULL
    for (j in sort(keep)) {
      res <- runs[[j]]$res
      if (isTRUE(res$paused)) {
        ctl <- runs[[j]]$fit$control
        res <- mix_train(train, hyper, NULL, ctl, test, progress, cluster = cluster,
                         resume = res$resume)
        fit <- new_sparsevi_mixture(res, data, hyper, ctl, likelihood, prior, K, call, threads)
        obj <- res$trace$objective[is.finite(res$trace$objective)]
        scores[j] <- obj[length(obj)]
        lls[j] <- fit$loglik
        runs[[j]] <- list(fit = fit, res = res, degen = mix_degenerate(fit))
      }
      if (better(j, best)) best <- list(i = j, degen = runs[[j]]$degen)
      if (isTRUE(res$interrupted)) break # the user asked to stop
    }
  }
  res <- runs[[best$i]]$res
  # interrupted during the short runs: the best short run, without the
  # warning that it did not converge (the interruption warned)
  if (isTRUE(res$paused)) res$interrupted <- TRUE
  res$resume <- res$paused <- NULL
  best$res <- res
  fit <- runs[[best$i]]$fit
  fit$control$short_laps <- if (is.null(short)) NA_real_ else short
  fit$heldout <- heldout
  fit$init_objectives <- scores[seq_len(i)]
  fit$init_loglik <- lls[seq_len(i)]
  fit$best_init <- best$i
  fit <- mix_add_assignments(fit, data)
  mix_warn_unconverged(best$res, fit$control)
  fit
}

# The training points' assignments, in the order of `X` (as mclust keeps
# them): `classification` (the most responsible component), `uncertainty`
# (1 minus its responsibility) and `z`, the N x K responsibilities, kept
# when N * K <= mix_z_max (else NULL; predict(fit, X, type =
# "responsibilities") gives them). Numeric data are scored in row blocks.
mix_z_max <- 5e6

mix_add_assignments <- function(fit, data) {
  N <- data$N
  K <- fit$K
  st <- fit$state
  th <- as.integer(fit$control$threads)
  keep_z <- as.double(N) * K <= mix_z_max
  cls <- integer(N)
  unc <- numeric(N)
  z <- if (keep_z) matrix(0, N, K, dimnames = list(NULL, names(fit$weights))) else NULL
  score <- function(x, rows) {
    W <- t(.Call(ffi_mix_weights, x, fit$hyper, st$N, st$S, FALSE, FALSE, th))
    k <- max.col(W, ties.method = "first")
    R <- exp(W - W[cbind(seq_along(k), k)])
    R <- R / rowSums(R)
    cls[rows] <<- k
    unc[rows] <<- 1 - R[cbind(seq_along(k), k)]
    if (keep_z) z[rows, ] <<- R
  }
  if (data$lik == 3L) {
    score(data$data, seq_len(N))
  } else {
    step <- max(1L, as.integer(1e6 %/% K))
    for (s in seq(1L, N, by = step)) {
      rows <- s:min(N, s + step - 1L)
      score(data$data[rows, , drop = FALSE], rows)
    }
  }
  fit$classification <- cls
  fit$uncertainty <- unc
  fit$z <- z
  fit
}

# fit_mixture(X, K = 1:9): one fit per K (each with the fit's defaults, L =
# K unless given, the same seed), the best by BIC kept with the table.
mix_select_K <- function(args, Ks, L_missing, call, env = caller_call()) {
  if (anyNA(Ks) || any(Ks != round(Ks)) || any(Ks < 1)) {
    abort(sprintf("`K` must be whole numbers >= 1 (one K, or several to choose among by BIC), not %s.",
                  describe(Ks)), "argument", call = env)
  }
  Ks <- sort(unique(as.integer(Ks)))
  if (is.null(args$seed)) args$seed <- floor(stats::runif(1L) * 2147483647)
  fits <- vector("list", length(Ks))
  for (j in seq_along(Ks)) {
    a <- args
    a$K <- Ks[j]
    a$L <- if (L_missing) Ks[j] else min(args$L, Ks[j])
    fits[[j]] <- do.call(fit_mixture, a)
  }
  tab <- data.frame(K = Ks,
                    loglik = vapply(fits, function(f) f$loglik, numeric(1)),
                    df = vapply(fits, function(f) attr(logLik(f), "df"), numeric(1)),
                    BIC = vapply(fits, function(f) stats::BIC(f), numeric(1)),
                    objective = vapply(fits, function(f) {
                      o <- f$trace$objective
                      o <- o[is.finite(o)]
                      if (length(o)) o[length(o)] else NA_real_
                    }, numeric(1)),
                    converged = vapply(fits, function(f) isTRUE(f$converged), logical(1)))
  best <- which.min(tab$BIC)
  fit <- fits[[best]]
  fit$bic <- tab
  fit$call <- call
  fit
}

check_dots_empty <- function(...) {
  if (...length() > 0L) {
    nm <- names(list(...))
    what <- if (is.null(nm) || !nzchar(nm[1L])) "an unnamed argument" else sprintf("`%s`", nm[1L])
    abort(sprintf("Unknown argument %s: check its spelling against the documentation.", what),
          "argument", call = caller_call(2))
  }
}

# ---- data ------------------------------------------------------------------

# Validate and convert data for C: numeric data become a double matrix
# (centred for the Gaussian and diagonal models); documents a CSR list.
mix_data <- function(X, likelihood, arg, threads = 1L, call = caller_call()) {
  if (likelihood == "multinomial") {
    x <- as_dtm(X)
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
  lik <- match(likelihood, mix_likelihoods) - 1L
  v <- cc$spread
  list(lik = lik, N = nrow(X), D = ncol(X), data = cc$Xc,
       columns = colnames(X), center = cc$center, spread = v,
       init_scale = 1 / pmax(v, max(v) * 1e-12, .Machine$double.xmin))
}

mix_check_covariance <- function(data, likelihood, call = caller_call()) {
  if (!likelihood %in% c("gaussian", "zm_gaussian")) return(invisible())
  if (data$D > data$N) {
    abort(sprintf("`X` has more columns (%d) than rows (%d), too few points for a full covariance: use likelihood = \"diag_gaussian\" or reduce the dimension (e.g. with prcomp()).",
                  data$D, data$N), "data", call = call)
  }
  const <- which(data$spread <= 1e-12 * max(1, max(data$spread)))
  if (length(const)) {
    nm <- if (is.null(data$columns)) as.character(const[1L]) else data$columns[const[1L]]
    what <- if (likelihood == "zm_gaussian") "is all zero" else "is constant"
    abort(sprintf("Column %s of `X` %s, so a full covariance is singular: drop that column or use likelihood = \"diag_gaussian\".",
                  nm, what), "data", call = call)
  }
  invisible()
}

# Test data aligned to the training data's columns (or vocabulary).
mix_newdata <- function(newdata, data, arg, call = caller_call()) {
  likelihood <- mix_likelihoods[data$lik + 1L]
  if (likelihood == "multinomial") {
    x <- as_dtm(newdata)
    al <- dtm_align(x, data$columns)
    out <- list(lik = 3L, N = nrow(al$x), D = data$D,
                data = list(al$x$doc_ptr, al$x$term, al$x$count),
                dropped = al$dropped, dropped_tokens = al$dropped_tokens)
    return(out)
  }
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
  full <- likelihood %in% c("gaussian", "zm_gaussian")
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
    B0 <- nu * scale * v
    h$B0 <- pack_lower(diag(B0, D))
    h$logdet_B0 <- sum(log(B0))
  } else {
    h$b0 <- nu / 2 * scale * v
  }
  if (likelihood != "zm_gaussian") h$m0 <- rep(0, D)
  h
}

# ---- training loop ---------------------------------------------------------

# Summaries of the K seed points, each a component with one point.
mix_seed_state <- function(train, hyper, seeds) {
  K <- length(seeds)
  D <- hyper$D
  if (hyper$lik == 3L) {
    S <- matrix(0, D, K)
    dp <- train$data[[1L]]
    for (k in seq_len(K)) {
      d <- seeds[k]
      pos <- seq.int(dp[d] + 1L, length.out = dp[d + 1L] - dp[d])
      S[train$data[[2L]][pos] + 1L, k] <- train$data[[3L]][pos]
    }
  } else {
    Xs <- train$data[seeds, , drop = FALSE]
    S <- vapply(seq_len(K), function(k) {
      x <- Xs[k, ]
      switch(hyper$lik + 1L,
             c(x, pack_lower(tcrossprod(x))),
             pack_lower(tcrossprod(x)),
             c(x, x^2))
    }, numeric(mix_stat_size(hyper$lik, D)))
    S <- matrix(S, ncol = K)
  }
  list(N = rep(1, K), S = S)
}

# Summaries of a k-means partition: Hartigan-Wong k-means (stats::kmeans(),
# no random numbers) on the columns scaled to unit variance, started from
# the k-means++ seeds; each component starts holding its cluster's points.
# NULL (fall back to the seed points) for documents, K = 1, or when k-means
# fails (an empty cluster).
mix_kmeans_state <- function(train, hyper, seeds, init_scale) {
  K <- length(seeds)
  if (hyper$lik == 3L || K < 2L) return(NULL)
  Z <- train$data * rep(sqrt(init_scale), each = nrow(train$data))
  km <- tryCatch(suppressWarnings(stats::kmeans(Z, Z[seeds, , drop = FALSE], iter.max = 30L)),
                 error = function(e) NULL)
  if (is.null(km) || any(tabulate(km$cluster, K) == 0L)) return(NULL)
  mix_partition_state(train, hyper, km$cluster, K)
}

# The hierarchical start (as mclust's default start, its model-based
# agglomerative hc on the data's scaled singular vectors): Ward's
# agglomeration (stats::hclust(), "ward.D2") of the whitened data (principal
# component scores scaled to unit variance, directions of no variance
# dropped) cut at K clusters. It uses no random numbers, so every seed
# shares it; its cost is quadratic in N (the distance matrix), hence only up
# to getOption("sparsevi.mix_hc_max", 2000) points. On small data it reaches
# optima of higher likelihood that the k-means starts miss (crabs, swiss:
# inst/bench/results/mixture.txt, part robust). The points are in the
# order of `data` and each component starts holding its cluster's points;
# NULL when a cluster would be empty (K above the distinct points).
mix_hc_state <- function(data, train, hyper, K, perm) {
  X <- data$data
  sv <- svd(X, nu = 0L)
  keep <- sv$d > sv$d[1L] * 1e-8
  if (!any(keep)) return(NULL)
  Z <- X %*% sv$v[, keep, drop = FALSE]
  Z <- Z * rep(sqrt(data$N - 1) / sv$d[keep], each = data$N)
  cl <- stats::cutree(stats::hclust(stats::dist(Z), "ward.D2"), K)
  if (any(tabulate(cl, K) == 0L)) return(NULL)
  mix_partition_state(train, hyper, cl[perm], K)
}

mix_hc_margin <- 1

# Laps of each start's short run, and the number of starts continued after
# them (fit_mixture() with several starts; options sparsevi.mix_short_laps,
# Inf for full runs, and sparsevi.mix_short_keep). Chosen by measurement
# (inst/bench/mixture.R, part short, on the 22 sets of part robust and the
# mid-size sets of part starts): after 2 to 5 laps the best start is often
# not the best at convergence (iris, geyser); continuing one start after 10
# laps lost optima on GvHD (K = 9: 42 to 414 nats in 3 of 3 seeds), two lost
# 42 nats in 1 of 3 seeds; 20 laps saved little (mid-size fits converge in
# 1 to 70 laps).
mix_short_keep <- function() {
  n <- getOption("sparsevi.mix_short_keep", 2)
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 1 || n != round(n)) {
    abort("Option `sparsevi.mix_short_keep` must be one whole number >= 1 (the starts continued after the short runs).",
          "argument", call = NULL)
  }
  n
}

mix_short_laps <- function() {
  n <- getOption("sparsevi.mix_short_laps", 20)
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 1 || (is.finite(n) && n != round(n))) {
    abort("Option `sparsevi.mix_short_laps` must be one whole number >= 1, or Inf (the laps of each start's short run).",
          "argument", call = NULL)
  }
  n
}

# Does a fit of a full-covariance model have a component of fewer than D + 1
# points (expected counts)? Its points' scatter is singular, so its
# covariance is the prior's in some direction and its likelihood there
# grows as `scale` shrinks (mclust's EM fails on such a component).
mix_degenerate <- function(fit) {
  if (!fit$likelihood %in% c("gaussian", "zm_gaussian")) return(FALSE)
  any(fit$sizes < fit$hyper$D + 1)
}

mix_hc_max <- function() {
  n <- getOption("sparsevi.mix_hc_max", 2000)
  if (!is.numeric(n) || length(n) != 1L || is.na(n) || n < 0) {
    abort("Option `sparsevi.mix_hc_max` must be one number >= 0 (the most points for the hierarchical start).",
          "argument", call = NULL)
  }
  n
}

# Summaries of a partition `cl` (1..K, in the order of `train`'s rows): each
# component holds its cluster's points.
mix_partition_state <- function(train, hyper, cl, K) {
  X <- train$data
  S <- vapply(seq_len(K), function(k) {
    Xk <- X[cl == k, , drop = FALSE]
    switch(hyper$lik + 1L,
           c(colSums(Xk), pack_lower(crossprod(Xk))),
           pack_lower(crossprod(Xk)),
           c(colSums(Xk), colSums(Xk^2)))
  }, numeric(mix_stat_size(hyper$lik, hyper$D)))
  list(N = as.double(tabulate(cl, K)), S = matrix(S, ncol = K))
}

mix_stat_size <- function(lik, D) {
  switch(lik + 1L, D + D * (D + 1) / 2, D * (D + 1) / 2, 2 * D, D)
}

# Working memory for local steps of batches of up to n points, reused by C
# across the laps of a fit (see mix_arena in src/mix-ffi.c); never read in R.
# Dense (L = K): responsibilities and entropies; L < K adds the indices and
# the bucket lists. Left uninitialised (C writes before it reads).
mix_work <- function(n, K, L) {
  per_point <- 8 * L + 8 + if (L < K) 20 * L else 0
  .Call(ffi_mix_work, as.double(per_point * n + 16 * 8))
}

mix_local <- function(train, hyper, state, range, L, threads, work = NULL) {
  res <- .Call(ffi_mix_local, train$data, hyper, state$N, state$S, as.double(range),
               as.integer(L), as.integer(threads), work)
  if (res$status != 0L) {
    abort(sprintf("Component %d's covariance became singular during training; increase `scale` or `nu`, or use likelihood = \"diag_gaussian\".",
                  res$status), "numerical", call = NULL)
  }
  res
}

# The global step in C (src/mix-global.c): the memoized swap of one batch's
# cached summaries `old` (NULL in lap 0) for its new ones, and the
# stochastic blend with step `rho` and batch weight `w`.
mix_global_memoized <- function(state, old, new) {
  .Call(ffi_mix_global_memoized, state$N, state$S, old$N, old$S, new$N, new$S)
}

mix_global_stochastic <- function(state, new, rho, w) {
  .Call(ffi_mix_global_stochastic, state$N, state$S, new$N, new$S, as.double(rho),
        as.double(w))
}

mix_objective <- function(hyper, state, entropy) {
  .Call(ffi_mix_objective, hyper, state$N, state$S) + entropy
}

mix_heldout_score <- function(test, hyper, state, threads) {
  if (is.null(test)) return(NA_real_)
  mean(.Call(ffi_mix_weights, test$data, hyper, state$N, state$S, TRUE, TRUE,
             as.integer(threads)))
}

# Rows lo+1..hi of the (permuted) training data: one batch.
mix_slice <- function(train, lo, hi) {
  idx <- seq.int(lo + 1, length.out = hi - lo)
  if (train$lik == 3L) {
    dt <- list(doc_ptr = train$data[[1L]], term = train$data[[2L]],
               count = train$data[[3L]], vocab = character(0), doc_names = NULL)
    x <- dtm_subset(dt, idx)
    return(list(lik = 3L, N = hi - lo, D = train$D, data = list(x$doc_ptr, x$term, x$count)))
  }
  list(lik = train$lik, N = hi - lo, D = train$D,
       data = train$data[idx, , drop = FALSE])
}

# The local step of one batch, as the executor (here or on a worker) runs it.
mix_batch_step <- function(batch, unused, hyper, state, L, threads) {
  mix_local(batch, hyper, state, c(0, batch$N), L, threads)
}

# The loop shared by fit_mixture() and update(), on the one training loop of
# R/train.R: local step in C -> batch summary -> global step. Lap 0 visits
# every batch once to fill the memoized caches; with `fresh` the globals
# follow the batches seen so far. Batches are taken in rounds of
# `control$sync` whose local steps share the globals of the round's start (in
# parallel on a cluster); global steps follow in batch order, so a fit on a
# cluster equals the fit without one.
mix_trace_extras <- c("local_seconds", "summary_seconds")

# Short runs (fit_mixture()'s starts): `stop_after` = s stops a memoized or
# batch fit after lap s (unless it converged or ended before) with `paused`
# TRUE and what `resume` needs to continue it; `resume` (that list) runs laps
# s + 1 to `control$passes` on the same caches, trainer and convergence test,
# so a paused and resumed fit equals the fit run straight through, bit for
# bit (its trace's seconds leave out the pause).
mix_train <- function(train, hyper, state, control, test, progress, fresh = TRUE,
                      cluster = NULL, stop_after = NULL, resume = NULL) {
  N <- train$N
  B <- control$n_batches
  bounds <- floor(seq(0, N, length.out = B + 1L))
  L <- control$L
  threads <- control$threads
  sync <- if (is.null(control$sync)) 1L else control$sync
  if (!is.null(cluster)) {
    ex <- new_executor(cluster, B, function(b) mix_slice(train, bounds[b], bounds[b + 1L]),
                       diff(bounds))
    on.exit(executor_close(ex), add = TRUE)
  }
  work <- if (is.null(cluster)) mix_work(max(diff(bounds)), length(state$N), L) else NULL
  run_round <- function(round, state) {
    if (is.null(cluster)) {
      # in this process: the C local step reads its rows of the training
      # data in place (no copy of the batch), with the same result
      out <- lapply(round, function(b) {
        mix_local(train, hyper, state, c(bounds[b], bounds[b + 1L]), L, threads, work)
      })
      return(list(results = out, sent = 0, received = 0))
    }
    executor_run(ex, round, "mix_batch_step",
                 list(hyper = hyper, state = state[c("N", "S")], L = L, threads = threads))
  }
  times <- function(acc, res) acc + c(res$time_local, res$time_summary)
  extras <- function(r) {
    list(local_seconds = r$acc[1], summary_seconds = r$acc[2], bytes_sent = r$sent,
         bytes_received = r$received)
  }
  trainer <- if (is.null(resume)) {
    new_trainer(progress, control$passes, upper_bound = control$global != "stochastic",
                heldout_unit = "/point")
  } else {
    # the clock leaves out the pause (the other starts' short runs)
    tr <- resume$trainer
    tr$start <- tr$start + proc.time()[["elapsed"]] - resume$paused_at[1]
    tr$cpu_start <- tr$cpu_start + process_cpu() - resume$paused_at[2]
    tr
  }
  heldout_of <- function(state) mix_heldout_score(test, hyper, state, threads)
  if (control$global == "stochastic") {
    t <- 0
    trainer$record(0L, function() list(objective = NA_real_, heldout = heldout_of(state)),
                   list(local_seconds = 0, summary_seconds = 0))
    lap_stochastic <- function(state, l) {
      tt <- t
      r <- train_rounds(state, seq_len(B), sync, function(round, st) run_round(round, st),
                        function(st, res, b) {
                          tt <<- tt + 1
                          mix_global_stochastic(st, res, step_size(tt, control$tau, control$kappa),
                                                N / (bounds[b + 1L] - bounds[b]))
                        }, times, c(0, 0))
      t <<- tt # only a completed lap moves the step-size clock
      list(state = r$state, extras = extras(r))
    }
    run <- train_laps(state, seq_len(control$passes), lap_stochastic,
                      function(state) list(objective = NA_real_, heldout = heldout_of(state)),
                      trainer, fail_first = FALSE)
    return(list(state = run$state, trace = trainer$frame(mix_trace_extras), converged = NA,
                interrupted = run$ended == "interrupted"))
  }
  objective_of <- function(memo) mix_objective(hyper, memo$state, sum(memo$ent))
  lap_memoized <- function(memo, l) {
    r <- train_rounds(memo, seq_len(B), sync, function(round, m) run_round(round, m$state),
                      function(m, res, b) {
                        # exact swap of this batch's cached summary
                        m$state <- mix_global_memoized(m$state, m$cache[[b]], res)
                        m$cache[[b]] <- res[c("N", "S")]
                        m$ent[b] <- res$entropy
                        m
                      }, times, c(0, 0))
    list(state = r$state, extras = extras(r))
  }
  laps_from <- function(memo, first, prev) {
    last <- control$passes
    if (!is.null(stop_after)) last <- min(last, stop_after)
    laps <- if (first <= last) seq.int(first, last) else integer(0)
    run <- train_laps(memo, laps, lap_memoized,
                      function(memo) list(objective = objective_of(memo),
                                          heldout = heldout_of(memo$state)),
                      trainer, fail_first = FALSE, previous = prev,
                      converged = function(previous, obj) {
                        is.finite(obj) && abs(obj - previous) <= control$tol * abs(previous)
                      })
    paused <- run$ended == "passes" && last < control$passes
    out <- list(state = run$state$state, trace = trainer$frame(mix_trace_extras),
                converged = run$ended == "converged", interrupted = run$ended == "interrupted",
                paused = paused)
    if (paused) {
      tr <- out$trace
      out$resume <- list(memo = run$state, lap = last, trainer = trainer,
                         previous = tr$objective[nrow(tr)],
                         paused_at = c(proc.time()[["elapsed"]], process_cpu()))
    }
    out
  }
  if (!is.null(resume)) return(laps_from(resume$memo, resume$lap + 1L, resume$previous))
  # lap 0: every batch once, filling the caches
  fill <- list(globals = state, seen = list(N = 0 * state$N, S = 0 * state$S),
               cache = vector("list", B), ent = numeric(B))
  r0 <- train_rounds(fill, seq_len(B), sync, function(round, f) run_round(round, f$globals),
                     function(f, res, b) {
                       f$cache[[b]] <- res[c("N", "S")]
                       f$ent[b] <- res$entropy
                       f$seen <- mix_global_memoized(f$seen, NULL, res)
                       # A fresh fit's lap 0 is incremental (the globals come
                       # from the batches seen so far, as in bnpy's first
                       # memoized lap); update() keeps the fitted globals
                       # until the lap is complete.
                       if (fresh) f$globals <- f$seen
                       f
                     }, times, c(0, 0))
  memo <- list(state = r0$state$seen, cache = r0$state$cache, ent = r0$state$ent)
  prev <- NA_real_
  trainer$record(0L, function() {
    prev <<- objective_of(memo)
    list(objective = prev, heldout = heldout_of(memo$state))
  }, extras(r0))
  laps_from(memo, 1L, prev)
}

# A memoized or batch fit that used all its laps before the relative change
# of the objective fell to `tol` says so (stochastic fits have no such test).
mix_warn_unconverged <- function(res, control) {
  if (!identical(res$converged, FALSE) || isTRUE(res$interrupted)) return(invisible())
  obj <- res$trace$objective
  obj <- obj[is.finite(obj)]
  change <- if (length(obj) >= 2L) {
    abs(obj[length(obj)] - obj[length(obj) - 1L]) / abs(obj[length(obj) - 1L])
  } else NA_real_
  warning(warningCondition(
    sprintf("The mixture did not converge in %d laps: the last relative change of the objective was %.3g, above `tol` = %.3g. Continue with update(fit, X, passes = ), or give more `passes` or a larger `tol`.",
            control$passes, change, control$tol),
    class = c("sparsevi_warning_unconverged", "sparsevi_warning")))
  invisible()
}

# ---- the fitted object -----------------------------------------------------

# Point estimates (posterior means) of weights and component parameters,
# computed in C (src/mix-global.c) from the global summaries.
mix_point_estimates <- function(hyper, state) {
  p <- .Call(ffi_mix_point, hyper, state$N, state$S)
  out <- list(weights = p$weights)
  switch(hyper$lik + 1L,
         out[c("means", "covariances")] <- p[c("means", "spread")],
         out[c("means", "covariances")] <- p[c("means", "spread")],
         out[c("means", "variances")] <- p[c("means", "spread")],
         out$topic_word <- p$means)
  out
}

new_sparsevi_mixture <- function(res, data, hyper, control, likelihood, prior, K, call,
                                 threads) {
  est <- mix_point_estimates(hyper, res$state)
  cols <- data$columns
  comp <- sprintf("c%d", seq_len(K))
  fit <- list(weights = stats::setNames(est$weights, comp))
  if (!is.null(est$means)) {
    fit$means <- sweep(est$means, 2L, data$center, `+`)
    dimnames(fit$means) <- list(comp, cols)
  }
  if (!is.null(est$covariances)) {
    fit$covariances <- est$covariances
    dimnames(fit$covariances) <- list(cols, cols, comp)
  }
  if (!is.null(est$variances)) {
    fit$variances <- est$variances
    dimnames(fit$variances) <- list(comp, cols)
  }
  if (!is.null(est$topic_word)) {
    fit$topic_word <- est$topic_word
    dimnames(fit$topic_word) <- list(comp, cols)
  }
  fit$sizes <- stats::setNames(res$state$N, comp)
  fit$likelihood <- likelihood
  fit$prior <- prior
  fit$K <- K
  fit$L <- control$L
  fit$n <- data$N
  fit$loglik <- sum(.Call(ffi_mix_weights, data$data, hyper, res$state$N, res$state$S,
                          TRUE, TRUE, as.integer(threads)))
  fit$state <- res$state
  fit$hyper <- hyper
  fit$center <- data$center
  fit$columns <- cols
  fit$control <- control
  fit$trace <- res$trace
  fit$converged <- res$converged
  fit$call <- call
  class(fit) <- c("sparsevi_mixture", "sparsevi_fit")
  fit
}

# The data-layer description of a fit (what mix_newdata() needs).
mix_fit_data <- function(object) {
  list(lik = object$hyper$lik, D = object$hyper$D, columns = object$columns,
       center = object$center)
}

#' @export
print.sparsevi_mixture <- function(x, ...) {
  cat(sprintf("<sparsevi_mixture> %s, %s prior: K = %d components, L = %d, %s training\n",
              x$likelihood, x$prior, x$K, x$L, x$control$global))
  cat(sprintf("  %s points x %d %s; %d laps in %.2fs%s\n", fmt_int(x$n), x$hyper$D,
              if (x$likelihood == "multinomial") "terms" else "dimensions",
              max(x$trace$lap), max(x$trace$seconds),
              if (isTRUE(x$converged)) " (converged)" else ""))
  last <- x$trace[nrow(x$trace), ]
  if (!is.na(last$objective)) cat(sprintf("  objective (ELBO): %.6g\n", last$objective))
  if (!is.na(last$heldout)) cat(sprintf("  held-out log-likelihood: %.6g per point\n", last$heldout))
  cat(sprintf("  log-likelihood: %.6g\n", x$loglik))
  if (!is.null(x$bic)) {
    cat(sprintf("  K chosen by BIC (-2 logLik + df log n, lower is better; mclust's sign is the opposite): K = %d\n",
                x$K))
    b <- x$bic
    cat(paste0("    ", utils::capture.output(print(
      data.frame(K = b$K, BIC = round(b$BIC, 2), loglik = round(b$loglik, 2), df = b$df,
                 best = ifelse(b$K == x$K, "*", "")), row.names = FALSE)), collapse = "\n"), "\n")
  }
  o <- order(x$weights, decreasing = TRUE)
  top <- utils::head(o, 8L)
  cat("  largest weights: ",
      paste(sprintf("%s %.3f", names(x$weights)[top], x$weights[top]), collapse = ", "),
      if (length(o) > 8L) ", ..." else "", "\n", sep = "")
  invisible(x)
}

#' @export
summary.sparsevi_mixture <- function(object, ...) {
  comp <- data.frame(component = names(object$weights), weight = unname(object$weights),
                     size = unname(object$sizes), stringsAsFactors = FALSE)
  out <- list(likelihood = object$likelihood, prior = object$prior, K = object$K,
              L = object$L, n = object$n, loglik = object$loglik,
              components = comp[order(comp$weight, decreasing = TRUE), ],
              trace = object$trace, converged = object$converged,
              BIC = stats::BIC(object), bic = object$bic)
  class(out) <- "summary.sparsevi_mixture"
  out
}

#' @export
print.summary.sparsevi_mixture <- function(x, ...) {
  cat(sprintf("Mixture: %s likelihood, %s prior, K = %d, L = %d, %s points\n", x$likelihood,
              x$prior, x$K, x$L, fmt_int(x$n)))
  cat(sprintf("Log-likelihood at the posterior means: %.6g; BIC %.6g (-2 logLik + df log n, lower is better)\n",
              x$loglik, x$BIC))
  if (!is.null(x$bic)) {
    cat("BIC of each K:\n")
    print(x$bic, row.names = FALSE, digits = 6)
  }
  cat("Components (by weight):\n")
  print(utils::head(x$components, 20L), row.names = FALSE, digits = 4)
  if (nrow(x$components) > 20L) cat(sprintf("... and %d more\n", nrow(x$components) - 20L))
  invisible(x)
}

#' Predict with a fitted mixture
#'
#' @param object A `sparsevi_mixture`.
#' @param newdata Data of the same form as the training data (same columns,
#'   matched by name when both have names; documents are aligned to the
#'   fitted vocabulary by term name, and unknown terms are dropped with a
#'   message). Missing: the training points, from what the fit keeps
#'   (`classification`, and `z` for `type = "responsibilities"`; the fit
#'   keeps no data, so `type = "density"` needs `newdata`).
#' @param type `"cluster"` (default: the most responsible component of each
#'   point), `"responsibilities"` (N x K matrix, rows sum to 1, from the
#'   variational weights) or `"density"` (the density of each point under the
#'   fitted mixture with its point estimates, \eqn{\sum_k w_k p(x | \theta_k)}
#'   over the fit's `weights` and component parameters (posterior means):
#'   the same meaning as for [fit_vdp()] fits).
#' @param log For `type = "density"`: the log density (default `FALSE`).
#' @param threads Number of threads.
#' @param ... Unused.
#' @returns An integer vector, a matrix or a numeric vector as `type` says.
#' @examples
#' sim <- simulate_mixture(N = 200, D = 2, K = 2, seed = 2)
#' fit <- fit_mixture(sim$X, K = 2, seed = 1, progress = FALSE)
#' head(predict(fit, sim$X, type = "responsibilities"))
#' @export
predict.sparsevi_mixture <- function(object, newdata,
                                     type = c("cluster", "responsibilities", "density"),
                                     log = FALSE,
                                     threads = getOption("sparsevi.threads", 1L), ...) {
  type <- check_choice(type, c("cluster", "responsibilities", "density"), "type")
  log <- check_flag(log, "log")
  threads <- sparsevi_threads(threads)
  if (missing(newdata)) return(mix_predict_training(object, type))
  test <- mix_newdata(newdata, mix_fit_data(object), "newdata")
  if (isTRUE(test$dropped > 0)) {
    message(sprintf("predict(): dropped %d term(s) (%s tokens) absent from the fitted vocabulary.",
                    test$dropped, format(test$dropped_tokens)))
  }
  st <- object$state
  if (type == "density") {
    out <- .Call(ffi_mix_weights, test$data, object$hyper, st$N, st$S, TRUE, TRUE,
                 as.integer(threads))
    return(if (log) out else exp(out))
  }
  W <- .Call(ffi_mix_weights, test$data, object$hyper, st$N, st$S, FALSE, FALSE,
             as.integer(threads))
  if (type == "cluster") return(max.col(t(W), ties.method = "first"))
  m <- apply(W, 2L, max)
  R <- exp(sweep(W, 2L, m))
  R <- t(R) / colSums(R)
  colnames(R) <- names(object$weights)
  R
}

# predict() of the training points, from the assignments kept on the fit.
mix_predict_training <- function(object, type, call = caller_call()) {
  if (is.null(object$classification)) {
    abort("This fit keeps no assignments of its training points (a Fast-VDP fit with `paper = TRUE` or `assignments = FALSE`, or a fit of an older version): give `newdata`, the training data.",
          "argument", call = call)
  }
  if (type == "cluster") return(object$classification)
  if (type == "responsibilities") {
    if (is.null(object$z)) {
      abort(sprintf("The fit does not keep the responsibilities of its %s training points (kept up to N * K = %s): give `newdata`, the training data.",
                    fmt_int(object$n), format(mix_z_max, big.mark = ",")), "argument",
            call = call)
    }
    return(object$z)
  }
  abort("`type = \"density\"` needs `newdata`: the fit keeps no data.", "argument",
        call = call)
}

#' Fitted values, observation count and assignments of a mixture fit
#'
#' `fitted()` gives the component of each training point (the most
#' responsible one; `type = "responsibilities"` the N x K matrix), in the
#' order of the training data, the same as `predict(fit)` without
#' `newdata`. mclust users find the same on the fit as `fit$classification`,
#' `fit$uncertainty` (1 minus the largest responsibility) and `fit$z` (the
#' responsibilities, kept when N * K is at most 5 million). `nobs()` is the
#' number of training points, the `n` of [BIC()].
#'
#' @param object A `sparsevi_mixture` or `sparsevi_vdp` fit.
#' @param type `"cluster"` (default) or `"responsibilities"`.
#' @param ... Unused.
#' @returns `fitted()`: an integer vector (`NA` for points a VDP fit's
#'   infinite tail claims) or a matrix; `nobs()`: a whole number.
#' @examples
#' fit <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
#' table(fitted(fit))
#' nobs(fit)
#' summary(fit$uncertainty)
#' @importFrom stats fitted nobs
#' @export
fitted.sparsevi_mixture <- function(object, type = c("cluster", "responsibilities"), ...) {
  type <- check_choice(type, c("cluster", "responsibilities"), "type")
  predict(object, type = type)
}

#' @rdname fitted.sparsevi_mixture
#' @export
nobs.sparsevi_mixture <- function(object, ...) object$n

#' @rdname heldout_loglik
#' @param newdata Test data of the same form as the training data.
#' @param threads Number of threads.
#' @export
heldout_loglik.sparsevi_mixture <- function(object, newdata,
                                            threads = getOption("sparsevi.threads", 1L),
                                            ...) {
  mean(predict(object, newdata, type = "density", log = TRUE, threads = threads))
}

#' @export
logLik.sparsevi_mixture <- function(object, ...) {
  K <- object$K
  D <- object$hyper$D
  per <- switch(object$likelihood, gaussian = D + D * (D + 1) / 2,
                zm_gaussian = D * (D + 1) / 2, diag_gaussian = 2 * D,
                multinomial = D - 1)
  structure(object$loglik, df = (K - 1) + K * per, nobs = object$n, class = "logLik")
}

#' Continue training a fitted mixture
#'
#' Runs more memoized, stochastic or batch laps from the fitted posterior,
#' on the same or on new data of the same form.
#'
#' @param object A `sparsevi_mixture`.
#' @param X Data (same form and columns as the training data).
#' @param passes Number of further laps (>= 1), default 5.
#' @param heldout Optional test data, scored after every lap. Missing (the
#'   default): the `heldout` data given when the model was fitted (kept on
#'   the fit as `heldout`); `NULL` to score none.
#' @param progress Print one line per lap?
#' @param cluster `NULL` or a cluster from [parallel::makePSOCKcluster()], as
#'   in [fit_mixture()].
#' @param ... Nothing else: any other argument (a misspelt one, or a setting
#'   of the model such as `K`) is an error of class
#'   `sparsevi_error_argument`.
#' @returns The updated `sparsevi_mixture`; its `trace` continues the old one.
#' @importFrom stats update logLik
#' @examples
#' sim <- simulate_mixture(N = 200, D = 2, K = 2, seed = 3)
#' fit <- fit_mixture(sim$X, K = 2, passes = 2, seed = 1, progress = FALSE)
#' fit <- update(fit, sim$X, passes = 3)
#' nrow(fit$trace)
#' @export
update.sparsevi_mixture <- function(object, X, passes = 5, heldout,
                                    progress = interactive(), cluster = NULL, ...) {
  check_update_dots(..., valid = c("X", "passes", "heldout", "progress", "cluster"))
  if (missing(X)) {
    abort("`X`, the data to continue training on, is missing (the fit does not keep them).",
          "argument")
  }
  if (missing(heldout)) heldout <- object$heldout
  cluster <- check_cluster(cluster)
  passes <- check_count(passes, "passes")
  progress <- check_flag(progress, "progress")
  likelihood <- object$likelihood
  fd <- mix_fit_data(object)
  if (likelihood == "multinomial") {
    nd <- mix_newdata(X, fd, "X")
    data <- list(lik = 3L, N = nd$N, D = fd$D, columns = fd$columns, center = NULL,
                 dtm = new_sparsevi_dtm(nd$data[[1L]], nd$data[[2L]], nd$data[[3L]],
                                        fd$columns),
                 data = nd$data)
  } else {
    nd <- mix_newdata(X, fd, "X")
    data <- list(lik = fd$lik, N = nd$N, D = fd$D, columns = fd$columns,
                 center = fd$center, data = nd$data)
  }
  test <- if (is.null(heldout)) NULL else mix_newdata(heldout, fd, "heldout")
  control <- object$control
  control$passes <- passes
  control$n_batches <- min(control$n_batches, data$N)
  perm <- order(.Call(ffi_svi_rng_unif, control$seed, 2 + nrow(object$trace),
                      as.double(data$N)))
  train <- mix_permute(data, perm, control$threads)
  res <- mix_train(train, object$hyper, object$state, control, test, progress, fresh = FALSE,
                   cluster = cluster)
  old <- object$trace
  tr <- res$trace
  tr$lap <- tr$lap + max(old$lap)
  tr$seconds <- tr$seconds + max(old$seconds)
  if (!is.null(old$cpu_seconds)) tr$cpu_seconds <- tr$cpu_seconds + max(old$cpu_seconds)
  res$trace <- trace_bind(old, tr)
  fit <- new_sparsevi_mixture(res, data, object$hyper, control, likelihood, object$prior,
                              object$K, object$call, control$threads)
  fit$heldout <- heldout
  fit <- mix_add_assignments(fit, data)
  mix_warn_unconverged(res, control)
  fit
}

#' Plot a fitted mixture
#'
#' With data `X`, draws the points in the data's own variables, coloured by
#' their most likely component, with each component's mean (a cross) and,
#' for Gaussian likelihoods, the ellipse of two standard deviations of its
#' covariance, and a legend of the components and their weights
#' (`which = "clusters"`): one panel for two variables, a pairs view (every
#' pair, on a page of its own) for more. `vars` chooses the variables; by
#' default every one up to six, beyond that the five along which the
#' components are most separated (between-component over within-component
#' variance). Also the training trace (`which = "trace"`: the objective, or
#' the held-out log-likelihood, against the lap) and the components
#' projected on the first two principal axes of the fitted mixture
#' (`which = "components"`, with the points of `X` when given). Each
#' component has the same colour in every panel.
#'
#' @param x A `sparsevi_mixture`.
#' @param X Optional data of the fitted form (the training data, or new
#'   points) to draw.
#' @param which Which panels: any of `"trace"`, `"clusters"` (needs `X`,
#'   numeric data with at least two columns) and `"components"`. Default
#'   `c("trace", "clusters")` with `X`, else `"trace"`.
#' @param vars For `"clusters"`: two or more variables to draw, by name or
#'   number (default as above).
#' @param ... Passed to [graphics::plot()].
#' @returns `x`, invisibly.
#' @examples
#' fit <- fit_mixture(faithful, K = 2, seed = 1, progress = FALSE)
#' plot(fit, faithful)
#' plot(fit, faithful, which = "clusters", vars = c("waiting", "eruptions"))
#' iris_fit <- fit_mixture(iris[, 1:4], K = 3, seed = 1, progress = FALSE)
#' plot(iris_fit, iris[, 1:4], which = "clusters")
#' plot(iris_fit, iris[, 1:4], which = "components")
#' @export
plot.sparsevi_mixture <- function(x, X = NULL, which = NULL, vars = NULL, ...) {
  numeric_data <- !is.null(x$means) && x$hyper$D >= 2L
  if (is.null(which)) which <- if (is.null(X) || !numeric_data) "trace" else c("trace", "clusters")
  panels <- c("trace", "clusters", "components")
  if (!is.character(which) || !length(which) || anyNA(which) || !all(which %in% panels)) {
    abort(sprintf("`which` must hold some of %s.", paste0('"', panels, '"', collapse = ", ")),
          "argument")
  }
  which <- panels[panels %in% which]
  if ("clusters" %in% which && (is.null(X) || !numeric_data)) {
    abort(if (is.null(X)) "`which = \"clusters\"` draws data: give `X`."
          else "`which = \"clusters\"` needs numeric data with at least two columns (a multinomial mixture has none: see `which = \"trace\"`).",
          "argument")
  }
  if (!numeric_data) which <- setdiff(which, "components")
  D <- x$hyper$D
  covs <- NULL
  if (numeric_data) {
    covs <- if (!is.null(x$covariances)) x$covariances else
      array(apply(x$variances, 1L, function(v) diag(v, D)), c(D, D, x$K))
  }
  Xo <- cl <- NULL
  if (!is.null(X) && numeric_data) {
    nd <- mix_newdata(X, mix_fit_data(x), "X")
    Xo <- nd$data + rep(x$center, each = nd$N)
    colnames(Xo) <- colnames(x$means)
    cl <- predict(x, X)
  }
  v <- if ("clusters" %in% which) {
    mix_plot_vars(vars, colnames(x$means), D, x$means, covs, x$weights)
  }
  # a pairs view takes a page of its own, after the other panels
  row <- setdiff(which, if (length(v) > 2L) "clusters")
  if (length(row) >= 2L) {
    op <- graphics::par(mfrow = c(1L, length(row)))
    on.exit(graphics::par(op))
  }
  cols <- mix_colours(x$K)
  if ("trace" %in% which) {
    tr <- x$trace
    use_obj <- any(!is.na(tr$objective))
    y <- if (use_obj) tr$objective else tr$heldout
    if (all(is.na(y))) y <- rep(NA_real_, nrow(tr))
    graphics::plot(tr$lap, y, type = "b", pch = 20, xlab = "lap",
                   ylab = if (use_obj) "objective (ELBO)" else "held-out log-likelihood",
                   main = "Training trace", ...)
  }
  if ("components" %in% which) {
    mu <- colSums(x$weights * x$means)
    tot <- matrix(0, D, D)
    for (k in seq_len(x$K)) {
      tot <- tot + x$weights[k] * (covs[, , k] + tcrossprod(x$means[k, ] - mu))
    }
    P <- eigen(tot, symmetric = TRUE)$vectors[, 1:2, drop = FALSE]
    M <- sweep(x$means, 2L, mu) %*% P
    ell <- lapply(seq_len(x$K), function(k) {
      C <- crossprod(P, covs[, , k] %*% P)
      e <- eigen(C, symmetric = TRUE)
      th <- seq(0, 2 * pi, length.out = 60)
      circ <- cbind(cos(th), sin(th)) %*% (t(e$vectors) * (2 * sqrt(pmax(e$values, 0))))
      sweep(circ, 2L, M[k, ], `+`)
    })
    pts <- if (is.null(Xo)) NULL else sweep(Xo, 2L, mu) %*% P
    allp <- rbind(do.call(rbind, ell), pts)
    graphics::plot(allp, type = "n", xlab = "PC1", ylab = "PC2", main = "Components", ...)
    if (!is.null(pts)) {
      graphics::points(pts, pch = 19, cex = if (nrow(pts) <= 500L) 1 else 0.5,
                       col = grDevices::adjustcolor(cols[cl], 0.6))
    }
    used <- x$weights >= 1e-3
    for (k in which(used)) graphics::lines(ell[[k]], col = cols[k], lwd = 2)
    graphics::points(M[used, , drop = FALSE], pch = 3, cex = 1.6, lwd = 3)
    graphics::legend("topright", legend = sprintf("%d (%.2f)", which(used), x$weights[used]),
                     col = cols[used], lwd = 2, bg = grDevices::adjustcolor("white", 0.7),
                     title = "component (weight)", cex = 0.8)
  }
  if ("clusters" %in% which) {
    plot_clusters(Xo, cl, x$means, covs, x$weights, v, "Clusters", ...)
  }
  invisible(x)
}
