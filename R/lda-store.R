# The topic store (src/lda-store.c, src/lda-store-ffi.c): how SCVB0,
# stochastic / memoized / streaming vb and ML-OPE keep their topics during
# training, so that a minibatch's global step costs O(K x its vocabulary)
# instead of O(K V). One type for all of them:
#
#   list(X, meta, eta or offset, ...),  lambda = offset + scale X,
#   meta = c(scale, t, row sums of X),   row sums of lambda = V offset + scale xtot,
#
# with `eta` the offset of SCVB0's store and `offset` that of the others
# (NULL: control$eta). X is K x V (the one dense topic table of the fit while
# it trains); meta is K + 2 doubles.
#
# Ownership. The update entry points write X and meta IN PLACE and refuse a
# store R may share (MAYBE_SHARED); nothing outside the training loop holds a
# store: a fit never does (the engines' finishing steps turn it back into
# lambda), update() makes one of its own from the fit's lambda. Two states
# never share one either: a lap starts on its own copy
# (lda_store_lap_start(), called by lda_lap()), so an error or interrupt
# mid-lap leaves the last completed lap's state intact (R/train.R).
#
# Memory. A new fit's start is given up to its store (in_place: the start's
# lambda becomes X, no second table) and the fit's lambda is built in place
# from the store at the end of training (lda_store_lambda(in_place = TRUE)).

# The loop gives an object up to the package (a new fit's start, a table
# kept for a later lap): it carries the ownership flag from here on, so that
# the C guard (src/own.c) lets an entry point write it in place although
# lists the loop never reads again still hold it. Returns x.
lda_give_up <- function(x) .Call(ffi_svi_give_up, x)

# A new store from a state's dense lambda and its row sums tot: X = lambda -
# eta, scale 1, step count t. in_place = TRUE converts state$topics$lambda itself
# (the caller gives it up: lda_give_up(); C copies instead when it holds
# neither the flag nor the only reference). The state, not its lambda, is
# the argument: a matrix passed through an R function's argument is shared
# by that function's frame, so only a .Call reading state$topics$lambda itself can
# convert it.
lda_store_new <- function(state, tot, eta, t, in_place = FALSE) {
  if (!is.double(state$topics$lambda)) storage.mode(state$topics$lambda) <- "double"
  if (isTRUE(in_place)) lda_give_up(state$topics$lambda)
  .Call(ffi_lda_store_new, state$topics$lambda,
        list(tot = as.double(tot), eta = as.double(eta), t = as.double(t),
             in_place = isTRUE(in_place)))
}

# A new store of memoized sums S: X = max(S, 0) and its row sums; S = NULL
# gives an all-zero K x V store.
lda_store_counts <- function(S, t, K = NULL, V = NULL) {
  .Call(ffi_lda_store_counts, S, list(t = as.double(t), K = K, V = V, in_place = FALSE))
}

# An all-zero store in the table of the state's lambda (the start a new fit
# owns, given up: its values are dropped), marked as lda_store_new(in_place =
# TRUE) marks it.
lda_store_empty_from_start <- function(state, t) {
  lda_give_up(state$topics$lambda)
  .Call(ffi_lda_store_counts, state$topics$lambda,
        list(t = as.double(t), K = NULL, V = NULL, in_place = TRUE))
}

# The stochastic global step, in place: lambda - offset <- (1 - rho)
# (lambda - offset) + rho mult S, with S given by its words and K values per
# word (lda_summary_blocks()), or sparse, list(words, p, k, v) (SCVB0's
# sparse summary, R/lda-cvb0.R); t the step count after it. Returns the new
# scale.
lda_store_update <- function(st, S, rho, mult, t, rescale_below = 1e-100, threads = 1L) {
  opts <- list(rho = as.double(rho), mult = as.double(mult),
               rescale_below = as.double(rescale_below), t = as.double(t),
               threads = as.integer(threads))
  # a sparse summary (SCVB0 with top_L < K: list(words, p, k, v)) is added
  # entry by entry
  if (!is.null(S$p)) return(.Call(ffi_lda_store_update_sparse, st$X, st$meta, S$words, S, opts))
  .Call(ffi_lda_store_update, st$X, st$meta, S$words, S$x, opts)
}

# X[, words] <- max(X[, words] + sign S, 0) in place (memoized and streaming
# training), the row sums likewise.
lda_store_add <- function(st, S, sign) {
  .Call(ffi_lda_store_add, st$X, st$meta, S$words, S$x, list(sign = as.double(sign)))
}

# list(lambda, tot): the dense lambda = offset + scale X of a store and its row
# sums. in_place = TRUE uses the store up (lambda is X itself, unless R shares
# X); only for a store about to be dropped.
lda_store_lambda <- function(st, offset, in_place = FALSE) {
  .Call(ffi_lda_store_lambda, st$X, st$meta,
        list(eta = as.double(offset), in_place = isTRUE(in_place)))
}

# Row sums of lambda from a store: V offset + scale xtot. A store of some
# columns only (lda_columns(), engine$columns: a cluster worker's) keeps the
# vocabulary size V of the whole table.
lda_store_totals <- function(st, offset = st$eta) {
  (if (is.null(st$V)) ncol(st$X) else st$V) * offset + st$meta[1L] * st$meta[-(1:2)]
}

# A copy of a store (its fields other than X and meta kept). The list C
# returns is the store: moving X into another list would leave it referenced
# twice (MAYBE_SHARED) and refused by the updates.
lda_store_copy <- function(st) {
  lda_store_fields(.Call(ffi_lda_store_copy, st$X, st$meta), st)
}

# The copy `cp` (list(X, meta) from C) with the other fields of the store
# `st` it copies.
lda_store_fields <- function(cp, st) {
  for (nm in setdiff(names(st), c("X", "meta"))) cp[nm] <- list(st[[nm]])
  cp
}

# The store itself when its in-place updates may write to it, else a copy:
# R may come to share X (MAYBE_SHARED) when something outside the store
# holds it (e.g. a future plan's globals): the copy, not the shared table,
# is then written. Every global step that writes checks its store so
# (lda_store_shared()) and puts the copy, when it made one, in the state's
# topics object (setting the object's field only then: once per minibatch
# it was a few microseconds of SCVB0's step).
lda_store_own <- function(st) {
  if (lda_store_shared(st)) lda_store_copy(st) else st
}

# Whether R may share the store's table (its in-place updates would refuse it).
lda_store_shared <- function(st) .Call(ffi_lda_store_shared, st$X, st$meta)

# The start of a lap: the lap gets its own copy of the state's topics
# (lda_topics_copy(), R/lda-topics.R: a store is copied; the other kinds are
# never written in place), so the state it started from -- the last
# completed lap's, which R/train.R returns if this lap fails -- is never
# written. A store kept safe on disk (lda_store_protect()) is written in
# place instead. A sealed memoized store is copied by its first batch
# instead (lda_global_memoized_lazy()). The first lap of a fit has no store
# yet (its global step makes one from the start), or one made as the start
# (lda_cvb0_seeded_start()), which is the training loop's own: no copy.
#
# `spare` (an environment kept by the fit, or NULL): the copy goes into the
# table the lap before last started from, instead of a new one, once there
# is such a table. The lap before last's state is no longer the last
# completed one, so nothing reads that table again; a fresh K x V copy per
# lap was a third of what a default fit allocated (98 of 307 MB on
# spamassassin), left to R's collector. Only tables this fit's stores held
# are recycled: the first lap's store is made by its global step (from the
# start, or a copy of a given lambda), never a table the caller holds.
lda_store_lap_start <- function(state, spare = NULL) {
  # a new fit's start given to the loop as a store (lda_cvb0_seeded_start()):
  # there is no completed lap to keep, so the first lap writes it in place
  if (isTRUE(state$topics$owned) || !is.null(state$snapshots$store)) return(state)
  state$topics <- lda_topics_copy(state$topics, spare)
  state
}

# lda_store_copy() into the table `dest` (ffi_lda_store_copy_into).
lda_store_copy_into <- function(st, dest) {
  lda_store_fields(.Call(ffi_lda_store_copy_into, st$X, st$meta, dest), st)
}

# Large stores are kept safe on disk instead: a copy would be a second K x V
# table for the whole lap. Before each lap (train_laps()' `protect`), a store
# larger than lda_snapshot_bytes() is written to a file in tempdir() and its
# table marked as the store's own (ffi_lda_store_save()); the lap then writes
# it in place, and if the lap fails, lda_store_recover() reads the last
# completed lap's store back from the file, bit for bit. `files` is an
# environment of the fit's snapshot paths by store name (one file per store,
# rewritten each lap); lda_store_forget() removes them when training ends.
#
# The threshold: getOption("sparsevi.snapshot_bytes"), a number of bytes, or
# "auto" (the default): a quarter of the memory the system has available at
# the lap's start (Linux: MemAvailable of /proc/meminfo; elsewhere never).
# A copy in memory costs nothing while memory is plentiful, and writing a
# table to disk costs seconds per GB (1 to 18 s per GB measured on this
# project's shared machine), so disk is used only where a second table would
# crowd memory. Fits are the same either way.
lda_snapshot_bytes <- function() {
  b <- getOption("sparsevi.snapshot_bytes", "auto")
  if (identical(b, "auto")) {
    avail <- mem_available_bytes()
    return(if (is.na(avail)) Inf else avail / 4)
  }
  if (!is.numeric(b) || length(b) != 1L || is.na(b) || b < 0) {
    abort("The option `sparsevi.snapshot_bytes` must be \"auto\" or one non-negative number of bytes.",
          "argument")
  }
  b
}

# Bytes of memory available to new work (Linux), NA where unknown.
mem_available_bytes <- function() {
  if (!file.exists("/proc/meminfo")) return(NA_real_)
  lines <- tryCatch(readLines("/proc/meminfo", warn = FALSE), error = function(e) character())
  hit <- grep("^MemAvailable:", lines, value = TRUE)
  if (length(hit) != 1L) return(NA_real_)
  kb <- suppressWarnings(as.numeric(gsub("[^0-9]", "", hit)))
  if (is.na(kb)) NA_real_ else kb * 1024
}

lda_store_protect <- function(state, files) {
  # (a new fit's start held as a store: a failed first lap is an error, there
  # is nothing to keep)
  if (isTRUE(state$topics$owned)) return(state)
  limit <- NULL
  for (nm in "store") {
    st <- state$topics$store
    if (!is.null(st$X) && is.null(limit)) limit <- lda_snapshot_bytes()
    if (is.null(st$X) || 8 * as.double(length(st$X)) <= limit) {
      state$snapshots[nm] <- list(NULL)
      next
    }
    path <- files[[nm]] %||% tempfile(sprintf("sparsevi-%s-", nm), fileext = ".bin")
    files[[nm]] <- path
    part <- paste0(path, ".part")
    saved <- tryCatch(.Call(ffi_lda_store_save, st$X, st$meta, part), error = function(e) e)
    if (inherits(saved, "error")) {
      unlink(part)
      snapshot_fail(part, snapshot_reason(part))
    }
    why <- NULL
    moved <- withCallingHandlers(file.rename(part, path), warning = function(w) {
      why <<- conditionMessage(w)
      invokeRestart("muffleWarning")
    })
    if (!moved) {
      unlink(part)
      snapshot_fail(path, reason_of(why) %||% "the file could not be renamed")
    }
    state$snapshots[[nm]] <- path
  }
  state
}

# A snapshot that could not be written: the system's reason and the ways
# out. (train_laps() then keeps the last completed lap's state, which
# nothing has written yet.)
snapshot_fail <- function(path, reason) {
  abort(sprintf("Could not write the topic store's snapshot to %s: %s. Snapshots of large topic tables go to tempdir() (%s): free space there or start R with TMPDIR on a disk with room, or keep them in memory with options(sparsevi.snapshot_bytes = Inf).",
                path, reason, tempdir()), "io", call = NULL)
}

# Why a file cannot be written, in the system's words: creating it again
# gives R's warning with the reason (no such directory, permission denied,
# no space); when it can be created, the write itself failed.
snapshot_reason <- function(path) {
  why <- NULL
  withCallingHandlers(tryCatch(file.create(path), error = function(e) {
    why <<- conditionMessage(e)
    FALSE
  }), warning = function(w) {
    why <<- conditionMessage(w)
    invokeRestart("muffleWarning")
  })
  unlink(path)
  reason_of(why) %||%
    "the file could be created but not written: the disk is most likely full"
}

# The "reason '...'" of a file operation's warning, else its whole text.
reason_of <- function(msg) {
  if (is.null(msg)) return(NULL)
  m <- regmatches(msg, regexpr("reason '[^']*'", msg))
  if (length(m)) sub("^reason '([^']*)'$", "\\1", m) else msg
}

# The state of the last completed lap after a failed one: each store with a
# snapshot read back from its file (its other fields kept).
lda_store_recover <- function(state) {
  for (nm in names(state$snapshots)) {
    path <- state$snapshots[[nm]]
    st <- state$topics$store
    if (is.null(path) || is.null(st) || !file.exists(path)) next
    rd <- .Call(ffi_lda_store_load, path)
    for (f in setdiff(names(st), c("X", "meta"))) rd[f] <- list(st[[f]])
    state$topics$store <- rd
  }
  state$snapshots <- NULL
  state
}

lda_store_forget <- function(files) {
  paths <- unlist(as.list(files), use.names = FALSE)
  if (length(paths)) unlink(c(paths, paste0(paths, ".part")))
  invisible(NULL)
}

# The K x V table a local step reads after lda_store_view(): the store's X or
# the state's lambda. Returned alone, never inside a list: a list holding X
# counts as a reference to it for good (R does not un-count the elements of a
# list it drops), and the store's in-place updates would then refuse X as
# shared.
lda_store_table <- function(state, view) {
  if (identical(view$table, "store")) state$topics$store$X else state$topics$lambda
}

# Whether a state's dense lambda was given up to a store (lda_store_new(
# in_place = TRUE)): a state from before that step holds the converted table
# and cannot be used (R/lda-class.R refuses to build a fit from it). So is a new
# fit's start held as a store (state$topics$owned): its first lap writes it in place.
lda_store_consumed <- function(state) {
  (!is.null(state$topics$lambda) && isTRUE(attr(state$topics$lambda, "sparsevi_owned"))) ||
    (isTRUE(state$topics$owned) && !is.null(state$topics$store))
}

# A batch summary (K x V, sparse or dense, or list(words, x)) as the store's
# updates want it: the words with any count (0-based) and their K values
# each, O(nnz).
lda_summary_blocks <- function(S, K) {
  if (!methods::is(S, "dgCMatrix")) return(cvb0_summary_parts(S, K))
  # (in C: one pass, no R temporaries of the summary's size;
  # lda_summary_blocks_r() is its R reference)
  .Call(ffi_lda_summary_blocks, S@p, S@i, S@x, as.integer(K))
}

lda_summary_blocks_r <- function(S, K) {
  cnt <- diff(S@p)
  cols <- which(cnt > 0L)
  x <- numeric(K * length(cols))
  x[(rep.int(seq_along(cols), cnt[cols]) - 1L) * K + S@i + 1L] <- S@x
  list(words = as.integer(cols - 1L), x = x)
}

# ---- transfer of columns to cluster workers ---------------------------------
#
# A local step reads only the topic columns of its batch's words and the K
# topic totals (the vb and OPE steps through lda_store_view(), SCVB0 through
# its store or lambda with totals). So a cluster worker gets, each round,
# the columns U of the words its batches of the round contain (the union of
# their vocabularies, known once when the batches are placed: R/executor.R)
# with the totals of the whole table, as a store of |U| columns that keeps
# the vocabulary size V (`V`, read by lda_store_totals() and passed to C as
# `vocab_size`), and its batches' words renumbered into U. It returns its
# summaries over U, sparse; the master puts them back in the V columns
# (lda_columns_result()). The arithmetic is that of the local step on the
# whole table, so the fit is the same, bit for bit: the totals are the ones
# the step would sum itself (ffi_lda_topic_totals sums as the C steps do)
# and a dense lambda reads as the store c(offset 0, scale 1), the same
# arithmetic in C.

# The column transfer of a fit over a vocabulary of V words (for
# executor_run(columns = )): each engine says what its local step needs of
# the state's topics for the words U (engine$columns: lda_columns_store()
# for vb and OPE, lda_columns_cvb0(), lda_columns_gibbs()); NULL for an
# engine without one (its workers get the whole state).
lda_columns <- function(control, V) {
  columns <- lda_engine(control$local)$columns
  if (is.null(columns)) return(NULL)
  list(view = function(shared, U) {
         shared$state <- columns(shared$state, control, U)
         shared
       },
       result = function(res, U) lda_columns_result(res, U, V))
}

# What a vb or OPE local step of the batches with words U (1-based,
# increasing) needs of the state: its topics as a store of those columns,
# from beta (ML-OPE's dense topics), a store, or a dense lambda.
lda_columns_store <- function(state, control, U) {
  if (!is.null(state$topics$beta)) {
    tab <- state$topics$beta
    read <- c(0, 1, lda_topics_totals(state$topics))
  } else {
    view <- lda_store_view(state, control)
    if (!is.null(view)) {
      tab <- lda_store_table(state, view)
      read <- view$read
    } else {
      tab <- state$topics$lambda
      if (!is.double(tab)) storage.mode(tab) <- "double"
      read <- c(0, 1, lda_topics_totals(state$topics))
    }
  }
  K <- nrow(tab)
  state$topics$beta <- NULL
  state$topics$lambda <- NULL
  state$topics$store <- list(X = lda_table_columns(tab, U), meta = c(read[2L], 0, read[-(1:2)]),
                             offset = read[1L], V = ncol(tab))
  state
}

# X[, U] of a K x V table (U 1-based integers), in C (one copy per column).
lda_table_columns <- function(X, U) {
  .Call(ffi_lda_table_columns, X, as.integer(U))
}

# A local step's result over the columns U back in the V columns of the
# whole vocabulary: a sparse summary's column pointers, or the words of a
# list(words, x) summary.
lda_columns_result <- function(res, U, V) {
  S <- res$summary
  if (is.null(S)) return(res)
  if (methods::is(S, "dgCMatrix")) {
    cnt <- integer(V)
    cnt[U] <- diff(S@p)
    S@p <- c(0L, cumsum(cnt))
    S@Dim <- c(S@Dim[1L], as.integer(V))
  } else {
    S$words <- as.integer(U[S$words + 1L] - 1L)
  }
  res$summary <- S
  res
}
