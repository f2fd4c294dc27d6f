#' A corpus on disk, read batch by batch
#'
#' `uci_source()` reads a UCI bag-of-words file once, in chunks, and writes its
#' documents to batch files on disk; training then reads one batch at a time,
#' so streaming, stochastic and memoized fits never hold the whole corpus
#' (memoized training keeps only the batch summaries). Pass the source to
#' [fit_lda()] in place of a corpus. `dir_source()` makes a source of a
#' directory of UCI files sharing one vocabulary (`docword.*.txt[.gz]`), one
#' or more batches per file.
#' A fit's start picks its seed documents from the whole corpus, as it
#' does in memory (`init` in [fit_lda()]): the batches that hold them are read
#' once before training, each keeping only those documents.
#'
#' @param docword Path of a UCI `docword` file, plain or gzipped. Documents
#'   must appear in increasing order of their id (as UCI distributes them).
#' @param vocab Path of the matching `vocab` file, or `NULL` (terms are then
#'   named `term1`, `term2`, ...).
#' @param batch_size Documents per batch (at least 1), default 10,000.
#' @param dir Directory for the batch files; default a new temporary
#'   directory (removed at the end of the R session).
#' @param chunk_size Bytes read at a time, default 8 MiB.
#' @returns A `sparsevi_source`: a list with `files` (one `.rds` file per
#'   batch), `n_docs` (documents per batch), `n_tokens` (tokens per batch),
#'   `D`, `vocab` and `dir`.
#' @examples
#' # a tiny UCI file
#' f <- tempfile(fileext = ".txt")
#' writeLines(c("3", "4", "5", "1 1 2", "1 3 1", "2 2 4", "3 1 1", "3 4 2"), f)
#' src <- uci_source(f, batch_size = 2)
#' src
#' @export
uci_source <- function(docword, vocab = NULL, batch_size = 10000, dir = NULL,
                       chunk_size = 2^23) {
  call <- sys.call()
  check_file(docword, "docword", call = call)
  if (!is.null(vocab)) check_file(vocab, "vocab", call = call)
  batch_size <- check_count(batch_size, "batch_size", min = 1, max = .Machine$integer.max,
                            call = call)
  chunk_size <- check_count(chunk_size, "chunk_size", min = 1024, max = 2^30, call = call)
  if (is.null(dir)) dir <- tempfile("sparsevi_source_")
  dir <- check_string(dir, "dir", call = call)
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  src <- uci_split(docword, batch_size, dir, chunk_size, prefix = "batch", call = call)
  terms <- read_vocab(vocab, src$V, call = call)
  new_sparsevi_source(src$files, src$n_docs, src$n_tokens, terms, dir)
}

#' @rdname uci_source
#' @param path A directory holding `docword.*.txt` or `docword.*.txt.gz`
#'   files (read in name order) and one vocabulary file.
#' @export
dir_source <- function(path, vocab, batch_size = 10000, dir = NULL, chunk_size = 2^23) {
  call <- sys.call()
  check_string(path, "path", call = call)
  if (!dir.exists(path)) {
    abort(sprintf("`path` must be an existing directory; \"%s\" is not.", path), "file",
          call = call)
  }
  files <- sort(list.files(path, pattern = "^docword.*\\.txt(\\.gz)?$", full.names = TRUE))
  if (!length(files)) {
    abort(sprintf("`path` \"%s\" holds no docword.*.txt[.gz] files.", path), "file", call = call)
  }
  check_file(vocab, "vocab", call = call)
  batch_size <- check_count(batch_size, "batch_size", min = 1, max = .Machine$integer.max,
                            call = call)
  if (is.null(dir)) dir <- tempfile("sparsevi_source_")
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  parts <- lapply(seq_along(files), function(i) {
    uci_split(files[i], batch_size, dir, chunk_size, prefix = sprintf("part%04d", i),
              call = call)
  })
  V <- unique(vapply(parts, `[[`, 0, "V"))
  if (length(V) != 1L) {
    abort("The docword files in `path` declare different vocabulary sizes; they must share one vocabulary.",
          "vocab", call = call)
  }
  terms <- read_vocab(vocab, V, call = call)
  new_sparsevi_source(unlist(lapply(parts, `[[`, "files")),
                      unlist(lapply(parts, `[[`, "n_docs")),
                      unlist(lapply(parts, `[[`, "n_tokens")), terms, dir)
}

new_sparsevi_source <- function(files, n_docs, n_tokens, vocab, dir) {
  structure(list(files = files, n_docs = as.integer(n_docs), n_tokens = n_tokens,
                 D = sum(n_docs), vocab = vocab, dir = dir),
            class = "sparsevi_source")
}

read_vocab <- function(vocab, V, call) {
  if (is.null(vocab)) return(sprintf("term%d", seq_len(V)))
  terms <- sub("\r$", "", readLines(vocab, warn = FALSE, encoding = "UTF-8"))
  if (length(terms) == V + 1 && !nzchar(terms[length(terms)])) terms <- terms[-length(terms)]
  if (length(terms) != V) {
    abort(sprintf("`vocab` has %s terms but `docword` declares a vocabulary of %s (its second line); pass the vocabulary file that belongs to this corpus.",
                  fmt_int(length(terms)), fmt_int(V)), "vocab", call = call)
  }
  if (anyDuplicated(terms)) {
    abort(sprintf("`vocab` has duplicated terms (first: \"%s\").", terms[anyDuplicated(terms)]),
          "vocab", call = call)
  }
  terms
}

# One pass over a docword file: parse chunk by chunk and write each batch of
# `batch_size` consecutive documents to its own file as soon as it is complete,
# so at most one batch and one chunk are in memory.
uci_split <- function(docword, batch_size, dir, chunk_size, prefix, call) {
  con <- gzfile(docword, open = "rb")
  on.exit(close(con))
  state <- .Call(ffi_dtm_uci_state)
  leftover <- raw(0)
  pend_doc <- integer(0)
  pend_term <- integer(0)
  pend_count <- double(0)
  files <- character(0)
  n_docs <- integer(0)
  n_tokens <- numeric(0)
  next_batch <- 1L
  flush <- function(upto_doc, D) {
    # write every batch whose documents all precede `upto_doc`
    while ((next_batch - 1L) * batch_size < D && next_batch * batch_size < upto_doc) {
      lo <- (next_batch - 1L) * batch_size
      hi <- min(next_batch * batch_size, D)
      sel <- pend_doc <= hi
      d <- pend_doc[sel] - lo
      o <- order(d, pend_term[sel])
      nd <- hi - lo
      x <- new_sparsevi_dtm(
        doc_ptr = c(0L, as.integer(cumsum(tabulate(d, nbins = nd)))),
        term = pend_term[sel][o], count = pend_count[sel][o], vocab = character(0),
        doc_names = NULL
      )
      f <- file.path(dir, sprintf("%s%06d.rds", prefix, next_batch))
      saveRDS(x, f, compress = FALSE)
      files <<- c(files, f)
      n_docs <<- c(n_docs, nd)
      n_tokens <<- c(n_tokens, sum(x$count))
      pend_doc <<- pend_doc[!sel]
      pend_term <<- pend_term[!sel]
      pend_count <<- pend_count[!sel]
      next_batch <<- next_batch + 1L
    }
  }
  repeat {
    bytes <- readBin(con, "raw", n = chunk_size)
    final <- length(bytes) == 0L
    if (length(leftover)) bytes <- c(leftover, bytes)
    cap <- as.integer(length(bytes) %/% 6L + 2L)
    doc <- integer(cap)
    term <- integer(cap)
    count <- double(cap)
    res <- .Call(ffi_dtm_parse_uci, bytes, final, state, doc, term, count, 0)
    state <- res$state
    if (res$status != 0L) uci_error(res$status, state, docword, call)
    if (state[9L] == 0) {
      abort(sprintf("`docword` \"%s\" does not list its documents in increasing order (line %s); a source reads documents in order. Sort the file, or read it whole with read_uci_bow().",
                    docword, fmt_int(state[1L])), "format", call = call)
    }
    n <- res$n
    if (n > 0) {
      pend_doc <- c(pend_doc, doc[seq_len(n)])
      pend_term <- c(pend_term, term[seq_len(n)])
      pend_count <- c(pend_count, count[seq_len(n)])
    }
    consumed <- res$consumed
    leftover <- if (consumed < length(bytes)) bytes[(consumed + 1):length(bytes)] else raw(0)
    rm(bytes, doc, term, count)
    if (state[5L] == 3) flush(if (n > 0) pend_doc[length(pend_doc)] else 0L, state[2L])
    if (final) break
  }
  if (state[5L] < 3) {
    abort(sprintf("`docword` is not a UCI bag-of-words file: \"%s\" ends before its three header lines.",
                  docword), "format", call = call)
  }
  flush(.Machine$integer.max, state[2L])
  rm(pend_doc, pend_term, pend_count, leftover)
  # hand the parsing buffers back now rather than at R's next collection
  gc(verbose = FALSE)
  list(files = files, n_docs = n_docs, n_tokens = n_tokens, V = state[3L])
}

#' @export
print.sparsevi_source <- function(x, ...) {
  cat(sprintf("<sparsevi_source> %s documents x %s terms on disk in %d batches (%s tokens)\n",
              fmt_int(x$D), fmt_int(length(x$vocab)), length(x$files),
              fmt_int(sum(x$n_tokens))))
  cat(sprintf("  directory: %s\n", x$dir))
  invisible(x)
}

#' @export
dim.sparsevi_source <- function(x) {
  c(as.integer(x$D), length(x$vocab))
}

# Batch b of a source as a sparsevi_dtm.
# The garbage of the previous batches' steps (their summaries, the batches)
# is collected first once they have read source_collect_tokens tokens since
# the last collection, so a pass from disk peaks near what it holds rather
# than at R's next collection threshold. A minor collection: that garbage is
# young, and a full one per batch took 60% of a fit in batches of 100
# (10,000 Wikipedia paragraphs, K = 1000: 27.5 s with full collections,
# 11.2 s with minor ones, the same peak; batches of 2,500: 8.3 -> 4.9 s,
# peak 2.45 -> 2.49 GB). A minor one still costs about 10 ms, so small
# batches share one (batches of 100 paragraphs, about 4,800 tokens each:
# a collection every 21 batches instead of every batch). The same fits at
# K = 1000: batches of 100, SCVB0 8.5 -> 3.8 s, vb 26.6 -> 25.8 s, peak
# 2.36 -> 2.42 GB; batches of 1,000, 4.7 -> 4.5 s and 21.9 -> 20.9 s, peak
# 2.44 -> 2.50 GB. SCVB0's ten laps at K = 100 over 9,000 paragraphs in
# batches of 100: 16.7 -> 3.4 s, in memory 2.9 s.
source_batch <- function(src, b) {
  read <- source_gc$tokens + src$n_tokens[b]
  if (read >= source_collect_tokens) {
    gc(verbose = FALSE, full = FALSE)
    read <- src$n_tokens[b]
  }
  source_gc$tokens <- read
  source_read(src, b)
}

# Tokens of the batches read since the last collection (source_batch()).
source_gc <- new.env(parent = emptyenv())
source_gc$tokens <- Inf
source_collect_tokens <- 1e5

# Batch b of a source as it is on disk (source_docs() reads many in a row,
# keeping little of each: no collection between them).
source_read <- function(src, b) {
  x <- readRDS(src$files[b])
  x$vocab <- src$vocab
  x
}

# Documents idx (increasing; NULL: every one) of a source, as one
# sparsevi_dtm in corpus order. Only the batches that hold them are read,
# and each keeps only its own.
source_docs <- function(src, idx = NULL) {
  if (is.null(idx)) idx <- seq_len(src$D)
  ends <- cumsum(as.double(src$n_docs))
  b_of <- findInterval(idx - 1, ends) + 1L
  parts <- lapply(unique(b_of), function(b) {
    xb <- source_read(src, b)
    mine <- idx[b_of == b] - (ends[b] - src$n_docs[b])
    if (length(mine) == nrow(xb)) xb else dtm_subset(xb, as.integer(mine))
  })
  dtm_bind(parts)
}
