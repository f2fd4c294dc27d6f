# Fast-VDP and VDP (fit_vdp). Why this engine runs its own loop in C
# (src/vdp.c, vdp_fit) rather than on train_laps() (R/train.R), in the terms
# of DESIGN.md (the loop: laps of local steps over batches, each followed by
# a global step, then an objective):
# - its unit of work is not a lap over batches: it is a greedy search. Each
#   step is either an update cycle over the outer nodes of a kd-tree that
#   changes while the fit runs (nodes are expanded, and buckets of the lazily
#   built tree are split, in the middle of the fit), or a split trial:
#   `candidates` components are each split along their principal axis and
#   refined by partial updates of the two children alone, and all but the
#   best trial are thrown away; delete trials likewise restore a snapshot.
#   The state a step needs (the tree: hundreds of MB at 10^6 points, held in
#   malloc'd memory for the one call; the items and their responsibilities;
#   the trial snapshots) would have to live behind an external pointer and
#   be re-entered from R at every step, not just at lap ends;
# - the cost: at N = 10^6, D = 16 the paper mode runs about 250 steps in a
#   fit of 0.10 s after the tree (0.4 ms a step; inst/bench/results/vdp.txt),
#   while train_laps() alone, with a lap and an evaluation that do nothing,
#   costs about 90 us a lap (inst/bench/obs-refactor.R, results in
#   inst/bench/results/obs-refactor.txt): over 20 ms a fit, a fifth of the
#   fit after the tree, before any state crosses between R and C, so the
#   whole-call figure against VDP (53x) would fall.
# What it shares with the others: the trace has the common columns
# (train_trace_columns: lap = step, seconds, cpu_seconds, objective = the
# ELBO = -free energy, heldout, bytes_sent, bytes_received), its own after
# them; VDP's per-point steps run on cluster workers through the same
# executor (vdp_remote, vdp_batch_step); the prior and the Normal-Wishart
# algebra are the mixtures' (src/obs-gauss.c); options go by name
# (ffi_vdp_fit's prior and control lists).

#' Accelerated variational Dirichlet process Gaussian mixture (Fast-VDP)
#'
#' Fits a Dirichlet-process mixture of full-covariance Gaussians by the
#' algorithm of Kurihara, Welling & Vlassis (2007). Components past the
#' current truncation level `T` stay tied to their priors, so every point keeps
#' some mass on the infinite tail, and the free energy is exact in closed
#' form. Starting from `T = 1`, the fit repeatedly samples `candidates`
#' components by size, splits each along its principal axis, updates only the
#' two children, keeps the split that lowers the free energy most, then
#' updates everything (reordering components by size) and stops when the best
#' split lowers the free energy by no more than `tol` nats per point. The
#' number of components is found, not given.
#'
#' With `kdtree = TRUE` the data sit in a kd-tree built once; all points of an
#' outer node share one responsibility vector computed from the node's cached
#' count, sum and sum of outer products, and nodes are expanded (every third
#' update cycle) where their children disagree with them. Expanding never
#' raises the free energy. The tree is built once, top-down in O(N log N)
#' (each node splits at the median of a sample of its points' projections on
#' its principal direction), but lazily: nodes of at most 256 points
#' ("buckets") get their statistics from their points at once and are split
#' further only when the fit first asks for their children. The tree is the
#' one the whole build would give, node for node with the same statistics,
#' so the fit is identical (`lazy_tree = FALSE` builds everything up front);
#' at a million points the outer nodes used hold hundreds of points each and
#' over 90% of the tree's nodes are never built. In `timings`, `tree` is the
#' build up front (but for the root's projections, computed in the pass that
#' makes the centred copy of the data); buckets split later count in `fit`. `kdtree = FALSE` runs the same algorithm on every
#' point (the paper's "VDP" baseline). In the full local step,
#' responsibilities below 1e-10 are set to zero and the rest renormalised,
#' so the statistics skip them; the free energy stays exact for the
#' responsibilities in use.
#'
#' **Delete moves (not in the paper).** When splitting stops, the fit tries
#' removing components, smallest first (only those holding less than half
#' the average component size, at most `candidates` tries): the component is
#' dropped, everything is updated to convergence, and the result is kept
#' only if the free energy is lower, else the fit is restored exactly.
#' Greedy splitting from T = 1 can leave slivers of one cluster as separate
#' components; deletes remove those that do not pay for themselves, so T
#' can end below its largest value (the trace marks them `"delete"`, and
#' `splits["deletes"]` counts them). `deletes = FALSE` (in `...`) turns them
#' off and gives Kurihara et al.'s algorithm as published.
#'
#' **Paper mode.** `paper = TRUE` (in `...`) runs Kurihara et al.'s
#' algorithm as published: nodes are expanded by the paper's test alone
#' (`expand_sd = 0`: a child's optimal responsibilities differ from its
#' node's by more than `expand_threshold`; the spread test is skipped) and
#' there are no delete moves (`deletes = FALSE`); `expand_sd` or `deletes`
#' given explicitly override it. It is the fastest setting: on 10^6 points
#' in 16 dimensions from 10 Gaussians (c = 2, the paper's Fig. 2) it keeps
#' about a third of the default's outer nodes (1,261 against 3,591); the fit
#' after the tree took 0.10-0.11 s, 160 times less than VDP's (median of
#' three runs; 158-180 over six), and the whole call 0.33 s, 53 times less
#' (51-58; the kd-tree build, 0.15 s, is about half of it), with a free
#' energy 0.5% above VDP's (the default: 0.06%, at 33 times). The
#' default's spread test catches nodes whose two children both straddle a
#' boundary, which the paper's test misses, so the default stays closer to
#' VDP where that matters (at N = 10^4 and D = 64 or 128 the paper mode's
#' free energy is 2-6% above VDP's, the default's under 1%); on data where
#' the spread test expands most nodes (4 x 4 image patches) the paper mode
#' is far faster. Figures: `inst/bench/results/vdp.txt`.
#'
#' The prior is Normal-Wishart: \eqn{\Lambda_k \sim} Wishart(`nu0`, \eqn{W_0})
#' with \eqn{W_0^{-1}} = (`nu0` - D - 1) `cov0`, so that `cov0` is the prior
#' expected component covariance, and \eqn{\mu_k | \Lambda_k \sim}
#' N(`m0`, (`beta0` \eqn{\Lambda_k})^{-1}). Sticks are Beta(`a1`, `a2`).
#'
#' @section Differences from the paper:
#' Kurihara, Welling & Vlassis's algorithm, and what the default does
#' differently, with the setting that restores the paper's choice
#' (`paper = TRUE` restores the first two together):
#' * **Delete moves** after splitting stops (not in the paper; described
#'   above): `deletes = FALSE`.
#' * **Spread test:** besides the paper's expansion test, a node is also
#'   expanded when, over its points within `expand_sd` standard deviations
#'   of its mean, the winning component's responsibility would vary by more
#'   than `expand_threshold` (a node whose children both straddle a
#'   boundary, which the paper's test misses). It keeps the free energy
#'   within 1% of VDP's where the paper's test alone drifts (2-6% at D = 64
#'   and 128), at the price of more outer nodes: `expand_sd = 0`.
#' * **Truncation cap** `max_K = 50` components (the paper grows T without
#'   a cap); a fit that reaches it warns. Raise `max_K` (up to 10,000).
#' * **Responsibility floor:** in the full local step (`kdtree = FALSE`),
#'   responsibilities below 1e-10 are set to zero and the rest renormalised.
#'   No setting removes it.
#' * **Assignments:** up to 100,000 points the fit keeps each training
#'   point's component and the log-likelihood (two passes over the points
#'   after the algorithm ends; `assignments = FALSE` skips them, as the paper
#'   mode does).
#'
#' @param X A numeric matrix (or data frame of numeric columns), points in
#'   rows; no missing or infinite values and no constant column.
#' @param kdtree `TRUE` (default) for Fast-VDP, `FALSE` for plain VDP.
#' @param candidates Number of components tried for a split at each step,
#'   sampled by size without replacement (whole number >= 1; default 10).
#' @param a1,a2 Beta(`a1`, `a2`) prior on the sticks (positive; default 1, 1).
#' @param m0 Prior mean of the component means (length D); default the data
#'   mean.
#' @param beta0 Prior precision scale of the means (positive; default 0.01,
#'   a vague prior on where components sit).
#' @param nu0 Wishart degrees of freedom, greater than D + 1; default D + 2.
#' @param cov0 Prior expected component covariance (D x D, symmetric
#'   positive definite); default `cov(X) / 10`.
#' @param initial_depth Depth to which the kd-tree is expanded at the start
#'   (whole number >= 0; default 4).
#' @param tol Stopping tolerance in nats per point: a split is kept only
#'   when it lowers the free energy by more than `tol` times the number of
#'   points, and the fit stops when the best candidate does not (in (0, 1);
#'   default 1e-3). Per point rather than relative to the free energy, whose
#'   value shifts with the units of `X` (differences between models do not),
#'   so the components found do not depend on the units; a new component must
#'   raise the evidence bound by `tol` nats per point (10 nats at N = 10^4).
#'   The default matches the old relative 1e-4 on data whose free energy is
#'   about 10 nats per point; smaller values mostly lengthen the split
#'   candidates' partial updates (`update_tol`), VDP's most of all.
#' @param max_K Largest number of components (whole number >= 1; default 50).
#' @param seed `NULL` (draw from R's random number generator) or a whole
#'   number; candidate sampling uses sparsevi's own random streams.
#' @param threads Number of threads (default `getOption("sparsevi.threads",
#'   1)`); results do not depend on it.
#' @param progress Print one line per accepted split (default
#'   `interactive()`).
#' @param cluster `NULL` (default), or a cluster from
#'   [parallel::makePSOCKcluster()] (workers may be on other hosts, each with
#'   sparsevi installed). With `kdtree = FALSE` the rows of `X` are split into
#'   `n_batches` blocks (default: one per worker) sent once to the workers;
#'   every per-point step (the full local step, and each split candidate's
#'   sub list and partial steps) runs there, and only the globals and the
#'   blocks' statistics travel. The batches' sums are added in batch order,
#'   so the fit equals the fit without a cluster with the same `n_batches`.
#'   A worker that fails stops the fit with a classed
#'   `sparsevi_error_worker` error whose `fit` field holds the last complete
#'   model. With `kdtree = TRUE` the cluster is not used (a classed warning
#'   says so): after the O(N log N) tree build, each step works on the few
#'   thousand outer nodes of the tree, not on the points, so shipping the
#'   globals to workers would cost more than the step itself; the tree build
#'   is a single pass on the master. `"future"` (the current
#'   `future::plan()`) or a future plan object work too; see
#'   [sparsevi_cluster].
#' @param ... Expert controls: `leaf_size` (points per kd-tree leaf, default
#'   10), `max_iter` (update cycles per truncation level, default 100),
#'   `partial_iter` (updates of a split's two children, default 20),
#'   `update_tol` (decrease of the free energy, in nats per point, that ends
#'   the update cycles and a split's partial updates; default `tol / 10`),
#'   `expand_threshold` (a node is expanded when a child's
#'   optimal responsibilities differ from the node's by more than this, or
#'   when its points' responsibilities may range more widely; default 0.05),
#'   `expand_sd` (how many standard deviations of a node's spread the
#'   second test covers, default 2; larger is more exact and slower),
#'   `n_batches` (`kdtree = FALSE`: row blocks whose statistics are summed
#'   separately and then added in block order; default 1, or the number of
#'   workers of `cluster`), `lazy_tree` (`TRUE` or `FALSE`: split the
#'   kd-tree's buckets only when first needed; default `TRUE`, same fit),
#'   `deletes` (`TRUE` or `FALSE`: try the delete moves described in
#'   Details after splitting; default `TRUE`), `paper` (`TRUE` or `FALSE`,
#'   default `FALSE`: the paper mode, see Details), `assignments` (`TRUE`
#'   or `FALSE`: after the fit, two passes over the points keep their
#'   `classification`, `uncertainty`, responsibilities `z` (when small) and
#'   the `loglik` behind [logLik()] and [BIC()] on the fit; default `TRUE`
#'   up to 100,000 points, else `FALSE`, and `FALSE` in the paper mode,
#'   whose figures time the algorithm alone: their cost grows with N where
#'   the kd-tree fit's hardly does, and at 10^6 points in 16 dimensions they
#'   took 1.4 s against 0.65 s for the whole fit without them; without
#'   them, `predict(fit, X)` gives the same assignments).
#' @returns An object of class `c("sparsevi_vdp", "sparsevi_mixture",
#'   "sparsevi_fit")`, a list with
#'   * `weights`: expected mixing weights \eqn{E[\pi_k]} of the T components;
#'   * `tail_weight`: the expected mass of all components past T;
#'   * `means`: T x D matrix of posterior mean component means;
#'   * `covariances`: D x D x T array, \eqn{E[\Lambda_k]^{-1}};
#'   * `T`: number of components; `sizes`: expected points per component;
#'   * `free_energy`: final free energy (negative evidence lower bound);
#'   * `trace`: one row per step of the fit, with the columns of every
#'     sparsevi trace: `lap` (the step, 0 at the start), `seconds` and
#'     `cpu_seconds` since the call began (tree build included), `objective`
#'     (the evidence lower bound, minus the free energy), `heldout` (`NA`:
#'     no held-out data), `bytes_sent` and `bytes_received` (to and from
#'     the workers of `cluster` during the step, else 0); then Fast-VDP's
#'     own: `free_energy`, `T`, `outer_nodes` and `phase` (`"start"`,
#'     `"update"`, `"split"`, `"pre_expand"`, `"expand"`, `"delete"`);
#'   * `n_outer_nodes`: outer nodes (items sharing a responsibility) at the
#'     end (N without the tree);
#'   * `timings`: elapsed seconds for the tree, the fit and in total
#'     (`tree`, `fit`, `total`), and CPU seconds of the process for the tree
#'     and the fit (`tree_cpu`, `fit_cpu`);
#'   * `posterior`: Normal-Wishart and stick parameters (`m`, `beta`, `nu`,
#'     `W`, `stick_a`, `stick_b`);
#'   * `prior`: `m0`, `beta0`, `nu0`, `W0inv`, `cov0`, `a1`, `a2`;
#'   * `cluster`: `NULL`, or (a fit on a cluster) the number of `workers` and
#'     the bytes sent at setup (`bytes_setup`), and sent and received
#'     during the fit (`bytes_sent`, `bytes_received`) over `rounds` rounds;
#'   * `converged`: `FALSE` when a cap stopped the fit (T reached `max_K`,
#'     or an update loop used all `max_iter` cycles; each gives a warning of
#'     class `sparsevi_warning_unconverged`) or it was interrupted;
#'   * `control`: the settings used; `call`: the call.
#' @references Kurihara K, Welling M, Vlassis N (2007). Accelerated
#'   variational Dirichlet process mixtures. NIPS 19.
#' @examples
#' sim <- simulate_mixture(N = 500, D = 2, K = 3, separation = 6, seed = 1)
#' fit <- fit_vdp(sim$X, seed = 1, threads = 1)
#' fit
#' table(predict(fit, sim$X), sim$cluster)
#' @export
fit_vdp <- function(X, kdtree = TRUE, candidates = 10, a1 = 1, a2 = 1, m0 = NULL,
                    beta0 = 0.01, nu0 = NULL, cov0 = NULL, initial_depth = 4,
                    tol = 1e-3, max_K = 50, seed = NULL,
                    threads = getOption("sparsevi.threads", 1L),
                    progress = interactive(), cluster = NULL, ...) {
  call <- match.call()
  cluster <- check_cluster(cluster)
  X <- check_vdp_data(X, "X", scan = FALSE)
  # one C pass for the finiteness and constant-column checks and the means;
  # the default cov0's covariance is formed in ffi_vdp_fit, in the pass that
  # builds the centred transpose the kernels read
  prep <- .Call(ffi_vdp_prepare, X, FALSE)
  vdp_scan_errors(prep, "X")
  N <- nrow(X)
  D <- ncol(X)
  kdtree <- check_flag(kdtree, "kdtree")
  candidates <- check_count(candidates, "candidates", min = 1, max = 1000)
  a1 <- check_positive(a1, "a1")
  a2 <- check_positive(a2, "a2")
  beta0 <- check_positive(beta0, "beta0")
  initial_depth <- check_count(initial_depth, "initial_depth", min = 0, max = 30)
  tol <- check_probability(tol, "tol")
  max_K <- check_count(max_K, "max_K", min = 1, max = 10000)
  threads <- sparsevi_threads(threads)
  progress <- check_flag(progress, "progress")
  ctl <- vdp_controls(list(...), tol, N = N)
  if (!is.null(cluster) && kdtree) {
    warning(warningCondition(
      paste0("`cluster` is not used with `kdtree = TRUE`: the tree's steps work on ",
             "its outer nodes on the master; use `kdtree = FALSE` to run the ",
             "per-point steps on the workers."),
      class = c("sparsevi_warning_cluster", "sparsevi_warning")))
    cluster <- NULL
  }
  if (is.null(ctl$n_batches)) ctl$n_batches <- if (is.null(cluster)) 1L else length(cluster)
  if (ctl$n_batches > N) {
    abort(sprintf("`n_batches` (%d) must not exceed the number of points (%d).",
                  ctl$n_batches, N), "argument")
  }
  if (N < D + 2L) {
    abort(sprintf(paste0("`X` has %d points in %d dimensions, too few for the ",
                         "Normal-Wishart prior with data-scaled defaults; ",
                         "it needs at least D + 2 = %d points."), N, D, D + 2L),
          "data")
  }
  center <- prep$center
  if (is.null(m0)) {
    m0 <- center
  } else if (!is.numeric(m0) || length(m0) != D || any(!is.finite(m0))) {
    abort(sprintf("`m0` must be %d finite numbers (one per column of `X`).", D),
          "argument")
  }
  if (is.null(nu0)) {
    nu0 <- D + 2
  } else {
    nu0 <- check_number(nu0, "nu0", lower = D + 1, upper = 1e10, lower_open = TRUE)
  }
  not_pd <- function(default) {
    abort(paste0("`cov0` is not positive definite",
                 if (default) " (some columns of `X` are linear combinations of others)",
                 "; give a positive definite `cov0` or remove the redundant columns."),
          "data")
  }
  W0inv <- NULL # the default: cov(X) / 10, formed in C
  if (!is.null(cov0)) {
    if (!is.numeric(cov0) || !is.matrix(cov0) || any(dim(cov0) != D) ||
        any(!is.finite(cov0)) || max(abs(cov0 - t(cov0))) > 1e-8 * max(abs(cov0))) {
      abort(sprintf("`cov0` must be a symmetric %d x %d numeric matrix.", D, D),
            "argument")
    }
    cov0 <- (cov0 + t(cov0)) / 2
    if (inherits(try(chol(cov0), silent = TRUE), "try-error")) not_pd(FALSE)
    W0inv <- cov0 * (nu0 - D - 1)
  }
  seed2 <- resolve_seed(seed)
  bounds <- as.integer(floor(seq(0, N, length.out = ctl$n_batches + 1L)))
  remote <- NULL
  if (!is.null(cluster)) {
    remote <- vdp_remote(cluster, X, center, bounds, threads)
    on.exit(executor_close(remote$ex), add = TRUE)
  }
  # one named list of controls, read by name in C (src/vdp-ffi.c)
  control <- list(kdtree = as.logical(kdtree), candidates = as.integer(candidates),
                  initial_depth = as.integer(initial_depth), max_K = as.integer(max_K),
                  leaf_size = as.integer(ctl$leaf_size), max_iter = as.integer(ctl$max_iter),
                  partial_iter = as.integer(ctl$partial_iter), progress = as.logical(progress),
                  lazy_tree = as.logical(ctl$lazy_tree), deletes = as.logical(ctl$deletes),
                  a1 = as.double(a1), a2 = as.double(a2), tol = as.double(tol),
                  update_tol = as.double(ctl$update_tol),
                  expand_threshold = as.double(ctl$expand_threshold),
                  expand_sd = as.double(ctl$expand_sd), seed = seed2, threads = threads,
                  batch_bounds = bounds)
  prior_c <- list(m0 = as.double(m0 - center), beta0 = as.double(beta0), nu0 = as.double(nu0),
                  W0inv = W0inv)
  res <- .Call(ffi_vdp_fit, X, center, prior_c, control,
               if (is.null(remote)) NULL else remote$hook)
  if (isTRUE(res$cov0_not_pd)) not_pd(TRUE)
  if (is.null(W0inv)) {
    cov0 <- res$cov0
    W0inv <- cov0 * (nu0 - D - 1)
  }
  if (isTRUE(res$interrupted)) {
    warning(warningCondition(
      sprintf("Training was interrupted; returning the model after the last completed step (%d components).",
              res$T),
      class = c("sparsevi_warning_interrupted", "sparsevi_warning")))
  }
  if (res$status == 1L) {
    warn(paste0("A component's scale matrix lost positive definiteness and was ",
                "reset to the prior; consider a larger `cov0` or `nu0`."),
         "numerical")
  } else if (res$status != 0L) {
    abort(sprintf("internal error in the Fast-VDP kernel (status %d).", res$status),
          "internal")
  }
  fit <- new_sparsevi_vdp(res, X, center, list(m0 = m0, beta0 = beta0, nu0 = nu0,
                                               W0inv = W0inv, cov0 = cov0, a1 = a1, a2 = a2),
                          c(list(kdtree = kdtree, candidates = candidates,
                                 initial_depth = initial_depth, tol = tol, max_K = max_K,
                                 threads = threads, seed = seed), ctl),
                          call)
  if (ctl$assignments) fit <- vdp_add_assignments(fit, X, threads)
  fit$converged <- vdp_check_converged(res, fit, max_K, ctl$max_iter)
  if (!is.null(remote)) {
    st <- remote$store
    # bytes of each step: the hook's rounds since the previous trace row
    # (rounds of rejected trials count towards the next row kept)
    cum <- function(x) c(0, cumsum(x))
    r1 <- res$trace$rounds + 1L
    r0 <- c(1L, r1[-length(r1)])
    fit$trace$bytes_sent <- cum(st$log_sent)[r1] - cum(st$log_sent)[r0]
    fit$trace$bytes_received <- cum(st$log_received)[r1] - cum(st$log_received)[r0]
    fit$cluster <- list(workers = length(cluster), bytes_setup = remote$ex$bytes_setup,
                        bytes_sent = st$sent, bytes_received = st$received,
                        rounds = st$rounds)
    if (isTRUE(res$worker_failed)) {
      err <- st$err
      if (is.null(err)) {
        err <- errorCondition("a worker failed.", class = c("sparsevi_error_worker",
                                                             "sparsevi_error"))
      }
      err$fit <- fit
      stop(err)
    }
  }
  fit
}

# The per-point steps of VDP on a cluster: the row blocks (centred and
# transposed as the kernel sees them) go to the workers once, as
# environments that also keep each block's sub list between the steps of a
# split candidate. The returned hook is what the C driver calls (see
# vdp_remote in src/vdp.h); it returns NULL when a worker failed, keeping
# the error in `store`.
# Did the fit stop by its own criteria? A classed warning names the cap
# that stopped it: T reached max_K (a split might still have paid), or an
# update loop ran out of max_iter cycles.
vdp_check_converged <- function(res, fit, max_K, max_iter) {
  if (isTRUE(res$interrupted)) return(FALSE)
  at_cap <- nrow(fit$trace) && max(fit$trace$T) >= max_K
  capped <- if (is.null(res$capped)) 0L else res$capped
  if (at_cap) {
    warning(warningCondition(
      sprintf("fit_vdp() stopped splitting at the truncation cap: T reached `max_K` = %d, so more components may pay for themselves. Raise `max_K` (or `tol`, to stop splitting sooner).",
              max_K),
      class = c("sparsevi_warning_unconverged", "sparsevi_warning")))
  }
  if (capped > 0L) {
    warning(warningCondition(
      sprintf("%d of the fit's update loops stopped after `max_iter` = %d cycles before the free energy settled (change <= update_tol per point). Raise `max_iter` (in `...`) or `update_tol`.",
              capped, max_iter),
      class = c("sparsevi_warning_unconverged", "sparsevi_warning")))
  }
  !at_cap && capped == 0L
}

vdp_remote <- function(cluster, X, center, bounds, threads) {
  nb <- length(bounds) - 1L
  batches <- lapply(seq_len(nb), function(b) {
    e <- new.env(parent = emptyenv())
    e$Xt <- t(X[(bounds[b] + 1L):bounds[b + 1L], , drop = FALSE]) - center
    e
  })
  ex <- new_executor(cluster, nb, function(b) batches[[b]], diff(bounds))
  store <- new.env(parent = emptyenv())
  store$sent <- store$received <- 0
  store$rounds <- 0L
  store$log_sent <- store$log_received <- numeric(0) # per round
  hook <- function(op, args) {
    tryCatch({
      run <- executor_run(ex, seq_len(nb), "vdp_batch_step",
                          list(op = op, args = args, threads = threads))
      store$sent <- store$sent + run$sent
      store$received <- store$received + run$received
      store$rounds <- store$rounds + 1L
      store$log_sent[store$rounds] <- run$sent
      store$log_received[store$rounds] <- run$received
      run$results
    }, error = function(e) {
      store$err <- e
      NULL
    }, interrupt = function(e) {
      store$err <- errorCondition("interrupted", class = c("sparsevi_error_worker",
                                                            "sparsevi_error"))
      NULL
    })
  }
  list(hook = hook, ex = ex, store = store)
}

# One batch's part of a per-point step of VDP (on a worker, or here).
vdp_batch_step <- function(batch, unused, op, args, threads) {
  switch(op,
    full = .Call(ffi_vdp_worker_full, batch$Xt, args$G, threads),
    split_begin = {
      r <- .Call(ffi_vdp_worker_split_begin, batch$Xt, args, threads)
      batch$active <- r[c("act_item", "act_m", "act_qi")]
      r$summary
    },
    split_iter = {
      r <- .Call(ffi_vdp_worker_split_iter, batch$Xt, batch$active, args, threads)
      batch$active$act_qi <- r$act_qi
      r$summary
    },
    stop("internal error: unknown VDP step ", op))
}

# Default largest N for which fit_vdp() keeps the training points'
# assignments and log-likelihood (two passes over the points after the fit:
# at 10^6 points in 16 dimensions, T = 10, 1.4 s against 0.65 s for the
# whole default fit without them).
vdp_assign_max <- 1e5

vdp_controls <- function(dots, tol, N = 0, call = caller_call()) {
  known <- c("leaf_size", "max_iter", "partial_iter", "update_tol", "expand_threshold",
             "expand_sd", "n_batches", "lazy_tree", "deletes", "paper", "assignments")
  bad <- setdiff(names(dots), known)
  if (length(dots) && (is.null(names(dots)) || any(!nzchar(names(dots))) || length(bad))) {
    abort(sprintf("Unknown argument(s) in `...`: %s. Known controls: %s.",
                  paste(if (length(bad)) bad else "<unnamed>", collapse = ", "),
                  paste(known, collapse = ", ")), "argument", call = call)
  }
  out <- list(leaf_size = 10L, max_iter = 100L, partial_iter = 20L,
              update_tol = tol / 10, expand_threshold = 0.05, expand_sd = 2,
              lazy_tree = TRUE, deletes = TRUE, paper = FALSE,
              # the two passes over the points cost O(N T D^2) while the
              # kd-tree fit hardly grows with N: kept by default up to
              # vdp_assign_max points (inst/bench/results/vdp.txt)
              assignments = N <= vdp_assign_max)
  # paper = TRUE: Kurihara et al.'s algorithm as published (their expansion
  # test alone, no delete moves); expand_sd or deletes given explicitly win
  if (!is.null(dots$paper)) out$paper <- check_flag(dots$paper, "paper", call = call)
  if (out$paper) {
    out$expand_sd <- 0
    out$deletes <- FALSE
    # the published algorithm ends with the fit: no passes over the points
    # for their assignments and log-likelihood
    out$assignments <- FALSE
  }
  if (!is.null(dots$assignments))
    out$assignments <- check_flag(dots$assignments, "assignments", call = call)
  if (!is.null(dots$deletes))
    out$deletes <- check_flag(dots$deletes, "deletes", call = call)
  if (!is.null(dots$leaf_size))
    out$leaf_size <- check_count(dots$leaf_size, "leaf_size", min = 1, max = 1e6, call = call)
  if (!is.null(dots$max_iter))
    out$max_iter <- check_count(dots$max_iter, "max_iter", min = 1, max = 1e5, call = call)
  if (!is.null(dots$partial_iter))
    out$partial_iter <- check_count(dots$partial_iter, "partial_iter", min = 0,
                                    max = 1e5, call = call)
  if (!is.null(dots$update_tol))
    out$update_tol <- check_probability(dots$update_tol, "update_tol", call = call)
  if (!is.null(dots$expand_threshold))
    out$expand_threshold <- check_number(dots$expand_threshold, "expand_threshold",
                                         lower = 0, upper = 1, call = call)
  if (!is.null(dots$n_batches))
    out$n_batches <- check_count(dots$n_batches, "n_batches", min = 1, max = 1e6, call = call)
  if (!is.null(dots$lazy_tree))
    out$lazy_tree <- check_flag(dots$lazy_tree, "lazy_tree", call = call)
  if (!is.null(dots$expand_sd))
    out$expand_sd <- check_number(dots$expand_sd, "expand_sd", lower = 0, upper = 100,
                                  call = call)
  out
}

check_vdp_data <- function(X, arg, D = NULL, scan = TRUE, call = caller_call()) {
  if (is.data.frame(X)) {
    ok <- vapply(X, is.numeric, logical(1))
    if (!all(ok)) {
      abort(sprintf("%s must have numeric columns only; column(s) %s are not.",
                    arg_label(arg), paste(names(X)[!ok], collapse = ", ")),
            "argument", call = call)
    }
    X <- as.matrix(X)
  }
  if (is.numeric(X) && is.null(dim(X)) && identical(D, 1L)) X <- matrix(X, ncol = 1L)
  if (!is.matrix(X) || !is.numeric(X)) {
    abort(sprintf("%s must be a numeric matrix with points in rows, not %s.",
                  arg_label(arg), describe(X)), "argument", call = call)
  }
  if (nrow(X) < 1L || ncol(X) < 1L) {
    abort(sprintf("%s has no rows or no columns.", arg_label(arg)), "data", call = call)
  }
  if (!is.double(X)) storage.mode(X) <- "double"
  # scan = FALSE leaves the scans over the data to ffi_vdp_prepare (fit_vdp)
  if (scan) vdp_scan_errors(.Call(ffi_vdp_prepare, X, FALSE), arg, D, call)
  if (!is.null(D) && ncol(X) != D) {
    abort(sprintf("%s has %d columns but the model was fitted on %d.",
                  arg_label(arg), ncol(X), D), "data", call = call)
  }
  X
}

# Errors for what ffi_vdp_prepare found: values that are not finite, and
# (when fitting, D = NULL) constant columns.
vdp_scan_errors <- function(prep, arg, D = NULL, call = caller_call()) {
  if (isTRUE(prep$nonfinite)) {
    abort(sprintf("%s contains missing or infinite values; remove or impute them.",
                  arg_label(arg)), "data", call = call)
  }
  const <- which(prep$constant)
  if (is.null(D) && length(const)) {
    abort(sprintf("Column(s) %s of %s are constant; remove them before fitting.",
                  paste(const, collapse = ", "), arg_label(arg)), "data", call = call)
  }
  invisible(prep)
}

new_sparsevi_vdp <- function(res, X, center, prior, control, call) {
  T <- res$T
  D <- ncol(X)
  a <- res$stick_a
  b <- res$stick_b
  ev <- a / (a + b)
  e1v <- b / (a + b)
  weights <- ev * cumprod(c(1, e1v))[seq_len(T)]
  tail_weight <- prod(e1v)
  m <- t(res$m + center)
  colnames(m) <- colnames(X)
  covs <- array(0, c(D, D, T), dimnames = list(colnames(X), colnames(X), NULL))
  for (k in seq_len(T)) covs[, , k] <- sym_inverse(res$W[, , k]) / res$nu[k]
  phases <- c("update", "split", "pre_expand", "expand", "start", "delete")
  tr <- res$trace
  # the common trace schema (train_trace_columns, R/train.R): a "lap" is a
  # step of the fit (0: the start), the objective the ELBO (= -free energy);
  # no held-out score; bytes per step are filled in by fit_vdp() with a
  # cluster. Fast-VDP's own columns follow.
  n_tr <- length(tr$step)
  trace <- data.frame(lap = tr$step - 1L, seconds = tr$seconds,
                      cpu_seconds = tr$cpu_seconds, objective = -tr$free_energy,
                      heldout = rep(NA_real_, n_tr), bytes_sent = rep(0, n_tr),
                      bytes_received = rep(0, n_tr), free_energy = tr$free_energy,
                      T = tr$T, outer_nodes = tr$outer_nodes,
                      phase = phases[tr$phase + 1L], stringsAsFactors = FALSE)
  stopifnot(identical(names(trace)[seq_along(train_trace_columns)], train_trace_columns))
  out <- list(
    weights = weights, tail_weight = tail_weight, means = m, covariances = covs,
    T = T, K = T, sizes = res$N, free_energy = res$free_energy, trace = trace,
    n_outer_nodes = res$n_items,
    timings = c(tree = res$seconds[1], fit = res$seconds[2],
                total = res$seconds[1] + res$seconds[2],
                tree_cpu = res$seconds[3], fit_cpu = res$seconds[4]),
    splits = c(tried = res$splits_tried, accepted = res$splits_accepted,
               deletes = res$deletes_accepted),
    n_tree_nodes = res$n_nodes,
    posterior = list(m = m, beta = res$beta, nu = res$nu, W = res$W,
                     stick_a = a, stick_b = b),
    prior = prior, n = nrow(X), dim = D, colnames = colnames(X),
    control = control, call = call)
  class(out) <- c("sparsevi_vdp", "sparsevi_mixture", "sparsevi_fit")
  validate_sparsevi_vdp(out)
}

# The training points' assignments (classification, NA where the infinite
# tail is the most responsible; uncertainty; the N x (T + 1)
# responsibilities z when N (T + 1) <= mix_z_max) and the log-likelihood at
# the point estimates (the plug-in density of predict(type = "density")).
# Two passes over the points in C (responsibilities, plug-in density); the
# cluster is the first largest responsibility, as predict(type = "cluster")
# takes the first largest score.
vdp_add_assignments <- function(fit, X, threads) {
  R <- predict(fit, X, type = "responsibilities", threads = threads)
  best <- max.col(R, ties.method = "first")
  fit$uncertainty <- 1 - R[cbind(seq_len(nrow(R)), best)]
  best[best == fit$T + 1L] <- NA_integer_
  fit$classification <- best
  fit$z <- if (as.double(nrow(R)) * ncol(R) <= mix_z_max) R else NULL
  rm(R)
  fit$loglik <- sum(predict(fit, X, type = "density", log = TRUE, threads = threads))
  fit
}

validate_sparsevi_vdp <- function(x) {
  stopifnot(length(x$weights) == x$T, nrow(x$means) == x$T,
            dim(x$covariances)[3] == x$T,
            abs(sum(x$weights) + x$tail_weight - 1) < 1e-8)
  x
}

#' @export
print.sparsevi_vdp <- function(x, ...) {
  cat(sprintf("<sparsevi_vdp> %s: %d components in %d dimensions from %d points\n",
              if (isTRUE(x$control$kdtree)) "Fast-VDP (kd-tree)" else "VDP",
              x$T, x$dim, x$n))
  cat(sprintf("  free energy %.6g; tail weight %.3g; %d outer nodes; %.2f s\n",
              x$free_energy, x$tail_weight, x$n_outer_nodes, x$timings[["total"]]))
  if (!is.null(x$loglik)) {
    cat(sprintf("  log-likelihood %.6g; BIC %.6g (lower is better)\n", x$loglik,
                stats::BIC(x)))
  }
  w <- utils::head(round(x$weights, 3), 10)
  cat("  weights:", paste(format(w), collapse = " "), if (x$T > 10) "..." else "", "\n")
  invisible(x)
}

#' @export
summary.sparsevi_vdp <- function(object, ...) {
  comp <- data.frame(component = seq_len(object$T), weight = object$weights,
                     size = object$sizes)
  out <- list(method = if (isTRUE(object$control$kdtree)) "Fast-VDP" else "VDP",
              T = object$T, n = object$n, dim = object$dim,
              free_energy = object$free_energy, tail_weight = object$tail_weight,
              components = comp, n_outer_nodes = object$n_outer_nodes,
              timings = object$timings, splits = object$splits)
  class(out) <- "summary.sparsevi_vdp"
  out
}

#' @export
print.summary.sparsevi_vdp <- function(x, ...) {
  cat(sprintf("%s fit: %d points, %d dimensions, %d components\n", x$method, x$n,
              x$dim, x$T))
  cat(sprintf("free energy: %.8g   tail weight: %.3g\n", x$free_energy, x$tail_weight))
  cat(sprintf("outer nodes: %d   splits accepted/tried: %d/%d\n", x$n_outer_nodes,
              x$splits[["accepted"]], x$splits[["tried"]]))
  cat(sprintf("seconds: tree %.3f, fit %.3f\n", x$timings[["tree"]], x$timings[["fit"]]))
  print(x$components, row.names = FALSE, digits = 4)
  invisible(x)
}

# Per-component constants for ffi_vdp_predict (components, then the tail,
# which scores with the prior): means, upper Cholesky factors U of the
# Wishart scales W = U'U, and the coefficients of
#   S_k = E ln pi_k + E ln p(x | k) = a_k - s_k quad_k                 (eqs. 3-6)
#   ln w_k + ln t_k(x) = c_k - e_k log1p(r_k quad_k)                    (eq. 7)
# with quad_k = (x - m_k)' W_k (x - m_k); the Student-t predictive has
# dof nu + 1 - D and precision beta / (1 + beta) (dof) W. O(T D^3).
vdp_predict_params <- function(object) {
  post <- object$posterior
  pr <- object$prior
  D <- object$dim
  T <- object$T
  a <- post$stick_a
  b <- post$stick_b
  elnv <- digamma(a) - digamma(a + b)
  eln1v <- digamma(b) - digamma(a + b)
  elnpi <- c(elnv + c(0, cumsum(eln1v))[seq_len(T)], 0)
  ps0 <- digamma(pr$a1 + pr$a2)
  elnpi[T + 1L] <- sum(eln1v) + digamma(pr$a1) - ps0 - log1p(-exp(digamma(pr$a2) - ps0))
  lw <- log(c(object$weights, object$tail_weight))
  K1 <- T + 1L
  M <- matrix(0, D, K1)
  U <- array(0, c(D, D, K1))
  par <- matrix(0, K1, 5L)
  for (k in seq_len(K1)) {
    if (k <= T) {
      m <- post$m[k, ]
      W <- post$W[, , k]
      beta <- post$beta[k]
      nu <- post$nu[k]
    } else {
      m <- pr$m0
      W <- sym_inverse(pr$W0inv)
      beta <- pr$beta0
      nu <- pr$nu0
    }
    Uk <- chol_upper(W)
    logdetW <- 2 * sum(log(abs(diag(Uk))))
    elogdet <- sum(digamma((nu + 1 - seq_len(D)) / 2)) + D * log(2) + logdetW
    dof <- nu + 1 - D
    sc <- dof * beta / (1 + beta)
    M[, k] <- m
    U[, , k] <- Uk
    par[k, ] <- c(elnpi[k] + 0.5 * elogdet - 0.5 * D * log(2 * pi) - 0.5 * D / beta,
                  0.5 * nu,
                  lw[k] + lgamma((dof + D) / 2) - lgamma(dof / 2) - 0.5 * D * log(dof * pi) +
                    0.5 * (logdetW + D * log(sc)),
                  0.5 * (dof + D),
                  sc / dof)
  }
  list(M = M, U = U, par = par)
}

#' Predict with a Fast-VDP fit
#'
#' @param object A `sparsevi_vdp` fit from [fit_vdp()].
#' @param newdata A numeric matrix with the fitted number of columns (points
#'   in rows); default the training data is not stored, so `newdata` is
#'   required.
#' @param type `"cluster"` (the component with the largest responsibility;
#'   `NA` where the infinite tail has it), `"responsibilities"` (N x (T + 1)
#'   matrix q(z), eq. 3, the last column the tail), `"density"` (the density
#'   of each point under the fitted mixture with its point estimates,
#'   \eqn{\sum_k w_k N(x | \mu_k, \Sigma_k)} over the fit's `weights`,
#'   `means` and `covariances`, plus the tail's `tail_weight` times
#'   N(`m0`, `cov0`): the same meaning as for [fit_mixture()] fits), or
#'   `"predictive"` (the posterior predictive density, eq. 7: a mixture of
#'   Student-t densities, tail included; [heldout_loglik()] averages its
#'   log).
#' @param log For `type = "density"` or `"predictive"`, return the log
#'   density (default `FALSE`).
#' @param threads Number of threads (default `getOption("sparsevi.threads",
#'   1)`); results do not depend on it.
#' @param ... Unused.
#' @returns An integer vector, a matrix or a numeric vector, by `type`.
#' @examples
#' sim <- simulate_mixture(N = 300, D = 2, K = 2, separation = 6, seed = 2)
#' fit <- fit_vdp(sim$X, seed = 1, threads = 1)
#' head(predict(fit, sim$X, type = "responsibilities"))
#' head(predict(fit, sim$X, type = "density", log = TRUE))
#' @export
predict.sparsevi_vdp <- function(object, newdata,
                                 type = c("cluster", "responsibilities", "density",
                                          "predictive"),
                                 log = FALSE,
                                 threads = getOption("sparsevi.threads", 1L), ...) {
  type <- check_choice(type, c("cluster", "responsibilities", "density", "predictive"),
                       "type")
  log <- check_flag(log, "log")
  threads <- sparsevi_threads(threads)
  if (missing(newdata)) {
    if (type %in% c("cluster", "responsibilities")) return(mix_predict_training(object, type))
    abort(sprintf("`type = \"%s\"` needs `newdata`: the fit keeps no data.", type), "argument")
  }
  X <- vdp_newdata(object, newdata)
  # the per-point work (quadratic forms, q(z), eq. 7 with the tail, the
  # plug-in Gaussian mixture) runs in C
  if (type == "density") {
    p <- vdp_plugin_params(object)
    out <- .Call(ffi_vdp_predict, X, p$M, p$U, p$par, 3L, threads)
    return(if (log) out else exp(out))
  }
  p <- vdp_predict_params(object)
  code <- match(type, c("cluster", "responsibilities", "predictive")) - 1L
  out <- .Call(ffi_vdp_predict, X, p$M, p$U, p$par, code, threads)
  if (type == "predictive") return(if (log) out else exp(out))
  if (type == "responsibilities") {
    colnames(out) <- c(seq_len(object$T), "tail")
    return(out)
  }
  out[out == object$T + 1L] <- NA_integer_
  out
}

vdp_newdata <- function(object, newdata, call = caller_call()) {
  X <- check_vdp_data(newdata, "newdata", D = object$dim, call = call)
  if (!is.null(object$colnames) && !is.null(colnames(X))) {
    if (!setequal(colnames(X), object$colnames)) {
      abort("The column names of `newdata` differ from those of the fitted data.",
            "data", call = call)
    }
    X <- X[, object$colnames, drop = FALSE]
  }
  X
}

#' Held-out log-likelihood of a Fast-VDP fit
#'
#' @param object A `sparsevi_vdp` fit.
#' @param newdata Numeric matrix of test points (rows), the fitted columns.
#' @param ... Unused.
#' @returns The mean over test points of the log predictive density (eq. 7 of
#'   Kurihara et al., the infinite tail included), in nats per point.
#' @examples
#' sim <- simulate_mixture(N = 400, D = 2, K = 3, separation = 6, seed = 3)
#' fit <- fit_vdp(sim$X[1:300, ], seed = 1, threads = 1)
#' heldout_loglik(fit, sim$X[301:400, ])
#' @export
heldout_loglik.sparsevi_vdp <- function(object, newdata, ...) {
  mean(predict(object, newdata, type = "predictive", log = TRUE))
}

#' Methods for Fast-VDP fits
#'
#' A `sparsevi_vdp` fit has the methods of a mixture fit, each its own:
#' `logLik()` is the log-likelihood of the training points at the point
#' estimates (the plug-in density of `predict(type = "density")`, the tail
#' included) with `df` = (T - 1) + T (D + D (D + 1) / 2) for T components
#' with full covariances, so `BIC()` and `AIC()` work (R's sign: lower is
#' better); `nobs()` the number of training points; `fitted()` their
#' components (`NA` where the infinite tail is the most responsible), as
#' `predict(fit)` without `newdata`; `update()` fits the model again, to the
#' data `X`, with the settings of the fit except those given (`max_K`,
#' `tol`, the priors, the controls of [fit_vdp()]): a Fast-VDP fit grows
#' from one component, so there is no state to continue from.
#'
#' @param object A `sparsevi_vdp` fit.
#' @param X Data with the fitted columns.
#' @param type For `fitted()`: `"cluster"` or `"responsibilities"`.
#' @param ... For `update()`: arguments of [fit_vdp()] to change; else
#'   unused.
#' @returns `logLik()`: a `"logLik"` object; `nobs()`: a whole number;
#'   `fitted()`: an integer vector or a matrix; `update()`: a new
#'   `sparsevi_vdp` fit.
#' @examples
#' sim <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
#' fit <- fit_vdp(sim$X, seed = 1, threads = 1)
#' logLik(fit)
#' BIC(fit)
#' table(fitted(fit), sim$cluster)
#' fit2 <- update(fit, sim$X, max_K = 2)
#' fit2$T
#' @name sparsevi_vdp_methods
NULL

#' @rdname sparsevi_vdp_methods
#' @export
logLik.sparsevi_vdp <- function(object, ...) {
  if (is.null(object$loglik)) {
    abort("This fit keeps no log-likelihood of its training points (fitted with `paper = TRUE` or `assignments = FALSE`): refit with `assignments = TRUE`, or score data with heldout_loglik(fit, X).",
          "argument")
  }
  T <- object$T
  D <- object$dim
  structure(object$loglik, df = (T - 1) + T * (D + D * (D + 1) / 2), nobs = object$n,
            class = "logLik")
}

#' @rdname sparsevi_vdp_methods
#' @export
nobs.sparsevi_vdp <- function(object, ...) object$n

#' @rdname sparsevi_vdp_methods
#' @export
fitted.sparsevi_vdp <- function(object, type = c("cluster", "responsibilities"), ...) {
  type <- check_choice(type, c("cluster", "responsibilities"), "type")
  predict(object, type = type)
}

#' @rdname sparsevi_vdp_methods
#' @export
update.sparsevi_vdp <- function(object, X, ...) {
  if (missing(X)) {
    abort("`X`, the data to fit again, is missing (the fit does not keep them).", "argument")
  }
  dots <- list(...)
  if (length(dots) && (is.null(names(dots)) || any(!nzchar(names(dots))))) {
    abort("update() takes named arguments of fit_vdp() only.", "argument")
  }
  bad <- setdiff(names(dots), c(setdiff(names(formals(fit_vdp)), c("X", "...")),
                                "leaf_size", "max_iter", "partial_iter", "update_tol",
                                "expand_threshold", "expand_sd", "n_batches", "lazy_tree",
                                "deletes"))
  if (length(bad)) {
    abort(sprintf("update() of a Fast-VDP fit does not take %s: give arguments of fit_vdp() (e.g. `max_K`, `tol`, `seed`).",
                  paste0("`", bad, "`", collapse = ", ")), "argument")
  }
  # the settings the original call gave, with their values as fitted
  given <- setdiff(names(as.list(object$call))[-1L], c("X", "", names(dots)))
  carried <- list()
  for (nm in given) {
    v <- if (!is.null(object$prior[[nm]])) object$prior[[nm]] else object$control[[nm]]
    if (!is.null(v)) carried[[nm]] <- v
  }
  fit <- do.call(fit_vdp, c(list(X), carried, dots))
  cl <- object$call
  for (nm in names(dots)) cl[[nm]] <- dots[[nm]]
  fit$call <- cl
  fit
}

# Constants for ffi_vdp_predict's plug-in density (type 3): per component
# (then the tail, at the prior's mean and expected covariance) the mean, the
# upper Cholesky factor U of the precision Sigma^-1 = U'U, and
# S_k = ln w_k - D/2 ln(2 pi) + ln|U| - quad / 2.
vdp_plugin_params <- function(object) {
  D <- object$dim
  T <- object$T
  K1 <- T + 1L
  M <- matrix(0, D, K1)
  U <- array(0, c(D, D, K1))
  par <- matrix(0, K1, 5L)
  w <- c(object$weights, object$tail_weight)
  for (k in seq_len(K1)) {
    if (k <= T) {
      m <- object$means[k, ]
      Sigma <- object$covariances[, , k]
    } else {
      m <- object$prior$m0
      Sigma <- object$prior$cov0
    }
    Uk <- chol_upper(sym_inverse(Sigma))
    M[, k] <- m
    U[, , k] <- Uk
    par[k, 1:2] <- c(log(w[k]) - 0.5 * D * log(2 * pi) + sum(log(abs(diag(Uk)))), 0.5)
  }
  list(M = M, U = U, par = par)
}

#' Plot a Fast-VDP fit: its data by cluster, and the course of the fit
#'
#' With data `X`, draws the points in the data's own variables coloured by
#' their most likely component (points the infinite tail claims as grey
#' crosses), with each component's mean, the ellipse of two standard
#' deviations of its covariance and a legend (`which = "clusters"`): one
#' panel for two variables, a pairs view (on a page of its own) for more, as
#' for [plot.sparsevi_mixture()]. The course of the fit (`which = "trace"`)
#' is two panels against the step of the fit: the free energy and the
#' number of components T.
#'
#' @param x A `sparsevi_vdp` fit.
#' @param X Optional data with the fitted columns (the training data, or
#'   new points) to draw.
#' @param which Any of `"clusters"` (needs `X` and at least two columns) and
#'   `"trace"`. Default `c("clusters", "trace")` with `X`, else `"trace"`.
#' @param vars For `"clusters"`: two or more variables to draw, by name or
#'   number; default every one up to six, beyond that the five along which
#'   the components are most separated.
#' @param ... Passed to [graphics::plot()].
#' @returns `x`, invisibly.
#' @examples
#' sim <- simulate_mixture(N = 300, D = 2, K = 3, separation = 6, seed = 1)
#' fit <- fit_vdp(sim$X, seed = 1, threads = 1)
#' plot(fit, sim$X)
#' plot(fit)
#' @export
plot.sparsevi_vdp <- function(x, X = NULL, which = NULL, vars = NULL, ...) {
  if (is.null(which)) which <- if (is.null(X) || x$dim < 2L) "trace" else c("clusters", "trace")
  panels <- c("clusters", "trace")
  if (!is.character(which) || !length(which) || anyNA(which) || !all(which %in% panels)) {
    abort(sprintf("`which` must hold some of %s.", paste0('"', panels, '"', collapse = ", ")),
          "argument")
  }
  which <- panels[panels %in% which]
  if ("clusters" %in% which && is.null(X)) {
    abort("`which = \"clusters\"` draws data: give `X`.", "argument")
  }
  v <- if ("clusters" %in% which) {
    mix_plot_vars(vars, x$colnames, x$dim, x$means, x$covariances, x$weights)
  }
  pairs_view <- length(v) > 2L
  n_panels <- ("clusters" %in% which && !pairs_view) + 2L * ("trace" %in% which)
  if (n_panels >= 2L) {
    op <- graphics::par(mfrow = c(1L, n_panels))
    on.exit(graphics::par(op))
  }
  Xn <- if ("clusters" %in% which) vdp_newdata(x, X)
  if ("clusters" %in% which && !pairs_view) {
    plot_clusters(Xn, predict(x, Xn), x$means, x$covariances, x$weights, v, "Clusters", ...)
  }
  if ("trace" %in% which) {
    tr <- x$trace
    graphics::plot(tr$lap, tr$free_energy, type = "b", pch = 20, xlab = "step",
                   ylab = "free energy", main = "Free energy", ...)
    graphics::plot(tr$lap, tr$T, type = "s", xlab = "step", ylab = "T",
                   main = "Components", ...)
  }
  if ("clusters" %in% which && pairs_view) {
    plot_clusters(Xn, predict(x, Xn), x$means, x$covariances, x$weights, v, "Clusters", ...)
  }
  invisible(x)
}

# Inverse of a symmetric positive (semi)definite matrix: through its Cholesky
# factor, or, when it is numerically singular (near-duplicate points give a
# Wishart scale with a huge condition number), through its eigen-decomposition
# with eigenvalues floored at 1e-14 of the largest.
# These two stay in R on purpose (issue 21): they run once per component
# after a fit (covariances of the result, the predictor's factors), not in
# any loop, and what they add over the C Cholesky of src/linalg.c is the
# eigen-decomposition fallback for a numerically singular scale, which is
# LAPACK's (base R's chol/chol2inv/eigen); the fit itself inverts and
# factors only in C (gauss_nw_posterior, src/obs-gauss.c).
sym_inverse <- function(W) {
  W <- (W + t(W)) / 2
  inv <- tryCatch(chol2inv(chol(W)), error = function(e) NULL)
  if (!is.null(inv) && all(is.finite(inv))) return(inv)
  e <- eigen(W, symmetric = TRUE)
  v <- pmax(e$values, max(e$values) * 1e-14, .Machine$double.xmin)
  e$vectors %*% (t(e$vectors) / v)
}

# An upper triangular U with U'U = W: the Cholesky factor, or, when W is
# numerically singular, the R of a QR decomposition of the eigen-based
# square root with eigenvalues floored as in sym_inverse().
chol_upper <- function(W) {
  W <- (W + t(W)) / 2
  U <- tryCatch(chol(W), error = function(e) NULL)
  if (!is.null(U) && all(is.finite(U))) return(U)
  e <- eigen(W, symmetric = TRUE)
  v <- pmax(e$values, max(e$values) * 1e-14, .Machine$double.xmin)
  qr.R(qr(sqrt(v) * t(e$vectors), tol = 0)) # tol = 0: no column pivoting
}
