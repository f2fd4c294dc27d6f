# as_dtm() methods for the corpus formats of the wider R text ecosystem
# (slam, tm, quanteda, tidy data frames, token lists, raw texts). Every
# method ends in dtm_from_parts() (R/dtm.R), so every format gets the same
# validation and yields the same sparsevi_dtm for the same data.
#
# Vocabulary order: formats that carry a vocabulary (matrices) keep it;
# formats built from tokens (data frames, token lists, texts) sort their
# terms in C-locale order (method = "radix"), which is the same on every
# machine.

#' @rdname as_dtm
#' @export
as_dtm.simple_triplet_matrix <- function(x, ..., docs_in = c("rows", "columns")) {
  call <- as_dtm_call()
  docs_in <- check_choice(docs_in, c("rows", "columns"), "docs_in")
  dn <- x$dimnames
  if (docs_in == "rows") {
    doc <- x$i
    term <- x$j
    D <- x$nrow
    V <- x$ncol
    doc_names <- dn[[1L]]
    vocab <- dn[[2L]]
  } else {
    doc <- x$j
    term <- x$i
    D <- x$ncol
    V <- x$nrow
    doc_names <- dn[[2L]]
    vocab <- dn[[1L]]
  }
  if (is.null(vocab)) vocab <- sprintf("term%d", seq_len(V))
  dtm_from_triplets(as.integer(doc), as.integer(term), as.double(x$v), D,
                    vocab, doc_names, call = call)
}

#' @export
as_dtm.DocumentTermMatrix <- function(x, ...) {
  check_tm_weighting(x)
  as_dtm.simple_triplet_matrix(x, docs_in = "rows")
}

#' @export
as_dtm.TermDocumentMatrix <- function(x, ...) {
  check_tm_weighting(x)
  as_dtm.simple_triplet_matrix(x, docs_in = "columns")
}

check_tm_weighting <- function(x, call = caller_call()) {
  w <- attr(x, "weighting")
  if (!is.null(w) && length(w) >= 2L && !identical(w[[2L]], "tf")) {
    warn(sprintf("`x` is weighted by %s, not term frequency; topic models expect raw counts. Build it with `weighting = weightTf`.",
                 w[[1L]]), "weighting", call = call)
  }
}

#' @export
as_dtm.dfm <- function(x, ...) {
  # a quanteda dfm is a dgCMatrix with documents in rows (plus metadata)
  m <- methods::as(x, "dgCMatrix", strict = TRUE)
  dimnames(m) <- list(rownames(x), colnames(x))
  as_dtm.dgCMatrix(m, docs_in = "rows")
}

#' @rdname as_dtm
#' @param document,term,count For a long data frame (one row per document
#'   and term, or per token): the columns holding the
#'   document id, the term and its count, each a column name or number.
#'   A data frame whose columns are all numeric (perhaps besides one column
#'   of document names) is read instead as a wide table of counts, documents
#'   in rows and terms in columns, as `as_dtm(as.matrix(x))` would.
#'   By default the first column named `document`, `doc`, `doc_id` or `id`
#'   (else column 1); `term`, `word`, `token` or `feature` (else column 2);
#'   `count`, `n`, `freq` or `frequency` (else column 3 if numeric, or none:
#'   each row is then one token). Documents appear in order of first
#'   appearance (in level order when the id is a factor, so unused levels
#'   become empty documents); rows repeating a (document, term) pair are
#'   summed.
#' @param vocab For data frames, token lists and texts: `NULL` (the
#'   default) to build the vocabulary from the data (sorted), or a character
#'   vector fixing the vocabulary and its order (other terms are dropped,
#'   with a message).
#' @export
as_dtm.data.frame <- function(x, ..., document = NULL, term = NULL, count = NULL,
                              vocab = NULL) {
  call <- as_dtm_call()
  nm <- names(x)
  if (is.null(document) && is.null(term) && is.null(count)) {
    wide <- wide_counts(x, call)
    if (!is.null(wide)) return(as_dtm(wide))
  }
  doc_col <- pick_column(x, document, c("document", "doc", "doc_id", "id"), 1L,
                         "document", call)
  term_col <- pick_column(x, term, c("term", "word", "token", "feature"), 2L,
                          "term", call)
  if (is.null(count)) {
    hit <- match(c("count", "n", "freq", "frequency"), nm)
    hit <- hit[!is.na(hit)]
    count_col <- if (length(hit)) hit[1L]
                 else if (ncol(x) >= 3L && is.numeric(x[[3L]])) 3L
                 else NA_integer_
  } else {
    count_col <- pick_column(x, count, character(0), NA_integer_, "count", call)
  }
  if (doc_col == term_col) {
    abort("`document` and `term` must be different columns.", "argument", call = call)
  }
  docs <- x[[doc_col]]
  terms <- x[[term_col]]
  if (is.factor(terms)) terms <- as.character(terms)
  if (!is.character(terms)) {
    abort(sprintf("The term column `%s` must hold character terms, not %s values.",
                  nm[term_col], typeof(terms)), "input", call = call)
  }
  if (anyNA(terms)) {
    abort(sprintf("The term column `%s` contains NA; drop those rows or name the terms.",
                  nm[term_col]), "input", call = call)
  }
  if (is.na(count_col)) {
    counts <- rep.int(1, nrow(x))
  } else {
    counts <- x[[count_col]]
    if (!is.numeric(counts) && !is.logical(counts)) {
      abort(sprintf("The count column `%s` must be numeric, not %s.", nm[count_col],
                    typeof(counts)), "input", call = call)
    }
    counts <- as.double(counts)
  }
  if (anyNA(docs)) {
    abort(sprintf("The document column `%s` contains NA; give every row a document.",
                  nm[doc_col]), "input", call = call)
  }
  if (is.factor(docs)) {
    doc_names <- levels(docs)
    doc <- as.integer(docs)
  } else {
    doc_names <- unique(docs)
    doc <- match(docs, doc_names)
    doc_names <- as.character(doc_names)
  }
  tokens_to_dtm(doc, terms, counts, length(doc_names), doc_names, vocab, call = call)
}

# A wide table of counts (documents in rows, one numeric column per term,
# perhaps one column of document names) as a matrix; NULL for a long
# (document, term[, count]) table. Numeric columns named like a long table's
# columns (term ids given as numbers) are neither: the error says what to do.
wide_counts <- function(x, call) {
  if (!ncol(x)) return(NULL)
  num <- vapply(x, function(col) (is.numeric(col) || is.logical(col)) && !is.factor(col),
                logical(1))
  long_names <- c("term", "word", "token", "feature")
  if (all(num) && any(tolower(names(x)) %in% long_names)) {
    abort(sprintf("`x` looks like a long (document, term, count) table but its term column `%s` holds numbers: give the terms as character (e.g. the vocabulary's words), or, for a wide table of counts (documents in rows, terms in columns), rename the column or pass as.matrix(x).",
                  names(x)[tolower(names(x)) %in% long_names][1L]), "input", call = call)
  }
  if (all(num) && ncol(x) < 3L) {
    abort("`x` has only numeric columns, too few to tell a wide table of counts from a long (document, term) table: pass as.matrix(x) for counts with documents in rows and terms in columns, or give the terms as character.",
          "input", call = call)
  }
  text <- which(!num)
  if (length(text) > 1L || (length(text) == 1L && ncol(x) < 3L)) return(NULL)
  if (length(text) == 1L) {
    # one column of names and numbers elsewhere: a wide table has at least
    # two term columns
    if (ncol(x) - 1L < 2L) return(NULL)
    # the names column of a wide table comes first or is named like one; a
    # long table's one text column is its term column
    tname <- tolower(names(x)[text])
    if (tname %in% long_names ||
        !(text == 1L || tname %in% c("document", "doc", "doc_id", "id"))) {
      return(NULL)
    }
    docs <- x[[text]]
    if (anyNA(docs)) {
      abort(sprintf("The document-name column `%s` of the wide table `x` contains NA; name every document.",
                    names(x)[text]), "input", call = call)
    }
    m <- as.matrix(x[-text])
    rownames(m) <- as.character(docs)
  } else {
    m <- as.matrix(x)
    if (identical(rownames(m), as.character(seq_len(nrow(m))))) rownames(m) <- NULL
  }
  storage.mode(m) <- "double"
  m
}

# The call to show in errors raised by an as_dtm() method: the user called
# as_dtm(), not the method.
as_dtm_call <- function() {
  cl <- sys.call(-1)
  if (is.call(cl)) cl[[1L]] <- as.name("as_dtm")
  cl
}

pick_column <- function(x, given, candidates, fallback, arg, call) {
  nm <- names(x)
  if (is.null(given)) {
    hit <- match(candidates, nm)
    hit <- hit[!is.na(hit)]
    col <- if (length(hit)) hit[1L] else fallback
    if (is.na(col) || col > ncol(x)) {
      abort(sprintf("`x` has no column for %s; name it with `%s = `.", arg, arg),
            "argument", call = call)
    }
    return(col)
  }
  if (is.character(given) && length(given) == 1L && given %in% nm) {
    return(match(given, nm))
  }
  if (is.numeric(given) && length(given) == 1L && !is.na(given) &&
      given == round(given) && given >= 1 && given <= ncol(x)) {
    return(as.integer(given))
  }
  abort(sprintf("`%s` must name a column of `x` (one of %s) or give its number.",
                arg, paste0('"', nm, '"', collapse = ", ")), "argument", call = call)
}

#' @rdname as_dtm
#' @param min_doc_freq For token lists and texts: keep only terms that
#'   occur in at least this many documents. Default 1 (keep all).
#' @export
as_dtm.list <- function(x, ..., vocab = NULL, min_doc_freq = 1) {
  call <- as_dtm_call()
  if (is_heldout_split(x)) {
    abort("`x` is the whole split from split_heldout(): give its training documents (`sp$train` for `sp <- split_heldout(x)`) or its test documents' observed words (`sp$test$observed`).",
          "input", call = call)
  }
  min_doc_freq <- check_count(min_doc_freq, "min_doc_freq", call = call)
  ok <- vapply(x, function(e) is.null(e) || is.character(e) || is.factor(e), logical(1))
  if (!all(ok)) {
    bad <- which(!ok)[1L]
    abort(sprintf("Every element of a token list `x` must be a character vector of tokens; element %d is %s. Convert it with as.character() or tokenize it first.",
                  bad, describe_class(x[[bad]])), "input", call = call)
  }
  token_list_to_dtm(lapply(x, as.character), vocab, min_doc_freq, call)
}

token_list_to_dtm <- function(x, vocab, min_doc_freq, call) {
  lens <- lengths(x)
  tokens <- unlist(x, use.names = FALSE)
  if (is.null(tokens)) tokens <- character(0)
  doc <- rep.int(seq_along(x), lens)
  if (anyNA(tokens)) {
    bad <- unique(doc[is.na(tokens)])
    abort(sprintf("The token list `x` contains NA tokens (in document%s %s); drop them first, e.g. lapply(x, function(t) t[!is.na(t)]).",
                  if (length(bad) > 1L) "s" else "",
                  paste(utils::head(bad, 5L), collapse = ", ")), "input", call = call)
  }
  x <- tokens_to_dtm(doc, tokens, rep.int(1, length(tokens)), length(x), names(x),
                     vocab, call = call)
  if (min_doc_freq > 1L) {
    # each (document, term) pair is one CSR entry: tabulate gives the
    # document frequency of every term
    df <- tabulate(x$term + 1L, nbins = length(x$vocab))
    x <- dtm_keep_terms(x, df >= min_doc_freq, call = call)
  }
  x
}

# Restrict a dtm to the terms flagged in `keep` (logical, length V),
# renumbering them in their current order.
dtm_keep_terms <- function(x, keep, call = caller_call()) {
  if (!any(keep)) {
    abort("No term is left: every term was removed (lower `min_doc_freq`).",
          "empty", call = call)
  }
  new_index <- cumsum(keep) - 1L
  on <- keep[x$term + 1L]
  D <- nrow(x)
  doc_of <- rep.int(seq_len(D), diff(x$doc_ptr))
  out <- new_sparsevi_dtm(
    doc_ptr = c(0L, as.integer(cumsum(tabulate(doc_of[on], nbins = D)))),
    term = as.integer(new_index[x$term[on] + 1L]), count = x$count[on],
    vocab = x$vocab[keep], doc_names = x$doc_names
  )
  if (length(out$term) == 0L) {
    abort("The corpus has no non-empty documents left after removing rare terms (lower `min_doc_freq`).",
          "empty", call = call)
  }
  out
}

describe_class <- function(x) {
  if (is.null(x)) return("NULL")
  sprintf("of type %s (class %s)", typeof(x), paste(class(x), collapse = "/"))
}

#' @rdname as_dtm
#' @param stopwords For texts: `FALSE` (the default) keeps every word,
#'   `TRUE` removes the built-in English list [sparsevi_stopwords()], or a
#'   character vector of words to remove.
#' @param min_chars For texts: shortest token kept, in characters. Default 1.
#' @details A character vector is read as one raw text per document and
#'   tokenized by a small built-in tokenizer: lowercase, tokens are runs of
#'   letters (any alphabet; digits and punctuation separate tokens), then
#'   stop words, tokens shorter than `min_chars` and terms in fewer than
#'   `min_doc_freq` documents are removed. For anything finer, tokenize with
#'   another package and pass a token list or a `quanteda::dfm`.
#' @export
as_dtm.character <- function(x, ..., stopwords = FALSE, min_chars = 1,
                             min_doc_freq = 1, vocab = NULL) {
  call <- as_dtm_call()
  min_chars <- check_count(min_chars, "min_chars", call = call)
  min_doc_freq <- check_count(min_doc_freq, "min_doc_freq", call = call)
  if (isTRUE(stopwords)) {
    stopwords <- sparsevi_stopwords()
  } else if (isFALSE(stopwords) || is.null(stopwords)) {
    stopwords <- character(0)
  } else if (!is.character(stopwords)) {
    abort("`stopwords` must be TRUE, FALSE or a character vector of words to remove.",
          "argument", call = call)
  }
  if (anyNA(x)) {
    bad <- which(is.na(x))
    abort(sprintf("The texts `x` contain NA (element%s %s); replace them with \"\" for empty documents or drop them.",
                  if (length(bad) > 1L) "s" else "",
                  paste(utils::head(bad, 5L), collapse = ", ")), "input", call = call)
  }
  tokens <- tokenize_texts(x)
  stopwords <- tolower(stopwords)
  if (length(stopwords) || min_chars > 1L) {
    tokens <- lapply(tokens, function(t) {
      t[!(t %in% stopwords) & nchar(t) >= min_chars]
    })
  }
  names(tokens) <- names(x)
  token_list_to_dtm(tokens, vocab, min_doc_freq, call)
}

# One character vector of lowercase letter runs per text; NA texts are empty.
tokenize_texts <- function(x) {
  x <- enc2utf8(as.character(x))
  x[is.na(x)] <- ""
  x <- tolower(x)
  regmatches(x, gregexpr("\\p{L}+", x, perl = TRUE))
}

# Documents given by integer ids 1..D with terms as strings: build the
# vocabulary, then the triplets.
tokens_to_dtm <- function(doc, terms, counts, D, doc_names, vocab, call) {
  if (is.null(vocab)) {
    vocab <- sort(unique(terms), method = "radix")
    term <- match(terms, vocab)
  } else {
    if (!is.character(vocab) || anyNA(vocab)) {
      abort("`vocab` must be NULL or a character vector of terms without NA.",
            "argument", call = call)
    }
    term <- match(terms, vocab)
    miss <- is.na(term)
    if (any(miss)) {
      message(sprintf("Dropped %s term(s) (%s tokens) absent from `vocab`.",
                      fmt_int(length(unique(terms[miss]))), fmt_int(sum(counts[miss]))))
      term <- term[!miss]
      doc <- doc[!miss]
      counts <- counts[!miss]
    }
  }
  dtm_from_triplets(doc, term, counts, D, vocab, doc_names, call = call)
}

# (doc, term) 1-based triplets -> CSR, summing repeated pairs.
dtm_from_triplets <- function(doc, term, count, D, vocab, doc_names, call) {
  if (length(count) && (anyNA(count) || any(!is.finite(count)) || any(count < 0))) {
    abort("Counts must be finite and non-negative: `x` contains NA, NaN, Inf or negative counts. Replace them with 0 or drop those entries.",
          "count", call = call)
  }
  if (length(vocab) == 0L) {
    abort("The corpus has no terms at all: every document is empty. Check the input (or loosen `stopwords`/`min_doc_freq`).",
          "empty", call = call)
  }
  o <- order(doc, term, method = "radix")
  doc <- doc[o]
  term <- term[o]
  count <- count[o]
  n <- length(doc)
  if (n > 1L) {
    same <- doc[-1L] == doc[-n] & term[-1L] == term[-n]
    if (any(same)) {
      first <- c(TRUE, !same)
      count <- as.vector(rowsum(count, cumsum(first), reorder = FALSE))
      doc <- doc[first]
      term <- term[first]
    }
  }
  doc_ptr <- c(0L, cumsum(tabulate(doc, nbins = D)))
  dtm_from_parts(doc_ptr, as.integer(term) - 1L, count, vocab, doc_names, call = call)
}

#' A small English stop list
#'
#' The stop words `as_dtm()` removes from raw texts with `stopwords = TRUE`:
#' about 170 English function words (articles, pronouns, auxiliaries,
#' prepositions, conjunctions, common adverbs), lowercase, without
#' apostrophes (the tokenizer splits "don't" into "don" and "t", both
#' listed).
#'
#' @returns A character vector of stop words.
#' @examples
#' head(sparsevi_stopwords())
#' as_dtm(c("The cat sat on the mat.", "A dog and a cat."), stopwords = TRUE)
#' @export
sparsevi_stopwords <- function() {
  stop_words_en
}

stop_words_en <- c(
  "a", "about", "above", "after", "again", "against", "all", "almost", "also",
  "am", "among", "an", "and", "any", "are", "as", "at", "be", "because",
  "been", "before", "being", "below", "between", "both", "but", "by", "can",
  "cannot", "could", "d", "did", "didn", "do", "does", "doesn", "doing", "don",
  "down", "during", "each", "either", "else", "ever", "every", "few", "for",
  "from", "further", "had", "has", "have", "having", "he", "her", "here",
  "hers", "herself", "him", "himself", "his", "how", "however", "i", "if",
  "in", "into", "is", "isn", "it", "its", "itself", "just", "ll", "m", "may",
  "me", "might", "more", "most", "much", "must", "my", "myself", "neither",
  "no", "nor", "not", "now", "of", "off", "often", "on", "once", "only", "or",
  "other", "our", "ours", "ourselves", "out", "over", "own", "re", "rather",
  "s", "same", "shall", "she", "should", "since", "so", "some", "such", "t",
  "than", "that", "the", "their", "theirs", "them", "themselves", "then",
  "there", "these", "they", "this", "those", "though", "through", "thus",
  "to", "too", "under", "until", "up", "upon", "us", "ve", "very", "was",
  "wasn", "we", "were", "what", "when", "where", "whether", "which", "while",
  "who", "whom", "whose", "why", "will", "with", "within", "without", "won",
  "would", "yet", "you", "your", "yours", "yourself", "yourselves"
)
