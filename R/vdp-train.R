# Fast-VDP (fit_vdp()): the fit's glue around src/vdp.c, its convergence
# warnings and its per-point steps on cluster workers.

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

# The per-point steps of VDP on a cluster: the row blocks (centred and
# transposed as the kernel sees them) go to the workers once, as
# environments that also keep each block's sub list between the steps of a
# split candidate. The returned hook is what the C driver calls (see
# vdp_remote in src/vdp.h); it returns NULL when a worker failed, keeping
# the error in `store`.
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
    split_proj = .Call(ffi_vdp_worker_split_proj, batch$Xt, args, threads),
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
