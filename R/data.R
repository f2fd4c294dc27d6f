#' KOS blog entries: a bag-of-words corpus
#'
#' 3,430 entries of the Daily Kos political blog (2004), as word counts over
#' a vocabulary of 6,906 terms (467,714 tokens; stop words and rare words
#' already removed by the source). It is small enough for examples and
#' large enough to show real topics.
#'
#' @format A `sparsevi_dtm` (see [as_dtm()]) with 3,430 documents and 6,906
#'   terms: `doc_ptr`, `term`, `count`, `vocab`; `doc_names` is `NULL`
#'   (documents are numbered as in the source).
#' @source The UCI Machine Learning Repository, "Bag of Words" data set,
#'   files `docword.kos.txt.gz` and `vocab.kos.txt`, contributed by David
#'   Newman (University of California, Irvine),
#'   <https://archive.ics.uci.edu/dataset/164/bag+of+words>. Licensed under
#'   Creative Commons Attribution 4.0 (CC BY 4.0); cite the UCI repository
#'   and D. Newman when you use it. Built by `data-raw/kos.R` with
#'   [read_uci_bow()].
#' @examples
#' kos
#' kos[1:5, ]
"kos"
