# The executor of every fit's local steps, LDA and mixtures alike: in this
# process, on an R cluster (parallel::makePSOCKcluster(), including workers on
# other hosts), on persistent mirai workers (sparsevi_workers(),
# R/executor-mirai.R) or through a `future` plan. The loop is map-reduce over
# batches: each batch is sent once to the worker that owns it and stays there;
# every round the master sends the global parameters (once per worker), each
# worker runs the same registered C local step on its batches and returns only
# the batch summaries (sparse when L < K), and the master applies the global
# steps in batch order. The same rounds run without a cluster, so a fit on a
# cluster equals the fit without one.
#
# Columns: a topic model's batches are documents, and a local step reads only
# the topic columns of its batch's words. The words of each batch are known
# once, when the batches are placed (batch_columns()); each round a worker
# gets only the columns of the words of its batches of the round (their
# union U, with the totals of the whole table: lda_columns(), R/lda-store.R),
# runs its steps on its batches with their words renumbered into U, and
# returns summaries over U, which the master puts back in the whole
# vocabulary. Traffic per round is then O(K x the batches' vocabulary), not
# O(K V).
#
# Traffic: everything that crosses the wire is serialised once, by us, into a
# raw vector (native byte order, no XDR conversion of doubles), whose length is
# the byte count reported in the trace. The step a worker runs travels as the
# function itself (an LDA fit sends lda_batch_step) or, for older callers, as
# the name of a sparsevi function; a namespace function serialises by
# reference to its namespace, so the worker runs its own installed copy and
# no closure environment travels with it.
#
# Transports: a `parallel` cluster and sparsevi_workers() run the same
# executor (kind "cluster": batches placed once, the same payloads, the same
# byte counts); only the call that carries a payload to a worker and its
# result back differs (worker_calls()).
#
# Future plans (`cluster = "future"` or a plan object): a plan whose workers
# persist (multisession, cluster) runs on its underlying `parallel` cluster, so
# batches stay on the workers as above. Any other plan (sequential, multicore,
# callr, batchtools, ...) has no persistent worker identity: each round sends
# a worker's batches together with the global parameters as one future, so the
# traffic is then per round (the results are the same).

#' Training on a cluster or through a future plan
#'
#' The `cluster` argument of [fit_lda()], [fit_mixture()] and their
#' [update()] methods runs the local steps of each round of batches on other R
#' processes, on this machine or on others. It accepts:
#'
#' * a cluster from [parallel::makePSOCKcluster()] or [parallel::makeCluster()]
#'   (workers on this or other hosts, each with the same version of sparsevi
#'   installed). Each batch is sent once to the worker that owns it and stays
#'   there; every round the master sends the global parameters once to each
#'   worker of the round, and the workers return only their batch summaries
#'   (sparse when `L < K`). For a topic model a worker receives only the
#'   topic columns of the words its batches of the round contain (with the
#'   topics' totals), and its summaries cover only those words: the traffic
#'   of a round grows with the batches' vocabulary, not with the whole
#'   vocabulary (engines "vb", "ope" and "cvb0"; "gibbs" sends its sparse
#'   topics whole).
#' * workers from [sparsevi_workers()]: persistent worker processes over
#'   \pkg{mirai} daemons, on this machine, on hosts reached by ssh or started
#'   by a cluster scheduler (Slurm, SGE, PBS, LSF). Their batches are
#'   placed once, as on a `parallel` cluster, and they serve several fits in
#'   turn; `close()` stops them. For the default engine (SCVB0) they also
#'   keep the topics themselves, each worker the columns of a share of the
#'   words, and exchange columns and summaries with each other directly
#'   instead of through this session (`shard_topics` of
#'   [sparsevi_workers()]); other engines' rounds go as on a `parallel`
#'   cluster, with the same traffic.
#' * `"future"`: the current [future::plan()] (the \pkg{future} package must be
#'   installed). A plan whose workers persist (`future::multisession`,
#'   `future::cluster`) is run on its underlying `parallel` cluster, so batches
#'   stay on the workers exactly as above (its workers must be idle when the
#'   fit starts). Any other plan (`sequential`, `multicore`, `callr`,
#'   `batchtools`, ...) has no persistent workers: each round, a worker's
#'   batches travel with the global parameters as one future, so the traffic
#'   is then per round rather than once per fit.
#' * a plan object, e.g. `future::tweak(future::multisession, workers = 4)`:
#'   that plan is set for the fit only (its workers start and stop with the
#'   fit) and the previous plan is restored afterwards. To reuse workers over
#'   several fits, set the plan once with [future::plan()] and pass `"future"`.
#'
#' `sync` (batches per round) is part of the algorithm, not of the executor:
#' its default is 1 with or without a cluster, so that a fit on a cluster or
#' under any plan equals the fit without one (restarts included). With
#' `sync = 1` the workers take the batches one at a time; to run a round's
#' batches in parallel, set `sync` to the number of workers (for a future
#' plan, [future::nbrOfWorkers()]): the fit then equals the fit without a
#' cluster with that `sync`. A cluster given without `sync` says so in a
#' message of class `sparsevi_message_sync`. The trace records
#' `bytes_sent` and `bytes_received` per lap: the exact sizes of the
#' serialised messages this session sent to and received from the workers;
#' a topic model's trace also has `bytes_between_workers`, the bytes the
#' workers sent each other (workers that keep the topics, see
#' [sparsevi_workers()]; else 0). A worker that fails or dies gives an error of class
#' `sparsevi_error_worker` naming it, whose `fit` field holds the last
#' completed model.
#' @name sparsevi_cluster
#' @seealso [sparsevi_workers()]
#' @examples
#' sim <- simulate_lda(D = 40, V = 30, K = 3, seed = 1)
#' if (requireNamespace("future", quietly = TRUE)) {
#'   old <- future::plan(future::sequential)
#'   fit <- fit_lda(sim$dtm, K = 3, L = 2, n_batches = 2, passes = 2, seed = 1,
#'                  cluster = "future")
#'   future::plan(old)
#' }
#' \dontrun{
#' # two machines, two workers each (ssh access and sparsevi on both)
#' cl <- parallel::makePSOCKcluster(c("node1", "node1", "node2", "node2"))
#' fit <- fit_lda(corpus, K = 100, n_batches = 40, cluster = cl, sync = length(cl))
#' parallel::stopCluster(cl)
#' }
NULL

# Worker-side storage: batches by fit token. An environment in the namespace
# (mutable although the namespace is locked).
worker_store <- new.env(parent = emptyenv())
# Numbers the fits of this session that placed batches on workers.
fit_id <- new.env(parent = emptyenv())
fit_id$n <- 0L

check_cluster <- function(cluster, call = caller_call()) {
  if (is.null(cluster)) return(NULL)
  if (inherits(cluster, "sparsevi_future")) return(cluster)
  if (inherits(cluster, "sparsevi_workers")) return(check_workers(cluster, call = call))
  if (identical(cluster, "future") || (is.function(cluster) && inherits(cluster, "future"))) {
    return(future_cluster(cluster, call = call))
  }
  if (!inherits(cluster, "cluster") || length(cluster) < 1L) {
    abort(sprintf("`cluster` must be NULL, a cluster made by parallel::makePSOCKcluster() or parallel::makeCluster(), workers from sparsevi_workers(), \"future\" (the current future::plan()) or a future plan, not %s.",
                  describe(cluster)), "argument", call = call)
  }
  cluster
}

# `cluster = "future"` or a plan: a placeholder whose length is the number of
# workers; the plan is looked at again when the fit
# starts (new_executor()).
future_cluster <- function(spec, call = caller_call()) {
  if (!requireNamespace("future", quietly = TRUE)) {
    abort("`cluster = \"future\"` needs the future package: install it, or pass a cluster made by parallel::makePSOCKcluster().",
          "argument", call = call)
  }
  strategy <- if (is.character(spec)) NULL else spec
  W <- if (is.null(strategy)) future::nbrOfWorkers() else future::nbrOfWorkers(strategy)
  W <- if (is.finite(W) && W >= 1) as.integer(W) else 1L
  structure(vector("list", W), class = "sparsevi_future", strategy = strategy)
}

#' @export
print.sparsevi_future <- function(x, ...) {
  cat(sprintf("<sparsevi_future> %d worker(s) of %s\n", length(x),
              if (is.null(attr(x, "strategy"))) "the current future plan" else "a future plan"))
  invisible(x)
}

# The `parallel` cluster under the current future plan when its workers
# persist (multisession, cluster) and are all idle; NULL otherwise.
future_persistent_cluster <- function() {
  plan <- future::plan()
  if (!inherits(plan, "cluster")) return(NULL)
  # future's own record of the cluster it started: ClusterRegistry("get")
  # before future 1.40, clusterRegistry$getCluster() since (both internal:
  # without either, the round's batches travel with it)
  get <- function(name) tryCatch(utils::getFromNamespace(name, "future"), error = function(e) NULL)
  old_registry <- get("ClusterRegistry")
  new_registry <- get("clusterRegistry")
  cl <- if (is.function(old_registry)) {
    tryCatch(old_registry("get"), error = function(e) NULL)
  } else if (is.list(new_registry) && is.function(new_registry$getCluster)) {
    tryCatch(new_registry$getCluster(), error = function(e) NULL)
  }
  if (!inherits(cl, "cluster") || length(cl) < 1L) return(NULL)
  free <- tryCatch(future::nbrOfFreeWorkers(), error = function(e) 0)
  if (!is.finite(free) || free < length(cl)) return(NULL)
  cl
}

# The executor runs the local steps of a round of batches, here or on a
# cluster. `get_batch(b)` returns batch b (a corpus slice or rows of data);
# `sizes` counts the documents or points of each batch.
new_executor <- function(cluster, n_batches, get_batch, sizes, call = caller_call()) {
  if (is.null(cluster)) {
    return(list(kind = "local", get_batch = get_batch, sizes = sizes))
  }
  if (inherits(cluster, "sparsevi_future")) {
    return(new_future_executor(cluster, n_batches, get_batch, sizes, call = call))
  }
  W <- length(cluster)
  owner <- batch_owner(n_batches, W)
  # a name for this fit's batches on the workers (not drawn from the user's
  # RNG; the same workers may serve several fits, one after another)
  # (of fixed width: the bytes sent do not depend on how many fits ran
  # before this one)
  fit_id$n <- fit_id$n + 1L
  token <- sprintf("fit_%d_%09d_%.0f", Sys.getpid(), fit_id$n, as.numeric(Sys.time()) * 1e6)
  # (get_batch: a sharded lap sends a batch to a worker that does not hold
  # it, shard_runners())
  ex <- list(kind = "cluster", cluster = cluster, owner = owner, token = token,
             workers = W, sizes = sizes, get_batch = get_batch,
             transport = if (inherits(cluster, "sparsevi_workers")) "mirai" else "parallel")
  sent <- 0
  vocab <- vector("list", n_batches)
  for (w in seq_len(W)) {
    ids <- which(owner == w)
    batches <- lapply(ids, get_batch)
    # the words of each batch of documents, known once (the columns its
    # local steps read: executor_run(columns = ))
    vocab[ids] <- lapply(batches, function(b) batch_columns(b)$vocab)
    payload <- wire(c(list(token = token, ids = ids), batches_apart(batches)))
    batches <- NULL
    sent <- sent + length(payload)
    cluster_call(ex, w, "cluster_worker_init", payload, call = call)
  }
  if (!any(vapply(vocab, is.null, TRUE))) ex$vocab <- vocab
  ex$bytes_setup <- sent
  ex
}

# A worker's batches with their vocabulary apart, list(batches, terms): a
# fit's batches of documents share the corpus's terms, which would
# otherwise travel with each of them (the 129,289 of Wikipedia are 2 MB,
# a batch of 100 paragraphs 64 KB; 1.2 GB for the 600 batches of 60,000).
# `terms` is NULL, and the batches whole, unless every batch is a
# sparsevi_dtm with the same terms; a batch keeps its `vocab` slot, NULL.
# The worker puts the one copy back (cluster_worker_init()).
batches_apart <- function(batches) {
  whole <- list(batches = batches, terms = NULL)
  if (!length(batches) || !all(vapply(batches, inherits, TRUE, "sparsevi_dtm"))) return(whole)
  terms <- batches[[1L]]$vocab
  if (!all(vapply(batches, function(b) identical(b$vocab, terms), TRUE))) return(whole)
  list(batches = lapply(batches, batch_without_terms), terms = terms)
}
batch_without_terms <- function(batch) {
  batch["vocab"] <- list(NULL)
  batch
}

# The words of a batch of documents (a sparsevi_dtm): `vocab` its distinct
# words (1-based, increasing) and `local` each entry's word as a 0-based
# index into them (src/batch-words.c, the local steps' own helper); NULL for
# other batches (rows of a mixture's data).
batch_columns <- function(batch) {
  if (!inherits(batch, "sparsevi_dtm")) return(NULL)
  .Call(ffi_dtm_batch_words, batch$term)
}

# A batch with its words renumbered into the columns U (1-based, increasing,
# holding every word of the batch): what a local step reads with topics of
# those columns only. `cols` is batch_columns(batch). The vocabulary keeps
# only its length (the number of columns); its terms are never read there.
batch_in_columns <- function(batch, cols, U) {
  batch$term <- if (length(U) == length(cols$vocab)) cols$local else
    (match(cols$vocab, U) - 1L)[cols$local + 1L]
  batch$vocab <- character(length(U))
  batch
}

# The columns of a round's batches on one worker: the union of their words.
round_columns <- function(vocab) {
  if (length(vocab) == 1L) return(vocab[[1L]])
  sort.int(unique.default(unlist(vocab, use.names = FALSE)))
}

new_future_executor <- function(cluster, n_batches, get_batch, sizes, call = caller_call()) {
  strategy <- attr(cluster, "strategy")
  old_plan <- NULL
  if (!is.null(strategy)) old_plan <- future::plan(strategy)
  W <- length(cluster)
  cl <- future_persistent_cluster()
  if (!is.null(cl) && length(cl) == W) {
    ex <- tryCatch(new_executor(cl, n_batches, get_batch, sizes, call = call),
                   error = function(e) {
                     if (!is.null(old_plan)) future::plan(old_plan)
                     stop(e)
                   })
    ex$via_future <- TRUE
    ex$old_plan <- old_plan
    return(ex)
  }
  list(kind = "future", workers = W, owner = batch_owner(n_batches, W),
       get_batch = get_batch, sizes = sizes, old_plan = old_plan, bytes_setup = 0)
}

# Batch b belongs to worker (b - 1) mod W + 1.
batch_owner <- function(n_batches, W) {
  (seq_len(n_batches) - 1L) %% W + 1L
}

# Serialised once, in native byte order: the bytes that travel. The bytes of
# serialize(x, NULL, xdr = FALSE), written in C into a raw vector of their
# exact length (src/wire-ffi.c): R's serialize() grows its buffer as it
# writes and copies the result again; 90 MB of topic columns took 0.10-0.27 s
# that way and 0.06 s this way (inst/bench/results/scale.txt).
wire <- function(x) .Call(ffi_wire_serialize, x)

# A lossless compact form for the wire: a long double vector (or matrix)
# whose smallest value fills a good part of it (the eta of a memoized lambda
# = eta + S with a sparse S; the zeros of L-sparse document-topic counts)
# travels as that value, a bit mask of where it sits and the other values.
# Unpacking gives back the identical vector. Lists are packed element by
# element; other objects (S4 sparse matrices, data frames) travel as they are.
pack_doubles <- function(x, min_length = 1024L, min_fill = 0.1) {
  # (lists, and the topics object of a training state, R/lda-topics.R)
  if (is.list(x) && (!is.object(x) || inherits(x, "lda_topics"))) {
    x <- pack_columns(x)
    for (i in seq_along(x)) {
      if (!is.null(x[[i]])) x[i] <- list(pack_doubles(x[[i]], min_length, min_fill))
    }
    return(x)
  }
  if (!is.double(x) || is.object(x) || length(x) < min_length) return(x)
  # a quick look at 1,024 evenly spaced entries first: a table whose smallest
  # sampled value fills less than half of min_fill of the sample is sent as
  # it is, without the full scans (K x the batches' vocabulary doubles each
  # round); keeping a vector whole is always lossless
  look <- x[seq.int(1, length(x), length.out = 1024L)]
  if (anyNA(look) || sum(look == min(look)) < 0.5 * min_fill * 1024) return(x)
  # (in C: src/wire-ffi.c; NULL when the vector should travel whole: NA,
  # too little fill, or a zero fill with some -0 among it)
  p <- .Call(ffi_wire_pack, x, as.double(min_fill))
  if (is.null(p)) return(x)
  structure(list(n = as.double(length(x)), fill = p$fill, bits = p$bits, values = p$values,
                 attrs = attributes(x)),
            class = "sparsevi_packed")
}

unpack_doubles <- function(x) {
  if (inherits(x, "sparsevi_packed")) {
    out <- .Call(ffi_wire_unpack, as.double(x$n), x$fill, x$bits, x$values)
    attributes(out) <- x$attrs
    return(out)
  }
  if (is.list(x) && (!is.object(x) || inherits(x, "lda_topics"))) {
    for (i in seq_along(x)) {
      if (!is.null(x[[i]])) x[i] <- list(unpack_doubles(x[[i]]))
    }
    x <- unpack_columns(x)
  }
  x
}

# A sparse summary list(words, p, k, v, ...) (SCVB0's and OPE's, fit_lda(L =
# )) sends each full column (topics 0 .. n - 1, n >= 8: in SCVB0's shape
# form every word with K / L entries or more) without its topics: they are
# K 4-byte integers beside K 8-byte values. The column numbers travel as
# `k_full`; unpack_columns() puts the topics back, identical.
pack_columns <- function(x) {
  if (!is.integer(x[["p"]]) || !is.integer(x[["k"]]) || is.null(x[["words"]]) ||
      !is.null(x[["k_full"]])) {
    return(x)
  }
  r <- .Call(ffi_wire_pack_columns, x[["p"]], x[["k"]], 8L)
  if (is.null(r)) return(x)
  x[["k"]] <- r$k
  x[["k_full"]] <- r$full
  x
}

unpack_columns <- function(x) {
  if (is.null(x[["k_full"]])) return(x)
  x[["k"]] <- .Call(ffi_wire_unpack_columns, x[["p"]], x[["k"]], x[["k_full"]])
  x[["k_full"]] <- NULL
  x
}

# The packages a step's results need (the LDA step's sparse summaries are
# Matrix objects: executor_run(packages = "Matrix")) are loaded on the workers
# and on the master that reads the results.
load_step_packages <- function(packages) {
  # (loadNamespace() of a loaded namespace still costs about 0.15 ms, once
  # per minibatch: 0.09 s of a 2 s default fit over 60,000 paragraphs)
  for (p in packages) if (!isNamespaceLoaded(p)) loadNamespace(p)
  invisible()
}

# A step: a function, or the name of a sparsevi function.
step_function <- function(fun) {
  if (is.function(fun)) return(fun)
  get(fun, envir = topenv(environment(step_function)), mode = "function")
}

# Worker side of new_executor(): stores a worker's batches under the fit's
# token.
cluster_worker_init <- function(token, ids, batches, terms = NULL) {
  if (!is.null(terms)) {
    batches <- lapply(batches, function(b) {
      b["vocab"] <- list(terms)
      b
    })
  }
  store <- list()
  store[ids] <- batches
  # each batch's words, for rounds that send only their columns
  cols <- list()
  cols[ids] <- lapply(batches, batch_columns)
  assign(token, list(batches = store, cols = cols), envir = worker_store)
  length(ids)
}

# Worker side of executor_run(): runs `fun` (a step, see step_function()) on
# the worker's batches `ids`: fun(batch, per[[i]], <shared>). With columns
# U, the shared topics hold those columns only and each batch's words are
# renumbered into them.
cluster_worker_run <- function(token, ids, per, fun, shared, packages = character(0),
                               U = NULL) {
  store <- get(token, envir = worker_store)
  get_batch <- if (is.null(U)) function(i) store$batches[[ids[i]]] else
    function(i) batch_in_columns(store$batches[[ids[i]]], store$cols[[ids[i]]], U)
  pack_doubles(run_batches(fun, length(ids), get_batch, per, unpack_doubles(shared),
                           packages))
}

# fun(get_batch(i), per[[i]], <shared>) for i in 1..n; each batch is fetched
# just before its step (a batch read from disk is then the only one held).
run_batches <- function(fun, n, get_batch, per, shared, packages = character(0)) {
  load_step_packages(packages)
  f <- step_function(fun)
  out <- vector("list", n)
  for (i in seq_len(n)) {
    out[[i]] <- do.call(f, c(list(get_batch(i), per[[i]]), shared))
  }
  out
}

cluster_worker_free <- function(token) {
  shard_free(token)
  if (exists(token, envir = worker_store, inherits = FALSE)) rm(list = token, envir = worker_store)
  TRUE
}

# What travels to a worker: a raw vector made by wire(); what comes back: the
# same. `step` names a sparsevi function.
cluster_dispatch_raw <- function(payload, step) {
  args <- unserialize(payload)
  wire(do.call(get(step, envir = topenv(environment(cluster_dispatch_raw))), args))
}

# The task of one worker for one round under a future plan without persistent
# workers: its batches travel with the globals.
future_task_run <- function(payload) {
  a <- unserialize(payload)
  get_batch <- if (is.null(a$U)) function(i) a$batches[[i]] else
    function(i) batch_in_columns(a$batches[[i]], batch_columns(a$batches[[i]]), a$U)
  wire(pack_doubles(run_batches(a$fun, length(a$batches), get_batch, a$per,
                                unpack_doubles(a$shared), a$packages)))
}

# Calls `fun` (a sparsevi function, by name) with the serialised arguments
# `payload` on worker w; a worker that fails or died gets a classed error
# naming it.
cluster_call <- function(ex, w, fun, payload, call = caller_call()) {
  unserialize(worker_calls(ex, w, list(payload), fun, call)[[1L]])
}

# The transport: runs the sparsevi function `step` (by name) with the
# serialised arguments payloads[[j]] on worker ws[j], the workers at once,
# and returns their raw results in the order of `ws`. A worker that fails or
# died gets a classed error naming it.
worker_calls <- function(ex, ws, payloads, step, call = caller_call()) {
  if (identical(ex$transport, "mirai")) {
    res <- mirai_calls(ex$cluster, ws, payloads, step)
    if (inherits(res, "error")) cluster_fail(ex, ws[res$worker], res, call)
    return(res)
  }
  res <- tryCatch(parallel::clusterApply(ex$cluster[ws], payloads, cluster_dispatch_raw,
                                         step = step),
                  error = function(e) e)
  if (inherits(res, "error")) cluster_fail(ex, find_failed_worker(ex, ws), res, call)
  res
}

cluster_host <- function(ex, w) {
  if (ex$kind == "future") return("a future worker")
  if (identical(ex$transport, "mirai")) {
    host <- ex$cluster[[w]]$host
    return(if (is.null(host)) "unknown host" else
      sprintf("%s, process %s", host, format(ex$cluster[[w]]$pid)))
  }
  host <- tryCatch(ex$cluster[[w]]$host, error = function(e) NULL)
  if (is.null(host)) "unknown host" else host
}

cluster_fail <- function(ex, w, err, call) {
  abort(sprintf("Worker %d of the cluster (%s) failed: %s. The last completed model is kept; check the worker, or start the workers again and continue with update().",
                w, cluster_host(ex, w), conditionMessage(err)),
        "worker", call = call, worker = w)
}

# The part of the shared arguments a worker needs: the control's user batches
# and initial lambda are used on the master only.
shared_for_workers <- function(shared) {
  if (is.list(shared$control)) {
    shared$control$batches <- NULL
    shared$control$init_lambda <- NULL
  }
  shared
}

# Runs fun(batch, per[[i]], <shared>) for the batches `round` (ids) and
# returns the results in the order of `round`, with the bytes sent and
# received. `fun` is the step: a sparsevi function (it travels by reference,
# so workers run their own copy) or its name. `packages`: what the results
# need loaded (on the workers and here). The shared arguments go once to each
# worker of the round.
executor_run <- function(ex, round, fun, shared, per = vector("list", length(round)),
                         call = caller_call(), packages = character(0), columns = NULL) {
  load_step_packages(packages) # the master reads the results too
  if (ex$kind == "local") {
    out <- run_batches(fun, length(round), function(i) ex$get_batch(round[i]), per, shared)
    return(list(results = out, sent = 0, received = 0))
  }
  shared <- shared_for_workers(shared)
  ws <- unique(ex$owner[round])
  sels <- lapply(ws, function(w) which(ex$owner[round] == w))
  # what each worker of the round gets: the shared arguments, or with
  # `columns` their columns of the words of its batches (U)
  # (a future plan without persistent workers: the round's batches travel,
  # read once here)
  batches <- if (ex$kind == "future") lapply(round, ex$get_batch)
  vocab <- if (ex$kind == "future") {
    if (!is.null(columns)) lapply(batches, function(b) batch_columns(b)$vocab)
  } else ex$vocab
  by_columns <- !is.null(columns) && !is.null(vocab) && !any(vapply(vocab, is.null, TRUE))
  Us <- vector("list", length(ws))
  if (by_columns) {
    for (j in seq_along(ws)) {
      Us[[j]] <- round_columns(if (ex$kind == "future") vocab[sels[[j]]]
                               else vocab[round[sels[[j]]]])
    }
    worker_shared <- function(j) pack_doubles(columns$view(shared, Us[[j]]))
  } else {
    shared <- pack_doubles(shared)
    worker_shared <- function(j) shared
  }
  if (ex$kind == "future") {
    res <- future_round(ex, ws, sels, batches, fun, worker_shared, per, call, packages, Us)
  } else {
    payloads <- lapply(seq_along(ws), function(j) {
      wire(list(token = ex$token, ids = round[sels[[j]]], per = per[sels[[j]]], fun = fun,
                shared = worker_shared(j), packages = packages, U = Us[[j]]))
    })
    res <- list(raw = worker_calls(ex, ws, payloads, "cluster_worker_run", call),
                sent = sum(lengths(payloads)))
  }
  out <- vector("list", length(round))
  for (j in seq_along(ws)) {
    r <- unpack_doubles(unserialize(res$raw[[j]]))
    # results over the columns U back in the whole vocabulary
    if (by_columns) r <- lapply(r, columns$result, Us[[j]])
    out[sels[[j]]] <- r
  }
  list(results = out, sent = res$sent, received = sum(lengths(res$raw)))
}

# A dead worker no longer answers; else blame the first of the round.
find_failed_worker <- function(ex, ws) {
  for (w in ws) {
    ok <- tryCatch(isTRUE(parallel::clusterCall(ex$cluster[w], function() TRUE)[[1L]]),
                   error = function(e) FALSE)
    if (!ok) return(w)
  }
  ws[1L]
}

# One round as futures, one per worker of the round.
future_round <- function(ex, ws, sels, batches, fun, worker_shared, per, call,
                         packages = character(0), Us = vector("list", length(ws))) {
  sent <- 0
  fs <- vector("list", length(ws))
  for (j in seq_along(ws)) {
    payload <- wire(list(batches = batches[sels[[j]]], per = per[sels[[j]]], fun = fun,
                         shared = worker_shared(j), packages = packages, U = Us[[j]]))
    sent <- sent + length(payload)
    fs[[j]] <- tryCatch(
      future::future(quote(asNamespace("sparsevi")$future_task_run(payload)),
                     substitute = FALSE, globals = list(payload = payload),
                     packages = "sparsevi", seed = FALSE),
      error = function(e) e)
    if (inherits(fs[[j]], "error")) cluster_fail(ex, ws[j], fs[[j]], call)
  }
  raw <- vector("list", length(ws))
  for (j in seq_along(ws)) {
    raw[[j]] <- tryCatch(future::value(fs[[j]]), error = function(e) e)
    if (inherits(raw[[j]], "error")) cluster_fail(ex, ws[j], raw[[j]], call)
  }
  list(raw = raw, sent = sent)
}

executor_close <- function(ex) {
  if (!is.null(ex$shard)) lda_shard_close(ex)
  if (ex$kind == "cluster") {
    payload <- wire(list(token = ex$token))
    for (w in seq_len(ex$workers)) {
      # (a worker that died has nothing left to free)
      try(worker_calls(ex, w, list(payload), "cluster_worker_free"), silent = TRUE)
    }
  }
  if (!is.null(ex$old_plan)) future::plan(ex$old_plan)
  invisible()
}

# The rounds of a fit: `sync` batches per round, 1 unless given, whatever the
# executor, so that a fit equals the same fit without a cluster.
resolve_sync <- function(sync, cluster, call = caller_call()) {
  if (is.null(sync)) {
    if (!is.null(cluster) && length(cluster) > 1L) {
      msg <- sprintf("sync = 1: the %d workers take the batches one at a time, so the fit equals the fit without a cluster; give `sync = %d` to run a round's batches in parallel.\n",
                     length(cluster), length(cluster))
      message(structure(list(message = msg, call = call),
                        class = c("sparsevi_message_sync", "message", "condition")))
    }
    sync <- 1L
  }
  check_count(sync, "sync", min = 1, max = 1e6, call = call)
}
