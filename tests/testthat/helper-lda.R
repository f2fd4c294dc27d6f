# A small simulated corpus for the LDA tests.
sim_small <- function(seed = 1, D = 120, V = 40, K = 3) {
  simulate_lda(D = D, V = V, K = K, doc_length = 60, alpha = 0.1, eta = 0.05, seed = seed)
}
