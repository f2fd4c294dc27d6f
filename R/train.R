# The one training loop of every engine, LDA and mixtures alike
# (notes/architecture.md §4):
#
#   for each lap:
#     for each round of `sync` batches (in the engine's order for the lap):
#       local steps of the round, all from the state of the round's start
#         (in this process, or on the workers of a cluster: executor_run())
#       global step of each batch, in batch order
#       (with heldout_every, a held-out score within the lap: after_round)
#     end-of-lap step of the engine (if any)
#     objective and held-out score (not counted as training time)
#     stop early when the engine says it has converged
#     between laps: the engine's moves (empirical Bayes, re-seeding topics)
#
# An engine plugs in through a small list of functions (see train_laps()),
# not through flags. One step-size function serves every stochastic step,
# and every trace has the same columns (train_trace_columns), engine extras
# after them.
#
# One engine keeps its own loop: Fast-VDP (fit_vdp, src/vdp.c) is a greedy
# search over split and delete trials on a kd-tree that grows during the
# fit, not laps over batches, and its steps (about 0.5 ms each at 10^6
# points) are too short for an R round trip per step; R/vdp.R's header says
# why in full. Its trace has the common columns all the same.

# `a`, or `b` when `a` is NULL (base R has it from 4.4 on); the package's
# one definition.
`%||%` <- function(a, b) if (is.null(a)) b else a

#' @noRd
# The Robbins-Monro step size rho_t = min(1, s (tau + t)^-kappa) of every
# stochastic global step (LDA's stochastic, SCVB0, Gibbs within SVI, OPE's
# learners, mixtures). SCVB0's per-document step inside its C kernel follows
# the same formula with its own schedule (doc_s, doc_tau, doc_kappa).
step_size <- function(t, tau, kappa, scale = 1) {
  min(1, scale * (tau + t)^(-kappa))
}

# The columns every trace starts with, in this order: the lap (0 for a
# mixture's first pass, which fills its memo), training seconds (wall clock)
# and CPU seconds of this process since the fit began, without the objective
# and held-out evaluation; the objective (ELBO for memoized and batch
# training, else NA); the held-out score (NA without held-out data); and the
# bytes serialised to and from cluster workers during the lap (0 without a
# cluster). Engines add their own columns after these.
train_trace_columns <- c("lap", "seconds", "cpu_seconds", "objective", "heldout",
                         "bytes_sent", "bytes_received")

# CPU seconds (user + system) of this R process so far, all threads.
process_cpu <- function() {
  t <- proc.time()
  t[["user.self"]] + t[["sys.self"]]
}

# An empty trace with the common columns and the engine's extras.
train_empty_trace <- function(extras = character(0)) {
  cols <- c(train_trace_columns, extras)
  out <- as.data.frame(stats::setNames(rep(list(numeric(0)), length(cols)), cols))
  out$lap <- integer(0)
  out
}

# Runs one lap's rounds. `visit`: batch ids in the lap's order; `run_round`
# (round, state) -> list(results, sent, received) runs the round's local
# steps; `global` (state, res, b) -> state applies one batch's global step;
# `tally` (acc, res) -> acc collects the engine's per-lap statistics;
# `after_round` (state, done), if given, is called after each round's
# global steps with the number of batches of the lap done so far (to score
# the state within a lap; it does not change the state).
train_rounds <- function(state, visit, sync, run_round, global, tally = NULL, acc = NULL,
                         after_round = NULL) {
  rounds <- split(visit, ceiling(seq_along(visit) / sync))
  sent <- 0
  received <- 0
  done <- 0L
  for (round in rounds) {
    run <- run_round(round, state)
    sent <- sent + run$sent
    received <- received + run$received
    for (i in seq_along(round)) {
      res <- run$results[[i]]
      state <- global(state, res, round[i])
      if (!is.null(tally)) acc <- tally(acc, res)
    }
    # the round's results are consumed: not kept alive (they can be
    # K x batch vocabulary each) while the next round's local steps run
    run <- res <- NULL
    done <- done + length(round)
    if (!is.null(after_round)) after_round(state, done)
  }
  list(state = state, acc = acc, sent = sent, received = received)
}

# A trainer keeps the clock (training time without evaluation), the trace
# rows and the progress lines of one call of train_laps(). `offset`: the
# seconds and CPU seconds of earlier calls (update() continues the trace).
new_trainer <- function(progress, last_lap, offset = c(0, 0), upper_bound = FALSE,
                        heldout_unit = "") {
  env <- new.env(parent = emptyenv())
  env$start <- proc.time()[["elapsed"]]
  env$cpu_start <- process_cpu()
  env$eval_time <- 0
  env$eval_cpu <- 0
  env$rows <- list()
  env$n <- 0L
  env$within <- list()
  # evaluate() run outside the clock: its value and the training time (wall
  # clock and CPU seconds) up to its start. The evaluation's time is not
  # training time, even when an interrupt cuts it short (train_laps() then
  # records the lap without its scores).
  env$timed <- function(evaluate) {
    t_eval <- proc.time()[["elapsed"]]
    c_eval <- process_cpu()
    elapsed <- t_eval - env$start - env$eval_time
    cpu <- c_eval - env$cpu_start - env$eval_cpu
    on.exit({
      env$eval_time <- env$eval_time + proc.time()[["elapsed"]] - t_eval
      env$eval_cpu <- env$eval_cpu + process_cpu() - c_eval
    })
    list(value = evaluate(), elapsed = elapsed, cpu = cpu)
  }
  # a held-out score within a lap (fit_lda(heldout_every = )): score() is
  # the score of the state after `batches` batches of lap `lap`
  env$record_within <- function(lap, batches, of, score) {
    tm <- env$timed(score)
    env$within[[length(env$within) + 1L]] <-
      list(lap = as.integer(lap), batches = as.integer(batches),
           seconds = offset[1] + tm$elapsed, cpu_seconds = offset[2] + tm$cpu,
           heldout = tm$value)
    if (progress) {
      message(sprintf("lap %d  %d/%d batches  %ss  heldout %.4f%s", lap, batches, of,
                      format_seconds(offset[1] + tm$elapsed), tm$value, heldout_unit))
    }
    invisible(tm$value)
  }
  # evaluate() runs the objective / held-out scoring outside the clock and
  # returns its list; the row gets the training time up to its start
  env$record <- function(lap, evaluate, extras = list(), note = "") {
    tm <- env$timed(evaluate)
    ev <- tm$value
    elapsed <- tm$elapsed
    cpu <- tm$cpu
    row <- c(list(lap = as.integer(lap), seconds = offset[1] + elapsed,
                  cpu_seconds = offset[2] + cpu, objective = ev$objective,
                  heldout = ev$heldout,
                  bytes_sent = if (is.null(extras$bytes_sent)) 0 else extras$bytes_sent,
                  bytes_received = if (is.null(extras$bytes_received)) 0
                                   else extras$bytes_received),
             extras[setdiff(names(extras), c("bytes_sent", "bytes_received"))])
    env$n <- env$n + 1L
    env$rows[[env$n]] <- row
    if (progress) {
      done <- env$n
      left <- if (is.finite(last_lap)) elapsed / done * max(0, last_lap - lap) else NA
      # what the user can watch: the objective where the engine has one, the
      # held-out score when `heldout` is given, or an estimate the engine
      # supplies (ev$estimate, labelled by ev$estimate_label); an engine with
      # none of them says once how to get a score, rather than "objective -"
      watch <- c(if (!is.na(ev$objective)) sprintf("objective %s", format(ev$objective, digits = 8)),
                 if (!is.na(ev$heldout)) sprintf("heldout %.4f%s", ev$heldout, heldout_unit),
                 if (!is.null(ev$estimate) && !is.na(ev$estimate))
                   sprintf("%s %.4f", if (is.null(ev$estimate_label)) "estimate"
                                      else ev$estimate_label, ev$estimate))
      if (!length(watch) && done == 1L) {
        watch <- "no objective for this training (give `heldout` to watch a held-out score)"
      }
      message(sprintf("lap %d/%d  %ss  %sETA %s%ss%s", lap, last_lap,
                      format_seconds(offset[1] + elapsed),
                      if (length(watch)) paste0(paste(watch, collapse = "  "), "  ") else "",
                      if (upper_bound) "<= " else "", format_seconds(left), note))
    }
    invisible(row)
  }
  # the within-lap scores as a data frame (no rows when there are none)
  env$within_frame <- function() {
    cols <- c("lap", "batches", "seconds", "cpu_seconds", "heldout")
    out <- lapply(stats::setNames(cols, cols), function(nm) {
      as.double(unlist(lapply(env$within, `[[`, nm), use.names = FALSE))
    })
    out$lap <- as.integer(out$lap)
    out$batches <- as.integer(out$batches)
    as.data.frame(out)
  }
  env$frame <- function(extras = character(0)) {
    if (!env$n) return(train_empty_trace(extras))
    cols <- unique(c(train_trace_columns, extras, names(env$rows[[1L]])))
    out <- lapply(stats::setNames(cols, cols), function(nm) {
      unlist(lapply(env$rows, function(r) if (is.null(r[[nm]])) NA_real_ else r[[nm]]),
             use.names = FALSE)
    })
    out$lap <- as.integer(out$lap)
    as.data.frame(out)
  }
  env
}

# The lap loop. An engine gives:
#   lap(state, lap) -> list(state, extras): one lap (train_rounds() inside),
#     extras the lap's trace columns (bytes_sent, ...);
#   evaluate(state) -> list(objective, heldout);
#   between(state, lap) -> list(state, note) (optional): moves between laps,
#     never after the last;
#   converged(previous, current) -> TRUE to stop (optional; objectives);
#   on_worker_error(err, state) (optional): called with a worker's error and
#     the last completed state; must signal (stop()).
#   protect(state, lap) -> state (optional): called before each lap, e.g. to
#     keep a large table safe on disk rather than copy it (the lap may then
#     write the state's tables in place);
#   recover(state) -> state (optional): after a failed lap, the state as it
#     was before the lap (e.g. read back from what protect() kept); not
#     called when protect() itself failed (the state is then untouched).
# An error or interrupt during a lap keeps the state of the last completed
# lap (a lap works on its own copy) and warns with class
# sparsevi_warning_interrupted; when no lap has completed yet and
# `fail_first`, it is an error instead. An interrupt after a lap has
# completed -- while it is scored (evaluate(), e.g. a held-out score over
# many documents) or during the between-laps moves -- keeps that lap's state
# (its trace row without the scores it did not finish) and warns the same
# way. Returns the state, the trainer, how the loop ended ("passes",
# "converged" or "interrupted"), the laps completed, and `lap_complete`:
# TRUE unless a lap was cut short (the state is then the lap before's).
train_laps <- function(state, laps, lap, evaluate, trainer, between = NULL,
                       converged = NULL, on_worker_error = NULL, fail_first = TRUE,
                       previous = NA_real_, protect = NULL, recover = NULL) {
  done <- 0L
  ended <- "passes"
  lap_complete <- TRUE
  for (i in seq_along(laps)) {
    l <- laps[i]
    # recover() only after protect() has kept this state: when protect()
    # itself fails (a snapshot that cannot be written, an interrupt while it
    # is written) nothing has touched the state yet, and what an earlier
    # protect() kept is an earlier lap's
    protected <- FALSE
    out <- tryCatch({
      if (!is.null(protect)) state <- protect(state, l)
      protected <- TRUE
      lap(state, l)
    }, interrupt = function(e) e, error = function(e) e)
    if (inherits(out, "condition")) {
      if (!is.null(recover) && protected) state <- recover(state)
      if (inherits(out, "sparsevi_error_worker")) {
        if (!is.null(on_worker_error)) on_worker_error(out, state)
        stop(out)
      }
      if (done == 0L && fail_first) {
        if (inherits(out, "error")) stop(out)
        abort("Training was interrupted before the first lap completed.", "interrupted")
      }
      warning(warningCondition(
        sprintf("Training stopped during lap %d (%s); returning the fit after lap %d.",
                l, if (inherits(out, "interrupt")) "interrupted" else conditionMessage(out),
                l - 1L),
        class = c("sparsevi_warning_interrupted", "sparsevi_warning")))
      ended <- "interrupted"
      lap_complete <- FALSE
      break
    }
    state <- out$state
    done <- done + 1L
    ev <- NULL
    rows <- trainer$n
    # the lap is complete: an interrupt from here on (scoring it, the moves
    # between laps) stops training with this lap's state
    after <- tryCatch({
      trainer$record(l, function() ev <<- evaluate(state), out$extras, note = "")
      # converged: stop before the between-laps moves (they prepare a next lap)
      if (!is.null(converged) && converged(previous, ev$objective)) {
        "converged"
      } else {
        if (!is.null(between) && i < length(laps)) {
          mv <- between(state, l)
          state <- mv$state
          if (nzchar(mv$note %||% "")) message_between(trainer, mv$note)
        }
        "next"
      }
    }, interrupt = function(e) e)
    if (inherits(after, "interrupt")) {
      scoring <- trainer$n == rows
      if (scoring) {
        trainer$record(l, function() list(objective = NA_real_, heldout = NA_real_),
                       out$extras, note = "  (interrupted while scored)")
      }
      warning(warningCondition(
        sprintf("Training was interrupted %s lap %d; returning the fit after lap %d%s.",
                if (scoring) "while scoring" else "after", l, l,
                if (scoring) " (its trace row has no objective or held-out score)" else ""),
        class = c("sparsevi_warning_interrupted", "sparsevi_warning")))
      ended <- "interrupted"
      break
    }
    if (identical(after, "converged")) {
      ended <- "converged"
      break
    }
    previous <- ev$objective
  }
  list(state = state, trainer = trainer, ended = ended, laps_done = done,
       lap_complete = lap_complete)
}

# Seconds for a progress line: one decimal from 1 s up, two significant
# digits below (a fast fit's laps and ETA would all read 0.0 or 0).
format_seconds <- function(s) {
  if (is.na(s)) return("NA")
  if (s >= 1) sprintf("%.1f", s) else format(signif(s, 2), scientific = FALSE)
}

# A between-laps note (e.g. topics re-seeded) on the progress stream.
message_between <- function(trainer, note) {
  if (isTRUE(trainer$progress)) message("  ", note)
}
