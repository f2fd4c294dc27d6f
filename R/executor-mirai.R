# Persistent workers over mirai daemons: the transport under
# `cluster = sparsevi_workers(...)` (the executor itself, its rounds and its
# byte counts, is R/executor.R).
#
# Affinity: the executor places each batch once on the worker that owns it
# and later sends that worker only the globals of a round, so every call
# for worker w must run on the very process that holds w's batches. A
# mirai compute profile with several daemons gives no such guarantee (tasks
# go to whichever daemon is free, as with mirai::make_cluster(), whose nodes
# share one profile). Here each worker is a compute profile of its own with
# one daemon (mirai::daemons(1, dispatcher = FALSE, .compute = <profile>)):
# every task sent to that profile runs on that daemon, as mirai documents
# for one-daemon profiles (?mirai::with_daemons). Without a dispatcher the
# host talks to the daemon directly and no queueing thread stands between
# them; each worker has at most one task at a time anyway.
#
# Failures: a daemon that dies during a task resolves it to mirai's error
# value 19 (connection reset); a task sent to a profile with no connected
# daemon would wait for one to connect, so every call first checks that
# the worker's daemon is still connected (mirai::status()).
#
# The daemons evaluate with mirai's cleanup (their global environment is
# reset after each task); the batches are kept in the sparsevi namespace
# (worker_store, R/executor.R), which cleanup leaves alone, under the key of
# each fit, freed when the fit ends.

#' Persistent workers for training, over mirai daemons
#'
#' Starts `n` worker processes that fits run their local steps on, passed as
#' the `cluster` argument of [fit_lda()], [fit_mixture()], [fit_vdp()] and
#' the [update()] methods. Each worker keeps the batches of a fit placed on
#' it for the whole fit: every round it receives only the global parameters
#' (for a topic model, only the topic columns of its batches' words) and
#' returns the batch summaries, as with a `parallel` cluster (see
#' [sparsevi_cluster]); with `shard_topics` (the default) the workers of a
#' fit of the default engine keep the topics themselves and send each
#' other the columns and summaries of each round. The same workers serve any number of fits, one after
#' another: each fit stores its batches under a key of its own and frees them
#' when it ends. Call `close()` on the object to stop the workers.
#'
#' The workers are daemons of the \pkg{mirai} package (which must be
#' installed, here and on every host), one mirai compute profile per worker,
#' so that every task for a worker reaches the process that holds its
#' batches. With `url = NULL` they run on this machine. With `url`, each
#' worker listens at its own address for a daemon to dial in: give `n` URLs
#' (e.g. `mirai::host_url(port = 5555 + 0:(n - 1))`) or one whose port is 0
#' (a free port for each). `remote` then starts the daemons: a launch
#' configuration (`mirai::ssh_config()` for hosts reached by ssh,
#' `mirai::cluster_config()` for Slurm, SGE, PBS or LSF,
#' `mirai::remote_config()`), used once per worker, or a list of `n`
#' configurations, one per worker (e.g. one `ssh_config()` per host). Without
#' `remote`, give fixed ports and start one daemon for each URL yourself
#' within `timeout` seconds, e.g. on a host
#' `Rscript -e 'mirai::daemon("tcp://head:5555", dispatcher = FALSE)'`.
#' The workers must have the same version of sparsevi as this session; it
#' is checked when they connect. Workers on this machine start with R's
#' vector heap collected first at 256 MB (the environment variable
#' `R_VSIZE`, see [base::Memory]; a value set in this session's environment is
#' kept): a worker's rounds allocate and drop many large messages, and
#' with R's default it spends much of its time collecting garbage. Daemons
#' started by `remote` or by hand take the `R_VSIZE` of their own hosts.
#' Workers on this machine also start with `OMP_WAIT_POLICY=passive` (unless
#' this session's environment sets it): they share its cores, and with
#' `threads` above 1 their waiting threads then sleep instead of spinning on
#' cores the others need ([sparsevi_threads()], "Threads on a busy machine").
#' On Linux every worker also keeps the memory it frees for its next rounds
#' (blocks of up to 32 MB from its heap, which it shrinks only above 1 GB
#' free), instead of taking new pages from the system for each message.
#'
#' A fit on the workers equals the fit without them with the same `sync`
#' (batches per round): set `sync = length(workers)` to run a round's
#' batches in parallel. A worker that fails or whose daemon dies gives an
#' error of class `sparsevi_error_worker` naming it, whose `fit` field holds
#' the last completed model; the trace records the bytes sent and received
#' per lap.
#'
#' @param n Number of workers.
#' @param url `NULL` for workers on this machine, or the URLs at which the
#'   workers listen for their daemons: `n` of them, or with `remote` one
#'   whose port is 0.
#' @param remote `NULL`, a mirai launch configuration used for each worker,
#'   or a list of `n` of them (only with `url`).
#' @param ... For `sparsevi_workers()`: passed to [mirai::daemons()] for
#'   each worker (the daemons' settings, e.g. `output = TRUE`, and `tls`).
#'   Not used by `close()`.
#' @param timeout Seconds to wait for every worker's daemon to connect.
#' @param shard_topics Whether the workers keep a topic model's topics
#'   themselves, each the columns of a share of the words (`TRUE`, the
#'   default), when its engine can train so (the default engine, SCVB0,
#'   except with `sparse_rest = "shape"`). The workers then exchange
#'   topic columns and summaries with each other directly, each on its own
#'   connection, instead of every round going through this session: at
#'   the start and end of each lap this session sends the topics out and
#'   takes them back. With `FALSE`, or for other engines, this session
#'   keeps the topics and sends each worker the columns it needs every
#'   round. Columns travel as their entries other than zero when that
#'   is smaller: the topics of a fit with `L` and
#'   `sparse_rest = "renormalise"` or `"sample"` are mostly zero, and such
#'   fits move a small share of the dense summaries' bytes. The fit is the
#'   same either way. The workers must be able to
#'   connect to each other (on other hosts: any TCP port of theirs).
#' @param task_timeout Seconds a worker may take over one task (a round's
#'   local step, placing its batches) before the fit stops with an error of
#'   class `sparsevi_error_worker` that keeps the last completed model;
#'   default `Inf`, wait for ever. A worker whose host hangs with its
#'   connection open (a frozen node, a suspended job) is otherwise waited
#'   for without end; a dead one is found without it. Set it well above a
#'   round's time: a worker that timed out may still be busy, so `close()`
#'   the workers and start new ones.
#' @return An object of class `sparsevi_workers`: a list with one element
#'   per worker (its profile, address, host and process id). `close()` stops
#'   the workers and returns the object invisibly.
#' @seealso [sparsevi_cluster] for `parallel` clusters and future plans.
#' @examples
#' \dontrun{
#' workers <- sparsevi_workers(2)
#' fit <- fit_lda(corpus, K = 100, n_batches = 8, sync = 2, cluster = workers)
#' fit <- update(fit, corpus, passes = 3, cluster = workers) # the same workers
#' close(workers)
#'
#' # one worker on each of two hosts reached by ssh
#' workers <- sparsevi_workers(2, url = mirai::host_url(port = 0),
#'                             remote = lapply(c("ssh://node1", "ssh://node2"),
#'                                             mirai::ssh_config))
#' }
#' @export
sparsevi_workers <- function(n = 2L, url = NULL, remote = NULL, ..., timeout = 60,
                             task_timeout = Inf, shard_topics = TRUE) {
  if (!requireNamespace("mirai", quietly = TRUE)) {
    abort("sparsevi_workers() needs the mirai package: install it, or pass a cluster made by parallel::makePSOCKcluster().",
          "argument")
  }
  check_count(n, "n", min = 1, max = 10000)
  n <- as.integer(n)
  check_positive(timeout, "timeout")
  if (!identical(task_timeout, Inf)) check_positive(task_timeout, "task_timeout")
  shard_topics <- check_flag(shard_topics, "shard_topics")
  if (!is.null(url)) {
    if (!is.character(url) || !(length(url) %in% c(1L, n)) || anyNA(url)) {
      abort(sprintf("`url` must be NULL, one URL or %d URLs (one per worker), not %s.",
                    n, describe(url)), "argument")
    }
    url <- rep_len(url, n)
    if (is.null(remote) && any(grepl(":0(/.*)?$", url))) {
      abort("A `url` with port 0 listens at a port the daemons cannot know: give fixed ports, or `remote` to start the daemons.",
            "argument")
    }
  }
  if (!is.null(remote)) {
    if (is.null(url)) {
      abort("`remote` starts daemons that dial in to `url`: give `url` too (e.g. mirai::host_url(port = 0)).",
            "argument")
    }
    one <- function(r) is.list(r) && !is.null(names(r)) && any(c("command", "type") %in% names(r))
    if (one(remote)) {
      remote <- rep(list(remote), n)
    } else if (!is.list(remote) || length(remote) != n || !all(vapply(remote, one, TRUE))) {
      abort(sprintf("`remote` must be a mirai launch configuration (mirai::ssh_config(), mirai::cluster_config(), mirai::remote_config()) or a list of %d of them, not %s.",
                    n, describe(remote)), "argument")
    }
  }
  workers_id$n <- workers_id$n + 1L
  profiles <- sprintf("sparsevi_%d_%d_%d", Sys.getpid(), workers_id$n, seq_len(n))
  state <- new.env(parent = emptyenv())
  state$open <- TRUE
  state$task_timeout <- as.double(task_timeout)
  state$shard_topics <- shard_topics
  # (workers on this machine talk to each other over the loopback)
  state$local <- is.null(url)
  out <- structure(lapply(profiles, function(p) list(profile = p)), class = "sparsevi_workers",
                   state = state)
  ok <- FALSE
  on.exit(if (!ok) close(out), add = TRUE)
  for (i in seq_len(n)) {
    if (is.null(url)) {
      # (all the daemons start at once: mirai::daemons(1) would wait for each
      # to connect before the next starts)
      mirai::daemons(url = mirai::local_url(), dispatcher = FALSE, ..., .compute = profiles[i])
      launch_local_worker(profiles[i])
    } else {
      mirai::daemons(1L, url = url[i], remote = if (!is.null(remote)) remote[[i]],
                     dispatcher = FALSE, ..., .compute = profiles[i])
    }
  }
  # the daemons dial in (those on this machine then take this session's
  # library path)
  deadline <- Sys.time() + timeout
  for (i in seq_len(n)) {
    while (!mirai_connected(profiles[i])) {
      if (Sys.time() > deadline) {
        abort(sprintf("Worker %d did not connect within %g seconds (it listens at %s). Check that the daemons were started and can reach this machine.",
                      i, timeout, mirai_url(profiles[i])), "worker", worker = i)
      }
      Sys.sleep(0.05)
    }
  }
  lib <- if (is.null(url)) .libPaths()
  version <- as.character(utils::packageVersion("sparsevi"))
  ms <- lapply(profiles, function(p) {
    mirai::mirai({
      if (!is.null(lib)) .libPaths(lib)
      get("worker_keep_memory", envir = loadNamespace("sparsevi"))()
      list(version = as.character(utils::packageVersion("sparsevi")),
           host = Sys.info()[["nodename"]], pid = Sys.getpid())
    }, lib = lib, .compute = p)
  })
  for (i in seq_len(n)) {
    r <- ms[[i]][]
    if (mirai::is_error_value(r)) {
      abort(sprintf("Worker %d could not load sparsevi: %s.", i, mirai_error_text(r)),
            "worker", worker = i)
    }
    if (!identical(r$version, version)) {
      abort(sprintf("Worker %d (%s) has sparsevi %s, this session %s: install the same version on every host.",
                    i, r$host, r$version, version), "worker", worker = i)
    }
    out[[i]] <- list(profile = profiles[i], url = mirai_url(profiles[i]), host = r$host,
                     pid = r$pid)
  }
  ok <- TRUE
  out
}

# Starts a daemon on this machine for a worker's profile, with the
# environment variables of worker_env that this session's environment does
# not set itself (the daemon inherits them; R and its OpenMP runtime read
# them as the daemon starts):
# - R_VSIZE: R's vector heap first collected at 256 MB instead of R's
#   default 6 MB (?Memory). A worker's rounds allocate and drop messages the
#   size of its batches' topic columns; with the default trigger R collects
#   every few of them, and each collection marks every object of the loaded
#   namespaces (1.5 million with Matrix). Measured on nips_f20 at K = 100
#   (inst/bench/cluster.R): 0.5-0.7 s of collections per worker in a 2.2 s
#   fit, none with 256 MB.
# - OMP_WAIT_POLICY: workers on one machine share its cores with each other
#   and with this session, and with `threads` above 1 each one's waiting
#   OpenMP threads would spin on cores the others need (?sparsevi_threads:
#   beside a busy program two threads ran the default call at 0.33x-0.60x
#   of one, at 0.88x-1.08x with "passive"; inst/bench/results/scale.txt).
#   The LDA engines' local steps have the package's own threads, which
#   sleep anyway; the scores, starts and mixtures are OpenMP's.
launch_local_worker <- function(profile) {
  set <- names(worker_env)[is.na(Sys.getenv(names(worker_env), unset = NA))]
  on.exit(if (length(set)) Sys.unsetenv(set), add = TRUE)
  if (length(set)) do.call(Sys.setenv, as.list(worker_env[set]))
  mirai::launch_local(1L, .compute = profile)
}
worker_env <- c(R_VSIZE = "256M", OMP_WAIT_POLICY = "passive")

# A worker process keeps the memory it frees for its next rounds instead of
# giving it back to the system at once (glibc's malloc; elsewhere nothing
# changes): a round's messages are tens of MB at K = 1000, and on new pages
# each costs page faults and zeroing (src/executor-mirai-ffi.c). Measured
# on 10,000 Wikipedia paragraphs at K = 1000, two workers, the same build
# with and without (inst/bench/results/cluster.txt, reading of 19:55): fits
# of 14.7-17.3 s against 18.6-19.4 s, the workers' system time 1.9-2.5 s
# against 2.6-5.2 s. Called on each worker as it starts, never in the
# user's session. Returns whether it could.
worker_keep_memory <- function() .Call(ffi_worker_keep_memory)

# Numbers the sets of workers of this session (their profiles' names).
workers_id <- new.env(parent = emptyenv())
workers_id$n <- 0L

#' @rdname sparsevi_workers
#' @param con A `sparsevi_workers` object.
#' @export
close.sparsevi_workers <- function(con, ...) {
  state <- attr(con, "state")
  if (isTRUE(state$open)) {
    state$open <- FALSE
    for (w in con) try(mirai::daemons(0L, .compute = w$profile), silent = TRUE)
  }
  invisible(con)
}

#' @export
print.sparsevi_workers <- function(x, ...) {
  open <- isTRUE(attr(x, "state")$open)
  limit <- attr(x, "state")$task_timeout
  cat(sprintf("<sparsevi_workers> %d worker(s) over mirai daemons%s%s%s\n", length(x),
              if (isTRUE(attr(x, "state")$shard_topics)) ", topics sharded by word" else "",
              if (!is.null(limit) && is.finite(limit)) sprintf(", task timeout %g s", limit)
              else "",
              if (open) "" else " (closed)"))
  if (open) {
    for (i in seq_along(x)) {
      w <- x[[i]]
      cat(sprintf("  %d: %s, process %s, %s (profile %s)\n", i,
                  if (is.null(w$host)) "?" else w$host,
                  if (is.null(w$pid)) "?" else format(w$pid),
                  if (mirai_connected(w$profile)) "connected" else "NOT connected",
                  w$profile))
    }
  }
  invisible(x)
}

# check_cluster() of a sparsevi_workers object: open, with mirai here.
check_workers <- function(cluster, call = caller_call()) {
  if (!isTRUE(attr(cluster, "state")$open)) {
    abort("These workers were closed: start new ones with sparsevi_workers().", "argument",
          call = call)
  }
  cluster
}

mirai_connected <- function(profile) {
  s <- tryCatch(mirai::status(.compute = profile), error = function(e) NULL)
  is.list(s) && is.numeric(s$connections) && isTRUE(s$connections >= 1)
}

mirai_url <- function(profile) {
  s <- tryCatch(mirai::status(.compute = profile), error = function(e) NULL)
  if (is.list(s) && is.character(s$daemons)) s$daemons[1L] else "an unknown address"
}

# What a failed task says: the worker's R error, or how its connection ended.
mirai_error_text <- function(r) {
  if (mirai::is_mirai_error(r)) return(conditionMessage(r))
  code <- suppressWarnings(as.integer(unclass(r)))
  if (identical(code, 19L)) return("its connection was reset (the worker's process died or was stopped)")
  sprintf("mirai error value %s", format(code))
}

# Runs the sparsevi function `step` on the serialised arguments
# payloads[[j]] on worker ws[j] of `workers`, all at once. Returns the raw
# results, or an error condition whose `worker` (an index into ws) failed.
mirai_calls <- function(workers, ws, payloads, step) {
  fail <- function(j, what) {
    structure(class = c("error", "condition"),
              list(message = what, call = NULL, worker = j))
  }
  for (j in seq_along(ws)) {
    if (!mirai_connected(workers[[ws[j]]]$profile)) {
      return(fail(j, "its daemon is not connected (the worker's process died or was stopped)"))
    }
  }
  ms <- vector("list", length(ws))
  for (j in seq_along(ws)) {
    payload <- payloads[[j]]
    ms[[j]] <- mirai::mirai(asNamespace("sparsevi")$cluster_dispatch_raw(payload, step),
                            payload = payload, step = step,
                            .compute = workers[[ws[j]]]$profile)
  }
  # the tasks were all sent at once: one deadline for them (task_timeout)
  limit <- attr(workers, "state")$task_timeout %||% Inf
  r <- mirai_wait(ms, lapply(workers[ws], function(w) w$profile),
                  proc.time()[["elapsed"]] + limit)
  if (identical(r$status, "disconnected")) {
    return(fail(r$which, "its daemon disconnected during the task (the worker's process died or was stopped)"))
  }
  if (identical(r$status, "timeout")) {
    return(fail(r$which, sprintf("it did not answer within %g seconds (`task_timeout` of sparsevi_workers()): its host may hang with the connection open, or a round takes longer; the worker may still be busy, so close() these workers and start new ones",
                                 limit)))
  }
  if (identical(r$status, "failed")) return(fail(r$which, mirai_error_text(r$values[[r$which]])))
  r$values
}

# Waits for the mirai `ms` (one per worker, of the compute profiles
# `profiles`) together: list(status, which, values), status "ok" (values:
# their results), "failed" when task `which` resolved to an error value
# (the others are not waited for), "disconnected" when the daemon of task `which` disconnected
# before it resolved, or "timeout" when task `which` is unresolved at
# `deadline` (elapsed seconds, proc.time()). All at once, not one after the
# other: workers that exchange messages with each other (sharded topics,
# R/executor-sharded.R) wait for a dead one, so the dead one must be seen
# while the others are still busy. (Waiting with m[] alone can wait for
# ever: a task whose daemon dies mid-task is not always resolved with an
# error value; the request stays queued for a daemon that will never come
# back.) Sleeps on the condition variable of a pending task's profile,
# which mirai signals when a task of that profile resolves, so the master
# takes no CPU while it waits (polling every millisecond took about a
# seventh of a core); each wait lasts at most 0.1 s, and the connections
# and the clock are checked about every quarter second. Where this mirai
# keeps no such variable, it polls every millisecond.
mirai_wait <- function(ms, profiles, deadline = Inf) {
  pending <- seq_along(ms)
  values <- vector("list", length(ms))
  cvs <- lapply(profiles, mirai_profile_cv)
  check_at <- proc.time()[["elapsed"]] + 0.25
  repeat {
    done <- pending[!vapply(ms[pending], mirai::unresolved, TRUE)]
    for (j in done) {
      values[j] <- list(ms[[j]]$data)
      # (a failed task ends the wait: the others may be waiting for it)
      if (mirai::is_error_value(values[[j]])) {
        return(list(status = "failed", which = j, values = values))
      }
    }
    pending <- setdiff(pending, done)
    if (!length(pending)) break
    cv <- cvs[[pending[1L]]]
    if (is.null(cv)) Sys.sleep(0.001) else nanonext::until(cv, 100L)
    if (proc.time()[["elapsed"]] >= check_at) {
      check_at <- proc.time()[["elapsed"]] + 0.25
      for (j in pending) {
        if (!mirai_connected(profiles[[j]])) {
          Sys.sleep(0.1)
          if (mirai::unresolved(ms[[j]])) {
            return(list(status = "disconnected", which = j, values = NULL))
          }
        }
      }
      if (proc.time()[["elapsed"]] > deadline) {
        late <- pending[vapply(ms[pending], mirai::unresolved, TRUE)]
        if (length(late)) return(list(status = "timeout", which = late[1L], values = NULL))
      }
    }
  }
  list(status = "ok", which = NA_integer_, values = values)
}

# The condition variable mirai signals when a task of compute profile
# `profile` resolves (each profile's own, made with its socket), or NULL
# when this version of mirai keeps none where we look.
mirai_profile_cv <- function(profile) {
  envs <- get0("..", envir = asNamespace("mirai"), inherits = FALSE)
  env <- if (is.environment(envs)) get0(profile, envir = envs, inherits = FALSE)
  cv <- if (is.environment(env)) get0("cv", envir = env, inherits = FALSE)
  if (inherits(cv, "conditionVariable")) cv
}
