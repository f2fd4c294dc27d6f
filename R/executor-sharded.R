# Topics sharded by word over persistent workers (notes/architecture.md §6,
# "Topics sharded by word"): the laps of a topic model on
# sparsevi_workers(shard_topics = TRUE) when its engine allows it
# (engine$shard, R/engines.R: SCVB0).
#
# With the topics on the master (R/executor.R), every round sends each
# worker the topic columns of its batches' words and brings its summaries
# back over the master's one link; at K = 1000 on Wikipedia paragraphs that
# bounds SCVB0 below 2.3x however many workers there are
# (inst/bench/scale.R, part `project`). Here worker r of W owns the columns
# of the words v (0-based) with v mod W = r, as a table of its own with the
# store's `meta` (scale, t, row sums), and the workers exchange columns and
# summaries directly, each on its own link:
#
#   - at a lap's start the master sends each worker its columns of the
#     store (lda_shard_lap_start()); at the lap's end it takes them back
#     into its own copy of the store (lda_shard_lap_end()), each shard in
#     the smaller of two exact forms (lda_shard_take()). Between laps the
#     state is the usual one: snapshots, interrupts, held-out scores,
#     update() and the fit are those of any lap;
#   - a round: the master sends every worker the round's batches, their
#     order and seeds, and which worker runs each (bytes, not topics; a
#     batch run away from the worker that holds its documents travels with
#     it: shard_runners()). Each owner sends each worker
#     that runs a batch of the round the columns of that worker's words it
#     owns; the worker runs its local steps on them (the topics at the
#     round's start, as in any round), sums each summary's rows in word
#     order and sends every owner its part of the summary with the row
#     sums and the step's size; each owner then applies the round's steps
#     in the round's order to its columns (store_update_owner(),
#     src/lda-store.c). The step on a column and the totals from the whole
#     summary's row sums are the arithmetic of the step on the whole table,
#     so every owner's `meta` stays the whole store's and the fit equals
#     the fit without a cluster with the same `sync`, bit for bit.
#
# Transport: nanonext sockets (mirai's own transport), one `pull` socket on
# each worker that every other worker and the master dial with a `push`
# socket (the mesh is made once per fit, lda_shard_setup()). Sends are
# asynchronous, so no worker waits on another's receive; every message is
# tagged with its round, kind and sender, and a worker keeps messages that
# come early (a peer's summary can arrive before a third worker's columns).
# When a worker fails, the master sends every worker an abort message so
# that none waits for ever for the one that failed.

# Whether a fit's laps run sharded on executor `ex`: persistent workers
# that were asked to (sparsevi_workers(shard_topics = TRUE)), at least two
# of them, batches of documents whose words are known (new_executor()),
# and an engine whose owners can take its global step
# (engine$shard$can(control)).
lda_shardable <- function(ex, control) {
  if (!identical(ex$kind, "cluster") || !identical(ex$transport, "mirai") || ex$workers < 2L ||
      is.null(ex$vocab)) {
    return(FALSE)
  }
  if (!isTRUE(attr(ex$cluster, "state")$shard_topics)) return(FALSE)
  sh <- lda_engine(control$local)$shard
  !is.null(sh) && isTRUE(sh$can(control))
}

# Who owns what: word v (1-based) belongs to worker shard_owner(v, W) and is
# its column shard_column(v, W) (0-based); worker w's words are
# shard_words(w, V, W), in that order (src/executor-sharded-ffi.c puts them
# back by the same rule).
shard_owner <- function(v, W) (v - 1L) %% W + 1L
shard_column <- function(v, W) as.integer((v - 1L) %/% W)
shard_words <- function(w, V, W) if (w <= V) seq.int(w, V, by = W) else integer(0)

# Columns `cols` (1-based) of the K x V table X as they travel between the
# master and the workers and among the workers: in the smaller of two exact
# forms, the K x n matrix, or its entries other than +0 column by column,
# list(K, n, p, i, x) (rows i, 0-based, of column j at p[j] .. p[j + 1] - 1).
# Mostly +0 are: a new fit's seeded start but for its K seed documents'
# counts (1 GB whole at K = 1000 over Wikipedia's 129,289 words, under
# 1 MB so), a lap's end in the columns of every word no batch has had, and
# the topics of a fit whose summaries keep `L` topics per entry
# (sparse_rest "renormalise" or "sample": 3.5% of a 100-paragraph batch's
# columns other than +0 after a lap over 10,000 paragraphs at K = 1000).
# In C (src/executor-sharded-ffi.c); shard_take_r() is its reference.
# ffi_lda_shard_columns() gives back the matrix, ffi_lda_shard_put() puts
# a worker's shard (cols = shard_words()) back into a whole table.
lda_columns_take <- function(X, cols) .Call(ffi_lda_columns_take, X, as.integer(cols))

# Worker w's shard of X (its columns shard_words(w, V, W)) as it travels.
lda_shard_take <- function(X, W, w) lda_columns_take(X, shard_words(w, ncol(X), W))

shard_take_r <- function(X, cols) {
  cols <- X[, cols, drop = FALSE]
  # (+0 alone: -0 == 0 too, and must travel as itself)
  zero <- cols == 0 & 1 / cols > 0
  zero[is.na(zero)] <- FALSE
  if (sum(!zero) * 3 > length(cols) * 2) return(cols)
  keep <- which(!zero)
  list(K = nrow(X), n = ncol(cols), p = as.double(c(0, cumsum(colSums(!zero)))),
       i = as.integer((keep - 1L) %% nrow(X)), x = cols[keep])
}

# The R reference of ffi_lda_shard_gather(): the n columns a runner's local
# steps read, columns own_cols of its own table X at own_at and the columns
# of each owner's taken shard parts[[o]] at at[[o]].
shard_gather_r <- function(n, X, own_cols, own_at, parts, at) {
  XU <- matrix(0, nrow(X), n)
  XU[, own_at] <- X[, own_cols]
  for (o in seq_along(parts)) XU[, at[[o]]] <- shard_columns_r(parts[[o]])
  XU
}

# The K x n matrix of a taken shard (ffi_lda_shard_columns()'s reference).
shard_columns_r <- function(s) {
  if (is.matrix(s)) return(s)
  out <- matrix(0, s$K, s$n)
  j <- rep.int(seq_len(s$n), diff(s$p))
  out[cbind(s$i + 1L, j)] <- s$x
  out
}

# The mesh of a fit (once, after new_executor() placed the batches): each
# worker listens on a pull socket of its own, then dials every other; the
# master dials each of them too (for abort messages). Each owner is told
# which of each batch's words it owns (as its own 0-based columns).
# Returns ex with ex$shard set.
lda_shard_setup <- function(ex, V, call = caller_call()) {
  W <- ex$workers
  local <- isTRUE(attr(ex$cluster, "state")$local)
  hosts <- vapply(seq_len(W), function(w) {
    if (local) "127.0.0.1" else (ex$cluster[[w]]$host %||% "127.0.0.1")
  }, "")
  limit <- attr(ex$cluster, "state")$task_timeout %||% Inf
  urls <- unlist(lapply(worker_calls(ex, seq_len(W), lapply(seq_len(W), function(w) {
    wire(list(token = ex$token, listen = if (local) "127.0.0.1" else "0.0.0.0",
              host = hosts[w]))
  }), "shard_worker_listen", call), unserialize))
  payloads <- lapply(seq_len(W), function(w) {
    own <- lapply(ex$vocab, function(v) shard_column(v[shard_owner(v, W) == w], W))
    wire(list(token = ex$token, rank = w, urls = urls, own = own, V = as.integer(V),
              limit = as.double(limit)))
  })
  sent <- sum(lengths(payloads))
  worker_calls(ex, seq_len(W), payloads, "shard_worker_dial", call)
  ex$shard <- list(abort = lapply(urls, function(u) nanonext::socket("push", dial = u)),
                   # the meta of the columns the workers hold, as the last lap
                   # left them (lda_shard_lap_start())
                   held = new.env(parent = emptyenv()))
  ex$bytes_setup <- ex$bytes_setup + sent
  ex
}

# The master's sockets of the mesh, closed when the fit ends
# (executor_close()).
lda_shard_close <- function(ex) {
  for (s in ex$shard$abort) try(close(s), silent = TRUE)
  invisible()
}

# Tells every worker of the mesh to stop waiting: a worker failed.
lda_shard_abort <- function(ex) {
  msg <- wire(list(kind = "abort"))
  aios <- lapply(ex$shard$abort, function(s) {
    tryCatch(nanonext::send_aio(s, msg, mode = "raw", timeout = 1000L), error = function(e) NULL)
  })
  for (a in aios) if (!is.null(a)) try(nanonext::call_aio(a), silent = TRUE)
  invisible()
}

# worker_calls() of a sharded round: a failure aborts the others' waits
# before the classed error goes up, and so does an interrupt (which may
# come after some workers got the round's task and others not: those
# would wait for ever, and the fit's end, executor_close(), behind them).
shard_calls <- function(ex, ws, payloads, step, call) {
  withCallingHandlers(worker_calls(ex, ws, payloads, step, call),
                      sparsevi_error_worker = function(e) lda_shard_abort(ex),
                      interrupt = function(e) lda_shard_abort(ex))
}

# The workers that run a round's batches, given the worker that holds each
# batch's documents (`home`): a batch runs at home while its home has
# fewer than its share of the round (ceiling(batches / W)), the others on
# the workers with the fewest, the lowest first. A lap visits the batches
# in a random order, so a round's batches often share a home (with two
# workers and rounds of two, 3 rounds in 7): run there, the round would
# take one worker's time for each of them while the others wait. The
# local steps do not depend on where they run (a batch's random streams
# are its own), so the fit is the same.
shard_runners <- function(home, W) {
  cap <- ceiling(length(home) / W)
  load <- integer(W)
  runner <- integer(length(home))
  for (i in seq_along(home)) {
    if (load[home[i]] < cap) {
      runner[i] <- home[i]
      load[home[i]] <- load[home[i]] + 1L
    }
  }
  for (i in which(runner == 0L)) {
    w <- which.min(load)
    runner[i] <- w
    load[w] <- load[w] + 1L
  }
  runner
}

# One lap of a sharded fit: lda_lap()'s rounds, with the local and the
# global steps on the workers. The same arguments as lda_lap() that a
# sharded fit can have (no summary buffers, warm starts or restarts: those
# are other engines').
lda_lap_sharded <- function(state, x, control, lap, ex, keep = NULL, spare = NULL,
                            within = NULL) {
  start <- lda_shard_lap_start(ex, lda_store_lap_start(state, spare), control)
  state <- start$state
  visit <- lda_lap_visit(control, lap, ex)
  sent <- start$sent
  start <- NULL
  # (the rounds change the workers' columns: until the lap ends, what they
  # hold is no completed lap's)
  ex$shard$held$meta <- NULL
  received <- 0
  between <- 0
  sync <- if (is.null(control$sync)) 1L else control$sync
  rounds <- split(visit, ceiling(seq_along(visit) / sync))
  t <- if (is.null(state$t)) 0 else state$t
  meta <- NULL
  rho <- state$rho
  done <- 0L
  # (the documents' proportions a kept lap needs: their top shares, made on
  # the workers; the K x n matrices were 8 MB per 1,000 documents at K = 1000)
  top <- attr(keep, "top")
  for (i in seq_along(rounds)) {
    round <- rounds[[i]]
    runner <- shard_runners(ex$owner[round], ex$workers)
    payloads <- lapply(seq_len(ex$workers), function(w) {
      mine <- which(runner == w)
      per <- lapply(round[mine], function(b) {
        s <- lda_batch_seed(control$seed, lap, b)
        if (is.null(keep)) {
          attr(s, "doc_topic") <- FALSE
        } else if (!is.null(top)) {
          attr(s, "top_share") <- top
        }
        s
      })
      # (the documents of its batches that another worker holds, without
      # the corpus's terms: the worker's local step reads the batch in its
      # columns, batch_in_columns())
      away <- round[mine][ex$owner[round[mine]] != w]
      moved <- stats::setNames(lapply(away, function(b) batch_without_terms(ex$get_batch(b))),
                               away)
      wire(list(token = ex$token, id = c(lap, i), round = round, per = per, t = t,
                runner = runner, moved = moved))
    })
    res <- shard_calls(ex, seq_len(ex$workers), payloads, "shard_worker_round", caller_call())
    sent <- sent + sum(lengths(payloads))
    received <- received + sum(lengths(res))
    res <- lapply(res, unserialize)
    # (what the workers sent each other; each message is counted once)
    for (w in seq_len(ex$workers)) between <- between + res[[w]]$sent
    meta <- res[[1L]]$meta
    if (!all(vapply(res, function(r) identical(r$meta, meta), TRUE))) {
      abort("internal error: the workers' topic totals differ after a round.", "internal")
    }
    if (!is.null(keep)) {
      for (w in seq_len(ex$workers)) {
        mine <- round[runner == w]
        for (j in seq_along(mine)) keep(res[[w]]$results[[j]], mine[j])
      }
    }
    t <- t + length(round)
    rho <- res[[1L]]$rho
    res <- NULL
    done <- done + length(round)
    if (!is.null(within)) {
      # (a promise: the columns are gathered only when within() scores)
      within(lda_shard_within(state, ex, meta, t, rho, control, function(b) {
        received <<- received + b
      }), lap, done, length(visit))
    }
  }
  if (!is.null(meta)) {
    end <- lda_shard_lap_end(state, ex, meta, t, rho, control)
    state <- end$state
    received <- received + end$received
  }
  list(state = state,
       extras = list(restart_accept = NA_real_, bytes_sent = sent, bytes_received = received,
                     bytes_between_workers = between))
}

# Sends each worker its columns of the lap's store (and what a local step
# reads of the state besides the topics). A new fit's first lap has no
# store yet: its first round's local steps read the dense start (and its
# totals) as they do without a cluster, and the first global step makes
# the store of it (engine$shard$dense(), $store()); so each worker gets
# its columns of the dense start, with the store's meta, and turns them
# into the store's own columns after the first round's local steps.
# Returns list(state: with the lap's store, sent: the bytes sent).
lda_shard_lap_start <- function(ex, state, control) {
  sh <- lda_engine(control$local)$shard
  W <- ex$workers
  dense <- sh$dense(state)
  cols <- NULL
  if (!is.null(dense)) {
    # (the columns first: the store may be made of the start's table in place)
    cols <- lapply(seq_len(W), function(w) lda_shard_take(dense$lambda, W, w))
    dense$lambda <- NULL
  }
  state <- sh$store(state, control)
  st <- state$topics$store
  # The workers still hold the columns the last lap left them: the lap then
  # starts from the store made of those very columns (lda_shard_lap_end()),
  # unless something between the laps changed the topics, and every change
  # there (re-seeding, a learned eta) goes through the dense topics and
  # drops the store (lda_train(): between()), which `dense` sees. A store
  # whose meta (step count and every total) is the one the workers hold is
  # theirs, and nothing is sent.
  held <- ex$shard$held$meta
  if (is.null(dense) && !is.null(held) && identical(held, st$meta)) {
    return(list(state = state, sent = 0))
  }
  ex$shard$held$meta <- NULL
  view <- lda_local_view(state)
  view$topics$store <- NULL
  view$topics$lambda <- NULL
  shared <- shared_for_workers(list(state = view, control = control))
  payloads <- lapply(seq_len(W), function(w) {
    wire(list(token = ex$token,
              X = if (!is.null(cols)) cols[[w]] else lda_shard_take(st$X, W, w),
              meta = st$meta + 0, eta = st$eta, dense_tot = dense$tot, shared = shared))
  })
  cols <- NULL
  shard_calls(ex, seq_len(W), payloads, "shard_worker_lap_start", caller_call())
  list(state = state, sent = sum(lengths(payloads)))
}

# The workers' columns put back into the lap's store (its own copy,
# lda_store_lap_start()), with the round's last meta; the state as SCVB0's
# global step leaves it (t, totals, step size). Returns list(state,
# received: the bytes the workers sent).
lda_shard_lap_end <- function(state, ex, meta, t, rho, control) {
  shards <- shard_calls(ex, seq_len(ex$workers),
                        rep(list(wire(list(token = ex$token))), ex$workers),
                        "shard_worker_columns", caller_call())
  received <- sum(lengths(shards))
  # In place, into the store itself (the lap's own): no second binding of
  # the store. Modifying a copy of its list (st <- state$topics$store;
  # st$meta[] <- meta) copies the list, and its table, then held by two
  # lists, stays shared for R: the end of training then copied the whole
  # table to make the fit's lambda instead of using it (2.8 s of a 10 s fit
  # over 10,000 Wikipedia paragraphs at K = 1000).
  for (w in seq_len(ex$workers)) {
    .Call(ffi_lda_shard_put, state$topics$store$X, unserialize(shards[[w]]), ex$workers, w - 1L)
    shards[w] <- list(NULL)
  }
  .Call(ffi_lda_shard_meta, state$topics$store$meta, meta)
  ex$shard$held$meta <- meta + 0
  list(state = lda_engine(control$local)$shard$after(state, t, rho), received = received)
}

# The state within a lap (for a held-out score, lda_lap(within = )): the
# workers' columns gathered into a new store, the lap's own left as it is;
# count(bytes) adds the bytes received to the lap's.
lda_shard_within <- function(state, ex, meta, t, rho, control, count) {
  state$topics$store <- lda_store_copy(state$topics$store)
  end <- lda_shard_lap_end(state, ex, meta, t, rho, control)
  ex$shard$held$meta <- NULL
  count(end$received)
  end$state
}

# ---- the workers' side ----------------------------------------------------------
#
# A worker's part of a sharded fit lives in the namespace's worker_store
# (R/executor.R) under "<token>:shard", an environment: its sockets, its
# columns X and meta, the words it owns of each batch, and the lap's state
# and control.

shard_env <- function(token) {
  key <- paste0(token, ":shard")
  e <- get0(key, envir = worker_store, inherits = FALSE)
  if (is.null(e)) {
    e <- new.env(parent = emptyenv())
    e$inbox <- list()
    assign(key, e, envir = worker_store)
  }
  e
}

# Closes a fit's sockets on this worker and forgets its columns
# (cluster_worker_free()).
shard_free <- function(token) {
  key <- paste0(token, ":shard")
  e <- get0(key, envir = worker_store, inherits = FALSE)
  if (is.null(e)) return(invisible())
  for (s in c(list(e$pull), e$push)) if (!is.null(s)) try(close(s), silent = TRUE)
  rm(list = key, envir = worker_store)
  invisible()
}

shard_worker_listen <- function(token, listen, host) {
  m <- shard_env(token)
  m$pull <- nanonext::socket("pull", listen = sprintf("tcp://%s:0", listen))
  port <- nanonext::opt(m$pull$listener[[1L]], "tcp-bound-port")
  sprintf("tcp://%s:%d", host, port)
}

shard_worker_dial <- function(token, rank, urls, own, V, limit) {
  m <- shard_env(token)
  m$rank <- rank
  m$W <- length(urls)
  m$own <- own
  m$V <- V
  m$limit <- limit
  m$push <- lapply(seq_along(urls), function(w) {
    if (w == rank) NULL else nanonext::socket("push", dial = urls[w])
  })
  TRUE
}

# (dense_tot: NULL, or the totals of a dense start whose columns X are:
# lda_shard_lap_start())
shard_worker_lap_start <- function(token, X, meta, eta, dense_tot, shared) {
  m <- shard_env(token)
  m$X <- lda_give_up(.Call(ffi_lda_shard_columns, X))
  m$meta <- meta + 0
  m$eta <- eta
  m$dense_tot <- dense_tot
  m$shared <- shared
  m$inbox <- list()
  TRUE
}

# A dense start's columns turned into the store's (X = lambda - eta, as
# the whole table's store is made: ffi_lda_store_new), in place; the meta
# is the master's.
shard_worker_store <- function(m) {
  st <- .Call(ffi_lda_store_new, m$X,
              list(tot = double(nrow(m$X)), eta = m$eta, t = 0, in_place = TRUE))
  m$X <- st$X
  m$dense_tot <- NULL
  invisible()
}

shard_worker_columns <- function(token) lda_shard_take(shard_env(token)$X, 1L, 1L)

# Sends msg (a list, serialised once) to worker w; returns the pending send
# with its byte count.
shard_send <- function(m, w, msg) {
  raw <- wire(msg)
  list(aio = nanonext::send_aio(m$push[[w]], raw, mode = "raw"), bytes = length(raw))
}

# Waits until the sends are done (their buffers may then go).
shard_sent <- function(sends) {
  for (s in sends) {
    nanonext::call_aio(s$aio)
    if (!identical(as.integer(s$aio$result), 0L)) {
      stop(sprintf("a message to another worker was not sent (%s)", format(s$aio$result)),
           call. = FALSE)
    }
  }
  sum(vapply(sends, function(s) s$bytes, 0))
}

# Receives the messages of `kind` in round `id` from the workers `from`,
# keeping other messages for later; returns them by sender, with the bytes
# received. Stops on an abort message from the master, or when nothing came
# for m$limit seconds.
shard_receive <- function(m, id, kind, from) {
  key <- function(id, kind, f) paste(c(id, kind, f), collapse = ":")
  want <- vapply(from, function(f) key(id, kind, f), "")
  bytes <- 0
  last <- proc.time()[["elapsed"]]
  while (!all(want %in% names(m$inbox))) {
    r <- nanonext::recv(m$pull, mode = "raw", block = 1000L)
    if (nanonext::is_error_value(r)) {
      if (proc.time()[["elapsed"]] - last > m$limit) {
        stop(sprintf("no message from the other workers within %g seconds (`task_timeout`)",
                     m$limit), call. = FALSE)
      }
      next
    }
    last <- proc.time()[["elapsed"]]
    bytes <- bytes + length(r)
    msg <- unserialize(r)
    if (identical(msg$kind, "abort")) {
      stop("another worker failed; this round was stopped", call. = FALSE)
    }
    m$inbox[[key(msg$id, msg$kind, msg$from)]] <- msg
  }
  out <- m$inbox[want]
  names(out) <- as.character(from)
  m$inbox[want] <- NULL
  list(msgs = out, bytes = bytes)
}

# A worker's round: send the columns it owns to the round's runners
# (`runner`: the worker that runs each batch), run its own batches on the
# columns it receives (`moved`: those of its batches that another worker
# holds, named by batch), send each owner its part of the summaries, and
# apply the round's steps to its columns in order.
shard_worker_round <- function(token, id, round, per, t, runner, moved) {
  m <- shard_env(token)
  me <- m$rank
  W <- m$W
  runners <- unique(runner)
  K <- nrow(m$X)
  sends <- list()
  # 1. each runner of the round gets this owner's columns of its words (as
  # their entries other than +0 where that is smaller: lda_columns_take())
  mine_words <- integer(0)
  for (q in runners) {
    words <- round_columns(m$own[round[runner == q]]) # (0-based columns of this owner)
    if (q == me) {
      mine_words <- as.integer(words + 1L)
    } else {
      sends[[length(sends) + 1L]] <- shard_send(m, q, list(
        kind = "columns", id = id, from = me, cols = lda_columns_take(m$X, words + 1L)))
    }
  }
  received <- 0
  mine <- which(runner == me)
  results <- list()
  parts <- NULL
  store <- get(token, envir = worker_store)
  for (b in names(moved)) {
    i <- as.integer(b)
    store$batches[[i]] <- moved[[b]]
    store$cols[[i]] <- batch_columns(moved[[b]])
  }
  moved <- NULL
  control <- m$shared$control
  engine <- lda_engine(control$local)
  if (length(mine)) {
    got <- shard_receive(m, id, "columns", setdiff(seq_len(W), me))
    received <- received + got$bytes
    # 2. the local steps on the columns U of this worker's batches of the
    # round, each owner's in the order of its columns
    U <- round_columns(lapply(store$cols[round[mine]], function(cl) cl$vocab))
    # (in C, each column written once: R's matrix(0, ...) and column
    # assignments took as long as the local step itself when the columns
    # come as their entries other than +0)
    by <- shard_owner(U, W)
    from <- setdiff(unique(by), me)
    XU <- .Call(ffi_lda_shard_gather, length(U), m$X, mine_words, which(by == me),
                lapply(from, function(o) got$msgs[[as.character(o)]]$cols),
                lapply(from, function(o) which(by == o)))
    got <- NULL
    shared <- m$shared
    shared$state$t <- t
    if (is.null(m$dense_tot)) {
      shared$state$topics$store <- list(X = XU, meta = m$meta + 0, eta = m$eta, V = m$V)
    } else {
      # (a new fit's first round: the dense start, as lda_columns_cvb0() gives it)
      shared$state$topics$lambda <- XU
      shared$state$tot <- m$dense_tot
      shared$state$tot_t <- t
    }
    out <- run_batches(lda_batch_step, length(mine),
                       function(i) batch_in_columns(store$batches[[round[mine[i]]]],
                                                    store$cols[[round[mine[i]]]], U),
                       per, shared, "Matrix")
    # 3. each summary's step: its size, the row sums of the whole summary
    # (in word order) and each owner's part
    parts <- vector("list", W)
    for (j in seq_along(mine)) {
      res <- lda_columns_result(out[[j]], U, m$V)
      pos <- mine[j]
      step <- engine$shard$step(shared$state, res, control, t + pos - 1, K)
      S <- step$summary
      step$summary <- NULL
      step$ssum <- .Call(ffi_lda_summary_rowsums, S, K)
      step$pos <- pos
      by_owner <- .Call(ffi_lda_shard_split, S, K, W)
      for (o in seq_len(W)) {
        parts[[o]][[length(parts[[o]]) + 1L]] <- c(step, list(part = by_owner[[o]]))
      }
      res$summary <- NULL
      top <- attr(per[[j]], "top_share")
      results[[j]] <- if (is.null(top)) res else lda_result_top_share(res, top)
      out[j] <- list(NULL)
    }
    for (o in setdiff(seq_len(W), me)) {
      sends[[length(sends) + 1L]] <- shard_send(m, o, list(kind = "summaries", id = id,
                                                           from = me, steps = parts[[o]]))
    }
  }
  # 4. every runner's steps for this owner's columns, in the round's order
  # (after a new fit's first round has read the dense start, its store)
  if (!is.null(m$dense_tot)) shard_worker_store(m)
  others <- setdiff(runners, me)
  steps <- if (length(mine)) parts[[me]] else list()
  if (length(others)) {
    got <- shard_receive(m, id, "summaries", others)
    received <- received + got$bytes
    for (g in got$msgs) steps <- c(steps, g$steps)
  }
  steps <- steps[order(vapply(steps, function(s) s$pos, 0))]
  if (length(steps) != length(round)) {
    stop("internal error: a round's steps are missing", call. = FALSE)
  }
  threads <- if (is.null(control$threads)) 1L else as.integer(control$threads)
  for (s in steps) {
    .Call(ffi_lda_store_update_owner, m$X, m$meta, s$part$words, s$part,
          list(rho = s$rho, mult = s$mult, rescale_below = s$rescale_below, t = s$t,
               threads = threads, ssum = s$ssum))
  }
  sent <- shard_sent(sends)
  list(results = results, meta = m$meta + 0, rho = if (length(steps)) steps[[length(steps)]]$rho,
       sent = sent, received = received)
}

# A summary over the whole vocabulary's words (0-based, increasing: dense
# list(words, x) or sparse list(words, p, k, v)) cut by owner: W parts,
# owner o's with its words as its own columns (shard_column()). The
# reference of ffi_lda_shard_split() (src/executor-sharded-ffi.c), which
# the workers call: this one's indexing took 0.8 s of a worker's 10 s over
# 10,000 Wikipedia paragraphs at K = 1000.
shard_split_summary_r <- function(S, K, W) {
  by <- shard_owner(S$words + 1L, W)
  lapply(seq_len(W), function(r) {
    at <- which(by == r)
    words <- shard_column(S$words[at] + 1L, W)
    if (!is.null(S$p)) {
      n <- S$p[at + 1L] - S$p[at]
      e <- if (length(at)) sequence(n, from = S$p[at] + 1L) else integer(0)
      list(words = words, p = c(0L, as.integer(cumsum(n))), k = S$k[e], v = S$v[e])
    } else {
      x <- S$x
      idx <- if (length(at)) sequence(rep.int(K, length(at)), from = (at - 1L) * K + 1L) else integer(0)
      list(words = words, x = x[idx])
    }
  })
}
