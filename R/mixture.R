# Mixture models with L-sparse posteriors (Hughes & Sudderth): the training
# loop (local step in C -> batch summary -> memoized / stochastic / batch
# global step), the fitted object and its methods. The kernels are in
# src/mix-local.c (local step, summaries), src/mix-global.c (global step,
# point estimates), src/mix-init.c (centring, seeding) and src/obs-*.c;
# src/mix-ffi.c is their glue. R keeps only the order of batches and laps and
# the memoized caches.
#
# This file: fit_mixture(), K selection and the training points' assignments.
# The rest: mixture-data.R (data checks and the prior), mixture-start.R
# (starts), mixture-train.R (the training loop glue), mixture-methods.R (the
# fitted object and its methods).

# The observation models, in the order of the C tables' codes (MIX_* in
# src/mix.h): the user's likelihoods, then the Gaussian covariance
# structures that `covariance` chooses ("diag" is "diag_gaussian").
mix_likelihoods <- c("gaussian", "zm_gaussian", "diag_gaussian", "multinomial",
                     "tied_gaussian", "spherical_gaussian")

# covariance = (scikit-learn's names, and mclust's model names as synonyms)
mix_covariances <- c(full = "gaussian", tied = "tied_gaussian", diag = "diag_gaussian",
                     spherical = "spherical_gaussian")
mix_covariance_synonyms <- c(VVV = "full", EEE = "tied", VVI = "diag", VII = "spherical")

# The covariance structures asked for (NULL: the likelihood's own), checked
# against the likelihood; returns the scikit-learn names, unique, in the
# order given.
mix_check_covariances <- function(covariance, likelihood, call = caller_call()) {
  if (is.null(covariance)) {
    return(switch(likelihood, gaussian = , zm_gaussian = "full", diag_gaussian = "diag",
                  multinomial = NA_character_))
  }
  ok <- c(names(mix_covariances), names(mix_covariance_synonyms))
  if (!is.character(covariance) || !length(covariance) || anyNA(covariance) ||
      !all(covariance %in% ok)) {
    bad <- if (is.character(covariance)) setdiff(covariance, ok) else covariance
    abort(sprintf("`covariance` must hold some of %s (or mclust's %s), not %s.",
                  paste0('"', names(mix_covariances), '"', collapse = ", "),
                  paste0('"', names(mix_covariance_synonyms), '"', collapse = ", "),
                  describe(bad)), "argument", call = call)
  }
  cov <- unique(ifelse(covariance %in% names(mix_covariance_synonyms),
                       mix_covariance_synonyms[covariance], covariance))
  allowed <- switch(likelihood, gaussian = names(mix_covariances), zm_gaussian = "full",
                    diag_gaussian = "diag", multinomial = character(0))
  if (!all(cov %in% allowed)) {
    abort(sprintf("`covariance = \"%s\"` does not go with likelihood = \"%s\"%s.",
                  setdiff(cov, allowed)[1L], likelihood,
                  if (likelihood == "multinomial") " (documents have no covariance)"
                  else if (likelihood == "zm_gaussian") " (the zero-mean model has full covariances)"
                  else "; use likelihood = \"gaussian\" with any covariance"),
          "argument", call = call)
  }
  unname(cov)
}

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
#'   higher is better). Repeated values are fitted once (with a message);
#'   fits of the grid that use all `passes` give one warning naming their
#'   K, and the table's `converged` column says which converged.
#' @param likelihood One of `"gaussian"` (default; its covariance
#'   structure is `covariance`, full by default), `"zm_gaussian"`
#'   (zero-mean, full covariance), `"diag_gaussian"` (the same as
#'   `covariance = "diag"`), `"multinomial"`.
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
#'   points and on the subsample of larger data (see below); without the
#'   subsample (another `init`, or the option off) 3 up to 100,000 points,
#'   else 1; 1 for documents and stochastic training. Several starts with memoized or batch training are short
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
#'   USArrests seeds). On more than
#'   `getOption("sparsevi.mix_sub_start", 20000)` points (with memoized or
#'   batch training, `init = "kmeans"` and `n_init` not given), the
#'   default starts run on a random subsample of
#'   `getOption("sparsevi.mix_sub_size", 2000)` points (at least 20 K (D +
#'   1)), as many as for data of that size and with the hierarchical start,
#'   and only the best is trained on all the points (mclust's start for
#'   large data is its hierarchical start on a subsample);
#'   `control$sub_start` is then the subsample's size, and `init_loglik`
#'   and `init_objectives` are the subsample's. At N = 100,000, D = 10,
#'   `K = 1:9` this took 1.75 s against 6.22 s for the starts on all the
#'   points, with the same choice of K (`inst/bench/mixture.R`, part
#'   `grid`); `options(sparsevi.mix_sub_start = Inf)` turns it off.
#' @param covariance For Gaussian data, the covariance structure of the
#'   components, with scikit-learn's names (mclust's in brackets):
#'   `"full"` (`"VVV"`, the default: each its own covariance), `"tied"`
#'   (`"EEE"`: one covariance shared by all), `"diag"` (`"VVI"`: each its
#'   own diagonal covariance, the same model as `likelihood =
#'   "diag_gaussian"`) or `"spherical"` (`"VII"`: each its own variance,
#'   the same in every direction). Several (e.g. `c("full", "tied")`, or
#'   all four) are fitted for each `K` and the best by BIC kept, as
#'   `Mclust(modelNames = )`; the table is `bic`, with a `covariance`
#'   column, and `plot(fit, which = "bic")` draws it. Priors: full and tied
#'   covariances a Wishart with `nu` and `scale` as above (one for the
#'   tied covariance, whose posterior pools every component's scatter);
#'   diagonal a Gamma per dimension, spherical one Gamma(`nu D / 2`, `nu / 2
#'   * scale * sum(v)`) per component (the diagonal prior pooled over the
#'   dimensions); each with the Normal prior on the mean.
#' @param ... Unused; must be empty.
#' @returns A `c("sparsevi_mixture", "sparsevi_fit")` object, a list with
#'   `weights` (K mixing weights, posterior means), `means` (K x D; numeric
#'   data), `covariances` (D x D x K array, full models; posterior means) or `variances`
#'   (K x D, diagonal model), `topic_word` (K x V, rows sum to 1;
#'   multinomial), `sizes` (expected number of points per component),
#'   `likelihood` (`"tied_gaussian"` or `"spherical_gaussian"` for those
#'   covariances), `covariance_type` (`"full"`, `"tied"`, `"diag"` or
#'   `"spherical"`, as scikit-learn's; `NA` for documents), `prior`, `K`, `L`, `loglik` (training log-likelihood at
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
#'   `converged`, one row per K; with several `covariance`, a row per K
#'   and covariance, with a `covariance` column) and `call`.
#' @section Differences from the paper:
#' Hughes & Sudderth's mixtures (their Sec. 3 and experiments), and what
#' this function does differently by default, with the setting that restores
#' the paper's choice:
#' * **Start.** The paper seeds by Bregman k-means++ (for Gaussians, plain
#'   k-means++ on the data) once per run and reports the best of many runs.
#'   Here the default starts from the k-means partition and from k-means++
#'   seed points alternately, ten starts (on a 2,000-point subsample of
#'   more than 20,000 points, the best then trained on all of them),
#'   then on up to 2,000 points from Ward's hierarchical
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
                        sync = NULL, n_init = NULL, covariance = NULL, ...) {
  call <- match.call()
  check_dots_empty(...)
  likelihood <- check_choice(likelihood, mix_likelihoods[1:4], "likelihood")
  covs <- mix_check_covariances(covariance, likelihood)
  if (length(K) > 1L || length(covs) > 1L) K <- mix_check_K(K)
  if (length(K) > 1L || length(covs) > 1L) {
    # several K or covariance structures: fit each, keep the best by BIC
    args <- mget(setdiff(names(formals(fit_mixture)), "..."), environment())
    return(mix_select_K(args, K, covs, missing(L), call))
  }
  covariance <- covs
  if (likelihood == "gaussian") likelihood <- mix_covariances[[covariance]]
  cluster <- check_cluster(cluster)
  sync <- resolve_sync(sync, cluster)
  prior <- check_choice(prior, c("dirichlet", "dp"), "prior")
  global <- check_choice(global, sparsevi_engines$mixture$globals, "global")
  init <- check_choice(init, c("kmeans", "kmeanspp", "random"), "init")
  threads <- sparsevi_threads(threads)
  data <- mix_grid_data(X, likelihood, threads)
  N <- data$N
  K <- mix_check_K(K)
  if (K > N) {
    abort(sprintf("`K` (%d) exceeds the number of points (%d): use K <= %d.", K, N, N),
          "argument")
  }
  L <- check_count(L, "L", min = 1, max = K)
  passes <- check_count(passes, "passes", min = 0)
  # several starts where they are cheap: numeric data, memoized or batch
  # training (measured in inst/bench/mixture.R, part robust)
  # the default starts on large data run on a subsample (mix_sub_size()),
  # as many as for data of its size
  m <- if (is.null(n_init) && init == "kmeans") mix_sub_size(N, data$D, K, global, data$lik)
  if (is.null(n_init)) {
    n_start <- if (is.null(m)) N else m
    n_init <- if (likelihood == "multinomial" || global == "stochastic") 1L
              else if (n_start <= 10000) 10L else if (n_start <= 100000) 3L else 1L
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

  pt <- mix_grid_train(data, seed2, threads)
  perm <- pt$perm
  train <- pt$train
  # The starts on `data` (its rows permuted by `perm` into `train`, in `B`
  # batches), each trained, and the best kept by the rule of better():
  # list(runs, best, scores, lls, i (the starts run), short).
  run_starts <- function(data, train, perm, B, test) {
    # n_init starts: the first from the fit's seed (so n_init = 1 is the plain
    # fit), the others from seeds of their own streams, and with init =
    # "kmeans" on up to mix_hc_max() points the hierarchical start last; the
    # start of highest log-likelihood at its point estimates is kept
    best <- NULL
    # init = "kmeans" on small numeric data: one more start, deterministic,
    # from a hierarchical clustering (mix_hc_state())
    hc <- init == "kmeans" && data$lik != 3L && K >= 2L && global != "stochastic" &&
      data$N <= mix_hc_max()
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
    list(runs = runs, best = best, scores = scores, lls = lls, i = i, short = short,
         n_init = n_init)
  }
  # On large data (mix_sub_start()), the starts run on a random subsample
  # and only the best is trained on all the data (as mclust's large-N start)
  if (is.null(m)) {
    st <- run_starts(data, train, perm, B, test)
  } else {
    t_sub <- proc.time()[["elapsed"]]
    rows <- seq_len(m)
    sub <- list(lik = data$lik, N = m, D = data$D, columns = data$columns,
                center = data$center, init_scale = data$init_scale,
                data = train$data[rows, , drop = FALSE])
    st <- run_starts(sub, sub, rows, mix_n_batches(m, NULL, NULL, global), NULL)
    # its state, scaled to the full data's counts, starts one run on all
    # the points (lap 0 keeps it until the lap is complete, as update())
    s0 <- st$runs[[st$best$i]]$res$state
    state <- list(N = s0$N * (N / m), S = s0$S * (N / m))
    control <- st$runs[[st$best$i]]$fit$control
    control$n_batches <- B
    control$init_seconds <- proc.time()[["elapsed"]] - t_sub
    control$sub_start <- m
    res <- mix_train(train, hyper, state, control, test, progress, fresh = FALSE,
                     cluster = cluster)
    fit <- new_sparsevi_mixture(res, data, hyper, control, likelihood, prior, K, call,
                                threads)
    st$runs <- list(list(fit = fit, res = res, degen = mix_degenerate(fit)))
    st$best <- list(i = 1L, degen = st$runs[[1L]]$degen, sub = st$best$i)
  }
  runs <- st$runs
  best <- st$best
  scores <- st$scores
  lls <- st$lls
  i <- st$i
  short <- st$short
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
  fit$best_init <- if (is.null(best$sub)) best$i else best$sub
  # (a K grid assigns the points of the fit it keeps only: mix_select_K())
  if (!mix_grid$active) fit <- mix_add_assignments(fit, data)
  mix_warn_unconverged(best$res, fit$control)
  fit
}

# A K grid (mix_select_K()) fits the same data at each K (and covariance):
# while it runs, the checked and centred data and the permuted training
# rows of the last fit are kept and reused when the data are identical
# (compared exactly) and, for the rows, the seed is the same; only the
# fit it keeps gets the training points' assignments. The same values as
# computed anew (bit for bit), without the passes over the data.
mix_grid <- new.env(parent = emptyenv())
mix_grid$active <- FALSE

mix_grid_data <- function(X, likelihood, threads, call = caller_call()) {
  zm <- likelihood == "zm_gaussian"
  c <- mix_grid$data
  if (mix_grid$active && !is.null(c) && identical(c$zm, zm) && identical(c$X, X)) {
    data <- c$data
  } else {
    data <- mix_data(X, likelihood, "X", threads, call = call)
    if (mix_grid$active) {
      mix_grid$data <- list(X = X, zm = zm, data = data)
      mix_grid$train <- NULL
    }
  }
  data$lik <- match(likelihood, mix_likelihoods) - 1L
  data
}

mix_grid_train <- function(data, seed, threads) {
  c <- mix_grid$train
  if (mix_grid$active && !is.null(c) && identical(c$seed, seed) &&
      identical(c$lik3, data$lik == 3L)) {
    pt <- c$pt
  } else {
    perm <- order(.Call(ffi_svi_rng_unif, seed, 1, as.double(data$N)))
    pt <- list(perm = perm, train = mix_permute(data, perm, threads))
    if (mix_grid$active) mix_grid$train <- list(seed = seed, lik3 = data$lik == 3L, pt = pt)
  }
  pt$train$lik <- data$lik
  pt
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
# `K` of fit_mixture(): one or several whole numbers from 1 to the largest
# integer (an error names the first value that is not); duplicates are
# dropped with a message; returned sorted, as integers.
mix_check_K <- function(K, call = caller_call()) {
  if (!is.numeric(K) || !length(K)) {
    abort(sprintf("`K` must be one whole number >= 1, or several to choose among by BIC, not %s.",
                  describe(K)), "argument", call = call)
  }
  bad <- which(is.na(K) | !is.finite(K) | K != round(K) | K < 1 | K > .Machine$integer.max)
  if (length(bad)) {
    abort(sprintf("`K` must hold whole numbers from 1 to the number of points; %s%s is not one.",
                  if (length(K) > 1L) sprintf("K[%d] = ", bad[1L]) else "",
                  format(K[bad[1L]])), "argument", call = call)
  }
  dup <- unique(K[duplicated(K)])
  if (length(dup)) {
    message(sprintf("fit_mixture(): `K` repeats %s; each K is fitted once.",
                    paste(format(dup), collapse = ", ")))
  }
  sort(unique(as.integer(K)))
}

# The last relative change of a fit's objective (the test of `tol`).
mix_last_change <- function(trace) {
  obj <- trace$objective
  obj <- obj[is.finite(obj)]
  if (length(obj) < 2L) return(NA_real_)
  abs(obj[length(obj)] - obj[length(obj) - 1L]) / abs(obj[length(obj) - 1L])
}

mix_select_K <- function(args, Ks, covs, L_missing, call, env = caller_call()) {
  if (is.null(args$seed)) args$seed <- floor(stats::runif(1L) * 2147483647)
  old <- mix_grid$active
  mix_grid$active <- TRUE
  on.exit({
    mix_grid$active <- old
    mix_grid$data <- mix_grid$train <- NULL
  }, add = TRUE)
  grid <- expand.grid(K = Ks, covariance = covs, stringsAsFactors = FALSE)
  fits <- vector("list", nrow(grid))
  for (j in seq_len(nrow(grid))) {
    a <- args
    a$K <- grid$K[j]
    a$covariance <- grid$covariance[j]
    if (is.na(a$covariance)) a["covariance"] <- list(NULL)
    a$L <- if (L_missing) grid$K[j] else min(args$L, grid$K[j])
    # each fit's own "did not converge" warning is replaced by one for the
    # grid below, which names the K
    fits[[j]] <- withCallingHandlers(do.call(fit_mixture, a),
                                     sparsevi_warning_unconverged = function(w) {
                                       invokeRestart("muffleWarning")
                                     })
  }
  Ks <- grid$K
  tab <- data.frame(K = Ks, covariance = grid$covariance,
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
  # the assignments of the fit kept (its data from the grid's store)
  fit <- mix_add_assignments(fit, mix_grid_data(args$X, fit$likelihood, fit$control$threads))
  if (length(covs) == 1L) tab$covariance <- NULL
  fit$bic <- tab
  fit$call <- call
  mix_warn_grid_unconverged(fits, Ks, best, args, env, grid$covariance)
  fit
}

# One warning for the fits of a K grid that used all their laps, naming
# each K and whether the chosen one is among them (interrupted fits, which
# warned of that, are not counted).
mix_warn_grid_unconverged <- function(fits, Ks, best, args, call, covs = NA) {
  un <- which(vapply(fits, function(f) identical(f$converged, FALSE), logical(1)))
  if (!length(un)) return(invisible())
  changes <- vapply(fits[un], function(f) mix_last_change(f$trace), numeric(1))
  covs <- rep_len(covs, length(Ks))
  label <- if (length(unique(covs)) > 1L) sprintf("K = %s (%s)", Ks, covs)
           else sprintf("K = %s", Ks)
  what <- sprintf("%s (last relative change %s)", label[un], format(changes, digits = 3))
  chosen <- if (best %in% un) {
    sprintf("%s, chosen by BIC, is among them: continue it with update(fit, X, passes = ), or give more `passes` or a larger `tol`.",
            label[best])
  } else {
    sprintf("%s, chosen by BIC, converged; see the `converged` column of fit$bic.",
            label[best])
  }
  warning(warningCondition(
    sprintf("The mixture did not converge in %d laps (relative change of the objective above `tol` = %.3g) for %s. %s",
            args$passes, args$tol, paste(what, collapse = ", "), chosen),
    class = c("sparsevi_warning_unconverged", "sparsevi_warning"), call = call))
  invisible()
}

check_dots_empty <- function(...) {
  if (...length() > 0L) {
    nm <- names(list(...))
    what <- if (is.null(nm) || !nzchar(nm[1L])) "an unnamed argument" else sprintf("`%s`", nm[1L])
    abort(sprintf("Unknown argument %s: check its spelling against the documentation.", what),
          "argument", call = caller_call(2))
  }
}
