# Mixture models with L-sparse posteriors (Hughes & Sudderth): the training
# loop (local step in C -> batch summary -> memoized / stochastic / batch
# global step), the fitted object and its methods. The kernels are in
# src/mix-local.c (local step, summaries), src/mix-global.c (global step,
# point estimates), src/mix-init.c (centring, seeding), src/mix-hc.c (the
# model-based hierarchical start) and src/obs-*.c; src/mix-ffi.c and
# src/mix-hc-ffi.c are their glue. R keeps only the order of batches and
# laps and the memoized caches.
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
#' Fits a finite (Dirichlet) or truncated Dirichlet-process mixture of
#' Gaussians, or of multinomials for documents, by variational inference in
#' which each point keeps only its `L` largest responsibilities (Hughes and
#' Sudderth); `L = K`, the default, is ordinary mean-field variational
#' Bayes. Several `K` (or covariance structures) are chosen among by BIC,
#' as `mclust::Mclust()` does.
#'
#' The default fit is meant to be used as is: it tries several starts
#' (k-means, k-means++ seeds and, on up to 2,000 points, two hierarchical
#' clusterings: Ward's and mclust's model-based one), runs each a few laps
#' and continues the best, so small data give the same fit for every seed;
#' above 20,000 points the starts run on a 2,000-point subsample. `vignette("benchmarks")`
#' compares these defaults with mclust.
#'
#' Priors are scaled to the data: a weak Normal-Wishart (prior covariance
#' about `scale` times the data's; Gamma variances for diagonal and
#' spherical structures). Fitted `covariances` are posterior means, close
#' to the maximum-likelihood ones.
#'
#' @param X Data: a numeric matrix or data frame, points in rows; for
#'   `likelihood = "multinomial"`, documents in any form [as_dtm()] accepts.
#' @param K Number of components; or several (e.g. `K = 1:9`): each is
#'   fitted and the one with the lowest BIC kept, the table of all in `bic`.
#'   BIC follows R's [BIC()], \eqn{-2 \log L + df \log n}: **lower is
#'   better** (mclust's has the opposite sign).
#' @param likelihood `"gaussian"` (default; see `covariance`),
#'   `"zm_gaussian"` (zero mean, full covariance), `"diag_gaussian"` (the
#'   same as `covariance = "diag"`) or `"multinomial"` (documents).
#' @param covariance For Gaussian data, the components' covariance
#'   structure: `"full"` (default; mclust's `"VVV"`), `"tied"` (`"EEE"`: one
#'   shared by all), `"diag"` (`"VVI"`) or `"spherical"` (`"VII"`). Several
#'   are each fitted and the best by BIC kept, as `Mclust(modelNames = )`.
#' @param prior `"dirichlet"` (default; total concentration `alpha`) or
#'   `"dp"` (stick-breaking truncated at K; concentration `gamma`).
#' @param L Nonzero responsibilities per point, 1 to K; default K (dense).
#' @param global `"memoized"` (default), `"stochastic"` (step size
#'   \eqn{(\tau + t)^{-\kappa}}) or `"batch"`.
#' @param n_batches,batch_size Number of batches, or points per batch (give
#'   at most one). Default one batch per 2,000 points, at most 20.
#' @param passes Maximum number of laps (passes over the data), default 200.
#' @param init How starts are seeded: `"kmeans"` (default: k-means on the
#'   scaled columns, alternating with k-means++ seed points, plus the
#'   hierarchical starts on small data), `"kmeanspp"` (k-means++ seed points,
#'   the paper's start) or `"random"`.
#' @param n_init Number of starts besides the hierarchical ones. Default 10
#'   for numeric data with memoized or batch training, 1 for documents and
#'   stochastic training. The fit of highest log-likelihood is kept (a
#'   hierarchical start's unless another is higher by more than one nat).
#' @param alpha Dirichlet total concentration (> 0), default `K` (uniform).
#' @param gamma DP concentration (> 0), default 1.
#' @param nu,scale,kappa0 Gaussian prior: degrees of freedom (default D + 2;
#'   3 for diagonal covariances), covariance scale relative to the data's
#'   (default 0.003) and the mean's pseudo-count (default 0.01).
#' @param eta Dirichlet prior of multinomial components (> 0), default 0.1.
#' @param tau,kappa Stochastic step size: `tau >= 0` (default 1), `kappa` in
#'   (0.5, 1] (default 0.6).
#' @param tol Memoized and batch training stop when the objective's relative
#'   change over a lap is below `tol` (default 1e-6); a fit that uses all
#'   `passes` warns (class `sparsevi_warning_unconverged`).
#' @param seed `NULL` or a whole number, for reproducible fits.
#' @param threads Number of threads (default
#'   `getOption("sparsevi.threads", 1)`); results do not depend on it.
#' @param progress Print one line per lap? Default `interactive()`.
#' @param heldout Optional test data, scored after every lap.
#' @param cluster `NULL`, persistent workers from [sparsevi_workers()], a
#'   cluster from [parallel::makePSOCKcluster()], or `"future"`: batches stay
#'   on the workers; the fit equals the fit without one. See
#'   [sparsevi_cluster].
#' @param sync Batches sharing one set of global parameters, run in
#'   parallel on a cluster; default 1.
#' @param ... Unused; must be empty.
#' @returns A `sparsevi_mixture` object, a list with `weights`, `means` (K x
#'   D), `covariances` (D x D x K) or `variances` (K x D, diagonal
#'   structures), `topic_word` (K x V, documents), `sizes` (expected points
#'   per component), `loglik` (at the point estimates), `classification`,
#'   `uncertainty` and `z` (as mclust's: each training point's component,
#'   1 minus its responsibility, and the responsibilities when N K <= 5e6),
#'   `bic` (with several K or covariances: one row per fit, with `K`,
#'   `covariance`, `loglik`, `df`, `BIC`, `converged`), `trace` (a row per
#'   lap: `lap`, `seconds`, `objective` (the evidence lower bound),
#'   `heldout`), `converged`, `covariance_type`, `K`, `L`, `n`,
#'   `init_loglik` and `best_init` (each start's log-likelihood, the start
#'   kept), `control`, `call`, and internals (`state`, `hyper`, `center`,
#'   `columns`).
#' @seealso [plot.sparsevi_mixture()], [predict.sparsevi_mixture()],
#'   [fitted.sparsevi_mixture()], [update.sparsevi_mixture()]; [fit_vdp()]
#'   finds the number of components itself.
#' @section Differences from the paper:
#' * **Start.** The paper seeds once by Bregman k-means++; the default tries
#'   several starts (above), because one start gave seed-dependent answers.
#'   The model-based hierarchical start is mclust's (Fraley 1998: merge the
#'   pair of clusters whose merge least lowers the Gaussian classification
#'   likelihood, on the scaled singular vectors of the columns); on several
#'   data sets of 50 points or fewer it reaches the partition mclust finds,
#'   which the other starts missed. Paper: `init = "kmeanspp", n_init = 1`.
#' * **Responsibility floor.** Responsibilities below \eqn{2^{-53}} of a
#'   point's largest are dropped; the objective stays exact. No setting
#'   removes it.
#' * **Priors.** Not fixed by the paper: a uniform Dirichlet on the
#'   weights and a weak data-scaled Normal-Wishart.
#' * **Stopping.** By `tol` within `passes` laps, where the paper runs a
#'   fixed number of laps (`tol = 0`).
#' * **Likelihood.** By default each component's mean is estimated. The
#'   paper's image patches are first made zero-mean, each patch minus its
#'   own average pixel, and then fitted by a zero-mean Gaussian mixture.
#'   `likelihood = "zm_gaussian"` is that model, but it does not remove the
#'   points' means: subtract them first (`X - rowMeans(X)`) to fit as the
#'   paper did. (Such points lie in a subspace of dimension D - 1; the
#'   Wishart prior keeps the covariances invertible.)
#' * **Stochastic schedule.** The paper's stochastic training draws each
#'   batch at random from all the data and steps with size
#'   \eqn{(\tau + t)^{-\kappa}} at iteration t, choosing the delay and
#'   decay by grid search (for its topic models). `global = "stochastic"`
#'   shuffles the points once (by `seed`) into fixed batches and visits
#'   each batch once per lap, in the same order every lap, with step
#'   \eqn{\min(1, (\tau + t)^{-\kappa})} at the t-th batch, one default
#'   schedule (`tau = 1`, `kappa = 0.6`), and no convergence test (it runs
#'   all `passes`).
#' @examples
#' sim <- simulate_mixture(N = 300, D = 2, K = 3, seed = 1)
#' fit <- fit_mixture(sim$X, K = 3, seed = 1, progress = FALSE)
#' fit
#' table(predict(fit, sim$X), sim$cluster)
#' # choose K by BIC, as mclust does
#' grid <- fit_mixture(faithful, K = 1:3, seed = 1, progress = FALSE)
#' grid$bic
#' plot(grid, faithful)
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
    # "kmeans" on up to mix_hc_max() points the hierarchical starts last; the
    # start of highest log-likelihood at its point estimates is kept
    best <- NULL
    # init = "kmeans" on small numeric data: two more starts, deterministic,
    # from hierarchical clusterings (mix_hc_kinds(), mix_hc_state())
    hc <- if (init == "kmeans" && data$lik != 3L && K >= 2L && global != "stochastic") {
      mix_hc_kinds(data$N)
    } else character(0)
    n_all <- n_init + length(hc)
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
    # A hierarchical start (last) also wins ties within `mix_hc_margin`
    # nats of the best before it: a likelihood ratio below e is no evidence for either start, and
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
      state <- if (i > n_init) mix_hc_state(data, train, hyper, K, perm, hc[i - n_init])
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
                      n_init = n_init, hc_starts = if (length(hc)) hc else "none")
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
# "responsibilities") gives them). One pass in C (ffi_mix_assign), the same
# values as the pure-R reference of tests/testthat/helper-reference-mixture.R.
mix_z_max <- 5e6

mix_add_assignments <- function(fit, data) {
  st <- fit$state
  keep_z <- as.double(data$N) * fit$K <= mix_z_max
  a <- .Call(ffi_mix_assign, data$data, fit$hyper, st$N, st$S, keep_z,
             as.integer(fit$control$threads))
  fit$classification <- a$classification
  fit$uncertainty <- a$uncertainty
  if (keep_z) dimnames(a$z) <- list(NULL, names(fit$weights))
  fit$z <- a$z
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
