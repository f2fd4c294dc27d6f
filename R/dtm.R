# The document-term layer: every corpus becomes a `sparsevi_dtm`, documents in
# rows stored as compressed sparse rows (CSR), which is what the C kernels read.

new_sparsevi_dtm <- function(doc_ptr, term, count, vocab, doc_names = NULL) {
  structure(
    list(doc_ptr = doc_ptr, term = term, count = count, vocab = vocab,
         doc_names = doc_names),
    class = "sparsevi_dtm"
  )
}

validate_sparsevi_dtm <- function(x, call = caller_call()) {
  if (!is.integer(x$doc_ptr) || !is.integer(x$term) || !is.double(x$count)) {
    abort("internal error: a sparsevi_dtm needs integer `doc_ptr` and `term` and double `count`.",
          "internal", call = call)
  }
  if (!is.character(x$vocab)) {
    abort("The vocabulary must be a character vector of terms.", "vocab", call = call)
  }
  if (length(x$vocab) == 0L) {
    abort("The corpus has no terms at all: supply at least one term.", "empty", call = call)
  }
  if (anyNA(x$vocab)) {
    abort("The vocabulary contains NA; give every term a name.", "vocab", call = call)
  }
  if (anyDuplicated(x$vocab)) {
    dup <- x$vocab[anyDuplicated(x$vocab)]
    abort(sprintf("The vocabulary has duplicated terms (first: \"%s\"); merge their counts or make the terms unique.", dup),
          "vocab", call = call)
  }
  D <- length(x$doc_ptr) - 1L
  if (!is.null(x$doc_names) && length(x$doc_names) != D) {
    abort("internal error: `doc_names` does not match the number of documents.",
          "internal", call = call)
  }
  res <- .Call(ffi_dtm_validate, x$doc_ptr, x$term, x$count, length(x$vocab))
  if (res[1L] == 3L) {
    abort(sprintf("Counts must be finite and non-negative (document %d has a count that is NA, NaN, Inf or negative); remove or fix those entries.",
                  res[2L]), "count", call = call)
  }
  if (res[1L] != 0L) {
    abort(sprintf("internal error: malformed document-term structure (code %d at document %d).",
                  res[1L], res[2L]), "internal", call = call)
  }
  x
}

#' Convert a corpus to a sparsevi document-term matrix
#'
#' `as_dtm()` turns every corpus format an R analyst brings into a
#' `sparsevi_dtm`: documents in rows, stored as compressed sparse rows, with
#' the vocabulary and document names. All fitting functions call it, so you
#' rarely need to call it yourself.
#'
#' @param x A corpus: a `Matrix` sparse matrix (`dgCMatrix`, `dgTMatrix`,
#'   `dgRMatrix`), a numeric matrix, a `slam::simple_triplet_matrix`, a
#'   `tm::DocumentTermMatrix` or `TermDocumentMatrix`, a `quanteda::dfm`, a
#'   data frame of (document, term, count) rows, a list of character token
#'   vectors, a character vector of raw texts, a `sparsevi_dtm`, or a corpus
#'   on disk from [uci_source()] (read into memory whole, in the file's
#'   order).
#' @param ... Passed on to the method.
#' @returns A `sparsevi_dtm`: a list with `doc_ptr` (integer, length D + 1,
#'   0-based offsets of each document's entries), `term` (integer, 0-based
#'   term index of each entry, increasing within a document), `count`
#'   (double, count of each entry), `vocab` (character, length V) and
#'   `doc_names` (character, length D, or `NULL`).
#' @examples
#' m <- Matrix::sparseMatrix(i = c(1, 1, 2), j = c(1, 3, 2), x = c(2, 1, 4),
#'                           dimnames = list(c("d1", "d2"), c("a", "b", "c")))
#' as_dtm(m)
#'
#' texts <- c(d1 = "The cat sat on the mat.", d2 = "Dogs and cats are pets.",
#'            d3 = "Stock markets fell today.")
#' as_dtm(texts, stopwords = TRUE)
#'
#' # tm: a DocumentTermMatrix of raw counts (the default weighting)
#' if (requireNamespace("tm", quietly = TRUE)) {
#'   dtm <- tm::DocumentTermMatrix(tm::VCorpus(tm::VectorSource(texts)))
#'   as_dtm(dtm)
#' }
#'
#' # quanteda: a document-feature matrix
#' if (requireNamespace("quanteda", quietly = TRUE)) {
#'   dfmat <- quanteda::dfm(quanteda::tokens(texts, remove_punct = TRUE))
#'   as_dtm(dfmat)
#' }
#'
#' # tidytext: one row per token (or per document and word with a count `n`)
#' if (requireNamespace("tidytext", quietly = TRUE)) {
#'   df <- data.frame(doc = names(texts), text = texts)
#'   tokens <- tidytext::unnest_tokens(df, word, text)
#'   as_dtm(tokens, document = "doc", term = "word")
#' }
#' # the same without tidytext: a (document, term, count) data frame
#' as_dtm(data.frame(document = c("d1", "d1", "d2"), term = c("cat", "mat", "dog"),
#'                   n = c(2, 1, 3)))
#' @export
as_dtm <- function(x, ...) {
  UseMethod("as_dtm")
}

# as_dtm() of a user's argument named other than `x` (predict()'s `newdata`,
# heldout_loglik()'s `test`, coherence()'s `reference`, ...): the same
# conversion, and its classed errors and warnings name that argument instead
# of `x` (the conversions' messages call the corpus `x`), with the same
# class. `call`: the call to show, by default that of the function
# converting its argument.
as_dtm_arg <- function(value, arg, call = caller_call()) {
  if (identical(arg, "x")) return(as_dtm(value))
  renamed <- function(cnd) sub("`x`", arg_label(arg), conditionMessage(cnd), fixed = TRUE)
  what <- function(cnd, kind) sub(sprintf("^sparsevi_%s_", kind), "", class(cnd)[1L])
  withCallingHandlers(as_dtm(value),
    sparsevi_error = function(e) abort(renamed(e), what(e, "error"), call = call),
    sparsevi_warning = function(w) {
      warn(renamed(w), what(w, "warning"), call = call)
      invokeRestart("muffleWarning")
    })
}

#' @export
as_dtm.default <- function(x, ...) {
  abort(sprintf("`x` must be a document-term matrix, a data frame of (document, term, count) rows, a list of token vectors or a character vector of texts; an object of class %s is not supported.",
                paste(class(x), collapse = "/")), "input")
}

#' @export
as_dtm.sparsevi_dtm <- function(x, ...) {
  # a user may have built or edited one by hand: one O(nnz) pass
  if (!is.list(x) || !all(c("doc_ptr", "term", "count", "vocab") %in% names(x))) {
    abort("`x` is a malformed sparsevi_dtm (it lacks `doc_ptr`, `term`, `count` or `vocab`); rebuild it with as_dtm().",
          "input", call = caller_call(2))
  }
  validate_sparsevi_dtm(x, call = caller_call(2))
}

# Errors unless the corpus has at least one token.
check_nonempty_dtm <- function(x, arg = "x", call = caller_call()) {
  # (max(), not any(x$count > 0): no logical vector as long as the corpus)
  if (length(x$count) == 0L || !(max(x$count) > 0)) {
    abort(sprintf("Every document of %s is empty (no tokens): give a corpus with at least one non-zero count.",
                  arg_label(arg)), "empty", call = call)
  }
  invisible(x)
}

#' @rdname as_dtm
#' @param docs_in `"rows"` (the default) when documents are the rows of a
#'   matrix, `"columns"` when they are its columns.
#' @export
as_dtm.dgCMatrix <- function(x, ..., docs_in = c("rows", "columns")) {
  docs_in <- check_choice(docs_in, c("rows", "columns"), "docs_in")
  # CSR of the document-by-term matrix is the CSC of its transpose.
  tx <- if (docs_in == "rows") Matrix::t(x) else x
  dtm_from_csc(tx)
}

#' @export
as_dtm.dgTMatrix <- function(x, ..., docs_in = c("rows", "columns")) {
  as_dtm.dgCMatrix(methods::as(x, "CsparseMatrix"), docs_in = docs_in)
}

#' @export
as_dtm.dgRMatrix <- function(x, ..., docs_in = c("rows", "columns")) {
  docs_in <- check_choice(docs_in, c("rows", "columns"), "docs_in")
  if (docs_in == "rows") {
    # A row-compressed documents x terms matrix is already CSR.
    dtm_from_parts(x@p, x@j, x@x, colnames(x), rownames(x))
  } else {
    as_dtm.dgCMatrix(methods::as(x, "CsparseMatrix"), docs_in = docs_in)
  }
}

#' @export
as_dtm.Matrix <- function(x, ..., docs_in = c("rows", "columns")) {
  x <- tryCatch(methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix"),
                error = function(e) {
                  abort(sprintf("`x` of class %s could not be converted to a numeric sparse matrix.",
                                class(x)[1L]), "input")
                })
  as_dtm.dgCMatrix(x, docs_in = docs_in)
}

#' @export
as_dtm.matrix <- function(x, ..., docs_in = c("rows", "columns")) {
  if (!is.numeric(x) && !is.logical(x)) {
    abort("A matrix `x` must hold numeric counts.", "input")
  }
  if (anyNA(x) || any(!is.finite(x))) {
    abort("`x` contains NA, NaN or Inf counts; replace them with 0 or drop those documents.",
          "count")
  }
  storage.mode(x) <- "double"
  as_dtm.dgCMatrix(methods::as(Matrix::Matrix(x, sparse = TRUE), "generalMatrix"),
                   docs_in = docs_in)
}

# Build a dtm from a terms x documents CSC matrix.
dtm_from_csc <- function(tx) {
  tx <- methods::as(tx, "generalMatrix")
  if (!is(tx, "dgCMatrix")) tx <- methods::as(methods::as(tx, "CsparseMatrix"), "dMatrix")
  dtm_from_parts(tx@p, tx@i, tx@x, rownames(tx), colnames(tx))
}

# The one constructor every method ends in: validates, drops explicit zeros,
# reports non-integer counts and names missing terms.
dtm_from_parts <- function(doc_ptr, term, count, vocab, doc_names,
                           call = caller_call(2)) {
  D <- length(doc_ptr) - 1L
  V <- if (is.null(vocab)) NA_integer_ else length(vocab)
  if (any(!is.finite(count)) || any(count < 0)) {
    abort("Counts must be finite and non-negative: `x` contains NA, NaN, Inf or negative values. Replace them with 0 or drop those entries.",
          "count", call = call)
  }
  if (is.null(vocab)) {
    nv <- if (length(term)) max(term) + 1L else 0L
    vocab <- sprintf("term%d", seq_len(nv))
  } else if (length(term) && max(term) >= length(vocab)) {
    abort(sprintf("The vocabulary has %s terms but the counts use %s term columns; give one name per term.",
                  fmt_int(length(vocab)), fmt_int(max(term) + 1)), "vocab", call = call)
  }
  keep <- count > 0
  if (!all(keep)) {
    doc_of <- rep.int(seq_len(D), diff(doc_ptr))
    doc_ptr <- c(0L, cumsum(tabulate(doc_of[keep], nbins = D)))
    term <- term[keep]
    count <- count[keep]
  }
  if (any(count != round(count))) {
    warn("Some counts are not whole numbers; they are used as fractional counts.",
         "noninteger", call = call)
  }
  x <- new_sparsevi_dtm(as.integer(doc_ptr), as.integer(term), as.double(count),
                        as.character(vocab),
                        if (is.null(doc_names)) NULL else as.character(doc_names))
  x <- validate_sparsevi_dtm(x, call = call)
  if (length(x$term) == 0L) {
    abort("The corpus has no non-empty documents: every count is zero.", "empty",
          call = call)
  }
  x
}

#' @export
dim.sparsevi_dtm <- function(x) {
  c(length(x$doc_ptr) - 1L, length(x$vocab))
}

#' @export
dimnames.sparsevi_dtm <- function(x) {
  list(x$doc_names, x$vocab)
}

#' @export
print.sparsevi_dtm <- function(x, ...) {
  D <- nrow(x)
  V <- ncol(x)
  nnz <- length(x$term)
  tokens <- sum(x$count)
  empty <- sum(diff(x$doc_ptr) == 0L)
  cat(sprintf("<sparsevi_dtm> %s documents x %s terms\n", fmt_int(D), fmt_int(V)))
  cat(sprintf("  tokens: %s; distinct (document, term) pairs: %s; density: %.3g%%\n",
              fmt_int(tokens), fmt_int(nnz), 100 * nnz / (as.double(D) * V)))
  if (empty > 0L) cat(sprintf("  empty documents: %s\n", fmt_int(empty)))
  invisible(x)
}

fmt_int <- function(x) {
  formatC(x, format = "f", digits = 0, big.mark = ",")
}

#' Subset the documents of a sparsevi_dtm
#'
#' @param x A `sparsevi_dtm`.
#' @param i Documents to keep: positive or negative indices, a logical
#'   vector, or document names.
#' @param j Not supported: the vocabulary is kept whole.
#' @param ... Unused.
#' @param drop Unused.
#' @returns A `sparsevi_dtm` with the chosen documents, in the order given.
#' @examples
#' x <- as_dtm(c(a = "one fish two fish", b = "red fish", c = "blue fish"))
#' x[2:3, ]
#' x[c("c", "a"), ]
#' @export
`[.sparsevi_dtm` <- function(x, i, j, ..., drop = FALSE) {
  if (!missing(j)) {
    abort("Only documents can be subset: use `x[i, ]`. To restrict the vocabulary, convert with `as_dgCMatrix()` first.",
          "argument")
  }
  D <- nrow(x)
  if (missing(i)) return(x)
  idx <- seq_len(D)
  if (is.character(i)) {
    if (is.null(x$doc_names)) abort("The documents have no names to subset by.", "argument")
    m <- match(i, x$doc_names)
    if (anyNA(m)) abort(sprintf("Unknown document name \"%s\".", i[is.na(m)][1L]), "argument")
    i <- m
  }
  idx <- idx[i]
  if (anyNA(idx)) abort("Document index out of range.", "argument")
  dtm_subset(x, idx)
}

# A fingerprint of a corpus (16 hexadecimal digits, ffi_dtm_key()): its
# number of terms and its documents' entries, in order. A fit keeps the one
# of the documents its proportions belong to (lda_keep()), so that a method
# given those documents again, with or without names, reads them
# (lda_training_docs()).
dtm_key <- function(x) {
  .Call(ffi_dtm_key, x$doc_ptr, x$term, x$count, length(x$vocab))
}

# Documents idx (whole numbers in 1..nrow(x), any order) of a corpus, in
# that order. The entries are copied in C (ffi_dtm_subset()): in R, the
# positions vector and three subsets took a tenth of a one-pass default
# fit over 60,000 paragraphs at K = 100, which makes a batch this way.
dtm_subset <- function(x, idx) {
  p <- .Call(ffi_dtm_subset, x$doc_ptr, x$term, x$count, as.integer(idx))
  new_sparsevi_dtm(
    doc_ptr = p$doc_ptr,
    term = p$term,
    count = p$count,
    vocab = x$vocab,
    doc_names = if (is.null(x$doc_names)) NULL else x$doc_names[idx]
  )
}

# The documents of several sparsevi_dtm over one vocabulary, one after
# another (their names kept when every part has them).
dtm_bind <- function(parts) {
  if (length(parts) == 1L) return(parts[[1L]])
  nnz <- vapply(parts, function(p) as.double(length(p$term)), 0)
  if (sum(nnz) > .Machine$integer.max) {
    abort("internal error: too many entries to bind into one document-term matrix.", "internal")
  }
  offset <- as.integer(cumsum(c(0, nnz))[seq_along(parts)])
  names <- lapply(parts, `[[`, "doc_names")
  new_sparsevi_dtm(
    doc_ptr = c(0L, unlist(lapply(seq_along(parts), function(i) parts[[i]]$doc_ptr[-1L] + offset[i]))),
    term = unlist(lapply(parts, `[[`, "term")),
    count = unlist(lapply(parts, `[[`, "count")),
    vocab = parts[[1L]]$vocab,
    doc_names = if (!any(vapply(names, is.null, TRUE))) unlist(names)
  )
}

#' Convert a sparsevi_dtm back to a sparse matrix
#'
#' @param x A `sparsevi_dtm`.
#' @returns A `Matrix::dgCMatrix` with documents in rows and the vocabulary as
#'   column names.
#' @examples
#' x <- as_dtm(list(c("a", "b", "a"), c("b", "c")))
#' as_dgCMatrix(x)
#' @export
as_dgCMatrix <- function(x) {
  x <- as_dtm(x)
  D <- nrow(x)
  # The CSR of docs x terms is the CSC of terms x docs.
  tx <- new_dgc(i = x$term, p = x$doc_ptr, x = x$count, Dim = c(length(x$vocab), D),
                Dimnames = list(x$vocab, x$doc_names))
  Matrix::t(tx)
}

# A Matrix dgCMatrix from its slots. The class is looked up in Matrix's
# namespace at call time rather than imported: importing would load Matrix
# (about 150 MB) with sparsevi; this loads it at the first sparse result.
new_dgc <- function(...) {
  methods::new(methods::getClass("dgCMatrix", where = asNamespace("Matrix")), ...)
}

#' @export
as.matrix.sparsevi_dtm <- function(x, ...) {
  as.matrix(as_dgCMatrix(x))
}

# Documents' lengths (tokens).
doc_lengths <- function(x) {
  # in C, each document's counts added in order as rowsum() adds them (the
  # rowsum() form below, its reference, hashed the document ids: 5% of a
  # default fit on kos)
  .Call(ffi_dtm_doc_dot, x$doc_ptr, x$term, as.double(x$count), rep(1, length(x$vocab)))
}

# The pure-R form of doc_lengths().
doc_lengths_r <- function(x) {
  D <- nrow(x)
  doc_of <- rep.int(seq_len(D), diff(x$doc_ptr))
  out <- numeric(D)
  s <- rowsum(x$count, doc_of, reorder = TRUE)
  out[as.integer(rownames(s))] <- s[, 1L]
  out
}

# Align a dtm to a fitted vocabulary by term name; returns the aligned dtm
# and the number of terms dropped (absent from `vocab`).
dtm_align <- function(x, vocab) {
  if (identical(x$vocab, vocab)) return(list(x = x, dropped = 0L, dropped_tokens = 0))
  map <- match(x$vocab, vocab) - 1L
  new_term <- map[x$term + 1L]
  keep <- !is.na(new_term)
  D <- nrow(x)
  doc_of <- rep.int(seq_len(D), diff(x$doc_ptr))
  dropped_terms <- sum(is.na(map) & tabulate(x$term + 1L, length(x$vocab)) > 0)
  dropped_tokens <- sum(x$count[!keep])
  doc_of <- doc_of[keep]
  nt <- new_term[keep]
  cnt <- x$count[keep]
  o <- order(doc_of, nt)
  out <- new_sparsevi_dtm(
    doc_ptr = c(0L, as.integer(cumsum(tabulate(doc_of, nbins = D)))),
    term = as.integer(nt[o]), count = cnt[o], vocab = vocab,
    doc_names = x$doc_names
  )
  list(x = out, dropped = dropped_terms, dropped_tokens = dropped_tokens)
}
