# Choosing the number of topics: fit_lda(x, K = c(20, 50, 100)) hands a K of
# length > 1 to lda_select_k(), which fits each K with the user's settings on
# the same training part of one validation split (made once, with the seed),
# scores each by document completion on the validation documents (the
# package's evaluator, heldout_loglik()), keeps the best K, and refits it on
# all the documents. The returned fit is exactly fit_lda(x, K = best, ...)
# with the table of every K as `fit$select`.

# Share of the documents held out for choosing K.
select_valid_frac <- 0.1

# `args`: the arguments the user gave fit_lda() (values, by name);
# `call`: fit_lda()'s matched call.
lda_select_k <- function(args, call) {
  here <- call
  Ks <- check_k_grid(args$K, call = here)
  # a condition from a fit of the grid names the user's call, not the
  # do.call() of fit_lda() with its body and the corpus (339 KB deparsed);
  # a warning or note said once, not once per K
  run <- select_runner(call)
  if (length(Ks) < 2L) {
    args$K <- Ks
    fit <- run$fit(args, interrupts = FALSE)
    fit$call <- call
    return(fit)
  }
  if (inherits(args$x, "sparsevi_source")) {
    abort("Choosing K (several values of `K`) needs a corpus in memory, not on disk: fit each K on the source and compare them with heldout_loglik().",
          "argument", call = here)
  }
  x <- as_dtm(args$x)
  if (nrow(x) < 10L) {
    abort(sprintf("Choosing K holds out %g%% of the documents for validation and needs at least 10 documents; `x` has %d. Give one K.",
                  100 * select_valid_frac, nrow(x)), "argument", call = here)
  }
  check_lda_vocab(ncol(x), call = here)
  if (max(Ks) > ncol(x)) {
    abort(sprintf("Every K must be at most the vocabulary size (%d); the largest is %d.",
                  ncol(x), max(Ks)), "argument", call = here)
  }
  # the user's settings that name documents or one K's topics cannot carry
  # over to fits on a part of the documents with other K
  if (is.matrix(args$init)) {
    abort(sprintf("A matrix `init` holds the starting topics of one K (its %s rows); choosing among several K (%s) cannot use it: give one K, or `init = \"bregman\"` or `\"random\"`.",
                  fmt_int(nrow(args$init)), paste(Ks, collapse = ", ")), "argument", call = here)
  }
  if (!is.null(args$batches)) {
    abort(sprintf("`batches` names documents of `x` (%s of them); choosing among several K fits each K on %g%% of the documents, which `batches` does not describe: give one K, or drop `batches` (`n_batches` or `batch_size` work with several K).",
                  fmt_int(nrow(x)), 100 * (1 - select_valid_frac)), "argument", call = here)
  }
  # one seed for the split and every fit, so the table is reproducible
  resolve_seed(args$seed, call = here) # validates
  if (is.null(args$seed)) args$seed <- sample.int(.Machine$integer.max, 1L)
  progress <- if (is.null(args$progress)) interactive() else
    check_flag(args$progress, "progress", call = here)
  split <- split_heldout(x, test_frac = select_valid_frac, seed = args$seed)
  n_train <- nrow(split$train)
  if (is.numeric(args$n_batches) && length(args$n_batches) == 1L && !is.na(args$n_batches) &&
      args$n_batches > n_train) {
    abort(sprintf("`n_batches` = %s is more batches than choosing K can make: each K is fitted on the %s training documents (of the %s in `x`; %g%% are held out to score the K). Give at most %s batches, or one K.",
                  format(args$n_batches), fmt_int(n_train), fmt_int(nrow(x)),
                  100 * select_valid_frac, fmt_int(n_train)), "argument", call = here)
  }
  per_k <- args
  per_k$x <- split$train
  # the per-K fits are compared, not used: no training-document proportions,
  # and the validation documents scored once, after training (scoring them
  # after every lap cost more than SCVB0's training at K = 200)
  per_k$heldout <- NULL
  per_k$heldout_every <- NULL
  per_k$doc_topics <- 0L
  threads <- if (is.null(args$threads)) getOption("sparsevi.threads", 1L) else args$threads
  rows <- list()
  # Ctrl-C stops the search: the K being fitted or scored is not compared
  # with the others (a 3-lap fit against 30-lap ones); what was done is
  # returned, flagged (lda_select_stopped())
  stopped <- NULL
  best_fit <- NULL
  best_score <- -Inf
  for (i in seq_along(Ks)) {
    k <- Ks[i]
    if (progress) message(sprintf("choosing K: K = %d (%d of %d)", k, i, length(Ks)))
    a <- lda_select_args(per_k, k)
    t0 <- proc.time()[["elapsed"]]
    f <- run$fit(a)
    if (inherits(f, "condition") || identical(f$ended, "interrupted")) {
      stopped <- list(K = k, fit = if (!inherits(f, "condition")) f)
      break
    }
    wall <- proc.time()[["elapsed"]] - t0
    tr <- f$trace
    row <- run$guard({
      score <- heldout_loglik(f, split$test, threads = threads)
      coh <- coherence(f, split$train, measure = "umass", n = min(10L, ncol(x)))
      # (dead topics by their shares alone, O(K): many say that this K is
      # more than the corpus needs, ?dead_topics "Unused topics")
      data.frame(K = k, heldout = as.numeric(score), coherence = mean(as.numeric(coh)),
                 dead = length(dead_topics(f, duplicates = FALSE)),
                 seconds = max(tr$seconds), wall_seconds = wall, laps = nrow(tr))
    })
    if (inherits(row, "condition")) {
      stopped <- list(K = k, fit = NULL)
      break
    }
    rows[[length(rows) + 1L]] <- row
    # the best so far (the first of equal scores, as which.max() below)
    if (!is.na(row$heldout) && row$heldout > best_score) {
      best_fit <- f
      best_score <- row$heldout
    }
    f <- NULL
  }
  if (!is.null(stopped)) {
    return(lda_select_stopped(rows, stopped, best_fit, Ks, x, split, call))
  }
  tab <- do.call(rbind, rows)
  best <- which.max(tab$heldout)
  if (!length(best)) {
    abort("No K could be scored on the validation documents (every held-out score is NA).",
          "internal", call = here)
  }
  tab$chosen <- seq_len(nrow(tab)) == best
  if (progress) message(sprintf("choosing K: K = %d is best; refitting it on all %s documents",
                                Ks[best], fmt_int(nrow(x))))
  final <- run$fit(lda_select_args(args, Ks[best]))
  if (inherits(final, "condition")) {
    # interrupted before the refit's first lap completed: the best K's fit
    # on the training part is what there is (kept for this until here)
    return(lda_select_stopped(rows, list(K = Ks[best], fit = NULL, refit = TRUE),
                              best_fit, Ks, x, split, call))
  }
  best_fit <- NULL
  final$call <- call
  attr(tab, "n_valid") <- length(split$test_index)
  attr(tab, "n_docs") <- nrow(x)
  final$select <- tab
  final
}

# `K` with several values: whole numbers of topics, each at least 2 and
# finite (Inf or 3e9 would become NA as integers, and silently dropped);
# duplicates are dropped with a message. Returns the sorted integer K.
check_k_grid <- function(K, call = caller_call()) {
  if (!is.numeric(K) || !length(K)) {
    abort(sprintf("`K` must be whole numbers of topics, each at least 2, not %s.", describe(K)),
          "argument", call = call)
  }
  bad <- which(is.na(K) | !is.finite(K) | K != round(K) | K < 2 | K > .Machine$integer.max)
  if (length(bad)) {
    abort(sprintf("`K` must be whole numbers of topics, each at least 2 and at most the vocabulary size (several K are fitted and the best kept); K[%d] is %s.",
                  bad[1L], format(K[bad[1L]])), "argument", call = call)
  }
  dup <- unique(K[duplicated(K)])
  if (length(dup)) {
    msg <- sprintf("`K` lists %s more than once; each K is fitted once.\n",
                   paste(format(dup), collapse = ", "))
    message(structure(list(message = msg, call = call),
                      class = c("sparsevi_message_duplicate_k", "message", "condition")))
  }
  sort(unique(as.integer(K)))
}

# How the grid runs fit_lda() and its scoring. run$fit(args): the fit, or
# the condition when an interrupt stopped it before its first lap completed
# (a later interrupt returns a fit whose `ended` is "interrupted"). run$guard(
# expr): its value, or the interrupt condition. Errors are signalled again
# with the user's call (`call`); warnings and messages too, each text once.
select_runner <- function(call) {
  seen <- character(0)
  once <- function(cnd, restart) {
    txt <- conditionMessage(cnd)
    if (txt %in% seen) invokeRestart(restart)
    seen <<- c(seen, txt)
    # the same condition with the user's call, and the original muffled
    if (!identical(cnd$call, call) && !inherits(cnd, "sparsevi_warning_interrupted")) {
      cnd$call <- call
      if (inherits(cnd, "warning")) warning(cnd) else message(cnd)
      invokeRestart(restart)
    }
  }
  guard <- function(expr, interrupts = TRUE) {
    relay <- function(expr) {
      withCallingHandlers(expr,
                          warning = function(w) once(w, "muffleWarning"),
                          message = function(m) {
                            # (the package's notes; not progress lines)
                            if (any(startsWith(class(m), "sparsevi_message"))) once(m, "muffleMessage")
                          },
                          error = function(e) {
                            if (inherits(e, "sparsevi_error_interrupted") && interrupts) return()
                            e$call <- call
                            stop(e)
                          })
    }
    if (!interrupts) return(relay(expr))
    tryCatch(relay(expr), interrupt = function(e) e,
             sparsevi_error_interrupted = function(e) e)
  }
  # (one K left: an ordinary fit, its interrupts the user's as they come)
  fit <- function(args, interrupts = TRUE) guard(do.call(fit_lda, args), interrupts)
  list(fit = fit, guard = guard)
}

# The result of a K grid stopped by an interrupt: the best fit among the K
# completed and scored (fitted on the training part of the split, not
# refitted on all documents), else the interrupted K's own fit of its
# completed laps; with a classed warning saying which. Its `select` table
# holds the K done, attr "interrupted" the K that was stopped.
lda_select_stopped <- function(rows, stopped, best_fit, Ks, x, split, call) {
  tab <- if (length(rows)) do.call(rbind, rows)
  done_txt <- if (length(rows)) sprintf("K = %s done", paste(tab$K, collapse = ", ")) else "no K done"
  if (!is.null(best_fit)) {
    best <- which(tab$K == best_fit$K)
    tab$chosen <- seq_len(nrow(tab)) == best
    fit <- best_fit
    what <- sprintf("returning K = %d, the best of those scored, as fitted on the %s training documents (not refitted on all %s)",
                    fit$K, fmt_int(nrow(split$train)), fmt_int(nrow(x)))
  } else if (!is.null(stopped$fit)) {
    fit <- stopped$fit
    what <- sprintf("returning the unscored fit of K = %d after its completed laps", fit$K)
  } else {
    abort(sprintf("Choosing K was interrupted during K = %d, before any K was fitted: nothing to return.",
                  stopped$K), "interrupted", call = call)
  }
  if (!is.null(tab)) {
    attr(tab, "n_valid") <- length(split$test_index)
    attr(tab, "n_docs") <- nrow(x)
    attr(tab, "interrupted") <- stopped$K
    attr(tab, "refitted") <- FALSE
  }
  fit$call <- call
  fit$select <- tab
  fit$ended <- "interrupted"
  warning(warningCondition(
    sprintf("Choosing K was interrupted %s K = %d (%s of %s); %s.",
            if (isTRUE(stopped$refit)) "while refitting the chosen" else "during",
            stopped$K, done_txt, paste(Ks, collapse = ", "), what),
    class = c("sparsevi_warning_interrupted", "sparsevi_warning"), call = call))
  fit
}

# fit_lda() arguments for one K: the user's, with L and doc_topics capped at K.
lda_select_args <- function(args, k) {
  args$K <- k
  if (!is.null(args$L)) args$L <- min(args$L, k)
  if (!is.null(args$doc_topics) && !isFALSE(args$doc_topics)) {
    args$doc_topics <- min(args$doc_topics, k)
  }
  args
}

# The table of fit$select, as print() and summary() show it.
print_select <- function(sel, K) {
  stopped <- attr(sel, "interrupted")
  cat(sprintf("  K chosen by held-out log-likelihood per token on %d validation documents (of %s)%s:\n",
              attr(sel, "n_valid"), fmt_int(attr(sel, "n_docs")),
              if (is.null(stopped)) ", then refitted on all" else ""))
  if (!is.null(stopped)) {
    cat(sprintf("  (interrupted at K = %d: the K below only; the fit is the training part's, not refitted on all)\n",
                stopped))
  }
  # (a table saved before it had `dead`: without that column)
  dead <- if (is.null(sel$dead)) rep("", nrow(sel)) else format(sel$dead)
  cat(sprintf("    %6s  %9s  %9s  %5s  %8s\n", "K", "held-out", "coherence",
              if (is.null(sel$dead)) "" else "dead", "seconds"))
  for (i in seq_len(nrow(sel))) {
    cat(sprintf("  %s %6d  %9.4f  %9.2f  %5s  %8.2f\n", if (sel$chosen[i]) "*" else " ",
                sel$K[i], sel$heldout[i], sel$coherence[i], dead[i], sel$seconds[i]))
  }
  edge <- select_edge(sel)
  if (!is.null(edge)) cat("  ", edge, "\n", sep = "")
  invisible()
}

# A note when the chosen K is the grid's smallest or largest: the best K may
# lie outside the grid. NULL when the chosen K is inside it.
select_edge <- function(sel) {
  best <- sel$K[sel$chosen]
  if (length(best) != 1L || nrow(sel) < 2L) return(NULL)
  if (best == max(sel$K)) {
    # (a K already leaving topics unused: more topics would add more of
    # them, not themes; the held-out score alone still leans upwards)
    dead <- if (is.null(sel$dead)) 0L else sel$dead[sel$chosen]
    if (dead > 0L) {
      return(sprintf("K = %d is the largest K of the grid and scores best, but %d of its topics are dead (unused, ?dead_topics): a larger K would add more of them; fewer topics would do.",
                     best, dead))
    }
    return(sprintf("K = %d is the largest K of the grid: a larger K may score better; widen the grid upwards.",
                   best))
  }
  if (best == min(sel$K)) {
    return(sprintf("K = %d is the smallest K of the grid: a smaller K may score better; widen the grid downwards.",
                   best))
  }
  NULL
}

# plot(fit, type = "select"): held-out score, coherence and time against K.
lda_plot_select <- function(x, ...) {
  sel <- x$select
  if (is.null(sel)) {
    abort("`type = \"select\"` plots the choice of K: fit with several K, e.g. `fit_lda(x, K = c(10, 20, 40))`.",
          "argument")
  }
  op <- graphics::par(mfrow = c(1, 3))
  on.exit(graphics::par(op))
  best <- which(sel$chosen)
  panel <- function(y, ylab, main) {
    graphics::plot(sel$K, y, type = "b", pch = 19, xlab = "number of topics K",
                   ylab = ylab, main = main, ...)
    graphics::points(sel$K[best], y[best], pch = 1, cex = 2.2, lwd = 2, col = "firebrick")
  }
  panel(sel$heldout, "log-lik per token (validation)",
        sprintf("Held-out: K = %d chosen", sel$K[best]))
  edge <- select_edge(sel)
  if (!is.null(edge)) {
    graphics::mtext(sprintf("at the grid's %s edge: widen the grid",
                            if (sel$K[best] == max(sel$K)) "upper" else "lower"),
                    side = 3, line = 0.2, cex = 0.7, col = "firebrick")
  }
  panel(sel$coherence, "mean UMass (closer to 0 better)", "Coherence")
  panel(sel$seconds, "training seconds", "Time per K")
  invisible(x)
}
