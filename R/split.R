#' Split a corpus into training documents and held-out test documents
#'
#' Test documents are split further into an observed part and a held-out
#' part, for document completion (Hughes & Sudderth, App. E: word types,
#' 80/20) or predictive probability (Than & Doan, App. A: tokens, 70/30).
#' Randomness comes from sparsevi's own streams, so `seed` makes the split
#' reproducible without touching your R random state.
#'
#' @param x A corpus, anything [as_dtm()] accepts.
#' @param n_test Number of test documents; or give `test_frac`.
#' @param test_frac Fraction of documents (in (0, 1)) to hold out, used when
#'   `n_test` is not given. Default 0.1.
#' @param observed_frac Fraction of each test document observed, in (0, 1).
#'   Default 0.8.
#' @param by `"types"` splits each test document's distinct words;
#'   `"tokens"` splits its individual tokens.
#' @param seed `NULL` (draw from R's random number generator) or a whole
#'   number.
#' @returns A list with `train` (a `sparsevi_dtm`), `test` (a
#'   `sparsevi_heldout`: a list of `observed` and `heldout`, two
#'   `sparsevi_dtm`s over the same test documents and vocabulary, plus `by`
#'   and `observed_frac`), and `test_index`, the test documents' row numbers
#'   in `x`.
#' @examples
#' x <- simulate_lda(D = 50, V = 30, K = 3, seed = 1)$dtm
#' sp <- split_heldout(x, n_test = 10, seed = 1)
#' sp$train
#' sp$test
#' @export
split_heldout <- function(x, n_test = NULL, test_frac = 0.1, observed_frac = 0.8,
                          by = c("types", "tokens"), seed = NULL) {
  x <- as_dtm(x)
  by <- check_choice(by, c("types", "tokens"), "by")
  if (by == "tokens" && any(x$count != round(x$count))) {
    abort("`by = \"tokens\"` needs whole-number counts; use `by = \"types\"` or round the counts.",
          "argument")
  }
  D <- nrow(x)
  if (D < 2L) abort("`x` needs at least 2 documents to split.", "argument")
  check_nonempty_dtm(x, "x")
  if (is.null(n_test)) {
    test_frac <- check_probability(test_frac, "test_frac")
    n_test <- max(1L, as.integer(round(test_frac * D)))
  }
  n_test <- check_count(n_test, "n_test", min = 1, max = D - 1)
  observed_frac <- check_probability(observed_frac, "observed_frac")
  seed <- resolve_seed(seed)
  u <- .Call(ffi_svi_rng_unif, seed, 0, D)
  test_index <- sort(order(u)[seq_len(n_test)])
  train <- dtm_subset(x, setdiff(seq_len(D), test_index))
  test <- dtm_subset(x, test_index)
  parts <- split_observed(test, observed_frac, by, seed)
  list(train = train, test = parts, test_index = test_index)
}

# Split each document of `x` into observed and held-out parts.
split_observed <- function(x, observed_frac, by, seed) {
  D <- nrow(x)
  lens <- diff(x$doc_ptr)
  doc_of <- rep.int(seq_len(D), lens)
  if (by == "types") {
    u <- .Call(ffi_svi_rng_unif, seed, 1, length(x$term))
    # rank of each entry within its document by a uniform key
    o <- order(doc_of, u)
    rank <- integer(length(u))
    rank[o] <- sequence(lens)
    n_obs <- ifelse(lens >= 2L, pmin(lens - 1L, pmax(1L, round(observed_frac * lens))), lens)
    is_obs <- rank <= n_obs[doc_of]
    obs <- ifelse(is_obs, x$count, 0)
    held <- x$count - obs
  } else {
    # each token goes to the observed part with a uniform key; exactly
    # round(frac * N_d) tokens per document are observed
    tok <- as.integer(round(x$count))
    entry <- rep.int(seq_along(tok), tok)
    tdoc <- doc_of[entry]
    u <- .Call(ffi_svi_rng_unif, seed, 2, length(entry))
    o <- order(tdoc, u)
    ntok <- tabulate(tdoc, nbins = D)
    rank <- integer(length(u))
    rank[o] <- sequence(ntok)
    n_obs <- ifelse(ntok >= 2L, pmin(ntok - 1L, pmax(1L, round(observed_frac * ntok))), ntok)
    is_obs <- rank <= n_obs[tdoc]
    obs <- tabulate(entry[is_obs], nbins = length(tok))
    held <- x$count - obs
  }
  observed <- dtm_keep_positive(x, obs)
  heldout <- dtm_keep_positive(x, held)
  structure(list(observed = observed, heldout = heldout, by = by,
                 observed_frac = observed_frac),
            class = "sparsevi_heldout")
}

# A test part of split_heldout() given where documents are expected (to
# fit_lda(), predict(), ...): it holds two corpora, the observed and the
# held-out words of the same documents, so say which to give.
#' @export
as_dtm.sparsevi_heldout <- function(x, ...) {
  abort("`x` is the test part of split_heldout(), each test document's observed and held-out words: give its observed words (`sp$test$observed` for `sp <- split_heldout(x)`) to fit or predict, or the whole test part to heldout_loglik().",
        "input", call = as_dtm_call())
}

# The whole result of split_heldout(): a plain list of its training and test
# parts.
is_heldout_split <- function(x) {
  is.list(x) && !is.object(x) && inherits(x$train, "sparsevi_dtm") &&
    inherits(x$test, "sparsevi_heldout")
}

dtm_keep_positive <- function(x, count) {
  D <- nrow(x)
  doc_of <- rep.int(seq_len(D), diff(x$doc_ptr))
  keep <- count > 0
  new_sparsevi_dtm(
    doc_ptr = c(0L, as.integer(cumsum(tabulate(doc_of[keep], nbins = D)))),
    term = x$term[keep], count = as.double(count[keep]), vocab = x$vocab,
    doc_names = x$doc_names
  )
}

#' @export
print.sparsevi_heldout <- function(x, ...) {
  cat(sprintf("<sparsevi_heldout> %s test documents; %s observed and %s held-out tokens (split by %s, %.0f%% observed)\n",
              fmt_int(nrow(x$observed)), fmt_int(sum(x$observed$count)),
              fmt_int(sum(x$heldout$count)), x$by, 100 * x$observed_frac))
  invisible(x)
}
