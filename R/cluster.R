# Training on an R cluster (parallel::makePSOCKcluster(), including workers on
# other hosts). The loop is map-reduce over batches: each batch is sent once
# to the worker that owns it and stays there; every round the master sends the
# global parameters, each worker runs the same registered C local step on its
# batches and returns only the batch summaries (sparse when L < K), and the
# master applies the global steps in batch order. The same rounds run without a
# cluster, so a fit on a cluster equals the fit without one.

# Worker-side storage: batches by fit token. An environment in the namespace
# (mutable although the namespace is locked).
worker_store <- new.env(parent = emptyenv())

check_cluster <- function(cluster, call = caller_call()) {
  if (is.null(cluster)) return(NULL)
  if (!inherits(cluster, "cluster") || length(cluster) < 1L) {
    abort(sprintf("`cluster` must be NULL or a cluster made by parallel::makePSOCKcluster() or parallel::makeCluster(), not %s.",
                  describe(cluster)), "argument", call = call)
  }
  cluster
}

# The executor runs the local steps of a round of batches, here or on a
# cluster. `get_batch(b)` returns batch b (a corpus slice or rows of data);
# `sizes` counts the documents or points of each batch.
new_executor <- function(cluster, n_batches, get_batch, sizes, call = caller_call()) {
  if (is.null(cluster)) {
    return(list(kind = "local", get_batch = get_batch, sizes = sizes))
  }
  W <- length(cluster)
  owner <- (seq_len(n_batches) - 1L) %% W + 1L
  # a name for this fit's batches on the workers (not drawn from the user's RNG)
  token <- sprintf("fit_%d_%.0f", Sys.getpid(), as.numeric(Sys.time()) * 1e6)
  ex <- list(kind = "cluster", cluster = cluster, owner = owner, token = token,
             workers = W, sizes = sizes)
  sent <- 0
  for (w in seq_len(W)) {
    ids <- which(owner == w)
    args <- list(token = token, ids = ids, batches = lapply(ids, get_batch))
    sent <- sent + length(serialize(args, NULL))
    cluster_call(ex, w, "cluster_worker_init", args, call = call)
  }
  ex$bytes_setup <- sent
  ex
}

# Stores a worker's batches under the fit's token.
cluster_worker_init <- function(token, ids, batches) {
  store <- list()
  store[ids] <- batches
  assign(token, store, envir = worker_store)
  length(ids)
}

# Runs `fun` (a sparsevi function, by name) on the worker's batches `ids`:
# fun(batch, per[[i]], <shared>).
cluster_worker_run <- function(token, ids, per, fun, shared) {
  store <- get(token, envir = worker_store)
  f <- get(fun, envir = asNamespace("sparsevi"))
  out <- vector("list", length(ids))
  for (i in seq_along(ids)) {
    out[[i]] <- do.call(f, c(list(store[[ids[i]]], per[[i]]), shared))
  }
  out
}

cluster_worker_free <- function(token) {
  if (exists(token, envir = worker_store, inherits = FALSE)) rm(list = token, envir = worker_store)
  TRUE
}

# Calls `fun` (a sparsevi function, by name) with `args` on worker w; a worker
# that fails or died gets a classed error naming it.
cluster_call <- function(ex, w, fun, args, call = caller_call()) {
  node <- ex$cluster[w]
  res <- tryCatch(
    parallel::clusterCall(node, cluster_dispatch, fun, args)[[1L]],
    error = function(e) e
  )
  if (inherits(res, "error")) cluster_fail(ex, w, res, call)
  res
}

cluster_dispatch <- function(fun, args) {
  do.call(get(fun, envir = asNamespace("sparsevi")), args)
}

cluster_host <- function(ex, w) {
  host <- tryCatch(ex$cluster[[w]]$host, error = function(e) NULL)
  if (is.null(host)) "unknown host" else host
}

cluster_fail <- function(ex, w, err, call) {
  abort(sprintf("Worker %d of the cluster (%s) failed: %s. The last completed model is kept; check the worker, or restart the cluster and continue with update().",
                w, cluster_host(ex, w), conditionMessage(err)),
        "worker", call = call, worker = w)
}

# Runs fun(batch, per[[i]], <shared>) for the batches `round` (ids) and
# returns the results in the order of `round`, with the bytes sent and
# received. `fun` names a sparsevi function, so workers find their own copy.
executor_run <- function(ex, round, fun, shared, per = vector("list", length(round)),
                         call = caller_call()) {
  if (ex$kind == "local") {
    f <- get(fun, envir = topenv(environment(executor_run)))
    out <- vector("list", length(round))
    for (i in seq_along(round)) {
      out[[i]] <- do.call(f, c(list(ex$get_batch(round[i]), per[[i]]), shared))
    }
    return(list(results = out, sent = 0, received = 0))
  }
  ws <- unique(ex$owner[round])
  args <- lapply(ws, function(w) {
    sel <- which(ex$owner[round] == w)
    list(token = ex$token, ids = round[sel], per = per[sel], fun = fun, shared = shared)
  })
  sent <- sum(vapply(args, function(a) length(serialize(a, NULL)), 0))
  res <- tryCatch(
    parallel::clusterApply(ex$cluster[ws], args, function(a) {
      do.call(get("cluster_worker_run", envir = asNamespace("sparsevi")), a)
    }),
    error = function(e) e
  )
  if (inherits(res, "error")) {
    # find the worker that failed: a dead one no longer answers
    bad <- ws[1L]
    for (w in ws) {
      ok <- tryCatch(isTRUE(parallel::clusterCall(ex$cluster[w], function() TRUE)[[1L]]),
                     error = function(e) FALSE)
      if (!ok) {
        bad <- w
        break
      }
    }
    cluster_fail(ex, bad, res, call)
  }
  received <- sum(vapply(res, function(r) length(serialize(r, NULL)), 0))
  out <- vector("list", length(round))
  for (j in seq_along(ws)) {
    sel <- which(ex$owner[round] == ws[j])
    out[sel] <- res[[j]]
  }
  list(results = out, sent = sent, received = received)
}

executor_close <- function(ex) {
  if (ex$kind != "cluster") return(invisible())
  for (w in seq_len(ex$workers)) {
    try(parallel::clusterCall(ex$cluster[w], cluster_dispatch, "cluster_worker_free",
                              list(token = ex$token)), silent = TRUE)
  }
  invisible()
}

# What a local step needs of the global state: everything but the memoized
# caches and bookkeeping, which stay on the master.
lda_local_view <- function(state) {
  state[setdiff(names(state), c("cache", "S", "doc_obj"))]
}
