# Mixtures (fit_mixture()): the training loop glue around the C kernels.

# ---- training loop ---------------------------------------------------------

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
