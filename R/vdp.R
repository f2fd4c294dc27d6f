# Fast-VDP and VDP (fit_vdp). Why this engine runs its own loop in C
# (src/vdp.c, vdp_fit) rather than on train_laps() (R/train.R), in the terms
# of notes/architecture.md §4 (the loop: laps of local steps over batches,
# each followed by a global step, then an objective):
# - its unit of work is not a lap over batches: it is a greedy search. Each
#   step is either an update cycle over the outer nodes of a kd-tree that
#   changes while the fit runs (nodes are expanded, and buckets of the lazily
#   built tree are split, in the middle of the fit), or a split trial:
#   `candidates` components are each split along their principal axis and
#   refined by partial updates of the two children alone, and all but the
#   best trial are thrown away; pair and delete trials likewise restore a
#   snapshot.
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
#
# This file: fit_vdp() and its argument and data checks. The rest: vdp-train.R
# (the fit's glue: convergence warnings, the per-point steps on a cluster),
# vdp-methods.R (the fitted object and its methods).

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
#' With `kdtree = TRUE` (Fast-VDP) the data sit in a kd-tree: all points of
#' an outer node share one responsibility vector computed from the node's
#' cached statistics, and nodes are expanded where their points would gain
#' from responsibilities of their own, which never raises the free energy.
#' The tree is built lazily (the same tree, and the same fit, as building it
#' whole). `kdtree = FALSE` runs the same algorithm on every point (the
#' paper's "VDP" baseline).
#'
#' **Delete moves (not in the paper).** When splitting stops, the fit tries
#' removing small components (smallest first, at most `candidates` tries)
#' and keeps a removal only if the free energy is lower. Greedy splitting
#' from T = 1 can leave slivers of one cluster as separate components;
#' deletes remove those that do not pay for themselves. `deletes = FALSE`
#' (in `...`) turns them off.
#'
#' **Pairs of splits (not in the paper).** When no split pays, the fit makes
#' the best one anyway, updates everything, and tries the two children as
#' splits; when one pays from there, it is made too, and the two are kept if
#' together they lower the free energy (by more than `tol` per point) from
#' where it was before the first, else the fit goes back. Splitting one
#' component at a time stops where two components fit worse than one but
#' three fit better than either: three clusters in a row, where the first
#' split leaves one cluster and a merged pair. A pair only makes components
#' of at least D (D + 3) / 2 points, the parameters of a full-covariance
#' Gaussian: on small samples in many dimensions the free energy can favour
#' many components the data do not determine (in cross-validation folds of
#' 34 points in 12 dimensions, 22 components, with a far lower held-out
#' likelihood); the pair is not tried when the first split's children are
#' smaller. Where nothing is found, the trial costs at most about one more
#' split: on the sets of `inst/bench/vdp.R`, 0-8% more CPU time, and 33%
#' (0.2 s) on the image patches, whose fit ends at two components
#' (`inst/bench/results/vdp-pairs.txt`). `pair_splits = FALSE` (in `...`)
#' turns pairs off.
#'
#' **Paper mode.** `paper = TRUE` (in `...`) runs Kurihara et al.'s
#' algorithm as published (except where a component is cut, see "Differences
#' from the paper"): nodes are expanded by the paper's test alone
#' (`expand_sd = 0`) and there are no delete moves or pairs of splits. It
#' is the fastest
#' setting, keeping fewer outer nodes, with a free energy slightly further
#' from VDP's; the default's extra expansion test (the spread test, below)
#' keeps it closer to VDP's where nodes straddle a boundary.
#' `vignette("benchmarks")` gives the figures.
#'
#' The prior is Normal-Wishart: \eqn{\Lambda_k \sim} Wishart(`nu0`, \eqn{W_0})
#' with \eqn{W_0^{-1}} = (`nu0` - D - 1) `cov0`, so that `cov0` is the prior
#' expected component covariance, and \eqn{\mu_k | \Lambda_k \sim}
#' N(`m0`, \eqn{(\beta_0 \Lambda_k)^{-1}}) with \eqn{\beta_0} = `beta0`. Sticks are Beta(`a1`, `a2`).
#'
#' The default `cov0 = cov(X) / 10` shrinks the data's covariance by the
#' same factor in every direction. In many dimensions, clusters that are
#' apart in only a few directions are then far wider than the prior
#' expects in all the others, and each component costs more in the free
#' energy. For three equal spherical clusters in a row (2,000 points each
#' in 32 dimensions, centres 17 standard deviations apart), three
#' components still fit best, but two fit worse than one, so one split at a
#' time stopped at one component; pairs of splits (above) find the three.
#' With fewer points a cluster, one component can fit best outright (300
#' points each in 16 dimensions, centres 12 standard deviations apart: the
#' three planted clusters have a higher free energy than one component),
#' and no search finds them under this prior. When you know
#' roughly how wide a cluster is, give `cov0` (for example the covariance
#' within known groups, or `diag(D)` for data whose clusters have unit
#' spread). A divisor that grows with the dimension (mclust's
#' `cov(X) / 10^(2 / D)`) fixes such cases but widens the components where
#' clusters are apart in every direction: on 35 real data sets its held-out
#' likelihood was higher on 13 and lower on 13, and on 120 synthetic sets
#' it was lower on 38 and higher on 3 (`inst/bench/results/vdp-prior.txt`),
#' so it is not the default.
#'
#' @section Differences from the paper:
#' Kurihara, Welling & Vlassis's algorithm, and what the default does
#' differently, with the setting that restores the paper's choice
#' (`paper = TRUE` restores the first three together):
#' * **Delete moves** after splitting stops (not in the paper; described
#'   above): `deletes = FALSE`.
#' * **Pairs of splits** when no single split pays (described above):
#'   `pair_splits = FALSE`.
#' * **Spread test:** besides the paper's expansion test (a child's
#'   responsibilities differ from the node's by more than
#'   `expand_threshold`), a node is also expanded when its points would
#'   lower the free energy by more than `expand_tol` times N (the number of
#'   points) if each had responsibilities of its own. That gain is estimated
#'   at the current parameters from the node's spread (the covariance of its
#'   points, from its cached statistics), and the children of an expanded
#'   node are tested again at once (measuring the change of the free
#'   energy is the alternative the paper mentions to its own test). The test catches nodes whose children
#'   both straddle a boundary, which the paper's test misses, and keeps the
#'   free energy closer to VDP's in high dimensions, at the price of more
#'   outer nodes: `expand_sd = 0` turns it off. Its threshold is per node,
#'   not per point, so the tree stays coarse where the components overlap
#'   everywhere: on 438,784 image patches (D = 16) the default keeps about
#'   12,500 outer nodes and runs about 10 times faster than VDP
#'   (`inst/bench/results/vdp.txt`; 13 times before pairs of splits, whose
#'   final trial costs 0.2 s there). Expanding a node whenever its points'
#'   responsibilities might range by more than `expand_threshold`, the rule
#'   before this test, refined the tree on those patches to half the points
#'   and was slower than VDP.
#' * **Where a component is split:** the paper cuts a split candidate
#'   through its mean, across its principal axis. When clusters lie in a row
#'   along that axis (three in a row: the cut halves the middle one), that
#'   cut can fit worse than the component it splits, the candidate's few
#'   updates do not recover, and a real split is missed; which tree the data
#'   give then decides the outcome, so the fit depended on the order of the
#'   rows. The default, `split_cut = "fallback"`, cuts through the
#'   mean as the paper does, and when none of those splits pays, tries the
#'   same candidates cut at the weighted two-means threshold of the items'
#'   projections on the axis (the cut that leaves the least sum of squares
#'   on either side; each item weighted by its points and responsibility)
#'   before it stops (a candidate whose threshold lies within 0.1 standard
#'   deviations of the projections' mean is not tried again: that is nearly
#'   the cut that failed). The fit is then the paper's until the paper's
#'   search would stop, and can only go on to a lower free energy; the extra
#'   round costs up to about 8% of the CPU time where it finds nothing. Taking the
#'   threshold for every candidate (`split_cut = "two-means"`) was worse on
#'   some data (in 128 dimensions VDP stopped at 7 of 10 planted components).
#'   `split_cut = "mean"` restores the paper's cut (the paper mode keeps the
#'   default). Measured figures: `inst/bench/results/vdp.txt`.
#' * **Tree splits:** the kd-tree divides a node at the median of its
#'   points' projections on the node's principal direction, where the
#'   paper's kd-tree divides along the coordinate axes. No setting restores
#'   the axis-aligned tree.
#' * **Reordering:** components are reordered by size only when that lowers
#'   the free energy (the paper reorders them every update cycle). No
#'   setting restores the paper's rule.
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
#'   default 1e-3; 10 nats at N = 10^4). Per point, so the components found
#'   do not depend on the units of `X`; smaller values make fits slower.
#' @param max_K Largest number of components (whole number >= 1; default 50).
#' @param seed `NULL` (draw from R's random number generator) or a whole
#'   number; candidate sampling uses sparsevi's own random streams.
#' @param threads Number of threads (default `getOption("sparsevi.threads",
#'   1)`); results do not depend on it.
#' @param progress Print one line per accepted split (default
#'   `interactive()`).
#' @param cluster `NULL` (default), persistent workers from
#'   [sparsevi_workers()], or a cluster from [parallel::makePSOCKcluster()]
#'   (workers may be on other hosts, each with sparsevi installed). With
#'   `kdtree = FALSE` the rows of `X` are split into `n_batches` blocks (default: one per worker) sent once to the workers;
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
#'   `expand_threshold` (the paper's test: a node is expanded when a
#'   child's optimal responsibilities differ from the node's by more than
#'   this; default 0.05), `expand_tol` (the spread test: a node is expanded
#'   when its points' estimated gain from responsibilities of their own
#'   exceeds this many nats per point of `X`, i.e. `expand_tol` times N
#'   nats, in (0, 1); default `update_tol`; smaller is more exact and
#'   slower),
#'   `expand_sd` (the scale of a node's spread in the spread test, default
#'   1; 0 turns the test off, as in the paper mode),
#'   `n_batches` (`kdtree = FALSE`: row blocks whose statistics are summed
#'   separately and then added in block order; default 1, or the number of
#'   workers of `cluster`), `lazy_tree` (`TRUE` or `FALSE`: split the
#'   kd-tree's buckets only when first needed; default `TRUE`, same fit),
#'   `deletes` (`TRUE` or `FALSE`: try the delete moves described in
#'   Details after splitting; default `TRUE`), `pair_splits` (`TRUE` or
#'   `FALSE`: try a pair of splits when no single split pays, see Details;
#'   default `TRUE`, `FALSE` in the paper mode), `split_cut` (where a split
#'   candidate is cut across its principal axis: `"mean"` (the paper's
#'   cut), `"two-means"` (the weighted two-means threshold of the
#'   projections), or `"fallback"`, the default: through the mean, and at
#'   the threshold when no split through the mean pays; see "Differences
#'   from the paper"), `paper` (`TRUE` or `FALSE`,
#'   default `FALSE`: the paper mode, see Details), `assignments` (`TRUE`
#'   or `FALSE`: after the fit, two passes over the points keep their
#'   `classification`, `uncertainty`, responsibilities `z` (when small) and
#'   the `loglik` behind [logLik()] and [BIC()] on the fit; default `TRUE`
#'   up to 100,000 points, else `FALSE` (their cost grows with N where the
#'   kd-tree fit's hardly does), and `FALSE` in the paper mode; without
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
  # values whose squares overflow or underflow: say so (not a failed
  # factorisation of cov0)
  check_magnitude(X, prep$center, "X")
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
                  pair_splits = as.logical(ctl$pair_splits),
                  split_cut = match(ctl$split_cut, c("mean", "two-means", "fallback")) - 1L,
                  a1 = as.double(a1), a2 = as.double(a2), tol = as.double(tol),
                  update_tol = as.double(ctl$update_tol),
                  expand_threshold = as.double(ctl$expand_threshold),
                  expand_sd = as.double(ctl$expand_sd),
                  expand_tol = as.double(ctl$expand_tol), seed = seed2, threads = threads,
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

# Default largest N for which fit_vdp() keeps the training points'
# assignments and log-likelihood (two passes over the points after the fit:
# at 10^6 points in 16 dimensions, T = 10, 1.4 s against 0.65 s for the
# whole default fit without them).
vdp_assign_max <- 1e5

vdp_controls <- function(dots, tol, N = 0, call = caller_call()) {
  known <- c("leaf_size", "max_iter", "partial_iter", "update_tol", "expand_threshold",
             "expand_sd", "expand_tol", "n_batches", "lazy_tree", "deletes", "paper",
             "assignments", "split_cut", "pair_splits")
  bad <- setdiff(names(dots), known)
  if (length(dots) && (is.null(names(dots)) || any(!nzchar(names(dots))) || length(bad))) {
    abort(sprintf("Unknown argument(s) in `...`: %s. Known controls: %s.",
                  paste(if (length(bad)) bad else "<unnamed>", collapse = ", "),
                  paste(known, collapse = ", ")), "argument", call = call)
  }
  out <- list(leaf_size = 10L, max_iter = 100L, partial_iter = 20L,
              update_tol = tol / 10, expand_threshold = 0.05, expand_sd = 1,
              expand_tol = NULL,
              lazy_tree = TRUE, deletes = TRUE, paper = FALSE, split_cut = "fallback",
              pair_splits = TRUE,
              # the two passes over the points cost O(N T D^2) while the
              # kd-tree fit hardly grows with N: kept by default up to
              # vdp_assign_max points (inst/bench/results/vdp.txt)
              assignments = N <= vdp_assign_max)
  # paper = TRUE: Kurihara et al.'s algorithm as published (their expansion
  # test alone, no delete moves, no pairs of splits); expand_sd, deletes or
  # pair_splits given explicitly win
  if (!is.null(dots$paper)) out$paper <- check_flag(dots$paper, "paper", call = call)
  if (out$paper) {
    out$expand_sd <- 0
    out$deletes <- FALSE
    out$pair_splits <- FALSE
    # the published algorithm ends with the fit: no passes over the points
    # for their assignments and log-likelihood
    out$assignments <- FALSE
  }
  if (!is.null(dots$assignments))
    out$assignments <- check_flag(dots$assignments, "assignments", call = call)
  if (!is.null(dots$deletes))
    out$deletes <- check_flag(dots$deletes, "deletes", call = call)
  if (!is.null(dots$pair_splits))
    out$pair_splits <- check_flag(dots$pair_splits, "pair_splits", call = call)
  if (!is.null(dots$split_cut))
    out$split_cut <- check_choice(dots$split_cut, c("fallback", "two-means", "mean"),
                                  "split_cut", call = call)
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
  out$expand_tol <- if (is.null(dots$expand_tol)) out$update_tol else
    check_probability(dots$expand_tol, "expand_tol", call = call)
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
