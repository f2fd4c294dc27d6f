/* Registration of every .Call entry point: one table, exact arities. */
#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

/* infrastructure (svi-ffi.c) */
extern SEXP ffi_svi_special(SEXP, SEXP);
extern SEXP ffi_svi_select_top(SEXP, SEXP, SEXP);
extern SEXP ffi_svi_top_rows(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_svi_rng_unif(SEXP, SEXP, SEXP);
extern SEXP ffi_svi_threads_info(void);
/* document-term layer (dtm-ffi.c) */
extern SEXP ffi_dtm_validate(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_dtm_doc_dot(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_dtm_uci_state(void);
extern SEXP ffi_dtm_parse_uci(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_dtm_batch_words(SEXP);
extern SEXP ffi_dtm_subset(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_dtm_key(SEXP, SEXP, SEXP, SEXP);
/* K x V tables outside R's heap (table.c) */
extern SEXP ffi_svi_table_alloc(SEXP, SEXP);
extern SEXP ffi_svi_table_info(SEXP);
extern SEXP ffi_svi_is_table(SEXP);
extern void svi_table_register(DllInfo *dll);
extern void svi_threads_init(void);
/* ownership of in-place writes (own.c) */
extern SEXP ffi_svi_give_up(SEXP);
extern SEXP ffi_svi_owns(SEXP);
/* SCVB0 engine (lda-cvb0-ffi.c) */
extern SEXP ffi_lda_local_cvb0(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_store_update_shape(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_cvb0_shape_columns(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_global_cvb0(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_cvb0_kernel_width(SEXP);
/* the LDA topic store and its columns (lda-store-ffi.c) */
extern SEXP ffi_lda_store_new(SEXP, SEXP);
extern SEXP ffi_lda_store_counts(SEXP, SEXP);
extern SEXP ffi_lda_store_update(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_store_update_sparse(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_store_update_owner(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_summary_rowsums(SEXP, SEXP);
extern SEXP ffi_lda_store_add(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_store_lambda(SEXP, SEXP, SEXP);
extern SEXP ffi_lda_store_copy(SEXP, SEXP);
extern SEXP ffi_lda_store_copy_into(SEXP, SEXP, SEXP);
extern SEXP ffi_lda_table_columns(SEXP, SEXP);
extern SEXP ffi_lda_summary_blocks(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_store_shared(SEXP, SEXP);
extern SEXP ffi_lda_store_release(SEXP);
extern SEXP ffi_lda_store_save(SEXP, SEXP, SEXP);
extern SEXP ffi_lda_store_load(SEXP);
extern SEXP ffi_lda_store_recount(SEXP, SEXP, SEXP);
extern SEXP ffi_lda_store_seeded(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
/* batch summaries on the wire (wire-ffi.c) */
extern SEXP ffi_wire_pack(SEXP, SEXP);
extern SEXP ffi_wire_unpack(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_wire_pack_columns(SEXP, SEXP, SEXP);
extern SEXP ffi_wire_unpack_columns(SEXP, SEXP, SEXP);
extern SEXP ffi_wire_serialize(SEXP);
/* topics sharded by word (executor-sharded-ffi.c) */
extern SEXP ffi_lda_shard_put(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_columns_take(SEXP, SEXP);
extern SEXP ffi_lda_shard_columns(SEXP);
extern SEXP ffi_lda_shard_meta(SEXP, SEXP);
extern SEXP ffi_lda_shard_gather(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_shard_split(SEXP, SEXP, SEXP);
/* the memory of the package's worker processes (executor-mirai-ffi.c) */
extern SEXP ffi_worker_keep_memory(void);
/* vb engine: local step (lda-vb-ffi.c) */
extern SEXP ffi_lda_local_vb(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
/* LDA global steps, ELBO topic terms, EB eta, random topics (lda-global-ffi.c) */
extern SEXP ffi_lda_global_memoized(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_lambda_from_stats(SEXP, SEXP);
extern SEXP ffi_lda_topic_totals(SEXP);
extern SEXP ffi_lda_normalise_rows(SEXP);
extern SEXP ffi_lda_global_stochastic(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_global_streaming(SEXP, SEXP);
extern SEXP ffi_lda_elbo_topics(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_eb_eta(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_init_random(SEXP, SEXP, SEXP, SEXP, SEXP);
/* kept topic words (lda-kept.c) */
extern SEXP ffi_lda_top_share(SEXP, SEXP, SEXP);
extern SEXP ffi_lda_top_share_csc(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_kept_csc(SEXP, SEXP, SEXP, SEXP, SEXP);
/* FREX words of the topics, augment()'s pairs (lda-terms-ffi.c) */
extern SEXP ffi_lda_terms_frex(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_pair_topics(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
/* Bregman topic pick (lda-pick-ffi.c) */
extern SEXP ffi_lda_bregman_pick(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
/* gibbs engine: Gibbs within SVI (lda-gibbs-ffi.c) */
extern SEXP ffi_lda_local_gibbs(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_global_gibbs(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_gibbs_materialise(SEXP, SEXP);
extern SEXP ffi_lda_gibbs_store_dense(SEXP, SEXP);
extern SEXP ffi_lda_gibbs_draw(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_gibbs_columns(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_gibbs_top(SEXP, SEXP, SEXP);
extern SEXP ffi_lda_gibbs_reseed(SEXP, SEXP, SEXP);
/* OPE engine: local step, ML-OPE global step (lda-ope-ffi.c) */
extern SEXP ffi_lda_local_ope(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_lda_ope_rows(SEXP, SEXP);
extern SEXP ffi_lda_ope_topic_word(SEXP, SEXP);
extern SEXP ffi_lda_global_ml(SEXP, SEXP, SEXP);
/* evaluators: completion, left-to-right, UMass, NPMI counts (eval-ffi.c) */
extern SEXP ffi_lda_completion(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_eval_ltr(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_eval_umass(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_eval_npmi_counts(SEXP, SEXP, SEXP);
/* mixtures with L-sparse posteriors (mix-ffi.c) */
extern SEXP ffi_mix_local(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_mix_weights(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_mix_assign(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_mix_objective(SEXP, SEXP, SEXP);
extern SEXP ffi_mix_init(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_mix_global_memoized(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_mix_global_stochastic(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_mix_point(SEXP, SEXP, SEXP);
extern SEXP ffi_mix_center(SEXP, SEXP, SEXP);
extern SEXP ffi_mix_rows(SEXP, SEXP, SEXP);
extern SEXP ffi_mix_work(SEXP);
extern SEXP ffi_mix_simd(SEXP);
extern SEXP ffi_mix_obs(SEXP, SEXP);
/* model-based hierarchical clustering (mix-hc-ffi.c) */
extern SEXP ffi_mix_hc(SEXP, SEXP, SEXP);
/* Fast-VDP (vdp-ffi.c) */
extern SEXP ffi_vdp_fit(SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_vdp_worker_full(SEXP, SEXP, SEXP);
extern SEXP ffi_vdp_worker_split_proj(SEXP, SEXP, SEXP);
extern SEXP ffi_vdp_worker_split_begin(SEXP, SEXP, SEXP);
extern SEXP ffi_vdp_split_cut(SEXP, SEXP);
extern SEXP ffi_vdp_worker_split_iter(SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_vdp_prepare(SEXP, SEXP);
extern SEXP ffi_vdp_predict(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
extern SEXP ffi_vdp_spread_loss(SEXP, SEXP);

static const R_CallMethodDef call_methods[] = {
    /* infrastructure (svi-ffi.c) */
    {"ffi_svi_special", (DL_FUNC)&ffi_svi_special, 2},
    {"ffi_svi_select_top", (DL_FUNC)&ffi_svi_select_top, 3},
    {"ffi_svi_top_rows", (DL_FUNC)&ffi_svi_top_rows, 4},
    {"ffi_svi_rng_unif", (DL_FUNC)&ffi_svi_rng_unif, 3},
    {"ffi_svi_threads_info", (DL_FUNC)&ffi_svi_threads_info, 0},
    /* document-term layer (dtm-ffi.c) */
    {"ffi_dtm_validate", (DL_FUNC)&ffi_dtm_validate, 4},
    {"ffi_dtm_doc_dot", (DL_FUNC)&ffi_dtm_doc_dot, 4},
    {"ffi_dtm_uci_state", (DL_FUNC)&ffi_dtm_uci_state, 0},
    {"ffi_dtm_parse_uci", (DL_FUNC)&ffi_dtm_parse_uci, 7},
    {"ffi_dtm_batch_words", (DL_FUNC)&ffi_dtm_batch_words, 1},
    {"ffi_dtm_subset", (DL_FUNC)&ffi_dtm_subset, 4},
    {"ffi_dtm_key", (DL_FUNC)&ffi_dtm_key, 4},
    /* K x V tables outside R's heap (table.c) */
    {"ffi_svi_table_alloc", (DL_FUNC)&ffi_svi_table_alloc, 2},
    {"ffi_svi_table_info", (DL_FUNC)&ffi_svi_table_info, 1},
    {"ffi_svi_is_table", (DL_FUNC)&ffi_svi_is_table, 1},
    /* ownership of in-place writes (own.c) */
    {"ffi_svi_give_up", (DL_FUNC)&ffi_svi_give_up, 1},
    {"ffi_svi_owns", (DL_FUNC)&ffi_svi_owns, 1},
    /* SCVB0 engine (lda-cvb0-ffi.c) */
    {"ffi_lda_local_cvb0", (DL_FUNC)&ffi_lda_local_cvb0, 8},
    {"ffi_lda_store_update_shape", (DL_FUNC)&ffi_lda_store_update_shape, 4},
    {"ffi_lda_cvb0_shape_columns", (DL_FUNC)&ffi_lda_cvb0_shape_columns, 6},
    {"ffi_lda_global_cvb0", (DL_FUNC)&ffi_lda_global_cvb0, 8},
    {"ffi_lda_cvb0_kernel_width", (DL_FUNC)&ffi_lda_cvb0_kernel_width, 1},
    /* the LDA topic store and its columns (lda-store-ffi.c) */
    {"ffi_lda_store_new", (DL_FUNC)&ffi_lda_store_new, 2},
    {"ffi_lda_store_counts", (DL_FUNC)&ffi_lda_store_counts, 2},
    {"ffi_lda_store_update", (DL_FUNC)&ffi_lda_store_update, 5},
    {"ffi_lda_store_update_sparse", (DL_FUNC)&ffi_lda_store_update_sparse, 5},
    {"ffi_lda_store_update_owner", (DL_FUNC)&ffi_lda_store_update_owner, 5},
    {"ffi_lda_summary_rowsums", (DL_FUNC)&ffi_lda_summary_rowsums, 2},
    {"ffi_lda_store_add", (DL_FUNC)&ffi_lda_store_add, 5},
    {"ffi_lda_store_lambda", (DL_FUNC)&ffi_lda_store_lambda, 3},
    {"ffi_lda_store_copy", (DL_FUNC)&ffi_lda_store_copy, 2},
    {"ffi_lda_store_copy_into", (DL_FUNC)&ffi_lda_store_copy_into, 3},
    {"ffi_lda_table_columns", (DL_FUNC)&ffi_lda_table_columns, 2},
    {"ffi_lda_summary_blocks", (DL_FUNC)&ffi_lda_summary_blocks, 4},
    {"ffi_lda_store_shared", (DL_FUNC)&ffi_lda_store_shared, 2},
    {"ffi_lda_store_release", (DL_FUNC)&ffi_lda_store_release, 1},
    {"ffi_lda_store_save", (DL_FUNC)&ffi_lda_store_save, 3},
    {"ffi_lda_store_load", (DL_FUNC)&ffi_lda_store_load, 1},
    {"ffi_lda_store_recount", (DL_FUNC)&ffi_lda_store_recount, 3},
    {"ffi_lda_store_seeded", (DL_FUNC)&ffi_lda_store_seeded, 6},
    /* batch summaries on the wire (wire-ffi.c) */
    {"ffi_wire_pack", (DL_FUNC)&ffi_wire_pack, 2},
    {"ffi_wire_unpack", (DL_FUNC)&ffi_wire_unpack, 4},
    {"ffi_wire_pack_columns", (DL_FUNC)&ffi_wire_pack_columns, 3},
    {"ffi_wire_unpack_columns", (DL_FUNC)&ffi_wire_unpack_columns, 3},
    {"ffi_wire_serialize", (DL_FUNC)&ffi_wire_serialize, 1},
    {"ffi_lda_shard_put", (DL_FUNC)&ffi_lda_shard_put, 4},
    {"ffi_lda_columns_take", (DL_FUNC)&ffi_lda_columns_take, 2},
    {"ffi_lda_shard_columns", (DL_FUNC)&ffi_lda_shard_columns, 1},
    {"ffi_lda_shard_meta", (DL_FUNC)&ffi_lda_shard_meta, 2},
    {"ffi_lda_shard_gather", (DL_FUNC)&ffi_lda_shard_gather, 6},
    {"ffi_worker_keep_memory", (DL_FUNC)&ffi_worker_keep_memory, 0},
    {"ffi_lda_shard_split", (DL_FUNC)&ffi_lda_shard_split, 3},
    /* vb engine: local step (lda-vb-ffi.c) */
    {"ffi_lda_local_vb", (DL_FUNC)&ffi_lda_local_vb, 6},
    /* LDA global steps, ELBO topic terms, EB eta, random topics (lda-global-ffi.c) */
    {"ffi_lda_global_memoized", (DL_FUNC)&ffi_lda_global_memoized, 4},
    {"ffi_lda_lambda_from_stats", (DL_FUNC)&ffi_lda_lambda_from_stats, 2},
    {"ffi_lda_topic_totals", (DL_FUNC)&ffi_lda_topic_totals, 1},
    {"ffi_lda_normalise_rows", (DL_FUNC)&ffi_lda_normalise_rows, 1},
    {"ffi_lda_global_stochastic", (DL_FUNC)&ffi_lda_global_stochastic, 5},
    {"ffi_lda_global_streaming", (DL_FUNC)&ffi_lda_global_streaming, 2},
    {"ffi_lda_elbo_topics", (DL_FUNC)&ffi_lda_elbo_topics, 4},
    {"ffi_lda_eb_eta", (DL_FUNC)&ffi_lda_eb_eta, 4},
    {"ffi_lda_init_random", (DL_FUNC)&ffi_lda_init_random, 5},
    /* kept topic words (lda-kept.c) */
    {"ffi_lda_top_share", (DL_FUNC)&ffi_lda_top_share, 3},
    {"ffi_lda_top_share_csc", (DL_FUNC)&ffi_lda_top_share_csc, 6},
    {"ffi_lda_kept_csc", (DL_FUNC)&ffi_lda_kept_csc, 5},
    /* FREX words of the topics (lda-terms-ffi.c) */
    {"ffi_lda_terms_frex", (DL_FUNC)&ffi_lda_terms_frex, 5},
    {"ffi_lda_pair_topics", (DL_FUNC)&ffi_lda_pair_topics, 8},
    /* Bregman topic pick (lda-pick-ffi.c) */
    {"ffi_lda_bregman_pick", (DL_FUNC)&ffi_lda_bregman_pick, 8},
    /* gibbs engine: Gibbs within SVI (lda-gibbs-ffi.c) */
    {"ffi_lda_local_gibbs", (DL_FUNC)&ffi_lda_local_gibbs, 6},
    {"ffi_lda_global_gibbs", (DL_FUNC)&ffi_lda_global_gibbs, 5},
    {"ffi_lda_gibbs_materialise", (DL_FUNC)&ffi_lda_gibbs_materialise, 2},
    {"ffi_lda_gibbs_store_dense", (DL_FUNC)&ffi_lda_gibbs_store_dense, 2},
    {"ffi_lda_gibbs_draw", (DL_FUNC)&ffi_lda_gibbs_draw, 8},
    {"ffi_lda_gibbs_columns", (DL_FUNC)&ffi_lda_gibbs_columns, 4},
    {"ffi_lda_gibbs_top", (DL_FUNC)&ffi_lda_gibbs_top, 3},
    {"ffi_lda_gibbs_reseed", (DL_FUNC)&ffi_lda_gibbs_reseed, 3},
    /* OPE engine: local step, ML-OPE global step (lda-ope-ffi.c) */
    {"ffi_lda_local_ope", (DL_FUNC)&ffi_lda_local_ope, 5},
    {"ffi_lda_ope_rows", (DL_FUNC)&ffi_lda_ope_rows, 2},
    {"ffi_lda_ope_topic_word", (DL_FUNC)&ffi_lda_ope_topic_word, 2},
    {"ffi_lda_global_ml", (DL_FUNC)&ffi_lda_global_ml, 3},
    /* evaluators: completion, left-to-right, UMass, NPMI counts (eval-ffi.c) */
    {"ffi_lda_completion", (DL_FUNC)&ffi_lda_completion, 6},
    {"ffi_eval_ltr", (DL_FUNC)&ffi_eval_ltr, 6},
    {"ffi_eval_umass", (DL_FUNC)&ffi_eval_umass, 5},
    {"ffi_eval_npmi_counts", (DL_FUNC)&ffi_eval_npmi_counts, 3},
    /* mixtures with L-sparse posteriors (mix-ffi.c) */
    {"ffi_mix_local", (DL_FUNC)&ffi_mix_local, 8},
    {"ffi_mix_weights", (DL_FUNC)&ffi_mix_weights, 7},
    {"ffi_mix_assign", (DL_FUNC)&ffi_mix_assign, 6},
    {"ffi_mix_objective", (DL_FUNC)&ffi_mix_objective, 3},
    {"ffi_mix_init", (DL_FUNC)&ffi_mix_init, 8},
    {"ffi_mix_global_memoized", (DL_FUNC)&ffi_mix_global_memoized, 6},
    {"ffi_mix_global_stochastic", (DL_FUNC)&ffi_mix_global_stochastic, 6},
    {"ffi_mix_point", (DL_FUNC)&ffi_mix_point, 3},
    {"ffi_mix_center", (DL_FUNC)&ffi_mix_center, 3},
    {"ffi_mix_rows", (DL_FUNC)&ffi_mix_rows, 3},
    {"ffi_mix_work", (DL_FUNC)&ffi_mix_work, 1},
    {"ffi_mix_simd", (DL_FUNC)&ffi_mix_simd, 1},
    {"ffi_mix_obs", (DL_FUNC)&ffi_mix_obs, 2},
    /* model-based hierarchical clustering (mix-hc-ffi.c) */
    {"ffi_mix_hc", (DL_FUNC)&ffi_mix_hc, 3},
    /* Fast-VDP (vdp-ffi.c) */
    {"ffi_vdp_fit", (DL_FUNC)&ffi_vdp_fit, 5},
    {"ffi_vdp_spread_loss", (DL_FUNC)&ffi_vdp_spread_loss, 2},
    {"ffi_vdp_worker_full", (DL_FUNC)&ffi_vdp_worker_full, 3},
    {"ffi_vdp_worker_split_proj", (DL_FUNC)&ffi_vdp_worker_split_proj, 3},
    {"ffi_vdp_worker_split_begin", (DL_FUNC)&ffi_vdp_worker_split_begin, 3},
    {"ffi_vdp_split_cut", (DL_FUNC)&ffi_vdp_split_cut, 2},
    {"ffi_vdp_worker_split_iter", (DL_FUNC)&ffi_vdp_worker_split_iter, 4},
    {"ffi_vdp_prepare", (DL_FUNC)&ffi_vdp_prepare, 2},
    {"ffi_vdp_predict", (DL_FUNC)&ffi_vdp_predict, 6},
    {NULL, NULL, 0}};

void R_init_sparsevi(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
  svi_table_register(dll);
  svi_threads_init();
}
