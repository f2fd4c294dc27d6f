# LDA training: one lap over the batches (lda_lap()) and the laps of a fit
# through the one training loop of R/train.R (lda_train()).

# One lap over the batches (train_rounds(), R/train.R); returns the new state
# and the lap's trace extras. Batches are taken in rounds of `control$sync`:
# the local steps of a round share the global parameters of the round's
# start (on a cluster they run in parallel, one worker per batch), then the
# global steps are applied in batch order. With sync = 1 this is the usual
# one-batch-at-a-time loop. The rounds are the same with or without a
# cluster, so are the fits.
lda_lap <- function(state, x, control, lap, ex, keep = NULL, warm_of = NULL, spare = NULL,
                    buffers = NULL, within = NULL) {
  # the lap works on its own copy of a topic store: the state it was given
  # stays the last completed lap's (R/train.R)
  state <- lda_store_lap_start(state, spare)
  # The engine's global step for this `global` (R/engines.R: e.g. gibbs runs
  # the sparse lazy form of "stochastic", lda_global_gibbs()).
  engine <- lda_engine(control$local)
  global_fun <- engine$global[[control$global]]
  visit <- lda_lap_visit(control, lap, ex)
  # (No collection is forced here. While the topics were in R's heap, its
  # collector ran too seldom for the local steps' K x (batch vocabulary)
  # scratch, and the loop forced a collection every round or 128 MB; the
  # topic tables are outside R's heap now (src/table.c), R's heap stays
  # small and collects that scratch on its own. At K = 1000 over 60,000
  # Wikipedia paragraphs the forced collections took 3.15 of OPE's 31.2 s,
  # and without them 1.59 of 29.4 s, with the same peak memory: 1.52 GB; the
  # default 0.82 -> 0.25 s of 10 s, vb memoized 3.95 -> 2.44 s, 3.06 ->
  # 3.02 GB; inst/bench/results/large.txt.)
  # summary buffers (engines with summary_buffers, run here): each local
  # step gets one from `free` (an empty one at first: the step makes its
  # own, with room to spare) and the buffer goes back once the global step
  # has read that step's result, so the minibatches reuse a few buffers
  # instead of leaving one per minibatch to the garbage collector. `buffers`
  # (lda_train()) keeps them from lap to lap: a new set every lap was 36 of
  # the 128 MB a default fit on kos allocated.
  free <- if (isTRUE(engine$summary_buffers) && ex$kind == "local") buffers
  if (!is.null(free) && is.null(free$bufs)) free$bufs <- list()
  run_round <- function(round, state) {
    seeds <- lapply(round, function(b) {
      s <- lda_batch_seed(control$seed, lap, b)
      if (!is.null(warm_of)) attr(s, "warm") <- warm_of(b)
      # nothing reads this lap's document-topic counts: an engine may keep
      # them as working memory only (SCVB0)
      if (is.null(keep) && is.null(warm_of)) attr(s, "doc_topic") <- FALSE
      if (!is.null(free)) {
        n <- length(free$bufs)
        attr(s, "summary_buffer") <- if (n) free$bufs[[n]] else double(0)
        if (n) free$bufs[[n]] <- NULL
      }
      s
    })
    # restart proposals only in the first laps (vb: control$restart_laps)
    ctl <- control
    if (!is.null(ctl$restart_laps) && lap > ctl$restart_laps) ctl$restarts <- FALSE
    shared <- list(state = if (ex$kind == "cluster") lda_local_view(state) else state,
                   control = ctl)
    # (on a cluster: only the topic columns of each worker's words travel)
    executor_run(ex, round, lda_batch_step, shared, per = seeds, packages = "Matrix",
                 columns = lda_columns(control, length(x$vocab)))
  }
  tally <- function(acc, res) {
    if (is.null(res$stats$restart_tries)) return(acc)
    acc + c(res$stats$restart_tries, res$stats$restart_accepts)
  }
  r <- train_rounds(state, visit, if (is.null(control$sync)) 1L else control$sync, run_round,
                    function(state, res, b) {
                      if (!is.null(keep)) keep(res, b)
                      state <- global_fun(state, res, b, control)
                      # the step's summary is read: its buffer is free again
                      S <- if (!is.null(free)) res$summary
                      if (is.list(S) && !is.object(S) && is.double(S$x) && length(S$x)) {
                        free$bufs[[length(free$bufs) + 1L]] <- S$x
                      }
                      state
                    }, tally, c(0, 0),
                    # held-out scores within the lap (lda_train(): heldout_every)
                    after_round = if (!is.null(within)) {
                      function(state, done) within(state, lap, done, length(visit))
                    })
  state <- r$state
  # an engine may finish a lap (gibbs: materialise its lazy sparse topics)
  if (!is.null(engine$end_lap)) state <- engine$end_lap(state, control)
  list(state = state,
       extras = list(restart_accept = if (r$acc[1] > 0) r$acc[2] / r$acc[1] else NA_real_,
                     bytes_sent = r$sent, bytes_received = r$received,
                     bytes_between_workers = 0))
}

# The batches of lap `lap` in the order it visits them (memoized laps in
# order, the others shuffled from the seed), without the empty ones. The
# steps of a source (ex$groups: the file of each, source_steps()) are taken
# file by file, so that each file is read once a lap: the files in the order
# of their first step in the shuffle, each file's steps in the shuffle's
# order. With one step per file that is the shuffle itself.
lda_lap_visit <- function(control, lap, ex) {
  nb <- control$n_batches
  visit <- if (identical(lda_step(control)$visits, "ordered")) {
    seq_len(nb)
  } else {
    order(lda_unif(control$seed, 600 + lap, nb))
  }
  if (!is.null(ex$groups)) {
    g <- ex$groups[visit]
    visit <- visit[order(match(g, unique(g)))]
  }
  visit[ex$sizes[visit] > 0]
}

# The topic-word estimate of a state within a lap, for a held-out score.
# It reads the topics and leaves them as the lap goes on with them. The
# memoized and streaming stores of vb and OPE are read into a new table
# (lda_vb_finish() would hand their table over to lambda, which ends the
# store); as there, a memoized lap whose cache is still filling (a new
# fit's first lap) has the topics it holds fixed until the lap ends.
lda_topic_word_within <- function(state, control) {
  st <- state$topics$store
  holds <- lda_step(control)$holds
  if (!is.null(st) && holds %in% c("sums", "lambda")) {
    state$topics$store <- NULL
    if (identical(holds, "lambda")) {
      state$topics$lambda <- st$X
    } else if (is.null(state$topics$lambda)) {
      state$topics$lambda <- .Call(ffi_lda_lambda_from_stats, st$X, control$eta)
    }
    return(lda_state_topic_word(state))
  }
  lda_state_topic_word(lda_finish_state(state, control))
}

# fit$learning_curve: the held-out score within and at the end of each lap,
# for fits trained with heldout_every (NULL otherwise, unless an earlier
# call kept one: update() adds its laps to it). `within`: the scores within
# the laps (trainer$within_frame()); `laps`: the laps' trace rows; `of`: the
# batches a lap visits. Scores within a lap that did not complete (an
# interrupt) are dropped with it.
lda_learning_curve <- function(old, within, laps, of, scored) {
  if (!scored) return(old)
  within <- within[within$lap %in% laps$lap, , drop = FALSE]
  ends <- data.frame(lap = as.integer(laps$lap), batches = rep(as.integer(of), nrow(laps)),
                     seconds = laps$seconds, cpu_seconds = laps$cpu_seconds,
                     heldout = laps$heldout)
  new <- rbind(within, ends)
  new <- new[order(new$lap, new$batches), , drop = FALSE]
  out <- if (is.null(old)) new else rbind(old, new)
  rownames(out) <- NULL
  out
}

# The rows of two traces, one after the other; columns one lacks (a fit
# saved by an older version) are NA there.
trace_bind <- function(old, new) {
  cols <- union(names(new), names(old))
  fill <- function(d) {
    for (nm in setdiff(cols, names(d))) d[[nm]] <- rep(NA_real_, nrow(d))
    d[cols]
  }
  out <- rbind(fill(old), fill(new))
  rownames(out) <- NULL
  out
}

# What a local step needs of the global state: everything but the memoized
# caches and bookkeeping, which stay on the master.
lda_local_view <- function(state) {
  # a step reads a dense lambda when there is one (a memoized first lap
  # keeps its topics while its store fills)
  tp <- state$topics
  if (!is.null(tp$lambda)) tp$store <- NULL
  tp$S <- NULL
  state$topics <- tp
  state[setdiff(names(state), c("cache", "doc_obj"))]
}

# Training laps of a topic model, through the one training loop (R/train.R).
lda_train <- function(fit, x, passes, progress, heldout, cluster = NULL) {
  control <- fit$control
  heldout_every <- control$heldout_every
  # (a fit saved by an older version holds its topics in the state itself;
  # a fit holds its lambda once, outside its state: lda_fit_state())
  start <- if (inherits(fit, "sparsevi_lda")) lda_fit_state(fit) else lda_state_topics(fit$state)
  # a large memoized fit keeps S alone: its lambda again, as training left it
  if (is.null(start$topics$lambda) && !is.null(start$topics$S) && is.null(start$topics$beta)) {
    start$topics$lambda <- .Call(ffi_lda_lambda_from_stats, start$topics$S, control$eta)
  }
  trace <- fit$trace
  # a new fit's start is referenced by the training loop alone from here on
  # (take_start()), so that it is freed once the first lap has completed (or
  # as soon as an engine swaps its topics for a store of its own)
  if (!inherits(fit, "sparsevi_lda")) {
    fit$state <- NULL
    # ... and an engine's store may take the start's table itself (no second
    # K x V table: R/lda-store.R; a failed first lap is an error anyway), unless
    # it is the user's matrix (init = a matrix, kept in the control)
    if (!identical(control$init, "given")) start$topics$owned <- TRUE
  }
  take_start <- function() {
    s <- start
    start <<- NULL
    s
  }
  lap0 <- if (nrow(trace)) max(trace$lap) else 0L
  sec0 <- if (nrow(trace)) max(trace$seconds) else 0
  cpu0 <- if (nrow(trace) && !is.null(trace$cpu_seconds)) {
    max(c(0, trace$cpu_seconds), na.rm = TRUE)
  } else 0
  members <- lda_members(x, control)
  ex <- tryCatch(new_executor(cluster, control$n_batches,
                              lda_batch_reader(x, members, passes), lengths(members)),
                 sparsevi_error_worker = function(e) {
                   # update(): the model it was given; a new fit has none yet
                   e$fit <- if (inherits(fit, "sparsevi_lda")) fit
                   stop(e)
                 })
  on.exit(executor_close(ex), add = TRUE)
  # a source's steps by file: a lap visits each file's steps together
  ex$groups <- attr(members, "file")
  # persistent workers that own the topics' columns by word, when asked
  # for and the engine allows (R/executor-sharded.R)
  sharded <- lda_shardable(ex, control)
  if (sharded) {
    ex <- tryCatch(lda_shard_setup(ex, length(x$vocab)),
                   sparsevi_error_worker = function(e) {
                     e$fit <- if (inherits(fit, "sparsevi_lda")) fit
                     stop(e)
                   })
  }
  stops <- !is.null(control$converge_tol) && control$converge_tol > 0 &&
    lda_step(control)$memoized
  # with a convergence stop, `passes` is an upper bound and so is the ETA
  trainer <- new_trainer(progress, lap0 + passes, c(sec0, cpu0), upper_bound = stops,
                         heldout_unit = "/token")
  trainer$progress <- progress
  # the held-out score of topics `tw` (lda_state_topic_word(): K x V rows
  # summing to 1, or columns made block by block)
  score <- function(tw) completion_score(tw, control$alpha, heldout, control$threads)
  evaluate <- function(state) {
    list(objective = lda_objective(state, control),
         heldout = if (is.null(heldout)) NA_real_ else
           score(lda_state_topic_word(lda_finish_state(state, control))))
  }
  # held-out scores within a lap (fit_lda(heldout_every = n)): after the
  # round that completes each n-th batch of the lap, except at its end
  # (the lap's own trace row is scored there); outside the clock, as the
  # laps' scores are; a new counter for each lap
  within_for <- function() {
    if (is.null(heldout_every) || is.null(heldout)) return(NULL)
    next_at <- heldout_every
    function(state, lap, done, of) {
      if (done < next_at || done >= of) return(invisible())
      next_at <<- (done %/% heldout_every + 1L) * heldout_every
      trainer$record_within(lap, done, of,
                            function() score(lda_topic_word_within(state, control)))
    }
  }
  # between laps: empirical Bayes eta, then re-seeding dead topics (the
  # control's eta changes for the laps that follow)
  between <- function(state, lap) {
    note <- ""
    # the dense topics (a store is dropped); gibbs keeps its sparse store,
    # which its re-seeding writes (lda_reuse_dead_gibbs(), R/lda-gibbs.R)
    state <- lda_finish_state(state, control)
    if (isTRUE(control$eta_learn)) {
      eb <- lda_learn_eta(state, control)
      state <- eb$state
      control$eta <<- eb$eta
      state$eta_path <- c(state$eta_path, eb$eta)
    }
    if (isTRUE(control$reuse_dead)) {
      rd <- lda_reuse_dead(state, x, control, lap)
      state <- rd$state
      state$reused <- c(state$reused, rd$n)
      if (rd$n > 0L) note <- sprintf("%d dead topics re-seeded", rd$n)
    }
    list(state = state, note = note)
  }
  # the training documents' proportions from each batch's latest local step
  # (lda_keep() turns the last lap's into the fit's doc_topic: no
  # re-inference after training)
  kept <- lda_kept_parts(x, members, control)
  # vb warm start: each batch's document-topic counts of its latest local
  # step, sparse (K x n), the start of its next one
  warm <- NULL
  if (lda_engine_can(control$local, "warm_start") && isTRUE(control$warm_start) &&
      !inherits(x, "sparsevi_source")) {
    warm <- new.env(parent = emptyenv())
    warm$N <- vector("list", control$n_batches)
  }
  # the proportions are kept in the last scheduled lap only, or in every lap
  # when a stopping rule may make an earlier one the last (they were a tenth
  # of a default ten-lap call on kos, nine of them thrown away)
  last_lap <- lap0 + passes
  hook_for <- function(l) {
    add <- if (stops || l == last_lap) kept$add
    if (is.null(add) && is.null(warm)) return(NULL)
    hook <- function(res, b) {
      if (!is.null(add)) add(res, b)
      if (!is.null(warm) && is.matrix(res$doc_topic)) {
        warm$N[b] <- list(methods::as(res$doc_topic, "CsparseMatrix"))
      }
    }
    # (what it keeps of a batch's proportions, when that is all: a sharded
    # fit's workers then send only that, lda_result_top_share())
    if (is.null(warm)) attr(hook, "top") <- kept$top
    hook
  }
  warm_of <- if (!is.null(warm)) function(b) warm$N[[b]]
  on_worker_error <- function(err, state) {
    # a worker failed: the error carries the last completed model (none when
    # the first lap failed after its store took the start's table, or wrote
    # the start's own store)
    consumed <- lda_store_consumed(state)
    state$topics$owned <- NULL
    err$fit <- if (!consumed) {
      new_sparsevi_lda(state, control, x, trace_bind(trace, trainer$frame(lda_trace_extras)),
                       fit$call)
    }
    stop(err)
  }
  # memoized / batch vb: `passes` is an upper bound, training stops once a
  # lap moves the ELBO by less than control$converge_tol of its size
  tol <- control$converge_tol
  converged <- if (stops) {
    function(previous, current) {
      !is.na(previous) && !is.na(current) && abs(current - previous) <= tol * abs(current)
    }
  }
  # a large topic store is kept safe on disk between laps, not copied
  # (lda_store_protect(), R/lda-store.R)
  lda_snapshot_bytes() # (a bad option is an error before training, not a failed lap)
  snapshot_files <- new.env(parent = emptyenv())
  # the tables earlier laps copied their stores into, for later laps to
  # copy into again (lda_store_lap_start())
  spare <- new.env(parent = emptyenv())
  # the summary buffers the laps pass on to each other (lda_lap())
  buffers <- new.env(parent = emptyenv())
  on.exit(lda_store_forget(snapshot_files), add = TRUE)
  run <- train_laps(take_start(), lap0 + seq_len(passes),
                    if (sharded) {
                      function(state, l) lda_lap_sharded(state, x, control, l, ex, hook_for(l),
                                                         spare, within_for())
                    } else {
                      function(state, l) lda_lap(state, x, control, l, ex, hook_for(l), warm_of,
                                                 spare, buffers, within_for())
                    },
                    evaluate,
                    trainer,
                    between = if (isTRUE(control$eta_learn) || isTRUE(control$reuse_dead))
                      between,
                    converged = converged,
                    on_worker_error = on_worker_error, fail_first = TRUE,
                    protect = function(state, l) lda_store_protect(state, snapshot_files),
                    recover = lda_store_recover)
  new_rows <- trainer$frame(lda_trace_extras)
  trace <- trace_bind(trace, new_rows)
  path <- lda_learning_curve(fit$learning_curve, trainer$within_frame(), new_rows,
                           sum(ex$sizes > 0), !is.null(heldout_every) && !is.null(heldout))
  state <- run$state
  run$state <- NULL
  state$snapshots <- NULL
  lda_store_forget(snapshot_files)
  state$topics$owned <- NULL
  # the fit's lambda is built in the store's table (the store ends here)
  fit <- new_sparsevi_lda(state, control, x, trace, fit$call, in_place = TRUE)
  fit$ended <- run$ended
  fit$learning_curve <- path
  # an interrupted lap kept some batches' proportions of its own: infer
  # them all with the final topics instead (lda_keep()); an interrupt after
  # the last lap completed (while it was scored) leaves that lap's own, when
  # it kept them (hook_for())
  kept_all <- !identical(run$ended, "interrupted") ||
    (isTRUE(run$lap_complete) && run$laps_done > 0L && (stops || lap0 + run$laps_done == last_lap))
  fit$kept <- if (kept_all) kept$env
  validate_sparsevi_lda(fit)
}
